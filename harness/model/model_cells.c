/* model_cells.c - the per-op table's cells (model_cells.h). */
#include "model/model_cells.h"

#include "engine/derive.h"

#include <string.h>

static void num(char *b, size_t n, double v) { kb_report_num(b, n, v); }

const char *const kb_model_cols[KB_MODEL_COLS] = {
    "op", "scope x count", "case", "vendor baseline", "time_us (clock)", "step_us", "share", "GFLOP", "MB", "AI",
    "bound", "%roof", "%meas", "%path", "focus_us",
};

void kb_model_vendor_cell(const kb_model_rollup *r, int ph, int k, char *b, size_t n)
{
    const kb_model_opres *o = &r->ph[ph].ops[k];
    char names[64], t[48];
    b[0] = 0;
    if (o->row < 0 || !kb_model_vendor_names(r->m->ops[k].family, names, sizeof names)[0]) return;
    const kb_report_row *v = kb_model_rank_row(r, o, 1), *best = kb_model_rank_row(r, o, 0);
    if (!v) {
        snprintf(b, n, "no %s row", names);
        return;
    }
    int vendor_won = kb_model_op_row(r, o) == v;
    const kb_report_row *other = vendor_won ? best : v;
    if (!other) {   /* the vendor row won and no kbench kernel ran this shape */
        snprintf(b, n, "%s fastest; no kbench row", v->variant);
        return;
    }
    num(t, sizeof t, other->median_us);
    if (vendor_won)
        snprintf(b, n, "%s fastest; kbench best %s %s us (%.2fx %s's time)", v->variant, best->variant, t,
                 best->median_us / v->median_us, v->variant);
    else
        snprintf(b, n, "%s %s us (%.2fx kbench's time)", v->variant, t, v->median_us / o->time_us);
}

void kb_model_op_cells(const kb_model_rollup *r, int ph, int k, char cells[KB_MODEL_COLS][160])
{
    const kb_model_op *op = &r->m->ops[k];
    const kb_model_opres *o = &r->ph[ph].ops[k];
    for (int c = 0; c < KB_MODEL_COLS; c++) cells[c][0] = 0;
    snprintf(cells[0], 160, "%s", op->name);
    snprintf(cells[1], 160, "%s x %lld", op->per_model ? "model" : "layer", (long long)op->count[ph]);
    if (o->row < 0) {
        snprintf(cells[2], 160, "missing");
        return;
    }
    const kb_report_row *row = kb_model_op_row(r, o);
    snprintf(cells[2], 160, "%s", row->case_id);
    kb_model_vendor_cell(r, ph, k, cells[3], 160);
    num(cells[4], 160, o->time_us);
    snprintf(cells[4] + strlen(cells[4]), 160 - strlen(cells[4]), " (%s)", row->clock);
    num(cells[5], 160, o->step_us);
    num(cells[6], 160, o->share);
    strcat(cells[6], op->per_model ? "% of step" : "% of layer");
    num(cells[7], 160, o->flops / 1e9);
    num(cells[8], 160, o->bytes / 1e6);
    if (row->d.have_rates) num(cells[9], 160, row->d.ai);
    const char *bound = r->emulator ? NULL : kb_bound_name(row->d.bound);
    snprintf(cells[10], 160, "%s", bound ? bound : "");
    if (!r->emulator && o->have_roof) num(cells[11], 160, o->pct_roof);
    if (!r->emulator && o->have_measured) num(cells[12], 160, o->pct_measured);
    if (!r->emulator && o->have_path) num(cells[13], 160, o->pct_path);
    num(cells[14], 160, o->score);
}


/* One step cell: "n/a", "x" or ">= x" [ms]. */
static void step_cell(char *b, size_t n, double step_us, int missing)
{
    if (step_us <= 0) {
        snprintf(b, n, "n/a");
        return;
    }
    char v[48];
    num(v, sizeof v, step_us / 1000);
    snprintf(b, n, "%s%s", missing ? ">= " : "", v);
}

void kb_model_whatif_cells(const kb_model_whatif *w, const kb_model_whatif *base, char *pre, char *dec,
                           char *up_pre, char *up_dec, size_t n)
{
    char *cells[2] = { pre, dec }, *ups[2] = { up_pre, up_dec };
    for (int ph = 0; ph < KB_PHASE_COUNT && ph < 2; ph++) {
        step_cell(cells[ph], n, w->step_us[ph], w->n_missing[ph]);
        snprintf(ups[ph], n, "n/a");
        if (base && w->step_us[ph] > 0 && base->step_us[ph] > 0 && !w->n_missing[ph] && !base->n_missing[ph])
            num(ups[ph], n, base->step_us[ph] / w->step_us[ph]);
    }
}

const char *const kb_model_point_cols[KB_MODEL_POINT_COLS] = {
    "point", "tokens", "decode step ms", "us per token", "tokens/s", "missing", "largest op",
};

void kb_model_point_cells(const kb_model_points *p, int i, char cells[KB_MODEL_POINT_COLS][160])
{
    const kb_model_rollup *r = p->rollups[i];
    const kb_model_phase_res *P = &r->ph[KB_PHASE_DECODE];
    int big = -1;
    snprintf(cells[0], 160, "%s", p->label[i]);
    num(cells[1], 160, P->tokens);
    step_cell(cells[2], 160, P->step_us, P->n_missing);
    char t[48];
    num(t, sizeof t, P->us_per_token);
    snprintf(cells[3], 160, "%s%s", P->step_us <= 0 ? "n/a" : P->bounds_only ? ">= " : "", P->step_us > 0 ? t : "");
    snprintf(cells[4], 160, "n/a");
    if (P->have_rates) num(cells[4], 160, P->tokens_per_s);
    size_t at = (size_t)snprintf(cells[5], 160, "%d", P->n_missing);
    for (int k = 0, first = 1; k < r->m->n_ops; k++) {
        const kb_model_opres *o = &P->ops[k];
        if (o->modelled && o->row < 0 && at < 160) {
            at += (size_t)snprintf(cells[5] + at, 160 - at, "%s%s", first ? ": " : ", ", r->m->ops[k].name);
            first = 0;
        }
        if (o->row >= 0 && (big < 0 || o->step_us > P->ops[big].step_us)) big = k;
    }
    cells[6][0] = 0;
    if (big >= 0) {
        const kb_report_row *row = kb_model_op_row(r, &P->ops[big]);
        num(t, sizeof t, P->ops[big].time_us);
        snprintf(cells[6], 160, "%s %.0f%% of step: %s/%s %s us (%s)", r->m->ops[big].name,
                 100.0 * P->ops[big].step_us / P->step_us, row->family, row->variant, t, row->clock);
    }
}
