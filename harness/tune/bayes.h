/* bayes.h - Bayesian optimisation over the level grid (strategy.h's bayes), after
 * Willemsen et al., "Bayesian Optimization for auto-tuning GPU kernels" (PMBS 2021).
 *
 * Surrogate: a Gaussian process of standardised log time. Each configuration is a point:
 * on an ordinal axis its level scaled to 0..1 (tile sizes listed as powers of two are
 * then equally spaced, as their logarithms), on a categorical axis its level as a name.
 * Kernel: Matern 5/2 of the distance whose square sums, per axis, the squared ordinal
 * difference, or 1 where a categorical axis differs (an overlap, or Hamming, kernel), each
 * divided by that axis' length scale squared (automatic relevance determination: a sweep
 * over the axes halving or doubling each length scale, 0.05 to 50 of the axis' range, and
 * the noise from {1e-4, 1e-2, 0.1}, kept where the marginal likelihood gains; every 5
 * steps, two sweeps from 0.5 the first time - one shared length scale could not fit the
 * real landscapes: it fell to its smallest value and the model to noise). Failed
 * configurations count as 1.5x the slowest time measured. The training set is every
 * evaluation up to 128, then the 80 fastest and the 48 latest. Factorisations by LAPACK
 * (dpotrf, dpotrs, dtrtrs through LAPACKE).
 *
 * Acquisition: expected improvement (xi 0.01 standard deviations) over the unevaluated
 * configurations - all of them up to 512, else the neighbours of the three fastest and
 * random ones, 512 in all; past 100 evaluations the best few per fit (one more per 100
 * evaluations, at most 8), so that a budget of 1,800 evaluations costs seconds. Initial
 * design: one more configuration than the axes that vary (5 to 10, at most half the
 * budget but at least 5, or the whole budget below 5), a Latin hypercube of the level grid (kb_search_lhs), each point the nearest
 * unevaluated configuration (kb_search_nearest), as Kernel Tuner's
 * Bayesian optimisation starts from a Latin hypercube (before issue 25's last step: random
 * draws, which at budgets of a few evaluations made bayes random sampling with 20 seeds'
 * scatter).
 *
 * With a prior (the static estimate of each configuration) the first evaluation is the
 * prior's best, and the GP's mean is a line in the standardised log estimate, fitted to
 * the evaluations by least squares (a slope below 0 - an estimate that ranks backwards -
 * is dropped): the process models how far the measurements stray from the estimate.
 */
#ifndef KB_TUNE_BAYES_H
#define KB_TUNE_BAYES_H

#include "tune/search.h"

/* Run Bayesian optimisation on s until its budget is spent or nothing is left. KB_OK;
 * KB_ERR_INTERNAL out of memory (the trace keeps what was done). */
kb_status kb_search_bayes(kb_search *s);

#endif /* KB_TUNE_BAYES_H */
