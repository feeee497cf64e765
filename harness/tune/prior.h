/* prior.h - the static estimate as a tuning prior (`kbench tune --prior estimate`): before
 * anything is measured, the estimate (estimate/estimate.h, docs/estimate.md) of each
 * configuration of one of kbench's own families ranks them; strategies start from its
 * best and Bayesian optimisation uses it as its mean (strategy.h). The estimate models a
 * GPU: the reference GPU of the compute capability the times were measured on (sm_90 for
 * the emulator's records), with unknown registers (no compile): an ESTIMATE, never a
 * measurement, and on the emulator a model of another machine than the one timed. */
#ifndef KB_TUNE_PRIOR_H
#define KB_TUNE_PRIOR_H

#include "session/session.h"
#include "tune/space.h"

/* The estimate [us] of each of cases[0..n) (c.family: an index of kb_families; < 0: none)
 * for the reference GPU of sm into out[n]; INFINITY where the model has none. Returns how
 * many were estimated; -1 with the reason in err when none can be (no GPU for sm, no
 * peaks, no case kbench models). */
int kb_tune_prior_estimate(const kb_case *cases, int n, int sm, double *out, kb_sb *err);

/* The estimate of each configuration of problem p of session s's space (built from its
 * case list, kb_tune_space_of_cases) for the reference GPU of the session's device (an
 * offline session: of its target architecture): malloc'ed [p->n] (the caller frees), INFINITY where the model has none; NULL with the
 * reason in err when none can be estimated or out of memory. */
double *kb_tune_prior_of_problem(const kb_session *s, const kb_tune_problem *p, kb_sb *err);

#endif /* KB_TUNE_PRIOR_H */
