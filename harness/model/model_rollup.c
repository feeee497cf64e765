/* model_rollup.c - a model description rolled up from a recorded run (see model_rollup.h). */
#include "model/model_rollup.h"
#include "engine/family.h"
#include "kernels/families.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The op's dims in phase ph equal the record's dims (same names, same values). */
static int dims_match(const kb_model_op *op, int ph, json_t *rec)
{
    json_t *dims = json_object_get(rec, "dims");
    if (!json_is_object(dims) || (int)json_object_size(dims) != op->n_dims) return 0;
    for (int d = 0; d < op->n_dims; d++) {
        json_t *v = json_object_get(dims, op->dim_names[d]);
        if (!json_is_integer(v) || json_integer_value(v) != op->dims[ph][d]) return 0;
    }
    return 1;
}

/* Every param constraint of op holds for the record in phase ph: a choice by name, an integer
 * param at the value its expression has in ph. */
static int params_match(const kb_model_op *op, int ph, json_t *rec)
{
    json_t *params = json_object_get(rec, "params");
    for (int c = 0; c < op->n_constraints; c++) {
        const kb_model_constraint *k = &op->constraints[c];
        json_t *v = json_object_get(params, k->name);
        if (k->is_int ? !json_is_integer(v) || json_integer_value(v) != k->ival[ph]
                      : !json_is_string(v) || strcmp(json_string_value(v), k->value) != 0)
            return 0;
    }
    return 1;
}

/* 1 when variant of family computes the family's own operation (engine/family.h,
 * other_op_variants): attention's decode does not (its s is the KV length), so an op naming no
 * variant never takes a decode row. A family or variant this build does not know counts as the
 * family's own. */
static int family_op_variant(const char *family, const char *variant)
{
    int f = kb_family_find(family);
    int v = f < 0 ? -1 : kb_family_variant_find(kb_families[f], variant);
    return v < 0 || v >= 32 || !(kb_families[f]->other_op_variants & (1u << v));
}

/* The row has op's shape in phase ph on device dev (family, pad, dims, params), whatever its
 * variant, dtype and status. */
static int same_shape(const kb_model_op *op, int ph, const kb_report_row *r, int dev)
{
    json_t *pad = json_object_get(r->rec, "pad");
    return r->dev == dev && !strcmp(r->family, op->family) && json_integer_value(pad) == op->pad &&
           dims_match(op, ph, r->rec) && params_match(op, ph, r->rec);
}

/* The row's variant is one op takes: the variant it names (or, when that variant computes
 * another operation than its family's, any variant of the family computing that one, as the
 * reports rank them: attention's decode and decode_tma), else any of the family's own operation. */
static int variant_fits(const kb_model_op *op, const kb_report_row *r)
{
    if (!op->variant)
        return family_op_variant(r->family, r->variant);
    return !strcmp(r->variant, op->variant) || (!strcmp(r->family, op->family) &&
                                                !family_op_variant(op->family, op->variant) &&
                                                !family_op_variant(r->family, r->variant));
}

/* The row stands for op in phase ph, whatever its dtype and status. */
static int same_op(const kb_model_op *op, int ph, const kb_report_row *r, int dev)
{
    return same_shape(op, ph, r, dev) && variant_fits(op, r);
}

static int usable(const kb_report_row *r)
{
    return r->ok && r->have_timing && r->median_us > 0;
}

/* The fastest ok row for op in phase ph and dtype dt, -1 when none. */
static int best_row(const kb_report_run *run, const kb_model_op *op, int ph, int dt, int dev)
{
    int best = -1;
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        kb_dtype rd;
        if (op->case_id) {
            if (!strcmp(r->case_id, op->case_id) && usable(r)) return (int)i;
            continue;
        }
        if (!usable(r) || kb_dtype_parse(r->dtype, &rd) != 0 || (int)rd != dt || !same_op(op, ph, r, dev)) continue;
        if (best < 0 || r->median_us < run->rows[best].median_us) best = (int)i;
    }
    return best;
}

/* The row for op in phase ph and dtype dt: the measured run's where it is used, else the
 * estimates'; *est says which. -1 when neither has one. */
static int find_row(const kb_model_rollup *R, const kb_model_op *op, int ph, int dt, int *est)
{
    int i = R->use_run && R->run ? best_row(R->run, op, ph, dt, R->dev) : -1;
    *est = 0;
    if (i < 0 && R->est) {
        i = best_row(R->est, op, ph, dt, R->est_dev);
        *est = i >= 0;
    }
    return i;
}

static const kb_report_row *row_at(const kb_model_rollup *R, int est, int i)
{
    return &(est ? R->est : R->run)->rows[i];
}

const kb_report_row *kb_model_op_row(const kb_model_rollup *r, const kb_model_opres *o)
{
    return o->row < 0 ? NULL : row_at(r, o->estimated, o->row);
}

/* Why op has no case: its shape is absent, or present but never ok in dtype dt (in the
 * estimates when the roll-up has them: the suite has no case of it). */
static void missing_reason(const kb_model_rollup *R, const kb_model_op *op, int ph, int dt, char *why, size_t n)
{
    const kb_report_run *run = R->est ? R->est : R->run;
    int dev = R->est ? R->est_dev : R->dev;
    const char *where = R->est ? "among the suite's estimates (no suite case of that shape: never extrapolated)"
                               : "in the run";
    int shape = 0, check = 0;
    for (size_t i = 0; i < run->n; i++) {
        shape += same_op(op, ph, &run->rows[i], dev);
        check |= json_is_true(json_object_get(run->rows[i].rec, "check_shape"));
    }
    kb_sb dims;
    kb_sb_init(&dims);
    for (int d = 0; d < op->n_dims; d++)
        kb_sb_printf(&dims, "%s%s=%lld", d ? " " : "", op->dim_names[d], (long long)op->dims[ph][d]);
    if (op->case_id)
        snprintf(why, n, "the named case %s is not an ok case of the run", op->case_id);
    else if (shape)
        snprintf(why, n, "%d case%s of %s %s, none ok in %s", shape, shape == 1 ? "" : "s", op->family, dims.s,
                 kb_dtype_name((kb_dtype)dt));
    else
        snprintf(why, n, "no %s case of %s%s %s%s", op->family, dims.s, op->pad ? " (that pad)" : "", where,
                 check && !R->est ? " (it ran check shapes: run the suite with --full-shapes, or the model with --set "
                                    "at the run's sizes)" : "");
    kb_sb_free(&dims);
}

static double multiplier(const kb_model *m, const kb_model_op *op, int ph)
{
    return (double)op->count[ph] * (op->per_model ? 1.0 : (double)m->layers);
}

/* The ranking row i of op in phase ph won, in its source: the ok rows of the op's shape in the
 * row's dtype that competed (the variants op takes, and the vendor rows when it names none),
 * kbench's fastest of them and the fastest vendor row of the same operation, the baseline shown
 * beside it (a vendor row is a baseline even when the op names a variant of the same operation). */
static void rank(const kb_model_rollup *R, const kb_model_op *op, int ph, int i, int est, kb_model_opres *o)
{
    const kb_report_run *run = est ? R->est : R->run;
    const kb_report_row *won = &run->rows[i];
    int dev = est ? R->est_dev : R->dev;
    int own = op->variant ? family_op_variant(op->family, op->variant) : 1;
    o->n_ranked = 0;
    o->kbench_row = o->vendor_row = -1;
    for (size_t j = 0; j < run->n; j++) {
        const kb_report_row *r = &run->rows[j];
        if (!usable(r) || strcmp(r->dtype, won->dtype) != 0 || !same_shape(op, ph, r, dev)) continue;
        int vendor = kb_report_row_is_vendor(r);
        if (vendor ? !own || !family_op_variant(r->family, r->variant) : !variant_fits(op, r)) continue;
        o->n_ranked += !vendor || !op->variant;
        int *best = vendor ? &o->vendor_row : &o->kbench_row;
        if (*best < 0 || r->median_us < run->rows[*best].median_us) *best = (int)j;
    }
}

const kb_report_row *kb_model_rank_row(const kb_model_rollup *r, const kb_model_opres *o, int vendor)
{
    int i = o->row < 0 ? -1 : vendor ? o->vendor_row : o->kbench_row;
    return i < 0 ? NULL : row_at(r, o->estimated, i);
}

const char *kb_model_vendor_names(const char *family, char *buf, size_t n)
{
    int f = kb_family_find(family);
    size_t at = 0;
    buf[0] = 0;
    for (int v = 0; f >= 0 && v < kb_families[f]->n_variants && at < n; v++)
        if (kb_families[f]->variants[v].entry == NULL)
            at += (size_t)snprintf(buf + at, n - at, "%s%s", at ? "/" : "", kb_families[f]->variants[v].name);
    return buf;
}

/* The figures of op in phase ph from row i. */
static void fill_op(const kb_model_rollup *R, const kb_model_op *op, int ph, int i, int est, kb_model_opres *o)
{
    const kb_report_row *r = row_at(R, est, i);
    json_t *work = json_object_get(r->rec, "work");
    o->row = i;
    o->estimated = est;
    o->named = op->case_id != NULL;
    o->time_us = r->median_us;
    o->step_us = r->median_us * multiplier(R->m, op, ph);
    o->flops = json_number_value(json_object_get(work, "flops"));
    o->bytes = json_number_value(json_object_get(work, "bytes_read")) +
               json_number_value(json_object_get(work, "bytes_written"));
    o->have_roof = r->d.have_roof;
    o->pct_roof = r->d.pct_roof;
    o->have_measured = r->d.have_measured;
    o->pct_measured = r->d.pct_measured;
    o->have_path = r->d.have_path;
    o->pct_path = r->d.pct_path;
    double pct = o->have_measured ? o->pct_measured : o->have_roof ? o->pct_roof : 0;
    double dist = o->have_measured || o->have_roof ? 1.0 - fmin(fmax(pct, 0), 100) / 100.0 : 1.0;
    o->score = o->step_us * dist;
    o->faster_than_roof = !R->emulator && o->have_roof && o->pct_roof > 100.0;
    rank(R, op, ph, i, est, o);
}

/* The worst err/tol of a row (verify.max_err_ratio), into *worst; whether it had one. */
static int err_tol(const kb_report_row *row, double *worst)
{
    json_t *x = json_object_get(json_object_get(row->rec, "verify"), "max_err_ratio");
    if (!json_is_number(x))
        return 0;
    *worst = fmax(*worst, json_number_value(x));
    return 1;
}

/* The largest errors of the ops a what-if found in its dtype. */
typedef struct {
    double rel;                /* max_rel_err */
    double tol;                /* max_err_ratio (err/tol) */
    int have_tol;
} worst_err;

/* One phase at dtype dt (ops without a case in dt fall back to the model's dtype when
 * fallback is set). Returns the number of ops found in dt itself; *vendor those of them
 * that are vendor rows, *worst their largest errors. */
static int roll_phase(const kb_model_rollup *R, int ph, int dt, int fallback, kb_model_phase_res *P, int *vendor,
                      worst_err *worst)
{
    const kb_model *m = R->m;
    int at = 0;
    memset(P, 0, sizeof *P);
    P->tokens = (double)m->pvars[ph][KB_PV_TOKENS];
    P->focus = -1;
    for (int k = 0; k < m->n_ops; k++) {
        const kb_model_op *op = &m->ops[k];
        kb_model_opres *o = &P->ops[k];
        o->row = -1;
        if (!(op->phases & (1u << ph))) continue;
        o->modelled = 1;
        P->n_modelled++;
        int want = op->dtype >= 0 ? op->dtype : dt, est;
        int i = find_row(R, op, ph, want, &est);
        if (i >= 0 && want == dt && op->dtype < 0) {
            at++;
            *vendor += kb_report_row_is_vendor(row_at(R, est, i));
            if (row_at(R, est, i)->have_err) worst->rel = fmax(worst->rel, row_at(R, est, i)->max_rel_err);
            worst->have_tol |= err_tol(row_at(R, est, i), &worst->tol);
        }
        if (i < 0 && fallback && op->dtype < 0 && dt != m->dtype) i = find_row(R, op, ph, m->dtype, &est);
        if (i < 0) {
            missing_reason(R, op, ph, want, o->why, sizeof o->why);
            P->n_missing++;
            continue;
        }
        fill_op(R, op, ph, i, est, o);
        double mult = multiplier(m, op, ph);
        if (!op->per_model) P->layer_us += o->time_us * (double)op->count[ph];
        P->step_us += o->step_us;
        P->flops += o->flops * mult;
        P->bytes += o->bytes * mult;
        if (op->weights > 0) P->mm_flops += o->flops * mult;   /* a weight matmul, as executed */
        P->n_faster_than_roof += o->faster_than_roof;
        if (P->focus < 0 || o->score > P->ops[P->focus].score) P->focus = k;
    }
    return at;
}

/* Shares, per-token figures, MFU and bandwidth of a rolled phase. */
static void phase_figures(const kb_model_rollup *R, int ph, kb_model_phase_res *P)
{
    for (int k = 0; k < R->m->n_ops; k++) {
        kb_model_opres *o = &P->ops[k];
        if (o->row < 0) continue;
        double whole = R->m->ops[k].per_model ? P->step_us : P->layer_us;
        o->share = whole > 0 ? 100.0 * (R->m->ops[k].per_model ? o->step_us
                                                                 : o->time_us * (double)R->m->ops[k].count[ph]) / whole
                             : 0;
    }
    P->bounds_only = P->n_missing > 0;
    if (P->step_us <= 0) return;
    P->us_per_token = P->step_us / P->tokens;
    if (P->bounds_only) return;   /* a rate from part of the step says nothing of the whole */
    P->have_rates = 1;
    P->tokens_per_s = P->tokens / (P->step_us * 1e-6);
    P->gbps = P->bytes / (P->step_us * 1e-6) / 1e9;
    if (R->emulator) return;
    if (R->peak_tflops > 0 && P->mm_flops > 0) {
        P->have_mfu = 1;
        P->mfu = 100.0 * P->mm_flops / (R->peak_tflops * 1e12 * P->step_us * 1e-6);
    }
    if (R->peak_gbps > 0) {
        P->have_bw = 1;
        P->bw_util = 100.0 * P->gbps / R->peak_gbps;
    }
}

/* The run's device: that of the first record with one (-1: none), and whether it is the
 * emulator (or its rows carry CPU times). */
static void pick_device(kb_model_rollup *R)
{
    const kb_report_run *run = R->run;
    R->dev = -1;
    for (size_t i = 0; i < run->n && R->dev < 0; i++) R->dev = run->rows[i].dev;
    R->emulator = R->dev >= 0 && run->devs[R->dev].emulator;
    for (size_t i = 0; i < run->n; i++)
        if (run->rows[i].dev == R->dev && !strcmp(run->rows[i].clock, "cpu")) R->emulator = 1;
}

static void whatif(kb_model_rollup *R)
{
    R->n_whatif = 0;
    for (int dt = 0; dt < KB_DT_COUNT; dt++) {
        kb_model_whatif *w = &R->whatif[R->n_whatif];
        kb_model_phase_res *P = malloc(sizeof *P);
        if (!P) return;
        memset(w, 0, sizeof *w);
        w->dtype = dt;
        worst_err worst = { 0, 0, 0 };
        for (int ph = 0; ph < KB_PHASE_COUNT; ph++) {
            int vendor = 0, at = roll_phase(R, ph, dt, 1, P, &vendor, &worst);
            w->n_at = at > w->n_at ? at : w->n_at;
            w->n_vendor = vendor > w->n_vendor ? vendor : w->n_vendor;
            w->step_us[ph] = P->step_us;
            w->n_missing[ph] = P->n_missing;
        }
        free(P);
        w->worst_rel_err = worst.rel;
        w->worst_err_tol = worst.tol;
        w->have_err_tol = worst.have_tol;
        if (w->n_at > 0) R->n_whatif++;
    }
}

static void roll_all(kb_model_rollup *out);

void kb_model_rollup_run(const kb_model *m, const kb_report_run *run, int dtype, kb_model_rollup *out)
{
    memset(out, 0, sizeof *out);
    out->m = m;
    out->run = run;
    out->use_run = 1;
    out->est_dev = -1;
    out->dtype = dtype >= 0 ? dtype : m->dtype;
    pick_device(out);
    if (out->dev >= 0 && !out->emulator) {
        double tflops[KB_DT_COUNT];
        const char *src;
        kb_report_ceilings(run, out->dev, tflops, &out->peak_gbps, &src);
        out->peak_tflops = tflops[out->dtype];
    }
    roll_all(out);
}

void kb_model_rollup_est(const kb_model *m, const kb_report_run *run, int use_run, const char *run_note,
                         const kb_report_run *est, const kb_peaks *peaks, int dtype, kb_model_rollup *out)
{
    memset(out, 0, sizeof *out);
    out->m = m;
    out->run = run;
    out->est = est;
    out->est_dev = est && est->n_devs > 0 ? 0 : -1;
    out->dtype = dtype >= 0 ? dtype : m->dtype;
    out->dev = -1;
    if (run) {
        pick_device(out);
        out->use_run = use_run && !out->emulator;   /* CPU timings never stand beside estimates */
    }
    snprintf(out->run_note, sizeof out->run_note, "%s",
             !run ? "" : out->emulator ? "the run's records are CPU timings (emulator): not used beside estimates"
                       : run_note ? run_note : "");
    out->emulator = 0;
    out->peak_tflops = kb_peaks_tflops(peaks, (kb_dtype)out->dtype, NULL);
    out->peak_gbps = kb_peaks_gbps(peaks, NULL);
    roll_all(out);
}

/* N, both phases and the precision what-if of a roll-up whose sources are set. */
static void roll_all(kb_model_rollup *out)
{
    const kb_model *m = out->m;
    for (int k = 0; k < m->n_ops; k++)
        out->n_params += (double)m->ops[k].weights * (m->ops[k].per_model ? 1.0 : (double)m->layers);
    for (int ph = 0; ph < KB_PHASE_COUNT; ph++) {
        int vendor = 0;
        worst_err worst = { 0, 0, 0 };
        roll_phase(out, ph, out->dtype, 0, &out->ph[ph], &vendor, &worst);
        phase_figures(out, ph, &out->ph[ph]);
    }
    whatif(out);
}

const char *kb_model_timing_label(const kb_model_rollup *r)
{
    if (!r->est)
        return r->emulator ? "emulator (CPU timing)" : "GPU";
    for (int ph = 0; ph < KB_PHASE_COUNT; ph++)
        for (int k = 0; k < r->m->n_ops; k++)
            if (r->ph[ph].ops[k].row >= 0 && !r->ph[ph].ops[k].estimated)
                return "GPU-measured + ESTIMATE";
    return "ESTIMATE (static model, not measured)";
}
