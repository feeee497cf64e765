/* compare_html.c - `kbench compare` as one self-contained HTML page (see compare_html.h):
 * the runs, a bar chart of the ratios, the sortable table of cases (the report's table
 * script, report_charts.h), the geometric mean and the regressions. */
#include "results/compare_html.h"
#include "results/report_charts.h"

#include <math.h>
#include <string.h>

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1300px}"
    ".scroll{overflow:auto;max-width:100%;max-height:80vh}"
    "table{border-collapse:collapse;margin:1em 0;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}"
    "th{background:#f3f3f3}td.t{text-align:left;font-family:monospace;word-break:break-all}"
    "input.filter{margin:0.5em 0;width:30em}"
    ".regression{color:#c62828;font-weight:bold}.improvement{color:#1a7f37}.same,.not_compared{color:#555}"
    ".note{background:#fff4e5;border-left:4px solid #f0a020;padding:8px 12px;max-width:60em}";

static void text(FILE *out, const char *s) { kb_report_xml_text(out, s); }

static int compared(const kb_cmp_case *c) { return c->a && c->b && c->verdict != KB_CMP_NOT_COMPARED; }

#define BAR_H 16
#define LABEL_W 470
#define PLOT_W 420

/* The half-width of the log2 axis: the largest |log2 ratio|, at least log2(1.1). */
static double axis_span(const kb_cmp_result *r)
{
    double span = log2(1.1);
    for (size_t i = 0; i < r->n; i++)
        if (compared(&r->cases[i]) && fabs(log2(r->cases[i].ratio)) > span)
            span = fabs(log2(r->cases[i].ratio));
    return span;
}

/* One bar from the 1.0 line: right (red) when B is slower, left (green) when faster. */
static void ratio_bar(FILE *out, const kb_cmp_case *c, int row, double span)
{
    double mid = LABEL_W + PLOT_W / 2.0, x = mid + log2(c->ratio) / span * (PLOT_W / 2.0);
    double y = 24 + row * BAR_H;
    const char *fill = c->verdict == KB_CMP_REGRESSION ? "#c62828" : c->verdict == KB_CMP_IMPROVEMENT ? "#1a7f37"
                     : "#9e9e9e";
    fprintf(out, "<text x=\"%d\" y=\"%.1f\" font-size=\"11\" font-family=\"monospace\">", LABEL_W - 6, y + 11);
    text(out, strlen(c->case_id) > 64 ? c->case_id + strlen(c->case_id) - 64 : c->case_id);
    fprintf(out, "</text><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>", fmin(x, mid),
            y + 2, fmax(fabs(x - mid), 1.0), BAR_H - 4, fill);
    text(out, c->case_id);
    fprintf(out, ": B/A %.3f (%s)</title></rect>\n", c->ratio, kb_cmp_verdict_name(c->verdict));
}

static void ratio_chart(FILE *out, const kb_cmp_result *r)
{
    if (!r->n_compared)
        return;
    double span = axis_span(r), mid = LABEL_W + PLOT_W / 2.0;
    int h = 24 + r->n_compared * BAR_H + 24;
    fputs("<h2>Ratio B/A per case</h2>\n<p>Log scale around 1: bars to the right are slower in B, to the left "
          "faster; red a regression, green an improvement, grey within noise or threshold.</p>\n", out);
    fprintf(out, "<svg class=\"chart\" data-chart=\"ratio\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
                 "height=\"%d\" viewBox=\"0 0 %d %d\">\n<g text-anchor=\"end\">\n", LABEL_W + PLOT_W + 20, h,
            LABEL_W + PLOT_W + 20, h);
    int row = 0;
    for (size_t i = 0; i < r->n; i++)
        if (compared(&r->cases[i]))
            ratio_bar(out, &r->cases[i], row++, span);
    fprintf(out, "</g>\n<line x1=\"%.1f\" y1=\"18\" x2=\"%.1f\" y2=\"%d\" stroke=\"#222\"/>\n", mid, mid, h - 18);
    double lo = exp2(-span), hi = exp2(span);
    fprintf(out, "<g font-size=\"11\" text-anchor=\"middle\"><text x=\"%d\" y=\"14\">%.3g</text>"
                 "<text x=\"%.1f\" y=\"14\">1</text><text x=\"%d\" y=\"14\">%.3g</text></g>\n</svg>\n",
            LABEL_W, lo, mid, LABEL_W + PLOT_W, hi);
}

static void td(FILE *out, const char *cls, const char *s)
{
    fprintf(out, "<td class=\"%s\">", cls);
    text(out, s);
    fputs("</td>", out);
}

static void median_cell(FILE *out, const kb_report_row *row)
{
    char b[96] = "-";
    if (row && row->have_timing) {
        kb_report_num(b, sizeof b, row->median_us);
        snprintf(b + strlen(b), sizeof b - strlen(b), " %s", row->clock);
    } else if (row) {
        snprintf(b, sizeof b, "%s", row->status);
    }
    td(out, "n", b);
}

static void case_row(FILE *out, const kb_cmp_case *c)
{
    char ratio[32] = "", p[32] = "";
    if (compared(c)) snprintf(ratio, sizeof ratio, "%.4f", c->ratio);
    if (compared(c)) snprintf(p, sizeof p, c->have_test ? "%.2g" : "n/a", c->test.p);
    const char *v = !c->a ? "only in B" : !c->b ? "only in A" : kb_cmp_verdict_name(c->verdict);
    fputs("<tr>", out);
    td(out, "t", c->case_id);
    median_cell(out, c->a);
    median_cell(out, c->b);
    td(out, "n", ratio);
    td(out, "n", p);
    td(out, c->a && c->b ? kb_cmp_verdict_name(c->verdict) : "same", v);
    fputs("</tr>\n", out);
}

static void run_item(FILE *out, const char *tag, const kb_report_run *r)
{
    fprintf(out, "<li><strong>%s</strong>: <code>", tag);
    text(out, r->source);
    fputs("</code> (run ", out);
    text(out, *r->run_id ? r->run_id : "?");
    if (r->n_devs > 0) {
        fputs(", ", out);
        text(out, r->devs[0].name);
        if (r->devs[0].emulator) fputs(": emulator, CPU times", out);
    }
    fprintf(out, ", %zu cases)</li>\n", r->n);
}

static void summary(FILE *out, const kb_cmp_result *r)
{
    if (r->n_compared)
        fprintf(out, "<p id=\"geomean\">Geometric mean of B/A over %d cases: <strong>%.4f</strong> (B %s by "
                     "%.2f%%)</p>\n", r->n_compared, r->geomean, r->geomean >= 1 ? "slower" : "faster",
                fabs(r->geomean - 1) * 100);
    else
        fputs("<p id=\"geomean\">No case was ok with timing in both runs.</p>\n", out);
    fprintf(out, "<p>%d regressions (%d gating), %d improvements, %d within noise or threshold; %d only in A, %d "
                 "only in B, %d not compared.</p>\n<h2>Regressions</h2>\n<ul id=\"regressions\">\n",
            r->n_regressions, kb_compare_gated(r), r->n_improvements, r->n_compared - r->n_regressions - r->n_improvements, r->n_only_a, r->n_only_b,
            r->n_not_compared);
    for (size_t i = 0; i < r->n; i++) {
        const kb_cmp_case *c = &r->cases[i];
        if (!compared(c) || c->verdict != KB_CMP_REGRESSION)
            continue;
        fputs("<li><code>", out);
        text(out, c->case_id);
        fprintf(out, "</code>: B/A %.3f, p = %.2g%s</li>\n", c->ratio, c->test.p,
                kb_compare_case_gates(r, c) ? "" : " (CPU clock: not gated)");
    }
    fputs(r->n_regressions ? "</ul>\n" : "<li>none</li>\n</ul>\n", out);
}

kb_status kb_compare_html(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r,
                          double threshold, FILE *out)
{
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
                 "<title>kbench compare</title>\n<style>%s</style>\n</head>\n<body>\n<h1>kbench compare</h1>\n<ul>\n",
            style);
    run_item(out, "A (baseline)", a);
    run_item(out, "B", b);
    fprintf(out, "</ul>\n<p>A regression: B slower than A by more than %.3g%% with p &lt; %.2g (two-sided "
                 "Mann-Whitney U over the timing samples).</p>\n", threshold * 100, KB_COMPARE_ALPHA);
    if (r->clocks_differ)
        fputs("<p class=\"note\">The runs have different clocks (CPU emulator time vs GPU time): their ratios are "
              "not comparable.</p>\n", out);
    char note[512];
    if (kb_compare_cpu_note(r, note, sizeof note)) {
        fputs("<p class=\"note\" id=\"cpu-clock\">", out);
        text(out, note);
        fputs("</p>\n", out);
    }
    summary(out, r);
    ratio_chart(out, r);
    fputs("<h2>Cases</h2>\n<input class=\"filter\" type=\"search\" placeholder=\"filter cases\" "
          "data-table=\"cmp\"/>\n<div class=\"scroll\"><table class=\"sortable\" id=\"cmp\">\n<thead><tr>"
          "<th>case</th><th>A median_us</th><th>B median_us</th><th>B/A</th><th>p</th><th>verdict</th></tr>"
          "</thead>\n<tbody>\n", out);
    for (size_t i = 0; i < r->n; i++)
        case_row(out, &r->cases[i]);
    fputs("</tbody></table></div>\n", out);
    kb_report_table_script(out);
    fputs("</body>\n</html>\n", out);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}
