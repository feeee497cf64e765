/* evolve.h - population strategies on the level grid (strategy.h's genetic and diffevo).
 *
 * genetic   Kernel Tuner's genetic_algorithm in outline: a population of 20 (fewer at a
 *           budget under 100 evaluations: a fifth of it, at least 4) drawn at random (the
 *           prior's best first when there is a prior); each generation, parents chosen by
 *           tournaments of two, uniform crossover, each axis mutated with probability
 *           1/axes (an ordinal axis one level up or down, a categorical one to any level);
 *           a child that is not in the space or was evaluated is mutated again (up to 8
 *           times), else the unevaluated configuration nearest it is taken; the best of
 *           parents and children survive (elitism).
 * diffevo   differential evolution, best/1/bin as SciPy's default (Storn and Price 1997):
 *           for each member x, a mutant best + F (a - b) on the level grid (F dithered in
 *           [0.5, 1) per generation; a categorical axis takes a's level with probability
 *           F where a and b differ), binomial crossover with x at CR 0.7, the trial
 *           snapped to the nearest unevaluated configuration, replacing x when no slower.
 * Both respect the space: only configurations in it are evaluated, never twice.
 */
#ifndef KB_TUNE_EVOLVE_H
#define KB_TUNE_EVOLVE_H

#include "tune/search.h"

/* Run the genetic algorithm / differential evolution on s until its budget is spent or
 * nothing is left. KB_OK, KB_ERR_INTERNAL out of memory (the trace keeps what was done). */
kb_status kb_search_genetic(kb_search *s);
kb_status kb_search_diffevo(kb_search *s);

#endif /* KB_TUNE_EVOLVE_H */
