/* search.h - what every search strategy (strategy.h) shares: the space as a strategy sees
 * it, the objective it asks, the trace it leaves, and one search in progress with the
 * moves the strategies are made of (evaluate, draw an unvisited configuration, the
 * neighbours of one, the valid configuration nearest a point of the level grid).
 *
 * A strategy sees a configuration only as its levels on the axes: on an ordinal axis (a
 * tile size, a stage count) level i < j means value i < value j, so distances along it
 * mean something; on a categorical axis (the variant, a string) levels are names. The
 * space holds only configurations a real run would try: the statically invalid ones
 * (valid(), a cache's restrictions) are not in it. A configuration refused before
 * anything runs (pruned after compile, skipped, a cache's InvalidConfig) is answered
 * KB_TUNE_REFUSED: it costs nothing - not an evaluation of the budget, no time - and is
 * never the best nor visited again.
 *
 * Budgets: evaluations (distinct configurations), and/or simulated seconds when the view
 * knows what each evaluation costs (a Kernel Tuner cache's compile, verification and
 * benchmark times); the evaluation that crosses a time budget completes, as in Kernel
 * Tuner's simulation mode.
 */
#ifndef KB_TUNE_SEARCH_H
#define KB_TUNE_SEARCH_H

#include "core/kb.h"

#include <math.h>

/* The objective's answer for a configuration refused before it cost anything. */
#define KB_TUNE_REFUSED (-INFINITY)

/* Axes a search handles at most. */
#define KB_TUNE_SEARCH_MAX_AXES 64

/* The space as a strategy sees it: n configurations, each with n_axes levels. */
typedef struct {
    int n;
    int n_axes;
    const int *level;              /* [n * n_axes] level of each configuration on each axis (>= 0) */
    const unsigned char *categorical; /* [n_axes] 1: unordered names; 0 (or NULL: all) levels in value order */
    const double *prior;           /* [n] predicted time of each (the static estimate; smaller is better), NULL none */
    const double *cost_s;          /* [n] [s] what evaluating each costs (simulated budgets), NULL unknown */
} kb_tune_view;

/* The time of configuration i (smaller is better, >= 0; any unit): INFINITY when it
 * failed, KB_TUNE_REFUSED when refused before it cost anything, NAN to stop now
 * (interrupted, out of time). */
typedef double (*kb_tune_objective)(void *user, int i);

typedef struct {
    int evaluations;               /* distinct configurations evaluated (refused ones not counted) */
    int refused;                   /* configurations answered KB_TUNE_REFUSED */
    int best;                      /* index of the best, -1 when none succeeded */
    double best_time;              /* INFINITY when none succeeded */
    int best_found_at;             /* the evaluation (1-based) that found the best */
    int stopped;                   /* the objective asked to stop */
    double spent_s;                /* [s] simulated time spent (0 when the view has no costs) */
    int *order;                    /* [evaluations] configurations in evaluation order (owned) */
    double *times;                 /* [evaluations] their times (owned) */
    double *at_s;                  /* [evaluations] [s] simulated time spent up to and including each (owned) */
} kb_tune_trace;

void kb_tune_trace_free(kb_tune_trace *t);

/* One search in progress (the strategies' shared state). */
typedef struct {
    const kb_tune_view *v;
    kb_tune_objective fn;
    void *user;
    int budget;                    /* evaluations at most (1..n) */
    double budget_s;               /* [s] simulated seconds at most; 0: none */
    kb_rng rng;
    double *memo;                  /* [n] NAN until visited; the time, INFINITY failed or refused */
    int visited;                   /* configurations visited (evaluated or refused) */
    int *scratch;                  /* [n] neighbour lists */
    int n_levels[KB_TUNE_SEARCH_MAX_AXES];              /* per axis: 1 + the largest level */
    int *slot;                     /* [n_slot] hash of level vectors -> configuration + 1 (0: empty) */
    int n_slot;
    kb_tune_trace *t;
} kb_search;

/* Set up s for a search of v with fn (budget evaluations, budget_s seconds, seed) into
 * *t (emptied first). KB_OK; KB_ERR_INPUT when v has more than KB_TUNE_SEARCH_MAX_AXES axes or a
 * negative level; KB_ERR_INTERNAL out of memory (nothing to free then). */
kb_status kb_search_init(kb_search *s, const kb_tune_view *v, kb_tune_objective fn, void *user, int budget,
                         double budget_s, uint64_t seed, kb_tune_trace *t);
void kb_search_free(kb_search *s);

int kb_search_rnd(kb_search *s, int n);         /* uniform in [0, n), n >= 1 */
double kb_search_unif(kb_search *s);            /* uniform in [0, 1) */
double kb_search_normal(kb_search *s);          /* standard normal */

/* 1 when the search must end: budget spent, every configuration visited, or stopped. */
int kb_search_done(const kb_search *s);
/* The fraction of the budget spent, 0..1 (the larger of evaluations and seconds). */
double kb_search_progress(const kb_search *s);
/* The evaluations the budget is expected to allow (a time budget: at the mean cost so far). */
int kb_search_expected_evals(const kb_search *s);

/* The time of i, evaluating it when new. NAN when the search ends (budget, stop). */
double kb_search_eval(kb_search *s, int i);
/* The level of configuration i on axis a. */
static inline int kb_search_level(const kb_search *s, int i, int a)
{
    return s->v->level[(size_t)i * (size_t)s->v->n_axes + (size_t)a];
}
/* 1 when axis a is categorical. */
static inline int kb_search_categorical(const kb_search *s, int a) { return s->v->categorical && s->v->categorical[a]; }

/* A random configuration not visited yet, or -1. */
int kb_search_fresh(kb_search *s);
/* The unvisited configuration with the best prior, or -1 (no prior, or none left). */
int kb_search_prior_best(const kb_search *s);
/* The neighbours of i at the smallest Hamming distance >= min_d there is into s->scratch,
 * shuffled. Returns their count; *dist gets the distance (0 when none). */
int kb_search_neighbours(kb_search *s, int i, int min_d, int *dist);
/* The configuration with exactly levels lv[n_axes], or -1 (not in the space). */
int kb_search_find(const kb_search *s, const int *lv);
/* The configuration nearest the point pos[n_axes] of the level grid (ordinal axes scaled
 * to 0..1, a categorical axis 0 on its rounded level and 1 elsewhere); unvisited only
 * when fresh_only. Ties go to a random one of them. -1 when none. */
int kb_search_nearest(kb_search *s, const double *pos, int fresh_only);
/* A start for a local search: the prior's best when there is a prior, else (and then)
 * the best of k random configurations. -1 when none is left. */
int kb_search_sampled_start(kb_search *s, int k);

/* First-improvement hill climb from cur over its nearest neighbours (random order); at a
 * local optimum the next Hamming distance is tried once (two params that only move
 * together, as BM and WM), so the climb ends where neither improves. Returns the local
 * optimum reached (cur itself when the budget ends first). */
int kb_search_climb(kb_search *s, int cur);

#endif /* KB_TUNE_SEARCH_H */
