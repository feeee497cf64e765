/* model_cells.c - the per-op table's cells (model_cells.h). */
#include "model/model_cells.h"

#include "engine/derive.h"

#include <string.h>

static void num(char *b, size_t n, double v) { kb_report_num(b, n, v); }

const char *const kb_model_cols[KB_MODEL_COLS] = {
    "op", "scope x count", "case", "time_us (clock)", "step_us", "share", "GFLOP", "MB", "AI", "bound", "%roof",
    "%meas", "%path", "focus_us",
};


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
    num(cells[3], 160, o->time_us);
    snprintf(cells[3] + strlen(cells[3]), 160 - strlen(cells[3]), " (%s)", row->clock);
    num(cells[4], 160, o->step_us);
    num(cells[5], 160, o->share);
    strcat(cells[5], op->per_model ? "% of step" : "% of layer");
    num(cells[6], 160, o->flops / 1e9);
    num(cells[7], 160, o->bytes / 1e6);
    if (row->d.have_rates) num(cells[8], 160, row->d.ai);
    const char *bound = r->emulator ? NULL : kb_bound_name(row->d.bound);
    snprintf(cells[9], 160, "%s", bound ? bound : "");
    if (!r->emulator && o->have_roof) num(cells[10], 160, o->pct_roof);
    if (!r->emulator && o->have_measured) num(cells[11], 160, o->pct_measured);
    if (!r->emulator && o->have_path) num(cells[12], 160, o->pct_path);
    num(cells[13], 160, o->score);
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
