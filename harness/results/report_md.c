/* report_md.c - the markdown report: one table per device, the reasons of cases that
 * failed or were skipped, and the precision comparison of GEMM/attention shapes. */
#include "results/report_md.h"

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
    if (emu)
        fprintf(out, "> **%s**\n\n", KB_REPORT_EMU_NOTE);
    else
        ceilings_line(out, run, dev);
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

static void precision_section(FILE *out, const kb_report_run *run)
{
    kb_precision_group *g;
    int n = kb_report_precision_groups(run, &g);
    if (n <= 0)
        return;
    fprintf(out, "## Precision comparison\n\n%s\n\n", KB_PRECISION_NOTE);
    for (int k = 0; k < n; k++) {
        kb_sb title;
        kb_sb_init(&title);
        kb_report_precision_title(run, &g[k], &title);
        fprintf(out, "### %s\n\n", title.s);
        kb_sb_free(&title);
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

kb_status kb_report_md_precision(const kb_report_run *run, FILE *out)
{
    kb_precision_group *g;
    int n = kb_report_precision_groups(run, &g);
    free(g);
    fprintf(out, "# kbench precision table: %s\n\n- source: `%s`\n\n", *run->run_id ? run->run_id : "(no run id)",
            run->source);
    for (int d = 0; d < run->n_devs; d++)
        if (run->devs[d].emulator) {
            fprintf(out, "> **%s**\n\n", KB_REPORT_EMU_NOTE);
            break;
        }
    if (n <= 0)
        fprintf(out, "No precision comparison: no GEMM or attention shape of this run has two or more precisions "
                     "that ran (or a vendor row beside one).\n");
    else
        precision_section(out, run);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}

kb_status kb_report_md(const kb_report_run *run, FILE *out)
{
    kb_sb sum;
    kb_sb_init(&sum);
    kb_report_summary(run, &sum);
    fprintf(out, "# kbench report: %s\n\n", *run->run_id ? run->run_id : "(no run id)");
    fprintf(out, "- source: `%s`\n- recorded: %s\n- %s\n\n", run->source, *run->time ? run->time : "?", sum.s);
    kb_sb_free(&sum);
    for (int d = 0; d < run->n_devs; d++)
        device_section(out, run, d);
    for (size_t i = 0; i < run->n; i++)
        if (run->rows[i].dev < 0) { device_section(out, run, -1); break; }
    precision_section(out, run);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}
