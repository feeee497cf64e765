/* test_emu.c - the emu backend through its kb_backend interface only: build the test
 * kernels (tests/kernels/emu_*.cu) with the host compiler, load, launch, download, and
 * check barriers, warp collectives, shared memory, geometry, atomics, conversions,
 * vector accesses, poison, error detection (divergent barriers, misalignment, faults,
 * limits), graphs and compile errors. Also compiles every .cu file of tests/kernels that
 * includes kb_device.h with NVRTC, to show the header's CUDA side is valid. */
#include "backend.h"
#include "check.h"
#include "kb_convert.h"

#include <dirent.h>
#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TEST_KERNELS_DIR KB_SOURCE_KERNELS_DIR "/../tests/kernels"

static const kb_backend *B = &kb_backend_emu;
static char tmpdir[256];
static kb_backend_ctx *X;                /* 2 workers, sm_90 */
static kb_module *M_BLOCK, *M_WARP, *M_DATA;

static kb_backend_ctx *open_emu(int threads, int sm)
{
    kb_backend_opts o = { .emu_threads = threads, .sm_override = sm };
    kb_backend_ctx *x = NULL;
    char err[512];
    kb_status st = B->init(&o, &x, err, sizeof err);
    CHECK_MSG(st == KB_OK, "%s", err);
    return x;
}

/* Build the kernel source src into a fresh file of the temp dir and load it. */
static kb_module *build_load_src(kb_backend_ctx *x, const char *src)
{
    static int n_built; /* a fresh file each time: never rewrite a loaded module */
    char out[512];
    kb_sb log;
    kb_module *m = NULL;
    snprintf(out, sizeof out, "%s/module-%d%s", tmpdir, n_built++, B->artifact_ext);
    kb_compile_req req = { .source_path = src, .include_dir = KB_SOURCE_KERNELS_DIR, .sm = 90 };
    kb_sb_init(&log);
    kb_status st = B->build(x, &req, out, &log);
    CHECK_MSG(st == KB_OK, "build %s: %s\n%s", src, B->last_error(x), log.s);
    kb_sb_free(&log);
    if (st == KB_OK) {
        st = B->load(x, out, &m);
        CHECK_MSG(st == KB_OK, "load %s: %s", src, B->last_error(x));
    }
    return m;
}

/* Build tests/kernels/<name>.cu and load it. */
static kb_module *build_load(kb_backend_ctx *x, const char *name)
{
    char src[512];
    snprintf(src, sizeof src, "%s/%s.cu", TEST_KERNELS_DIR, name);
    return build_load_src(x, src);
}

static kb_dptr dalloc(kb_backend_ctx *x, size_t bytes)
{
    kb_dptr p = 0;
    CHECK(B->alloc(x, bytes, &p) == KB_OK);
    return p;
}

static kb_status launch(kb_backend_ctx *x, kb_module *m, const char *entry, unsigned gx, unsigned gy,
                        unsigned gz, unsigned bx, unsigned by, unsigned bz, size_t shmem,
                        const kb_arg *args, int nargs)
{
    kb_geom g = { { gx, gy, gz }, { bx, by, bz }, shmem };
    return B->launch(x, m, entry, &g, args, nargs);
}

static int contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* ---- basics ---- */
static void test_device_info(void)
{
    kb_device_info d;
    kb_backend_ctx *x89 = open_emu(3, 89);
    CHECK(B->device_info(X, &d) == KB_OK);
    CHECK(strncmp(d.name, "kbench CPU emulator (", 21) == 0);
    CHECK(strcmp(d.uuid, "emu") == 0);
    CHECK(d.is_emulator == 1 && d.sm == 90 && d.sm_count == 2);
    CHECK(d.max_shmem_per_block_optin == 227 * 1024);
    CHECK(B->device_info(x89, &d) == KB_OK);
    CHECK(d.sm == 89 && d.sm_count == 3 && d.max_shmem_per_block_optin == 99 * 1024);
    const char *tc = B->toolchain_id(X);
    CHECK(tc && tc[0] && !contains(tc, "unknown"));
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

/* ---- warp collectives ---- */
/* Expected results of the `shuffles` kernel for thread gid of a block of nt threads,
 * from the CUDA Programming Guide's definitions. */
static void shuffles_expect(int gid, int nt, int width, int *o)
{
    int lane = gid % nt % 32, warp0 = gid - lane, seg = lane / width * width;
    int lanes = nt - gid % nt + lane < 32 ? nt - gid % nt + lane : 32; /* lanes in this warp */
#define V(l) ((warp0 + (l)) * 7 + 3)
    o[0] = V((lane * 5 + 3) & 31);
    o[1] = V(seg + (lane + 1) % width);
    o[2] = lane - seg >= 3 ? V(lane - 3) : V(lane);
    o[3] = lane - seg + 3 < width ? V(lane + 3) : V(lane);
    o[4] = (lane ^ 5) < seg + width ? V(lane ^ 5) : V(lane);
    unsigned ballot = 0;
    int any37 = 0, all_pos = 1, sum = 0;
    for (int l = 0; l < lanes; l++) {
        ballot |= (unsigned)(V(l) % 3 == 0) << l;
        any37 |= warp0 + l == 37;
        all_pos &= V(l) > 0;
        sum += V(l);
    }
    o[5] = (int)ballot;
    o[6] = any37 | 0 << 1 | all_pos << 2 | (lanes > 7 ? 0 : 1) << 3;
    o[7] = warp0 + (lane ^ 16);                      /* f = gid/2, times 2 */
    o[8] = lane + 1 < 32 ? (warp0 + lane + 1) * 4 + 1 : gid * 4 + 1;
    o[9] = warp0;
    o[10] = lane >= 1 ? (warp0 + lane - 1) & 0xffff : gid & 0xffff;
    o[11] = sum + lanes - 1;
#undef V
}

static void run_shuffles(unsigned bx, unsigned by, unsigned bz, int width)
{
    enum { NB = 2, MAXT = 64, NO = 12 };
    int nt = (int)(bx * by * bz), n = NB * nt;
    int out[NB * MAXT * NO], want[NO];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d), kb_arg_i32(width) };
    CHECK(launch(X, M_WARP, "shuffles", NB, 1, 1, bx, by, bz, 0, a, 2) == KB_OK);
    B->download(X, out, d, sizeof out);
    int bad = 0;
    for (int g = 0; g < n; g++) {
        shuffles_expect(g, nt, width, want);
        for (int k = 0; k < NO; k++) {
            /* these may read lanes a partial warp does not have */
            if (nt % 32 && (k == 0 || k == 7 || k == 8))
                continue;
            if (out[g * NO + k] != want[k] && bad++ < 5)
                fprintf(stderr, "  block (%u,%u,%u) width %d thread %d result %d: %d want %d\n", bx, by, bz,
                        width, g, k, out[g * NO + k], want[k]);
        }
    }
    CHECK_MSG(bad == 0, "%d wrong shuffle results", bad);
    B->free(X, d);
}

static void test_shuffles(void)
{
    run_shuffles(64, 1, 1, 32);
    run_shuffles(64, 1, 1, 8);
    run_shuffles(8, 4, 2, 16);   /* lanes follow the linear order x + y*bx + z*bx*by */
    run_shuffles(48, 1, 1, 16);  /* a partial second warp of 16 lanes */
}

static void test_warp_sum(void)
{
    enum { N = 256 };
    float in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = (float)(i % 13);
    kb_dptr d_in = dalloc(X, sizeof in), d_out = dalloc(X, sizeof out);
    B->upload(X, d_in, in, sizeof in);
    kb_arg a[] = { kb_arg_ptr(d_out), kb_arg_ptr(d_in) };
    CHECK(launch(X, M_WARP, "warp_sum", 2, 1, 1, N / 2, 1, 1, 0, a, 2) == KB_OK);
    B->download(X, out, d_out, sizeof out);
    int bad = 0;
    for (int w = 0; w < N / 32; w++) {
        float s = 0;
        for (int l = 0; l < 32; l++)
            s += in[w * 32 + l];
        for (int l = 0; l < 32; l++)
            bad += out[w * 32 + l] != s;
    }
    CHECK(bad == 0);
    B->free(X, d_in);
    B->free(X, d_out);
}

/* Lanes released from one exchange read it after the last lane in has run on: a subset
 * of the warp exchanging again meanwhile must not overwrite what they have yet to read. */
static void test_warp_subset(void)
{
    enum { NT = 64 };
    int out[NT * 3];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d) };
    CHECK(launch(X, M_WARP, "warp_subset", 2, 1, 1, NT, 1, 1, 0, a, 1) == KB_OK);
    B->download(X, out, d, sizeof out);
    int bad = 0;
    for (int t = 0; t < NT; t++) {
        int lane = t % 32, pair = lane == 0 || lane == 31;
        int want[3] = { 1000, pair ? 31 - lane : 0, pair ? -(31 - lane) - 7 : 0 };
        for (int k = 0; k < 3; k++)
            if (out[3 * t + k] != want[k] && bad++ < 5)
                fprintf(stderr, "  thread %d result %d: %d want %d\n", t, k, out[3 * t + k], want[k]);
    }
    CHECK_MSG(bad == 0, "%d wrong results", bad);
    B->free(X, d);
}

/* ---- data ---- */
static void test_atomics(void)
{
    enum { NB = 64, NT = 128, N = NB * NT };
    kb_dptr d = dalloc(X, 64);
    int32_t init[16] = { 0 };
    init[6] = -1;  /* max */
    init[7] = 1;   /* min */
    B->upload(X, d, init, sizeof init);
    kb_arg a[] = { kb_arg_ptr(d), kb_arg_ptr(d + 4), kb_arg_ptr(d + 8), kb_arg_ptr(d + 16),
                   kb_arg_ptr(d + 24), kb_arg_ptr(d + 28), kb_arg_ptr(d + 32), kb_arg_ptr(d + 36) };
    CHECK(launch(X, M_DATA, "atomics", NB, 1, 1, NT, 1, 1, 0, a, 8) == KB_OK);
    int32_t r[16];
    unsigned long long ull;
    float f;
    B->download(X, r, d, sizeof r);
    memcpy(&ull, &r[2], 8);
    memcpy(&f, &r[4], 4);
    CHECK(r[0] == N);
    CHECK((uint32_t)r[1] == 2u * N);
    CHECK(ull == (unsigned long long)N << 33);
    CHECK(f == 0.5f * N);
    CHECK(r[6] == N - 1 && r[7] == -(N - 1));
    CHECK(r[8] == N && (uint32_t)r[9] == 3u * N);
    B->free(X, d);
}

/* int conversions: round to nearest even, saturate, NaN -> 0 (cvt.rni.sat). */
static int want_int(float x, int lo, int hi)
{
    if (isnan(x)) return 0;
    double r = nearbyint((double)x);
    return r < lo ? lo : r > hi ? hi : (int)r;
}

static void test_convert(void)
{
    enum { N = 64 };
    float in[N];
    const float special[] = { 0.0f, -0.0f, 1.0f, -1.5f, 2.5f, 3.5f, -2.5f, 127.5f, 128.0f, -300.0f,
                              448.0f, 464.0f, 500.0f, 57344.0f, 65504.0f, 65520.0f, 1e10f, -1e10f,
                              1e-8f, -1e-40f, 3.0e-5f, 0.1f, INFINITY, -INFINITY, NAN };
    int ns = (int)(sizeof special / sizeof special[0]);
    kb_rng rng;
    kb_rng_seed(&rng, 42);
    for (int i = 0; i < N; i++)
        in[i] = i < ns ? special[i] : kb_rng_uniform(&rng, -600.0f, 600.0f);
    kb_dptr d_in = dalloc(X, sizeof in), h = dalloc(X, 2 * N), b = dalloc(X, 2 * N), e4 = dalloc(X, N),
            e5 = dalloc(X, N), i8 = dalloc(X, N), i32 = dalloc(X, 4 * N), back = dalloc(X, 6 * 4 * N);
    B->upload(X, d_in, in, sizeof in);
    kb_arg a[] = { kb_arg_ptr(d_in), kb_arg_ptr(h), kb_arg_ptr(b), kb_arg_ptr(e4), kb_arg_ptr(e5),
                   kb_arg_ptr(i8), kb_arg_ptr(i32), kb_arg_ptr(back), kb_arg_i32(N) };
    CHECK(launch(X, M_DATA, "convert", 2, 1, 1, 48, 1, 1, 0, a, 9) == KB_OK);
    uint16_t hh[N], bb[N];
    uint8_t ee4[N], ee5[N];
    int8_t ii8[N];
    int ii32[N];
    float bk[6 * N];
    B->download(X, hh, h, sizeof hh);
    B->download(X, bb, b, sizeof bb);
    B->download(X, ee4, e4, sizeof ee4);
    B->download(X, ee5, e5, sizeof ee5);
    B->download(X, ii8, i8, sizeof ii8);
    B->download(X, ii32, i32, sizeof ii32);
    B->download(X, bk, back, sizeof bk);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float x = in[i];
        bad += hh[i] != kb_f32_to_f16_bits(x) || bb[i] != kb_f32_to_bf16_bits(x) ||
               ee4[i] != kb_f32_to_e4m3_bits(x) || ee5[i] != kb_f32_to_e5m2_bits(x);
        bad += ii8[i] != want_int(x, -128, 127) || ii32[i] != want_int(x, INT32_MIN, INT32_MAX);
        float w[5] = { kb_f16_bits_to_f32(hh[i]), kb_bf16_bits_to_f32(bb[i]), kb_e4m3_bits_to_f32(ee4[i]),
                       kb_e5m2_bits_to_f32(ee5[i]), (float)ii8[i] };
        for (int k = 0; k < 5; k++)
            bad += !(bk[6 * i + k] == w[k] || (isnan(bk[6 * i + k]) && isnan(w[k])));
        bad += !(bk[6 * i + 5] == x || (isnan(x) && isnan(bk[6 * i + 5])));
    }
    CHECK_MSG(bad == 0, "%d conversion mismatches", bad);
    /* hand-checked corners */
    CHECK(ii8[4] == 2 && ii8[5] == 4 && ii8[6] == -2 && ii8[7] == 127 && ii8[9] == -128 && ii8[24] == 0);
    CHECK(ii32[16] == INT32_MAX && ii32[17] == INT32_MIN && ii32[24] == 0);
    CHECK(ee4[12] == 0x7e && ee4[22] == 0x7e);   /* e4m3 saturates to 448 */
    CHECK(ee5[16] == 0x7b);                       /* e5m2 saturates to 57344 */
    CHECK(hh[15] == 0x7c00 && bb[24] == 0x7fff);  /* fp16 overflows to inf; bf16 NaN is canonical */
    CHECK(kb_f32_to_bf16_bits(-NAN) == 0x7fff && kb_f32_to_f16_bits(-NAN) == 0x7fff);
    kb_dptr ps[] = { d_in, h, b, e4, e5, i8, i32, back };
    for (int i = 0; i < 8; i++)
        B->free(X, ps[i]);
}

static void test_vector_access(void)
{
    enum { N = 256 };
    float in[N + 8], out[N];
    for (int i = 0; i < N + 8; i++)
        in[i] = (float)i;
    kb_dptr d_in = dalloc(X, sizeof in), d_out = dalloc(X, sizeof out);
    B->upload(X, d_in, in, sizeof in);
    kb_arg a[] = { kb_arg_ptr(d_out), kb_arg_ptr(d_in), kb_arg_i32(4) };
    CHECK(launch(X, M_DATA, "vec_copy_f4", 2, 1, 1, N / 8, 1, 1, 0, a, 3) == KB_OK);
    B->download(X, out, d_out, sizeof out);
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += out[i] != in[i + 4];
    CHECK(bad == 0);
    a[2] = kb_arg_i32(1);
    CHECK(launch(X, M_DATA, "vec_copy_f4", 2, 1, 1, N / 8, 1, 1, 0, a, 3) == KB_ERR_FAULT);
    const char *e = B->last_error(X);
    CHECK_MSG(contains(e, "misaligned 16-byte vector load at") && contains(e, "in block (0,0,0) thread (0,0,0)"),
              "%s", e);
    /* 16 bytes of halves: 8-element alignment; bf16 pairs: 4-byte alignment */
    a[2] = kb_arg_i32(8);
    CHECK(launch(X, M_DATA, "vec_copy_h8", 1, 1, 1, 16, 1, 1, 0, a, 3) == KB_OK);
    a[2] = kb_arg_i32(2);
    CHECK(launch(X, M_DATA, "vec_copy_h8", 1, 1, 1, 16, 1, 1, 0, a, 3) == KB_ERR_FAULT);
    a[2] = kb_arg_i32(2);
    CHECK(launch(X, M_DATA, "vec_copy_b2", 1, 1, 1, 16, 1, 1, 0, a, 3) == KB_OK);
    a[2] = kb_arg_i32(1);
    CHECK(launch(X, M_DATA, "vec_copy_b2", 1, 1, 1, 16, 1, 1, 0, a, 3) == KB_ERR_FAULT);
    CHECK(contains(B->last_error(X), "misaligned 4-byte vector load"));
    kb_arg s[] = { kb_arg_ptr(d_out), kb_arg_i32(1) };
    CHECK(launch(X, M_DATA, "vec_store_f2", 1, 1, 1, 8, 1, 1, 0, s, 2) == KB_ERR_FAULT);
    CHECK(contains(B->last_error(X), "misaligned 8-byte vector store"));
    B->free(X, d_in);
    B->free(X, d_out);
}

static void test_math(void)
{
    enum { N = 8 };
    float in[N] = { 0.5f, -1.25f, 3.0f, -0.01f, 200.0f, -200.0f, 0.0f, 7.5f }, out[12 * N];
    kb_dptr d_in = dalloc(X, sizeof in), d_out = dalloc(X, sizeof out);
    B->upload(X, d_in, in, sizeof in);
    kb_arg a[] = { kb_arg_ptr(d_out), kb_arg_ptr(d_in) };
    CHECK(launch(X, M_DATA, "math_funcs", 1, 1, 1, N, 1, 1, 0, a, 2) == KB_OK);
    B->download(X, out, d_out, sizeof out);
    for (int i = 0; i < N; i++) {
        float x = in[i], *o = out + 12 * i;
        float rs = 1.0f / sqrtf(fabsf(x) + 1.0f);
        CHECK(o[0] == expf(x) && o[2] == erff(x) && o[3] == tanhf(x) && o[4] == sqrtf(fabsf(x)));
        CHECK(fabsf(o[5] - rs) <= 1e-6f * rs && o[7] == fmaf(x, 2.0f, 1.0f) && o[9] == x / 4.0f + x);
        CHECK(o[10] == (x > 100.0f ? INFINITY : x < -100.0f ? -3.402823466e+38f : 3.402823466e+38f));
        CHECK(o[11] == (float)(90 + (i < 3 ? i : 3) + (i > 3 ? i : 3)));
    }
    B->free(X, d_in);
    B->free(X, d_out);
}

/* Arguments reach the kernel intact through both call paths: the direct x86-64 call and
 * libffi (forced with KBENCH_EMU_FFI=1, and taken anyway for nine floats). */
static void run_args(kb_backend_ctx *x, kb_module *m)
{
    double out[2 * 11];
    float f9[2];
    const long long big = -(1ll << 40) - 3, big2 = (1ll << 50) + 7;
    const double want[11] = { -5, 1.5f, (double)big, 7, -2.25f, 8, 9, -10, 0.125f, (double)big2, 11 };
    kb_dptr d = dalloc(x, sizeof out), d9 = dalloc(x, sizeof f9);
    kb_arg a[] = { kb_arg_ptr(d), kb_arg_i32(-5), kb_arg_f32(1.5f), kb_arg_i64(big), kb_arg_i32(7),
                   kb_arg_f32(-2.25f), kb_arg_i32(8), kb_arg_i32(9), kb_arg_i32(-10), kb_arg_f32(0.125f),
                   kb_arg_i64(big2), kb_arg_i32(11) };
    CHECK(launch(x, m, "many_args", 1, 1, 1, 2, 1, 1, 0, a, 12) == KB_OK);
    B->download(x, out, d, sizeof out);
    for (int t = 0; t < 2; t++)
        for (int n = 0; n < 11; n++)
            CHECK_MSG(out[t * 11 + n] == want[n], "thread %d arg %d: %g want %g", t, n, out[t * 11 + n], want[n]);
    kb_arg b[10] = { kb_arg_ptr(d9) };
    for (int i = 1; i < 10; i++)
        b[i] = kb_arg_f32((float)i);
    CHECK(launch(x, m, "nine_floats", 1, 1, 1, 2, 1, 1, 0, b, 10) == KB_OK);
    B->download(x, f9, d9, sizeof f9);
    CHECK(f9[0] == 285.0f && f9[1] == 285.0f);   /* sum of i*i, i = 1..9 */
    /* 16-byte stack alignment in the entry; two pointers among the stack arguments */
    unsigned al[64];
    kb_dptr dal = dalloc(x, sizeof al);
    kb_arg s[] = { kb_arg_ptr(dal), kb_arg_i32(1), kb_arg_i32(2), kb_arg_i32(3), kb_arg_i32(4), kb_arg_i32(5),
                   kb_arg_ptr(d9), kb_arg_ptr(d9) };
    CHECK(launch(x, m, "stack_align", 3, 1, 1, 64, 1, 1, 0, s, 8) == KB_OK);
    B->download(x, al, dal, sizeof al);
    int bad = 0;
    for (int t = 0; t < 64; t++)
        bad += al[t] != 0;
    CHECK_MSG(bad == 0, "%d threads saw a misaligned stack or wrong arguments (first: %u)", bad, al[0]);
    B->free(x, dal);
    B->free(x, d);
    B->free(x, d9);
}

static void test_argument_passing(void)
{
    run_args(X, M_DATA);
    setenv("KBENCH_EMU_FFI", "1", 1);
    kb_backend_ctx *x = open_emu(1, 0);
    unsetenv("KBENCH_EMU_FFI");
    kb_module *m = x ? build_load(x, "emu_data") : NULL;
    if (m) {
        run_args(x, m);
        B->unload(x, m);
    }
    if (x)
        B->fini(x);
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
    char cmd[512];
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kb_test_emu_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    X = open_emu(2, 0);
    if (!X)
        return 1;
    M_BLOCK = build_load(X, "emu_block");
    M_WARP = build_load(X, "emu_warp");
    M_DATA = build_load(X, "emu_data");
    if (!M_BLOCK || !M_WARP || !M_DATA)
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
    RUN(test_shuffles);
    RUN(test_warp_sum);
    RUN(test_warp_subset);
    RUN(test_atomics);
    RUN(test_convert);
    RUN(test_vector_access);
    RUN(test_math);
    RUN(test_argument_passing);
    RUN(test_shared_limit);
    RUN(test_segv_caught);
    RUN(test_graph);
    RUN(test_compile_error);
    RUN(test_many_threads);
    RUN(test_nvrtc_compiles);
    B->unload(X, M_DATA);
    B->unload(X, M_WARP);
    B->unload(X, M_BLOCK);
    B->fini(X);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    TEST_MAIN_END();
}
