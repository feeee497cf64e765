/* test_cuda.c - the cuda backend without a GPU: the no-driver and too-old-driver
 * paths, symbol binding against the toolkit's stub libcuda, the error check and
 * its formatting, CUresult -> kb_status, UUID text, argument marshalling, and the
 * driver-free build path (NVRTC). */
#include "check.h"
#include "backend/cuda/cuda_api.h"
#include "core/fsutil.h"
#include "results/record.h"
#include "spawn.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- loading the driver ---- */

static void test_no_driver(void)
{
    kb_cuda_api api;
    char err[512] = "";
    setenv("KBENCH_LIBCUDA", "/nonexistent/libcuda.so.1", 1);

    CHECK(kb_cuda_api_load(&api, err, sizeof err) == KB_ERR_SETUP);
    CHECK_MSG(strncmp(err, "no CUDA driver found (libcuda.so.1: ", 36) == 0, "%s", err);
    CHECK_MSG(strstr(err, "/nonexistent/libcuda.so.1") != NULL, "%s", err); /* dlerror's text */
    CHECK(api.lib == NULL && api.Init == NULL);

    kb_backend_opts o = { 0 };
    kb_backend_ctx *x = (kb_backend_ctx *)&o; /* must be reset to NULL */
    err[0] = 0;
    CHECK(kb_backend_cuda.init(&o, &x, err, sizeof err) == KB_ERR_SETUP);
    CHECK(x == NULL);
    CHECK_MSG(strstr(err, "no CUDA driver found") && strstr(err, "libcuda.so.1"), "%s", err);
    kb_backend_cuda.fini(NULL); /* harmless */
    unsetenv("KBENCH_LIBCUDA");
}

/* A library that opens but exports no driver symbol stands for a driver too old. */
static void test_missing_symbol(void)
{
    kb_cuda_api api;
    char err[512] = "";
    setenv("KBENCH_LIBCUDA", "libm.so.6", 1);
    CHECK(kb_cuda_api_load(&api, err, sizeof err) == KB_ERR_SETUP);
    CHECK_MSG(strstr(err, "too old") && strstr(err, "cuInit"), "%s", err);
    CHECK(api.lib == NULL); /* closed again */
    unsetenv("KBENCH_LIBCUDA");
}

/* The toolkit's stub libcuda.so exports every driver symbol (and fails every
 * call with CUDA_ERROR_STUB_LIBRARY): binding against it checks each versioned
 * name the table asks for, without a driver. */
static int find_stub(char *out, size_t n)
{
    const char *inc = KB_CUDA_INCLUDE_DIR;
    size_t len = strcspn(inc, ";");
    static const char *const rel[] = { "/../lib64/stubs/libcuda.so", "/../lib/stubs/libcuda.so" };
    for (int i = 0; i < 2; i++) {
        snprintf(out, n, "%.*s%s", (int)len, inc, rel[i]);
        if (access(out, R_OK) == 0)
            return 0;
    }
    return -1;
}

static void test_stub_driver_binds_versioned_symbols(void)
{
    char stub[1024];
    if (find_stub(stub, sizeof stub) != 0) {
        printf("     (no stub libcuda.so next to %s: symbol binding not checked)\n", KB_CUDA_INCLUDE_DIR);
        return;
    }
    kb_cuda_api api;
    char err[512] = "";
    setenv("KBENCH_LIBCUDA", stub, 1);
    CHECK_MSG(kb_cuda_api_load(&api, err, sizeof err) == KB_OK, "%s", err);
    if (!api.lib) {
        unsetenv("KBENCH_LIBCUDA");
        return;
    }
    /* Every slot after the handle is bound, but those resolved later through the driver's
     * entry-point table (cuda_tmap.c: TensorMapEncodeTiled, which the stub cannot answer). */
    void *slots[sizeof api / sizeof(void *)];
    memcpy(slots, &api, sizeof slots);
    for (size_t i = 1; i < sizeof slots / sizeof slots[0]; i++)
        CHECK_MSG(slots[i] != NULL || i == offsetof(kb_cuda_api, TensorMapEncodeTiled) / sizeof(void *),
                  "slot %zu unbound", i);

    /* The versioned names cuda.h maps the API names to. */
    void *h = dlopen(stub, RTLD_NOW | RTLD_LOCAL);
    CHECK(h != NULL);
    if (h) {
#define BOUND(field, sym) CHECK_MSG((void *)api.field == dlsym(h, sym), #field " is not " sym)
        BOUND(MemAlloc, "cuMemAlloc_v2");
        BOUND(MemFree, "cuMemFree_v2");
        BOUND(MemcpyHtoD, "cuMemcpyHtoD_v2");
        BOUND(MemcpyDtoH, "cuMemcpyDtoH_v2");
        BOUND(DeviceTotalMem, "cuDeviceTotalMem_v2");
        BOUND(DeviceGetUuid, "cuDeviceGetUuid_v2");
        BOUND(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
        BOUND(StreamDestroy, "cuStreamDestroy_v2");
        BOUND(EventDestroy, "cuEventDestroy_v2");
        BOUND(EventElapsedTime, "cuEventElapsedTime_v2");
        BOUND(StreamBeginCapture, "cuStreamBeginCapture_v2");
        BOUND(GraphInstantiate, "cuGraphInstantiateWithFlags");
        BOUND(LaunchKernel, "cuLaunchKernel");
        BOUND(GetProcAddress, "cuGetProcAddress_v2");
        BOUND(Init, "cuInit");
#undef BOUND
        dlclose(h);
    }
    kb_cuda_api_unload(&api);
    CHECK(api.lib == NULL && api.MemAlloc == NULL);

    /* init gets as far as cuInit, which the stub fails: a setup error naming the call. */
    kb_backend_opts o = { 0 };
    kb_backend_ctx *x = NULL;
    err[0] = 0;
    CHECK(kb_backend_cuda.init(&o, &x, err, sizeof err) == KB_ERR_SETUP);
    CHECK(x == NULL);
    CHECK_MSG(strstr(err, "no CUDA driver found: the toolkit's stub libcuda") != NULL, "%s", err);
    CHECK_MSG(strstr(err, "Init(0) -> ") != NULL, "%s", err);
    CHECK_MSG(strstr(err, "CUDA_ERROR_STUB_LIBRARY") || strstr(err, "CUresult 34"), "%s", err);
    unsetenv("KBENCH_LIBCUDA");
}

/* ---- the check and its formatting ---- */

static void test_format_error(void)
{
    char buf[256];
    kb_cuda_format_error(buf, sizeof buf, "harness/x.c", 42, "run", "api->MemAlloc(&p, n)", 2,
                         "CUDA_ERROR_OUT_OF_MEMORY", "out of memory");
    CHECK_MSG(strcmp(buf, "harness/x.c:42 run: api->MemAlloc(&p, n) -> CUDA_ERROR_OUT_OF_MEMORY: out of memory") == 0,
              "%s", buf);
    kb_cuda_format_error(buf, sizeof buf, "f.c", 7, "g", "call()", 700, NULL, NULL);
    CHECK_MSG(strcmp(buf, "f.c:7 g: call() -> CUresult 700") == 0, "%s", buf);
    kb_cuda_format_error(buf, sizeof buf, "f.c", 7, "g", "call()", 700, "CUDA_ERROR_ILLEGAL_ADDRESS", NULL);
    CHECK_MSG(strcmp(buf, "f.c:7 g: call() -> CUDA_ERROR_ILLEGAL_ADDRESS") == 0, "%s", buf);
    /* Truncation keeps the buffer terminated. */
    char small[8];
    memset(small, 'x', sizeof small);
    kb_cuda_format_error(small, sizeof small, "file.c", 1, "f", "c", 1, "N", "M");
    CHECK(strcmp(small, "file.c:") == 0);
}

static int fake_calls;
static CUresult fake_fail(void) { fake_calls++; return CUDA_ERROR_ILLEGAL_ADDRESS; }
static CUresult fake_ok(void) { fake_calls++; return CUDA_SUCCESS; }
static CUresult fake_name(CUresult r, const char **s)
{
    *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : NULL;
    return *s ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
static CUresult fake_string(CUresult r, const char **s)
{
    *s = "an illegal memory access was encountered";
    return CUDA_SUCCESS;
}

static void test_check_macro(void)
{
    kb_cuda_api api;
    char err[512];
    memset(&api, 0, sizeof api);
    api.GetErrorName = fake_name;
    api.GetErrorString = fake_string;

    /* Success: KB_OK, the call ran once, err untouched. */
    strcpy(err, "untouched");
    fake_calls = 0;
    CHECK(KB_CU_CHECK(&api, err, sizeof err, fake_ok()) == KB_OK);
    CHECK(fake_calls == 1 && strcmp(err, "untouched") == 0);

    /* Failure: evaluated once, mapped status, "file:line function: call -> NAME: message". */
    fake_calls = 0;
    int line = __LINE__ + 1;
    kb_status st = KB_CU_CHECK(&api, err, sizeof err, fake_fail());
    CHECK(st == KB_ERR_FAULT);
    CHECK(fake_calls == 1);
    char want[512];
    snprintf(want, sizeof want,
             "%s:%d test_check_macro: fake_fail() -> CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered",
             __FILE__, line);
    CHECK_MSG(strcmp(err, want) == 0, "%s", err);

    /* A code the driver cannot name, and no table at all: the number. */
    CHECK(kb_cuda_check(&api, (CUresult)12345, err, sizeof err, "a.c", 1, "f", "c()") == KB_ERR_SETUP);
    CHECK_MSG(strcmp(err, "a.c:1 f: c() -> CUresult 12345") == 0, "%s", err);
    CHECK(kb_cuda_check(NULL, CUDA_ERROR_OUT_OF_MEMORY, err, sizeof err, "a.c", 2, "f", "c()") == KB_ERR_OOM);
    CHECK_MSG(strcmp(err, "a.c:2 f: c() -> CUresult 2") == 0, "%s", err);
}

static void test_status_mapping(void)
{
    CHECK(kb_cuda_status(CUDA_SUCCESS) == KB_OK);
    CHECK(kb_cuda_status(CUDA_ERROR_OUT_OF_MEMORY) == KB_ERR_OOM);
    CHECK(kb_cuda_status(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES) == KB_ERR_LAUNCH);
    CHECK(kb_cuda_status(CUDA_ERROR_INVALID_CLUSTER_SIZE) == KB_ERR_LAUNCH);
    CHECK(kb_cuda_status(CUDA_ERROR_ILLEGAL_ADDRESS) == KB_ERR_FAULT);
    CHECK(kb_cuda_status(CUDA_ERROR_MISALIGNED_ADDRESS) == KB_ERR_FAULT);
    CHECK(kb_cuda_status(CUDA_ERROR_ASSERT) == KB_ERR_FAULT);
    CHECK(kb_cuda_status(CUDA_ERROR_ILLEGAL_INSTRUCTION) == KB_ERR_FAULT);
    CHECK(kb_cuda_status(CUDA_ERROR_LAUNCH_FAILED) == KB_ERR_FAULT);
    CHECK(kb_cuda_status(CUDA_ERROR_LAUNCH_TIMEOUT) == KB_ERR_TIMEOUT);
    CHECK(kb_cuda_status(CUDA_ERROR_NO_BINARY_FOR_GPU) == KB_ERR_COMPILE);
    CHECK(kb_cuda_status(CUDA_ERROR_UNSUPPORTED_PTX_VERSION) == KB_ERR_COMPILE);
    CHECK(kb_cuda_status(CUDA_ERROR_NO_DEVICE) == KB_ERR_SETUP);
    CHECK(kb_cuda_status(CUDA_ERROR_STUB_LIBRARY) == KB_ERR_SETUP);
    CHECK(kb_cuda_status(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH) == KB_ERR_SETUP);
    CHECK(kb_cuda_status(CUDA_ERROR_UNKNOWN) == KB_ERR_SETUP);
    CHECK(kb_cuda_status(CUDA_ERROR_INVALID_VALUE) == KB_ERR_INTERNAL);
    CHECK(kb_cuda_status(CUDA_ERROR_INVALID_HANDLE) == KB_ERR_INTERNAL);
    CHECK(kb_cuda_status(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED) == KB_ERR_INTERNAL);
}

static void test_uuid(void)
{
    unsigned char b[16];
    char s[64];
    for (int i = 0; i < 16; i++)
        b[i] = (unsigned char)i;
    kb_cuda_format_uuid(b, s, sizeof s);
    CHECK_MSG(strcmp(s, "GPU-00010203-0405-0607-0809-0a0b0c0d0e0f") == 0, "%s", s);
    /* High bytes: lower-case hex, no sign extension (CUuuid.bytes is plain char). */
    const char raw[16] = { (char)0xde, (char)0xad, (char)0xbe, (char)0xef, 0, 0, 0, 0,
                           0, 0, 0, 0, 0, 0, (char)0x80, (char)0xff };
    kb_cuda_format_uuid((const unsigned char *)raw, s, sizeof s);
    CHECK_MSG(strcmp(s, "GPU-deadbeef-0000-0000-0000-0000000080ff") == 0, "%s", s);
    CHECK(strlen(s) == 40);
}

/* ---- marshalling ---- */

static void test_marshal(void)
{
    kb_arg args[5] = {
        kb_arg_ptr(0x7f00deadbeef00ull), kb_arg_i32(-7), kb_arg_i64(-((int64_t)1 << 40)),
        kb_arg_f32(1.5f), kb_arg_i32(123456),
    };
    void *params[5] = { 0 };
    CHECK(kb_cuda_marshal(args, 5, params) == 0);
    /* Each parameter addresses the value inside its own argument ... */
    for (int i = 0; i < 5; i++)
        CHECK(params[i] == (void *)&args[i].v);
    /* ... with the size and bytes cuLaunchKernel will copy for that kind. */
    CHECK(kb_cuda_arg_bytes(KB_ARG_PTR) == 8 && kb_cuda_arg_bytes(KB_ARG_I32) == 4);
    CHECK(kb_cuda_arg_bytes(KB_ARG_I64) == 8 && kb_cuda_arg_bytes(KB_ARG_F32) == 4);
    CUdeviceptr p;
    int32_t i32;
    int64_t i64;
    float f;
    memcpy(&p, params[0], kb_cuda_arg_bytes(args[0].kind));
    memcpy(&i32, params[1], kb_cuda_arg_bytes(args[1].kind));
    memcpy(&i64, params[2], kb_cuda_arg_bytes(args[2].kind));
    memcpy(&f, params[3], kb_cuda_arg_bytes(args[3].kind));
    CHECK(p == 0x7f00deadbeef00ull);
    CHECK(i32 == -7);
    CHECK(i64 == -((int64_t)1 << 40));
    CHECK(f == 1.5f);
    memcpy(&i32, params[4], 4);
    CHECK(i32 == 123456);

    /* An unknown kind is refused; zero arguments is fine. */
    kb_arg bad = kb_arg_i32(1);
    bad.kind = (kb_arg_kind)99;
    CHECK(kb_cuda_marshal(&bad, 1, params) == -1);
    CHECK(kb_cuda_arg_bytes((kb_arg_kind)99) == 0);
    CHECK(kb_cuda_marshal(NULL, 0, params) == 0);
}

/* ---- build needs no driver ---- */

static void test_build_without_driver(void)
{
    const kb_backend *be = &kb_backend_cuda;
    CHECK(strcmp(be->name, "cuda") == 0 && strcmp(be->artifact_ext, ".cubin") == 0);
    const char *tc = be->toolchain_id(NULL);
    CHECK_MSG(strncmp(tc, "nvrtc ", 6) == 0 && strchr(tc, '.') != NULL, "%s", tc);

    char out[] = "/tmp/kb_test_cuda_XXXXXX";
    int fd = mkstemp(out);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    close(fd);

    /* The quoted include "nvrtc_include.h" resolves through the source's own
     * directory (no include_dir given); the define sizes shared memory. */
    const char *defs[] = { "KB_T_BLOCK=128" };
    kb_compile_req req = { .source_path = "tests/kernels/nvrtc_include.cu", .include_dir = NULL,
                           .defines = defs, .n_defines = 1, .sm = 89 };
    kb_sb log;
    kb_sb_init(&log);
    CHECK_MSG(be->build(NULL, &req, out, &log) == KB_OK, "%s", log.s);
    CHECK_MSG(strstr(log.s, "Compiling entry function 'k_scale' for 'sm_89'") != NULL, "%s", log.s);
    char *data = NULL;
    size_t len = 0;
    CHECK(kb_fs_read_all(out, &data, &len) == KB_OK);
    CHECK(data && len > 20 && memcmp(data, "\x7f" "ELF", 4) == 0);
    free(data);

    /* No architecture, a missing source: refused with the reason in the log. */
    kb_sb_clear(&log);
    req.sm = 0;
    CHECK(be->build(NULL, &req, out, &log) == KB_ERR_INPUT);
    kb_sb_clear(&log);
    req.sm = 90;
    req.source_path = "tests/kernels/does_not_exist.cu";
    CHECK(be->build(NULL, &req, out, &log) == KB_ERR_IO);
    CHECK_MSG(strstr(log.s, "does_not_exist.cu") != NULL, "%s", log.s);
    kb_sb_free(&log);
    unlink(out);
}

/* ---- a whole run against a fake driver (tests/fake_cuda/) ---- */

/* The fake driver the build made (CMake target kbench_fake_cuda, tests/fake_cuda/),
 * whose path CTest passes in KBENCH_FAKE_LIBCUDA; 0 when it exists. */
static int fake_driver_path(const char *dir, char *lib, size_t n)
{
    (void)dir;
    const char *built = getenv("KBENCH_FAKE_LIBCUDA");
    if (!built || access(built, R_OK) != 0)
        return -1;
    snprintf(lib, n, "%s", built);
    return 0;
}

/* After a sticky fault every driver call fails with the same error: the faulting case
 * is recorded as a fault and the run stops there, instead of recording every later case
 * as a fault of its own; --resume in a new process picks up the rest. */
static void test_sticky_fault_stops_the_run(void)
{
    char dir[] = "/tmp/kb_test_cuda_run_XXXXXX", lib[1024], out[1100], log[1100];
    CHECK(mkdtemp(dir) != NULL);
    if (fake_driver_path(dir, lib, sizeof lib) != 0) {
        CHECK_MSG(0, "KBENCH_FAKE_LIBCUDA does not name the built fake driver (run through ctest)");
        return;
    }
    snprintf(out, sizeof out, "%s/r.jsonl", dir);
    snprintf(log, sizeof log, "%s/r.log", dir);
    setenv("KBENCH_LIBCUDA", lib, 1);
    setenv("FAKE_CUDA_FAULT", "1", 1);
    const char *a[] = { "kbench", "run", "suites/smoke.yaml", "--backend", "cuda", "--filter", "/31/",
                        "--out", out, "--max-samples", "1", NULL };
    int rc = run_kbench(a, log);
    unsetenv("FAKE_CUDA_FAULT");
    unsetenv("KBENCH_LIBCUDA");
    CHECK_MSG(rc == KB_EXIT_WRONG, "exit %d", rc);

    json_t **recs = NULL;
    size_t n = 0;
    CHECK(kb_record_load(out, &recs, &n, NULL) == KB_OK);
    int faults = 0;
    for (size_t i = 0; i < n; i++)
        faults += !strcmp(json_string_value(json_object_get(recs[i], "status")), "fault");
    CHECK_MSG(faults == 1 && n >= 1, "%zu records, %d faults", n, faults);
    if (n >= 1) {
        const char *last = json_string_value(json_object_get(recs[n - 1], "status"));
        const char *why = json_string_value(json_object_get(recs[n - 1], "reason"));
        CHECK_MSG(!strcmp(last, "fault"), "last record: %s", last);
        CHECK_MSG(why && strstr(why, "CUDA_ERROR_ILLEGAL_ADDRESS"), "%s", why ? why : "(no reason)");
    }
    kb_record_free_all(recs, n);
    char *text = slurp(log);
    CHECK_MSG(text && strstr(text, "device is unusable") && strstr(text, "--resume"), "%s", text ? text : "");
    if (rc != KB_EXIT_WRONG)
        print_tail(log, 2000);
    free(text);
    unlink(out);
    unlink(log);
    rmdir(dir); /* lib is the build's fake driver: other tests use it too */
}

/* The statuses of a run's records, one line per case ("id status\n"), malloc'ed. */
static char *statuses(const char *out)
{
    json_t **recs = NULL;
    size_t n = 0;
    if (kb_record_load(out, &recs, &n, NULL) != KB_OK)
        return NULL;
    kb_sb s;
    kb_sb_init(&s);
    for (size_t i = 0; i < n; i++)
        kb_sb_printf(&s, "%s %s\n", json_string_value(json_object_get(recs[i], "case_id")),
                     json_string_value(json_object_get(recs[i], "status")));
    kb_record_free_all(recs, n);
    return s.s;
}

/* Compile workers on the cuda backend (the driver double): NVRTC builds in three worker
 * threads while the main thread loads and runs; every case ends as it does built one at a
 * time, each from a cold cache. */
static void test_compile_workers_on_the_cuda_backend(void)
{
    char dir[] = "/tmp/kb_test_cuda_jobs_XXXXXX", lib[1024], out[1100], log[1100], cache[1100];
    CHECK(mkdtemp(dir) != NULL);
    if (fake_driver_path(dir, lib, sizeof lib) != 0) {
        CHECK_MSG(0, "KBENCH_FAKE_LIBCUDA does not name the built fake driver (run through ctest)");
        return;
    }
    setenv("KBENCH_LIBCUDA", lib, 1);
    char *seen[2] = { NULL, NULL };
    const char *jobs[2] = { "1", "3" };
    for (int k = 0; k < 2; k++) {
        snprintf(out, sizeof out, "%s/r%s.jsonl", dir, jobs[k]);
        snprintf(log, sizeof log, "%s/r%s.log", dir, jobs[k]);
        snprintf(cache, sizeof cache, "%s/cache%s", dir, jobs[k]);
        const char *a[] = { "kbench", "run", "suites/smoke.yaml", "--backend", "cuda", "--filter", "/31/", "--out", out,
                            "--max-samples", "1", "--cache-dir", cache, "-j", jobs[k], NULL };
        int rc = run_kbench(a, log);
        CHECK_MSG(rc == KB_EXIT_OK || rc == KB_EXIT_WRONG, "-j %s: exit %d", jobs[k], rc);
        char *text = slurp(log);
        CHECK_MSG(text && !strstr(text, "did not compile"), "-j %s: %s", jobs[k], text ? text : "");
        free(text);
        seen[k] = statuses(out);
        unlink(out);
        unlink(log);
    }
    unsetenv("KBENCH_LIBCUDA");
    CHECK(seen[0] && seen[1] && strlen(seen[0]) > 0);
    CHECK_MSG(seen[0] && seen[1] && !strcmp(seen[0], seen[1]), "-j 1:\n%s\n-j 3:\n%s", seen[0], seen[1]);
    free(seen[0]);
    free(seen[1]);
    char rm[1200];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);   /* the caches and the run's results store */
    CHECK(system(rm) == 0);
}

/* A cuda backend on the driver double for a device of compute capability cc, with the
 * module of tests/kernels/nvrtc_include.cu (k_scale, 128 threads) built for it and loaded. */
typedef struct {
    kb_backend_ctx *x;
    kb_module *m;
    kb_dptr y, in;
} cluster_rig;

static int rig_open(cluster_rig *r, const char *lib, const char *cc, const char *dir)
{
    const kb_backend *be = &kb_backend_cuda;
    char err[1024], cubin[1100];
    memset(r, 0, sizeof *r);
    setenv("KBENCH_LIBCUDA", lib, 1);
    setenv("KBENCH_FAKE_CUDA_ARCH", cc, 1);
    setenv("KBENCH_FAKE_CUDA_SMS", "16", 1);
    kb_backend_opts o = { 0 };
    CHECK_MSG(be->init(&o, &r->x, err, sizeof err) == KB_OK, "%s", err);
    if (!r->x)
        return -1;
    kb_device_info d;
    be->device_info(r->x, &d);
    const char *defs[] = { "KB_T_BLOCK=128" };
    kb_compile_req req = { "tests/kernels/nvrtc_include.cu", NULL, defs, 1, kb_target_sm(&d) };
    snprintf(cubin, sizeof cubin, "%s/k_%s.cubin", dir, cc);
    kb_sb log;
    kb_sb_init(&log);
    CHECK_MSG(be->build(r->x, &req, cubin, &log) == KB_OK, "%s", log.s);
    kb_sb_free(&log);
    CHECK(be->load(r->x, cubin, &r->m) == KB_OK);
    CHECK(be->alloc(r->x, 16 * 128 * 4, &r->y) == KB_OK && be->alloc(r->x, 16 * 128 * 2, &r->in) == KB_OK);
    return r->m ? 0 : -1;
}

static kb_status rig_launch(cluster_rig *r, unsigned grid, unsigned cluster)
{
    kb_geom g = { { grid, 1, 1 }, { 128, 1, 1 }, 0, { cluster, 1, 1 } };
    kb_arg a[] = { kb_arg_ptr(r->y), kb_arg_ptr(r->in) };
    return kb_backend_cuda.launch(r->x, r->m, "k_scale", &g, a, 2);
}

static void rig_close(cluster_rig *r)
{
    if (r->x) {
        kb_backend_cuda.free(r->x, r->y);
        kb_backend_cuda.free(r->x, r->in);
        kb_backend_cuda.unload(r->x, r->m);
        kb_backend_cuda.fini(r->x);
    }
    unsetenv("KBENCH_FAKE_CUDA_ARCH");
    unsetenv("KBENCH_FAKE_CUDA_SMS");
    unsetenv("KBENCH_LIBCUDA");
}

/* A geometry with a cluster goes through cuLaunchKernelEx with the cluster attribute; the
 * backend refuses, with the reason, what it knows cannot launch; the double the rest. */
static void test_cluster_launch(void)
{
    char dir[] = "/tmp/kb_test_cuda_cluster_XXXXXX", lib[1024];
    CHECK(mkdtemp(dir) != NULL);
    if (fake_driver_path(dir, lib, sizeof lib) != 0) {
        CHECK_MSG(0, "KBENCH_FAKE_LIBCUDA does not name the built fake driver (run through ctest)");
        return;
    }
    cluster_rig r;
    if (rig_open(&r, lib, "90", dir) == 0) {
        CHECK(rig_launch(&r, 4, 1) == KB_OK);                 /* no cluster: cuLaunchKernel */
        CHECK(rig_launch(&r, 4, 2) == KB_OK);
        CHECK(rig_launch(&r, 16, 8) == KB_OK);
        CHECK(kb_backend_cuda.sync(r.x) == KB_OK);
        CHECK(rig_launch(&r, 3, 2) == KB_ERR_LAUNCH);         /* the double: grid not a multiple */
        CHECK_MSG(strstr(kb_backend_cuda.last_error(r.x), "CUDA_ERROR_INVALID_CLUSTER_SIZE"), "%s",
                  kb_backend_cuda.last_error(r.x));
        CHECK(rig_launch(&r, 16, 16) == KB_ERR_LAUNCH);       /* the backend: over the portable 8 */
        CHECK_MSG(strstr(kb_backend_cuda.last_error(r.x), "larger than the portable 8 of sm_90"), "%s",
                  kb_backend_cuda.last_error(r.x));
    }
    rig_close(&r);
    if (rig_open(&r, lib, "80", dir) == 0) {
        CHECK(rig_launch(&r, 4, 2) == KB_ERR_LAUNCH);         /* no clusters before 9.0 */
        CHECK_MSG(strstr(kb_backend_cuda.last_error(r.x), "needs thread block clusters (compute capability 9.0"),
                  "%s", kb_backend_cuda.last_error(r.x));
        CHECK(rig_launch(&r, 4, 1) == KB_OK);
    }
    rig_close(&r);
    char rm[200];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
}

int main(void)
{
    RUN(test_no_driver);
    RUN(test_missing_symbol);
    RUN(test_stub_driver_binds_versioned_symbols);
    RUN(test_format_error);
    RUN(test_check_macro);
    RUN(test_status_mapping);
    RUN(test_uuid);
    RUN(test_marshal);
    RUN(test_build_without_driver);
    RUN(test_sticky_fault_stops_the_run);
    RUN(test_compile_workers_on_the_cuda_backend);
    RUN(test_cluster_launch);
    TEST_MAIN_END();
}
