/* measure.c - the sampling loop (see measure.h).
 *
 * Who decides what:
 * - Google Benchmark runs the samples: each batch is one kb_gbench_run_case with one
 *   iteration per repetition, so every repetition is exactly one sample and its time
 *   is the backend timer's reading (manual time).
 * - This file decides how many: nvbench's rule, which Google Benchmark's min_time
 *   cannot express. The first batch is min_samples long; after each batch the
 *   relative standard error of the median over all samples so far is compared with
 *   max_noise, and the wall clock with timeout_s. Later batches are a tenth of the
 *   samples so far (so stopping overshoots the point where the target was met by at
 *   most ~10%), at least 1, and no more than the remaining time is expected to hold
 *   (so the timeout is overshot by at most about one sample).
 */
#include "engine/measure.h"
#include "engine/gbench_bridge.h"
#include "backend/telemetry.h"

#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB (1024u * 1024u)
#define GPU_FLUSH_UNKNOWN_BYTES (256u * MIB) /* triton's do_bench buffer: above any L2 so far */
#define MAX_BATCH 1000                     /* bounds the runs Google Benchmark holds at once */

static double wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

const char *kb_l2_mode_name(kb_l2_mode m) { return m == KB_L2_HOT ? "hot" : "cold"; }

const char *kb_measure_stop_name(kb_measure_stop s)
{
    switch (s) {
    case KB_STOP_NOISE: return "noise";
    case KB_STOP_TIMEOUT: return "timeout";
    default: return "max_samples";
    }
}

double kb_measure_noise(const kb_stats *st)
{
    if (st->n < 2 || st->median <= 0)
        return INFINITY;
    return 1.2533 * st->stddev / sqrt((double)st->n) / st->median;
}

/* ---- settings ---- */

#define FIELD(key, is_int, field, lo, hi, open, unit) \
    { key, is_int, offsetof(kb_measure_settings, field), lo, hi, open, unit }
const kb_measure_field kb_measure_fields[] = {
    FIELD("warmup", 1, warmup, 0, KB_MEASURE_WARMUP_MAX, 0, "executions"),
    FIELD("min_samples", 1, min_samples, 1, KB_MEASURE_SAMPLES_MAX, 0, "samples"),
    FIELD("max_samples", 1, max_samples, 0, KB_MEASURE_MAX_SAMPLES_MAX, 0, "samples (0: no bound)"),
    FIELD("max_noise", 0, max_noise, 0, 1, 0, "(relative; 0.005 = 0.5%, 0 = sample to the timeout)"),
    FIELD("timeout_s", 0, timeout_s, 0, KB_MEASURE_TIMEOUT_MAX_S, 1, "s"),
    FIELD("warmup_s", 0, warmup_s, 0, KB_MEASURE_WARMUP_MAX_S, 0, "s"),
    FIELD("throttle_threshold", 0, throttle_threshold, 0, 1, 0, "(fraction of the SM clock the GPU should run at; 0 = off)"),
    FIELD("throttle_recovery_s", 0, throttle_recovery_s, 0, KB_MEASURE_RECOVERY_MAX_S, 0, "s"),
};
#undef FIELD
const int kb_measure_n_fields = (int)(sizeof kb_measure_fields / sizeof kb_measure_fields[0]);

const kb_measure_field *kb_measure_field_find(const char *key)
{
    for (int i = 0; i < kb_measure_n_fields; i++)
        if (strcmp(kb_measure_fields[i].key, key) == 0)
            return &kb_measure_fields[i];
    return NULL;
}

int kb_measure_field_ok(const kb_measure_field *f, double v)
{
    if (!isfinite(v) || v > f->max || v < f->min || (f->min_open && v == f->min))
        return 0;
    return !f->is_int || v == floor(v);
}

void kb_measure_field_set(const kb_measure_field *f, kb_measure_settings *m, double v)
{
    char *p = (char *)m + f->offset;
    if (f->is_int)
        *(int *)p = (int)v;
    else
        *(double *)p = v;
}

void kb_measure_field_expect(const kb_measure_field *f, char *buf, size_t n)
{
    snprintf(buf, n, "%s in %c%.15g, %.15g] %s", f->is_int ? "an integer" : "a number", f->min_open ? '(' : '[',
             f->min, f->max, f->unit);
}

kb_measure_settings kb_measure_resolve(const kb_measure_settings *s, const kb_measure_overrides *o, unsigned caps)
{
    kb_measure_settings m = *s;
    if (!(caps & KB_CAP_FULL_SPEED)) {
        if (m.min_samples > KB_SLOW_MIN_SAMPLES_CAP) m.min_samples = KB_SLOW_MIN_SAMPLES_CAP;
        if (m.timeout_s > KB_SLOW_TIMEOUT_CAP_S) m.timeout_s = KB_SLOW_TIMEOUT_CAP_S;
        m.max_samples = KB_SLOW_MAX_SAMPLES;
        if (m.warmup_s > KB_SLOW_WARMUP_CAP_S) m.warmup_s = KB_SLOW_WARMUP_CAP_S;
    }
    if (!o)
        return m;
    if (o->min_samples > 0) m.min_samples = o->min_samples;
    if (o->max_samples > 0) m.max_samples = o->max_samples;
    /* an explicit --max-samples below the suite's min_samples is a bound, not a hint */
    if (o->max_samples > 0 && o->min_samples <= 0 && m.min_samples > m.max_samples)
        m.min_samples = m.max_samples;
    if (o->timeout_s > 0) m.timeout_s = o->timeout_s;
    if (m.max_samples > 0 && m.max_samples < m.min_samples) m.max_samples = m.min_samples;
    return m;
}

/* ---- L2 flush ---- */

size_t kb_l2_flush_bytes(const kb_device_info *dev)
{
    return dev->l2_bytes > 0 ? 2 * (size_t)dev->l2_bytes : GPU_FLUSH_UNKNOWN_BYTES;
}

kb_status kb_l2_flush_alloc(const kb_backend *be, kb_backend_ctx *bx, const kb_device_info *dev,
                            kb_l2_flush *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t bytes = kb_l2_flush_bytes(dev);
    kb_status st = be->alloc(bx, bytes, &out->buf);
    if (st != KB_OK) {
        snprintf(err, errlen, "L2 flush buffer of %zu bytes: %s", bytes, be->last_error(bx));
        return st;
    }
    out->bytes = bytes;
    return KB_OK;
}

void kb_l2_flush_free(const kb_backend *be, kb_backend_ctx *bx, kb_l2_flush *f)
{
    if (f->bytes)
        be->free(bx, f->buf);
    memset(f, 0, sizeof *f);
}

/* ---- one sample ---- */

typedef struct {
    kb_run *r;
    void *state;
    kb_graph *g;            /* graph launch mode: the captured execution */
    const kb_l2_flush *flush; /* NULL in hot mode */
    kb_measurement *m;
    int cap;                /* allocated samples */
    double t0_s;            /* [s] wall_s() when kb_measure_case began */
    kb_status st;           /* first failure; later calls fail at once */
    const kb_measure_settings *o;
    double *thr_us, *thr_starts_us; /* throttled samples, set aside (kept only at the timeout) */
    int thr_cap;
    double pause_s;         /* [s] the pause after the next throttled sample */
    int in_a_row;           /* throttled samples in a row */
} sampler;

/* One execution: the family's launches, or one replay of the captured graph. */
static kb_status execute_once(kb_run *r, void *state, kb_graph *g)
{
    if (g) {
        kb_status st = r->be->graph_launch(r->bx, g);
        return st == KB_OK ? KB_OK : kb_run_fail(r, st, "graph launch: %s", r->be->last_error(r->bx));
    }
    return r->f->enqueue(r, state);
}

/* The SM clock right after a sample (where the backend reads one): 0 when it is under
 * throttle_threshold of the clock the GPU should run at (the sample ran throttled), 1 to keep
 * it, with the clock range of kept samples updated. *Assumption*: the clock read just after
 * the stop event completed is the clock the sample ran at (nvbench measures it on the GPU
 * during the sample instead). */
static int clock_keeps(sampler *s)
{
    int mhz = 0, ref_mhz = 0;
    kb_measurement *m = s->m;
    if (!(s->o->throttle_threshold > 0) || !kb_be_sample_clock(s->r->be, s->r->bx, &mhz, &ref_mhz) || mhz <= 0 ||
        ref_mhz <= 0)
        return 1;
    m->clock_ref_mhz = ref_mhz;
    if (mhz < s->o->throttle_threshold * ref_mhz)
        return 0;
    if (m->clock_min_mhz < 0 || mhz < m->clock_min_mhz)
        m->clock_min_mhz = mhz;
    if (mhz > m->clock_max_mhz)
        m->clock_max_mhz = mhz;
    return 1;
}

/* Set a throttled sample aside and let the GPU recover before the next (nvbench's
 * measure_cold: throttle_recovery_delay, raised by min(1.5 x itself, 0.5 s) once more than
 * two samples in a row were throttled). */
static kb_status set_aside(sampler *s, double us, double start_us)
{
    kb_measurement *m = s->m;
    if (m->discarded == s->thr_cap) {
        int cap = s->thr_cap ? 2 * s->thr_cap : 16;
        double *p = realloc(s->thr_us, (size_t)cap * sizeof *p);
        if (p) s->thr_us = p;
        double *q = p ? realloc(s->thr_starts_us, (size_t)cap * sizeof *q) : NULL;
        if (!q)
            return kb_run_fail(s->r, KB_ERR_OOM, "throttled-sample buffer of %d samples", cap);
        s->thr_starts_us = q;
        s->thr_cap = cap;
    }
    s->thr_starts_us[m->discarded] = start_us;
    s->thr_us[m->discarded++] = us;
    if (++s->in_a_row > 2)
        s->pause_s += s->pause_s * 1.5 < 0.5 ? s->pause_s * 1.5 : 0.5;
    if (s->pause_s > 0)
        nanosleep(&(struct timespec){ (time_t)s->pause_s, (long)((s->pause_s - (time_t)s->pause_s) * 1e9) }, NULL);
    return KB_OK;
}

static kb_status take_sample(sampler *s, double *us)
{
    kb_run *r = s->r;
    const kb_backend *be = r->be;
    kb_status st;
    if (kb_interrupted())
        return kb_run_fail(r, KB_ERR_INTERRUPTED, "interrupted while sampling");
    if (s->m->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        double *p = realloc(s->m->samples_us, (size_t)cap * sizeof *p);
        if (p) s->m->samples_us = p;
        double *q = p ? realloc(s->m->starts_us, (size_t)cap * sizeof *q) : NULL;
        if (!q)
            return kb_run_fail(r, KB_ERR_OOM, "sample buffer of %d samples", cap);
        s->m->starts_us = q;
        s->cap = cap;
    }
    /* Before timer_start: on cuda the fill is queued on the same stream ahead of the
     * start event, so it finishes before the timed window opens, and the case's
     * launch is already queued behind the event while the fill runs (no launch
     * latency in the window either). */
    if (s->flush && (st = be->fill(r->bx, s->flush->buf, 0, s->flush->bytes)) != KB_OK)
        return kb_run_fail(r, st, "L2 flush: %s", be->last_error(r->bx));
    double start_us = (wall_s() - s->t0_s) * 1e6;
    if ((st = be->timer_start(r->bx)) != KB_OK)
        return kb_run_fail(r, st, "timer start: %s", be->last_error(r->bx));
    if ((st = execute_once(r, s->state, s->g)) != KB_OK) {
        double ignored;
        be->timer_stop(r->bx, &ignored);   /* close the window: a held stream must be let go */
        return st;
    }
    if ((st = be->timer_stop(r->bx, us)) != KB_OK)
        return kb_run_fail(r, st, "timer stop: %s", be->last_error(r->bx));
    if (!clock_keeps(s))
        return set_aside(s, *us, start_us);
    s->in_a_row = 0;
    s->pause_s = s->o->throttle_recovery_s;
    s->m->starts_us[s->m->n] = start_us;
    s->m->samples_us[s->m->n++] = *us;
    return KB_OK;
}

/* The Google Benchmark iteration function. */
static int sample_iter(void *user, double *elapsed_us, char *msg, size_t msglen)
{
    sampler *s = user;
    if (s->st == KB_OK)
        s->st = take_sample(s, elapsed_us);
    if (s->st == KB_OK)
        return 0;
    snprintf(msg, msglen, "%s", s->r->err[0] ? s->r->err : kb_status_name(s->st));
    return 1;
}

/* ---- the loop ---- */

/* Rate counters for Google Benchmark from the family's work model (per execution). */
static void set_counters(const kb_run *r, kb_gbench_case *gc)
{
    if (!r->f->work)
        return;
    kb_work w = r->f->work(r->c);
    double bytes = w.bytes_read + w.bytes_written;
    int n = 0;
    kb_gbench_counter_set(&gc->counters[n++], "TFLOPS", w.flops * 1e-12, KB_GBENCH_ITER_RATE);
    kb_gbench_counter_set(&gc->counters[n++], "GB/s", bytes * 1e-9, KB_GBENCH_ITER_RATE);
    if (bytes > 0)
        kb_gbench_counter_set(&gc->counters[n++], "AI", w.flops / bytes, KB_GBENCH_PLAIN);
    gc->n_counters = n;
}

/* Size of the next batch after n samples taken in elapsed_s (see the file comment). */
static int next_batch(const kb_measure_settings *o, int n, double elapsed_s)
{
    int b = n / 10;
    if (b < 1)
        b = 1;
    if (b > MAX_BATCH)
        b = MAX_BATCH;
    if (n > 0 && elapsed_s > 0) {
        double per_sample_s = elapsed_s / n;
        double fits = (o->timeout_s - elapsed_s) / per_sample_s;
        if (fits < b)
            b = fits < 1 ? 1 : (int)fits;
    }
    if (o->max_samples > 0 && b > o->max_samples - n)
        b = o->max_samples - n;
    return b;
}

/* Capture one execution of the case into a graph (graph launch mode). */
static kb_status capture(kb_run *r, void *state, kb_graph **g)
{
    const kb_backend *be = r->be;
    kb_status st;
    *g = NULL;
    if (!(be->caps & KB_CAP_GRAPHS))
        return kb_run_fail(r, KB_ERR_LAUNCH, "backend %s cannot capture graphs", be->name);
    if ((st = be->graph_begin(r->bx)) != KB_OK)
        return kb_run_fail(r, st, "graph capture: %s", be->last_error(r->bx));
    kb_status est = r->f->enqueue(r, state);
    /* always end the capture: that is what returns the stream to normal */
    if ((st = be->graph_end(r->bx, g)) != KB_OK || est != KB_OK) {
        if (*g)
            be->graph_free(r->bx, *g);
        *g = NULL;
        return est != KB_OK ? est : kb_run_fail(r, st, "graph capture: %s", be->last_error(r->bx));
    }
    return KB_OK;
}

/* The stopping rule, applied between batches: 1 (and m->stop set) when sampling ends. */
static int should_stop(const kb_measure_settings *o, kb_measurement *m, double elapsed_s)
{
    if (m->noise <= o->max_noise) {
        m->stop = KB_STOP_NOISE;
        return 1;
    }
    if (elapsed_s >= o->timeout_s) {
        m->stop = KB_STOP_TIMEOUT;
        m->timed_out = 1;
        return 1;
    }
    if (o->max_samples > 0 && m->n >= o->max_samples) {
        m->stop = KB_STOP_MAX_SAMPLES;
        return 1;
    }
    return 0;
}

/* At the timeout with too few unthrottled samples: keep the throttled ones too (a GPU that
 * cannot hold its clock - at its power limit, say - is measured as it runs; m->throttled
 * says so), rather than failing the case. */
static kb_status keep_throttled(sampler *s)
{
    kb_measurement *m = s->m;
    int n = m->n + m->discarded;
    double *p = realloc(m->samples_us, (size_t)n * sizeof *p);
    if (p) m->samples_us = p;
    double *q = p ? realloc(m->starts_us, (size_t)n * sizeof *q) : NULL;
    if (!q)
        return kb_run_fail(s->r, KB_ERR_OOM, "sample buffer of %d samples", n);
    m->starts_us = q;
    memcpy(m->samples_us + m->n, s->thr_us, (size_t)m->discarded * sizeof *p);
    memcpy(m->starts_us + m->n, s->thr_starts_us, (size_t)m->discarded * sizeof *q);
    m->n = n;
    s->cap = n;
    m->throttled = 1;
    return KB_OK;
}

/* Batches of samples through Google Benchmark until the stopping rule says so. */
static kb_status sample_batches(sampler *s, const kb_measure_settings *o)
{
    kb_run *r = s->r;
    kb_measurement *m = s->m;
    kb_gbench_result gr = { NULL, 0 };
    kb_gbench_case gc;
    memset(&gc, 0, sizeof gc);
    gc.name = "kb_case";
    gc.fn = sample_iter;
    gc.user = s;
    gc.iterations = 1;
    set_counters(r, &gc);

    double t0 = wall_s();
    int batch = o->min_samples;
    for (;;) {
        gc.repetitions = batch;
        kb_status st = kb_gbench_run_case(&gc, &gr);
        kb_gbench_result_free(&gr);
        m->batches++;
        if (s->st != KB_OK)
            return s->st;
        if (st != KB_OK)
            return kb_run_fail(r, st, "Google Benchmark failed to run the samples");
        double elapsed = wall_s() - t0;
        if (m->n < o->min_samples && m->discarded > 0) {   /* throttled samples were set aside */
            if (elapsed < o->timeout_s) {
                batch = o->min_samples - m->n;
                continue;
            }
            if ((st = keep_throttled(s)) != KB_OK)
                return st;
        }
        if (kb_stats_compute(m->samples_us, m->n, &m->st) != 0)
            return kb_run_fail(r, KB_ERR_OOM, "statistics of %d samples", m->n);
        m->noise = kb_measure_noise(&m->st);
        if (should_stop(o, m, elapsed))
            return KB_OK;
        batch = next_batch(o, m->n, elapsed);
    }
}

/* The cold-L2 scratch of a case measured without a run-wide one: allocated through the
 * case, freed with its other buffers. */
static kb_status own_flush_alloc(kb_run *r, kb_l2_flush *f)
{
    kb_device_info dev;
    kb_status st = r->be->device_info(r->bx, &dev);
    if (st != KB_OK)
        return kb_run_fail(r, st, "device query: %s", r->be->last_error(r->bx));
    f->bytes = kb_l2_flush_bytes(&dev);
    return kb_run_alloc(r, f->bytes, &f->buf);
}

kb_status kb_measure_case(kb_run *r, void *state, const kb_measure_settings *o, const kb_l2_flush *flush,
                          kb_measurement *m)
{
    const kb_backend *be = r->be;
    kb_l2_flush own_flush = { 0, 0 };
    sampler s;
    kb_status st = KB_OK;
    memset(m, 0, sizeof *m);
    memset(&s, 0, sizeof s);
    s.t0_s = wall_s();
    s.o = o;
    s.pause_s = o->throttle_recovery_s;
    m->l2 = o->l2;
    m->clock_min_mhz = m->clock_max_mhz = m->clock_ref_mhz = -1;
    if (o->min_samples < 1 || (o->max_samples > 0 && o->max_samples < o->min_samples))
        return kb_run_fail(r, KB_ERR_INPUT, "measurement: min_samples %d, max_samples %d", o->min_samples,
                           o->max_samples);
    if (o->l2 == KB_L2_COLD) {
        if (!flush && (st = own_flush_alloc(r, &own_flush)) != KB_OK)
            return st;
        s.flush = flush ? flush : &own_flush;
        m->flush_bytes = s.flush->bytes;
    }
    if (r->c->launch == KB_LAUNCH_GRAPH && (st = capture(r, state, &s.g)) != KB_OK)
        return st;
    /* warm-up: `warmup` executions, and for at least warmup_s (clocks ramp up, caches and
     * TLBs fill: a count alone under-warms a short kernel) */
    double w0 = wall_s();
    for (int i = 0; st == KB_OK && (i < o->warmup || wall_s() - w0 < o->warmup_s); i++)
        st = kb_interrupted() ? kb_run_fail(r, KB_ERR_INTERRUPTED, "interrupted during warm-up")
                              : execute_once(r, state, s.g);
    if (st == KB_OK && (st = be->sync(r->bx)) != KB_OK)
        kb_run_fail(r, st, "synchronise after warm-up: %s", be->last_error(r->bx));
    if (st == KB_OK) {
        s.r = r;
        s.state = state;
        s.m = m;
        st = sample_batches(&s, o);
    }
    if (s.g)
        be->graph_free(r->bx, s.g);
    free(s.thr_us);
    free(s.thr_starts_us);
    return st;
}

void kb_measurement_free(kb_measurement *m)
{
    free(m->samples_us);
    free(m->starts_us);
    m->samples_us = NULL;
    m->starts_us = NULL;
    m->n = 0;
}
