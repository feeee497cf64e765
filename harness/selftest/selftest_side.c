/* selftest_side.c - one backend of `kbench selftest` (see selftest_side.h). */
#include "selftest/selftest_side.h"

#include "core/fsutil.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kb_status kb_st_side_open(kb_st_side *s, const char *name, const char *cache_dir, int device_index, int sm_override,
                          const char *dir, char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    s->floor_us = NAN;
    kb_backend_opts bo = { .cache_dir = cache_dir, .device_index = device_index, .sm_override = sm_override };
    kb_status st = kb_backend_open(name, &bo, &s->be, &s->bx, err, n);
    if (st != KB_OK) {
        s->bx = NULL;
        return st;
    }
    if ((st = s->be->device_info(s->bx, &s->dev)) != KB_OK) {
        snprintf(err, n, "device query: %s", s->be->last_error(s->bx));
        return st;
    }
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    if (kb_fs_mkdir_p(dir) != KB_OK) {
        snprintf(err, n, "cannot create %s", dir);
        return KB_ERR_SETUP;
    }
    s->mods = kb_modules_new(s->be, s->bx, cache_dir, kb_kernels_dir());
    kb_pipeline *p = &s->pipe;
    p->be = s->be;
    p->bx = s->bx;
    p->dev = &s->dev;
    p->mods = s->mods;
    p->empty = kb_modules_get(s->mods, KB_EMPTY_SOURCE, "", kb_target_sm(&s->dev));
    kb_sb note;
    kb_sb_init(&note);
    if ((s->dev.caps & KB_CAP_ROOFLINE) && kb_peaks_for_device(&s->dev, NULL, &s->peaks, &note) == KB_OK)
        p->peaks = &s->peaks;
    kb_sb_free(&note);
    /* a few samples: the selftest checks that things work, it does not benchmark */
    s->overrides = (kb_measure_overrides){ 3, 3, 2.0 };
    p->overrides = &s->overrides;
    p->dump_dir = s->dir;
    p->dump_all = 1;
    return KB_OK;
}

static kb_st_case *add_case(kb_st_side *s)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        kb_st_case *c = realloc(s->cases, (size_t)cap * sizeof *c);
        if (!c)
            return NULL;
        s->cases = c;
        s->cap = cap;
    }
    kb_st_case *c = &s->cases[s->n++];
    memset(c, 0, sizeof *c);
    return c;
}

/* What one finished case tells the checks beyond its status. */
static void note_result(kb_st_side *s, const kb_case_result *r)
{
    if (r->telemetry.done) {
        if (r->telemetry.t.available)
            s->telemetry_ok = 1;
        else
            snprintf(s->telemetry_why, sizeof s->telemetry_why, "%.250s", r->telemetry.t.why);
    }
    double floor = r->overhead.done ? r->overhead.ov.empty_eager_us : NAN;
    if (isfinite(floor) && floor > 0 && !(floor >= s->floor_us))
        s->floor_us = floor;
    if (r->status == KB_CASE_OK && r->derived.done && strstr(r->case_id, "ceiling/copy") && r->derived.d.have_rates &&
        r->derived.d.gbps > s->copy_gbps) {
        s->copy_gbps = r->derived.d.gbps;
        s->peak_gbps = r->derived.d.have_roof ? r->derived.d.peak_gbps : 0;
    }
}

typedef struct {
    kb_st_side *s;
    const kb_plan *plan;
    int oom;
} walk_ctx;

static int run_one(void *user, const kb_walk_item *it)
{
    walk_ctx *w = user;
    kb_st_side *s = w->s;
    if (kb_interrupted())
        return 1;
    kb_case_result r;
    kb_case_run(&s->pipe, it->c, it->id, &w->plan->entries[it->c->entry].measure, &r);
    kb_st_case *c = add_case(s);
    if (!c) {
        kb_case_result_free(&r);
        w->oom = 1;
        return 1;
    }
    snprintf(c->id, sizeof c->id, "%s", it->id);
    snprintf(c->reason, sizeof c->reason, "%.250s", r.reason);
    c->status = r.status;
    c->atol = r.verify.v.atol;
    c->rtol = r.verify.v.rtol;
    c->graph = it->c->launch == KB_LAUNCH_GRAPH;
    if (r.status == KB_CASE_OK)
        s->n_ok++;
    else if (r.status == KB_CASE_SKIPPED)
        s->n_skipped++;
    else
        s->n_failed++;
    note_result(s, &r);
    int interrupted = r.error == KB_ERR_INTERRUPTED;
    kb_case_result_free(&r);
    /* a lost context fails every later case: stop here, the failure is recorded */
    if (s->be->sync(s->bx) != KB_OK)
        return 1;
    return interrupted;
}

int kb_st_side_run(kb_st_side *s, const kb_plan *plan, const char *filter)
{
    const char *filters[1] = { filter };
    kb_walk_opts wo = { filters, filter ? 1 : 0, NULL,
                        { kb_target_sm(&s->dev), s->dev.caps, s->dev.max_shmem_per_block_optin } };
    walk_ctx w = { s, plan, 0 };
    int rc = kb_walk(plan, &wo, run_one, &w, NULL);
    return rc < 0 || w.oom || kb_interrupted() ? -1 : 0;
}

const kb_st_case *kb_st_side_find(const kb_st_side *s, const char *id)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->cases[i].id, id))
            return &s->cases[i];
    return NULL;
}

void kb_st_side_close(kb_st_side *s)
{
    if (s->mods)
        kb_modules_free(s->mods);
    if (s->bx)
        s->be->fini(s->bx);
    free(s->cases);
    memset(s, 0, sizeof *s);
}
