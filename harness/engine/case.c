/* case.c - the case pipeline (see case.h): a table of stages, each a small function
 * that fills its block of the result and says whether the case goes on. */
#include "engine/case.h"

#include "engine/defines.h"
#include "engine/nvtx.h"
#include "engine/verify.h"
#include "kernels/families.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

/* ---- statuses ---- */

static const struct {
    const char *name;
    int failed;              /* makes the run exit 1 */
} status_table[] = {
    [KB_CASE_OK] = { "ok", 0 },
    [KB_CASE_SKIPPED] = { "skipped", 0 },
    [KB_CASE_COMPILE_ERROR] = { "compile_error", 1 },
    [KB_CASE_LAUNCH_ERROR] = { "launch_error", 1 },
    [KB_CASE_INPUT_ERROR] = { "input_error", 1 },
    [KB_CASE_WRONG] = { "wrong", 1 },
    [KB_CASE_FAULT] = { "fault", 1 },
    [KB_CASE_TIMEOUT] = { "timeout", 1 },
};
_Static_assert(sizeof status_table / sizeof status_table[0] == KB_CASE_STATUS_COUNT,
               "status_table out of sync with kb_case_status");

const char *kb_case_status_name(kb_case_status s)
{
    return (unsigned)s < KB_CASE_STATUS_COUNT ? status_table[s].name : "?";
}

int kb_case_status_parse(const char *s, kb_case_status *out)
{
    for (int i = 0; i < KB_CASE_STATUS_COUNT; i++)
        if (strcmp(s, status_table[i].name) == 0) {
            *out = (kb_case_status)i;
            return 0;
        }
    return -1;
}

int kb_case_status_failed(kb_case_status s)
{
    return (unsigned)s < KB_CASE_STATUS_COUNT && status_table[s].failed;
}

kb_case_status kb_case_status_of(kb_status st)
{
    switch (st) {
    case KB_OK: return KB_CASE_OK;
    case KB_ERR_COMPILE: return KB_CASE_COMPILE_ERROR;
    case KB_ERR_FAULT: return KB_CASE_FAULT;
    case KB_ERR_TIMEOUT: return KB_CASE_TIMEOUT;
    case KB_ERR_INPUT: return KB_CASE_INPUT_ERROR;
    default: return KB_CASE_LAUNCH_ERROR;   /* launch, oom, setup, io, internal: could not run */
    }
}

static const char *const stage_names[] = {
    "valid", "compile", "setup", "verify", "measure", "derive", "overhead", "telemetry",
};
_Static_assert(sizeof stage_names / sizeof stage_names[0] == KB_STAGE_COUNT, "stage_names out of sync");

const char *kb_stage_name(kb_stage s) { return (unsigned)s < KB_STAGE_COUNT ? stage_names[s] : "?"; }

void kb_case_result_free(kb_case_result *r)
{
    kb_measurement_free(&r->measure.m);
    memset(r, 0, sizeof *r);
}

/* ---- the stages ---- */

typedef struct {
    kb_pipeline *p;
    const kb_case *c;
    const kb_family *f;
    const char *id;
    const char *entry;                 /* the variant's kernel entry */
    const kb_measure_settings *ms;
    const kb_case_verdict *verdict;    /* valid()'s answer, given by the caller; NULL: ask */
    kb_case_result *res;
    kb_run r;                          /* the execution context, from setup on */
    void *state;                       /* the family's state, from setup on */
    const kb_module_ref *mr;
} case_ctx;

/* End the case with error st; the reason is the case's first error message, else the
 * backend's last one. Returns 0 (the case does not go on). */
static int fail(case_ctx *x, kb_status st)
{
    kb_case_result *res = x->res;
    res->error = st;
    res->status = kb_case_status_of(st);
    if (!res->reason[0])
        snprintf(res->reason, sizeof res->reason, "%s",
                 x->r.err[0] ? x->r.err : x->p->be->last_error(x->p->bx));
    return 0;
}

/* The case's buffers must fit the device: its compulsory bytes (what any implementation
 * reads and writes) against the device's memory. */
static int fits_memory(case_ctx *x)
{
    double need = x->res->work.bytes_read + x->res->work.bytes_written;
    double have = (double)x->p->dev->total_mem_bytes;
    if (have <= 0 || need <= have)
        return 1;
    double unit = have < (1 << 30) ? 1 << 20 : 1 << 30;
    const char *name = have < (1 << 30) ? "MiB" : "GiB";
    snprintf(x->res->reason, sizeof x->res->reason, "its buffers need at least %.1f %s; the device has %.1f %s",
             need / unit, name, have / unit, name);
    return 0;
}

static int stage_valid(case_ctx *x)
{
    const kb_device_info *d = x->p->dev;
    kb_target t = { kb_target_sm(d), d->caps, d->max_shmem_per_block_optin };
    int valid = x->verdict ? x->verdict->valid : x->f->valid(x->c, &t, x->res->reason, sizeof x->res->reason);
    if (x->verdict && !valid)
        snprintf(x->res->reason, sizeof x->res->reason, "%s", x->verdict->why);
    if (valid && fits_memory(x))
        return 1;
    x->res->status = KB_CASE_SKIPPED;
    return 0;
}

static int stage_compile(case_ctx *x)
{
    kb_case_result *res = x->res;
    if (!x->entry)
        return 1;   /* a vendor library call: no kernel source of kbench's to compile */
    kb_sb defs;
    kb_sb_init(&defs);
    kb_case_defines(x->f, x->c, &defs);
    x->mr = kb_modules_get(x->p->mods, x->f->source, defs.s, kb_target_sm(x->p->dev));
    kb_sb_free(&defs);
    res->compile.done = 1;
    res->compile.compile_ms = x->mr->compile_ms;
    res->compile.log = x->mr->log;
    res->compile.note = x->mr->compile_ms > 0 ? x->mr->note : "";   /* once, where it was built */
    if (x->mr->status != KB_OK) {
        snprintf(res->reason, sizeof res->reason, "%s did not %s for %s (log in the record)", x->f->source,
                 x->mr->status == KB_ERR_COMPILE ? "compile" : "load", kb_arch_name(kb_target_sm(x->p->dev)));
        return fail(x, x->mr->status);
    }
    res->compile.have_resources = kb_modules_resources(x->p->mods, x->mr, x->entry, &res->compile.res) == KB_OK;
    char why[512] = "";
    if (x->p->prune && !x->p->prune(x->p->prune_user, x->c, res->compile.have_resources ? &res->compile.res : NULL,
                                    why, sizeof why)) {
        res->status = KB_CASE_SKIPPED;
        snprintf(res->reason, sizeof res->reason, "pruned: %s", why);
        return 0;
    }
    return 1;
}

static int stage_setup(case_ctx *x)
{
    kb_run *r = &x->r;
    r->be = x->p->be;
    r->bx = x->p->bx;
    r->mod = x->mr ? x->mr->mod : NULL;
    r->f = x->f;
    r->c = x->c;
    r->target = (kb_target){ kb_target_sm(x->p->dev), x->p->dev->caps, x->p->dev->max_shmem_per_block_optin };
    r->dumping = x->p->dump_dir != NULL;
    kb_status st = x->f->setup(r, &x->state);
    x->res->constants.n = r->n_consts;
    memcpy(x->res->constants.c, r->consts, (size_t)r->n_consts * sizeof r->consts[0]);
    if (r->have_vendor) {
        x->res->vendor.done = 1;
        x->res->vendor.info = r->vendor;
    }
    if (st != KB_OK && r->skipped) {
        x->res->status = KB_CASE_SKIPPED;
        snprintf(x->res->reason, sizeof x->res->reason, "%s", r->err);
        return 0;
    }
    return st == KB_OK ? 1 : fail(x, st);
}

/* --dump: every selected case when a filter chose them, else the wrong ones. A dump that
 * fails is a note for the operator, not the case's failure. */
static void dump_if_asked(case_ctx *x)
{
    kb_pipeline *p = x->p;
    if (!p->dump_dir || !(p->dump_all || !kb_verify_ok(&x->res->verify.v)))
        return;
    if (kb_run_dump(&x->r, p->dump_dir, x->id) != KB_OK) {
        snprintf(p->dump_err, sizeof p->dump_err, "%s", x->r.err);
        x->r.err[0] = 0;
    }
}

/* A graph case's execution for verification: one replay of the captured execution, so
 * the check sees what the graph computes (the round trip), not an eager twin. */
static kb_status execute_as_graph(case_ctx *x)
{
    kb_run *r = &x->r;
    kb_graph *g = NULL;
    kb_status st = r->be->graph_begin(r->bx), est = KB_OK;
    if (st != KB_OK)
        return kb_run_fail(r, st, "graph capture: %s", r->be->last_error(r->bx));
    est = x->f->enqueue(r, x->state);
    st = r->be->graph_end(r->bx, &g);   /* always: it returns the stream to normal */
    if (est != KB_OK || st != KB_OK) {
        if (g)
            r->be->graph_free(r->bx, g);
        return est != KB_OK ? est : kb_run_fail(r, st, "graph capture: %s", r->be->last_error(r->bx));
    }
    if ((st = r->be->graph_launch(r->bx, g)) != KB_OK)
        kb_run_fail(r, st, "graph launch: %s", r->be->last_error(r->bx));
    r->be->graph_free(r->bx, g);
    return st;
}

/* Validate before timing: one execution (a graph replay for a graph case), compared with
 * the reference. */
static int stage_verify(case_ctx *x)
{
    kb_run *r = &x->r;
    kb_case_result *res = x->res;
    kb_status st;
    int as_graph = x->c->launch == KB_LAUNCH_GRAPH && (r->be->caps & KB_CAP_GRAPHS);
    if ((st = as_graph ? execute_as_graph(x) : x->f->enqueue(r, x->state)) != KB_OK)
        return fail(x, st);
    if ((st = r->be->sync(r->bx)) != KB_OK) {
        kb_run_fail(r, st, "synchronise: %s", r->be->last_error(r->bx));
        return fail(x, st);
    }
    if ((st = x->f->check(r, x->state, &res->verify.v)) != KB_OK)
        return fail(x, st);
    res->verify.done = 1;
    dump_if_asked(x);
    const kb_verify *v = &res->verify.v;
    int guards_bad;
    if ((st = kb_run_check_guards(r, &guards_bad, res->reason, sizeof res->reason)) != KB_OK)
        return fail(x, st);
    if (guards_bad) {
        res->status = KB_CASE_WRONG;
        return 0;
    }
    if (v->guard_bad > 0) {
        res->status = KB_CASE_WRONG;
        snprintf(res->reason, sizeof res->reason, "wrote %lld bytes of the output's padding, which no kernel may "
                 "touch; the first at byte %lld of the buffer", (long long)v->guard_bad, (long long)v->guard_first);
        return 0;
    }
    if (v->n_bad == 0)
        return 1;
    res->status = KB_CASE_WRONG;
    snprintf(res->reason, sizeof res->reason,
             "%lld of %lld elements outside tolerance; first at %lld: got %.6g want %.6g", (long long)v->n_bad,
             (long long)v->n, (long long)v->first_bad, v->got_at_bad, v->want_at_bad);
    return 0;
}

static int stage_measure(case_ctx *x)
{
    kb_pipeline *p = x->p;
    kb_measure_settings s = kb_measure_resolve(x->ms, p->overrides, p->dev->caps);
    kb_status st = kb_measure_case(&x->r, x->state, &s, p->flush, &x->res->measure.m);
    if (st != KB_OK)
        return fail(x, st);
    x->res->measure.done = 1;
    x->res->measure.clock = kb_clock_name(p->dev->caps);
    snprintf(x->res->measure.method, sizeof x->res->measure.method, "%s",
             kb_be_timing_method(p->be, p->bx));
    return 1;
}

static int stage_derive(case_ctx *x)
{
    kb_case_result *res = x->res;
    kb_derive(&res->work, res->measure.m.st.median, x->p->peaks, x->c->dtype, &res->derived.d);
    kb_path path;
    int have_path = x->f->path && x->f->path(x->c, kb_target_sm(x->p->dev), &path);
    kb_derive_roofs(&res->work, x->p->peaks, have_path ? &path : NULL, &res->derived.d);
    res->derived.done = 1;
    return 1;
}

/* Eager vs graph launch overhead, once per problem: the graph twin of a case would
 * measure the same thing. A fault (or a kernel timeout) here is the case's fault, as in
 * any other stage: the context is lost. Any other failure (e.g. a call a graph cannot
 * capture) leaves the block empty with the reason kept; the case was measured, stays ok. */
static int stage_overhead(case_ctx *x)
{
    kb_pipeline *p = x->p;
    kb_case_result *res = x->res;
    if (x->c->launch != KB_LAUNCH_EAGER || !(p->dev->caps & KB_CAP_GRAPHS))
        return 1;
    kb_overhead *ov = &res->overhead.ov;
    ov->empty = p->empty && p->empty->status == KB_OK ? p->empty->mod : NULL;
    int n = kb_launch_overhead_n(res->measure.m.st.median, p->dev->caps);
    kb_status st = kb_launch_overhead(&x->r, x->state, n, ov);
    if (st == KB_ERR_INTERRUPTED || st == KB_ERR_FAULT || st == KB_ERR_TIMEOUT)
        return fail(x, st);
    if (st == KB_OK) {
        res->overhead.done = 1;
    } else {
        snprintf(res->overhead.error, sizeof res->overhead.error, "%s", x->r.err);
        x->r.err[0] = 0;
    }
    return 1;
}

static int stage_telemetry(case_ctx *x)
{
    kb_pipeline *p = x->p;
    if (!(p->be->caps & KB_CAP_TELEMETRY))
        return 1;
    kb_be_telemetry(p->be, p->bx, &x->res->telemetry.t);
    x->res->telemetry.done = 1;
    return 1;
}

/* Returns 1 when the case goes on to the next stage, 0 when it ended (status set). */
typedef int (*stage_fn)(case_ctx *x);
static const stage_fn stages[] = {
    [KB_STAGE_VALID] = stage_valid,
    [KB_STAGE_COMPILE] = stage_compile,
    [KB_STAGE_SETUP] = stage_setup,
    [KB_STAGE_VERIFY] = stage_verify,
    [KB_STAGE_MEASURE] = stage_measure,
    [KB_STAGE_DERIVE] = stage_derive,
    [KB_STAGE_OVERHEAD] = stage_overhead,
    [KB_STAGE_TELEMETRY] = stage_telemetry,
};
_Static_assert(sizeof stages / sizeof stages[0] == KB_STAGE_COUNT, "one function per stage");

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

void kb_case_run(kb_pipeline *p, const kb_case *c, const char *id, const kb_measure_settings *ms,
                 kb_case_result *out)
{
    kb_case_run_judged(p, kb_families[c->family], c, id, ms, NULL, out);
}

void kb_case_run_judged(kb_pipeline *p, const kb_family *f, const kb_case *c, const char *id,
                        const kb_measure_settings *ms, const kb_case_verdict *verdict, kb_case_result *out)
{
    case_ctx x;
    memset(&x, 0, sizeof x);
    memset(out, 0, sizeof *out);
    x.p = p;
    x.c = c;
    x.f = f;
    x.id = id;
    x.entry = x.f->variants[c->variant].entry;
    x.ms = ms;
    x.verdict = verdict;
    x.res = out;
    out->family = x.f;
    out->c = c;
    out->case_id = id;
    out->check_shape = c->check_shape;
    out->work = x.f->work(c);
    p->dump_err[0] = 0;

    double t0 = now_ms();
    kb_nvtx_push(id);
    for (int s = 0; s < KB_STAGE_COUNT; s++) {
        double ts = now_ms();
        int go = stages[s](&x);
        out->stage_ms[s] = now_ms() - ts;
        if (!go)
            break;
    }
    if (x.state)
        x.f->teardown(&x.r, x.state);
    kb_run_free_all(&x.r);
    kb_nvtx_pop();
    out->wall_ms = now_ms() - t0;
}
