/* report.c - the report dispatcher (see report.h). */
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

kb_status kb_report_write(const kb_report_run *run, kb_report_format f, FILE *out)
{
    switch (f) {
    case KB_REPORT_MD: return kb_report_md(run, out);
    case KB_REPORT_CSV: return kb_report_csv(run, out);
    case KB_REPORT_HTML: return kb_report_html(run, out);
    case KB_REPORT_GBENCH: return kb_report_gbench(run, out);
    case KB_REPORT_JUNIT: return kb_report_junit(run, out);
    case KB_REPORT_TRACE: return kb_report_trace(run, out);
    default: return KB_ERR_INPUT;
    }
}

kb_status kb_report_write_precision(const kb_report_run *run, kb_report_format f, FILE *out)
{
    switch (f) {
    case KB_REPORT_MD: return kb_report_md_precision(run, out);
    case KB_REPORT_CSV: return kb_report_csv_precision(run, out);
    case KB_REPORT_HTML: return kb_report_html_precision(run, out);
    default: return KB_ERR_INPUT;
    }
}

/* ---- shared pieces ---- */

