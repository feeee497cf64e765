/* measure.c - the sampling loop (see measure.h). */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

double kb_measure_noise(const kb_stats *st)
{
    if (st->n < 2 || st->median <= 0)
        return INFINITY;
    return 1.2533 * st->stddev / sqrt((double)st->n) / st->median;
}

/* One execution: the family's launches, or one replay of the captured graph. */
static kb_status execute_once(kb_run *r, void *state, kb_graph *g)
{
    if (g) {
        kb_status st = r->be->graph_launch(r->bx, g);
        return st == KB_OK ? KB_OK : kb_run_fail(r, st, "graph launch: %s", r->be->last_error(r->bx));
    }
    return r->f->enqueue(r, state);
}

kb_status kb_measure_case(kb_run *r, void *state, const kb_measure_opts *o, kb_measurement *m)
{
    const kb_backend *be = r->be;
    kb_graph *g = NULL;
    kb_status st = KB_OK;
    memset(m, 0, sizeof *m);
    int cap = o->max_samples > 0 ? o->max_samples : 1000;
    m->samples_us = malloc((size_t)cap * sizeof(double));
    if (!m->samples_us)
        return kb_run_fail(r, KB_ERR_OOM, "sample buffer");

    if (r->c->launch == KB_LAUNCH_GRAPH) {
        if (!be->graph_begin)
            return kb_run_fail(r, KB_ERR_LAUNCH, "backend %s cannot capture graphs", be->name);
        if ((st = be->graph_begin(r->bx)) != KB_OK)
            return kb_run_fail(r, st, "graph capture: %s", be->last_error(r->bx));
        kb_status est = r->f->enqueue(r, state);
        if ((st = be->graph_end(r->bx, &g)) != KB_OK || est != KB_OK) {
            if (g)
                be->graph_free(r->bx, g);
            return est != KB_OK ? est : kb_run_fail(r, st, "graph capture: %s", be->last_error(r->bx));
        }
    }

    for (int i = 0; i < o->warmup; i++)
        if ((st = execute_once(r, state, g)) != KB_OK)
            goto done;
    if (o->warmup > 0 && (st = be->sync(r->bx)) != KB_OK) {
        kb_run_fail(r, st, "synchronise after warm-up: %s", be->last_error(r->bx));
        goto done;
    }

    double t0 = wall_s();
    while (m->n < cap) {
        double us = 0;
        if ((st = be->timer_start(r->bx)) != KB_OK) {
            kb_run_fail(r, st, "timer start: %s", be->last_error(r->bx));
            goto done;
        }
        if ((st = execute_once(r, state, g)) != KB_OK)
            goto done;
        if ((st = be->timer_stop(r->bx, &us)) != KB_OK) {
            kb_run_fail(r, st, "timer stop: %s", be->last_error(r->bx));
            goto done;
        }
        m->samples_us[m->n++] = us;
        if (m->n < o->min_samples)
            continue;
        kb_stats_compute(m->samples_us, m->n, &m->st);
        m->noise = kb_measure_noise(&m->st);
        if (m->noise <= o->max_noise)
            break;
        if (wall_s() - t0 >= o->timeout_s) {
            m->timed_out = 1;
            break;
        }
    }
    kb_stats_compute(m->samples_us, m->n, &m->st);
    m->noise = kb_measure_noise(&m->st);
done:
    if (g)
        be->graph_free(r->bx, g);
    return st;
}

void kb_measurement_free(kb_measurement *m)
{
    free(m->samples_us);
    m->samples_us = NULL;
    m->n = 0;
}
