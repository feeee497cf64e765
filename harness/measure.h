/* measure.h - timing one case: warm-up, samples until the noise target or the timeout.
 *
 * A sample is the backend timer around one execution of the case (every launch the
 * family enqueues), eagerly or as one replay of a captured graph. On the emu backend
 * the timer is a CPU clock: those samples are CPU time and are labelled so. */
#ifndef KB_MEASURE_H
#define KB_MEASURE_H

#include "exec.h"
#include "stats.h"

typedef struct {
    int warmup;          /* untimed executions first */
    int min_samples;     /* never stop before this many */
    int max_samples;     /* never take more than this many */
    double max_noise;    /* stop once the relative standard error of the median is below this */
    double timeout_s;    /* [s] stop sampling after this much wall time (min_samples permitting) */
} kb_measure_opts;

typedef struct {
    double *samples_us;  /* [n] in the order taken, owned (kb_measurement_free) */
    int n;
    kb_stats st;         /* [us] */
    double noise;        /* relative standard error of the median at the stop */
    int timed_out;       /* stopped by timeout_s rather than by the noise target */
} kb_measurement;

/* Relative standard error of the median of a sample set: 1.2533 * stddev / sqrt(n) / median
 * (the asymptotic efficiency of the median for a normal distribution). inf for n < 2. */
double kb_measure_noise(const kb_stats *st);

/* Measure the case in r (state from the family's setup) in launch mode r->c->launch.
 * Returns KB_OK with m filled, or the failing status (the case's error set in r). */
kb_status kb_measure_case(kb_run *r, void *state, const kb_measure_opts *o, kb_measurement *m);
void kb_measurement_free(kb_measurement *m);

#endif
