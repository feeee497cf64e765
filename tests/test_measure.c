/* test_measure.c - the sampling loop against a fake backend (measure_fake.h) whose timer
 * returns scripted values or a virtual clock: the stopping rule (min_samples, noise,
 * max_samples, timeout), cold vs hot L2, graph launch mode, failures; the flush size
 * rules; and the real emulator measuring the empty kernel end to end. */
#include "check.h"
#include "backend/emu/emu_host.h"
#include "engine/measure.h"
#include "measure_fake.h"
#include "engine/modules.h"
#include "engine/nvtx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static kb_measure_settings opts(int min_samples, int max_samples, double max_noise, double timeout_s, kb_l2_mode l2)
{
    kb_measure_settings o;
    memset(&o, 0, sizeof o);
    o.warmup = 2;
    o.min_samples = min_samples;
    o.max_samples = max_samples;
    o.max_noise = max_noise;
    o.timeout_s = timeout_s;
    o.l2 = l2;
    return o;
}

static int samples_follow_script(const kb_measurement *m, const double *s, int n)
{
    for (int i = 0; i < m->n; i++)
        if (m->samples_us[i] != s[i % n])
            return 0;
    return 1;
}

/* Quiet samples: exactly min_samples, one Google Benchmark batch, stopped by the noise rule. */
static void test_stops_at_min_samples_when_quiet(void)
{
    static const double s[] = { 10.0, 10.01, 9.99 };
    fake_reset();
    fk.script = s;
    fk.script_n = 3;
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_measure_settings o = opts(10, 4000, 0.005, 100, KB_L2_HOT);
    kb_measurement m;
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_OK);
    CHECK_MSG(m.n == 10, "n = %d", m.n);
    CHECK(m.stop == KB_STOP_NOISE && !m.timed_out && m.batches == 1);
    CHECK(m.noise <= 0.005);
    CHECK(samples_follow_script(&m, s, 3));
    CHECK(fabs(m.st.median - 10.0) < 1e-12);
    kb_measurement_free(&m);
}

/* Noisy samples never meet the target: sampling goes on to max_samples, every sample kept. */
static void test_keeps_sampling_while_noisy(void)
{
    static const double s[] = { 1.0, 100.0 };
    fake_reset();
    fk.script = s;
    fk.script_n = 2;
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_measure_settings o = opts(10, 57, 0.005, 100, KB_L2_HOT);
    kb_measurement m;
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_OK);
    CHECK_MSG(m.n == 57, "n = %d", m.n);
    CHECK(m.stop == KB_STOP_MAX_SAMPLES && !m.timed_out);
    CHECK(m.noise > 0.005);
    CHECK(m.batches > 1);
    CHECK(samples_follow_script(&m, s, 2));
    kb_measurement_free(&m);
}

/* Noisy at first, then steady: the loop goes past min_samples and stops within ~10% of
 * the first sample count at which the rule holds. */
static void test_stops_once_noise_target_met(void)
{
    static double s[4000];
    for (int i = 0; i < 4000; i++)
        s[i] = i < 12 ? (i % 2 ? 90.0 : 10.0) : 50.0;
    /* where the rule first holds, computed here on prefixes */
    int n0 = 0;
    for (int n = 10; n <= 4000 && !n0; n++) {
        kb_stats st;
        kb_stats_compute(s, n, &st);
        if (kb_measure_noise(&st) <= 0.005)
            n0 = n;
    }
    CHECK_MSG(n0 > 10, "n0 = %d", n0);
    fake_reset();
    fk.script = s;
    fk.script_n = 4000;
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_measure_settings o = opts(10, 4000, 0.005, 100, KB_L2_HOT);
    kb_measurement m;
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_OK);
    CHECK(m.stop == KB_STOP_NOISE && m.noise <= 0.005);
    CHECK_MSG(m.n >= n0 && m.n <= n0 + n0 / 10 + 1, "stopped at %d, rule holds from %d", m.n, n0);
    CHECK(samples_follow_script(&m, s, 4000));
    kb_measurement_free(&m);
}

/* The timeout ends sampling (min_samples permitting), flagged as timed out. */
static void test_timeout(void)
{
    static const double s[] = { 1.0, 100.0 };
    fake_reset();
    fk.script = s;
    fk.script_n = 2;
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    /* a timeout shorter than any batch: exactly min_samples */
    kb_measure_settings o = opts(10, 20000, 0.005, 1e-9, KB_L2_HOT);
    kb_measurement m;
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_OK);
    CHECK_MSG(m.n == 10, "n = %d", m.n);
    CHECK(m.stop == KB_STOP_TIMEOUT && m.timed_out == 1);
    kb_measurement_free(&m);

    /* no max_samples at all: only the (real) timeout can end it */
    fake_reset();
    fk.script = s;
    fk.script_n = 2;
    fk.sleep_ns = 1000000; /* 1 ms per launch */
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    o = opts(5, 2000, 0.005, 0.03, KB_L2_HOT); /* 2000 would take 4 s */
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_OK);
    CHECK(m.stop == KB_STOP_TIMEOUT && m.timed_out == 1);
    CHECK_MSG(m.n >= 5 && m.n < 1000, "n = %d", m.n);
    kb_measurement_free(&m);
}

/* Index of the first sample's timer_start in the log (after warm-up and sync). */
static const char *after_warmup(void)
{
    const char *y = strchr(fk.log, 'Y');
    return y ? y + 1 : fk.log;
}

/* Cold: a fill before every sample, never inside the S..E window; its time is not measured. */
static void test_cold_flushes_outside_window(void)
{
    fake_reset();
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_measure_settings o = opts(6, 6, 0, 100, KB_L2_COLD);
    kb_measurement m;
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_OK);
    CHECK(m.n == 6 && m.l2 == KB_L2_COLD);
    /* no flush buffer given: one of 2 x L2 allocated for the case, through the run */
    CHECK(r.n_bufs == 1 && fk.n_allocs == 1);
    CHECK(m.flush_bytes == 2u << 20 && fk.last_fill_bytes == 2u << 20 && fk.last_fill_dst == r.bufs[0]);
    CHECK(fk.n_fills == m.n && fake_count('S') == m.n && fake_count('E') == m.n);
    /* warm-up: 2 executions of 2 launches, unflushed; then F S L L E per sample */
    CHECK(strncmp(fk.log, "LLLLY", 5) == 0);
    const char *p = after_warmup();
    for (int i = 0; i < m.n; i++, p += 5)
        CHECK_MSG(strncmp(p, "FSLLE", 5) == 0, "sample %d: %.5s", i, p);
    /* each sample is two launches of (gap 3 + kernel 5): the 100 us fill is outside */
    for (int i = 0; i < m.n; i++)
        CHECK_MSG(m.samples_us[i] == 16.0, "sample %d = %g", i, m.samples_us[i]);
    kb_measurement_free(&m);

    /* a run-wide buffer is used as given, nothing allocated */
    fake_reset();
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_l2_flush fl = { 0xABC000, 12345 };
    CHECK(kb_measure_case(&r, NULL, &o, &fl, &m) == KB_OK);
    CHECK(r.n_bufs == 0 && fk.n_allocs == 0);
    CHECK(fk.last_fill_dst == 0xABC000 && fk.last_fill_bytes == 12345 && m.flush_bytes == 12345);
    kb_measurement_free(&m);
}

/* Hot: samples back to back, no flush at all. */
static void test_hot_never_flushes(void)
{
    fake_reset();
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_measure_settings o = opts(5, 5, 0, 100, KB_L2_HOT);
    kb_measurement m;
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_OK);
    CHECK(m.n == 5 && m.l2 == KB_L2_HOT && m.flush_bytes == 0);
    CHECK(fk.n_fills == 0 && fk.n_allocs == 0 && !strchr(fk.log, 'F'));
    CHECK(strcmp(after_warmup(), "SLLESLLESLLESLLESLLE") == 0);
    kb_measurement_free(&m);
}

/* Graph mode: one capture of one execution, replayed for warm-up and for every sample. */
static void test_graph_mode(void)
{
    fake_reset();
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_GRAPH);
    kb_measure_settings o = opts(3, 3, 0, 100, KB_L2_COLD);
    kb_measurement m;
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_OK);
    CHECK(m.n == 3);
    CHECK_MSG(strcmp(fk.log, "BCCNGGYFSGEFSGEFSGE") == 0, "log %s", fk.log);
    /* graph base 8 + 2 nodes x (1 + 5) */
    CHECK(m.samples_us[0] == 20.0 && m.samples_us[2] == 20.0);
    kb_measurement_free(&m);
}

/* A failing timer ends the case with the backend's error; no further sample is attempted. */
static void test_failure_mid_sampling(void)
{
    fake_reset();
    fk.fail_stop_at = 4;
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_measure_settings o = opts(10, 4000, 0.005, 100, KB_L2_HOT);
    kb_measurement m;
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_ERR_FAULT);
    CHECK(m.n == 3 && fk.n_stop == 4);
    CHECK_MSG(strstr(r.err, "timer stop") && strstr(r.err, "fake: scripted fault"), "err %s", r.err);
    kb_measurement_free(&m);
}

static void test_bad_opts(void)
{
    fake_reset();
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_measurement m;
    kb_measure_settings o = opts(0, 0, 0.005, 1, KB_L2_HOT);
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_ERR_INPUT);
    o = opts(10, 5, 0.005, 1, KB_L2_HOT);
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_ERR_INPUT);
    CHECK(fk.n_log == 0 && m.n == 0);
    kb_measurement_free(&m);
}

/* ---- flush sizes ---- */

static void put_file(const char *dir, const char *sub, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s", dir, sub);
    mkdir(p, 0755);
    snprintf(p, sizeof p, "%s/%s/size", dir, sub);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void put_level(const char *dir, const char *sub, const char *text)
{
    char p[512];
    snprintf(p, sizeof p, "%s/%s/level", dir, sub);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static void test_flush_bytes(void)
{
    kb_device_info d;
    memset(&d, 0, sizeof d);
    d.l2_bytes = 50 << 20;
    CHECK(kb_l2_flush_bytes(&d) == 100u << 20);
    d.l2_bytes = 0;
    CHECK(kb_l2_flush_bytes(&d) == 256u << 20);

    char dir[] = "/tmp/kb_test_cache_sysfs.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    put_file(dir, "index0", "48K\n");
    put_file(dir, "index2", "2048K\n");
    put_file(dir, "index3", "8M\n");
    put_file(dir, "power", "not a cache\n");
    CHECK(kb_emu_host_cache_bytes(dir) == 8u << 20);
    CHECK(kb_emu_l2_bytes(dir) == 8u << 20);               /* no levels: the largest listed */
    put_file(dir, "index3", "266240K\n");  /* a server's shared L3: capped */
    CHECK(kb_emu_host_cache_bytes(dir) == 266240ull << 10);
    CHECK(kb_emu_l2_bytes(dir) == 32u << 20);
    /* with levels: a core's own caches (level <= 2), never the shared L3 */
    put_level(dir, "index0", "1\n");
    put_level(dir, "index2", "2\n");
    put_level(dir, "index3", "3\n");
    CHECK(kb_emu_host_cache_bytes(dir) == 266240ull << 10);
    CHECK(kb_emu_l2_bytes(dir) == 2048u << 10);            /* the emulator's "L2": flushed 2x */
    put_level(dir, "index2", "x\n");                      /* an unreadable level counts as none */
    CHECK(kb_emu_l2_bytes(dir) == 48u << 10);
    CHECK(kb_emu_host_cache_bytes("/nonexistent/cache") == 0);
    CHECK(kb_emu_l2_bytes("/nonexistent/cache") == KB_EMU_L2_FALLBACK_BYTES);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* Warm-up by time as well as count: with 1 ms per launch and warmup_s 0.05, at least 10
 * warm-up executions before the first timed window (about 45; 10 leaves room for a loaded
 * machine's oversleeping), though warmup asks only 2. */
static void test_warmup_by_time(void)
{
    fake_reset();
    fk.sleep_ns = 1000000;
    fk.fam_launches = 1;
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_measure_settings o = opts(1, 1, 0.5, 15.0, KB_L2_HOT);
    o.warmup_s = 0.05;
    kb_measurement m;
    CHECK(kb_measure_case(&r, NULL, &o, NULL, &m) == KB_OK);
    const char *first_window = strchr(fk.log, 'S');
    int warm = 0;
    for (const char *p = fk.log; first_window && p < first_window; p++)
        warm += *p == 'L';
    CHECK_MSG(warm >= 10, "%d warm-up launches: %s", warm, fk.log);   /* the count alone: 2 */
    kb_measurement_free(&m);
    /* the emulator's warm-up time is capped */
    kb_measure_settings e = kb_measure_resolve(&(kb_measure_settings){ .min_samples = 1, .warmup_s = 5 }, NULL, 0);
    CHECK(e.warmup_s == KB_SLOW_WARMUP_CAP_S);
    CHECK(kb_measure_field_find("warmup_s") && !kb_measure_field_ok(kb_measure_field_find("warmup_s"), -1));
}

static void test_settings(void)
{
    kb_measure_settings d = KB_MEASURE_DEFAULTS;
    CHECK(d.min_samples == 10 && d.max_noise == 0.005 && d.timeout_s == 15 && d.warmup == 1 && d.l2 == KB_L2_COLD);
    /* a GPU: the suite's settings as they are; the emulator: capped, brief */
    kb_measure_settings g = kb_measure_resolve(&d, NULL, KB_CAP_FULL_SPEED);
    CHECK(g.min_samples == 10 && g.timeout_s == 15 && g.max_samples == 0);
    kb_measure_settings e = kb_measure_resolve(&d, NULL, 0);
    CHECK(e.min_samples == KB_SLOW_MIN_SAMPLES_CAP && e.timeout_s == KB_SLOW_TIMEOUT_CAP_S &&
          e.max_samples == KB_SLOW_MAX_SAMPLES);
    /* overrides win; a max below the suite's min lowers the min */
    kb_measure_overrides o = { 0, 4, 2.5 };
    g = kb_measure_resolve(&d, &o, KB_CAP_FULL_SPEED);
    CHECK(g.max_samples == 4 && g.min_samples == 4 && g.timeout_s == 2.5);
    o = (kb_measure_overrides){ 20, 4, 0 };
    g = kb_measure_resolve(&d, &o, KB_CAP_FULL_SPEED);
    CHECK(g.min_samples == 20 && g.max_samples == 20);
    /* the range table: every field, its bounds, and what a message says */
    const kb_measure_field *f = kb_measure_field_find("timeout_s");
    CHECK(f && !kb_measure_field_ok(f, 0) && kb_measure_field_ok(f, 1e-3) && kb_measure_field_ok(f, 86400));
    CHECK(!kb_measure_field_ok(f, 86401) && !kb_measure_field_ok(f, INFINITY) && !kb_measure_field_ok(f, NAN));
    f = kb_measure_field_find("min_samples");
    CHECK(f && !kb_measure_field_ok(f, 0) && !kb_measure_field_ok(f, 2.5) && kb_measure_field_ok(f, 1));
    CHECK(!kb_measure_field_ok(f, 2147483647.0));
    kb_measure_field_set(f, &d, 7);
    CHECK(d.min_samples == 7);
    char buf[96];
    kb_measure_field_expect(kb_measure_field_find("timeout_s"), buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "a number in (0, 86400] s"), "%s", buf);
    CHECK(kb_measure_field_find("l2") == NULL && kb_measure_field_find("warmup") != NULL);
    CHECK(!strcmp(kb_l2_mode_name(KB_L2_COLD), "cold") && !strcmp(kb_l2_mode_name(KB_L2_HOT), "hot"));
    CHECK(!strcmp(kb_measure_stop_name(KB_STOP_TIMEOUT), "timeout"));
}

/* ---- the real emulator: kb_empty.cu built through the cache, measured cold ---- */

static kb_status empty_enqueue(kb_run *r, void *state)
{
    static const kb_geom g = { { 2, 1, 1 }, { 32, 1, 1 }, 0, { 1, 1, 1 } };
    return kb_run_launch(r, "kb_empty", &g, NULL, 0);
}

static void test_emulator_end_to_end(void)
{
    empty_emu e;
    if (empty_emu_open(&e, empty_enqueue)) {
        kb_run r = e.r;
        kb_device_info dev;
        CHECK(kb_backend_emu.device_info(e.bx, &dev) == KB_OK);
        kb_status st;
        kb_measure_settings o = opts(3, 5, 0.005, 2, KB_L2_COLD);
        kb_measurement m;
        kb_nvtx_push("empty/emu"); /* a no-op without a profiler: must not disturb anything */
        st = kb_measure_case(&r, NULL, &o, NULL, &m);
        kb_nvtx_pop();
        CHECK_MSG(st == KB_OK, "%s", r.err);
        CHECK(m.n >= 3 && m.n <= 5 && m.st.min > 0);
        CHECK(m.flush_bytes == kb_l2_flush_bytes(&dev) && r.n_bufs == 1);
        kb_measurement_free(&m);
        kb_run_free_all(&r);
    }
    empty_emu_close(&e);
}

int main(void)
{
    RUN(test_stops_at_min_samples_when_quiet);
    RUN(test_keeps_sampling_while_noisy);
    RUN(test_stops_once_noise_target_met);
    RUN(test_timeout);
    RUN(test_cold_flushes_outside_window);
    RUN(test_hot_never_flushes);
    RUN(test_graph_mode);
    RUN(test_failure_mid_sampling);
    RUN(test_bad_opts);
    RUN(test_flush_bytes);
    RUN(test_settings);
    RUN(test_warmup_by_time);
    RUN(test_emulator_end_to_end);
    TEST_MAIN_END();
}
