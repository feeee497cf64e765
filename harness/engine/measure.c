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

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB (1024u * 1024u)
#define EMU_FLUSH_CAP_BYTES (64u * MIB)    /* see kb_l2_flush_bytes */
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

kb_measure_opts kb_measure_opts_from_entry(const kb_plan_entry *e)
{
    kb_measure_opts o;
    memset(&o, 0, sizeof o);
    o.warmup = e->warmup;
    o.min_samples = e->min_samples;
    o.max_noise = e->max_noise;
    o.timeout_s = e->timeout_s;
    o.l2 = e->l2_cold ? KB_L2_COLD : KB_L2_HOT;
    return o;
}

/* ---- L2 flush ---- */

size_t kb_host_cache_bytes(const char *dir)
{
    size_t best = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "index", 5) != 0)
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s/size", dir, e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        unsigned long long v = 0;
        char unit = 0;
        int got = fscanf(f, "%llu%c", &v, &unit);
        fclose(f);
        if (got < 1)
            continue;
        if (got == 2 && (unit == 'K' || unit == 'k'))
            v <<= 10;
        else if (got == 2 && (unit == 'M' || unit == 'm'))
            v <<= 20;
        else if (got == 2 && (unit == 'G' || unit == 'g'))
            v <<= 30;
        if (v > best)
            best = (size_t)v;
    }
    closedir(d);
    return best;
}

size_t kb_l2_flush_bytes(const kb_device_info *dev, const char *sysfs_cpu_cache)
{
    if (!dev->is_emulator)
        return dev->l2_bytes > 0 ? 2 * (size_t)dev->l2_bytes : GPU_FLUSH_UNKNOWN_BYTES;
    /* The emulator's "device memory" is host memory, so the cache to evict is the host's.
     * Twice the largest level, but capped: a server's shared L3 is hundreds of MiB and
     * mostly other cores' (this machine: 260 MiB), and overwriting all of it before every
     * sample would cost far more than the case; 64 MiB evicts the private levels and
     * this core's working share of L3. Emulator timings are CPU time either way. */
    size_t host = kb_host_cache_bytes(sysfs_cpu_cache ? sysfs_cpu_cache : "/sys/devices/system/cpu/cpu0/cache");
    if (host == 0 || 2 * host > EMU_FLUSH_CAP_BYTES)
        return EMU_FLUSH_CAP_BYTES;
    return 2 * host;
}

kb_status kb_l2_flush_alloc(const kb_backend *be, kb_backend_ctx *bx, const kb_device_info *dev,
                            kb_l2_flush *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    size_t bytes = kb_l2_flush_bytes(dev, NULL);
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
    kb_status st;           /* first failure; later calls fail at once */
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

static kb_status take_sample(sampler *s, double *us)
{
    kb_run *r = s->r;
    const kb_backend *be = r->be;
    kb_status st;
    if (s->m->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 64;
        double *p = realloc(s->m->samples_us, (size_t)cap * sizeof *p);
        if (!p)
            return kb_run_fail(r, KB_ERR_OOM, "sample buffer of %d samples", cap);
        s->m->samples_us = p;
        s->cap = cap;
    }
    /* Before timer_start: on cuda the fill is queued on the same stream ahead of the
     * start event, so it finishes before the timed window opens, and the case's
     * launch is already queued behind the event while the fill runs (no launch
     * latency in the window either). */
    if (s->flush && (st = be->fill(r->bx, s->flush->buf, 0, s->flush->bytes)) != KB_OK)
        return kb_run_fail(r, st, "L2 flush: %s", be->last_error(r->bx));
    if ((st = be->timer_start(r->bx)) != KB_OK)
        return kb_run_fail(r, st, "timer start: %s", be->last_error(r->bx));
    if ((st = execute_once(r, s->state, s->g)) != KB_OK)
        return st;
    if ((st = be->timer_stop(r->bx, us)) != KB_OK)
        return kb_run_fail(r, st, "timer stop: %s", be->last_error(r->bx));
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
static int next_batch(const kb_measure_opts *o, int n, double elapsed_s)
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
    if (!be->graph_begin)
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

kb_status kb_measure_case(kb_run *r, void *state, const kb_measure_opts *o, kb_measurement *m)
{
    const kb_backend *be = r->be;
    kb_l2_flush own_flush = { 0, 0 };
    sampler s;
    kb_gbench_result gr = { NULL, 0 };
    kb_status st = KB_OK;
    memset(m, 0, sizeof *m);
    memset(&s, 0, sizeof s);
    m->l2 = o->l2;
    if (o->min_samples < 1 || (o->max_samples > 0 && o->max_samples < o->min_samples))
        return kb_run_fail(r, KB_ERR_INPUT, "measurement: min_samples %d, max_samples %d", o->min_samples,
                           o->max_samples);

    if (o->l2 == KB_L2_COLD) {
        s.flush = o->flush;
        if (!s.flush) {
            kb_device_info dev;
            if ((st = be->device_info(r->bx, &dev)) != KB_OK)
                return kb_run_fail(r, st, "device query: %s", be->last_error(r->bx));
            own_flush.bytes = kb_l2_flush_bytes(&dev, NULL);
            if ((st = kb_run_alloc(r, own_flush.bytes, &own_flush.buf)) != KB_OK)
                return st; /* freed with the case's other buffers */
            s.flush = &own_flush;
        }
        m->flush_bytes = s.flush->bytes;
    }
    if (r->c->launch == KB_LAUNCH_GRAPH && (st = capture(r, state, &s.g)) != KB_OK)
        return st;

    for (int i = 0; i < o->warmup; i++)
        if ((st = execute_once(r, state, s.g)) != KB_OK)
            goto done;
    if ((st = be->sync(r->bx)) != KB_OK) {
        kb_run_fail(r, st, "synchronise after warm-up: %s", be->last_error(r->bx));
        goto done;
    }

    s.r = r;
    s.state = state;
    s.m = m;
    kb_gbench_case gc;
    memset(&gc, 0, sizeof gc);
    gc.name = "kb_case";
    gc.fn = sample_iter;
    gc.user = &s;
    gc.iterations = 1;
    set_counters(r, &gc);

    double t0 = wall_s();
    int batch = o->min_samples;
    for (;;) {
        gc.repetitions = batch;
        st = kb_gbench_run_case(&gc, &gr);
        kb_gbench_result_free(&gr);
        m->batches++;
        if (s.st != KB_OK) {
            st = s.st;
            goto done;
        }
        if (st != KB_OK) {
            kb_run_fail(r, st, "Google Benchmark failed to run the samples");
            goto done;
        }
        if (kb_stats_compute(m->samples_us, m->n, &m->st) != 0) {
            st = kb_run_fail(r, KB_ERR_OOM, "statistics of %d samples", m->n);
            goto done;
        }
        m->noise = kb_measure_noise(&m->st);
        double elapsed = wall_s() - t0;
        if (m->noise <= o->max_noise) {
            m->stop = KB_STOP_NOISE;
            break;
        }
        if (elapsed >= o->timeout_s) {
            m->stop = KB_STOP_TIMEOUT;
            m->timed_out = 1;
            break;
        }
        if (o->max_samples > 0 && m->n >= o->max_samples) {
            m->stop = KB_STOP_MAX_SAMPLES;
            break;
        }
        batch = next_batch(o, m->n, elapsed);
    }
done:
    if (s.g)
        be->graph_free(r->bx, s.g);
    return st;
}

void kb_measurement_free(kb_measurement *m)
{
    free(m->samples_us);
    m->samples_us = NULL;
    m->n = 0;
}

void kb_measurement_to_result(const kb_measurement *m, const char *clock, kb_result *res)
{
    res->have_timing = 1;
    res->clock = clock;
    res->n_samples = m->n;
    res->median_us = m->st.median;
    res->mean_us = m->st.mean;
    res->min_us = m->st.min;
    res->max_us = m->st.max;
    res->p10_us = m->st.p10;
    res->p90_us = m->st.p90;
    res->cv = m->st.cv;
    res->noise = m->noise;
    res->timed_out = m->timed_out;
    res->samples_us = m->samples_us;
    res->n_samples_kept = m->n;
}
