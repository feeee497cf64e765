/* report_md.c - the markdown report, in the HTML page's order (report_html.h): the
 * summary, the fastest configuration per problem, the precision comparison, the tile
 * sweep per shape as tables, graph vs eager, the verification margins closest to their
 * tolerance, the roofline ceilings of each GPU, and a table of cases per device with the
 * reasons of cases that failed or were skipped. */
#include "results/report_md.h"
#include "results/report_precision.h"

#include "results/report_best.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Table cell text: '|' escaped, line breaks as spaces. */
static void cell(FILE *out, const char *s)
{
    fputc(' ', out);
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", out);
        else if (*s == '\n' || *s == '\r') fputc(' ', out);
        else fputc(*s, out);
    }
    fputs(" |", out);
}

static void num_cell(FILE *out, int have, double v)
{
    char b[48] = "";
    if (have) kb_report_num(b, sizeof b, v);
    cell(out, b);
}

static void row_line(FILE *out, const kb_report_row *r, int emulator)
{
    char b[96];
    fputc('|', out);
    cell(out, r->case_id);
    cell(out, r->status);
    kb_report_verified_text(r, b, sizeof b);
    cell(out, b);
    b[0] = 0;
    if (r->have_timing) {
        kb_report_num(b, sizeof b, r->median_us);
        snprintf(b + strlen(b), sizeof b - strlen(b), " (%s)", *r->clock ? r->clock : "?");
    }
    cell(out, b);
    num_cell(out, r->d.have_rates, r->d.tflops);
    num_cell(out, r->d.have_rates, r->d.gbps);
    num_cell(out, r->d.have_rates, r->d.ai);
    num_cell(out, r->d.have_roof && !emulator, r->d.pct_roof);
    num_cell(out, r->d.have_measured && !emulator, r->d.pct_measured);
    num_cell(out, r->d.have_path && !emulator, r->d.pct_path);
    const char *bound = kb_bound_name(r->d.bound);
    cell(out, bound && !emulator ? bound : "");
    snprintf(b, sizeof b, "%d", r->samples);
    cell(out, r->have_timing ? b : "");
    num_cell(out, r->have_timing, r->cv);
    fputc('\n', out);
}

static void ceilings_line(FILE *out, const kb_report_run *run, int dev)
{
    double t[KB_DT_COUNT], bw;
    const char *src;
    kb_report_ceilings(run, dev, t, &bw, &src);
    if (bw <= 0) {
        fprintf(out, "No GPU peaks were recorded for this device: rates only, no roofline.\n\n");
        return;
    }
    fprintf(out, "Roofline ceilings (%s peaks): memory %.0f GB/s", src && strcmp(src, "clock") == 0 ? "clock-based" : "datasheet", bw);
    for (int d = 0; d < KB_DT_COUNT; d++)
        if (t[d] > 0) fprintf(out, "; %s %.1f TFLOPS", kb_dtype_name((kb_dtype)d), t[d]);
    fprintf(out, " (TOPS for int8). GB/s counts compulsory bytes only.\n\n");
    char kinds[KB_PEAKS_MAX_MEASURED][40];
    double mt[KB_PEAKS_MAX_MEASURED], mbw;
    int nk = kb_report_measured(run, dev, &mbw, kinds, mt, KB_PEAKS_MAX_MEASURED);
    if (mbw <= 0 && nk == 0) {
        fprintf(out, "Measured ceilings: none for this device (kbench run suites/ceilings.yaml): %%meas is empty; "
                     "%%path is against the datasheet rate of the kernel's instruction path.\n\n");
        return;
    }
    fprintf(out, "Measured ceilings (suites/ceilings.yaml on this device): memory %.0f GB/s", mbw);
    for (int k = 0; k < nk; k++)
        fprintf(out, "; %s %.1f TFLOPS", kinds[k], mt[k]);
    fprintf(out, ". %%meas: of the measured roof; %%path: of the instruction path's ceiling (measured, else the "
                 "datasheet).\n\n");
}

static void device_section(FILE *out, const kb_report_run *run, int dev)
{
    const kb_report_device *d = dev >= 0 ? &run->devs[dev] : NULL;
    const char *backend = "";
    for (size_t i = 0; i < run->n; i++)
        if (run->rows[i].dev == dev) { backend = json_string_value(json_object_get(run->rows[i].rec, "backend")); break; }
    if (d)
        fprintf(out, "## %s (sm_%d, %s)\n\n", d->name, d->sm, backend ? backend : "?");
    else
        fprintf(out, "## Cases without a device\n\n");
    int emu = d && d->emulator;
    fprintf(out, "| case | status | verified / max_err | median_us (clock) | TFLOPS | GB/s | AI | %%roof | %%meas "
                 "| %%path | bound | samples | cv |\n");
    fprintf(out, "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|\n");
    for (size_t i = 0; i < run->n; i++)
        if (run->rows[i].dev == dev)
            row_line(out, &run->rows[i], emu);
    int any = 0;
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        if (r->dev != dev || r->ok)
            continue;
        if (!any) fprintf(out, "\nNot run, or failed:\n\n");
        any = 1;
        fprintf(out, "- `%s`: **%s**", r->case_id, r->status);
        if (*r->reason) {
            fputs(": ", out);
            for (const char *p = r->reason; *p; p++) fputc(*p == '\n' ? ' ' : *p, out);
        }
        fputc('\n', out);
    }
    fputc('\n', out);
}

/* alone: the report is this section only (report --precision), which says when there is none. */
static void precision_section(FILE *out, const kb_report_run *run, int alone)
{
    kb_precision_group *g;
    int n = kb_report_precision_groups(run, &g);
    if (n <= 0) {
        free(g);
        if (alone)
            fprintf(out, "No precision comparison: no GEMM or attention shape of this run has two or more precisions "
                         "that ran (or a vendor row beside one).\n");
        return;
    }
    fprintf(out, "## Precision comparison\n\n%s\n\n", KB_PRECISION_NOTE);
    for (int k = 0; k < n; k++) {
        kb_sb dims;
        kb_sb_init(&dims);
        kb_report_precision_title(run, &g[k], &dims);
        fprintf(out, "### %s\n\n", dims.s);
        kb_sb_free(&dims);
        for (int c = 0; c < KB_PRECISION_COLS; c++)
            fprintf(out, "| %s ", kb_precision_cols[c]);
        fprintf(out, "|\n|---|---|---|---:|---:|---:|---:|---:|---:|---|---:|\n");
        for (int d = 0; d < KB_DT_COUNT; d++)
            for (int rc = 0; rc < KB_RECIPE_COUNT; rc++) {
                if (g[k].rows[d][rc] < 0)
                    continue;
                char cells[KB_PRECISION_COLS][256];
                kb_report_precision_cells(run, &g[k], d, rc, cells);
                fputc('|', out);
                for (int c = 0; c < KB_PRECISION_COLS; c++)
                    cell(out, cells[c]);
                fputc('\n', out);
            }
        fputc('\n', out);
    }
    free(g);
}

/* ---- the sections the HTML page has as charts, as tables ---- */

static void best_section(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const kb_report_best *b, int n)
{
    fprintf(out, "## %s\n\nEvery problem: the configurations measured, the fastest and its median, the next "
                 "fastest's median over it (within the noise when their 95%% intervals overlap).\n\n"
                 "| family | shape | dtype | pad | measured | fastest configuration | median_us (clock) | over the next |\n"
                 "|---|---|---|---:|---:|---|---:|---|\n", kb_report_section_titles[KB_SECTION_BEST]);
    for (int k = 0; k < n; k++) {
        const kb_report_row *f = &run->rows[b[k].first];
        kb_sb head, cfg;
        kb_sb_init(&head);
        kb_sb_init(&cfg);
        kb_report_problem_text(ax, f, 1, &head);
        char t[64] = "", measured[32], margin[64];
        if (b[k].best >= 0) {
            kb_report_config_text(ax, &run->rows[b[k].best], &cfg);
            kb_report_num(t, sizeof t, run->rows[b[k].best].median_us);
            snprintf(t + strlen(t), sizeof t - strlen(t), " (%s)", run->rows[b[k].best].clock);
        }
        snprintf(measured, sizeof measured, "%d of %d", b[k].n_timed, b[k].n_rows);
        kb_report_margin_text(run, &b[k], margin, sizeof margin);
        fputc('|', out);
        cell(out, f->family);
        cell(out, head.s);
        cell(out, f->dtype);
        fprintf(out, " %d |", f->pad);
        cell(out, measured);
        cell(out, cfg.s);
        cell(out, t);
        cell(out, margin);
        fputc('\n', out);
        kb_sb_free(&head);
        kb_sb_free(&cfg);
    }
    fputc('\n', out);
}

/* Per shape, every measured configuration: a table of dtype, pad, configuration, median
 * and its ratio to the fastest of its dtype and pad. */
static void tiles_section(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const kb_report_best *b,
                          int n)
{
    fprintf(out, "## %s\n\n| problem | configuration | median_us (clock) | x fastest |\n|---|---|---:|---:|\n",
            kb_report_section_titles[KB_SECTION_TILES]);
    for (int k = 0; k < n; k++) {
        if (b[k].best < 0)
            continue;
        const kb_report_row *best = &run->rows[b[k].best];
        for (size_t i = 0; i < run->n; i++) {
            const kb_report_row *r = &run->rows[i];
            if (!r->ok || !r->have_timing || !kb_report_same_problem(r, best))
                continue;
            kb_sb head, cfg;
            kb_sb_init(&head);
            kb_sb_init(&cfg);
            kb_report_problem_text(ax, r, 0, &head);
            kb_sb_printf(&head, " %s pad %d", r->dtype, r->pad);
            kb_report_config_text(ax, r, &cfg);
            char t[64], x[48];
            kb_report_num(t, sizeof t, r->median_us);
            snprintf(t + strlen(t), sizeof t - strlen(t), " (%s)", r->clock);
            kb_report_num(x, sizeof x, r->median_us / best->median_us);
            fputc('|', out);
            cell(out, head.s);
            cell(out, cfg.s);
            cell(out, t);
            cell(out, x);
            fputc('\n', out);
            kb_sb_free(&head);
            kb_sb_free(&cfg);
        }
    }
    fputc('\n', out);
}

/* The verified cases closest to their tolerance (largest max_err_ratio), at most 15. */
static void margins_section(FILE *out, const kb_report_run *run)
{
    fprintf(out, "## %s\n\nThe verified cases closest to their tolerance (max error / tolerance; above 1 fails):\n\n"
                 "| case | max error / tolerance |\n|---|---:|\n", kb_report_section_titles[KB_SECTION_MARGINS]);
    double last = INFINITY;
    for (int shown = 0; shown < 15; shown++) {
        int pick = -1;
        double pv = -1;
        for (size_t i = 0; i < run->n; i++) {
            json_t *v = json_object_get(json_object_get(run->rows[i].rec, "verify"), "max_err_ratio");
            double x = json_is_number(v) ? json_number_value(v) : -1;
            if (run->rows[i].verified && x < last && x > pv) { pv = x; pick = (int)i; }
        }
        if (pick < 0)
            break;
        char b[48];
        snprintf(b, sizeof b, "%.3g", pv);
        fputc('|', out);
        cell(out, run->rows[pick].case_id);
        cell(out, b);
        fputc('\n', out);
        last = pv;
    }
    fputc('\n', out);
}

static void launch_section(FILE *out, const kb_report_run *run, const kb_report_axes *ax)
{
    fprintf(out, "## %s\n\n", kb_report_section_titles[KB_SECTION_LAUNCH]);
    int any = 0;
    for (size_t g = 0; g < run->n; g++) {
        int e = kb_report_eager_twin(run, g);
        if (e < 0 || !run->rows[g].ok || !run->rows[e].ok || !run->rows[g].have_timing || !run->rows[e].have_timing)
            continue;
        if (!any++)
            fprintf(out, "| problem | configuration | eager median_us | graph median_us | eager / graph |\n"
                         "|---|---|---:|---:|---:|\n");
        const kb_report_row *re = &run->rows[e], *rg = &run->rows[g];
        kb_sb head, cfg;
        kb_sb_init(&head);
        kb_sb_init(&cfg);
        kb_report_problem_text(ax, re, 0, &head);
        kb_sb_printf(&head, " %s pad %d", re->dtype, re->pad);
        kb_report_config_text(ax, re, &cfg);
        char te[48], tg[48], x[48];
        kb_report_num(te, sizeof te, re->median_us);
        kb_report_num(tg, sizeof tg, rg->median_us);
        kb_report_num(x, sizeof x, re->median_us / rg->median_us);
        fputc('|', out);
        cell(out, head.s);
        cell(out, cfg.s);
        cell(out, te);
        cell(out, tg);
        cell(out, x);
        fputc('\n', out);
        kb_sb_free(&head);
        kb_sb_free(&cfg);
    }
    fputs(any ? "\n" : "No configuration was measured both eagerly and as a graph.\n\n", out);
}

static void summary_section(FILE *out, const kb_report_run *run)
{
    kb_sb sum;
    kb_sb_init(&sum);
    kb_report_summary(run, &sum);
    fprintf(out, "## %s\n\n- %s\n", kb_report_section_titles[KB_SECTION_SUMMARY], sum.s);
    kb_sb_free(&sum);
    for (int d = 0; d < run->n_devs; d++)
        if (run->devs[d].emulator && run->devs[d].n_rows) {
            fprintf(out, "\n> **%s**\n", KB_REPORT_EMU_NOTE);
            break;
        }
    fputc('\n', out);
}

static void cases_section(FILE *out, const kb_report_run *run)
{
    for (int d = 0; d < run->n_devs; d++)
        if (run->devs[d].n_rows)
            device_section(out, run, d);
    for (size_t i = 0; i < run->n; i++)
        if (run->rows[i].dev < 0) { device_section(out, run, -1); break; }
}

static void roofline_section(FILE *out, const kb_report_run *run)
{
    fprintf(out, "## %s\n\n", kb_report_section_titles[KB_SECTION_ROOFLINE]);
    for (int d = 0; d < run->n_devs; d++)
        if (!run->devs[d].emulator && run->devs[d].n_rows) {
            fprintf(out, "%s (sm_%d): ", run->devs[d].name, run->devs[d].sm);
            ceilings_line(out, run, d);
        }
}

kb_status kb_report_md(const kb_report_run *run, kb_report_section want, FILE *out)
{
    kb_report_axes ax;
    kb_report_best *b = NULL;
    int n = kb_report_axes_of(run, &ax) == KB_OK ? kb_report_best_of(run, &b) : -1;
    if (n >= 0) {
        int all = want == KB_SECTION_ALL;
        fprintf(out, "# kbench report: %s\n\n", *run->run_id ? run->run_id : "(no run id)");
        fprintf(out, "- source: `%s`\n- recorded: %s\n\n", run->source, *run->time ? run->time : "?");
        if (all || want == KB_SECTION_SUMMARY) summary_section(out, run);
        if (all || want == KB_SECTION_BEST) best_section(out, run, &ax, b, n);
        if (all || want == KB_SECTION_PRECISION) precision_section(out, run, !all);
        if (all || want == KB_SECTION_TILES) tiles_section(out, run, &ax, b, n);
        if (all || want == KB_SECTION_LAUNCH) launch_section(out, run, &ax);
        if (all || want == KB_SECTION_MARGINS) margins_section(out, run);
        if (all || want == KB_SECTION_ROOFLINE) roofline_section(out, run);
        if (all || want == KB_SECTION_CASES) cases_section(out, run);
    }
    free(b);
    kb_report_axes_free(&ax);
    return n < 0 ? KB_ERR_OOM : ferror(out) ? KB_ERR_IO : KB_OK;
}
