/* anneal2.h - dual annealing on the level grid (strategy.h's dualanneal): SciPy's
 * dual_annealing (Xiang et al. 1997; Tsallis and Stariolo 1996, generalized simulated
 * annealing) carried to a discrete space.
 *
 * The point is continuous in level units; each iteration is a Markov chain of 2 x axes
 * steps: the first `axes` move every coordinate by a draw of the Tsallis visiting
 * distribution (qv 2.62, heavy tailed: mostly short moves, some across the whole range),
 * the next `axes` one coordinate each; out-of-range coordinates wrap around. A step is
 * snapped to the nearest configuration of the space and accepted when faster, else with
 * the generalized Metropolis probability (qa -5) on log time. The temperature follows
 * SciPy's schedule T0 (2^(qv-1) - 1) / ((1 + t)^(qv-1) - 1) with T0 5230, but t runs
 * over 300 iterations across the budget (SciPy: 1000 iterations of a continuous
 * function), so the moves shrink to about a level by the end of any budget. Every new
 * best is followed by a local descent over its neighbours (the "dual" phase; SciPy uses
 * L-BFGS-B); below 2e-5 T0, or after 50 x axes steps that found nothing new, the search
 * restarts at a random configuration.
 */
#ifndef KB_TUNE_ANNEAL2_H
#define KB_TUNE_ANNEAL2_H

#include "tune/search.h"

/* Run dual annealing on s until its budget is spent or nothing is left. KB_OK. */
kb_status kb_search_dualanneal(kb_search *s);

#endif /* KB_TUNE_ANNEAL2_H */
