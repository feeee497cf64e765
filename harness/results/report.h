/* report.h - reports of a recorded run: markdown, CSV, HTML (with an SVG roofline),
 * Google Benchmark JSON and JUnit XML. The dispatcher: a format name to its writer
 * (report_<format>.h); the rows they share are report_rows.h.
 */
#ifndef KB_REPORT_H
#define KB_REPORT_H

#include "results/report_rows.h"

typedef enum {
    KB_REPORT_MD = 0,
    KB_REPORT_CSV,
    KB_REPORT_HTML,
    KB_REPORT_GBENCH,   /* Google Benchmark JSON, for tools/compare.py */
    KB_REPORT_JUNIT,
    KB_REPORT_TRACE,    /* Chrome trace-event JSON (chrome://tracing, Perfetto) */
    KB_REPORT_COUNT
} kb_report_format;

/* "md"|"markdown", "csv", "html", "gbench-json"|"gbench", "junit"|"junit-xml", "trace";
 * 0 on success, -1 unknown. */
int kb_report_format_parse(const char *s, kb_report_format *out);

/* Write the run in format f. KB_ERR_IO when the stream fails. */
kb_status kb_report_write(const kb_report_run *run, kb_report_format f, FILE *out);

/* Write only the run's precision comparison (per shape and input distribution: dtype and
 * recipe -> time, TFLOPS, speed-up vs bf16, accuracy) in format f: md, html or csv;
 * KB_ERR_INPUT for another format (nothing written), KB_ERR_IO when the stream fails. */
kb_status kb_report_write_precision(const kb_report_run *run, kb_report_format f, FILE *out);

#endif /* KB_REPORT_H */
