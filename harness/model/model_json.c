/* model_json.c - a model roll-up as one JSON object (model_json.h). */
#include "model/model_json.h"

#include "engine/derive.h"
#include "model/model_cells.h"

#include <math.h>

/* A number, or null when it does not apply or is not finite. */
static json_t *num(int have, double v)
{
    return have && isfinite(v) ? json_real(v) : json_null();
}

/* {case_id, variant, time_us} of a ranking's row, null when none. */
static json_t *rank_json(const kb_report_row *row)
{
    return row ? json_pack("{s:s, s:s, s:f}", "case_id", row->case_id, "variant", row->variant, "time_us",
                           row->median_us)
               : json_null();
}

/* The ranking op result o won: how many rows competed, kbench's best, the vendor baseline and
 * the baseline as the tables show it (null for a missing op or a family with no vendor variant). */
static void rank_fields(const kb_model_rollup *r, int ph, int k, json_t *o)
{
    const kb_model_opres *res = &r->ph[ph].ops[k];
    char cell[160];
    kb_model_vendor_cell(r, ph, k, cell, sizeof cell);
    json_object_set_new(o, "ranked", res->row >= 0 ? json_integer(res->n_ranked) : json_null());
    json_object_set_new(o, "kbench_best", rank_json(kb_model_rank_row(r, res, 0)));
    json_object_set_new(o, "vendor_baseline", rank_json(kb_model_rank_row(r, res, 1)));
    json_object_set_new(o, "vs_vendor", cell[0] ? json_string(cell) : json_null());
}

static json_t *op_json(const kb_model_rollup *r, int ph, int k)
{
    const kb_model_op *op = &r->m->ops[k];
    const kb_model_opres *o = &r->ph[ph].ops[k];
    int f = o->row >= 0;
    const kb_report_row *row = kb_model_op_row(r, o);
    const char *bound = f && !r->emulator ? kb_bound_name(row->d.bound) : NULL;
    json_t *j = json_pack("{s:s, s:s, s:I, s:s?, s:b, s:s?, s:s?, s:s?, s:o, s:o, s:o, s:o, s:o, s:o, s:s?, s:o, "
                          "s:o, s:o, s:o, s:s?, s:s, s:b}",
                          "op", op->name, "scope", op->per_model ? "model" : "layer", "count",
                          (json_int_t)op->count[ph], "source", !f ? NULL : o->estimated ? "estimate" : "measured",
                          "estimate", f && o->estimated, "case_id", f ? row->case_id : NULL, "dtype",
                          f ? row->dtype : NULL, "clock", f ? row->clock : NULL, "time_us", num(f, o->time_us),
                          "step_us", num(f, o->step_us),
                          "share_pct", num(f, o->share), "flops", num(f, o->flops), "bytes", num(f, o->bytes),
                          "ai", num(f && row->d.have_rates, f ? row->d.ai : 0), "bound", bound,
                          "pct_roof", num(f && !r->emulator && o->have_roof, o->pct_roof),
                          "pct_measured", num(f && !r->emulator && o->have_measured, o->pct_measured),
                          "pct_path", num(f && !r->emulator && o->have_path, o->pct_path),
                          "focus_score_us", num(f, o->score), "missing", f ? NULL : o->why, "note", op->note,
                          "faster_than_roof", f && o->faster_than_roof);
    if (j) rank_fields(r, ph, k, j);
    return j;
}

static json_t *phase_json(const kb_model_rollup *r, int ph)
{
    const kb_model_phase_res *P = &r->ph[ph];
    json_t *ops = json_array(), *skipped = json_array();
    for (int k = 0; k < r->m->n_ops; k++) {
        if (P->ops[k].modelled)
            json_array_append_new(ops, op_json(r, ph, k));
        else
            json_array_append_new(skipped, json_pack("{s:s, s:s}", "op", r->m->ops[k].name, "note",
                                                     r->m->ops[k].note));
    }
    int t = P->step_us > 0;
    json_t *o = json_pack("{s:f, s:b, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:i, s:i, s:s?, s:o, s:o}",
                          "tokens", P->tokens, "bounds_only", P->bounds_only, "layer_us", num(t, P->layer_us),
                          "step_us", num(t, P->step_us), "us_per_token", num(t, P->us_per_token), "tokens_per_s",
                          num(P->have_rates, P->tokens_per_s), "flops", num(t, P->flops), "bytes", num(t, P->bytes),
                          "gbps", num(P->have_rates, P->gbps), "mfu_pct", num(P->have_mfu, P->mfu), "bw_util_pct",
                          num(P->have_bw, P->bw_util), "n_modelled", P->n_modelled, "n_missing", P->n_missing,
                          "optimise_first", P->focus >= 0 ? r->m->ops[P->focus].name : NULL, "ops", ops,
                          "not_modelled", skipped);
    json_t *faster = json_array();
    for (int k = 0; k < r->m->n_ops; k++)
        if (P->ops[k].row >= 0 && P->ops[k].faster_than_roof)
            json_array_append_new(faster, json_string(r->m->ops[k].name));
    json_object_set_new(o, "matmul_flops", num(t, P->mm_flops));
    json_object_set_new(o, "faster_than_roof", faster);
    return o;
}

static json_t *whatif_json(const kb_model_rollup *r)
{
    json_t *a = json_array();
    for (int i = 0; i < r->n_whatif; i++) {
        const kb_model_whatif *w = &r->whatif[i];
        json_array_append_new(a, json_pack("{s:s, s:i, s:i, s:o, s:o, s:i, s:i, s:f, s:o}", "dtype",
                                           kb_dtype_name((kb_dtype)w->dtype), "ops_in_dtype", w->n_at,
                                           "vendor_rows", w->n_vendor, "prefill_step_us",
                                           num(w->step_us[0] > 0, w->step_us[0]), "decode_step_us",
                                           num(w->step_us[1] > 0, w->step_us[1]), "prefill_missing",
                                           w->n_missing[0], "decode_missing", w->n_missing[1], "worst_rel_err",
                                           w->worst_rel_err, "worst_err_tol", num(w->have_err_tol,
                                                                                  w->worst_err_tol)));
    }
    return a;
}

/* The decode step at each of the description's decode_points: its params and the decode phase
 * as "phases.decode" has it; null when the description has none. */
static json_t *points_json(const kb_model_rollup *r)
{
    const kb_model_points *p = r->points;
    if (!p) return json_null();
    json_t *a = json_array();
    for (int i = 0; i < p->n; i++) {
        const kb_model *m = &p->models[i];
        json_t *at = json_object();
        for (int x = 0; x < r->m->n_axes; x++) {
            int k = r->m->axes[x].param;
            json_object_set_new(at, m->param_names[k], json_integer(m->params[k]));
        }
        json_array_append_new(a, json_pack("{s:s, s:o, s:o}", "point", p->label[i], "params", at, "decode",
                                           phase_json(p->rollups[i], KB_PHASE_DECODE)));
    }
    return a;
}

json_t *kb_model_json(const kb_model_rollup *r)
{
    const kb_report_run *run = r->run;
    const char *device = r->dev >= 0 ? run->devs[r->dev].name : NULL;
    json_t *phases = json_object();
    for (int ph = 0; ph < KB_PHASE_COUNT; ph++)
        json_object_set_new(phases, kb_model_phase_names[ph], phase_json(r, ph));
    json_t *formulas = json_pack(
        "{s:s, s:s, s:s, s:s, s:s}", "step", "layers x sum(per-layer op time x count) + sum(per-model op time x count)",
        "n_params", "sum of the ops' weights (x layers for per-layer ops)",
        "mfu", "the FLOPs of the weight matmuls executed in the step (ops with weights: their case's FLOPs x count "
               "x layers) / (peak_tflops x step time); none when ops are missing",
        "training", "6 x N FLOPs per token: an estimate (backward ~ 2x forward), not measured",
        "focus", "op step time x (1 - % of roof / 100): the measured roof where recorded, else the datasheet");
    if (r->est && r->est_dev >= 0)
        device = r->est->devs[r->est_dev].name;
    json_t *j = json_pack("{s:s, s:s, s:s, s:s?, s:s?, s:b, s:s?, s:s, s:b, s:s, s:f, s:f, s:o, s:o, s:I, s:o, s:o, "
                          "s:o}",
                          "model", r->m->name, "description", r->m->description, "model_file", r->m->file,
                          "run_id", run ? run->run_id : NULL, "device", device, "estimate", r->est != NULL,
                          "run_not_used", r->est && run && !r->use_run ? r->run_note : NULL,
                          "timing", kb_model_timing_label(r), "emulator", r->emulator, "dtype",
                          kb_dtype_name((kb_dtype)r->dtype), "n_params", r->n_params,
                          "training_flops_per_token_estimate", 6.0 * r->n_params,
                          "peak_tflops", num(r->peak_tflops > 0 && !r->emulator, r->peak_tflops),
                          "peak_gbps", num(r->peak_gbps > 0 && !r->emulator, r->peak_gbps), "layers",
                          (json_int_t)r->m->layers, "formulas", formulas, "phases", phases, "whatif",
                          whatif_json(r));
    if (j) json_object_set_new(j, "decode_points", points_json(r));
    return j;
}
