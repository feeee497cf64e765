/* tunedb_sink.c - the tuning database as a record sink (see tunedb_sink.h). */
#include "tune/tunedb_sink.h"

#include "core/report.h"
#include "core/stats.h"
#include "engine/cache.h"
#include "engine/setup.h"
#include "tune/space.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *kb_tunedb_sink_source(kb_tunedb_sink *t, int family, const kb_family *f)
{
    if (family < 0 || family >= KB_TUNE_MAX_FAMILIES)
        return "";
    char *h = t->source[family];
    if (h[0])
        return h;
    const kb_backend *be;
    kb_backend_ctx *bx;
    kb_session_backend(t->s, &be, &bx);
    kb_sb path;
    kb_sb_init(&path);
    kb_sb_printf(&path, "%s/%s", kb_kernels_dir(), f->source);
    /* the arch compiled for (--arch): a source's key for sm_90a is not sm_90's */
    kb_compile_req req = { path.s, kb_kernels_dir(), NULL, 0, kb_session_target_sm(t->s) };
    char key[KB_CACHE_KEY_LEN + 1];
    if (kb_cache_key(be, bx, &req, key, NULL) == KB_OK)
        snprintf(h, 40, "%s", key);
    kb_sb_free(&path);
    return h;
}

/* The configuration of c: its variant and the config params that apply to it, in the
 * family's order, a choice param with its name. */
static void config_of(const kb_family *f, const kb_case *c, kb_tune_config_desc *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->variant, sizeof out->variant, "%s", f->variants[c->variant].name);
    for (int i = 0; i < f->n_params && out->n_params < KB_MAX_PARAMS; i++) {
        if (!kb_tune_param_is_config(f, i) || !kb_param_applies(f, i, c->variant))
            continue;
        kb_tune_param *p = &out->params[out->n_params++];
        snprintf(p->name, sizeof p->name, "%s", f->params[i].name);
        p->value = c->params[i];
        if (f->params[i].choices)
            snprintf(p->choice, sizeof p->choice, "%s", f->params[i].choices[c->params[i]]);
    }
}

/* The problem of c: its operation, dtype, dims, pad and launch. */
static void problem_of(const kb_family *f, const kb_case *c, kb_tune_problem_desc *out)
{
    memset(out, 0, sizeof *out);
    kb_sb op;
    kb_sb_init(&op);
    kb_tune_problem_op(f, c, &op);
    snprintf(out->op, sizeof out->op, "%s", op.s ? op.s : f->name);
    kb_sb_free(&op);
    snprintf(out->family, sizeof out->family, "%s", f->name);
    snprintf(out->dtype, sizeof out->dtype, "%s", kb_dtype_name(c->dtype));
    out->n_dims = f->n_dims;
    for (int d = 0; d < f->n_dims && d < KB_MAX_DIMS; d++)
        out->dims[d] = c->dims[d];
    out->pad = c->pad;
    snprintf(out->launch, sizeof out->launch, "%s", kb_launch_name(c->launch));
}

void kb_tunedb_entry_of(const kb_cases_item *item, const kb_case_result *r, kb_tune_entry *e)
{
    kb_sb key;
    kb_sb_init(&key);
    kb_tune_problem_key(item->f, item->it.c, &key);
    char *config = kb_tune_config_label(item->f, item->it.c);
    memset(e, 0, sizeof *e);
    snprintf(e->case_id, sizeof e->case_id, "%.511s", item->it.id);
    snprintf(e->problem, sizeof e->problem, "%.383s", key.s);
    snprintf(e->config, sizeof e->config, "%.255s", config ? config : "");
    config_of(r->family, r->c, &e->cfg);
    problem_of(r->family, r->c, &e->prob);
    snprintf(e->family, sizeof e->family, "%s", r->family->name);
    snprintf(e->status, sizeof e->status, "%s", kb_case_status_name(r->status));
    snprintf(e->reason, sizeof e->reason, "%s", r->reason);
    e->median_us = r->measure.done ? r->measure.m.st.median : NAN;
    e->noise = r->measure.done ? r->measure.m.noise : NAN;
    e->samples = r->measure.done ? r->measure.m.n : 0;
    e->registers = r->compile.have_resources ? r->compile.res.registers : -1;
    e->shmem_bytes = r->compile.have_resources ? r->compile.res.static_shmem_bytes : -1;
    snprintf(e->clock, sizeof e->clock, "%s", r->measure.done ? r->measure.clock : "");
    free(config);
    kb_sb_free(&key);
}

static void put(kb_tunedb_sink *t, const char *source, const kb_tune_entry *e)
{
    kb_sb err;
    kb_sb_init(&err);
    if (kb_tunedb_put(t->db, &t->key, source, e, &err) != KB_OK) {
        kb_report(KB_REPORT_ERROR, "tuning database: %s", err.s);
        t->failed++;
    }
    kb_sb_free(&err);
}

static kb_status tunedb_record(void *self, const kb_sink_case *c)
{
    kb_tunedb_sink *t = self;
    if (t->hold)
        return KB_OK;
    kb_tune_entry e;
    kb_tunedb_entry_of(c->item, c->r, &e);
    put(t, kb_tunedb_sink_source(t, c->item->it.c->family, c->item->f), &e);
    return KB_OK;
}

static void tunedb_free(void *self)
{
    kb_tunedb_sink *t = self;
    kb_tunedb_close(t->db);
    free(t);
}

static const kb_sink_ops tunedb_ops = { "tunedb", KB_SINK_MIRROR, NULL, NULL, tunedb_record, NULL, tunedb_free };

kb_status kb_tunedb_sink_open(kb_session *s, const char *path, kb_tunedb_sink **out, kb_sb *err)
{
    *out = NULL;
    kb_tunedb_sink *t = calloc(1, sizeof *t);
    if (!t) {
        kb_sb_printf(err, "out of memory opening %s", path);
        return KB_ERR_OOM;
    }
    kb_status st = kb_tunedb_open(path, &t->db, err);
    if (st != KB_OK) {
        free(t);
        return st;
    }
    t->s = s;
    kb_tune_key_make(kb_session_device(s), kb_session_toolchain_id(s), &t->key);
    *out = t;
    return KB_OK;
}

kb_sink kb_tunedb_sink_of(kb_tunedb_sink *t) { return (kb_sink){ &tunedb_ops, t }; }

void kb_tunedb_sink_pool(kb_tunedb_sink *t, const char *source, kb_tune_entry *e, const double *pool, int n,
                         int failed)
{
    kb_stats st;
    if (failed || n == 0 || kb_stats_compute(pool, n, &st) != 0) {
        snprintf(e->status, sizeof e->status, "%s", kb_case_status_name(failed ? (kb_case_status)failed
                                                                                   : KB_CASE_LAUNCH_ERROR));
        snprintf(e->reason, sizeof e->reason, "failed when re-measured to break a tie (its record says why)");
    } else {
        e->median_us = st.median;
        e->noise = kb_measure_noise(&st);
        e->samples = n;
    }
    put(t, source, e);
}
