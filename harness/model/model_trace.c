/* model_trace.c - the per-step timeline of a model roll-up as trace events (model_trace.h). */
#include "model/model_trace.h"

#include <stdio.h>

static void add(json_t *events, json_t *e)
{
    if (e) json_array_append_new(events, e);
}

/* The executions of op k in phase ph from *t [us]; a missing op is an instant event. */
static void op_events(const kb_model_rollup *r, int ph, int k, double *t, json_t *events)
{
    const kb_model_opres *o = &r->ph[ph].ops[k];
    const kb_model_op *op = &r->m->ops[k];
    if (!o->modelled) return;
    if (o->row < 0) {
        char name[160];
        snprintf(name, sizeof name, "missing: %s", op->name);
        add(events, json_pack("{s:s, s:s, s:s, s:s, s:i, s:i, s:f, s:{s:s}}", "name", name, "cat", "missing", "ph",
                              "i", "s", "t", "pid", ph + 1, "tid", 1, "ts", *t, "args", "why", o->why));
        return;
    }
    const char *case_id = kb_model_op_row(r, o)->case_id;
    for (int64_t c = 0; c < op->count[ph]; c++) {
        add(events, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f, s:{s:s, s:f}}", "name", op->name, "cat", "op",
                              "ph", "X", "pid", ph + 1, "tid", 1, "ts", *t, "dur", o->time_us, "args", "case",
                              case_id, "median_us", o->time_us));
        *t += o->time_us;
    }
}

static void layer_events(const kb_model_rollup *r, int ph, int64_t layer, double *t, json_t *events)
{
    char name[48];
    double t0 = *t;
    for (int k = 0; k < r->m->n_ops; k++)
        if (!r->m->ops[k].per_model) op_events(r, ph, k, t, events);
    snprintf(name, sizeof name, "layer %lld", (long long)layer);
    add(events, json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f}", "name", name, "cat", "layer", "ph", "X", "pid",
                          ph + 1, "tid", 1, "ts", t0, "dur", *t - t0));
}

static void phase_events(const kb_model_rollup *r, int ph, json_t *events)
{
    char title[160];
    snprintf(title, sizeof title, "%s step of %s: %.0f tokens [%s]", kb_model_phase_names[ph], r->m->name,
             r->ph[ph].tokens, kb_model_timing_label(r));
    add(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "process_name", "ph", "M", "pid", ph + 1, "tid",
                          0, "args", "name", title));
    add(events, json_pack("{s:s, s:s, s:i, s:i, s:{s:s}}", "name", "thread_name", "ph", "M", "pid", ph + 1, "tid", 1,
                          "args", "name", "ops"));
    int first_layer_op = r->m->n_ops;
    for (int k = r->m->n_ops - 1; k >= 0; k--)
        if (!r->m->ops[k].per_model) first_layer_op = k;
    double t = 0;
    for (int k = 0; k < first_layer_op; k++) op_events(r, ph, k, &t, events);
    for (int64_t l = 0; first_layer_op < r->m->n_ops && l < r->m->layers; l++) layer_events(r, ph, l, &t, events);
    for (int k = first_layer_op; k < r->m->n_ops; k++)
        if (r->m->ops[k].per_model) op_events(r, ph, k, &t, events);
}

json_t *kb_model_trace(const kb_model_rollup *r)
{
    json_t *events = json_array();
    for (int ph = 0; ph < KB_PHASE_COUNT; ph++) phase_events(r, ph, events);
    return json_pack("{s:o, s:s, s:{s:s, s:s, s:s, s:s}}", "traceEvents", events, "displayTimeUnit", "ms",
                     "otherData", "model", r->m->name, "run_id", r->run ? r->run->run_id : "", "timing",
                     kb_model_timing_label(r),
                     "layout", "one model step per phase built from the matched cases' medians, ops end to end; "
                     "not a recording");
}
