/* test_emu.c - the emu backend through its kb_backend interface only (set-up in
 * emu_fixture.h): device info, allocation and poison, launch geometry, block barriers
 * and shared memory, error detection (divergent barriers and warp collectives, shared
 * memory limits, faults), graphs, compile errors and a million-thread launch. Also
 * compiles every .cu file of tests/kernels that includes kb_device.h with NVRTC, to show
 * the header's CUDA side is valid. Warp collectives: test_emu_warp.c; data (atomics,
 * conversions, vector accesses, math, argument passing): test_emu_data.c. */
#include "emu_fixture.h"

#include <dirent.h>
#include <math.h>
#include <nvrtc.h>
#include <pthread.h>
#include <sys/stat.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- basics ---- */
static void test_device_info(void)
{
    kb_device_info d;
    kb_backend_ctx *x89 = open_emu(3, 89);
    CHECK(B->device_info(X, &d) == KB_OK);
    CHECK(strncmp(d.name, "kbench CPU emulator (", 21) == 0);
    CHECK(strcmp(d.uuid, "emu") == 0);
    CHECK(!(d.caps & KB_CAP_GPU_TIMER) && d.sm == 90 && d.sm_count == 2);
    CHECK(d.max_shmem_per_block_optin == 227 * 1024);
    CHECK(B->device_info(x89, &d) == KB_OK);
    CHECK(d.sm == 89 && d.sm_count == 3 && d.max_shmem_per_block_optin == 99 * 1024);
    const char *tc = B->toolchain_id(X);
    CHECK(tc && tc[0] && !contains(tc, "(version unknown)"));
    CHECK_MSG(contains(tc, " -O2 ") && contains(tc, "-fstack-clash-protection"), "%s", tc); /* flags key the cache */
    CHECK(strcmp(B->artifact_ext, ".so") == 0);
    B->fini(x89);
}

static void test_alloc_poison(void)
{
    unsigned char h[1000];
    kb_dptr p = dalloc(X, sizeof h);
    int all_ff = 1;
    CHECK(p % 256 == 0);
    CHECK(B->download(X, h, p, sizeof h) == KB_OK);
    for (size_t i = 0; i < sizeof h; i++)
        all_ff &= h[i] == 0xff;
    CHECK(all_ff);
    float f;
    memcpy(&f, h, 4);
    CHECK(isnan(f));
    CHECK(B->fill(X, p, 7, 10) == KB_OK);
    CHECK(B->download(X, h, p, 12) == KB_OK);
    CHECK(h[0] == 7 && h[9] == 7 && h[10] == 0xff);
    B->free(X, p);
    /* a large block freed and allocated again comes back poisoned, and distinct blocks
     * of the same size never alias */
    size_t big = 3u << 20;
    kb_dptr b1 = dalloc(X, big), b2 = dalloc(X, big);
    CHECK(b1 != b2 && b1 % 256 == 0 && b2 % 256 == 0);
    CHECK(B->fill(X, b1, 0, big) == KB_OK && B->fill(X, b2, 1, big) == KB_OK);
    B->free(X, b1);
    kb_dptr b3 = dalloc(X, big);
    unsigned char *back = malloc(big);
    CHECK(B->download(X, back, b3, big) == KB_OK);
    int poisoned = 1;
    for (size_t i = 0; i < big; i++)
        poisoned &= back[i] == 0xff;
    CHECK(poisoned);
    CHECK(B->download(X, back, b2, 16) == KB_OK && back[0] == 1 && back[15] == 1);
    free(back);
    B->free(X, b2);
    B->free(X, b3);
    /* sizes whose rounding up to 256 bytes (plus the header) would wrap around */
    kb_dptr huge = 0;
    CHECK(B->alloc(X, SIZE_MAX, &huge) == KB_ERR_OOM);
    CHECK(B->alloc(X, SIZE_MAX - 300, &huge) == KB_ERR_OOM);
    CHECK(B->alloc(X, (size_t)1 << 62, &huge) == KB_ERR_OOM);
}

static void test_resources_and_geometry(void)
{
    kb_resources r;
    CHECK(B->resources(X, M_BLOCK, "reverse_block", &r) == KB_OK);
    CHECK(r.max_threads == 1024 && r.registers == -1);
    CHECK(B->resources(X, M_BLOCK, "no_such_kernel", &r) != KB_OK);
    kb_arg a[] = { kb_arg_ptr(0), kb_arg_i32(0) };
    CHECK(launch(X, M_BLOCK, "no_such_kernel", 1, 1, 1, 1, 1, 1, 0, a, 2) == KB_ERR_LAUNCH);
    CHECK(launch(X, M_BLOCK, "divergent_barrier", 1, 1, 1, 1025, 1, 1, 0, a, 2) == KB_ERR_LAUNCH);
    CHECK(launch(X, M_BLOCK, "divergent_barrier", 1, 1, 1, 32, 32, 2, 0, a, 2) == KB_ERR_LAUNCH);
    CHECK(launch(X, M_BLOCK, "divergent_barrier", 0, 1, 1, 32, 1, 1, 0, a, 2) == KB_ERR_LAUNCH);
}

/* ---- block barrier and shared memory ---- */
static void test_barrier_reverse(void)
{
    enum { NB = 4, NT = 256, N = NB * NT };
    float in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = (float)i;
    kb_dptr d_in = dalloc(X, sizeof in), d_out = dalloc(X, sizeof out);
    B->upload(X, d_in, in, sizeof in);
    kb_arg a[] = { kb_arg_ptr(d_out), kb_arg_ptr(d_in), kb_arg_i32(1) };
    CHECK(launch(X, M_BLOCK, "reverse_block", NB, 1, 1, NT, 1, 1, 0, a, 3) == KB_OK);
    B->download(X, out, d_out, sizeof out);
    int bad = 0;
    for (int b = 0; b < NB; b++)
        for (int t = 0; t < NT; t++)
            bad += out[b * NT + t] != in[b * NT + NT - 1 - t];
    CHECK_MSG(bad == 0, "%d wrong with the barrier", bad);
    /* without it, the threads that run first read what has not been written yet */
    a[2] = kb_arg_i32(0);
    CHECK(launch(X, M_BLOCK, "reverse_block", NB, 1, 1, NT, 1, 1, 0, a, 3) == KB_OK);
    B->download(X, out, d_out, sizeof out);
    int nan_first_half = 0;
    for (int t = 0; t < NT / 2; t++)
        nan_first_half += isnan(out[t]);
    CHECK(nan_first_half == NT / 2);
    B->free(X, d_in);
    B->free(X, d_out);
}

static void test_transpose_2d(void)
{
    enum { R = 70, C = 45 };
    float in[R * C], out[R * C];
    for (int i = 0; i < R * C; i++)
        in[i] = (float)(i * 3 + 1);
    kb_dptr d_in = dalloc(X, sizeof in), d_out = dalloc(X, sizeof out);
    B->upload(X, d_in, in, sizeof in);
    kb_arg a[] = { kb_arg_ptr(d_out), kb_arg_ptr(d_in), kb_arg_i32(R), kb_arg_i32(C) };
    CHECK(launch(X, M_BLOCK, "transpose", (C + 31) / 32, (R + 31) / 32, 1, 32, 8, 1, 0, a, 4) == KB_OK);
    B->download(X, out, d_out, sizeof out);
    int bad = 0;
    for (int r = 0; r < R; r++)
        for (int c = 0; c < C; c++)
            bad += out[c * R + r] != in[r * C + c];
    CHECK_MSG(bad == 0, "%d of %d transposed wrong", bad, R * C);
    B->free(X, d_in);
    B->free(X, d_out);
}

static void test_dyn_shared(void)
{
    enum { NB = 8, NT = 128 };
    float in[NB * NT], out[NB];
    for (int i = 0; i < NB * NT; i++)
        in[i] = (float)(i % 17);
    kb_dptr d_in = dalloc(X, sizeof in), d_out = dalloc(X, sizeof out);
    B->upload(X, d_in, in, sizeof in);
    kb_arg a[] = { kb_arg_ptr(d_out), kb_arg_ptr(d_in) };
    CHECK(launch(X, M_BLOCK, "dyn_sum", NB, 1, 1, NT, 1, 1, NT * sizeof(float), a, 2) == KB_OK);
    B->download(X, out, d_out, sizeof out);
    for (int b = 0; b < NB; b++) {
        float want = 0;
        for (int t = 0; t < NT; t++)
            want += in[b * NT + t];
        CHECK_MSG(out[b] == want, "block %d: %g want %g", b, out[b], want);
    }
    B->free(X, d_in);
    B->free(X, d_out);
}

static void test_geometry_3d(void)
{
    enum { GX = 3, GY = 2, GZ = 2, BX = 4, BY = 3, BZ = 2, N = GX * GY * GZ * BX * BY * BZ };
    unsigned out[4 * N];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d) };
    CHECK(launch(X, M_BLOCK, "geom3d", GX, GY, GZ, BX, BY, BZ, 0, a, 1) == KB_OK);
    B->download(X, out, d, sizeof out);
#define P3(x, y, z) ((unsigned)(x) | (unsigned)(y) << 10 | (unsigned)(z) << 20)
    int bad = 0, g = 0;
    for (int bz = 0; bz < GZ; bz++)
        for (int by = 0; by < GY; by++)
            for (int bx = 0; bx < GX; bx++)
                for (int tz = 0; tz < BZ; tz++)
                    for (int ty = 0; ty < BY; ty++)
                        for (int tx = 0; tx < BX; tx++, g++)
                            bad += out[4 * g] != P3(tx, ty, tz) || out[4 * g + 1] != P3(bx, by, bz) ||
                                   out[4 * g + 2] != P3(BX, BY, BZ) ||
                                   out[4 * g + 3] != P3(GX, GY, GZ) + (32u << 26);
#undef P3
    CHECK_MSG(bad == 0, "%d of %d threads saw the wrong geometry", bad, N);
    B->free(X, d);
}

static void test_poison_shared(void)
{
    enum { NB = 2, NT = 64 };
    float out[NB * NT];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d) };
    CHECK(launch(X, M_BLOCK, "read_unwritten", NB, 1, 1, NT, 1, 1, 0, a, 1) == KB_OK);
    B->download(X, out, d, sizeof out);
    int ok = 1;
    for (int i = 0; i < NB * NT; i++)
        ok &= i % NT < NT / 2 ? out[i] == 1.0f : isnan(out[i]);
    CHECK(ok);
    B->free(X, d);
}

static void test_divergent_barrier(void)
{
    enum { NB = 4, NT = 256 };
    float out[NB * NT];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d), kb_arg_i32(224) };
    CHECK(launch(X, M_BLOCK, "divergent_barrier", NB, 1, 1, NT, 1, 1, 0, a, 2) == KB_ERR_FAULT);
    const char *e = B->last_error(X);
    CHECK_MSG(contains(e, "divergent __syncthreads in block (") &&
              contains(e, "224 of 256 threads waited, 32 had exited"), "%s", e);
    /* the backend stays usable */
    a[1] = kb_arg_i32(NT);
    CHECK(launch(X, M_BLOCK, "divergent_barrier", NB, 1, 1, NT, 1, 1, 0, a, 2) == KB_OK);
    B->download(X, out, d, sizeof out);
    CHECK(out[0] == 1.0f && out[NB * NT - 1] == 1.0f);
    /* a warp collective some lanes never reach */
    kb_arg w[] = { kb_arg_ptr(d) };
    CHECK(launch(X, M_WARP, "warp_divergent", 1, 1, 1, 64, 1, 1, 0, w, 1) == KB_ERR_FAULT);
    e = B->last_error(X);
    CHECK_MSG(contains(e, "divergent warp collective in block (0,0,0) warp 0"), "%s", e);
    CHECK(launch(X, M_BLOCK, "divergent_barrier", NB, 1, 1, NT, 1, 1, 0, a, 2) == KB_OK);
    B->free(X, d);
}

/* ---- limits and faults ---- */
static void test_shared_limit(void)
{
    kb_backend_ctx *x89 = open_emu(1, 89);
    kb_module *m89 = build_load(x89, "emu_block");
    float out[256];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d) };
    /* 40 KiB static + 100 KiB dynamic: fits sm_90 (227 KiB), not sm_89 (99 KiB) */
    CHECK(launch(X, M_BLOCK, "static_40k", 1, 1, 1, 256, 1, 1, 100 * 1024, a, 1) == KB_OK);
    B->download(X, out, d, sizeof out);
    CHECK(out[0] == 257.0f && out[255] == 2.0f);
    CHECK(launch(x89, m89, "static_40k", 1, 1, 1, 256, 1, 1, 100 * 1024, a, 1) == KB_ERR_LAUNCH);
    const char *e = B->last_error(x89);
    CHECK_MSG(contains(e, "bytes of dynamic shared memory asked, sm_89 allows 101376"), "%s", e);
    CHECK(launch(x89, m89, "static_40k", 1, 1, 1, 256, 1, 1, 60 * 1024, a, 1) == KB_ERR_LAUNCH);
    e = B->last_error(x89);
    CHECK_MSG(contains(e, "(static 40960 + dynamic 61440)") && contains(e, "sm_89 allows 101376"), "%s", e);
    CHECK(launch(x89, m89, "static_40k", 1, 1, 1, 256, 1, 1, 50 * 1024, a, 1) == KB_OK);
    CHECK(launch(X, M_BLOCK, "static_40k", 1, 1, 1, 256, 1, 1, 228 * 1024, a, 1) == KB_ERR_LAUNCH);
    /* over 48 KiB of static __shared__ fails as ptxas fails the GPU build, on any arch */
    char src[512];
    snprintf(src, sizeof src, "%s/big_static.cu", tmpdir);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("#include \"kb_device.h\"\nextern \"C\" __global__ void big(float *o)\n"
              "{ KB_SHARED(float, s, [12800]); s[threadIdx.x] = 1.0f; o[threadIdx.x] = s[0]; }\n", f);
        fclose(f);
        kb_module *mb = build_load_src(X, src);
        kb_arg o[] = { kb_arg_ptr(d) };
        CHECK(mb && launch(X, mb, "big", 1, 1, 1, 32, 1, 1, 0, o, 1) == KB_ERR_LAUNCH);
        CHECK_MSG(contains(B->last_error(X), "51200 bytes of static shared memory asked"), "%s", B->last_error(X));
        if (mb)
            B->unload(X, mb);
    }
    B->free(X, d);
    B->unload(x89, m89);
    B->fini(x89);
}

/* The emulator emulates the architecture of the table --arch names (core/arch.h): its cc as
 * the device's, the a-target kept, its shared-memory limit, and the gating defines in every
 * module it builds. A cluster launch is refused: the emulator does not model clusters yet. */
static void test_emulated_arch_and_clusters(void)
{
    kb_device_info d;
    kb_backend_ctx *x = open_emu(1, 120 + KB_ARCH_SPECIFIC);
    CHECK(x && B->device_info(x, &d) == KB_OK);
    CHECK(d.sm == 120 && kb_target_sm(&d) == 1120 && d.max_shmem_per_block_optin == 99 * 1024);
    char src[512];
    snprintf(src, sizeof src, "%s/gate.cu", tmpdir);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("#include \"kb_device.h\"\n#if KB_ARCH != 120 || KB_ARCH_SPECIFIC != 1\n#error gating defines\n#endif\n"
              "extern \"C\" __global__ void gate(float *o) { o[threadIdx.x] = KB_ARCH + KB_ARCH_SPECIFIC; }\n", f);
        fclose(f);
    }
    kb_module *m = build_load_src(x, src);
    float out[32];
    kb_dptr dp = dalloc(x, sizeof out);
    kb_arg a[] = { kb_arg_ptr(dp) };
    CHECK(m && launch(x, m, "gate", 1, 1, 1, 32, 1, 1, 0, a, 1) == KB_OK);
    B->download(x, out, dp, sizeof out);
    CHECK(out[0] == 121.0f && out[31] == 121.0f);
    CHECK(launch(x, m, "gate", 1, 1, 1, 32, 1, 1, 100 * 1024, a, 1) == KB_ERR_LAUNCH);
    CHECK_MSG(contains(B->last_error(x), "sm_120a allows 101376"), "%s", B->last_error(x));
    kb_geom g = { { 4, 1, 1 }, { 32, 1, 1 }, 0, { 2, 1, 1 } };
    CHECK(B->launch(x, m, "gate", &g, a, 1) == KB_ERR_LAUNCH);
    CHECK_MSG(contains(B->last_error(x), "2x1x1 thread block cluster launch: the emulator does not model clusters"),
              "%s", B->last_error(x));
    CHECK(B->graph_begin(x) == KB_OK);   /* refused at capture too: its replay could not run it */
    CHECK(B->launch(x, m, "gate", &g, a, 1) == KB_ERR_LAUNCH);
    kb_graph *gr = NULL;
    CHECK(B->graph_end(x, &gr) == KB_OK);
    if (gr)
        B->graph_free(x, gr);
    B->free(x, dp);
    if (m)
        B->unload(x, m);
    B->fini(x);
    kb_backend_opts o = { .emu_threads = 1, .sm_override = 75 };
    char err[256];
    x = NULL;
    CHECK(B->init(&o, &x, err, sizeof err) == KB_ERR_INPUT && !x);
    CHECK_MSG(contains(err, "no architecture of code 75"), "%s", err);
}

static void test_segv_caught(void)
{
    float out[64];
    kb_dptr d = dalloc(X, sizeof out);
    for (int round = 0; round < 2; round++) {
        kb_arg a[] = { kb_arg_ptr(16), kb_arg_i32(2), kb_arg_i32(7) };
        CHECK(launch(X, M_BLOCK, "bad_pointer", 4, 1, 1, 64, 1, 1, 0, a, 3) == KB_ERR_FAULT);
        const char *e = B->last_error(X);
        CHECK_MSG(contains(e, "SIGSEGV") && contains(e, "in block (2,0,0) thread (7,0,0)"), "%s", e);
        kb_arg ok[] = { kb_arg_ptr(d), kb_arg_i32(64) };
        CHECK(launch(X, M_BLOCK, "divergent_barrier", 1, 1, 1, 64, 1, 1, 0, ok, 2) == KB_OK);
    }
    kb_arg dz[] = { kb_arg_ptr(d), kb_arg_i32(1), kb_arg_i32(0) };
    CHECK(launch(X, M_BLOCK, "div_or_trap", 1, 1, 1, 4, 1, 1, 0, dz, 3) == KB_ERR_FAULT);
    CHECK_MSG(contains(B->last_error(X), "SIGFPE"), "%s", B->last_error(X));
    dz[2] = kb_arg_i32(-1);
    CHECK(launch(X, M_BLOCK, "div_or_trap", 1, 1, 1, 4, 1, 1, 0, dz, 3) == KB_ERR_FAULT);
    CHECK_MSG(contains(B->last_error(X), "__trap()"), "%s", B->last_error(X));
    dz[2] = kb_arg_i32(3);
    CHECK(launch(X, M_BLOCK, "div_or_trap", 1, 1, 1, 4, 1, 1, 0, dz, 3) == KB_OK);
    /* a stack overflow hits the guard page of the thread's stack */
    kb_arg s[] = { kb_arg_ptr(d), kb_arg_i32(4000) };
    CHECK(launch(X, M_BLOCK, "stack_hog", 1, 1, 1, 4, 1, 1, 0, s, 2) == KB_ERR_FAULT);
    CHECK_MSG(contains(B->last_error(X), "stack overflow"), "%s", B->last_error(X));
    /* ... and so does one frame bigger than the stack, which would skip the guard page
     * (into a neighbouring mapping, e.g. another thread's stack) without stack probes */
    kb_arg bf[] = { kb_arg_ptr(d), kb_arg_i32(0) };
    CHECK(launch(X, M_BLOCK, "big_frame", 1, 1, 1, 4, 1, 1, 0, bf, 2) == KB_ERR_FAULT);
    CHECK_MSG(contains(B->last_error(X), "stack overflow"), "%s", B->last_error(X));
    s[1] = kb_arg_i32(10);
    CHECK(launch(X, M_BLOCK, "stack_hog", 1, 1, 1, 4, 1, 1, 0, s, 2) == KB_OK);
    int r[4];
    B->download(X, r, d, sizeof r);
    CHECK(r[0] == 55 && r[3] == 55);
    B->free(X, d);
}

/* ---- graphs, builds, scale ---- */
static void test_graph(void)
{
    enum { N = 100 };
    float h[N];
    for (int i = 0; i < N; i++)
        h[i] = (float)i;
    kb_dptr d = dalloc(X, sizeof h);
    B->upload(X, d, h, sizeof h);
    kb_graph *g = NULL;
    CHECK(B->graph_begin(X) == KB_OK);
    kb_arg a[] = { kb_arg_ptr(d), kb_arg_f32(1.0f), kb_arg_i32(N) };
    CHECK(launch(X, M_BLOCK, "add_scalar", 2, 1, 1, 64, 1, 1, 0, a, 3) == KB_OK);
    a[1] = kb_arg_f32(2.0f);   /* the graph keeps its own copy of the arguments */
    CHECK(launch(X, M_BLOCK, "add_scalar", 2, 1, 1, 64, 1, 1, 0, a, 3) == KB_OK);
    a[1] = kb_arg_f32(100.0f);
    CHECK(B->graph_end(X, &g) == KB_OK && g);
    B->download(X, h, d, sizeof h);
    CHECK(h[0] == 0.0f && h[99] == 99.0f);   /* capture does not run anything */
    CHECK(B->graph_launch(X, g) == KB_OK);
    CHECK(B->graph_launch(X, g) == KB_OK);
    B->download(X, h, d, sizeof h);
    CHECK(h[0] == 6.0f && h[99] == 105.0f);
    B->graph_free(X, g);
    B->free(X, d);
}

static void test_compile_error(void)
{
    char src[512], out[512];
    snprintf(src, sizeof src, "%s/broken.cu", tmpdir);
    snprintf(out, sizeof out, "%s/broken.so", tmpdir);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("#include \"kb_device.h\"\nextern \"C\" __global__ void k(float *p) { p[0] = undeclared_name; }\n", f);
    fclose(f);
    kb_compile_req req = { .source_path = src, .include_dir = KB_SOURCE_KERNELS_DIR, .sm = 90 };
    kb_sb log;
    kb_sb_init(&log);
    CHECK(B->build(X, &req, out, &log) == KB_ERR_COMPILE);
    CHECK_MSG(contains(log.s, "undeclared_name"), "log: %s", log.s);
    CHECK(access(out, F_OK) != 0);
    kb_sb_free(&log);
    /* kernel code is held to -Wall -Wextra -Werror: a warning fails the module too */
    f = fopen(src, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("#include \"kb_device.h\"\nextern \"C\" __global__ void k(float *p) { int never_read = 1; p[0] = 0; }\n", f);
    fclose(f);
    kb_sb_init(&log);
    CHECK(B->build(X, &req, out, &log) == KB_ERR_COMPILE);
    CHECK_MSG(contains(log.s, "never_read") && contains(log.s, "Werror"), "log: %s", log.s);
    CHECK(access(out, F_OK) != 0);
    kb_sb_free(&log);
    unlink(src);
    /* no compiler: init says which one is missing */
    char err[256] = "";
    kb_backend_ctx *x = NULL;
    const char *old = getenv("CXX");
    char *saved = old ? strdup(old) : NULL;
    setenv("CXX", "/nonexistent/kb-g++", 1);
    CHECK(B->init(NULL, &x, err, sizeof err) == KB_ERR_SETUP);
    CHECK_MSG(contains(err, "/nonexistent/kb-g++"), "%s", err);
    if (saved) setenv("CXX", saved, 1); else unsetenv("CXX");
    free(saved);
}

/* ---- builds paused while a timing window is open ---- */

typedef struct {
    kb_backend_ctx *x;
    const char *src;
    char out[512];
    kb_status st;
} build_job;

static void *build_thread(void *arg)
{
    build_job *j = arg;
    kb_compile_req req = { .source_path = j->src, .include_dir = KB_SOURCE_KERNELS_DIR, .sm = 90 };
    kb_sb log;
    kb_sb_init(&log);
    j->st = B->build(j->x, &req, j->out, &log);
    kb_sb_free(&log);
    return NULL;
}

/* The pid a fake compiler wrote into path, waiting up to 5 s for it; 0 when none came. */
static int pid_from(const char *path)
{
    for (int i = 0; i < 500; i++) {
        FILE *f = fopen(path, "r");
        int pid = 0;
        if (f) {
            int got = fscanf(f, "%d", &pid);
            fclose(f);
            if (got == 1 && pid > 0)
                return pid;
        }
        nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
    }
    return 0;
}

/* The state letter of /proc/pid/stat ('S' sleeping, 'T' stopped, ...), '?' when unreadable. */
static char proc_state(int pid)
{
    char path[64], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f)
        return '?';
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    const char *p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

/* Whether the process group pgid is stopped: a member stopped ('T') and none running or
 * sleeping. A shell stopped while it vforks a child waits for that child uninterruptibly
 * ('D') until the child, stopped too, execs: the group is stopped all the same. */
static int group_stopped(int pgid)
{
    DIR *d = opendir("/proc");
    int stopped = 0, going = 0;
    for (struct dirent *e; d && (e = readdir(d));) {
        char path[300], buf[512], st;
        int ppid, pgrp;
        snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
        FILE *f = e->d_name[0] >= '1' && e->d_name[0] <= '9' ? fopen(path, "r") : NULL;
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = 0;
        const char *p = strrchr(buf, ')');
        if (!p || sscanf(p + 1, " %c %d %d", &st, &ppid, &pgrp) != 3 || pgrp != pgid)
            continue;
        stopped += st == 'T' || st == 't';
        going += st == 'R' || st == 'S';
    }
    if (d)
        closedir(d);
    return stopped > 0 && going == 0;
}

/* Poll up to 30 s (a loaded machine, a sanitizer build) for pid, the leader of its process
 * group, to reach (want 1) or leave (want 0) the stopped state. */
static int stopped_becomes(int pid, int want)
{
    for (int i = 0; i < 3000; i++) {
        if (want ? proc_state(pid) == 'T' || group_stopped(pid) : proc_state(pid) != 'T')
            return 1;
        nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
    }
    return 0;
}

/* A compiler in flight is stopped while a timing window is open (timer_start .. timer_stop)
 * and goes on after it; one started while a window is open is stopped at once. The fake
 * compiler writes its pid (its process group's) and sleeps 5 s (1 s could end before a
 * loaded machine opened the window): its sleep child belongs to the group and is stopped
 * with it. */
static void test_builds_pause_in_timing_windows(void)
{
    char cxx[512], pidfile[2][512];
    snprintf(cxx, sizeof cxx, "%s/slow-cxx.sh", tmpdir);
    FILE *f = fopen(cxx, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fprintf(f, "#!/bin/sh\ncase \"$1\" in --version) echo slow-cxx 1; exit 0;; esac\n"
               "n=0; while [ -e %s/pid$n ]; do n=$((n+1)); done; echo $$ > %s/pid$n; sleep 5; exit 1\n",
            tmpdir, tmpdir);
    fclose(f);
    CHECK(chmod(cxx, 0755) == 0);
    for (int i = 0; i < 2; i++)
        snprintf(pidfile[i], sizeof pidfile[i], "%s/pid%d", tmpdir, i);
    const char *old = getenv("CXX");
    char *saved = old ? strdup(old) : NULL;
    setenv("CXX", cxx, 1);
    kb_backend_ctx *x = NULL;
    char err[256] = "";
    CHECK_MSG(B->init(NULL, &x, err, sizeof err) == KB_OK, "%s", err);
    if (saved) setenv("CXX", saved, 1); else unsetenv("CXX");
    free(saved);
    if (!x)
        return;
    build_job j[2] = { { x, cxx, "", KB_OK }, { x, cxx, "", KB_OK } };
    pthread_t t[2];
    for (int i = 0; i < 2; i++)
        snprintf(j[i].out, sizeof j[i].out, "%s/never-%d.so", tmpdir, i);
    CHECK(pthread_create(&t[0], NULL, build_thread, &j[0]) == 0);
    int pid0 = pid_from(pidfile[0]);
    CHECK(pid0 > 0 && proc_state(pid0) != 'T');
    double us;
    CHECK(B->timer_start(x) == KB_OK);                       /* the window opens */
    CHECK_MSG(stopped_becomes(pid0, 1), "state %c", proc_state(pid0));
    CHECK(pthread_create(&t[1], NULL, build_thread, &j[1]) == 0);
    /* stopped as it starts: it has no time to write its pid (or, should it have had a
     * moment, it is stopped right after) */
    nanosleep(&(struct timespec){ 0, 300000000 }, NULL);
    if (access(pidfile[1], F_OK) == 0)
        CHECK_MSG(stopped_becomes(pid_from(pidfile[1]), 1), "state %c", proc_state(pid_from(pidfile[1])));
    CHECK(B->timer_stop(x, &us) == KB_OK);                   /* it closes: both go on */
    int pid1 = pid_from(pidfile[1]);
    CHECK(pid1 > 0 && stopped_becomes(pid0, 0) && stopped_becomes(pid1, 0));
    for (int i = 0; i < 2; i++) {
        pthread_join(t[i], NULL);
        CHECK(j[i].st == KB_ERR_COMPILE);   /* the fake exits 1 */
        unlink(pidfile[i]);
    }
    unlink(cxx);
    B->fini(x);
}

static void test_many_threads(void)
{
    /* a million threads without barriers, and a barrier-heavy launch, on 2 workers */
    enum { N = 1 << 20 };
    float *h = malloc(N * sizeof *h);
    for (int i = 0; i < N; i++)
        h[i] = 1.0f;
    kb_dptr d = dalloc(X, N * sizeof *h);
    B->upload(X, d, h, N * sizeof *h);
    kb_arg a[] = { kb_arg_ptr(d), kb_arg_f32(2.0f), kb_arg_i32(N) };
    double us = 0;
    B->timer_start(X);
    CHECK(launch(X, M_BLOCK, "add_scalar", N / 256, 1, 1, 256, 1, 1, 0, a, 3) == KB_OK);
    CHECK(B->timer_stop(X, &us) == KB_OK && us > 0);
    B->download(X, h, d, N * sizeof *h);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += h[i] != 3.0f;
    CHECK(bad == 0);
    kb_dptr d_out = dalloc(X, N * sizeof *h);
    kb_arg r[] = { kb_arg_ptr(d_out), kb_arg_ptr(d), kb_arg_i32(1) };
    double us_bar = 0;
    B->timer_start(X);
    CHECK(launch(X, M_BLOCK, "reverse_block", N / 1024 / 4, 1, 1, 1024, 1, 1, 0, r, 3) == KB_OK);
    B->timer_stop(X, &us_bar);
    printf("     1M threads, no barrier: %.1f ms; 256K threads with a barrier: %.1f ms\n", us / 1e3, us_bar / 1e3);
    B->free(X, d_out);
    B->free(X, d);
    free(h);
}

/* ---- the CUDA side of kb_device.h ---- */
static int nvrtc_compile(const char *path, const char *arch, char **ptx_out)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *src = calloc((size_t)n + 1, 1);
    size_t got = fread(src, 1, (size_t)n, f);
    fclose(f);
    src[got] = 0;
    if (!strstr(src, "#include \"kb_device.h\"")) {   /* not meant for both backends */
        free(src);
        return -1;
    }
    nvrtcProgram p;
    char opt_arch[64];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    const char *opts[] = { opt_arch, "-std=c++17", "-I" KB_SOURCE_KERNELS_DIR, "-I" KB_CUDA_INCLUDE_DIR };
    int ok = nvrtcCreateProgram(&p, src, path, 0, NULL, NULL) == NVRTC_SUCCESS;
    nvrtcResult r = ok ? nvrtcCompileProgram(p, 4, opts) : NVRTC_ERROR_PROGRAM_CREATION_FAILURE;
    if (r != NVRTC_SUCCESS) {
        size_t ls = 0;
        nvrtcGetProgramLogSize(p, &ls);
        char *log = calloc(ls + 1, 1);
        nvrtcGetProgramLog(p, log);
        fprintf(stderr, "NVRTC %s %s: %s\n%s\n", arch, path, nvrtcGetErrorString(r), log);
        free(log);
    } else if (ptx_out) {
        size_t ps = 0;
        nvrtcGetPTXSize(p, &ps);
        *ptx_out = calloc(ps + 1, 1);
        nvrtcGetPTX(p, *ptx_out);
    }
    if (ok)
        nvrtcDestroyProgram(&p);
    free(src);
    return r == NVRTC_SUCCESS;
}

static void test_nvrtc_compiles(void)
{
    DIR *dir = opendir(TEST_KERNELS_DIR);
    struct dirent *de;
    int n = 0;
    CHECK(dir != NULL);
    while (dir && (de = readdir(dir))) {
        size_t len = strlen(de->d_name);
        if (len < 4 || strcmp(de->d_name + len - 3, ".cu") != 0)
            continue;
        if (strstr(de->d_name, "sm90"))   /* sm_90a kernels: test_emu_sm90 compiles them for their arch */
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", TEST_KERNELS_DIR, de->d_name);
        int r = nvrtc_compile(path, "sm_80", NULL);
        if (r < 0)
            continue;
        CHECK_MSG(r == 1, "%s does not compile with NVRTC for sm_80", de->d_name);
        n++;
    }
    if (dir)
        closedir(dir);
    CHECK(n >= 3);
    /* the data kernels also for sm_89 and sm_90; kb_load_vec<4> is one 128-bit access */
    char *ptx = NULL;
    CHECK(nvrtc_compile(TEST_KERNELS_DIR "/emu_data.cu", "sm_89", NULL) == 1);
    CHECK(nvrtc_compile(TEST_KERNELS_DIR "/emu_data.cu", "sm_90", &ptx) == 1);
    CHECK(ptx && strstr(ptx, "ld.global.v4.u32") && strstr(ptx, "st.global.v4.u32"));
    free(ptx);
}

int main(void)
{
    if (!fixture_begin("test_emu", FIX_BLOCK | FIX_WARP))
        return 1;
    RUN(test_device_info);
    RUN(test_alloc_poison);
    RUN(test_resources_and_geometry);
    RUN(test_barrier_reverse);
    RUN(test_transpose_2d);
    RUN(test_dyn_shared);
    RUN(test_geometry_3d);
    RUN(test_poison_shared);
    RUN(test_divergent_barrier);
    RUN(test_shared_limit);
    RUN(test_emulated_arch_and_clusters);
    RUN(test_segv_caught);
    RUN(test_graph);
    RUN(test_compile_error);
    RUN(test_builds_pause_in_timing_windows);
    RUN(test_many_threads);
    RUN(test_nvrtc_compiles);
    fixture_end();
    TEST_MAIN_END();
}
