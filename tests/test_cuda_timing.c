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
#include "../tests/fake_cuda/fake_cuda.h"

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
    /* always throttled: the timeout ends it as a failure that says why */
    st = measure_with_clocks("900", 3, 0.05, &m, &r);
    CHECK_MSG(st == KB_ERR_TIMEOUT && strstr(r.err, "under 75% of the maximum SM clock"), "%s", r.err);
    CHECK(m.n == 0 && m.discarded > 0);
    kb_measurement_free(&m);
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
    kb_modules_free(mods);
    kb_backend_cuda.fini(bx);
    TEST_MAIN_END();
}
