/* report_md.h - markdown: the run, a table per device, the precision comparison. */
#ifndef KB_REPORT_MD_H
#define KB_REPORT_MD_H

#include "results/report_rows.h"

/* Write run to out. KB_ERR_IO when the stream fails. */
kb_status kb_report_md(const kb_report_run *run, FILE *out);

/* Only the precision comparison of run (kbench report RUN --precision): a heading, the
 * emulator note where it applies, one table per shape and input distribution, or one line
 * saying there is none. KB_ERR_IO when the stream fails. */
kb_status kb_report_md_precision(const kb_report_run *run, FILE *out);

#endif
