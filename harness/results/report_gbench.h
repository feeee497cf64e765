/* report_gbench.h - Google Benchmark JSON, accepted by tools/compare.py. */
#ifndef KB_REPORT_GBENCH_H
#define KB_REPORT_GBENCH_H

#include "results/report_rows.h"

/* Write run to out. KB_ERR_IO when the stream fails. */
kb_status kb_report_gbench(const kb_report_run *run, FILE *out);

#endif
