/* report_junit.h - JUnit XML: one testcase per case, for CI systems. */
#ifndef KB_REPORT_JUNIT_H
#define KB_REPORT_JUNIT_H

#include "results/report_rows.h"

/* Write run to out. KB_ERR_IO when the stream fails. */
kb_status kb_report_junit(const kb_report_run *run, FILE *out);

#endif
