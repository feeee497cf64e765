/* evolve.c - the genetic algorithm and differential evolution on the level grid (evolve.h). */
#include "tune/evolve.h"

#include <stdlib.h>
#include <string.h>

#define POP_MAX 20

/* The population size for the budget: 20, or a fifth of a budget under 100 (>= 4). */
static int pop_size(const kb_search *s)
{
    int b = kb_search_expected_evals(s), p = b < 100 ? b / 5 : POP_MAX;
    return p < 4 ? 4 : p;
}

/* The initial population into pop: the prior's best, then random configurations (the
 * draws random sampling makes for the same seed). Returns its size (< want when the
 * budget or the space ran out). */
static int initial(kb_search *s, int *pop, int want)
{
    int n = 0, j = kb_search_prior_best(s);
    if (j >= 0 && !isnan(kb_search_eval(s, j)))
        pop[n++] = j;
    while (n < want && !kb_search_done(s) && (j = kb_search_fresh(s)) >= 0)
        if (!isnan(kb_search_eval(s, j)))
            pop[n++] = j;
    return n;
}

static int faster(const kb_search *s, int a, int b) { return s->memo[a] < s->memo[b]; }

/* Sort pop[0..n) fastest first (insertion sort: n <= 2 x POP_MAX). */
static void rank(const kb_search *s, int *pop, int n)
{
    for (int i = 1; i < n; i++) {
        int x = pop[i], k = i;
        while (k > 0 && faster(s, x, pop[k - 1])) {
            pop[k] = pop[k - 1];
            k--;
        }
        pop[k] = x;
    }
}

static int tournament(kb_search *s, const int *pop, int n)
{
    int a = pop[kb_search_rnd(s, n)], b = pop[kb_search_rnd(s, n)];
    return faster(s, b, a) ? b : a;
}

/* Mutate lv in place: each axis with probability 1/axes (at least one axis changes). */
static void mutate(kb_search *s, int *lv)
{
    int na = s->v->n_axes, forced = kb_search_rnd(s, na);
    for (int a = 0; a < na; a++) {
        int nl = s->n_levels[a];
        if (nl < 2 || (a != forced && kb_search_rnd(s, na) != 0))
            continue;
        if (kb_search_categorical(s, a)) {
            lv[a] = (lv[a] + 1 + kb_search_rnd(s, nl - 1)) % nl;
        } else {
            int step = kb_search_rnd(s, 2) ? 1 : -1;
            lv[a] = lv[a] + step < 0 || lv[a] + step >= nl ? lv[a] - step : lv[a] + step;
        }
    }
}

/* A child of p and q: uniform crossover, mutation; retried while it is not in the space
 * or was evaluated, then the unevaluated configuration nearest it. -1 when none is left. */
static int child(kb_search *s, int p, int q)
{
    int na = s->v->n_axes, lv[KB_TUNE_SEARCH_MAX_AXES];
    double pos[KB_TUNE_SEARCH_MAX_AXES];
    for (int a = 0; a < na; a++)
        lv[a] = kb_search_level(s, kb_search_rnd(s, 2) ? p : q, a);
    if (kb_search_rnd(s, 4) == 0)
        mutate(s, lv);   /* crossover alone is often enough; a quarter mutate anyway */
    for (int tries = 0; tries < 8; tries++) {
        int c = kb_search_find(s, lv);
        if (c >= 0 && isnan(s->memo[c]))
            return c;
        mutate(s, lv);
    }
    for (int a = 0; a < na; a++)
        pos[a] = lv[a];
    return kb_search_nearest(s, pos, 1);
}

kb_status kb_search_genetic(kb_search *s)
{
    int want = pop_size(s);
    int *pop = malloc(2 * POP_MAX * sizeof *pop);
    if (!pop)
        return KB_ERR_INTERNAL;
    int n = initial(s, pop, want);
    while (n > 0 && !kb_search_done(s)) {
        rank(s, pop, n);
        int kids = 0;
        while (kids < want && !kb_search_done(s)) {
            int c = child(s, tournament(s, pop, n), tournament(s, pop, n));
            if (c < 0 || isnan(kb_search_eval(s, c)))
                break;
            pop[n + kids++] = c;
        }
        if (kids == 0)
            break;
        rank(s, pop, n + kids);   /* elitism: the best `want` of parents and children */
        n = n + kids < want ? n + kids : want;
    }
    free(pop);
    return KB_OK;
}

/* The trial of differential evolution for member x (best/1/bin) snapped into the space:
 * the nearest unevaluated configuration, -1 when none. */
static int trial(kb_search *s, int x, int best, int a, int b, double f)
{
    int na = s->v->n_axes, forced = kb_search_rnd(s, na);
    double pos[KB_TUNE_SEARCH_MAX_AXES];
    for (int k = 0; k < na; k++) {
        double m;
        if (kb_search_categorical(s, k)) {
            int la = kb_search_level(s, a, k), lb = kb_search_level(s, b, k);
            m = la != lb && kb_search_unif(s) < f ? la : kb_search_level(s, best, k);
        } else {
            m = kb_search_level(s, best, k) + f * (kb_search_level(s, a, k) - kb_search_level(s, b, k));
            m = m < 0 ? 0 : m > s->n_levels[k] - 1 ? s->n_levels[k] - 1 : m;
        }
        pos[k] = k == forced || kb_search_unif(s) < 0.7 ? m : kb_search_level(s, x, k);
    }
    return kb_search_nearest(s, pos, 1);
}

kb_status kb_search_diffevo(kb_search *s)
{
    int want = pop_size(s);
    int *pop = malloc(POP_MAX * sizeof *pop);
    if (!pop)
        return KB_ERR_INTERNAL;
    int n = initial(s, pop, want);
    while (n >= 3 && !kb_search_done(s)) {
        double f = 0.5 + 0.5 * kb_search_unif(s);   /* dither, as SciPy's mutation=(0.5, 1) */
        int best = 0;
        for (int j = 1; j < n; j++)
            best = faster(s, pop[j], pop[best]) ? j : best;
        int moved = 0;
        for (int j = 0; j < n && !kb_search_done(s); j++) {
            int a, b;
            do
                a = kb_search_rnd(s, n);
            while (a == j);
            do
                b = kb_search_rnd(s, n);
            while (b == j || b == a);
            int c = trial(s, pop[j], pop[best], pop[a], pop[b], f);
            if (c < 0 || isnan(kb_search_eval(s, c)))
                break;
            moved++;
            if (!faster(s, pop[j], c))
                pop[j] = c;
        }
        if (!moved)
            break;
    }
    free(pop);
    return KB_OK;
}
