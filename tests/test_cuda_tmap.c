/* test_cuda_tmap.c - the cuda backend's tensor maps against the driver double
 * (harness/backend/cuda/cuda_tmap.c, tests/fake_cuda/fake_tmap.c): cuTensorMapEncodeTiled
 * resolved through the entry-point table, accepted maps passed to the driver field by field,
 * each rule refused by kbench's validation and, behind it, by the double on its own; the
 * capability absent, with the reason, on an old driver, a driver without the entry point and an
 * sm_80 device, and a case needing it refused there; and the map reaching a kernel by value,
 * 64-byte aligned. */
#include "check.h"
#include "backend/cuda/cuda_api.h"
#include "engine/valid.h"
#include "../tests/fake_cuda/fake_cuda.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const kb_backend *B = &kb_backend_cuda;

/* A cuda backend on the double as a device of compute capability cc; NULL (checked) when it
 * does not open. */
static kb_backend_ctx *open_cuda(const char *cc, kb_device_info *d)
{
    kb_backend_ctx *x = NULL;
    char err[1024];
    setenv("KBENCH_FAKE_CUDA_ARCH", cc, 1);
    kb_backend_opts o = { 0 };
    kb_status st = B->init(&o, &x, err, sizeof err);
    CHECK_MSG(st == KB_OK, "%s", err);
    unsetenv("KBENCH_FAKE_CUDA_ARCH");
    if (x)
        B->device_info(x, d);
    return x;
}

/* bf16, 64 x 64 box of a 64 x 256 matrix, 128B swizzle. */
static kb_tmap_desc good(void)
{
    kb_tmap_desc d = { .dtype = KB_TMAP_BF16, .rank = 2, .base = 0x10000, .dims = { 256, 64 }, .strides = { 512 },
                       .box = { 64, 64 }, .swizzle = KB_TMAP_SWIZZLE_128B, .l2_promotion = KB_TMAP_L2_128B };
    return d;
}

/* Rule k of cuTensorMapEncodeTiled broken in d (the rules of backend/tmap.c); NULL past the last. */
static const char *break_rule(kb_tmap_desc *d, int k)
{
    switch (k) {
    case 0: d->base = 0x10008; return "16-byte aligned";
    case 1: d->strides[0] = 520; return "multiple of 16";
    case 2: d->strides[0] = 1ull << 40; return "below 2^40";
    case 3: d->dims[1] = (1ull << 32) + 1; return "1..2^32";
    case 4: d->box[1] = 257; return "1..256";
    case 5: d->box[0] = 4; d->swizzle = KB_TMAP_SWIZZLE_NONE; return "multiple of 16 bytes";
    case 6: d->swizzle = KB_TMAP_SWIZZLE_64B; return "swizzle span";
    case 7: d->box[0] = 32; d->swizzle = KB_TMAP_SWIZZLE_32B; return "swizzle span";
    case 8: d->elem_strides[1] = 9; return "1..8";
    case 9: d->rank = 6; return "1..5";
    case 10: d->interleave = KB_TMAP_INTERLEAVE_16B; return "at least 3";
    case 11: d->interleave = KB_TMAP_INTERLEAVE_32B; d->rank = 3; d->dims[2] = 2; d->box[2] = 1; d->strides[1] = 65536;
             d->swizzle = KB_TMAP_SWIZZLE_32B; d->base = 0x10010; return "32 with";
    case 12: d->interleave = KB_TMAP_INTERLEAVE_32B; d->rank = 3; d->dims[2] = 2; d->box[2] = 1; d->strides[1] = 65536;
             return "swizzle must be 32B";
    case 13: d->dtype = KB_TMAP_I32; d->box[0] = 32; d->oob_fill = KB_TMAP_OOB_NAN_REQUEST_ZERO_FMA; return "floating-point";
    case 14: d->dtype = (kb_tmap_dtype)16; return "not a CUtensorMapDataType";   /* past the driver's enum too */
    default: return NULL;
    }
}

/* The double's map in a's bytes. */
static fake_tmap map_of(const kb_arg *a)
{
    fake_tmap t;
    memcpy(&t, a->v.tmap, sizeof t);
    return t;
}

/* Accepted maps reach cuTensorMapEncodeTiled unchanged (elem_strides 0 as the driver's 1). */
static void test_accepted(void)
{
    kb_device_info d;
    kb_backend_ctx *x = open_cuda("90", &d);
    if (!x)
        return;
    CHECK((B->caps & KB_CAP_TMA) && (d.caps & KB_CAP_TMA));
    CHECK_MSG(strstr(d.tma_note, "cuTensorMapEncodeTiled"), "%s", d.tma_note);
    char err[1024];
    kb_arg a;
    kb_tmap_desc g = good();
    CHECK_MSG(kb_backend_tmap_encode(B, x, &g, &a, err, sizeof err) == KB_OK, "%s", err);
    fake_tmap t = map_of(&a);
    CHECK(a.kind == KB_ARG_TMAP && t.magic == FAKE_TMAP_MAGIC && t.address == 0x10000 && t.rank == 2);
    CHECK(t.dtype == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 && t.dim[0] == 256 && t.dim[1] == 64 && t.stride[0] == 512);
    CHECK(t.box[0] == 64 && t.box[1] == 64 && t.estride[0] == 1 && t.estride[1] == 1);
    CHECK(t.swizzle == CU_TENSOR_MAP_SWIZZLE_128B && t.l2 == CU_TENSOR_MAP_L2_PROMOTION_L2_128B && t.oob == 0);
    /* 5-D u8 with element strides, interleave, NaN fill: each field as given */
    kb_tmap_desc f = { .dtype = KB_TMAP_U8, .rank = 5, .base = 0x20000, .dims = { 1ull << 32, 7, 3, 2, 9 },
                       .strides = { 1ull << 32, 7ull << 32, 21ull << 32, 42ull << 32 }, .box = { 256, 8, 1, 2, 3 },
                       .elem_strides = { 1, 8, 0, 2, 3 } };
    CHECK_MSG(kb_backend_tmap_encode(B, x, &f, &a, err, sizeof err) == KB_OK, "%s", err);
    t = map_of(&a);
    CHECK(t.rank == 5 && t.dim[0] == 1ull << 32 && t.dim[4] == 9 && t.stride[3] == 42ull << 32 && t.box[0] == 256);
    CHECK(t.box[4] == 3 && t.estride[1] == 8 && t.estride[2] == 1 && t.estride[4] == 3 && t.address == 0x20000);
    kb_tmap_desc il = good();
    il.dtype = KB_TMAP_F32, il.interleave = KB_TMAP_INTERLEAVE_32B, il.rank = 3, il.dims[2] = 2, il.box[0] = 8;
    il.box[2] = 1, il.strides[0] = 1024, il.strides[1] = 65536, il.swizzle = KB_TMAP_SWIZZLE_32B;
    il.oob_fill = KB_TMAP_OOB_NAN_REQUEST_ZERO_FMA;
    CHECK_MSG(kb_backend_tmap_encode(B, x, &il, &a, err, sizeof err) == KB_OK, "%s", err);
    t = map_of(&a);
    CHECK(t.interleave == CU_TENSOR_MAP_INTERLEAVE_32B && t.swizzle == CU_TENSOR_MAP_SWIZZLE_32B && t.oob == 1);
    CHECK(t.dtype == CU_TENSOR_MAP_DATA_TYPE_FLOAT32 && t.stride[1] == 65536);
    B->fini(x);
}

/* Each rule: kbench's validation refuses it first (KB_ERR_INPUT, the rule named); the slot
 * called without that validation is refused by the double on its own (a kbench validation that
 * lost the rule would be caught: KB_ERR_INTERNAL with the driver's CUDA_ERROR_INVALID_VALUE). */
static void test_each_rule_refused_twice(void)
{
    kb_device_info d;
    kb_backend_ctx *x = open_cuda("90", &d);
    if (!x)
        return;
    char err[1024];
    unsigned char raw[KB_TMAP_BYTES];
    int n = 0;
    for (int k = 0;; k++, n++) {
        kb_tmap_desc t = good();
        const char *want = break_rule(&t, k);
        if (!want)
            break;
        kb_arg a;
        err[0] = 0;
        CHECK_MSG(kb_backend_tmap_encode(B, x, &t, &a, err, sizeof err) == KB_ERR_INPUT && strstr(err, want),
                  "rule %d: '%s' (want '%s')", k, err, want);
        kb_status st = B->tmap_encode(x, &t, raw);
        const char *why = B->last_error(x);
        CHECK_MSG(st == KB_ERR_INTERNAL && strstr(why, "CUDA_ERROR_INVALID_VALUE") && strstr(why, "a rule its validation"),
                  "rule %d: status %d, '%s'", k, (int)st, why);
    }
    CHECK(n == 15);
    B->fini(x);
}

/* Where the device or driver has no tensor maps the capability is absent with the reason, the
 * slot refuses with it, and a case needing it is refused before it runs. */
static void expect_absent(const char *cc, const char *want)
{
    kb_device_info d;
    kb_backend_ctx *x = open_cuda(cc, &d);
    if (!x)
        return;
    CHECK_MSG(!(d.caps & KB_CAP_TMA) && strstr(d.tma_note, want), "caps 0x%x, note '%s' (want '%s')", d.caps,
              d.tma_note, want);
    char err[1024];
    kb_arg a;
    kb_tmap_desc g = good();
    CHECK_MSG(kb_backend_tmap_encode(B, x, &g, &a, err, sizeof err) == KB_ERR_INPUT && strstr(err, want), "%s", err);
    kb_target t = { kb_target_sm(&d), d.caps, d.max_shmem_per_block_optin };
    char why[512];
    CHECK(kb_valid_tma(&t, why, sizeof why) == 0);
    CHECK_MSG(strstr(why, atoi(cc) < 90 ? "the target is sm_80" : "kbench devices says why"), "%s", why);
    B->fini(x);
}

static void test_capability_absent(void)
{
    expect_absent("80", "compute capability 9.0 or newer; this device is 8.0");
    setenv("KBENCH_FAKE_CUDA_DRIVER", "11080", 1);   /* CUDA 11.8: before cuTensorMapEncodeTiled */
    expect_absent("90", "this driver (CUDA 11.8) predates cuTensorMapEncodeTiled, which needs a CUDA 12.0");
    unsetenv("KBENCH_FAKE_CUDA_DRIVER");
    setenv("KBENCH_FAKE_CUDA_MISSING", "cuTensorMapEncodeTiled", 1);   /* a 13.0 driver's table without it */
    expect_absent("90", "has no cuTensorMapEncodeTiled for CUDA 12.0 (symbol not found)");
    unsetenv("KBENCH_FAKE_CUDA_MISSING");
    /* present: the case may run */
    kb_device_info d;
    kb_backend_ctx *x = open_cuda("90", &d);
    if (x) {
        kb_target t = { kb_target_sm(&d), d.caps, d.max_shmem_per_block_optin };
        char why[512] = "";
        CHECK_MSG(kb_valid_tma(&t, why, sizeof why) == 1, "%s", why);
        B->fini(x);
    }
}

/* In a child (a fault is sticky for the process): launch entry of tests/kernels/tmap_param.cu with
 * a map the backend encoded; exit 0 when launch and sync give want_launch and want_sync. */
static int launch_in_child(const char *cubin, const char *entry, kb_status want_sync, const char *want_msg)
{
    pid_t pid = fork();
    if (pid != 0) {
        int status = 0;
        waitpid(pid, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
    }
    kb_device_info d;
    kb_backend_ctx *x = open_cuda("90", &d);
    kb_module *m = NULL;
    kb_dptr out = 0;
    char err[1024];
    kb_arg a[3];
    kb_tmap_desc g = good();
    if (!x || B->load(x, cubin, &m) != KB_OK || B->alloc(x, 64, &out) != KB_OK ||
        kb_backend_tmap_encode(B, x, &g, &a[1], err, sizeof err) != KB_OK)
        _exit(2);
    a[0] = kb_arg_i32(1), a[2] = kb_arg_ptr(out);
    kb_geom geo = { { 1, 1, 1 }, { 32, 1, 1 }, 0, { 1, 1, 1 } };
    if (B->launch(x, m, entry, &geo, a, 3) != KB_OK)
        _exit(3);
    kb_status st = B->sync(x);
    if (st != want_sync || (want_msg && !strstr(B->last_error(x), want_msg))) {
        fprintf(stderr, "%s: sync %d: %s\n", entry, (int)st, B->last_error(x));
        _exit(4);
    }
    _exit(0);
}

/* A map reaches the kernel as the 128-byte const __grid_constant__ kb_tmap, 64-byte aligned in
 * the parameter buffer; the double faults a kernel that takes it otherwise. */
static void test_map_parameter(void)
{
    char dir[] = "/tmp/kb_test_cuda_tmap_XXXXXX", cubin[200];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(cubin, sizeof cubin, "%s/tmap_param.cubin", dir);
    kb_compile_req req = { "tests/kernels/tmap_param.cu", "kernels", NULL, 0, 90 };
    kb_sb log;
    kb_sb_init(&log);
    kb_status st = B->build(NULL, &req, cubin, &log);
    CHECK_MSG(st == KB_OK, "%s", log.s);
    kb_sb_free(&log);
    if (st == KB_OK) {
        CHECK(launch_in_child(cubin, "k_tmap", KB_OK, NULL) == 0);
        CHECK(launch_in_child(cubin, "k_tmap_align8", KB_ERR_FAULT, "CUDA_ERROR_MISALIGNED_ADDRESS") == 0);
        CHECK(launch_in_child(cubin, "k_tmap_ptr", KB_ERR_FAULT, "CUDA_ERROR_ILLEGAL_ADDRESS") == 0);
    }
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    CHECK(system(rm) == 0);
}

int main(void)
{
    const char *fake = getenv("KBENCH_FAKE_LIBCUDA");
    if (!fake || access(fake, R_OK) != 0) {
        fprintf(stderr, "KBENCH_FAKE_LIBCUDA does not name the built driver double (run through ctest)\n");
        return 1;
    }
    setenv("KBENCH_LIBCUDA", fake, 1);
    setenv("KBENCH_FAKE_CUDA_SMS", "16", 1);
    RUN(test_accepted);
    RUN(test_each_rule_refused_twice);
    RUN(test_capability_absent);
    RUN(test_map_parameter);
    TEST_MAIN_END();
}
