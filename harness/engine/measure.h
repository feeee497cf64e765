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

#include "backend/telemetry.h"
#include "core/stats.h"
#include "engine/exec.h"

/* L2 mode; COLD is 0 so that zero-initialised settings are the default, cold. */
typedef enum { KB_L2_COLD = 0, KB_L2_HOT = 1 } kb_l2_mode;
const char *kb_l2_mode_name(kb_l2_mode m);   /* "cold", "hot" */

/* A scratch buffer whose overwrite evicts the L2 (see kb_l2_flush_bytes). */
typedef struct {
    kb_dptr buf;
    size_t bytes;          /* [bytes] */
} kb_l2_flush;

/* How to measure a case: one struct from the suite (per entry) through the command
 * line's overrides to the sampling loop. Ranges in kb_measure_fields. */
typedef struct {
    int warmup;          /* untimed executions first, >= 0 */
    int min_samples;     /* never stop before this many, >= 1 */
    int max_samples;     /* never take more than this many; 0 = no bound but the timeout */
    double max_noise;    /* stop once the relative standard error of the median is at most this */
    double timeout_s;    /* [s] stop sampling after this much wall time (min_samples permitting) */
    kb_l2_mode l2;       /* cold (default) or hot */
    double warmup_s;     /* [s] warm up for at least this long as well as `warmup` executions */
    double throttle_threshold;  /* a sample whose SM clock is under this fraction of the clock the GPU
                                 * should run at is throttled (nvbench's --throttle-threshold); 0: off */
    double throttle_recovery_s; /* [s] pause after a throttled sample (nvbench's throttle_recovery_delay) */
} kb_measure_settings;

/* nvbench's defaults: 1 warm-up, 10 samples, 0.5% noise, 15 s, cold L2, a throttle threshold of
 * 75% and a 50 ms recovery pause; no warm-up time. */
#define KB_MEASURE_DEFAULTS { 1, 10, 0, 0.005, 15.0, KB_L2_COLD, 0.0, KB_TEL_MIN_CLOCK_FRACTION, 0.05 }

/* On a backend without KB_CAP_FULL_SPEED (the emulator) CPU timings are not the point:
 * a case is measured briefly, within these caps (the command line may still ask more). */
#define KB_SLOW_MIN_SAMPLES_CAP 3
#define KB_SLOW_TIMEOUT_CAP_S 1.0
#define KB_SLOW_MAX_SAMPLES 10
#define KB_SLOW_WARMUP_CAP_S 0.1

/* The documented ranges (kb_measure_fields holds them; the command line's overrides
 * take theirs from here too). */
#define KB_MEASURE_WARMUP_MAX 100000
#define KB_MEASURE_SAMPLES_MAX 1000000          /* min_samples */
#define KB_MEASURE_MAX_SAMPLES_MAX 10000000     /* max_samples */
#define KB_MEASURE_TIMEOUT_MAX_S 86400.0
#define KB_MEASURE_WARMUP_MAX_S 600.0          /* warmup_s */
#define KB_MEASURE_RECOVERY_MAX_S 10.0         /* throttle_recovery_s */

/* The numeric settings as a table: suite key, where it lives, and its documented range
 * [min, max] (min_open: min itself is refused). The suite loader and the command line
 * check every value against it, so a setting has one range wherever it is given. */
typedef struct {
    const char *key;     /* suite key, e.g. "min_samples"; the option is --min-samples */
    int is_int;          /* 1: an int field; 0: a double field */
    size_t offset;       /* offsetof(kb_measure_settings, field) */
    double min, max;
    int min_open;
    const char *unit;    /* "samples", "s", ... for messages */
} kb_measure_field;

extern const kb_measure_field kb_measure_fields[];
extern const int kb_measure_n_fields;
/* The field of key, or NULL. */
const kb_measure_field *kb_measure_field_find(const char *key);
/* 1 when v is finite and inside f's range (an integer for an int field). */
int kb_measure_field_ok(const kb_measure_field *f, double v);
/* Store v into f's field of m (v must be kb_measure_field_ok). */
void kb_measure_field_set(const kb_measure_field *f, kb_measure_settings *m, double v);
/* "an integer in [1, 1000000] samples" / "a number in (0, 86400] s": what f expects. */
void kb_measure_field_expect(const kb_measure_field *f, char *buf, size_t n);

/* Command-line overrides; a field <= 0 is not set. */
typedef struct {
    int min_samples, max_samples;
    double timeout_s;
} kb_measure_overrides;

/* The settings a case is measured with: the suite's s, capped on a backend without
 * KB_CAP_FULL_SPEED (caps), then the overrides. An explicit max_samples below the
 * suite's min_samples (with no min_samples override) lowers min_samples; max_samples
 * is never below min_samples. */
kb_measure_settings kb_measure_resolve(const kb_measure_settings *s, const kb_measure_overrides *o, unsigned caps);

/* Why sampling stopped. */
typedef enum {
    KB_STOP_NOISE = 0,   /* min_samples reached and noise <= max_noise */
    KB_STOP_TIMEOUT,     /* timeout_s elapsed first */
    KB_STOP_MAX_SAMPLES  /* max_samples reached first */
} kb_measure_stop;
const char *kb_measure_stop_name(kb_measure_stop s); /* "noise", "timeout", "max_samples" */

typedef struct {
    double *samples_us;  /* [n] every sample in the order taken, owned (kb_measurement_free) */
    double *starts_us;   /* [n] [us] when each sample's timer was started, after kb_measure_case
                          * began (host monotonic clock; on a GPU the enqueue time), owned */
    int n;
    kb_stats st;         /* [us] over all n samples */
    double noise;        /* relative standard error of the median at the stop */
    int timed_out;       /* stopped by timeout_s rather than by the noise target */
    kb_measure_stop stop;
    kb_l2_mode l2;       /* the mode the samples were taken in */
    size_t flush_bytes;  /* [bytes] overwritten before each sample (0 in hot mode) */
    int batches;         /* Google Benchmark invocations it took */
    int discarded;       /* samples taken throttled: the SM clock read after them was under
                          * throttle_threshold of the clock the GPU should run at (dropped unless
                          * `throttled`) */
    int throttled;       /* 1: at the timeout too few unthrottled samples remained, so the throttled
                          * ones were kept too (the figures describe the GPU throttled) */
    int clock_ref_mhz;   /* [MHz] the clock samples were compared with (last read); -1 none */
    int clock_min_mhz;   /* [MHz] lowest and highest SM clock read after the kept samples; */
    int clock_max_mhz;   /*       -1 when the backend reads none (sample_clock) */
} kb_measurement;

/* Relative standard error of the median of a sample set: 1.2533 * stddev / sqrt(n) / median
 * (the asymptotic efficiency of the median for a normal distribution). inf for n < 2. */
double kb_measure_noise(const kb_stats *st);

/* Bytes of scratch to overwrite so that the L2 holds none of the case's data: twice
 * dev->l2_bytes (the emulator reports the host cache it evicts there), 256 MiB when the
 * device does not report it. */
size_t kb_l2_flush_bytes(const kb_device_info *dev);

/* Allocate the scratch buffer for dev (kb_l2_flush_bytes) once per run. KB_ERR_OOM etc.
 * with the backend's message in err. Free with kb_l2_flush_free. */
kb_status kb_l2_flush_alloc(const kb_backend *be, kb_backend_ctx *bx, const kb_device_info *dev,
                            kb_l2_flush *out, char *err, size_t errlen);
void kb_l2_flush_free(const kb_backend *be, kb_backend_ctx *bx, kb_l2_flush *f);

/* Measure the case in r (state from the family's setup) in launch mode r->c->launch
 * with settings o. Cold mode overwrites flush before each sample (NULL: one is
 * allocated for the case via kb_run_alloc). Every sample is kept, except where the backend
 * reads the SM clock after it (sample_clock) and finds it under o->throttle_threshold of the
 * clock the GPU should run at: that sample is set aside and counted, and the loop pauses
 * (o->throttle_recovery_s, growing by up to 0.5 s while throttling lasts: nvbench's rule);
 * when fewer than min_samples unthrottled samples remain at the timeout, the throttled ones
 * are kept too and m->throttled says so. Returns KB_OK with m
 * filled, or the failing status (the case's error set in r); m is always safe to
 * kb_measurement_free. KB_ERR_INPUT when min_samples < 1 or max_samples (when set) <
 * min_samples. */
kb_status kb_measure_case(kb_run *r, void *state, const kb_measure_settings *o, const kb_l2_flush *flush,
                          kb_measurement *m);
void kb_measurement_free(kb_measurement *m);

#endif
