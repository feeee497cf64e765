/* strategy.h - search strategies over a tuning space, pure: they see configurations only
 * as levels on axes (search.h) and their times through an objective callback, so they run
 * the same on live measurements, on replayed records and on synthetic landscapes (tests).
 *
 *   brute       every configuration in order (the budget, when given, cuts it short)
 *   random      a seeded random order without repeats, `budget` of them
 *   ils         greedy iterated local search (Kernel Tuner's greedy_ils): from the best of a
 *               few random configurations (a tenth of the budget, 2 to 10), first-improvement
 *               hill climbing over the Hamming neighbours (configurations that differ on one
 *               axis) in random order, and where none improves, once over those two axes
 *               away (coupled params: BM >= WM, so BM and WM often move together); at a
 *               local optimum a random walk of three neighbour steps restarts the climb;
 *               after `patience` perturbations without a new best, a fresh random start
 *   anneal      simulated annealing over the same neighbours from the same sampled start: a
 *               random neighbour is accepted with probability exp(-relative worsening / T), T
 *               cooling geometrically from 0.2 to 0.001 over the budget
 *   genetic     a genetic algorithm (evolve.c): a population of 20, tournament selection,
 *               uniform crossover, mutation to a neighbouring level, elitism
 *   diffevo     differential evolution (evolve.c): best/1/bin on the level grid, each trial
 *               snapped to the nearest valid configuration not evaluated yet
 *   dualanneal  dual annealing (anneal2.c): generalized simulated annealing (Tsallis
 *               visiting distribution, qv 2.62) with a local descent from every new best
 *   bayes       Bayesian optimisation (bayes.c): a Gaussian process over the levels
 *               (Matern 5/2 on ordinal axes, an overlap kernel on categorical ones) of log
 *               time, expected improvement over the unevaluated configurations
 * A configuration is evaluated at most once (memoised); the budget counts evaluations
 * and/or simulated seconds (search.h); a failed configuration (time INFINITY) is never
 * the best; a refused one costs nothing. With a prior (the static estimate) every
 * strategy but brute and random starts from the prior's best, and bayes models the
 * difference from it.
 */
#ifndef KB_TUNE_STRATEGY_H
#define KB_TUNE_STRATEGY_H

#include "tune/search.h"

typedef enum {
    KB_TUNE_BRUTE = 0,
    KB_TUNE_RANDOM,
    KB_TUNE_ILS,
    KB_TUNE_ANNEAL,
    KB_TUNE_GENETIC,
    KB_TUNE_DIFFEVO,
    KB_TUNE_DUALANNEAL,
    KB_TUNE_BAYES,
    KB_TUNE_STRATEGY_COUNT
} kb_tune_strategy;

/* The strategy `kbench tune` uses unless told (chosen from the measured curves of
 * bench/tune_strategies.sh: docs/tuning.md "Choosing the default"). */
#define KB_TUNE_DEFAULT_STRATEGY "bayes"

extern const char *const kb_tune_strategy_names[];   /* NULL-terminated, in enum order (CLI choices) */
const char *kb_tune_strategy_name(kb_tune_strategy s); /* "brute", ...; "?" out of range */
int kb_tune_strategy_parse(const char *s, kb_tune_strategy *out); /* 0, or -1 for an unknown name */

typedef struct {
    kb_tune_strategy strategy;
    int budget;                    /* evaluations at most; <= 0: every configuration */
    uint64_t seed;
    int patience;                  /* ils: perturbations without a new best before a restart (0: 5) */
    double budget_s;               /* [s] simulated seconds at most (needs the view's costs); 0: none */
} kb_tune_search_opts;

/* Search v with o, asking fn for times. KB_OK with *out filled (free with
 * kb_tune_trace_free); KB_ERR_INPUT when v has too many axes or a negative level;
 * KB_ERR_INTERNAL when out of memory. */
kb_status kb_tune_search(const kb_tune_search_opts *o, const kb_tune_view *v, kb_tune_objective fn, void *user,
                         kb_tune_trace *out);

#endif /* KB_TUNE_STRATEGY_H */
