/* report_csv.c - one CSV row per case with a header, RFC 4180: CRLF line ends, fields
 * holding a comma, quote or line break quoted, quotes doubled. Numbers at full
 * precision (this is the format for further analysis); empty where absent. */
#include "results/report_csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const columns[] = {
    "run_id", "device", "case", "family", "variant", "dtype", "launch", "status", "verified",
    "max_abs_err", "max_rel_err", "median_us", "clock", "tflops", "gbps", "ai", "roof_tflops",
    "pct_roof", "bound", "samples", "cv", "reason", "pct_measured", "measured_roof_tflops", "path", "pct_path",
    "path_tflops", "path_source", "recipe", "dist", "acc_rel_fro", "acc_snr_db", "acc_max_rel",
};
#define N_COLUMNS (sizeof columns / sizeof columns[0])

void kb_csv_field(FILE *out, const char *s)
{
    if (!s)
        return;
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"') fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

static void field(FILE *out, int first, const char *s)
{
    if (!first)
        fputc(',', out);
    kb_csv_field(out, s);
}

static void num(FILE *out, int have, double v)
{
    char b[40] = "";
    if (have) snprintf(b, sizeof b, "%.9g", v);
    field(out, 0, b);
}

/* The scaling recipe, input distribution and accuracy (against the unquantised inputs). */
static void accuracy_fields(FILE *out, const kb_report_row *r)
{
    field(out, 0, kb_recipe_name((kb_recipe)r->recipe));
    field(out, 0, r->dist);
    num(out, r->have_acc && isfinite(r->acc_rel_fro), r->acc_rel_fro);
    num(out, r->have_acc && isfinite(r->acc_snr_db), r->acc_snr_db);
    num(out, r->have_acc && isfinite(r->acc_max_rel), r->acc_max_rel);
}

kb_status kb_report_csv(const kb_report_run *run, FILE *out)
{
    for (size_t c = 0; c < N_COLUMNS; c++)
        field(out, c == 0, columns[c]);
    fputs("\r\n", out);
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        int emu = r->dev >= 0 && run->devs[r->dev].emulator;
        char b[40];
        field(out, 1, json_string_value(json_object_get(r->rec, "run_id")) ? json_string_value(json_object_get(r->rec, "run_id")) : "");
        field(out, 0, r->dev >= 0 ? run->devs[r->dev].name : "");
        field(out, 0, r->case_id);
        field(out, 0, r->family);
        field(out, 0, r->variant);
        field(out, 0, r->dtype);
        field(out, 0, r->launch);
        field(out, 0, r->status);
        field(out, 0, !r->verified ? "" : r->n_bad > 0 ? "no" : "yes");
        num(out, r->verified && r->have_err, r->max_abs_err);
        num(out, r->verified && r->have_err, r->max_rel_err);
        num(out, r->have_timing, r->median_us);
        field(out, 0, r->clock);
        num(out, r->d.have_rates, r->d.tflops);
        num(out, r->d.have_rates, r->d.gbps);
        num(out, r->d.have_rates, r->d.ai);
        num(out, r->d.have_roof && !emu, r->d.roof_tflops);
        num(out, r->d.have_roof && !emu, r->d.pct_roof);
        const char *bound = kb_bound_name(r->d.bound);
        field(out, 0, bound && !emu ? bound : "");
        snprintf(b, sizeof b, "%d", r->samples);
        field(out, 0, r->have_timing ? b : "");
        num(out, r->have_timing, r->cv);
        field(out, 0, r->reason);
        num(out, r->d.have_measured && !emu, r->d.pct_measured);
        num(out, r->d.have_measured && !emu, r->d.measured_roof_tflops);
        field(out, 0, r->d.path);
        num(out, r->d.have_path && !emu, r->d.pct_path);
        num(out, r->d.have_path && !emu, r->d.path_tflops);
        field(out, 0, r->d.have_path && !emu ? r->d.path_source : "");
        accuracy_fields(out, r);
        fputs("\r\n", out);
    }
    return ferror(out) ? KB_ERR_IO : KB_OK;
}

kb_status kb_report_csv_precision(const kb_report_run *run, FILE *out)
{
    static const char *const head[] = { "family", "dims", "dist", "device" };
    kb_precision_group *g;
    int n = kb_report_precision_groups(run, &g);
    if (n < 0)
        return KB_ERR_OOM;
    for (size_t c = 0; c < 4; c++)
        field(out, c == 0, head[c]);
    for (int c = 0; c < KB_PRECISION_COLS; c++)
        field(out, 0, kb_precision_cols[c]);
    fputs("\r\n", out);
    for (int k = 0; k < n; k++) {
        const kb_report_row *f = &run->rows[g[k].first];
        kb_sb dims;
        kb_sb_init(&dims);
        kb_report_dims_text(f, &dims);
        for (int d = 0; d < KB_DT_COUNT; d++)
            for (int rc = 0; rc < KB_RECIPE_COUNT; rc++) {
                if (g[k].rows[d][rc] < 0)
                    continue;
                char cells[KB_PRECISION_COLS][256];
                kb_report_precision_cells(run, &g[k], d, rc, cells);
                field(out, 1, f->family);
                field(out, 0, dims.s);
                field(out, 0, f->dist);
                field(out, 0, f->dev >= 0 ? run->devs[f->dev].name : "");
                for (int c = 0; c < KB_PRECISION_COLS; c++)
                    field(out, 0, cells[c]);
                fputs("\r\n", out);
            }
        kb_sb_free(&dims);
    }
    free(g);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}
