/* strategy.h - search strategies over a tuning space, pure: they see configurations only
 * as levels on axes (space.h) and their times through an objective callback, so they run
 * the same on live measurements, on replayed records and on synthetic landscapes (tests).
 *
 *   brute   every configuration in order (the budget, when given, cuts it short)
 *   random  a seeded random order without repeats, `budget` of them
 *   ils     greedy iterated local search (Kernel Tuner's greedy_ils): from the best of a few
 *           random configurations (a tenth of the budget, 2 to 10), first-improvement hill
 *           climbing over the Hamming neighbours (configurations that differ on one axis)
 *           in random order, and where none improves, once over those two axes away
 *           (coupled params: BM >= WM, so BM and WM often move together); at a local
 *           optimum a random walk of three neighbour steps restarts the climb; after
 *           `patience` perturbations without a new best, a fresh random start
 *   anneal  simulated annealing over the same neighbours from the same sampled start: a
 *           random neighbour is accepted with probability exp(-relative worsening / T), T
 *           cooling geometrically from 0.2 to 0.001 over the budget
 * A configuration is evaluated at most once (memoised); the budget counts evaluations.
 * A failed configuration (time INFINITY) is never the best.
 */
#ifndef KB_TUNE_STRATEGY_H
#define KB_TUNE_STRATEGY_H

#include "core/kb.h"

typedef enum { KB_TUNE_BRUTE = 0, KB_TUNE_RANDOM, KB_TUNE_ILS, KB_TUNE_ANNEAL, KB_TUNE_STRATEGY_COUNT } kb_tune_strategy;

extern const char *const kb_tune_strategy_names[];   /* NULL-terminated, in enum order (CLI choices) */
const char *kb_tune_strategy_name(kb_tune_strategy s); /* "brute", ...; "?" out of range */
int kb_tune_strategy_parse(const char *s, kb_tune_strategy *out); /* 0, or -1 for an unknown name */

/* The space as a strategy sees it: n configurations, each with n_axes levels. */
typedef struct {
    int n;
    int n_axes;
    const int *level;              /* [n * n_axes] */
} kb_tune_view;

/* The time of configuration i (smaller is better; any unit): INFINITY when it failed,
 * NAN to stop the search now (interrupted). */
typedef double (*kb_tune_objective)(void *user, int i);

typedef struct {
    kb_tune_strategy strategy;
    int budget;                    /* evaluations at most; <= 0: every configuration */
    uint64_t seed;
    int patience;                  /* ils: perturbations without a new best before a restart (0: 5) */
} kb_tune_search_opts;

typedef struct {
    int evaluations;               /* distinct configurations evaluated */
    int best;                      /* index of the best, -1 when none succeeded */
    double best_time;              /* INFINITY when none succeeded */
    int best_found_at;             /* the evaluation (1-based) that found the best */
    int stopped;                   /* the objective asked to stop */
    int *order;                    /* [evaluations] configurations in evaluation order (owned) */
    double *times;                 /* [evaluations] their times (owned) */
} kb_tune_trace;

/* Search v with o, asking fn for times. KB_OK with *out filled (free with
 * kb_tune_trace_free), KB_ERR_INTERNAL when out of memory. */
kb_status kb_tune_search(const kb_tune_search_opts *o, const kb_tune_view *v, kb_tune_objective fn, void *user,
                         kb_tune_trace *out);
void kb_tune_trace_free(kb_tune_trace *t);

#endif /* KB_TUNE_STRATEGY_H */
