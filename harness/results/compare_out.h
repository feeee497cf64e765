/* compare_out.h - `kbench compare`'s outputs: the console text (compare.h's
 * kb_compare_print), markdown, JSON (one object; fields in docs/compare.md) and the HTML
 * page (compare_html.h). Every format shows the same cases, verdicts, geometric mean and
 * regressions from one kb_cmp_result. */
#ifndef KB_COMPARE_OUT_H
#define KB_COMPARE_OUT_H

#include <jansson.h>
#include <stdio.h>

#include "results/compare.h"

typedef enum { KB_CMP_OUT_TEXT = 0, KB_CMP_OUT_MD, KB_CMP_OUT_JSON, KB_CMP_OUT_HTML } kb_cmp_format;

/* "text", "md", "json", "html"; NULL-terminated (an option's choices). */
extern const char *const kb_cmp_format_names[];

/* The format named s; -1 when unknown. */
int kb_cmp_format_parse(const char *s, kb_cmp_format *out);

/* The comparison as one JSON object: runs[2], settings, summary, cases[], geomean,
 * regressions[] (new reference; NULL when out of memory). */
json_t *kb_compare_json(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r, double threshold);

/* The comparison as markdown: the runs, a table with a row per case, the geometric
 * mean, the regressions and the cases found in one run only. */
void kb_compare_md(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r, double threshold,
                   FILE *out);

/* Write the comparison in format f. KB_ERR_IO when the stream fails, KB_ERR_OOM. */
kb_status kb_compare_write(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r,
                           double threshold, kb_cmp_format f, FILE *out);

#endif /* KB_COMPARE_OUT_H */
