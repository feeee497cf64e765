/* report_out.h - the strategy comparison (report.h) rendered: a text table per space and
 * budget with the aggregate scores, an SVG chart of the performance curves (median best /
 * optimum against budget with the interquartile band per strategy, random sampling's
 * median and expectation, the optimum at 1), and an HTML page holding both and the JSON
 * document itself (a script element of type application/json, id kbench-tune-report, for
 * scripts that tabulate it: bench/tune_table.py). Everything
 * comes from the report's JSON document, never from console text. */
#ifndef KB_TUNE_REPORT_OUT_H
#define KB_TUNE_REPORT_OUT_H

#include <jansson.h>
#include <stdio.h>

/* Write doc (kb_tune_report_run's) to out. 0, -1 when a write failed. */
int kb_tune_report_text(json_t *doc, FILE *out);
int kb_tune_report_svg(json_t *doc, FILE *out);
int kb_tune_report_html(json_t *doc, FILE *out);

/* Write one run (kb_tune_report_one's document) as two lines of text. 0, -1 write failed. */
int kb_tune_report_one_text(json_t *run, FILE *out);

#endif /* KB_TUNE_REPORT_OUT_H */
