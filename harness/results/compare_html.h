/* compare_html.h - `kbench compare --format html`: one self-contained page (inline style,
 * SVG and script, no external file; every element closed, so it also parses as XML) with
 * the runs, a bar chart of each compared case's ratio B/A (svg class="chart"
 * data-chart="ratio", one <rect> per case with a <title> naming it), the sortable table
 * of cases, the geometric mean and the regressions. */
#ifndef KB_COMPARE_HTML_H
#define KB_COMPARE_HTML_H

#include <stdio.h>

#include "results/compare.h"

/* Write the page. KB_ERR_IO when the stream fails. */
kb_status kb_compare_html(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r,
                          double threshold, FILE *out);

#endif /* KB_COMPARE_HTML_H */
