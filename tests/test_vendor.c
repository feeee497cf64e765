/* test_vendor.c - the vendor variants (gemm/cublaslt, attention/cudnn) end to end
 * without a GPU:
 *   (that `readelf -d` of kbench names neither libcublasLt nor libcudnn is
 *   scripts/check-needed.sh's test);
 *   - `kbench list` works, and lists both variants, when neither library can be loaded;
 *   - on the emulator they are skipped with "cuBLASLt needs a GPU" / "cuDNN needs a GPU"
 *     and the run exits 0;
 *   - on the fake driver (tests/fake_cuda/; a "GPU" whose work is not real):
 *     `kbench devices` says which library loaded; a library that cannot be loaded makes its
 *     variant skipped with a reason naming its KBENCH_LIB* variable; with the real
 *     libraries, the library's own handle creation fails (no real driver behind the fake),
 *     and the case says so in the check macro's words - the wiring from family to
 *     library, as far as it goes without a GPU. */
#include "check.h"
#include "results/record.h"
#include "spawn.h"

#include <jansson.h>

static char dir[] = "/tmp/kb_test_vendor_XXXXXX";
static char fake[1024];

static void test_list_without_the_libraries(void)
{
    char log[512];
    snprintf(log, sizeof log, "%s/list.log", dir);
    setenv("KBENCH_LIBCUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
    setenv("KBENCH_LIBCUDNN", "/nonexistent/libcudnn.so.9", 1);
    const char *a[] = { "kbench", "list", NULL };
    CHECK(run_kbench(a, log) == 0);
    unsetenv("KBENCH_LIBCUBLASLT");
    unsetenv("KBENCH_LIBCUDNN");
    char *text = slurp(log);
    CHECK(text && strstr(text, "    cublaslt ") && strstr(text, "    cudnn ") && strstr(text, "    algo ") &&
          strstr(text, "    workspace "));
    free(text);
}

/* Every record of file: its status and reason, through fn. Returns the record count. */
static int each_record(const char *file, void (*fn)(const char *status, const char *reason, json_t *rec))
{
    json_t **recs = NULL;
    size_t n = 0;
    CHECK(kb_record_load(file, &recs, &n, NULL) == KB_OK);
    for (size_t i = 0; i < n; i++)
        fn(json_string_value(json_object_get(recs[i], "status")), json_string_value(json_object_get(recs[i], "reason")),
           recs[i]);
    kb_record_free_all(recs, n);
    return (int)n;
}

static void emu_record(const char *status, const char *reason, json_t *rec)
{
    CHECK_MSG(!strcmp(status, "skipped") && reason && strstr(reason, "needs a GPU"), "%s: %s", status, reason);
    CHECK(json_is_null(json_object_get(rec, "vendor")));
}

static void test_emulator_skips_them(void)
{
    char out[512], log[512];
    snprintf(out, sizeof out, "%s/emu.jsonl", dir);
    snprintf(log, sizeof log, "%s/emu.log", dir);
    const char *a[] = { "kbench", "run", "tests/suites/vendor_fake.yaml", "--backend", "emu", "--out", out, "--quiet",
                        NULL };
    int rc = run_kbench(a, log);
    CHECK_MSG(rc == 0, "exit %d", rc);
    if (rc != 0)
        print_tail(log, 2000);
    CHECK(each_record(out, emu_record) == 2);
}

/* The fake driver: the build's (KBENCH_FAKE_LIBCUDA, set by CTest), else built here. */
static int build_fake_driver(void)
{
    const char *built = getenv("KBENCH_FAKE_LIBCUDA");
    if (built && access(built, R_OK) == 0) {
        snprintf(fake, sizeof fake, "%s", built);
        return 0;
    }
    snprintf(fake, sizeof fake, "%s/libcuda.so.1", dir);
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "cc -shared -fPIC -I'%.*s' tests/fake_cuda/fake_*.c -o '%s'",
             (int)strcspn(KB_CUDA_INCLUDE_DIR, ";"), KB_CUDA_INCLUDE_DIR, fake);
    return system(cmd) == 0 ? 0 : -1;
}

static void test_devices_names_the_libraries(void)
{
    if (!fake[0])
        return;
    char log[512];
    snprintf(log, sizeof log, "%s/devices.log", dir);
    const char *a[] = { "kbench", "devices", "--backend", "cuda", NULL };
    setenv("KBENCH_LIBCUDNN", "/nonexistent/libcudnn.so.9", 1);
    CHECK(run_kbench(a, log) == 0);
    unsetenv("KBENCH_LIBCUDNN");
    char *text = slurp(log);
    CHECK_MSG(text && strstr(text, "cuDNN: not loaded: cuDNN not found (libcudnn.so.9: ") &&
              strstr(text, "KBENCH_LIBCUDNN"), "%s", text ? text : "");
    /* cuBLASLt loads where the toolkit has it (tests/test_cublaslt.c says whether) */
    CHECK_MSG(text && (strstr(text, "cuBLASLt 13.") || strstr(text, "cuBLASLt: not loaded")), "%s", text ? text : "");
    free(text);
}

static void unloaded_record(const char *status, const char *reason, json_t *rec)
{
    CHECK_MSG(!strcmp(status, "skipped") && reason && strstr(reason, "could not be loaded") &&
              strstr(reason, "KBENCH_LIB"), "%s: %s", status, reason);
}

static void test_missing_library_skips_on_a_gpu(void)
{
    if (!fake[0])
        return;
    char out[512], log[512];
    snprintf(out, sizeof out, "%s/missing.jsonl", dir);
    snprintf(log, sizeof log, "%s/missing.log", dir);
    setenv("KBENCH_LIBCUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
    setenv("KBENCH_LIBCUDNN", "/nonexistent/libcudnn.so.9", 1);
    const char *a[] = { "kbench", "run", "tests/suites/vendor_fake.yaml", "--backend", "cuda", "--out", out,
                        "--quiet", NULL };
    int rc = run_kbench(a, log);
    unsetenv("KBENCH_LIBCUBLASLT");
    unsetenv("KBENCH_LIBCUDNN");
    CHECK_MSG(rc == 0, "exit %d", rc);
    CHECK(each_record(out, unloaded_record) == 2);
}

/* With the real libraries behind the fake driver, the library's handle cannot be created
 * (no real driver behind the fake): that says nothing about the case, so the case is skipped
 * with the library's own words, not failed as a setup error (accept would call it
 * "incorrect"). */
static void fake_gpu_record(const char *status, const char *reason, json_t *rec)
{
    const char *fam = json_string_value(json_object_get(rec, "family"));
    if (reason && strstr(reason, "could not be loaded")) {
        printf("     (%s: library not available here: %s)\n", fam, reason);
        return;
    }
    CHECK_MSG(!strcmp(status, "skipped") && reason && strstr(reason, "cannot be used here") &&
              (strstr(reason, "CUBLAS_STATUS_NOT_INITIALIZED") || strstr(reason, "CUDNN_STATUS_")),
              "%s: %s: %s", fam, status, reason);
}

static void test_library_on_the_fake_driver(void)
{
    if (!fake[0])
        return;
    char out[512], log[512];
    snprintf(out, sizeof out, "%s/fake.jsonl", dir);
    snprintf(log, sizeof log, "%s/fake.log", dir);
    const char *a[] = { "kbench", "run", "tests/suites/vendor_fake.yaml", "--backend", "cuda", "--out", out,
                        "--quiet", NULL };
    int rc = run_kbench(a, log);
    CHECK_MSG(rc == 0, "exit %d", rc);
    CHECK(each_record(out, fake_gpu_record) == 2);
}

/* cuBLASLt 13 and cuDNN built for CUDA 13 link the CUDA 13 runtime statically: on an R550
 * driver (CUDA 12.4) their handles cannot be created. kbench devices says so for each, and
 * their rows are skipped with that reason, not failed. (The run needs an NVRTC that fits the
 * driver; without one it stops before the first case with exit 3, checked in
 * tests/test_gpu_ready.c, so only `devices` is checked here.) */
static void test_old_driver_skips_the_libraries(void)
{
    if (!fake[0])
        return;
    char log[512];
    snprintf(log, sizeof log, "%s/old.log", dir);
    setenv("KBENCH_FAKE_CUDA_DRIVER", "12040", 1);
    const char *a[] = { "kbench", "devices", "--backend", "cuda", NULL };
    int rc = run_kbench(a, log);
    unsetenv("KBENCH_FAKE_CUDA_DRIVER");
    CHECK_MSG(rc == 0, "exit %d", rc);
    char *text = slurp(log);
    const char *lt = text ? strstr(text, "cuBLASLt") : NULL;
    if (lt && !strstr(lt, "not loaded: cuBLASLt not found"))
        CHECK_MSG(strstr(text, "cuBLASLt: does not fit this driver") && strstr(text, "CUDA 13.0 runtime") &&
                  strstr(text, "driver supports CUDA 12.4"), "%s", text);
    const char *dnn = text ? strstr(text, "cuDNN") : NULL;
    if (dnn && !strstr(dnn, "not loaded: cuDNN not found"))
        CHECK_MSG(strstr(text, "cuDNN: does not fit this driver") && strstr(text, "driver supports CUDA 12.4"), "%s",
                  text);
    free(text);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    RUN(test_list_without_the_libraries);
    RUN(test_emulator_skips_them);
    if (build_fake_driver() != 0) {
        printf("     (no C compiler to build the fake driver: the fake-GPU tests are not run)\n");
        fake[0] = 0;
    } else {
        setenv("KBENCH_LIBCUDA", fake, 1);
    }
    RUN(test_devices_names_the_libraries);
    RUN(test_missing_library_skips_on_a_gpu);
    RUN(test_library_on_the_fake_driver);
    RUN(test_old_driver_skips_the_libraries);
    unsetenv("KBENCH_LIBCUDA");
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);   /* the logs and records of this test */
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
