/* test_cuda_timing.c - the cuda backend's timing on the driver double's virtual clock
 * (tests/fake_cuda/fake_cuda.h): samples hold GPU time only, the host's launch cost never
 * (the blocking kernel holds the stream while a window's launches are queued), in cold and
 * hot mode, eager and graph; a graph's first replay does not carry its upload; the record
 * names the method; samples after which the SM clock reads under 75% of its maximum are
 * discarded (the NVML double's scripted clocks). Each assertion failed before the blocking
 * kernel, cuGraphUpload and the per-sample clock. */
#include "check.h"
#include "engine/launch_overhead.h"
#include "engine/measure.h"
#include "engine/modules.h"
#include "accept/verdict.h"
#include "results/record_json.h"
#include "selftest/selftest.h"
#include "../tests/fake_cuda/fake_cuda.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LAUNCHES 3
#define KERNEL_NS 10000.0 /* the double's default */

static kb_backend_ctx *bx;
static kb_modules *mods;
static const kb_module_ref *ref;

static kb_status enqueue_empty(kb_run *r, void *state)
{
    static const kb_geom g = { { 1, 1, 1 }, { 32, 1, 1 }, 0, { 1, 1, 1 } };
    for (int i = 0; i < LAUNCHES; i++) {
        kb_status st = kb_run_launch(r, KB_EMPTY_ENTRY, &g, NULL, 0);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

static kb_work work(const kb_case *c) { return (kb_work){ 1, 1, 1, 0 }; }
static const kb_family fam = { .name = "empty3", .work = work, .enqueue = enqueue_empty };

#define MANY 16
static kb_status enqueue_many(kb_run *r, void *state)
{
    static const kb_geom g = { { 1, 1, 1 }, { 32, 1, 1 }, 0, { 1, 1, 1 } };
    for (int i = 0; i < MANY; i++) {
        kb_status st = kb_run_launch(r, KB_EMPTY_ENTRY, &g, NULL, 0);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}
static const kb_family fam_many = { .name = "empty16", .work = work, .enqueue = enqueue_many };

/* One launch per execution, as accept's launch ceiling (ceiling/launch) has. */
static kb_status enqueue_one(kb_run *r, void *state)
{
    static const kb_geom g = { { 1, 1, 1 }, { 1, 1, 1 }, 0, { 1, 1, 1 } };
    return kb_run_launch(r, KB_EMPTY_ENTRY, &g, NULL, 0);
}
static const kb_family fam_one = { .name = "empty1", .work = work, .enqueue = enqueue_one };

/* Measure the family in mode l2 / launch m; every sample must be want_ns. */
static void check_samples(kb_l2_mode l2, kb_launch_mode m, double want_ns)
{
    kb_case c = { 0 };
    c.launch = m;
    kb_run r = { 0 };
    r.be = &kb_backend_cuda;
    r.bx = bx;
    r.mod = ref->mod;
    r.f = &fam;
    r.c = &c;
    kb_measure_settings s = KB_MEASURE_DEFAULTS;
    s.warmup = 0;    /* a graph's first replay is a sample: it must not carry the upload */
    s.min_samples = s.max_samples = 5;
    s.l2 = l2;
    kb_measurement meas = { 0 };
    kb_status st = kb_measure_case(&r, NULL, &s, NULL, &meas);
    CHECK_MSG(st == KB_OK, "%s", r.err);
    for (int i = 0; st == KB_OK && i < meas.n; i++)
        CHECK_MSG(meas.samples_us[i] * 1000 > want_ns - 1 && meas.samples_us[i] * 1000 < want_ns + 1,
                  "%s %s sample %d: %.1f ns, want %.1f", l2 == KB_L2_HOT ? "hot" : "cold",
                  m == KB_LAUNCH_GRAPH ? "graph" : "eager", i, meas.samples_us[i] * 1000, want_ns);
    kb_measurement_free(&meas);
    kb_run_free_all(&r);
}

static void test_samples_hold_gpu_time_only(void)
{
    double eager = LAUNCHES * (KERNEL_NS + FAKE_EAGER_GPU_NS);   /* no FAKE_LAUNCH_HOST_NS */
    double graph = LAUNCHES * (KERNEL_NS + FAKE_GRAPH_NODE_NS);  /* no FAKE_UPLOAD_NS either */
    check_samples(KB_L2_HOT, KB_LAUNCH_EAGER, eager);
    check_samples(KB_L2_COLD, KB_LAUNCH_EAGER, eager);
    check_samples(KB_L2_HOT, KB_LAUNCH_GRAPH, graph);
    check_samples(KB_L2_COLD, KB_LAUNCH_GRAPH, graph);
    const char *method = kb_backend_cuda.timing_method(bx);
    CHECK_MSG(!strcmp(method, "cuda events behind a blocking kernel"), "%s", method);
}

/* Measure hot/eager with the NVML double's scripted SM clocks (max 1980 MHz). */
static kb_status measure_with_clocks(const char *clocks, int samples, double timeout_s, kb_measurement *meas,
                                     kb_run *r)
{
    static kb_case c;
    memset(&c, 0, sizeof c);
    memset(r, 0, sizeof *r);
    r->be = &kb_backend_cuda;
    r->bx = bx;
    r->mod = ref->mod;
    r->f = &fam;
    r->c = &c;
    kb_measure_settings s = KB_MEASURE_DEFAULTS;
    s.warmup = 0;
    s.min_samples = s.max_samples = samples;
    s.timeout_s = timeout_s;
    s.l2 = KB_L2_HOT;
    setenv("KBENCH_FAKE_NVML_SM_CLOCKS", clocks, 1);
    kb_status st = kb_measure_case(r, NULL, &s, NULL, meas);
    unsetenv("KBENCH_FAKE_NVML_SM_CLOCKS");
    return st;
}

/* nvbench's throttle rule per sample: a sample after which the SM clock reads under 75%
 * of its maximum is dropped and counted; sampling goes on until enough are kept. */
static void test_throttled_samples_are_discarded(void)
{
    kb_measurement m = { 0 };
    kb_run r;
    /* reads: 1980 1980 900 | 1980 1980 900 | 1980 1980: six kept, two dropped */
    kb_status st = measure_with_clocks("1980,1980,900", 6, 15.0, &m, &r);
    CHECK_MSG(st == KB_OK, "%s", r.err);
    CHECK_MSG(m.n == 6 && m.discarded == 2, "%d kept, %d discarded", m.n, m.discarded);
    CHECK(m.clock_min_mhz == 1980 && m.clock_max_mhz == 1980);
    kb_measurement_free(&m);
    kb_run_free_all(&r);
    /* 1485 is exactly 75%: kept; 1484 is not */
    st = measure_with_clocks("1485,1484", 4, 15.0, &m, &r);
    CHECK(st == KB_OK && m.n == 4 && m.discarded == 3 && m.clock_min_mhz == 1485);
    kb_measurement_free(&m);
    kb_run_free_all(&r);
    kb_measurement_free(&m);
    kb_run_free_all(&r);
}

/* Clocks the user set are the reference: with clocks locked (nvidia-smi -lgc 1410: NVML's
 * user-defined-clocks reason) or application clocks at 1410 MHz, a sample at 1410 of a
 * 1980 MHz maximum ran as asked and is kept (nvbench compares with the clock the GPU is
 * meant to run at). */
static void test_user_clocks_are_the_reference(void)
{
    kb_measurement m = { 0 };
    kb_run r;
    setenv("KBENCH_FAKE_NVML_REASONS", "0x2", 1);
    kb_status st = measure_with_clocks("1410", 4, 1.0, &m, &r);
    unsetenv("KBENCH_FAKE_NVML_REASONS");
    CHECK_MSG(st == KB_OK && m.n == 4 && m.discarded == 0, "locked clocks: %s: %d kept, %d discarded", r.err, m.n,
              m.discarded);
    kb_measurement_free(&m);
    kb_run_free_all(&r);
    setenv("KBENCH_FAKE_NVML_APP_SM", "1410", 1);
    st = measure_with_clocks("1410", 4, 1.0, &m, &r);
    CHECK_MSG(st == KB_OK && m.n == 4 && m.discarded == 0, "application clocks: %s: %d kept, %d discarded", r.err,
              m.n, m.discarded);
    kb_measurement_free(&m);
    kb_run_free_all(&r);
    /* still throttled: under 75% of the locked clock */
    st = measure_with_clocks("1410,1000", 4, 5.0, &m, &r);
    unsetenv("KBENCH_FAKE_NVML_APP_SM");
    /* the scripted reads alternate (which comes first depends on the reads before) */
    CHECK_MSG(st == KB_OK && m.n == 4 && (m.discarded == 3 || m.discarded == 4) && !m.throttled &&
              m.clock_ref_mhz == 1410, "%d kept, %d discarded, reference %d MHz", m.n, m.discarded, m.clock_ref_mhz);
    kb_measurement_free(&m);
    kb_run_free_all(&r);
}

/* The switch: throttle_threshold 0 reads no clock and keeps every sample. */
static void test_throttle_switch(void)
{
    static kb_case c;
    kb_run r = { 0 };
    r.be = &kb_backend_cuda;
    r.bx = bx;
    r.mod = ref->mod;
    r.f = &fam;
    r.c = &c;
    kb_measure_settings s = KB_MEASURE_DEFAULTS;
    s.warmup = 0;
    s.min_samples = s.max_samples = 4;
    s.l2 = KB_L2_HOT;
    s.throttle_threshold = 0;
    kb_measurement m = { 0 };
    setenv("KBENCH_FAKE_NVML_SM_CLOCKS", "900", 1);
    kb_status st = kb_measure_case(&r, NULL, &s, NULL, &m);
    unsetenv("KBENCH_FAKE_NVML_SM_CLOCKS");
    CHECK(st == KB_OK && m.n == 4 && m.discarded == 0 && !m.throttled && m.clock_ref_mhz == -1);
    kb_measurement_free(&m);
    kb_run_free_all(&r);
}

/* A GPU that stays under 75% (at its power limit, say): after each throttled sample the loop
 * backs off (nvbench's throttle_recovery_delay, 50 ms, growing while it lasts) instead of
 * retrying back to back, and at the timeout the case keeps its throttled samples and says
 * so, instead of failing a healthy GPU. */
static void test_always_throttled_is_kept_and_flagged(void)
{
    kb_measurement m = { 0 };
    kb_run r;
    kb_status st = measure_with_clocks("900", 3, 0.4, &m, &r);
    CHECK_MSG(st == KB_OK, "%s", r.err);
    CHECK_MSG(m.throttled && m.n >= 1 && m.n == m.discarded, "%d samples, %d throttled, flag %d", m.n, m.discarded,
              m.throttled);
    CHECK_MSG(m.discarded <= 10, "%d throttled samples in 0.4 s: no back-off", m.discarded);
    kb_measurement_free(&m);
    kb_run_free_all(&r);
}

/* The double's virtual host clock [ns] (fake_cuda.h: fake_cuda_host_ns), found in the copy of
 * the double kbench's loader opened. */
static double host_ns(void)
{
    static double (*fn)(void);
    if (!fn) {
        void *h = dlopen(getenv("KBENCH_FAKE_LIBCUDA"), RTLD_NOW | RTLD_NOLOAD);
        *(void **)&fn = h ? dlsym(h, "fake_cuda_host_ns") : NULL;
    }
    return fn ? fn() : -1;
}

/* A timer_start whose start event fails after the blocking kernel was queued must let the
 * stream go: otherwise the next synchronisation waits out the kernel's 500 ms timeout and
 * the following window is counted as one that timed out. */
static void test_failed_start_releases_the_stream(void)
{
    double us;
    CHECK(kb_backend_cuda.timer_start(bx) == KB_OK && kb_backend_cuda.timer_stop(bx, &us) == KB_OK);
    setenv("KBENCH_FAKE_CUDA_FAIL", "cuEventRecord", 1);
    kb_status st = kb_backend_cuda.timer_start(bx);
    unsetenv("KBENCH_FAKE_CUDA_FAIL");
    CHECK(st != KB_OK);
    double t0 = host_ns();
    CHECK(kb_backend_cuda.sync(bx) == KB_OK);
    double waited = host_ns() - t0;
    CHECK_MSG(t0 > 0 && waited < 1e6, "the host waited %.0f ns for a stream nobody released", waited);
    CHECK(kb_backend_cuda.timer_start(bx) == KB_OK && kb_backend_cuda.timer_stop(bx, &us) == KB_OK);
    const char *method = kb_backend_cuda.timing_method(bx);
    CHECK_MSG(!strstr(method, "timed out"), "%s", method);
}

/* The launch-overhead windows queue N executions behind the blocking kernel; a real driver
 * blocks the host after about a thousand queued launches (the double: FAKE_QUEUE_DEPTH), and
 * the window then waits out the kernel's timeout. N x launches per execution stays below it:
 * 100 executions of 16 launches are cut to fit, and no window times out. */
static void test_overhead_windows_fit_the_launch_queue(void)
{
    kb_case c = { 0 };
    kb_run r = { 0 };
    r.be = &kb_backend_cuda;
    r.bx = bx;
    r.mod = ref->mod;
    r.f = &fam_many;
    r.c = &c;
    kb_overhead ov;
    memset(&ov, 0, sizeof ov);
    ov.empty = ref->mod;
    kb_status st = kb_launch_overhead(&r, NULL, 100, &ov);
    CHECK_MSG(st == KB_OK, "%s", r.err);
    CHECK_MSG(ov.n * ov.launches <= KB_OVERHEAD_MAX_QUEUED && ov.n >= 1, "%d executions x %d launches", ov.n,
              ov.launches);
    const char *method = kb_backend_cuda.timing_method(bx);
    CHECK_MSG(!strstr(method, "timed out"), "%s", method);
    /* eager: 16 x (kernel + per-launch GPU cost) per execution, GPU time only */
    double want_us = MANY * (KERNEL_NS + FAKE_EAGER_GPU_NS) / 1000;
    CHECK_MSG(ov.eager_us > want_us - 0.01 && ov.eager_us < want_us + 0.01, "eager %.3f us, want %.3f", ov.eager_us,
              want_us);
    kb_run_free_all(&r);
}

/* A slow host launch path (80 us of real time per launch call: a debugger, a virtualised
 * GPU) must fail the selftest's empty-kernel check (50 us) and accept's launch_latency
 * (20 us): both judge the launch cost, and behind the blocking kernel the windows hold GPU
 * time only, so the host's cost is in the host enqueue time, not in the windows. */
static void test_a_slow_host_fails_the_launch_checks(void)
{
    kb_case c = { 0 };
    kb_run r = { 0 };
    r.be = &kb_backend_cuda;
    r.bx = bx;
    r.mod = ref->mod;
    r.f = &fam_one;
    r.c = &c;
    kb_overhead ov;
    memset(&ov, 0, sizeof ov);
    ov.empty = ref->mod;
    setenv("KBENCH_FAKE_CUDA_HOST_LAUNCH_US", "80", 1);
    kb_status st = kb_launch_overhead(&r, NULL, 10, &ov);
    unsetenv("KBENCH_FAKE_CUDA_HOST_LAUNCH_US");
    CHECK_MSG(st == KB_OK, "%s", r.err);
    /* the windows still hold GPU time only */
    CHECK(ov.empty_eager_us > 10.9 && ov.empty_eager_us < 11.1 && ov.host_enqueue_us >= 80 && ov.empty_host_us >= 80);
    /* the selftest's figure */
    double selftest_us = kb_overhead_floor_us(&ov);
    CHECK_MSG(selftest_us > KB_SELFTEST_MAX_LAUNCH_US, "selftest's empty-kernel launch: %.2f us (the bound is %.0f)",
              selftest_us, KB_SELFTEST_MAX_LAUNCH_US);
    /* accept's: the record of a launch ceiling, judged against the H100 SXM spec's 20 us */
    kb_case_result res;
    memset(&res, 0, sizeof res);
    res.case_id = "ceiling/launch/fp32";
    res.status = KB_CASE_OK;
    res.measure.done = 1;
    res.measure.clock = "gpu";
    res.overhead.done = 1;
    res.overhead.ov = ov;
    kb_record_ctx ctx = { .run_id = "run", .time = "2026-01-01T00:00:00Z", .backend = "cuda" };
    json_t *rec = kb_record_json(&ctx, &res), *records = json_array();
    json_object_set_new(rec, "family", json_string("ceiling"));
    json_object_set_new(rec, "variant", json_string("launch"));
    json_object_set_new(rec, "launch", json_string("eager"));
    json_array_append_new(records, rec);
    kb_acc_spec spec;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_acc_spec_load("data/acceptance/h100-sxm.yaml", &spec, &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    kb_acc_verdict v;
    kb_acc_evaluate(&spec, NULL, records, &v);
    const kb_acc_result *lat = &v.r[KB_ACC_LAUNCH];
    CHECK_MSG(lat->status == KB_ACC_FAIL && lat->value >= 80, "accept's launch_latency: %s %.2f us: %s",
              kb_acc_status_name(lat->status), lat->value, lat->reason);
    json_decref(records);
    kb_run_free_all(&r);
}

/* KBENCH_FAKE_CUDA_SLOWDOWN scales GPU time: the samples follow it exactly. */
static void test_slowdown(void)
{
    setenv("KBENCH_FAKE_CUDA_SLOWDOWN", "3", 1);
    check_samples(KB_L2_HOT, KB_LAUNCH_EAGER, 3 * LAUNCHES * (KERNEL_NS + FAKE_EAGER_GPU_NS));
    unsetenv("KBENCH_FAKE_CUDA_SLOWDOWN");
}

int main(void)
{
    const char *fake = getenv("KBENCH_FAKE_LIBCUDA");
    if (!fake || access(fake, R_OK) != 0) {
        fprintf(stderr, "KBENCH_FAKE_LIBCUDA does not name the built driver double (run through ctest)\n");
        return 1;
    }
    setenv("KBENCH_LIBCUDA", fake, 1);
    const char *nvml = getenv("KBENCH_FAKE_LIBNVML");
    if (!nvml || access(nvml, R_OK) != 0) {
        fprintf(stderr, "KBENCH_FAKE_LIBNVML does not name the built NVML double (run through ctest)\n");
        return 1;
    }
    setenv("KBENCH_LIBNVML", nvml, 1);
    char err[1024] = "";
    kb_backend_opts bo = { 0 };
    if (kb_backend_cuda.init(&bo, &bx, err, sizeof err) != KB_OK) {
        fprintf(stderr, "cuda on the double: %s\n", err);
        return 1;
    }
    mods = kb_modules_new(&kb_backend_cuda, bx, NULL, kb_kernels_dir());
    ref = kb_modules_get(mods, KB_EMPTY_SOURCE, "", 90);
    if (ref->status != KB_OK) {
        fprintf(stderr, "kb_empty.cu: %s\n", ref->log);
        return 1;
    }
    RUN(test_samples_hold_gpu_time_only);
    RUN(test_slowdown);
    RUN(test_throttled_samples_are_discarded);
    RUN(test_user_clocks_are_the_reference);
    RUN(test_always_throttled_is_kept_and_flagged);
    RUN(test_throttle_switch);
    RUN(test_failed_start_releases_the_stream);
    RUN(test_overhead_windows_fit_the_launch_queue);
    RUN(test_a_slow_host_fails_the_launch_checks);
    kb_modules_free(mods);
    kb_backend_cuda.fini(bx);
    TEST_MAIN_END();
}
