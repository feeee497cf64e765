/* report_html.h - HTML: one self-contained page, roofline SVG per GPU device, the table, the precision comparison. */
#ifndef KB_REPORT_HTML_H
#define KB_REPORT_HTML_H

#include "results/report_rows.h"

/* Write run to out. KB_ERR_IO when the stream fails. */
kb_status kb_report_html(const kb_report_run *run, FILE *out);

/* A page with only the precision comparison (kbench report RUN --html --precision): the same
 * bar chart and table per shape and input distribution. KB_ERR_IO when the stream fails. */
kb_status kb_report_html_precision(const kb_report_run *run, FILE *out);

#endif
