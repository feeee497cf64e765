/* report.h - replaying strategies on recorded spaces and comparing them the way Willemsen,
 * van Nieuwpoort and van Werkhoven, "A methodology for comparing optimization algorithms
 * for auto-tuning" (FGCS 2024) does (`kbench tune --replay FILE... --strategy all`).
 *
 * For each space (a file, replay.h) each strategy runs once per seed (1..repeats) up to
 * the largest budget, and its best so far is read at every budget: percentages of brute
 * force - of the configurations a strategy can spend evaluations on, or (time unit) of
 * the simulated seconds evaluating all of them costs - or one budget of evaluations or
 * seconds. At each budget: the median best / optimum with its interquartile range over
 * the seeds, the runs within 5% of the optimum, and random sampling computed exactly
 * (its expected best and the quartiles of its best: replay.h). Time budgets are turned
 * into random sampling's evaluations at the space's mean cost per evaluation, as the
 * methodology does.
 *
 * The score of a strategy on a space is the methodology's: at each of 20 budgets evenly
 * spread over the budgets asked for (one budget: that one), its mean best over the seeds
 * standardised as (random - found) / (random - optimum) - 1 at the optimum, 0 no better
 * than random sampling's expectation, negative worse - then averaged over the 20; the
 * aggregate score averages that over the spaces (a run that found nothing counts as the
 * slowest time of the space). With --prior estimate every strategy but brute and random
 * runs twice, with and without the prior ("name+estimate").
 *
 * The result is one JSON document (kb_tune_report_run); report_out.h renders it as text,
 * an SVG chart or an HTML page.
 */
#ifndef KB_TUNE_REPORT_H
#define KB_TUNE_REPORT_H

#include "tune/replay.h"
#include "tune/strategy.h"

#include <jansson.h>

#define KB_REPORT_MAX_BUDGETS 16
#define KB_REPORT_GRID 20          /* budgets the score averages over */

typedef struct {
    const char *const *paths;      /* the spaces */
    int n_paths;
    const char *filter;            /* kbench records: the problem (NULL: the largest) */
    int strategy;                  /* one strategy, or -1: every one */
    double budgets[KB_REPORT_MAX_BUDGETS]; /* percentages of brute force (0 < p <= 100) */
    int n_budgets;
    int time_unit;                 /* budgets are percentages of brute force's simulated time */
    int budget_evals;              /* > 0: one budget of this many evaluations instead */
    double budget_s;               /* > 0: one budget of this many simulated seconds instead */
    int repeats;                   /* seeds per strategy */
    int seed;                      /* the first seed */
    int prior;                     /* --prior estimate */
} kb_tune_report_opts;

/* Run the comparison o asks for. The JSON document (caller json_decref's it), or NULL with
 * the reason in err and *st: KB_ERR_INPUT (a file refused, a time budget on a space
 * without costs, a prior on a space the estimate does not know), KB_ERR_IO (a file
 * unreadable), KB_ERR_INTERNAL (out of memory). Warnings (several problems in a file,
 * CPU timings) go to stderr. */
json_t *kb_tune_report_run(const kb_tune_report_opts *o, kb_sb *err, kb_status *st);

/* One strategy, one seed, one budget on one space (`--strategy S`): the run's fields
 * (strategy, budget, evaluations, best and where it was found, optimum, random
 * sampling's expected best, ...). NULL with err and *st as above. */
json_t *kb_tune_report_one(const kb_tune_report_opts *o, kb_sb *err, kb_status *st);

#endif /* KB_TUNE_REPORT_H */
