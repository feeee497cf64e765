/* test_emu_data.c - data through the emu backend (set-up in emu_fixture.h): atomics,
 * conversions (fp16, bf16, fp8, saturating ints) against kb_convert.h, vector accesses
 * and their alignment faults, math functions, and kernel arguments through both call
 * paths (direct x86-64 call and libffi) with the entry's stack alignment. */
#include "emu_fixture.h"
#include "kernels/abi/kb_convert.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int main(void)
{
    if (!fixture_begin("test_emu_data", FIX_DATA))
        return 1;
    RUN(test_atomics);
    RUN(test_convert);
    RUN(test_vector_access);
    RUN(test_math);
    RUN(test_argument_passing);
    fixture_end();
    TEST_MAIN_END();
}
