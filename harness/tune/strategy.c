/* strategy.c - brute force, random sampling, greedy ILS and simulated annealing over
 * configuration levels (strategy.h). */
#include "tune/strategy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const kb_tune_strategy_names[] = { "brute", "random", "ils", "anneal", NULL };
_Static_assert(sizeof kb_tune_strategy_names / sizeof kb_tune_strategy_names[0] == KB_TUNE_STRATEGY_COUNT + 1,
               "one name per strategy");

const char *kb_tune_strategy_name(kb_tune_strategy s)
{
    return (unsigned)s < KB_TUNE_STRATEGY_COUNT ? kb_tune_strategy_names[s] : "?";
}

int kb_tune_strategy_parse(const char *s, kb_tune_strategy *out)
{
    for (int i = 0; i < KB_TUNE_STRATEGY_COUNT; i++)
        if (strcmp(s, kb_tune_strategy_names[i]) == 0) {
            *out = (kb_tune_strategy)i;
            return 0;
        }
    return -1;
}

/* One search in progress: the memo of evaluated configurations and the trace. */
typedef struct {
    const kb_tune_view *v;
    kb_tune_objective fn;
    void *user;
    int budget;
    kb_rng rng;
    double *memo;                  /* [n] NAN until evaluated */
    int *scratch;                  /* [n] neighbour lists */
    kb_tune_trace *t;
} search;

static int rnd(search *s, int n) { return (int)(kb_rng_u32(&s->rng) % (uint32_t)n); }

/* 1 when the search must end: budget spent, everything evaluated, or stopped. */
static int done(const search *s) { return s->t->stopped || s->t->evaluations >= s->budget; }

/* The time of i, evaluating it when new (within the budget). NAN when the search ends. */
static double eval(search *s, int i)
{
    if (!isnan(s->memo[i]))
        return s->memo[i];
    if (done(s))
        return NAN;
    double t = s->fn(s->user, i);
    if (isnan(t)) {
        s->t->stopped = 1;
        return NAN;
    }
    kb_tune_trace *tr = s->t;
    s->memo[i] = t;
    tr->order[tr->evaluations] = i;
    tr->times[tr->evaluations++] = t;
    if (t < tr->best_time) {
        tr->best_time = t;
        tr->best = i;
        tr->best_found_at = tr->evaluations;
    }
    return t;
}

static int hamming(const kb_tune_view *v, int a, int b)
{
    int d = 0;
    for (int k = 0; k < v->n_axes; k++)
        d += v->level[(size_t)a * (size_t)v->n_axes + (size_t)k] != v->level[(size_t)b * (size_t)v->n_axes + (size_t)k];
    return d;
}

/* The neighbours of i at the smallest Hamming distance >= min_d there is (1: one axis
 * changed; a sparse space or a coupled pair of params may need more) into s->scratch,
 * shuffled. Returns their count; *dist gets the distance. */
static int neighbours_from(search *s, int i, int min_d, int *dist)
{
    int best_d = 0, n = 0;
    for (int j = 0; j < s->v->n; j++) {
        int d = j == i ? 0 : hamming(s->v, i, j);
        if (d < min_d)
            continue;
        if (best_d == 0 || d < best_d) {
            best_d = d;
            n = 0;
        }
        if (d == best_d)
            s->scratch[n++] = j;
    }
    for (int k = n - 1; k > 0; k--) {
        int r = rnd(s, k + 1), tmp = s->scratch[k];
        s->scratch[k] = s->scratch[r];
        s->scratch[r] = tmp;
    }
    *dist = best_d;
    return n;
}

static int neighbours(search *s, int i)
{
    int d;
    return neighbours_from(s, i, 1, &d);
}

/* A random configuration not evaluated yet, or -1. */
static int fresh(search *s)
{
    int left = s->v->n - s->t->evaluations;
    if (left <= 0)
        return -1;
    int k = rnd(s, left);
    for (int j = 0; j < s->v->n; j++)
        if (isnan(s->memo[j]) && k-- == 0)
            return j;
    return -1;
}

static void run_brute(search *s)
{
    for (int i = 0; i < s->v->n && !done(s); i++)
        eval(s, i);
}

static void run_random(search *s)
{
    int i;
    while (!done(s) && (i = fresh(s)) >= 0)
        eval(s, i);
}

/* The first neighbour of cur (at the nearest distance >= min_d, random order) faster than
 * t, or -1; *dist gets the distance searched. */
static int improve(search *s, int cur, double t, int min_d, int *dist)
{
    int n = neighbours_from(s, cur, min_d, dist), found = -1;
    int *nb = malloc((size_t)(n ? n : 1) * sizeof *nb);
    if (!nb)
        return -1;
    memcpy(nb, s->scratch, (size_t)n * sizeof *nb);
    for (int k = 0; k < n && !done(s) && found < 0; k++)
        if (eval(s, nb[k]) < t)
            found = nb[k];
    free(nb);
    return found;
}

/* First-improvement hill climb from cur over the nearest neighbours; at a local optimum
 * the next distance is tried once (two params that only move together, as BM and WM), so
 * the climb ends where neither improves. Returns the local optimum. */
static int climb(search *s, int cur)
{
    double t = eval(s, cur);
    while (!done(s)) {
        int d, next = improve(s, cur, t, 1, &d);
        if (next < 0 && d > 0 && !done(s))
            next = improve(s, cur, t, d + 1, &d);
        if (next < 0)
            break;
        cur = next;
        t = s->memo[cur];
    }
    return cur;
}

/* The best of a few random configurations (about a tenth of the budget, 2 to 10): a start
 * for a local search that is not left to one draw. -1 when none is left. */
static int sampled_start(search *s)
{
    int k = s->budget / 10, best = -1;
    k = k < 2 ? 2 : k > 10 ? 10 : k;
    for (int i = 0; i < k && !done(s); i++) {
        int j = fresh(s);
        if (j < 0)
            break;
        if (best < 0 || eval(s, j) < s->memo[best])
            best = j;
    }
    return best;
}

static void run_ils(search *s, int patience)
{
    int start = sampled_start(s);
    while (start >= 0 && !done(s)) {
        int opt = climb(s, start);
        int stale = 0;
        while (!done(s) && stale < patience) {
            double before = s->t->best_time;
            int p = opt;
            for (int step = 0; step < 3; step++) {   /* a random walk of three neighbour steps */
                int n = neighbours(s, p);
                if (n > 0)
                    p = s->scratch[rnd(s, n)];
            }
            int o2 = climb(s, p);
            if (s->memo[o2] < s->memo[opt])
                opt = o2;
            stale = s->t->best_time < before ? 0 : stale + 1;
        }
        start = fresh(s);
    }
}

static void run_anneal(search *s)
{
    int cur = sampled_start(s);
    if (cur < 0)
        return;
    double t = eval(s, cur), temp = 0.2;
    long steps = 0, max_steps = 100L * s->v->n + 1000;
    while (!done(s) && steps++ < max_steps) {
        int n = neighbours(s, cur);
        int next = n > 0 ? s->scratch[rnd(s, n)] : fresh(s);
        if (next < 0)
            break;
        double tn = eval(s, next);
        if (isnan(tn))
            break;
        double worse = isinf(t) ? -1.0 : isinf(tn) ? INFINITY : (tn - t) / t;
        double u = (double)kb_rng_u32(&s->rng) / 4294967296.0;
        if (worse < 0 || u < exp(-worse / temp)) {
            cur = next;
            t = tn;
        }
        temp = 0.2 * pow(1e-3 / 0.2, (double)s->t->evaluations / s->budget);   /* cools over the budget */
        if (n > 0 && steps % 50 == 0) {      /* every neighbour known: jump to a new point */
            int unseen = 0;
            for (int k = 0; k < n; k++)
                unseen += isnan(s->memo[s->scratch[k]]);
            if (!unseen && (next = fresh(s)) >= 0 && !isnan(tn = eval(s, next)) && tn < t) {
                cur = next;
                t = tn;
            }
        }
    }
    run_random(s);   /* steps exhausted in a small space: spend the rest of the budget */
}

kb_status kb_tune_search(const kb_tune_search_opts *o, const kb_tune_view *v, kb_tune_objective fn, void *user,
                         kb_tune_trace *out)
{
    memset(out, 0, sizeof *out);
    out->best = -1;
    out->best_time = INFINITY;
    int n = v->n;
    search s = { v, fn, user, o->budget > 0 && o->budget < n ? o->budget : n, { { 0 } }, NULL, NULL, out };
    kb_rng_seed(&s.rng, o->seed);
    size_t cells = (size_t)(n ? n : 1);
    s.memo = malloc(cells * sizeof *s.memo);
    s.scratch = malloc(cells * sizeof *s.scratch);
    out->order = malloc(cells * sizeof *out->order);
    out->times = malloc(cells * sizeof *out->times);
    if (!s.memo || !s.scratch || !out->order || !out->times) {
        free(s.memo);
        free(s.scratch);
        kb_tune_trace_free(out);
        return KB_ERR_INTERNAL;
    }
    for (int i = 0; i < n; i++)
        s.memo[i] = NAN;
    if (n > 0) {
        if (o->strategy == KB_TUNE_BRUTE)
            run_brute(&s);
        else if (o->strategy == KB_TUNE_RANDOM)
            run_random(&s);
        else if (o->strategy == KB_TUNE_ILS)
            run_ils(&s, o->patience > 0 ? o->patience : 5);
        else
            run_anneal(&s);
    }
    free(s.memo);
    free(s.scratch);
    return KB_OK;
}

void kb_tune_trace_free(kb_tune_trace *t)
{
    free(t->order);
    free(t->times);
    memset(t, 0, sizeof *t);
    t->best = -1;
}
