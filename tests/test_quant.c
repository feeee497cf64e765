/* test_quant.c - the recipe quantiser and the distributions (engine/quant.h), each rule of
 * docs/precision.md against an independent computation: the fp6/fp4 formats value by
 * value, round-to-nearest-even against the bit-level encoder, the scale exponent rounded
 * up (a power of two too small saturates, one too large wastes the top binade: both
 * fail here), zero, NaN and partial blocks, NVFP4's two levels, int8, and the inputs. */
#include "check.h"
#include "engine/quant.h"
#include "kernels/abi/kb_convert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_fp6_fp4_formats(void)
{
    static const float e2m1[8] = { 0, 0.5f, 1, 1.5f, 2, 3, 4, 6 };
    for (int c = 0; c < 16; c++) {
        float v = kb_e2m1_bits_to_f32((uint8_t)c);
        CHECK(v == (c & 8 ? -e2m1[c & 7] : e2m1[c & 7]));
        CHECK(kb_f32_to_e2m1_bits(v) == (uint8_t)c || (v == 0 && (c & 7) == 0));
    }
    CHECK(kb_e2m3_bits_to_f32(0x1f) == 7.5f && kb_e2m3_bits_to_f32(0x01) == 0.125f);
    CHECK(kb_e3m2_bits_to_f32(0x1f) == 28.0f && kb_e3m2_bits_to_f32(0x01) == 0.0625f);
    for (int c = 0; c < 64; c++) {   /* every code is a number and encodes back */
        float a = kb_e2m3_bits_to_f32((uint8_t)c), b = kb_e3m2_bits_to_f32((uint8_t)c);
        CHECK(isfinite(a) && isfinite(b));
        CHECK(kb_f32_to_e2m3_bits(a) == c || a == 0);
        CHECK(kb_f32_to_e3m2_bits(b) == c || b == 0);
    }
    /* saturation, and NaN -> +max (no NaN code): cuda_fp6.h / cuda_fp4.h */
    CHECK(kb_e2m1_bits_to_f32(kb_f32_to_e2m1_bits(1e9f)) == 6.0f);
    CHECK(kb_e2m1_bits_to_f32(kb_f32_to_e2m1_bits(-INFINITY)) == -6.0f);
    CHECK(kb_e2m1_bits_to_f32(kb_f32_to_e2m1_bits(NAN)) == 6.0f);
    CHECK(kb_e3m2_bits_to_f32(kb_f32_to_e3m2_bits(29.9f)) == 28.0f);
    CHECK(kb_f32_to_e2m1_bits(2.5f) == 0x4 && kb_f32_to_e2m1_bits(3.5f) == 0x6);   /* ties to even */
    /* scale formats */
    CHECK(kb_ue8m0_to_f32(127) == 1.0f && kb_ue8m0_to_f32(0) == ldexpf(1, -127) && isnan(kb_ue8m0_to_f32(255)));
    CHECK(kb_ue4m3_to_f32(0x7e) == 448.0f && isnan(kb_ue4m3_to_f32(0x7f)) && kb_ue4m3_to_f32(0x38) == 1.0f);
    CHECK(kb_ue4m3_to_f32(0xb8) == 1.0f);   /* the sign bit is ignored */
}

/* The table search rounds exactly as the bit-level encoder (kb_fmt_encode) for every format. */
static void test_round_matches_encoder(void)
{
    static const kb_dtype dts[] = { KB_DT_FP8E4M3, KB_DT_FP8E5M2, KB_DT_FP6E2M3, KB_DT_FP6E3M2, KB_DT_FP4E2M1 };
    static const kb_fmt *fmts[] = { &KB_FMT_E4M3, &KB_FMT_E5M2, &KB_FMT_E2M3, &KB_FMT_E3M2, &KB_FMT_E2M1 };
    unsigned seed = 7;
    for (int i = 0; i < 5; i++) {
        kb_qop q;
        float x = 1.0f;
        CHECK(kb_qop_init(&q, dts[i], KB_RECIPE_MX, 0, 1, 1, &x, 1, 1) == KB_OK);
        int bad = 0;
        for (int n = 0; n < 20000; n++) {
            float v = ldexpf((float)rand_r(&seed) / (float)RAND_MAX - 0.5f, rand_r(&seed) % 40 - 20);
            if (n < 256)   /* every midpoint between neighbouring codes, and the codes */
                v = (float)(n < (int)q.n_vals - 1 ? 0.5 * (q.vals[n] + q.vals[n + 1]) : q.vals[n % q.n_vals]);
            bad += kb_qop_round(&q, v) != kb_fmt_encode(*fmts[i], v);
        }
        CHECK_MSG(bad == 0, "%s: %d values rounded differently", kb_dtype_name(dts[i]), bad);
        CHECK(kb_dtype_fmax(dts[i]) == q.vals[q.n_vals - 1]);
        kb_qop_free(&q);
    }
    CHECK(kb_dtype_fmax(KB_DT_FP8E4M3) == 448 && kb_dtype_fmax(KB_DT_FP4E2M1) == 6 && kb_dtype_fmax(KB_DT_BF16) == 0);
}

/* One row of n values quantised by recipe r; the decoded values in deq. */
static void quantise_row(kb_dtype dt, kb_recipe r, const float *x, int n, kb_qop *q, float *deq)
{
    CHECK(kb_qop_init(q, dt, r, 0, 1, n, x, n, 1) == KB_OK);
    for (int i = 0; i < n; i++)
        kb_qop_quantise(q, 0, i, x[i], &deq[i]);
}

/* The scale is the smallest power of two that keeps the block's amax within fmax. */
static void test_scale_rounds_up(void)
{
    unsigned seed = 3;
    float x[32], deq[32];
    for (int t = 0; t < 200; t++) {
        for (int i = 0; i < 32; i++)
            x[i] = ldexpf((float)rand_r(&seed) / (float)RAND_MAX, (t % 60) - 30) * (i % 2 ? -1.0f : 1.0f);
        kb_qop q;
        quantise_row(KB_DT_FP8E4M3, KB_RECIPE_MX, x, 32, &q, deq);
        double amax = 0;
        for (int i = 0; i < 32; i++) amax = fmax(amax, fabs(x[i]));
        double s = q.scale[0];
        CHECK(amax / s <= 448.0 && amax / (s / 2) > 448.0);
        CHECK(q.code[0] == (uint8_t)(log2(s) + 127));
        for (int i = 0; i < 32; i++)   /* nothing saturated: within half an ulp of e4m3 */
            CHECK(fabs(deq[i] - x[i]) <= ldexp(s * fabs(x[i]) / s, -4) + s * ldexp(1, -10));
        kb_qop_free(&q);
    }
    /* amax exactly 448 x 2^j: the scale is 2^j and the element decodes to 448 */
    x[0] = 448.0f * 8.0f;
    for (int i = 1; i < 32; i++) x[i] = 1.0f;
    kb_qop q;
    quantise_row(KB_DT_FP8E4M3, KB_RECIPE_BLOCK1X128, x, 32, &q, deq);
    CHECK(q.scale[0] == 8.0f && deq[0] == 3584.0f && q.code == NULL);
    kb_qop_free(&q);
}

static void test_zero_nan_partial(void)
{
    float x[40], deq[40];
    static const float tail[8] = { 0.25f, 0.5f, 0.75f, 1.0f, 1.5f, 2.0f, 0.5f, -1.0f };   /* exact at scale 0.5 */
    for (int i = 0; i < 40; i++) x[i] = i < 32 ? 0.0f : tail[i - 32];
    kb_qop q;
    quantise_row(KB_DT_FP4E2M1, KB_RECIPE_MX, x, 40, &q, deq);   /* a zero block, a partial block of 8 */
    CHECK(q.kblocks == 2 && q.code[0] == 0 && q.scale[0] == ldexpf(1, -127));
    CHECK(q.scale[1] == 0.5f);   /* amax 2 of the 8 left: 2 / 6 -> 2^-1 */
    for (int i = 0; i < 40; i++) CHECK(deq[i] == x[i]);   /* 0.25 k are exact in e2m1 x 0.5 */
    kb_qop_free(&q);
    x[3] = NAN;
    x[35] = INFINITY;
    for (int i = 0; i < 32; i++) if (i != 3) x[i] = 1.0f;
    quantise_row(KB_DT_FP8E5M2, KB_RECIPE_MX, x, 40, &q, deq);
    CHECK(q.code[0] == 255 && q.code[1] == 255 && isnan(deq[0]) && isnan(deq[39]));
    kb_qop_free(&q);
    /* fp32-scaled fp8: the amax skips the NaN and Inf, NaN stays NaN, Inf saturates */
    quantise_row(KB_DT_FP8E4M3, KB_RECIPE_TENSOR, x, 40, &q, deq);
    CHECK(q.tensor == ldexpf(1, -7) && isnan(deq[3]) && deq[35] == 448.0f * ldexpf(1, -7) && deq[0] == 1.0f);
    kb_qop_free(&q);
    /* fp32 scales: an all-zero block gets 1 */
    memset(x, 0, sizeof x);
    quantise_row(KB_DT_FP8E4M3, KB_RECIPE_BLOCK1X128, x, 40, &q, deq);
    CHECK(q.scale[0] == 1.0f && deq[7] == 0.0f);
    kb_qop_free(&q);
}

static void test_nvfp4(void)
{
    float x[32], deq[32];
    for (int i = 0; i < 32; i++) x[i] = i < 16 ? 0.1f * (float)(i + 1) : 1e-6f * (float)(i - 15);
    kb_qop q;
    quantise_row(KB_DT_FP4E2M1, KB_RECIPE_NV, x, 32, &q, deq);
    CHECK(q.kblocks == 2 && fabsf(q.tensor - 1.6f / 2688.0f) < 1e-9f);
    /* block 0: amax / (6 S) = 448 exactly -> the largest UE4M3; block 1 rounds to a small code */
    CHECK(q.code[0] == 0x7e && q.scale[0] == 448.0f);
    CHECK(fabs(deq[15] - 1.6) < 1e-6 && fabs(deq[0] - 0.1) < 0.05);
    double s1 = (double)q.scale[1] * q.tensor, amax1 = 16e-6;
    /* a subnormal UE4M3 scale is coarse: the largest element may saturate at 6 s */
    CHECK(s1 > 0 && fabs(deq[31]) <= 6 * s1 * (1 + 1e-6) && fabs(deq[31] - amax1) <= amax1 * 0.25);
    kb_qop_free(&q);
    /* a block scale that rounds down: the block's largest element saturates at 6 */
    for (int i = 0; i < 16; i++) x[i] = i == 0 ? 1.0f : 0.0f;
    for (int i = 16; i < 32; i++) x[i] = i == 16 ? 0.9f : 0.0f;   /* 0.9 / 6 / S = 403.2 -> 416 or 384 */
    quantise_row(KB_DT_FP4E2M1, KB_RECIPE_NV, x, 32, &q, deq);
    double s = (double)q.scale[1] * q.tensor;
    CHECK(q.scale[1] == 416.0f || q.scale[1] == 384.0f);
    CHECK(q.scale[1] == 384.0f ? deq[16] == (float)(6 * s) : fabs(deq[16] - 0.9) <= s * 0.5);
    kb_qop_free(&q);
    memset(x, 0, sizeof x);   /* an all-zero tensor: S = 1, block scales 0, elements 0 */
    quantise_row(KB_DT_FP4E2M1, KB_RECIPE_NV, x, 32, &q, deq);
    CHECK(q.tensor == 1.0f && q.code[0] == 0 && q.scale[0] == 0.0f && deq[3] == 0.0f);
    kb_qop_free(&q);
}

static void test_int8_and_unscaled(void)
{
    float x[4] = { 0.5f, -1.0f, 0.25f, 0.0039f }, deq[4];
    kb_qop q;
    quantise_row(KB_DT_INT8, KB_RECIPE_TENSOR, x, 4, &q, deq);
    CHECK(q.int_domain && q.tensor == 1.0f / 127.0f);
    CHECK(deq[0] == 64.0f && deq[1] == -127.0f && deq[2] == 32.0f && deq[3] == 0.0f);
    kb_qop_free(&q);
    quantise_row(KB_DT_BF16, KB_RECIPE_TENSOR, x, 4, &q, deq);
    CHECK(!q.int_domain && q.tensor == 1.0f && deq[0] == 0.5f && deq[3] == kb_bf16_bits_to_f32(kb_f32_to_bf16_bits(0.0039f)));
    kb_qop_free(&q);
}

/* B seen as n x k (x[kk * n + r], its stored K x N row-major), 128 x 128 blocks. */
static void test_operand_b_blocks(void)
{
    int n = 200, k = 130;
    float *x = malloc(sizeof(float) * (size_t)(n * k));
    for (int kk = 0; kk < k; kk++)
        for (int r = 0; r < n; r++) x[kk * n + r] = r >= 128 && kk >= 128 ? 1000.0f : 1.0f;
    kb_qop q;
    CHECK(kb_qop_init(&q, KB_DT_FP8E4M3, KB_RECIPE_BLOCK128X128, 1, n, k, x, 1, n) == KB_OK);
    CHECK(q.br == 128 && q.bk == 128 && q.rblocks == 2 && q.kblocks == 2);
    CHECK(q.scale[0] == ldexpf(1, -8) && q.scale[1] == ldexpf(1, -8) && q.scale[2] == ldexpf(1, -8));
    CHECK(q.scale[3] == 4.0f);   /* 1000 / 448 -> 2^2 */
    float d;
    kb_qop_quantise(&q, 150, 129, 1000.0f, &d);
    CHECK(d == 1024.0f);   /* 1000 / 4 = 250 -> e4m3 256 */
    kb_qop_free(&q);
    free(x);
}

static void test_distributions(void)
{
    enum { R = 64, K = 256 };
    float *x = malloc(sizeof(float) * R * K);
    kb_rng rng;
    double s = 0, s2 = 0;
    kb_rng_seed(&rng, 5);
    kb_dist_fill(KB_DIST_UNIFORM, &rng, 0, R, K, 1, 32, 448, x, K, 1);
    for (int i = 0; i < R * K; i++) CHECK(x[i] >= -1.0f && x[i] < 1.0f);
    kb_dist_fill(KB_DIST_NORMAL, &rng, 0, R, K, 1, 32, 448, x, K, 1);
    for (int i = 0; i < R * K; i++) s += x[i], s2 += (double)x[i] * x[i];
    CHECK(fabs(s / (R * K)) < 0.05 && fabs(s2 / (R * K) - 1.0) < 0.1);
    kb_dist_fill(KB_DIST_OUTLIERS, &rng, 0, R, K, 1, 32, 448, x, K, 1);
    double big = 0, other = 0;
    for (int r = 0; r < R; r++) {
        big = fmax(big, fabs(x[r * K + 7]));
        other = fmax(other, fabs(x[r * K + 8]));
    }
    CHECK(kb_dist_outlier_channel(7, K) && kb_dist_outlier_channel(206, K) && !kb_dist_outlier_channel(8, K));
    CHECK(kb_dist_outlier_channel(2, 5) && big > 20 * other);
    kb_dist_fill(KB_DIST_NAN, &rng, 0, R, K, 1, 32, 448, x, K, 1);
    CHECK(isnan(x[R * K - 1]) && isfinite(x[0]));
    kb_dist_fill(KB_DIST_NAN, &rng, 1, R, K, 1, 32, 448, x, K, 1);
    CHECK(isinf(x[0]) && isfinite(x[1]));
    kb_dist_fill(KB_DIST_ZEROS, &rng, 0, R, K, 1, 32, 448, x, K, 1);
    int zero_row = 1, zero_blocks = 0;
    for (int kk = 0; kk < K; kk++) zero_row &= x[R / 2 * K + kk] == 0.0f;
    for (int b = 0; b < K / 32; b++) zero_blocks += x[b * 32] == 0.0f && x[b * 32 + 31] == 0.0f;
    CHECK(zero_row && zero_blocks > 0 && zero_blocks < K / 32);
    kb_dist_fill(KB_DIST_RANGES, &rng, 0, R, K, 1, 32, 448, x, K, 1);
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < R * K; i++) if (x[i] != 0) lo = fmin(lo, fabs(x[i])), hi = fmax(hi, fabs(x[i]));
    CHECK(lo < 1e-9 && hi > 1e9);
    kb_dist_fill(KB_DIST_EXTREMES, &rng, 0, R, K, 1, 32, 448, x, K, 1);
    int at_max = 0;
    for (int i = 0; i < R * K; i += 4) {
        float m = fabsf(x[i]);
        int e;
        at_max += frexpf(m / 448.0f, &e) == 0.5f;   /* 448 x 2^j exactly */
    }
    CHECK(at_max == R * K / 4);
    free(x);
}

int main(void)
{
    RUN(test_fp6_fp4_formats);
    RUN(test_round_matches_encoder);
    RUN(test_scale_rounds_up);
    RUN(test_zero_nan_partial);
    RUN(test_nvfp4);
    RUN(test_int8_and_unscaled);
    RUN(test_operand_b_blocks);
    RUN(test_distributions);
    TEST_MAIN_END();
}
