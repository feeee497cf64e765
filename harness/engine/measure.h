/* measure.h - timing one case: warm-up, then samples until the noise target or the timeout.
 *
 * A sample is the backend timer around one execution of the case (every launch the
 * family enqueues), eagerly or as one replay of a captured graph. In cold mode (the
 * default) a scratch buffer of at least twice the L2 is overwritten before every sample,
 * outside the timed window, so each sample starts with the case's data out of L2; in
 * hot mode samples run back to back with no flush. On the emu backend the timer is a
 * CPU clock: those samples are CPU time and are labelled so by the caller.
 *
 * Google Benchmark drives the sampling (gbench.h): every sample is one of its
 * repetitions, with manual time from the backend timer. Its own stopping rule
 * (min_time) cannot express "relative standard error of the median under max_noise",
 * so kb_measure_case runs it in batches of a fixed size and applies the rule between
 * batches (see measure.c).
 */
#ifndef KB_MEASURE_H
#define KB_MEASURE_H

#include "engine/exec.h"
#include "suite/plan.h"
#include "results/record.h"
#include "core/stats.h"

/* L2 mode; COLD is 0 so that a zero-initialised kb_measure_opts is the default, cold. */
typedef enum { KB_L2_COLD = 0, KB_L2_HOT = 1 } kb_l2_mode;
const char *kb_l2_mode_name(kb_l2_mode m);   /* "cold", "hot" */

/* A scratch buffer whose overwrite evicts the L2 (see kb_l2_flush_bytes). */
typedef struct {
    kb_dptr buf;
    size_t bytes;          /* [bytes] */
} kb_l2_flush;

typedef struct {
    int warmup;          /* untimed executions first */
    int min_samples;     /* never stop before this many */
    int max_samples;     /* never take more than this many; 0 = no bound but the timeout */
    double max_noise;    /* stop once the relative standard error of the median is at most this */
    double timeout_s;    /* [s] stop sampling after this much wall time (min_samples permitting) */
    kb_l2_mode l2;       /* cold (default) or hot */
    const kb_l2_flush *flush; /* cold mode's scratch buffer, made once per run (kb_l2_flush_alloc);
                                 NULL: kb_measure_case allocates one for the case via kb_run_alloc */
} kb_measure_opts;

/* Why sampling stopped. */
typedef enum {
    KB_STOP_NOISE = 0,   /* min_samples reached and noise <= max_noise */
    KB_STOP_TIMEOUT,     /* timeout_s elapsed first */
    KB_STOP_MAX_SAMPLES  /* max_samples reached first */
} kb_measure_stop;
const char *kb_measure_stop_name(kb_measure_stop s); /* "noise", "timeout", "max_samples" */

typedef struct {
    double *samples_us;  /* [n] every sample in the order taken, owned (kb_measurement_free) */
    int n;
    kb_stats st;         /* [us] over all n samples */
    double noise;        /* relative standard error of the median at the stop */
    int timed_out;       /* stopped by timeout_s rather than by the noise target */
    kb_measure_stop stop;
    kb_l2_mode l2;       /* the mode the samples were taken in */
    size_t flush_bytes;  /* [bytes] overwritten before each sample (0 in hot mode) */
    int batches;         /* Google Benchmark invocations it took */
} kb_measurement;

/* Relative standard error of the median of a sample set: 1.2533 * stddev / sqrt(n) / median
 * (the asymptotic efficiency of the median for a normal distribution). inf for n < 2. */
double kb_measure_noise(const kb_stats *st);

/* The suite entry's measurement settings (warmup, min_samples, max_noise, timeout_s, l2);
 * max_samples 0 and flush NULL. Command-line overrides are applied by the caller. */
kb_measure_opts kb_measure_opts_from_entry(const kb_plan_entry *e);

/* Bytes of scratch to overwrite so that the L2 holds none of the case's data: twice
 * dev->l2_bytes on a GPU (256 MiB when the device does not report it). The emulator
 * has no L2 of its own: twice the largest host cache found under sysfs_cpu_cache (NULL:
 * /sys/devices/system/cpu/cpu0/cache), capped at 64 MiB, and 64 MiB when sysfs says
 * nothing (see measure.c for why the cap). */
size_t kb_l2_flush_bytes(const kb_device_info *dev, const char *sysfs_cpu_cache);

/* Largest cache size [bytes] listed in dir/index<N>/size ("48K", "2048K", "32M"); 0 if none. */
size_t kb_host_cache_bytes(const char *dir);

/* Allocate the scratch buffer for dev (kb_l2_flush_bytes) once per run. KB_ERR_OOM etc.
 * with the backend's message in err. Free with kb_l2_flush_free. */
kb_status kb_l2_flush_alloc(const kb_backend *be, kb_backend_ctx *bx, const kb_device_info *dev,
                            kb_l2_flush *out, char *err, size_t errlen);
void kb_l2_flush_free(const kb_backend *be, kb_backend_ctx *bx, kb_l2_flush *f);

/* Measure the case in r (state from the family's setup) in launch mode r->c->launch.
 * Every sample is kept. Returns KB_OK with m filled, or the failing status (the case's
 * error set in r); m is always safe to kb_measurement_free. KB_ERR_INPUT when
 * min_samples < 1 or max_samples (when set) < min_samples. */
kb_status kb_measure_case(kb_run *r, void *state, const kb_measure_opts *o, kb_measurement *m);
void kb_measurement_free(kb_measurement *m);

/* Copy m into the timing block of a record: have_timing, n_samples, the statistics,
 * noise, timed_out and the samples (borrowed from m: keep m alive until the record is
 * written). clock is "gpu" or "cpu" (the emulator). */
void kb_measurement_to_result(const kb_measurement *m, const char *clock, kb_result *res);

#endif
