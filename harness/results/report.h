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

/* Keep only the rows whose case id contains one of filters[0..n) (n 0: keep all): the other
 * records are released and the devices recounted. KB_OK, or KB_ERR_INPUT when none is
 * left (the run is then empty). */
kb_status kb_report_run_filter(kb_report_run *r, const char *const *filters, int n);

/* Write the run in format f. KB_ERR_IO when the stream fails. */
kb_status kb_report_write(const kb_report_run *run, kb_report_format f, FILE *out);

/* The same narrowed to section s (KB_SECTION_ALL: all of it): html and md write any
 * section, csv the cases (all, cases), the fastest configurations (summary, best) or the
 * precision comparison (precision).
 * KB_ERR_INPUT (nothing written) when f has no such section: kb_report_has_section says
 * beforehand. */
kb_status kb_report_write_section(const kb_report_run *run, kb_report_format f, kb_report_section s, FILE *out);
int kb_report_has_section(kb_report_format f, kb_report_section s);

#endif /* KB_REPORT_H */
