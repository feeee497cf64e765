/* test_mma.c - kb_mma.h proven, not assumed: every emulated mma.sync shape against a
 * plain CPU product of one 16 x 8 x K tile (fragments built from the PTX tables in
 * tests/kernels/mma_tile.cu, independently of the emulator's own layout code), ldmatrix
 * in all six forms, cp.async zero fill, and the tf32 / fp8 conversions. The same kernels
 * are compiled with NVRTC for sm_80, sm_89 and sm_90 and their PTX inspected. */
#include "backend/backend.h"
#include "check.h"
#include "kernels/abi/kb_convert.h"

#include <math.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MMA_CU KB_SOURCE_KERNELS_DIR "/../tests/kernels/mma_tile.cu"

static const kb_backend *B = &kb_backend_emu;
static kb_backend_ctx *X;
static kb_module *M;
static kb_module *M120;   /* the same kernels for sm_120a (KB_ARCH 120, KB_ARCH_SPECIFIC 1): block-scaled mma */
static char tmpdir[64];

static kb_dptr upload(const void *h, size_t bytes)
{
    kb_dptr d = 0;
    CHECK(B->alloc(X, bytes, &d) == KB_OK);
    CHECK(B->upload(X, d, h, bytes) == KB_OK);
    return d;
}

/* One warp runs entry(args); returns the launch status. */
static kb_status launch_warp(const char *entry, const kb_arg *args, int n)
{
    kb_geom g = { { 1, 1, 1 }, { 32, 1, 1 }, 0, { 1, 1, 1 } };
    kb_status st = B->launch(X, M, entry, &g, args, n);
    CHECK_MSG(st == KB_OK, "%s: %s", entry, B->last_error(X));
    return st;
}

typedef enum { E_F16, E_BF16, E_TF32, E_S8, E_E4M3, E_E5M2 } elem;

static size_t elem_size(elem e) { return e == E_F16 || e == E_BF16 ? 2 : e == E_TF32 ? 4 : 1; }

/* The value the tensor core uses for raw bits of kind e (tf32: the low 13 bits ignored). */
static double decode(elem e, uint32_t bits)
{
    switch (e) {
    case E_F16: return kb_f16_bits_to_f32((uint16_t)bits);
    case E_BF16: return kb_bf16_bits_to_f32((uint16_t)bits);
    case E_TF32: { uint32_t u = bits & 0xffffe000u; float f; memcpy(&f, &u, 4); return f; }
    case E_S8: return (int8_t)bits;
    case E_E4M3: return kb_e4m3_bits_to_f32((uint8_t)bits);
    case E_E5M2: return kb_e5m2_bits_to_f32((uint8_t)bits);
    }
    return 0;
}

/* Random finite bits of kind e, magnitudes around 1 (integers for s8). */
static uint32_t random_bits(elem e, unsigned *seed)
{
    for (;;) {
        uint32_t r = (uint32_t)rand_r(seed) << 16 ^ (uint32_t)rand_r(seed);
        float x = (float)(r % 2001u) / 1000.0f - 1.0f;
        uint32_t u;
        switch (e) {
        case E_F16: return kb_f32_to_f16_bits(x);
        case E_BF16: return kb_f32_to_bf16_bits(x);
        case E_TF32: memcpy(&u, &x, 4); return u | (r & 0x1fffu);   /* junk in the ignored bits */
        case E_S8: return r & 0xffu;
        case E_E4M3: case E_E5M2:
            u = r & 0xffu;
            if (isfinite(decode(e, u)))
                return u;
        }
    }
}

static void put(void *p, size_t i, size_t esz, uint32_t v) { memcpy((char *)p + i * esz, &v, esz); }

/* D = A*B + C on one tile through the emulator, against the CPU in double. Returns the
 * number of wrong elements. swap_ref: the reference reads A with k and k^1 exchanged, as
 * if the two halves of a register were swapped, to show such an error is caught. */
static int run_mma(const char *entry, elem e, int K, int swap_ref)
{
    size_t esz = elem_size(e);
    unsigned seed = 12345u + (unsigned)K * 7u + (unsigned)e;
    void *a = calloc((size_t)16 * K, esz), *b = calloc((size_t)K * 8, esz);
    uint32_t abits[16 * 32], bbits[32 * 8];
    float c[128], d[128];
    int ci[128], di[128];
    for (int i = 0; i < 16 * K; i++)
        put(a, (size_t)i, esz, abits[i] = random_bits(e, &seed));
    for (int i = 0; i < K * 8; i++)
        put(b, (size_t)i, esz, bbits[i] = random_bits(e, &seed));
    for (int i = 0; i < 128; i++) {
        ci[i] = (int)(rand_r(&seed) % 20001u) - 10000;
        c[i] = (float)ci[i] / 4096.0f;
    }
    int is_int = e == E_S8, n_bad = -1;
    kb_dptr da = upload(a, (size_t)16 * K * esz), db = upload(b, (size_t)K * 8 * esz);
    kb_dptr dc = upload(is_int ? (void *)ci : (void *)c, 512), dd = 0;
    CHECK(B->alloc(X, 512, &dd) == KB_OK);
    kb_arg args[] = { kb_arg_ptr(da), kb_arg_ptr(db), kb_arg_ptr(dc), kb_arg_ptr(dd) };
    if (launch_warp(entry, args, 4) == KB_OK) {
        CHECK(B->download(X, is_int ? (void *)di : (void *)d, dd, 512) == KB_OK);
        int bad = 0;
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                double s = is_int ? ci[m * 8 + n] : c[m * 8 + n];
                for (int k = 0; k < K; k++)
                    s += decode(e, abits[m * K + (swap_ref ? k ^ 1 : k)]) * decode(e, bbits[k * 8 + n]);
                double got = is_int ? di[m * 8 + n] : d[m * 8 + n];
                /* fp32 accumulation of K exact products: a few ulps of the terms' size */
                if (fabs(got - s) > (is_int ? 0.0 : 1e-5 * (1.0 + fabs(s)))) {
                    if (bad++ < 3 && !swap_ref)
                        fprintf(stderr, "%s: D[%d][%d] = %.9g, want %.9g\n", entry, m, n, got, s);
                }
            }
        n_bad = bad;
    }
    B->free(X, dd);
    B->free(X, dc);
    B->free(X, db);
    B->free(X, da);
    free(b);
    free(a);
    return n_bad;
}

static void check_mma(const char *entry, elem e, int K)
{
    int bad = run_mma(entry, e, K, 0);
    CHECK_MSG(bad == 0, "%s: %d of 128 elements wrong", entry, bad);
}

static void test_mma_f16(void) { check_mma("mma_f16", E_F16, 16); }
static void test_mma_bf16(void) { check_mma("mma_bf16", E_BF16, 16); }
static void test_mma_tf32_ignores_low_bits(void) { check_mma("mma_tf32", E_TF32, 8); }
static void test_mma_s8_exact(void) { check_mma("mma_s8", E_S8, 32); }
static void test_mma_e4m3(void) { check_mma("mma_e4m3", E_E4M3, 32); }
static void test_mma_e5m2(void) { check_mma("mma_e5m2", E_E5M2, 32); }

/* The comparison is not blind: two neighbouring k of A exchanged fail nearly everywhere. */
static void test_swapped_layout_is_caught(void)
{
    CHECK(run_mma("mma_f16", E_F16, 16, 1) > 100);
    CHECK(run_mma("mma_s8", E_S8, 32, 1) > 100);
}

/* s8 accumulation wraps modulo 2^32 (no .satfinite): 32 products of 127 * 127 on top of
 * C = INT32_MAX - 1000 come out negative. */
static void test_s8_accumulates_wrapping(void)
{
    uint8_t a[16 * 32], b[32 * 8];
    int c[128], d[128];
    memset(a, 127, sizeof a);
    memset(b, 127, sizeof b);
    for (int i = 0; i < 128; i++)
        c[i] = 2147483647 - 1000;
    kb_dptr da = upload(a, sizeof a), db = upload(b, sizeof b), dc = upload(c, sizeof c), dd = 0;
    CHECK(B->alloc(X, sizeof d, &dd) == KB_OK);
    kb_arg args[] = { kb_arg_ptr(da), kb_arg_ptr(db), kb_arg_ptr(dc), kb_arg_ptr(dd) };
    if (launch_warp("mma_s8", args, 4) == KB_OK) {
        B->download(X, d, dd, sizeof d);
        uint32_t want = (uint32_t)(2147483647 - 1000) + 32u * 127u * 127u;
        CHECK_MSG((uint32_t)d[0] == want && (uint32_t)d[127] == want, "%d", d[0]);
        CHECK(d[0] < 0);
    }
    B->free(X, dd), B->free(X, dc), B->free(X, db), B->free(X, da);
}

static void test_ldmatrix(void)
{
    uint16_t src[4 * 64];
    uint32_t out[6 * 32 * 4];
    for (int i = 0; i < 4 * 64; i++)
        src[i] = (uint16_t)(0x1000 + i);   /* matrix m, row r, col c -> 0x1000 + 64m + 8r + c */
    kb_dptr ds = upload(src, sizeof src), dout = 0;
    CHECK(B->alloc(X, sizeof out, &dout) == KB_OK);
    kb_arg args[] = { kb_arg_ptr(ds), kb_arg_ptr(dout) };
    if (launch_warp("ldsm", args, 2) == KB_OK) {
        B->download(X, out, dout, sizeof out);
        int bad = 0;
        for (int mode = 0; mode < 6; mode++) {
            int nmat = mode % 3 == 0 ? 1 : mode % 3 == 1 ? 2 : 4, trans = mode >= 3;
            for (int lane = 0; lane < 32; lane++)
                for (int j = 0; j < 4; j++) {
                    int g = lane >> 2, t = lane & 3;
                    uint32_t want = 0;
                    if (j < nmat) {
                        /* lane holds (row g, cols 2t, 2t+1) of matrix j, or of its transpose */
                        uint32_t lo = trans ? src[64 * j + 8 * (2 * t) + g] : src[64 * j + 8 * g + 2 * t];
                        uint32_t hi = trans ? src[64 * j + 8 * (2 * t + 1) + g] : src[64 * j + 8 * g + 2 * t + 1];
                        want = lo | hi << 16;
                    }
                    uint32_t got = out[(mode * 32 + lane) * 4 + j];
                    if (got != want && bad++ < 3)
                        fprintf(stderr, "ldmatrix mode %d lane %d reg %d: 0x%08x want 0x%08x\n", mode, lane, j, got, want);
                }
        }
        CHECK(bad == 0);
    }
    B->free(X, dout), B->free(X, ds);
}

static void test_cp_async_zero_fill(void)
{
    uint8_t src[512], out[512];
    for (int i = 0; i < 512; i++)
        src[i] = (uint8_t)(i * 7 + 1);   /* never 0 */
    kb_dptr ds = upload(src, sizeof src), dout = 0;
    CHECK(B->alloc(X, sizeof out, &dout) == KB_OK);
    kb_arg args[] = { kb_arg_ptr(ds), kb_arg_ptr(dout) };
    if (launch_warp("cp_async", args, 2) == KB_OK) {
        B->download(X, out, dout, sizeof out);
        int bad = 0;
        for (int i = 0; i < 512; i++)
            bad += out[i] != (i % 16 < (i / 16) % 17 ? src[i] : 0);
        CHECK_MSG(bad == 0, "%d bytes wrong", bad);
    }
    /* a misaligned source faults, as on the GPU */
    kb_arg bad_args[] = { kb_arg_ptr(ds + 4), kb_arg_ptr(dout) };
    kb_geom g = { { 1, 1, 1 }, { 32, 1, 1 }, 0, { 1, 1, 1 } };
    CHECK(B->launch(X, M, "cp_async", &g, bad_args, 2) == KB_ERR_FAULT);
    CHECK(strstr(B->last_error(X), "cp.async") != NULL);
    B->free(X, dout), B->free(X, ds);
}

static void test_conversions(void)
{
    /* tf32: round half away from zero on the 13 dropped bits (cvt.rna) */
    uint32_t in[4] = { 0x3f800fffu, 0x3f801000u, 0xbf801000u, 0x3f803000u }, out[4];
    uint32_t want[4] = { 0x3f800000u, 0x3f802000u, 0xbf802000u, 0x3f804000u };
    kb_dptr di = upload(in, sizeof in), dout = 0;
    CHECK(B->alloc(X, 1024, &dout) == KB_OK);
    kb_arg args[] = { kb_arg_ptr(di), kb_arg_ptr(dout), kb_arg_i32(4) };
    if (launch_warp("cvt_tf32", args, 3) == KB_OK) {
        B->download(X, out, dout, sizeof out);
        for (int i = 0; i < 4; i++)
            CHECK_MSG(out[i] == want[i], "tf32 0x%08x -> 0x%08x, want 0x%08x", in[i], out[i], want[i]);
    }
    /* fp8 pairs widen to f16 exactly, low byte to low half: every e4m3 and e5m2 code */
    uint16_t pairs[256];
    uint32_t wide[256];
    for (int i = 0; i < 128; i++) {
        pairs[i] = (uint16_t)((2 * i) | (2 * i + 1) << 8);
        pairs[128 + i] = pairs[i];
    }
    kb_dptr dp = upload(pairs, sizeof pairs);
    kb_arg a2[] = { kb_arg_ptr(dp), kb_arg_ptr(dout), kb_arg_i32(256) };
    if (launch_warp("cvt_fp8x2", a2, 3) == KB_OK) {
        B->download(X, wide, dout, sizeof wide);
        int bad = 0;
        for (int i = 0; i < 256; i++)
            for (int h = 0; h < 2; h++) {
                uint8_t code = (uint8_t)(pairs[i] >> (8 * h));
                float want_f = i < 128 ? kb_e4m3_bits_to_f32(code) : kb_e5m2_bits_to_f32(code);
                float got_f = kb_f16_bits_to_f32((uint16_t)(wide[i] >> (16 * h)));
                bad += !(got_f == want_f || (isnan(got_f) && isnan(want_f)));
            }
        CHECK_MSG(bad == 0, "%d fp8 codes widened wrong", bad);
    }
    B->free(X, dp), B->free(X, dout), B->free(X, di);
}

/* fp6 / fp4 codes widen to f16 exactly, and the scale codes decode as kb_convert.h says. */
static void test_lowp_conversions(void)
{
    uint32_t out[768];
    kb_dptr dout = 0;
    CHECK(B->alloc(X, sizeof out, &dout) == KB_OK);
    kb_arg args[] = { kb_arg_ptr(dout) };
    if (launch_warp("cvt_lowp", args, 1) == KB_OK) {
        B->download(X, out, dout, sizeof out);
        int bad = 0;
        for (int i = 0; i < 192; i++)
            for (int h = 0; h < 2; h++) {
                uint8_t code = (uint8_t)((i + h) % 64);
                float want = i < 64 ? kb_e2m3_bits_to_f32(code) : i < 128 ? kb_e3m2_bits_to_f32(code)
                           : kb_e2m1_bits_to_f32(code & 15);
                float got = kb_f16_bits_to_f32((uint16_t)(out[i] >> (16 * h)));
                bad += got != want || signbit(got) != signbit(want);
            }
        for (int c = 0; c < 256; c++) {
            float e8, e4, w8 = kb_ue8m0_to_f32((uint8_t)c), w4 = kb_ue4m3_to_f32((uint8_t)c);
            memcpy(&e8, &out[256 + c], 4);
            memcpy(&e4, &out[512 + c], 4);
            bad += !(e8 == w8 || (isnan(e8) && isnan(w8))) + !(e4 == w4 || (isnan(e4) && isnan(w4)));
        }
        CHECK_MSG(bad == 0, "%d fp6/fp4/scale codes converted wrong", bad);
    }
    B->free(X, dout);
}

/* ---- block-scaled mma.sync (sm_120a), shape by shape ---- */

typedef enum { BS_E4M3, BS_E5M2, BS_E2M3, BS_E3M2, BS_E2M1 } bs_elem;

static double bs_decode(bs_elem e, uint8_t c)
{
    switch (e) {
    case BS_E4M3: return kb_e4m3_bits_to_f32(c);
    case BS_E5M2: return kb_e5m2_bits_to_f32(c);
    case BS_E2M3: return kb_e2m3_bits_to_f32(c);
    case BS_E3M2: return kb_e3m2_bits_to_f32(c);
    default: return kb_e2m1_bits_to_f32(c);
    }
}

static uint8_t bs_code(bs_elem e, unsigned *seed)
{
    for (;;) {
        uint8_t c = (uint8_t)(rand_r(seed) & (e == BS_E2M1 ? 15 : e == BS_E2M3 || e == BS_E3M2 ? 63 : 255));
        if (isfinite(bs_decode(e, c)))
            return c;
    }
}

typedef struct {
    const char *entry;
    bs_elem elem;
    int k, vec, ue4m3;          /* K, scale chunks per row, scale format */
    int tida, tidb;             /* the selectors the entry was built with (bytes: in the kernel) */
} bs_shape;

/* One block-scaled tile through the emulator against the CPU: D = C + sum_k a sa b sb, each
 * scale that of the row's / column's K chunk. flip_tida: the reference takes A's scales from
 * the other thread pair, to show a wrong selector is caught. nan_row: a NaN scale code for
 * that row of A (-1: none). Returns the wrong elements. */
static int run_bs(const bs_shape *sh, int flip_tida, int nan_row)
{
    unsigned seed = 99u + (unsigned)sh->k * 3u + (unsigned)sh->elem;
    int K = sh->k, V = sh->vec, n_bad = -1;
    uint8_t a[16 * 64], b[64 * 8], sa[16 * 4], sb[8 * 4];
    float c[128], d[128];
    for (int i = 0; i < 16 * K; i++) a[i] = bs_code(sh->elem, &seed);
    for (int i = 0; i < K * 8; i++) b[i] = bs_code(sh->elem, &seed);
    for (int i = 0; i < 16 * V; i++) sa[i] = (uint8_t)(sh->ue4m3 ? 0x28 + rand_r(&seed) % 0x30 : 118 + rand_r(&seed) % 19);
    for (int i = 0; i < 8 * V; i++) sb[i] = (uint8_t)(sh->ue4m3 ? 0x28 + rand_r(&seed) % 0x30 : 118 + rand_r(&seed) % 19);
    if (nan_row >= 0)
        sa[nan_row * V] = sh->ue4m3 ? 0x7f : 0xff;
    for (int i = 0; i < 128; i++) c[i] = (float)(rand_r(&seed) % 2001 - 1000) / 64.0f;
    kb_dptr da = upload(a, sizeof a), db = upload(b, sizeof b), dc = upload(c, sizeof c), dsa = upload(sa, sizeof sa);
    kb_dptr dsb = upload(sb, sizeof sb), dd = 0;
    CHECK(B->alloc(X, sizeof d, &dd) == KB_OK);
    kb_arg args[] = { kb_arg_ptr(da), kb_arg_ptr(db), kb_arg_ptr(dc), kb_arg_ptr(dd), kb_arg_ptr(dsa), kb_arg_ptr(dsb) };
    kb_geom g = { { 1, 1, 1 }, { 32, 1, 1 }, 0, { 1, 1, 1 } };
    kb_status st = B->launch(X, M120, sh->entry, &g, args, 6);
    CHECK_MSG(st == KB_OK, "%s: %s", sh->entry, B->last_error(X));
    if (st == KB_OK && B->download(X, d, dd, sizeof d) == KB_OK) {
        n_bad = 0;
        for (int m = 0; m < 16; m++)
            for (int n = 0; n < 8; n++) {
                /* a wrong selector reads the other row of the pair: row m's partner m ^ 8 */
                int ra = flip_tida ? m ^ 8 : m;
                double s = c[m * 8 + n], mag = fabs(s);
                for (int k = 0; k < K; k++) {
                    int v = k / (K / V);
                    double sca = sh->ue4m3 ? kb_ue4m3_to_f32(sa[ra * V + v]) : kb_ue8m0_to_f32(sa[ra * V + v]);
                    double scb = sh->ue4m3 ? kb_ue4m3_to_f32(sb[n * V + v]) : kb_ue8m0_to_f32(sb[n * V + v]);
                    double term = bs_decode(sh->elem, a[m * K + k]) * sca * bs_decode(sh->elem, b[k * 8 + n]) * scb;
                    s += term;
                    mag += fabs(term);
                }
                double got = d[m * 8 + n];
                int bad = isnan(s) ? !isnan(got) : !(fabs(got - s) <= 1e-6 * mag + 1e-30);
                if (bad && n_bad++ < 3 && !flip_tida)
                    fprintf(stderr, "%s: D[%d][%d] = %.9g, want %.9g\n", sh->entry, m, n, got, s);
            }
    }
    B->free(X, dd), B->free(X, dsb), B->free(X, dsa), B->free(X, dc), B->free(X, db), B->free(X, da);
    return n_bad;
}

static const bs_shape bs_shapes[] = {
    { "bs_mx_e4m3", BS_E4M3, 32, 1, 0, 0, 0 }, { "bs_mx_e4m3_sel", BS_E4M3, 32, 1, 0, 1, 3 },
    { "bs_mx_e5m2", BS_E5M2, 32, 1, 0, 1, 2 }, { "bs_mx_e2m3", BS_E2M3, 32, 1, 0, 0, 1 },
    { "bs_mx_e3m2", BS_E3M2, 32, 1, 0, 1, 0 }, { "bs_mx_e2m1", BS_E2M1, 32, 1, 0, 0, 3 },
    { "bs_mxf4", BS_E2M1, 64, 2, 0, 1, 1 },    { "bs_nvf4", BS_E2M1, 64, 4, 1, 1, 2 },
    { "bs_nvf4_sel0", BS_E2M1, 64, 4, 1, 0, 0 },
};

static void test_block_scaled_shapes(void)
{
    for (size_t i = 0; i < sizeof bs_shapes / sizeof bs_shapes[0]; i++) {
        int bad = run_bs(&bs_shapes[i], 0, -1);
        CHECK_MSG(bad == 0, "%s: %d of 128 elements wrong", bs_shapes[i].entry, bad);
    }
}

/* The comparison is not blind: A's scales taken from the other lane of the thread pair fail
 * nearly everywhere, and a NaN scale makes exactly its row NaN. */
static void test_block_scaled_selector_is_caught(void)
{
    CHECK(run_bs(&bs_shapes[1], 1, -1) > 100);
    CHECK(run_bs(&bs_shapes[7], 1, -1) > 100);
    CHECK(run_bs(&bs_shapes[0], 0, 5) == 0);   /* the reference has row 5 NaN, and so has D */
    CHECK(run_bs(&bs_shapes[8], 0, 11) == 0);
}

/* ---- NVRTC: the CUDA side assembles, with the instructions it promises ---- */
static char *nvrtc_ptx(const char *arch)
{
    FILE *f = fopen(MMA_CU, "rb");
    if (!f)
        return NULL;
    char src[32768];
    size_t n = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    src[n] = 0;
    char opt_arch[64];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    const char *opts[] = { opt_arch, "-std=c++17", "-I" KB_SOURCE_KERNELS_DIR, "-I" KB_CUDA_INCLUDE_DIR };
    nvrtcProgram p;
    char *ptx = NULL;
    if (nvrtcCreateProgram(&p, src, "mma_tile.cu", 0, NULL, NULL) != NVRTC_SUCCESS)
        return NULL;
    if (nvrtcCompileProgram(p, 4, opts) == NVRTC_SUCCESS) {
        size_t ps = 0;
        nvrtcGetPTXSize(p, &ps);
        ptx = calloc(ps + 1, 1);
        nvrtcGetPTX(p, ptx);
    } else {
        size_t ls = 0;
        nvrtcGetProgramLogSize(p, &ls);
        char *log = calloc(ls + 1, 1);
        nvrtcGetProgramLog(p, log);
        fprintf(stderr, "NVRTC %s:\n%s\n", arch, log);
        free(log);
    }
    nvrtcDestroyProgram(&p);
    return ptx;
}

static void test_nvrtc_ptx(void)
{
    const char *archs[] = { "sm_80", "sm_89", "sm_90" };
    for (int i = 0; i < 3; i++) {
        char *ptx = nvrtc_ptx(archs[i]);
        CHECK_MSG(ptx != NULL, "mma_tile.cu does not compile for %s", archs[i]);
        if (!ptx)
            continue;
        CHECK(strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"));
        CHECK(strstr(ptx, "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
        CHECK(strstr(ptx, "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32"));
        CHECK(strstr(ptx, "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32"));
        CHECK(strstr(ptx, "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"));
        CHECK(strstr(ptx, "cp.async.cg.shared.global") && strstr(ptx, "cp.async.wait_group 0"));
        CHECK(strstr(ptx, "cvt.rna.tf32.f32"));
        int fp8 = strstr(ptx, "e4m3.e4m3.f32") != NULL;
        CHECK_MSG(fp8 == (i > 0), "%s: fp8 mma %s", archs[i], fp8 ? "present" : "absent");
        CHECK(!strstr(ptx, "block_scale"));   /* sm_120a only */
        free(ptx);
    }
}

/* sm_120a: every block-scaled kind assembles (ptxas ran: the CUBIN was built), with the
 * selectors as immediates; sm_100a has no mma.sync block_scale (tcgen05 instead). */
static void test_nvrtc_block_scaled(void)
{
    char *ptx = nvrtc_ptx("sm_120a");
    CHECK_MSG(ptx != NULL, "mma_tile.cu does not compile for sm_120a");
    if (!ptx)
        return;
    static const char *const want[] = {
        "kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e4m3.e4m3.f32.ue8m0",
        "kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e5m2.e5m2.f32.ue8m0",
        "kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m3.e2m3.f32.ue8m0",
        "kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e3m2.e3m2.f32.ue8m0",
        "kind::mxf8f6f4.block_scale.scale_vec::1X.f32.e2m1.e2m1.f32.ue8m0",
        "m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0",
        "m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3",
        "{3, 1}",   /* bs_mx_e4m3_sel's A selector, an immediate */
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_MSG(strstr(ptx, want[i]) != NULL, "sm_120a PTX lacks %s", want[i]);
    free(ptx);
}

/* Build mma_tile.cu for the emulated arch sm (one extra define, or NULL) into *out. */
static void build_module(int sm, const char *define, const char *so, kb_module **out)
{
    const char *defs[1] = { define };
    kb_compile_req req = { .source_path = MMA_CU, .include_dir = KB_SOURCE_KERNELS_DIR, .sm = sm,
                           .defines = defs, .n_defines = define ? 1 : 0 };
    kb_sb log;
    kb_sb_init(&log);
    kb_status st = B->build(X, &req, so, &log);
    CHECK_MSG(st == KB_OK, "build sm_%d: %s\n%s", sm, B->last_error(X), log.s);
    if (st == KB_OK)
        CHECK_MSG(B->load(X, so, out) == KB_OK, "load: %s", B->last_error(X));
    kb_sb_free(&log);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kb_test_mma_XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    char err[512] = "", so[128];
    kb_backend_opts o = { .emu_threads = 1, .sm_override = 90 };
    CHECK_MSG(B->init(&o, &X, err, sizeof err) == KB_OK, "%s", err);
    char so120[160];
    snprintf(so, sizeof so, "%s/mma_tile%s", tmpdir, B->artifact_ext);
    snprintf(so120, sizeof so120, "%s/mma_tile_120%s", tmpdir, B->artifact_ext);
    if (X) {
        build_module(90, NULL, so, &M);
        build_module(120 + KB_ARCH_SPECIFIC, NULL, so120, &M120);   /* sm_120a */
    }
    if (M) {
        RUN(test_mma_f16);
        RUN(test_mma_bf16);
        RUN(test_mma_tf32_ignores_low_bits);
        RUN(test_mma_s8_exact);
        RUN(test_mma_e4m3);
        RUN(test_mma_e5m2);
        RUN(test_swapped_layout_is_caught);
        RUN(test_s8_accumulates_wrapping);
        RUN(test_ldmatrix);
        RUN(test_cp_async_zero_fill);
        RUN(test_conversions);
        RUN(test_lowp_conversions);
        B->unload(X, M);
    }
    if (M120) {
        RUN(test_block_scaled_shapes);
        RUN(test_block_scaled_selector_is_caught);
        B->unload(X, M120);
    }
    RUN(test_nvrtc_ptx);
    RUN(test_nvrtc_block_scaled);
    if (X)
        B->fini(X);
    unlink(so);
    unlink(so120);
    rmdir(tmpdir);
    TEST_MAIN_END();
}
