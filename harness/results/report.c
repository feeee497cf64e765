/* report.c - the report dispatcher and the --filter of a run (see report.h). */
#include "results/report.h"

#include "results/report_csv.h"
#include "results/report_gbench.h"
#include "results/report_html.h"
#include "results/report_junit.h"
#include "results/report_md.h"
#include "results/report_trace.h"

#include <string.h>

int kb_report_format_parse(const char *s, kb_report_format *out)
{
    static const struct { const char *name; kb_report_format f; } names[] = {
        { "md", KB_REPORT_MD }, { "markdown", KB_REPORT_MD }, { "csv", KB_REPORT_CSV },
        { "html", KB_REPORT_HTML }, { "gbench-json", KB_REPORT_GBENCH }, { "gbench", KB_REPORT_GBENCH },
        { "junit", KB_REPORT_JUNIT }, { "junit-xml", KB_REPORT_JUNIT },
        { "trace", KB_REPORT_TRACE },
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(s, names[i].name) == 0) { *out = names[i].f; return 0; }
    return -1;
}

int kb_report_has_section(kb_report_format f, kb_report_section s)
{
    switch (f) {
    case KB_REPORT_MD:
    case KB_REPORT_HTML: return 1;
    case KB_REPORT_CSV:
        return s == KB_SECTION_ALL || s == KB_SECTION_CASES || s == KB_SECTION_SUMMARY || s == KB_SECTION_BEST ||
               s == KB_SECTION_PRECISION;
    default: return s == KB_SECTION_ALL;
    }
}

kb_status kb_report_write_section(const kb_report_run *run, kb_report_format f, kb_report_section s, FILE *out)
{
    if (!kb_report_has_section(f, s))
        return KB_ERR_INPUT;
    switch (f) {
    case KB_REPORT_MD: return kb_report_md(run, s, out);
    case KB_REPORT_CSV: return kb_report_csv(run, s, out);
    case KB_REPORT_HTML: return kb_report_html(run, s, out);
    case KB_REPORT_GBENCH: return kb_report_gbench(run, out);
    case KB_REPORT_JUNIT: return kb_report_junit(run, out);
    case KB_REPORT_TRACE: return kb_report_trace(run, out);
    default: return KB_ERR_INPUT;
    }
}

kb_status kb_report_write(const kb_report_run *run, kb_report_format f, FILE *out)
{
    return kb_report_write_section(run, f, KB_SECTION_ALL, out);
}

/* A record's string field, "" when absent. */
static const char *rec_text(json_t *rec, const char *k)
{
    const char *s = json_string_value(json_object_get(rec, k));
    return s ? s : "";
}

kb_status kb_report_run_filter(kb_report_run *r, const char *const *filters, int n)
{
    if (n <= 0)
        return KB_OK;
    size_t kept = 0;
    for (int d = 0; d < r->n_devs; d++)
        r->devs[d].n_rows = 0;
    for (size_t i = 0; i < r->n; i++) {
        int keep = 0;
        for (int k = 0; k < n && !keep; k++)
            keep = strstr(r->rows[i].case_id, filters[k]) != NULL;
        if (!keep) {
            json_decref(r->recs[i]);
            continue;
        }
        r->recs[kept] = r->recs[i];
        r->rows[kept] = r->rows[i];
        if (r->rows[kept].dev >= 0)
            r->devs[r->rows[kept].dev].n_rows++;
        kept++;
    }
    r->n = kept;
    /* run_id and time pointed into the first record, which may be gone */
    r->run_id = kept ? rec_text(r->recs[0], "run_id") : "";
    r->time = kept ? rec_text(r->recs[0], "time") : "";
    return kept ? KB_OK : KB_ERR_INPUT;
}
