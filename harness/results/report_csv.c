/* report_csv.c - one CSV row per case with a header, RFC 4180: CRLF line ends, fields
 * holding a comma, quote or line break quoted, quotes doubled. Numbers at full
 * precision (this is the format for further analysis); empty where absent. The axes are
 * columns of their own - shape, dims, a column per dim and per param - so that pandas and
 * CUTLASS-profiler-style tools filter on them without parsing case ids. */
#include "results/report_csv.h"
#include "results/report_precision.h"

#include "results/report_best.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const head[] = {
    "run_id", "device", "case", "family", "variant", "dtype", "shape", "dims",
};
static const char *const tail[] = {
    "pad", "launch", "status", "verified",
    "max_abs_err", "max_rel_err", "median_us", "clock", "tflops", "gbps", "ai", "roof_tflops",
    "pct_roof", "bound", "samples", "cv", "reason", "pct_measured", "measured_roof_tflops", "path", "pct_path",
    "path_tflops", "path_source", "acc_rel_fro", "acc_snr_db", "acc_max_rel",
};
#define N_HEAD (sizeof head / sizeof head[0])
#define N_TAIL (sizeof tail / sizeof tail[0])

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

/* The accuracy against the unquantised inputs (the recipe and distribution are the params
 * scale and dist, columns of their own). */
static void accuracy_fields(FILE *out, const kb_report_row *r)
{
    num(out, r->have_acc && isfinite(r->acc_rel_fro), r->acc_rel_fro);
    num(out, r->have_acc && isfinite(r->acc_snr_db), r->acc_snr_db);
    num(out, r->have_acc && isfinite(r->acc_max_rel), r->acc_max_rel);
}

/* ---- the axis columns: every dim and param name of the run, in order of appearance ---- */

typedef struct {
    char name[40];                /* the record's key */
    char column[48];              /* its column: the name, "param_<name>" when taken */
    int is_param;
} axis_col;

typedef struct {
    axis_col *v;
    int n;
} axis_cols;

static int taken(const axis_cols *a, const char *column)
{
    for (size_t i = 0; i < N_HEAD; i++) if (!strcmp(head[i], column)) return 1;
    for (size_t i = 0; i < N_TAIL; i++) if (!strcmp(tail[i], column)) return 1;
    for (int i = 0; i < a->n; i++) if (!strcmp(a->v[i].column, column)) return 1;
    return 0;
}

static kb_status add_keys(axis_cols *a, json_t *obj, int is_param)
{
    const char *k;
    json_t *v;
    json_object_foreach(obj, k, v) {
        int i = 0;
        while (i < a->n && (a->v[i].is_param != is_param || strcmp(a->v[i].name, k))) i++;
        if (i < a->n)
            continue;
        axis_col *g = realloc(a->v, (size_t)(a->n + 1) * sizeof *g);
        if (!g)
            return KB_ERR_OOM;
        a->v = g;
        axis_col *c = &g[a->n];
        snprintf(c->name, sizeof c->name, "%s", k);
        snprintf(c->column, sizeof c->column, "%s%s", is_param ? "param_" : "", k);
        if (is_param && !taken(a, k))   /* the plain name where it is free */
            snprintf(c->column, sizeof c->column, "%s", k);
        c->is_param = is_param;
        a->n++;
    }
    return KB_OK;
}

/* Dims first (as a family declares them), then params. */
static kb_status axis_cols_of(const kb_report_run *run, axis_cols *a)
{
    memset(a, 0, sizeof *a);
    for (size_t i = 0; i < run->n; i++)
        if (add_keys(a, json_object_get(run->rows[i].rec, "dims"), 0) != KB_OK)
            return KB_ERR_OOM;
    for (size_t i = 0; i < run->n; i++)
        if (add_keys(a, json_object_get(run->rows[i].rec, "params"), 1) != KB_OK)
            return KB_ERR_OOM;
    return KB_OK;
}

static void json_field(FILE *out, json_t *v)
{
    char b[64] = "";
    if (json_is_string(v))
        field(out, 0, json_string_value(v));
    else {
        if (json_is_integer(v)) snprintf(b, sizeof b, "%lld", (long long)json_integer_value(v));
        else if (json_is_number(v)) snprintf(b, sizeof b, "%.9g", json_number_value(v));
        field(out, 0, b);
    }
}

static void case_row(FILE *out, const kb_report_run *run, const kb_report_row *r, const axis_cols *a)
{
    int emu = r->dev >= 0 && run->devs[r->dev].emulator;
    char b[40];
    kb_sb dims;
    kb_sb_init(&dims);
    kb_report_dims_text(r, &dims);
    field(out, 1, json_string_value(json_object_get(r->rec, "run_id")));
    field(out, 0, r->dev >= 0 ? run->devs[r->dev].name : "");
    field(out, 0, r->case_id);
    field(out, 0, r->family);
    field(out, 0, r->variant);
    field(out, 0, r->dtype);
    field(out, 0, r->shape);
    field(out, 0, dims.s);
    kb_sb_free(&dims);
    for (int i = 0; i < a->n; i++)
        json_field(out, json_object_get(json_object_get(r->rec, a->v[i].is_param ? "params" : "dims"), a->v[i].name));
    snprintf(b, sizeof b, "%d", r->pad);
    field(out, 0, b);
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

static kb_status cases_csv(const kb_report_run *run, FILE *out)
{
    axis_cols a;
    if (axis_cols_of(run, &a) != KB_OK) {
        free(a.v);
        return KB_ERR_OOM;
    }
    for (size_t c = 0; c < N_HEAD; c++)
        field(out, c == 0, head[c]);
    for (int i = 0; i < a.n; i++)
        field(out, 0, a.v[i].column);
    for (size_t c = 0; c < N_TAIL; c++)
        field(out, 0, tail[c]);
    fputs("\r\n", out);
    for (size_t i = 0; i < run->n; i++)
        case_row(out, run, &run->rows[i], &a);
    free(a.v);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}

static kb_status precision_csv(const kb_report_run *run, FILE *out)
{
    static const char *const group_cols[] = { "family", "dims", "dist", "device" };
    kb_precision_group *g;
    int n = kb_report_precision_groups(run, &g);
    if (n < 0)
        return KB_ERR_OOM;
    for (size_t c = 0; c < 4; c++)
        field(out, c == 0, group_cols[c]);
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

/* ---- the fastest configuration of each problem (report_best.h) ---- */

static void best_row(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const kb_report_best *b)
{
    const kb_report_row *f = &run->rows[b->first];
    kb_sb t;
    kb_sb_init(&t);
    char n[32];
    field(out, 1, f->dev >= 0 ? run->devs[f->dev].name : "");
    field(out, 0, f->family);
    kb_report_problem_text(ax, f, 0, &t);
    field(out, 0, t.s);
    kb_sb_clear(&t);
    kb_report_dims_text(f, &t);
    field(out, 0, t.s);
    field(out, 0, f->dtype);
    snprintf(n, sizeof n, "%d", f->pad);
    field(out, 0, n);
    snprintf(n, sizeof n, "%d", b->n_timed);
    field(out, 0, n);
    snprintf(n, sizeof n, "%d", b->n_rows);
    field(out, 0, n);
    const kb_report_row *best = b->best >= 0 ? &run->rows[b->best] : NULL, *next = b->next >= 0 ? &run->rows[b->next] : NULL;
    field(out, 0, best ? best->case_id : "");
    kb_sb_clear(&t);
    if (best) kb_report_config_text(ax, best, &t);
    field(out, 0, t.s);
    num(out, best != NULL, best ? best->median_us : 0);
    field(out, 0, best ? best->clock : "");
    field(out, 0, next ? next->case_id : "");
    num(out, next != NULL, next ? next->median_us : 0);
    num(out, next != NULL, next && best ? next->median_us / best->median_us : 0);
    field(out, 0, next ? (b->within_noise ? "yes" : "no") : "");
    fputs("\r\n", out);
    kb_sb_free(&t);
}

static kb_status best_csv(const kb_report_run *run, FILE *out)
{
    static const char *const cols[] = {
        "device", "family", "shape", "dims", "dtype", "pad", "measured", "cases", "fastest_case", "fastest_config",
        "median_us", "clock", "next_case", "next_median_us", "next_over_fastest", "within_noise",
    };
    kb_report_axes ax;
    kb_report_best *b = NULL;
    int n = kb_report_axes_of(run, &ax) == KB_OK ? kb_report_best_of(run, &b) : -1;
    for (size_t c = 0; n >= 0 && c < sizeof cols / sizeof cols[0]; c++)
        field(out, c == 0, cols[c]);
    if (n >= 0)
        fputs("\r\n", out);
    for (int k = 0; k < n; k++)
        best_row(out, run, &ax, &b[k]);
    free(b);
    kb_report_axes_free(&ax);
    return n < 0 ? KB_ERR_OOM : ferror(out) ? KB_ERR_IO : KB_OK;
}

kb_status kb_report_csv(const kb_report_run *run, kb_report_section s, FILE *out)
{
    if (s == KB_SECTION_SUMMARY || s == KB_SECTION_BEST)
        return best_csv(run, out);
    if (s == KB_SECTION_PRECISION)
        return precision_csv(run, out);
    return cases_csv(run, out);
}
