/* test_selftest.c - `kbench selftest`: the element-wise comparison of two sides' dumps
 * (in process), and the binary without a driver (exit 3, every GPU check listed as not
 * checked), on the driver double at 12040 (the fit fails: exit 1) and at 13000 (the double
 * runs no kernel: the GPU half fails, exit 1), and with a bad suite (exit 2). */
#include "check.h"
#include "core/fsutil.h"
#include "core/npy.h"
#include "selftest/selftest_compare.h"
#include "spawn.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/kb_test_selftest_XXXXXX";
static char log_path[300];

/* A side whose one case `id` dumped out = v[0..n). */
static void fake_side(kb_st_side *s, const char *name, const char *id, const float *v, int64_t n)
{
    memset(s, 0, sizeof *s);
    snprintf(s->dir, sizeof s->dir, "%s/%s", dir, name);
    char path[700];
    snprintf(path, sizeof path, "%s/gelu__x/out.npy", s->dir);
    CHECK(kb_npy_write_f32(path, v, &n, 1) == KB_OK);
    static kb_st_case c[2];
    kb_st_case *mine = &c[name[0] == 'g'];
    memset(mine, 0, sizeof *mine);
    snprintf(mine->id, sizeof mine->id, "%s", id);
    mine->status = KB_CASE_OK;
    mine->atol = 1e-3;
    mine->rtol = 1e-2;
    s->cases = mine;
    s->n = 1;
}

static void test_compare(void)
{
    const float e[4] = { 1.0f, -2.0f, 0.0f, 100.0f };
    float g[4] = { 1.001f, -2.02f, 0.0015f, 102.0f };   /* within 2 (atol + rtol |e|) */
    kb_st_side emu, gpu;
    char detail[512];
    fake_side(&emu, "emu", "gelu/x", e, 4);
    fake_side(&gpu, "gpu", "gelu/x", g, 4);
    CHECK_MSG(kb_st_compare_outputs(&emu, &gpu, detail, sizeof detail) == 0, "%s", detail);
    CHECK(strstr(detail, "1 cases agree"));
    g[3] = 105.0f;                                      /* 5 > 2 (1e-3 + 1) */
    fake_side(&gpu, "gpu", "gelu/x", g, 4);
    CHECK(kb_st_compare_outputs(&emu, &gpu, detail, sizeof detail) == 1);
    CHECK_MSG(strstr(detail, "gelu/x: 1 of 4 elements differ; first at 3: GPU 105, emulator 100"), "%s", detail);
    fake_side(&gpu, "gpu", "gelu/x", g, 3);             /* a different length */
    CHECK(kb_st_compare_outputs(&emu, &gpu, detail, sizeof detail) == 1 && strstr(detail, "3 on the GPU"));
    gpu.cases[0].status = KB_CASE_WRONG;                /* nothing ok on both */
    CHECK(kb_st_compare_outputs(&emu, &gpu, detail, sizeof detail) == 2);
}

static int log_has(const char *what)
{
    char *text = slurp(log_path);
    int found = text && strstr(text, what) != NULL;
    free(text);
    return found;
}

static int selftest(const char *libcuda, const char *driver)
{
    char work[300];
    snprintf(work, sizeof work, "%s/work", dir);
    setenv("KBENCH_LIBCUDA", libcuda, 1);
    if (driver)
        setenv("KBENCH_FAKE_CUDA_DRIVER", driver, 1);
    const char *a[] = { "kbench", "selftest", "tests/suites/selftest_small.yaml", "--work-dir", work, NULL };
    int rc = run_kbench_within(a, log_path, 300);
    unsetenv("KBENCH_LIBCUDA");
    unsetenv("KBENCH_FAKE_CUDA_DRIVER");
    return rc;
}

static void test_without_a_gpu(void)
{
    int rc = selftest("/nonexistent/libcuda.so.1", NULL);
    CHECK_MSG(rc == KB_EXIT_SETUP, "exit %d", rc);
    CHECK(log_has("kbench selftest: no GPU"));
    CHECK(log_has("pass         emulator: the suite verifies   3 ok"));
    static const char *const gpu[] = { "driver and NVRTC fit", "GPU: the suite verifies", "GPU vs emulator outputs",
                                       "graph round trip", "empty-kernel launch", "copy bandwidth", "NVML readable" };
    for (int i = 0; i < 7; i++) {
        char line[128];
        snprintf(line, sizeof line, "not checked  %-30s no CUDA driver found", gpu[i]);
        CHECK_MSG(log_has(line), "%s", line);
    }
    CHECK(log_has("1 passed, 0 failed, 7 not checked"));
    if (rc != KB_EXIT_SETUP)
        print_tail(log_path, 3000);
}

static void test_on_the_double(void)
{
    const char *fake = getenv("KBENCH_FAKE_LIBCUDA");
    int rc = selftest(fake, "12040");
    CHECK_MSG(rc == KB_EXIT_WRONG, "12040: exit %d", rc);
    CHECK(log_has("FAIL         driver and NVRTC fit           the driver supports CUDA 12.4 (12040)"));
    CHECK(log_has("not checked  GPU: the suite verifies        nothing this build compiles loads"));
    rc = selftest(fake, "13000");
    CHECK_MSG(rc == KB_EXIT_WRONG, "13000: exit %d", rc);
    CHECK(log_has("pass         driver and NVRTC fit           NVRTC 13."));
    /* the double executes no kernel: every GPU output is wrong, and the selftest says so */
    CHECK(log_has("FAIL         GPU: the suite verifies        0 ok, 0 skipped, 3 failed"));
    CHECK(log_has("FAIL         graph round trip               1 of 1 graph cases failed"));
}

static void test_bad_suite(void)
{
    const char *a[] = { "kbench", "selftest", "/nonexistent/suite.yaml", NULL };
    CHECK(run_kbench(a, log_path) == KB_EXIT_INPUT);
    CHECK(log_has("/nonexistent/suite.yaml"));
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    snprintf(log_path, sizeof log_path, "%s/selftest.log", dir);
    RUN(test_compare);
    RUN(test_without_a_gpu);
    if (getenv("KBENCH_FAKE_LIBCUDA"))
        RUN(test_on_the_double);
    RUN(test_bad_suite);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
