/* report_md.h - markdown: the run, a table per device, the precision comparison. */
#ifndef KB_REPORT_MD_H
#define KB_REPORT_MD_H

#include "results/report_rows.h"

/* Write run to out. KB_ERR_IO when the stream fails. */
kb_status kb_report_md(const kb_report_run *run, FILE *out);

#endif
