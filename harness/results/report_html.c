/* report_html.c - one self-contained HTML page (no external files; one inline script for
 * sorting and filtering the tables), laid out for its questions (see report_html.h): the
 * summary first (counts, the best configuration per shape and dtype), a table of contents,
 * then a section per question. Every element is closed (void elements written as
 * <meta .../>), so the page also parses as XML. */
#include "results/report_html.h"
#include "results/report_precision.h"
#include "results/report_cases.h"
#include "results/report_charts.h"
#include "results/report_svg.h"
#include "results/report_tiles.h"

#include <stdlib.h>
#include <string.h>

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:1em 1.5em;color:#222;max-width:1320px;font-size:14px}"
    "h1{font-size:19px;margin:0 0 2px}h2{font-size:16px;margin:1.4em 0 .4em;border-bottom:1px solid #ddd}"
    "h3{font-size:13px;margin:1em 0 .3em}p{margin:.3em 0}"
    ".meta{color:#555;font-size:12px}"
    ".scroll{overflow:auto;max-width:100%;max-height:80vh}"
    ".scroll thead th{position:sticky;top:0;z-index:1}"
    "input.filter{margin:0.5em 0;width:30em}"
    "table{border-collapse:collapse;margin:.4em 0;font-size:12px}"
    "th,td{border:1px solid #ccc;padding:1px 5px;text-align:right;white-space:nowrap}"
    "th{background:#f3f3f3;text-align:left}td.t{text-align:left;font-family:monospace}"
    "td.w{white-space:normal;overflow-wrap:anywhere;min-width:14em;max-width:40em}"
    ".ok{color:#1a7f37}.failed{color:#c62828;font-weight:bold}.skipped{color:#777}"
    ".note{background:#fff4e5;border-left:4px solid #f0a020;padding:4px 10px;max-width:80em;font-size:12px}"
    "nav.toc ol{margin:.2em 0;padding-left:1.5em;columns:4;font-size:13px}"
    /* the summary's matrix is dense, so that llm.yaml's fits the first 1400x900 screen */
    "table.matrix{font-size:11px;line-height:13px;margin:.2em 0}table.matrix th,table.matrix td{padding:0 4px}"
    "table.matrix td{text-align:left}table.matrix td.c{font-family:monospace}"
    "table.matrix a{color:inherit;text-decoration:none}table.matrix a:hover{text-decoration:underline}"
    ".m{color:#666}.zero{font-size:13px}";

static void text(FILE *out, const char *s) { kb_report_xml_text(out, s); }

/* A section's opening: its anchor and heading. */
static void section_head(FILE *out, kb_report_section s)
{
    fprintf(out, "<section id=\"%s\">\n<h2>", kb_report_section_names[s]);
    text(out, kb_report_section_titles[s]);
    fputs("</h2>\n", out);
}

static int any_emulator(const kb_report_run *run)
{
    for (int d = 0; d < run->n_devs; d++)
        if (run->devs[d].emulator && run->devs[d].n_rows)
            return 1;
    return 0;
}

/* ---- the summary: counts and the best of each shape and dtype ---- */

/* "280 cuBLASLt needs a GPU; 8 ..." - the skip reasons, most frequent first, at most 3. */
static void skip_reasons(FILE *out, const kb_report_run *run)
{
    const char *why[4] = { 0 };
    int count[4] = { 0 }, others = 0;
    for (size_t i = 0; i < run->n; i++) {
        if (!run->rows[i].skipped) continue;
        int k = 0;
        while (k < 4 && why[k] && strcmp(why[k], run->rows[i].reason)) k++;
        if (k == 4) { others++; continue; }
        why[k] = run->rows[i].reason;
        count[k]++;
    }
    for (int a = 0; a < 4; a++)   /* by count */
        for (int b = a + 1; b < 4; b++)
            if (count[b] > count[a]) {
                const char *w = why[a]; why[a] = why[b]; why[b] = w;
                int c = count[a]; count[a] = count[b]; count[b] = c;
            }
    if (!why[0]) return;
    fputs("<p>Skipped: ", out);
    for (int k = 0; k < 3 && why[k]; k++) {
        fprintf(out, "%s<b>%d</b> ", k ? "; " : "", count[k]);
        text(out, *why[k] ? why[k] : "(no reason given)");
    }
    if (why[3] || others) fputs("; and others (the case table lists each)", out);
    fputs(".</p>\n", out);
}

/* The matrix cell of problem b: the fastest configuration's variant and median, its margin;
 * the whole configuration in the tooltip; a link to the shape's tile sweep. */
static void matrix_cell(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const kb_report_best *b,
                        int tiles)
{
    if (b->best < 0) {
        fprintf(out, "<td class=\"c skipped\" title=\"%d case%s, none measured\">-</td>", b->n_rows,
                b->n_rows == 1 ? "" : "s");
        return;
    }
    const kb_report_row *r = &run->rows[b->best];
    kb_sb cfg;
    kb_sb_init(&cfg);
    kb_report_config_text(ax, r, &cfg);
    char t[48], margin[64];
    kb_report_num(t, sizeof t, r->median_us);
    kb_report_margin_text(run, b, margin, sizeof margin);
    fputs("<td class=\"c\" title=\"", out);
    text(out, cfg.s);
    fprintf(out, " - %s us; over the next fastest: %s\"><a href=\"#tiles-%d\">", t, margin, tiles);
    text(out, r->variant);
    fprintf(out, "</a> %s", t);
    if (b->next >= 0)
        fprintf(out, " <span class=\"m\">%.2fx%s</span>", run->rows[b->next].median_us / r->median_us,
                b->within_noise ? "~" : "");
    fputs("</td>", out);
    kb_sb_free(&cfg);
}

/* The dtypes of the problems, in kb_dtype order: bit d set. */
static unsigned dtypes_of(const kb_report_run *run, const kb_report_best *b, int n)
{
    unsigned m = 0;
    kb_dtype dt;
    for (int k = 0; k < n; k++)
        if (kb_dtype_parse(run->rows[b[k].first].dtype, &dt) == 0)
            m |= 1u << dt;
    return m;
}

/* The q-th problem when the problems are ordered by family (families in order of first
 * appearance), then by appearance; -1 past the end. */
static int family_order(const kb_report_run *run, const kb_report_best *b, int n, int q)
{
    for (int f = 0; f < n; f++) {
        const char *fam = run->rows[b[f].first].family;
        int seen = 0;
        for (int j = 0; j < f && !seen; j++)
            seen = !strcmp(run->rows[b[j].first].family, fam);
        if (seen)
            continue;
        for (int k = f; k < n; k++)
            if (!strcmp(run->rows[b[k].first].family, fam) && q-- == 0)
                return k;
    }
    return -1;
}

/* One matrix row per shape and pad (rows[] holds a problem of each), a column per dtype. */
static void matrix(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const kb_report_best *b, int n,
                   const int *shape)
{
    unsigned dts = dtypes_of(run, b, n);
    fputs("<table class=\"matrix\"><thead><tr><th>shape</th><th>pad</th>", out);
    for (int d = 0; d < KB_DT_COUNT; d++)
        if (dts >> d & 1u) fprintf(out, "<th>%s</th>", kb_dtype_name((kb_dtype)d));
    fputs("</tr></thead>\n<tbody>\n", out);
    char *done = calloc((size_t)n + 1, 1);
    for (int q = 0; done && q < n; q++) {   /* families in order of first appearance, each whole */
        int k = family_order(run, b, n, q);
        if (k < 0 || done[k]) continue;
        const kb_report_row *f = &run->rows[b[k].first];
        kb_sb head;
        kb_sb_init(&head);
        kb_report_problem_text(ax, f, 0, &head);
        fputs("<tr><td class=\"t\">", out);
        text(out, f->family);
        fputc(' ', out);
        text(out, head.s);
        fprintf(out, "</td><td>%d</td>", f->pad);
        kb_sb_free(&head);
        for (int d = 0; d < KB_DT_COUNT; d++) {
            if (!(dts >> d & 1u)) continue;
            int j = k;   /* the problem of this shape and pad in dtype d */
            while (j < n && (done[j] || shape[b[j].first] != shape[f - run->rows] ||
                             run->rows[b[j].first].pad != f->pad ||
                             strcmp(run->rows[b[j].first].dtype, kb_dtype_name((kb_dtype)d))))
                j++;
            if (j == n) { fputs("<td></td>", out); continue; }
            done[j] = 1;
            matrix_cell(out, run, ax, &b[j], shape[f - run->rows]);
        }
        fputs("</tr>\n", out);
    }
    free(done);
    fputs("</tbody></table>\n", out);
}

static void summary_section(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const kb_report_best *b,
                            int n, const int *shape)
{
    section_head(out, KB_SECTION_SUMMARY);
    kb_sb sum;
    kb_sb_init(&sum);
    kb_report_summary(run, &sum);
    fputs("<p>", out);
    text(out, sum.s);
    fputs(".</p>\n", out);
    kb_sb_free(&sum);
    skip_reasons(out, run);
    if (n > 0) {
        fprintf(out, "<p>Fastest verified configuration per shape and dtype: variant, median [us]%s, and the next "
                     "fastest's time over it (~: within the noise). Hover for the configuration, click for the tiles."
                     "</p>\n", any_emulator(run) ? " (CPU)" : "");
        matrix(out, run, ax, b, n, shape);
    }
    fputs("</section>\n", out);
}

/* ---- the table of contents and the per-question sections ---- */

static void toc(FILE *out, const int *present)
{
    fputs("<nav class=\"toc\"><b>Contents</b><ol>", out);
    for (int s = KB_SECTION_SUMMARY; s < KB_SECTION_COUNT; s++)
        if (present[s]) {
            fprintf(out, "<li><a href=\"#%s\">", kb_report_section_names[s]);
            text(out, kb_report_section_titles[s]);
            fputs("</a></li>", out);
        }
    fputs("</ol></nav>\n", out);
}

static void best_section(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const kb_report_best *b,
                         int n, const int *shape)
{
    section_head(out, KB_SECTION_BEST);
    fputs("<p>Every problem (shape, dtype, pad): how many configurations were measured, the fastest and its "
          "median, and the next fastest's median over it - within the noise when their 95% intervals overlap "
          "(the rule kbench tune uses).</p>\n<div class=\"scroll\"><table class=\"sortable\" id=\"best\">\n<thead><tr>"
          "<th>family</th><th>shape</th><th>dtype</th><th>pad</th><th>measured</th><th>fastest configuration</th>"
          "<th>median_us (clock)</th><th>over the next fastest</th></tr></thead>\n<tbody>\n", out);
    for (int k = 0; k < n; k++) {
        const kb_report_row *f = &run->rows[b[k].first];
        kb_sb head, cfg;
        kb_sb_init(&head);
        kb_sb_init(&cfg);
        kb_report_problem_text(ax, f, 1, &head);
        if (b[k].best >= 0)
            kb_report_config_text(ax, &run->rows[b[k].best], &cfg);
        char t[64] = "", margin[64];
        if (b[k].best >= 0) {
            kb_report_num(t, sizeof t, run->rows[b[k].best].median_us);
            snprintf(t + strlen(t), sizeof t - strlen(t), " (%s)", run->rows[b[k].best].clock);
        }
        kb_report_margin_text(run, &b[k], margin, sizeof margin);
        fprintf(out, "<tr><td class=\"t\">%s</td><td class=\"t\"><a href=\"#tiles-%d\">", f->family,
                shape[b[k].first]);
        text(out, head.s);
        fprintf(out, "</a></td><td class=\"t\">%s</td><td>%d</td><td>%d of %d</td><td class=\"t\">", f->dtype, f->pad,
                b[k].n_timed, b[k].n_rows);
        text(out, cfg.s);
        fprintf(out, "</td><td>%s</td><td class=\"t\">%s</td></tr>\n", t, margin);
        kb_sb_free(&head);
        kb_sb_free(&cfg);
    }
    fputs("</tbody></table></div>\n</section>\n", out);
}

static void precision_row(FILE *out, const kb_report_run *run, const kb_precision_group *g, int d, int rc)
{
    char cells[KB_PRECISION_COLS][256];
    kb_report_precision_cells(run, g, d, rc, cells);
    fputs("<tr>", out);
    for (int c = 0; c < KB_PRECISION_COLS; c++) {
        fputs(c < 3 || c == 9 ? "<td class=\"t\">" : "<td>", out);   /* left-aligned text columns */
        text(out, cells[c]);
        fputs("</td>", out);
    }
    fputs("</tr>\n", out);
}

static void precision_section(FILE *out, const kb_report_run *run)
{
    kb_precision_group *g;
    int n = kb_report_precision_groups(run, &g);
    if (n <= 0)
        return;
    section_head(out, KB_SECTION_PRECISION);
    fputs("<p>", out);
    text(out, KB_PRECISION_NOTE);
    fputs("</p>\n", out);
    for (int k = 0; k < n; k++) {
        kb_sb title;
        kb_sb_init(&title);
        kb_report_precision_title(run, &g[k], &title);
        fputs("<h3>", out);
        text(out, title.s);
        fputs("</h3>\n", out);
        kb_sb_free(&title);
        kb_report_chart_precision(run, &g[k], out);
        fputs("<div class=\"scroll\"><table>\n<tr>", out);
        for (int c = 0; c < KB_PRECISION_COLS; c++)
            fprintf(out, "<th>%s</th>", kb_precision_cols[c]);
        fputs("</tr>\n", out);
        for (int d = 0; d < KB_DT_COUNT; d++)
            for (int rc = 0; rc < KB_RECIPE_COUNT; rc++)
                if (g[k].rows[d][rc] >= 0)
                    precision_row(out, run, &g[k], d, rc);
        fputs("</table></div>\n", out);
    }
    fputs("</section>\n", out);
    free(g);
}

static void tiles_section(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const int *shape,
                          int n_shapes)
{
    section_head(out, KB_SECTION_TILES);
    fprintf(out, "<p>One chart per shape: a panel per dtype and pad ranks the configurations measured, fastest "
                 "first (green), bar length the median%s, the ratio to the panel's fastest beside it. Hover a bar "
                 "for its case id.</p>\n", any_emulator(run) ? " (CPU time on the emulator)" : "");
    for (int s = 0; s < n_shapes; s++)
        kb_report_tiles_chart(run, ax, shape, s, out);
    fputs("</section>\n", out);
}

/* The per-launch overhead of eager row e [us] into buf ("" when the record has none). */
static void per_launch(const kb_report_run *run, int e, char *buf, size_t n)
{
    json_t *pl = json_object_get(json_object_get(run->rows[e].rec, "launch_overhead"), "per_launch_us");
    buf[0] = 0;
    if (json_is_number(pl))
        kb_report_num(buf, n, json_number_value(pl));
}

static void launch_row(FILE *out, const kb_report_run *run, const kb_report_axes *ax, int e, int g, int with_per)
{
    const kb_report_row *re = &run->rows[e], *rg = &run->rows[g];
    kb_sb head, cfg;
    kb_sb_init(&head);
    kb_sb_init(&cfg);
    kb_report_problem_text(ax, re, 0, &head);
    kb_report_config_text(ax, re, &cfg);
    if (cfg.len > 6 && !strcmp(cfg.s + cfg.len - 6, " eager"))   /* the launch is the columns' */
        cfg.s[cfg.len -= 6] = 0;
    char te[48], tg[48], ratio[48], per[48] = "";
    kb_report_num(te, sizeof te, re->median_us);
    kb_report_num(tg, sizeof tg, rg->median_us);
    kb_report_num(ratio, sizeof ratio, re->median_us / rg->median_us);
    per_launch(run, e, per, sizeof per);
    fprintf(out, "<tr><td class=\"t\">%s ", re->family);
    text(out, head.s);
    fprintf(out, "</td><td class=\"t\">%s</td><td>%d</td><td class=\"t\">", re->dtype, re->pad);
    text(out, cfg.s);
    fprintf(out, "</td><td>%s</td><td>%s</td><td>%sx</td>", te, tg, ratio);
    if (with_per)
        fprintf(out, "<td>%s</td>", per);
    fputs("</tr>\n", out);
    kb_sb_free(&head);
    kb_sb_free(&cfg);
}

/* The eager twin of graph row g when both were measured, else -1. */
static int measured_pair(const kb_report_run *run, size_t g)
{
    int e = kb_report_eager_twin(run, g);
    if (e < 0 || !run->rows[g].ok || !run->rows[e].ok || !run->rows[g].have_timing || !run->rows[e].have_timing)
        return -1;
    return e;
}

static void launch_section(FILE *out, const kb_report_run *run, const kb_report_axes *ax)
{
    section_head(out, KB_SECTION_LAUNCH);
    int any = 0, with_per = 0;
    char per[48];
    for (size_t g = 0; g < run->n && !with_per; g++) {
        int e = measured_pair(run, g);
        if (e >= 0)
            per_launch(run, e, per, sizeof per);
        with_per = e >= 0 && per[0];
    }
    for (size_t g = 0; g < run->n; g++) {
        int e = measured_pair(run, g);
        if (e < 0)
            continue;
        if (!any++)
            fprintf(out, "<p>Each configuration measured both ways: the median of one execution launched eagerly "
                         "and of the same execution replayed from a captured CUDA Graph%s%s.</p>\n"
                         "<div class=\"scroll\"><table class=\"sortable\" id=\"launch\">\n<thead><tr><th>shape</th>"
                         "<th>dtype</th><th>pad</th><th>configuration</th><th>eager median_us</th>"
                         "<th>graph median_us</th><th>eager / graph</th>%s</tr></thead>\n<tbody>\n",
                    any_emulator(run) ? " (CPU times on the emulator)" : "",
                    with_per ? ", and the launch overhead a graph removes per launch (eager - graph over N back-to-back "
                               "launches)" : "",
                    with_per ? "<th>per-launch overhead us</th>" : "");
        launch_row(out, run, ax, e, (int)g, with_per);
    }
    if (any)
        fputs("</tbody></table></div>\n", out);
    else
        fputs("<p>No configuration of this run was measured both eagerly and as a graph (launch: [eager, graph] "
              "in the suite).</p>\n", out);
    fputs("</section>\n", out);
}

static void margins_section(FILE *out, const kb_report_run *run)
{
    section_head(out, KB_SECTION_MARGINS);
    for (int d = 0; d < run->n_devs; d++) {
        if (!run->devs[d].n_rows) continue;
        if (run->n_devs > 1) {
            fputs("<h3>", out);
            text(out, run->devs[d].name);
            fputs("</h3>\n", out);
        }
        kb_report_chart_margin(run, d, out);
    }
    fputs("</section>\n", out);
}

/* The ok rows of dev with no FLOPs (a log axis has no 0): listed under the roofline. */
static void not_on_roofline(FILE *out, const kb_report_run *run, int dev)
{
    int any = 0;
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        if (r->dev != dev || !r->ok || !r->d.have_rates || (r->d.tflops > 0 && r->d.ai > 0))
            continue;
        if (!any++) fputs("<p class=\"zero\">Not on the chart (no FLOPs, a log axis has no 0):</p>\n<ul class=\"zero\">\n", out);
        fputs("<li>", out);
        text(out, r->case_id);
        char gb[48], pct[48];
        kb_report_num(gb, sizeof gb, r->d.gbps);
        kb_report_num(pct, sizeof pct, r->d.pct_roof);
        fprintf(out, ": %s GB/s", gb);
        if (r->d.have_roof) fprintf(out, ", %s%% of the bandwidth ceiling", pct);
        fputs("</li>\n", out);
    }
    if (any) fputs("</ul>\n", out);
}

/* 1 when device dev has a roofline to draw (a GPU with recorded peaks). */
static int has_roofline(const kb_report_run *run, int dev)
{
    double peak[KB_DT_COUNT], bw;
    const char *src;
    if (run->devs[dev].emulator || !run->devs[dev].n_rows)
        return 0;
    kb_report_ceilings(run, dev, peak, &bw, &src);
    return bw > 0;
}

static void roofline_section(FILE *out, const kb_report_run *run)
{
    section_head(out, KB_SECTION_ROOFLINE);
    for (int d = 0; d < run->n_devs; d++) {
        if (!has_roofline(run, d)) continue;
        double peak[KB_DT_COUNT], bw;
        const char *src;
        kb_report_ceilings(run, d, peak, &bw, &src);
        fputs("<h3>", out);
        text(out, run->devs[d].name);
        fprintf(out, " (sm_%d)</h3>\n<p>Roofline ceilings: %s peaks recorded with the run (solid), measured ceilings "
                     "of this device where a ceilings run exists (dashed). %%meas: of the measured roof; %%path: of "
                     "the kernel's instruction path (measured, else datasheet). GB/s counts compulsory bytes only; "
                     "hover a point for its case id.</p>\n", run->devs[d].sm,
                src && strcmp(src, "clock") == 0 ? "clock-based" : "datasheet");
        kb_report_svg_roofline(run, d, out);
        not_on_roofline(out, run, d);
    }
    fputs("</section>\n", out);
}

static void cases_section(FILE *out, const kb_report_run *run, const kb_report_axes *ax)
{
    section_head(out, KB_SECTION_CASES);
    fputs("<p>Every case: its axes, outcome and figures; hover a row for its case id, click a header to sort, type to "
          "filter. Columns no case fills are left out.</p>\n", out);
    if (any_emulator(run)) {
        fputs("<p class=\"note\">", out);
        text(out, KB_REPORT_EMU_NOTE);
        fputs("</p>\n", out);
    }
    int with_dev = 0;
    for (int d = 0; d < run->n_devs; d++)
        with_dev += run->devs[d].n_rows > 0;
    for (int d = 0; d < run->n_devs; d++) {
        if (!run->devs[d].n_rows) continue;
        if (with_dev > 1) {
            fputs("<h3>", out);
            text(out, run->devs[d].name);
            fputs("</h3>\n", out);
        }
        kb_report_cases_table(run, ax, d, out);
    }
    for (size_t i = 0; i < run->n; i++)
        if (run->rows[i].dev < 0) {
            fputs("<h3>Cases without a device</h3>\n", out);
            kb_report_cases_table(run, ax, -1, out);
            break;
        }
    fputs("</section>\n", out);
}

/* ---- the page ---- */

static void page_start(FILE *out, const kb_report_run *run)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>kbench report: ", out);
    text(out, run->run_id);
    fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>kbench report: ", style);
    text(out, *run->run_id ? run->run_id : "(no run id)");
    fputs("</h1>\n<p class=\"meta\">source <code>", out);
    text(out, run->source);
    fputs("</code>; recorded ", out);
    text(out, *run->time ? run->time : "?");
    for (int d = 0; d < run->n_devs; d++) {
        if (!run->devs[d].n_rows) continue;
        fputs("; ", out);
        text(out, run->devs[d].name);
        fprintf(out, " (sm_%d)", run->devs[d].sm);
    }
    fputs("</p>\n", out);
    if (any_emulator(run))   /* the whole note is in the case table's section */
        fputs("<p class=\"note\"><strong>Emulator run: every time is CPU time of the emulator on this machine, not a "
              "GPU time; rates are CPU rates; no roofline.</strong></p>\n", out);
}

/* Which sections the page holds: want (KB_SECTION_ALL: every one with something to show). */
static void sections_present(const kb_report_run *run, kb_report_section want, int *present)
{
    kb_precision_group *g;
    int n_prec = kb_report_precision_groups(run, &g);
    free(g);
    int roof = 0;
    for (int d = 0; d < run->n_devs; d++)
        roof |= has_roofline(run, d);
    for (int s = 0; s < KB_SECTION_COUNT; s++)
        present[s] = want == KB_SECTION_ALL || want == (kb_report_section)s;
    present[KB_SECTION_ALL] = 0;
    present[KB_SECTION_PRECISION] &= n_prec > 0;
    present[KB_SECTION_ROOFLINE] &= roof || want == KB_SECTION_ROOFLINE;
}

kb_status kb_report_html(const kb_report_run *run, kb_report_section want, FILE *out)
{
    kb_report_axes ax;
    kb_report_best *b = NULL;
    int *shape = NULL, present[KB_SECTION_COUNT];
    int n = -1, n_shapes = -1;
    if (kb_report_axes_of(run, &ax) == KB_OK && (n = kb_report_best_of(run, &b)) >= 0)
        n_shapes = kb_report_shapes(run, &ax, &shape);
    kb_status st = n_shapes < 0 ? KB_ERR_OOM : KB_OK;
    if (st == KB_OK) {
        sections_present(run, want, present);
        page_start(out, run);
        if (present[KB_SECTION_SUMMARY]) summary_section(out, run, &ax, b, n, shape);
        if (want == KB_SECTION_ALL) toc(out, present);
        if (present[KB_SECTION_BEST]) best_section(out, run, &ax, b, n, shape);
        if (present[KB_SECTION_PRECISION]) precision_section(out, run);
        else if (want == KB_SECTION_PRECISION)
            fputs("<p>No precision comparison: no GEMM or attention shape of this run has two or more precisions "
                  "that ran (or a vendor row beside one).</p>\n", out);
        if (present[KB_SECTION_TILES]) tiles_section(out, run, &ax, shape, n_shapes);
        if (present[KB_SECTION_LAUNCH]) launch_section(out, run, &ax);
        if (present[KB_SECTION_MARGINS]) margins_section(out, run);
        if (present[KB_SECTION_ROOFLINE]) roofline_section(out, run);
        if (present[KB_SECTION_CASES]) cases_section(out, run, &ax);
        kb_report_table_script(out);
        fputs("</body>\n</html>\n", out);
        st = ferror(out) ? KB_ERR_IO : KB_OK;
    }
    free(shape);
    free(b);
    kb_report_axes_free(&ax);
    return st;
}
