/* selftest_side.c - one backend of `kbench selftest` (see selftest_side.h). */
#include "selftest/selftest_side.h"

#include "core/fsutil.h"
#include "core/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kb_status kb_st_side_open(kb_st_side *s, const char *name, const char *cache_dir, int device_index, int sm_override,
                          const char *dir, char *err, size_t n)
{
    memset(s, 0, sizeof *s);
    s->floor_us = NAN;
    snprintf(s->dir, sizeof s->dir, "%s", dir);
    /* a few samples: the selftest checks that things work, it does not benchmark */
    kb_session_opts so = { .backend = name, .keep_unusable = 1, .dump_dir = s->dir, .dump_all = 1,
                           .overrides = { 3, 3, 2.0 } };
    so.bo.cache_dir = cache_dir;
    so.bo.device_index = device_index;
    so.bo.sm_override = sm_override;
    kb_sb msg;
    kb_sb_init(&msg);
    kb_status st = kb_session_open(&so, &s->s, &msg);
    if (st != KB_OK)
        snprintf(err, n, "%s", msg.s);
    kb_sb_free(&msg);
    if (st != KB_OK)
        return st;
    s->dev = *kb_session_device(s->s);
    if (kb_fs_mkdir_p(dir) != KB_OK) {
        snprintf(err, n, "cannot create %s", dir);
        return KB_ERR_SETUP;
    }
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
    double floor = r->overhead.done ? kb_overhead_floor_us(&r->overhead.ov) : NAN;
    if (isfinite(floor) && floor > 0 && !(floor >= s->floor_us))
        s->floor_us = floor;
    if (r->status == KB_CASE_OK && r->derived.done && strstr(r->case_id, "ceiling/copy") && r->derived.d.have_rates &&
        r->derived.d.gbps > s->copy_gbps) {
        s->copy_gbps = r->derived.d.gbps;
        s->peak_gbps = r->derived.d.have_roof ? r->derived.d.peak_gbps : 0;
    }
}

/* A finished case: what the checks need of it. */
static void seen(void *user, const kb_case_result *r)
{
    kb_st_side *s = user;
    kb_st_case *c = add_case(s);
    if (!c) {
        s->oom = 1;
        return;
    }
    snprintf(c->id, sizeof c->id, "%s", r->case_id);
    snprintf(c->reason, sizeof c->reason, "%.250s", r->reason);
    c->status = r->status;
    c->atol = r->verify.v.atol;
    c->rtol = r->verify.v.rtol;
    c->graph = r->c->launch == KB_LAUNCH_GRAPH;
    if (r->status == KB_CASE_OK)
        s->n_ok++;
    else if (r->status == KB_CASE_SKIPPED)
        s->n_skipped++;
    else
        s->n_failed++;
    note_result(s, r);
}

/* The pipeline and the records file, before the first run. */
static void begin(kb_st_side *s)
{
    char path[600];
    snprintf(path, sizeof path, "%s/records.jsonl", s->dir);
    kb_sb err;
    kb_sb_init(&err);
    kb_session_start(s->s);
    if (kb_session_records(s->s, path, NULL, &err) != KB_OK)
        kb_report(KB_REPORT_WARNING, "selftest: %s (the %s side runs without records)", err.s, s->dev.name);
    kb_sb_free(&err);
    kb_session_begin(s->s);
    s->begun = 1;
}

int kb_st_side_run(kb_st_side *s, const kb_plan *plan, const char *filter)
{
    const char *filters[1] = { filter };
    kb_session_adopt_plan(s->s, plan);
    if (!s->begun)
        begin(s);
    if (kb_session_select(s->s, filters, filter ? 1 : 0) != KB_OK)
        return -1;
    /* a lost context fails every later case: the session stops there, the failure is recorded */
    kb_session_step step = kb_session_run_all(s->s, seen, s);
    return step == KB_SESSION_STOP_INTERRUPTED || s->oom || kb_interrupted() ? -1 : 0;
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
    if (s->begun)
        kb_session_end(s->s);
    kb_session_close(s->s);
    free(s->cases);
    memset(s, 0, sizeof *s);
}
