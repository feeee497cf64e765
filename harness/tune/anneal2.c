/* anneal2.c - dual annealing on the level grid (anneal2.h). The visiting distribution
 * and the acceptance rule follow SciPy's scipy/optimize/_dual_annealing.py. */
#include "tune/anneal2.h"

#include <stdlib.h>
#include <string.h>

#define QV 2.62          /* visiting parameter */
#define QA (-5.0)        /* acceptance parameter */
#define T0 5230.0        /* initial temperature */
#define RESTART 2e-5     /* restart below this fraction of T0 */
#define ITERATIONS 300.0 /* the schedule's iterations over the budget */
#define TAIL 1e8

typedef struct {
    double f4p, f6;      /* the visiting distribution's constant factors */
    double x[KB_TUNE_SEARCH_MAX_AXES];
    int cur;             /* the configuration x snaps to */
    double e;            /* its energy: log time (INFINITY failed) */
} annealer;

static void factors(annealer *an)
{
    double f2 = exp((4.0 - QV) * log(QV - 1.0)), f3 = exp((2.0 - QV) * log(2.0) / (QV - 1.0));
    double f5 = 1.0 / (QV - 1.0) - 0.5, d1 = 2.0 - f5;
    an->f4p = sqrt(M_PI) * f2 / (f3 * (3.0 - QV));
    an->f6 = M_PI * (1.0 - f5) / sin(M_PI * (1.0 - f5)) / exp(lgamma(d1));
}

/* One draw of the visiting distribution at temperature t (SciPy's visit_fn). */
static double visit(kb_search *s, const annealer *an, double t)
{
    double f1 = exp(log(t) / (QV - 1.0)), f4 = an->f4p * f1;
    double x = kb_search_normal(s) * exp(-(QV - 1.0) * log(an->f6 / f4) / (3.0 - QV));
    double y = fabs(kb_search_normal(s));
    double den = exp((QV - 1.0) * log(y > 1e-300 ? y : 1e-300) / (3.0 - QV));
    double v = x / den;
    if (v > TAIL || v < -TAIL)   /* as SciPy: a clipped draw lands anywhere up to the limit */
        v = (v > 0 ? TAIL : -TAIL) * kb_search_unif(s);
    return v;
}

/* Coordinate a moved by v, wrapped into [0, levels) as SciPy wraps into its bounds. */
static double wrap(const kb_search *s, int a, double x)
{
    double range = s->n_levels[a];
    double w = fmod(fmod(x, range) + range, range);
    return w;
}

static double energy(double t) { return isfinite(t) && t > 0 ? log(t) : INFINITY; }

static void place(kb_search *s, annealer *an, int i)
{
    an->cur = i;
    an->e = energy(s->memo[i]);
    for (int a = 0; a < s->v->n_axes; a++)
        an->x[a] = kb_search_level(s, i, a);
}

/* The generalized Metropolis rule (qa < 1) at step temperature ts. */
static int accept(kb_search *s, double e_new, double e_cur, double ts)
{
    if (e_new < e_cur || (isinf(e_cur) && !isinf(e_new)))
        return 1;
    if (isinf(e_new))
        return 0;
    double p = 1.0 - (1.0 - QA) * (e_new - e_cur) / ts;
    return p > 0 && kb_search_unif(s) <= exp(log(p) / (1.0 - QA));
}

/* One step of the chain: step j < axes moves every coordinate, else coordinate j - axes.
 * Returns 0, or -1 when the search ends. *fresh gets 1 when it evaluated something new. */
static int step(kb_search *s, annealer *an, int j, double t, double ts, int *fresh)
{
    int na = s->v->n_axes;
    double y[KB_TUNE_SEARCH_MAX_AXES];
    memcpy(y, an->x, (size_t)na * sizeof *y);
    for (int a = 0; a < na; a++)
        if (j < na || a == j - na)
            y[a] = wrap(s, a, y[a] + visit(s, an, t));
    for (int a = 0; a < na; a++)   /* the continuous point's cell: its rounded level */
        y[a] = y[a] > s->n_levels[a] - 1 ? s->n_levels[a] - 1 : y[a];
    int c = kb_search_nearest(s, y, 0);
    if (c < 0)
        return -1;
    *fresh = isnan(s->memo[c]);
    double tc = kb_search_eval(s, c);
    if (isnan(tc))
        return -1;
    if (accept(s, energy(tc), an->e, ts)) {
        memcpy(an->x, y, (size_t)na * sizeof *y);
        an->cur = c;
        an->e = energy(tc);
    }
    return 0;
}

kb_status kb_search_dualanneal(kb_search *s)
{
    annealer an;
    factors(&an);
    int start = kb_search_sampled_start(s, 1), idle = 0;
    if (start < 0)
        return KB_OK;
    place(s, &an, start);
    double t_start = 0;   /* the progress at the last restart */
    while (!kb_search_done(s)) {
        double it = 1.0 + ITERATIONS * (kb_search_progress(s) - t_start);
        double t = T0 * (pow(2.0, QV - 1.0) - 1.0) / (pow(1.0 + it, QV - 1.0) - 1.0);
        if (t < RESTART * T0 || idle > 50 * s->v->n_axes) {   /* cold, or only known points around */
            int r = kb_search_fresh(s);
            if (r < 0 || isnan(kb_search_eval(s, r)))
                break;
            place(s, &an, r);
            t_start = kb_search_progress(s);
            idle = 0;
            continue;
        }
        double best_before = s->t->best_time;
        for (int j = 0; j < 2 * s->v->n_axes && !kb_search_done(s); j++) {
            int fresh = 0;
            if (step(s, &an, j, t, t / (it + 1.0), &fresh) < 0)
                return KB_OK;
            idle = fresh ? 0 : idle + 1;
        }
        if (s->t->best_time < best_before && s->t->best >= 0) {   /* the dual phase: descend from the new best */
            place(s, &an, kb_search_climb(s, s->t->best));
            idle = 0;
        }
    }
    return KB_OK;
}
