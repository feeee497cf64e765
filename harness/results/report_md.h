/* report_md.h - markdown: the HTML page's sections (report_html.h) as text and tables. */
#ifndef KB_REPORT_MD_H
#define KB_REPORT_MD_H

#include "results/report_rows.h"

/* Write run to out: every section (want KB_SECTION_ALL) or section want alone (the precision
 * comparison, kbench report RUN --precision: one table per shape and input distribution, or
 * one line saying there is none). KB_ERR_IO when the stream fails, KB_ERR_OOM. */
kb_status kb_report_md(const kb_report_run *run, kb_report_section want, FILE *out);

#endif
