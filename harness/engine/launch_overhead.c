/* launch_overhead.c - eager vs graph launch cost of a case, with an empty-kernel floor
 * (see launch_overhead.h). */
#include "engine/launch_overhead.h"

#include "core/stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* What gets launched: the case (its family's enqueue) or the empty kernel. */
typedef struct {
    kb_run *r;
    void *state;
    kb_module *empty;       /* non-NULL: launch kb_empty from it instead of the case */
} launcher;

static double wall_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + ts.tv_nsec * 1e-3;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static kb_status exec_once(const launcher *l)
{
    kb_run *r = l->r;
    if (kb_interrupted())
        return kb_run_fail(r, KB_ERR_INTERRUPTED, "interrupted while timing the launch overhead");
    if (!l->empty)
        return r->f->enqueue(r, l->state);
    static const kb_geom one = { { 1, 1, 1 }, { 1, 1, 1 }, 0, { 1, 1, 1 } };
    kb_status st = r->be->launch(r->bx, l->empty, KB_EMPTY_ENTRY, &one, NULL, 0);
    return st == KB_OK ? KB_OK : kb_run_fail(r, st, "launch of %s: %s", KB_EMPTY_ENTRY, r->be->last_error(r->bx));
}

/* ---- counting the launches of one execution ----
 * kb_run_launch goes through r->be->launch, so a copy of the backend table whose
 * launch slot counts and forwards sees every launch of the family's enqueue. The
 * slot has no user pointer, hence the thread-local forwarding target. */
static _Thread_local const kb_backend *count_inner;
static _Thread_local int count_launches;

static kb_status counting_launch(kb_backend_ctx *x, kb_module *m, const char *entry, const kb_geom *g,
                                 const kb_arg *args, int nargs)
{
    count_launches++;
    return count_inner->launch(x, m, entry, g, args, nargs);
}

/* A vendor library call (cuBLASLt, cuDNN) counts as one launch: one call of the library's
 * on the stream, whatever kernels it issues inside. */
static kb_status counting_vendor_run(kb_backend_ctx *x, kb_vendor_plan *p)
{
    count_launches++;
    return count_inner->vendor_run(x, p);
}

/* One execution of the case (doubling as the warm-up), counting its launches. */
static kb_status count_case_launches(kb_run *r, void *state, int *launches)
{
    kb_backend shim = *r->be;
    const kb_backend *saved = r->be;
    shim.launch = counting_launch;
    if (shim.vendor_run)
        shim.vendor_run = counting_vendor_run;
    count_inner = saved;
    count_launches = 0;
    r->be = &shim;
    kb_status st = r->f->enqueue(r, state);
    r->be = saved;
    *launches = count_launches;
    return st;
}

/* ---- timing ---- */

static kb_status timer_fail(kb_run *r, kb_status st, const char *what)
{
    return kb_run_fail(r, st, "%s: %s", what, r->be->last_error(r->bx));
}

/* n executions enqueued one by one, reps times: device time dev[rep] and host enqueue
 * time host[rep] [us]. */
static kb_status time_eager(const launcher *l, int n, int reps, double *dev, double *host)
{
    kb_run *r = l->r;
    const kb_backend *be = r->be;
    kb_status st;
    for (int rep = 0; rep < reps; rep++) {
        if ((st = be->sync(r->bx)) != KB_OK)
            return timer_fail(r, st, "synchronise");
        if ((st = be->timer_start(r->bx)) != KB_OK)
            return timer_fail(r, st, "timer start");
        double w0 = wall_us();
        for (int i = 0; i < n; i++)
            if ((st = exec_once(l)) != KB_OK) {
                double ignored;
                be->timer_stop(r->bx, &ignored);   /* the held stream must be let go */
                return st;
            }
        host[rep] = wall_us() - w0;
        if ((st = be->timer_stop(r->bx, &dev[rep])) != KB_OK)
            return timer_fail(r, st, "timer stop");
    }
    return KB_OK;
}

/* One graph of n executions, captured and instantiated once, replayed once untimed,
 * then timed reps times: device time dev[rep] [us]. */
static kb_status time_graph(const launcher *l, int n, int reps, double *dev)
{
    kb_run *r = l->r;
    const kb_backend *be = r->be;
    kb_graph *g = NULL;
    kb_status st, est = KB_OK;
    if ((st = be->graph_begin(r->bx)) != KB_OK)
        return timer_fail(r, st, "graph capture");
    for (int i = 0; i < n && est == KB_OK; i++)
        est = exec_once(l);
    /* always end the capture: that is what returns the stream to normal */
    if ((st = be->graph_end(r->bx, &g)) != KB_OK || est != KB_OK) {
        if (g)
            be->graph_free(r->bx, g);
        return est != KB_OK ? est : timer_fail(r, st, "graph capture");
    }
    if ((st = be->graph_launch(r->bx, g)) != KB_OK || (st = be->sync(r->bx)) != KB_OK) {
        timer_fail(r, st, "graph warm-up replay");
        goto fail;
    }
    for (int rep = 0; rep < reps; rep++) {
        if ((st = be->timer_start(r->bx)) != KB_OK) {
            timer_fail(r, st, "timer start");
            goto fail;
        }
        if ((st = be->graph_launch(r->bx, g)) != KB_OK) {
            double ignored;
            be->timer_stop(r->bx, &ignored);
            timer_fail(r, st, "graph launch");
            goto fail;
        }
        if ((st = be->timer_stop(r->bx, &dev[rep])) != KB_OK) {
            timer_fail(r, st, "timer stop");
            goto fail;
        }
    }
fail:
    be->graph_free(r->bx, g);
    return st;
}

/* The case's figures from its out->reps eager and graph windows. */
static void case_figures(kb_overhead *out, int n, double *eager, double *graph, double *host)
{
    double diff[KB_OVERHEAD_REPS];
    double per = (double)n * out->launches;
    int reps = out->reps;
    for (int i = 0; i < reps; i++)
        diff[i] = (eager[i] - graph[i]) / per;
    out->eager_us = median_of(eager, reps) / n;
    out->graph_us = median_of(graph, reps) / n;
    out->host_enqueue_us = median_of(host, reps) / per;
    out->per_launch_us = out->per_launch_q1_us = out->per_launch_q3_us = NAN;
    if (n < KB_OVERHEAD_MIN_N) {
        snprintf(out->null_reason, sizeof out->null_reason,
                 "only %d execution%s per window (at least %d are needed): the difference would be noise", n,
                 n == 1 ? "" : "s", KB_OVERHEAD_MIN_N);
        return;
    }
    qsort(diff, (size_t)reps, sizeof diff[0], cmp_double);
    out->per_launch_us = kb_stats_quantile_sorted(diff, reps, 0.5);
    out->per_launch_q1_us = kb_stats_quantile_sorted(diff, reps, 0.25);
    out->per_launch_q3_us = kb_stats_quantile_sorted(diff, reps, 0.75);
}

/* The empty-kernel floor: KB_OVERHEAD_EMPTY_N launches per window, out->reps times. */
static kb_status empty_floor(kb_run *r, void *state, kb_overhead *out)
{
    launcher el = { r, state, out->empty };
    double eager[KB_OVERHEAD_REPS], graph[KB_OVERHEAD_REPS], host[KB_OVERHEAD_REPS];
    int reps = out->reps;
    kb_status st;
    if ((st = exec_once(&el)) != KB_OK) /* warm-up: first launch loads the function */
        return st;
    if ((st = time_eager(&el, KB_OVERHEAD_EMPTY_N, reps, eager, host)) != KB_OK ||
        (st = time_graph(&el, KB_OVERHEAD_EMPTY_N, reps, graph)) != KB_OK)
        return st;
    out->empty_n = KB_OVERHEAD_EMPTY_N;
    out->empty_eager_us = median_of(eager, reps) / KB_OVERHEAD_EMPTY_N;
    out->empty_host_us = median_of(host, reps) / KB_OVERHEAD_EMPTY_N;
    out->empty_graph_us = median_of(graph, reps) / KB_OVERHEAD_EMPTY_N;
    return KB_OK;
}

kb_status kb_launch_overhead(kb_run *r, void *state, int n, kb_overhead *out)
{
    kb_module *empty = out->empty;
    double eager[KB_OVERHEAD_REPS], graph[KB_OVERHEAD_REPS], host[KB_OVERHEAD_REPS];
    kb_status st;
    memset(out, 0, sizeof *out);
    out->empty = empty;
    out->n = n;
    out->reps = KB_OVERHEAD_REPS;
    out->empty_eager_us = out->empty_graph_us = out->empty_host_us = NAN;
    if (n < 1)
        return kb_run_fail(r, KB_ERR_INPUT, "launch overhead: n = %d executions", n);
    if (!(r->be->caps & KB_CAP_GRAPHS))
        return kb_run_fail(r, KB_ERR_LAUNCH, "launch overhead: backend %s cannot capture graphs", r->be->name);

    launcher cl = { r, state, NULL };
    if ((st = count_case_launches(r, state, &out->launches)) != KB_OK)
        return st;
    if (out->launches < 1)
        return kb_run_fail(r, KB_ERR_INTERNAL, "launch overhead: the family's enqueue launched nothing");
    /* a window's launches queue behind the blocking kernel, and a driver blocks the host after
     * about a thousand queued launches (the window would then wait out the kernel's timeout) */
    if ((long)n * out->launches > KB_OVERHEAD_MAX_QUEUED)
        n = KB_OVERHEAD_MAX_QUEUED / out->launches > 1 ? KB_OVERHEAD_MAX_QUEUED / out->launches : 1;
    out->n = n;
    /* the emulator (no full speed) times one execution a window (kb_launch_overhead_n), too
     * few for a per-launch difference: its medians come from fewer windows */
    out->reps = r->be->caps & KB_CAP_FULL_SPEED ? KB_OVERHEAD_REPS : KB_OVERHEAD_FEW_REPS;
    if ((st = time_eager(&cl, n, out->reps, eager, host)) != KB_OK ||
        (st = time_graph(&cl, n, out->reps, graph)) != KB_OK)
        return st;
    case_figures(out, n, eager, graph, host);
    return empty ? empty_floor(r, state, out) : KB_OK;
}

double kb_overhead_floor_us(const kb_overhead *o)
{
    if (isnan(o->empty_host_us))
        return o->empty_eager_us;
    return isnan(o->empty_eager_us) || o->empty_host_us > o->empty_eager_us ? o->empty_host_us : o->empty_eager_us;
}

int kb_launch_overhead_n(double median_us, unsigned caps)
{
    const double budget_us = 20e3;
    /* the emulator: never the KB_OVERHEAD_MIN_N executions a per-launch figure needs, so one
     * execution per window gives its eager and graph medians at a quarter of the cost */
    int cap = caps & KB_CAP_FULL_SPEED ? 100 : 1;
    if (!(median_us > 0))
        return cap;
    double n = budget_us / median_us;
    return n >= cap ? cap : n < 1 ? 1 : (int)n;
}
