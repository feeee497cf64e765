/* test_gpu_ready.c - the kbench binary on the fake driver (KBENCH_FAKE_LIBCUDA) at the
 * driver versions and architectures of real fleets: a driver too old for every NVRTC
 * found stops the run before its first case with exit 3 (--backend cuda and auto alike:
 * no silent fallback to CPU numbers), an --arch the device cannot run is exit 2, one it
 * can run is compiled for while the record keeps the device's own arch. */
#include "check.h"
#include "results/record.h"
#include "spawn.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/kb_test_gpu_ready_XXXXXX";
static char out[256], log_path[256];

/* Run kbench with the fake driver at driver version `driver` and device arch `arch`. */
static int run_fake(const char *driver, const char *arch, const char *const *argv)
{
    setenv("KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), 1);
    setenv("KBENCH_FAKE_CUDA_DRIVER", driver, 1);
    setenv("KBENCH_FAKE_CUDA_ARCH", arch, 1);
    unlink(out);
    int rc = run_kbench_within(argv, log_path, 120);
    unsetenv("KBENCH_LIBCUDA");
    unsetenv("KBENCH_FAKE_CUDA_DRIVER");
    unsetenv("KBENCH_FAKE_CUDA_ARCH");
    return rc;
}

static int log_has(const char *what)
{
    char *text = slurp(log_path);
    int found = text && strstr(text, what) != NULL;
    free(text);
    return found;
}

/* R550 (CUDA 12.4) with only NVRTC 13 here: every CUBIN would fail to load. */
static void test_old_driver_exits_3_before_first_case(void)
{
    const char *backends[] = { "cuda", "auto" };
    for (int i = 0; i < 2; i++) {
        const char *a[] = { "kbench", "run", "suites/smoke.yaml", "--backend", backends[i], "--out", out, NULL };
        int rc = run_fake("12040", "90", a);
        CHECK_MSG(rc == KB_EXIT_SETUP, "--backend %s: exit %d", backends[i], rc);
        CHECK_MSG(log_has("CUDA 12.4 (12040)") && log_has(">= 580") && log_has("cuda-compat") &&
                  log_has("libnvrtc.so.12"), "--backend %s", backends[i]);
        CHECK_MSG(!log_has("emulator"), "--backend %s fell back to the emulator", backends[i]);
        CHECK_MSG(access(out, F_OK) != 0, "--backend %s: a records file was written", backends[i]);
        if (rc != KB_EXIT_SETUP)
            print_tail(log_path, 2000);
    }
}

static void test_devices_prints_the_fit(void)
{
    const char *a[] = { "kbench", "devices", "--backend", "cuda", NULL };
    CHECK(run_fake("12040", "90", a) == KB_EXIT_OK);
    CHECK(log_has("driver         CUDA 12.4 (12040)"));
    CHECK(log_has("nvrtc          DOES NOT FIT: ") && log_has(">= 580"));
    CHECK(run_fake("13000", "90", a) == KB_EXIT_OK);
    CHECK(log_has("driver         CUDA 13.0 (13000)"));
    CHECK(log_has("nvrtc          NVRTC 13.") && log_has("its CUBINs load on this driver"));
    CHECK(!log_has("DOES NOT FIT"));
}

/* Under MIG the device's UUID is kept as NVML and nvidia-smi print it: "MIG-...". */
static void test_mig_uuid(void)
{
    const char *nvml = getenv("KBENCH_FAKE_LIBNVML");
    if (!nvml)
        return;
    const char *a[] = { "kbench", "devices", "--backend", "cuda", NULL };
    setenv("KBENCH_LIBNVML", nvml, 1);
    CHECK(run_fake("13000", "90", a) == KB_EXIT_OK);
    CHECK(log_has("uuid           GPU-11111111-1111-1111-1111-111111111111"));
    setenv("KBENCH_FAKE_NVML_MIG", "1", 1);
    CHECK(run_fake("13000", "90", a) == KB_EXIT_OK);
    CHECK(log_has("uuid           MIG-11111111-1111-1111-1111-111111111111"));
    unsetenv("KBENCH_FAKE_NVML_MIG");
    unsetenv("KBENCH_LIBNVML");
}

/* A sm_80 CUBIN does not run on 9.0; sm_89 does not run on 8.6. */
static void test_arch_it_cannot_run_exits_2(void)
{
    const char *a[] = { "kbench", "run", "suites/smoke.yaml", "--backend", "cuda", "--arch", "sm_80",
                        "--out", out, NULL };
    int rc = run_fake("13000", "90", a);
    CHECK_MSG(rc == KB_EXIT_INPUT, "exit %d", rc);
    CHECK(log_has("--arch sm_80") && log_has("runs only on compute capability 8.x") &&
          log_has("this device is 9.0: use --arch sm_90"));
    CHECK(access(out, F_OK) != 0);
    const char *b[] = { "kbench", "run", "suites/smoke.yaml", "--arch", "sm_89", "--out", out, NULL };
    rc = run_fake("13000", "86", b);
    CHECK_MSG(rc == KB_EXIT_INPUT, "auto: exit %d", rc);
    CHECK(!log_has("emulator"));
}

/* sm_86 code on an 8.9 device: compiled for sm_86, the record keeps both. */
static void test_arch_it_can_run_is_compiled_for(void)
{
    const char *a[] = { "kbench", "run", "suites/smoke.yaml", "--backend", "cuda", "--arch", "sm_86",
                        "--filter", "/fp32/31/pad0/eager", "--max-samples", "1",
                        "--out", out, NULL };
    run_fake("13000", "89", a); /* the fake's kernels do nothing: the case is "wrong", not the point */
    CHECK(log_has("sm_89, compiled for sm_86"));
    json_t **recs = NULL;
    size_t n = 0;
    CHECK(kb_record_load(out, &recs, &n, NULL) == KB_OK && n >= 1);
    for (size_t i = 0; i < n; i++) {
        json_t *d = json_object_get(recs[i], "device");
        CHECK(json_integer_value(json_object_get(d, "sm")) == 89);
        CHECK(json_integer_value(json_object_get(d, "target_sm")) == 86);
        CHECK(json_integer_value(json_object_get(d, "driver_version")) == 13000);
        CHECK(strcmp(json_string_value(json_object_get(recs[i], "status")), "compile_error") != 0);
    }
    kb_record_free_all(recs, n);
}

int main(void)
{
    if (!getenv("KBENCH_FAKE_LIBCUDA") || access(getenv("KBENCH_FAKE_LIBCUDA"), R_OK) != 0) {
        fprintf(stderr, "KBENCH_FAKE_LIBCUDA does not name the built fake driver (run through ctest)\n");
        return 1;
    }
    if (!mkdtemp(dir))
        return 1;
    snprintf(out, sizeof out, "%s/r.jsonl", dir);
    snprintf(log_path, sizeof log_path, "%s/r.log", dir);
    RUN(test_old_driver_exits_3_before_first_case);
    RUN(test_devices_prints_the_fit);
    RUN(test_mig_uuid);
    RUN(test_arch_it_cannot_run_exits_2);
    RUN(test_arch_it_can_run_is_compiled_for);
    unlink(out);
    unlink(log_path);
    char db[300];
    snprintf(db, sizeof db, "%s/kbench.db", dir);
    unlink(db);
    rmdir(dir);
    TEST_MAIN_END();
}
