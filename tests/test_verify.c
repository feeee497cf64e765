/* test_verify.c - element comparison, the tolerance policy, host conversions. */
#include "check.h"
#include "engine/verify.h"

#include <math.h>
#include <string.h>

static void test_equal_and_within(void)
{
    kb_verify v;
    float want[4] = { 1.0f, -2.0f, 0.0f, 1e6f };
    float got[4] = { 1.0f, -2.0f, 0.0f, 1e6f };
    kb_verify_init(&v, 0.0, 0.0);
    kb_verify_f32(&v, got, want, 4);
    CHECK(v.n == 4 && v.n_bad == 0 && v.first_bad == -1 && kb_verify_ok(&v));
    CHECK(v.max_abs_err == 0.0 && v.max_rel_err == 0.0);

    /* boundary: |got - want| == atol + rtol*|want| passes; just above fails */
    kb_verify_init(&v, 0.5, 0.25);
    float w2[2] = { 2.0f, 2.0f };
    float g2[2] = { 3.0f, 3.0009766f };   /* 1 + 2^-10 over want: 1.0009766 > 1.0 */
    kb_verify_f32(&v, g2, w2, 2);
    CHECK(v.n_bad == 1 && v.first_bad == 1);
    CHECK(v.got_at_bad == (double)g2[1] && v.want_at_bad == 2.0);
    CHECK(fabs(v.max_abs_err - 1.0009765625) < 1e-12);
    CHECK(fabs(v.max_rel_err - 0.50048828125) < 1e-12);
    CHECK(v.atol == 0.5 && v.rtol == 0.25);
}

static void test_non_finite(void)
{
    kb_verify v;
    float want[6] = { 1.0f, INFINITY, -INFINITY, NAN, INFINITY, NAN };
    float got[6] = { NAN, INFINITY, -INFINITY, NAN, -INFINITY, 0.0f };
    kb_verify_init(&v, 1e-3, 1e-3);
    kb_verify_f32(&v, got, want, 6);
    /* bad: NaN got for a finite want (0), +inf want with -inf got (4), NaN want with a
     * number (5); equal non-finite pairs (1, 2, 3) pass */
    CHECK(v.n_bad == 3 && v.first_bad == 0);
    CHECK(isnan(v.got_at_bad) && v.want_at_bad == 1.0);
    /* no non-finite value leaks into the error maxima */
    CHECK(isfinite(v.max_abs_err) && isfinite(v.max_rel_err) && v.max_abs_err == 0.0);

    kb_verify_init(&v, 1e30, 1e30);   /* an infinite got is bad however loose the tolerance */
    float w1 = 1.0f, g1 = INFINITY;
    kb_verify_f32(&v, &g1, &w1, 1);
    CHECK(v.n_bad == 1);
}

static void test_chunks_accumulate(void)
{
    float want[10], got[10];
    for (int i = 0; i < 10; i++) { want[i] = (float)i; got[i] = (float)i; }
    got[2] = 0.0f;   /* first bad: index 2 overall, found in the second (non-empty) chunk */
    got[7] = 7.5f;
    got[9] = 8.0f;
    kb_verify v;
    kb_verify_init(&v, 0.1, 0.0);
    kb_verify_f32(&v, got + 0, want + 0, 2);
    kb_verify_f32(&v, got + 2, want + 2, 0);
    kb_verify_f32(&v, got + 2, want + 2, 4);
    kb_verify_f32(&v, got + 6, want + 6, 4);
    CHECK(v.n == 10 && v.n_bad == 3);
    CHECK(v.first_bad == 2 && v.want_at_bad == 2.0 && v.got_at_bad == 0.0);
    CHECK(v.max_abs_err == 2.0 && v.max_rel_err == 1.0);

    /* relative error ignores want == 0 (it would be infinite) */
    float w0 = 0.0f, g0 = 0.25f;
    kb_verify_init(&v, 1.0, 0.0);
    kb_verify_f32(&v, &g0, &w0, 1);
    CHECK(v.n_bad == 0 && v.max_abs_err == 0.25 && v.max_rel_err == 0.0);
    CHECK(v.max_err_ratio == 0.25);  /* err / (atol + rtol*|want|) = 0.25 / 1 */

    /* relative error is only measured where |want| exceeds atol; the ratio everywhere */
    float w1[2] = { 1e-6f, 10.0f }, g1[2] = { 2e-6f, 10.5f };
    kb_verify_init(&v, 1e-3, 0.1);
    kb_verify_f32(&v, g1, w1, 2);
    CHECK(v.n_bad == 0);
    CHECK(fabs(v.max_rel_err - 0.05) < 1e-6);
    CHECK(fabs(v.max_err_ratio - 0.5 / 1.001) < 1e-5);
}

static void test_tolerance_policy(void)
{
    double a, r;
    kb_tolerance(KB_DT_INT8, 4096, &a, &r);
    CHECK(a == 0.0 && r == 0.0);
    kb_tolerance(KB_DT_FP32, 1, &a, &r);
    CHECK(a == 1e-5 && r == 4.0 * ldexp(1.0, -24));
    kb_tolerance(KB_DT_FP32, 0, &a, &r);                 /* <= 0 counts as 1 */
    CHECK(a == 1e-5);
    kb_tolerance(KB_DT_FP32, 1 << 30, &a, &r);            /* the sqrt(K) term passes the floor */
    CHECK(fabs(a - 2.0 * ldexp(1.0, -24) * 32768.0) < 1e-15);
    kb_tolerance(KB_DT_TF32, 4096, &a, &r);
    CHECK(a == 0.0625 && r == 4.0 * ldexp(1.0, -11));
    kb_tolerance(KB_DT_BF16, 1, &a, &r);
    CHECK(a == ldexp(1.0, -7) && r == ldexp(1.0, -6));

    /* sqrt growth: 4x the reduction length doubles atol */
    double a1, a4;
    kb_tolerance(KB_DT_FP16, 1000, &a1, &r);
    kb_tolerance(KB_DT_FP16, 4000, &a4, &r);
    CHECK(fabs(a4 / a1 - 2.0) < 1e-12);

    /* looser as precision drops */
    kb_dtype order[] = { KB_DT_FP32, KB_DT_FP16, KB_DT_BF16, KB_DT_FP8E4M3, KB_DT_FP8E5M2 };
    double prev_a = 0, prev_r = 0;
    for (int i = 0; i < 5; i++) {
        kb_tolerance(order[i], 256, &a, &r);
        CHECK(a > prev_a && r > prev_r);
        prev_a = a; prev_r = r;
    }
    CHECK(kb_dtype_unit_roundoff(KB_DT_FP8E4M3) == 0.0625);
}

static void test_known_bit_patterns(void)
{
    float in[8];
    uint16_t h[8];
    uint8_t b[8];
    int8_t s[8];

    /* fp16: largest finite, overflow by a tie (65520 -> inf), smallest subnormal, a
     * tie below it (2^-25 -> 0, even), 3*2^-26 rounds up to the smallest subnormal */
    in[0] = 65504.0f; in[1] = 65520.0f; in[2] = ldexpf(1, -24); in[3] = ldexpf(1, -25);
    in[4] = 3 * ldexpf(1, -26); in[5] = -0.0f; in[6] = 1.0f; in[7] = ldexpf(1, -14);
    kb_host_from_f32(KB_DT_FP16, in, h, 8);
    CHECK(h[0] == 0x7bff && h[1] == 0x7c00 && h[2] == 0x0001 && h[3] == 0x0000);
    CHECK(h[4] == 0x0001 && h[5] == 0x8000 && h[6] == 0x3c00 && h[7] == 0x0400);
    float back[8];
    kb_host_to_f32(KB_DT_FP16, h, back, 8);
    CHECK(back[0] == 65504.0f && isinf(back[1]) && back[2] == ldexpf(1, -24) && back[3] == 0.0f);

    /* bf16 ties to even: 1 + 2^-8 -> 1.0 (0x3f80); 1 + 3*2^-8 -> 1 + 2^-6 (0x3f82) */
    in[0] = 1.0f + ldexpf(1, -8); in[1] = 1.0f + 3 * ldexpf(1, -8);
    in[2] = 1.0f + ldexpf(1, -8) + ldexpf(1, -20);  /* just above the tie: up */
    in[3] = NAN; in[4] = 3.0e38f * 2.0f;             /* inf stays inf */
    kb_host_from_f32(KB_DT_BF16, in, h, 5);
    CHECK(h[0] == 0x3f80 && h[1] == 0x3f82 && h[2] == 0x3f81);
    CHECK((h[3] & 0x7f80) == 0x7f80 && (h[3] & 0x7f) != 0 && h[4] == 0x7f80);

    /* e4m3: 448 is the largest finite (0x7e); beyond saturates; NaN 0x7f */
    in[0] = 448.0f; in[1] = 1000.0f; in[2] = -1000.0f; in[3] = NAN; in[4] = INFINITY;
    in[5] = 1.0f; in[6] = ldexpf(1, -9); in[7] = 464.0f;  /* 464: tie between 448 and 480 */
    kb_host_from_f32(KB_DT_FP8E4M3, in, b, 8);
    CHECK(b[0] == 0x7e && b[1] == 0x7e && b[2] == 0xfe && (b[3] & 0x7f) == 0x7f);
    CHECK(b[4] == 0x7e && b[5] == 0x38 && b[6] == 0x01 && b[7] == 0x7e);
    kb_host_to_f32(KB_DT_FP8E4M3, b, back, 8);
    CHECK(back[0] == 448.0f && back[2] == -448.0f && isnan(back[3]) && back[6] == ldexpf(1, -9));

    /* e5m2: 57344 largest finite (0x7b); satfinite beyond */
    in[0] = 57344.0f; in[1] = 1e6f; in[2] = 1.0f; in[3] = ldexpf(1, -16);
    kb_host_from_f32(KB_DT_FP8E5M2, in, b, 4);
    CHECK(b[0] == 0x7b && b[1] == 0x7b && b[2] == 0x3c && b[3] == 0x01);

    /* int8: saturating, ties to even, NaN -> 0 */
    float i8[8] = { 127.6f, 200.0f, -300.0f, 2.5f, -2.5f, 3.5f, NAN, -127.5f };
    kb_host_from_f32(KB_DT_INT8, i8, s, 8);
    CHECK(s[0] == 127 && s[1] == 127 && s[2] == -128 && s[3] == 2);
    CHECK(s[4] == -2 && s[5] == 4 && s[6] == 0 && s[7] == -128);
    kb_host_to_f32(KB_DT_INT8, s, back, 8);
    CHECK(back[2] == -128.0f && back[5] == 4.0f);

    /* tf32: rounded on the way in (ties away from zero), copied on the way out */
    float t[4] = { 1.0f + ldexpf(1, -11), 1.0f + ldexpf(1, -12), -(1.0f + ldexpf(1, -11)), INFINITY };
    float tt[4];
    kb_host_from_f32(KB_DT_TF32, t, tt, 4);
    CHECK(tt[0] == 1.0f + ldexpf(1, -10) && tt[1] == 1.0f);
    CHECK(tt[2] == -(1.0f + ldexpf(1, -10)) && isinf(tt[3]));
    kb_host_to_f32(KB_DT_TF32, tt, back, 4);
    CHECK(memcmp(back, tt, sizeof tt) == 0);
}

/* Every finite bit pattern of the 8- and 16-bit formats survives decode -> encode. */
static void test_round_trips(void)
{
    static uint16_t bits16[65536], again16[65536];
    static float f[65536];
    kb_dtype d16[2] = { KB_DT_FP16, KB_DT_BF16 };
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < 65536; i++) bits16[i] = (uint16_t)i;
        kb_host_to_f32(d16[k], bits16, f, 65536);
        kb_host_from_f32(d16[k], f, again16, 65536);
        int mism = 0;
        for (int i = 0; i < 65536; i++)
            if (!isnan(f[i]) && again16[i] != bits16[i]) mism++;
        CHECK_MSG(mism == 0, "%s: %d patterns changed", kb_dtype_name(d16[k]), mism);
    }
    uint8_t bits8[256], again8[256];
    kb_dtype d8[3] = { KB_DT_FP8E4M3, KB_DT_FP8E5M2, KB_DT_INT8 };
    for (int k = 0; k < 3; k++) {
        for (int i = 0; i < 256; i++) bits8[i] = (uint8_t)i;
        kb_host_to_f32(d8[k], bits8, f, 256);
        kb_host_from_f32(d8[k], f, again8, 256);
        int mism = 0, nans = 0;
        for (int i = 0; i < 256; i++) {
            if (isnan(f[i])) { nans++; continue; }
            if (isinf(f[i])) {   /* e5m2 inf: satfinite encodes it as the largest finite */
                if ((again8[i] & 0x7f) != 0x7b) mism++;
                continue;
            }
            if (again8[i] != bits8[i]) mism++;
        }
        CHECK_MSG(mism == 0, "%s: %d patterns changed", kb_dtype_name(d8[k]), mism);
        /* e4m3 ("fn") has exactly two NaN codes and no inf; e5m2 has 6 NaNs */
        if (d8[k] == KB_DT_FP8E4M3) CHECK(nans == 2);
        if (d8[k] == KB_DT_FP8E5M2) CHECK(nans == 6);
    }
    /* decoding covers the whole range: 0x7b is 57344, 0x7c inf (e5m2) */
    bits8[0] = 0x7b; bits8[1] = 0x7c; bits8[2] = 0x7e;
    kb_host_to_f32(KB_DT_FP8E5M2, bits8, f, 3);
    CHECK(f[0] == 57344.0f && isinf(f[1]) && isnan(f[2]));
    /* fp32 is a plain copy, NaN payload included */
    uint32_t u = 0x7fc12345u;
    float x, y;
    memcpy(&x, &u, 4);
    kb_host_from_f32(KB_DT_FP32, &x, &y, 1);
    CHECK(memcmp(&x, &y, 4) == 0);
}

/* Accuracy against the true result: relative Frobenius, max relative, SNR; non-finite
 * pairs skipped; the degenerate cases defined. */
static void test_accuracy(void)
{
    kb_accuracy a;
    kb_verify v;
    float got[5] = { 1.0f, 2.0f, 0.0f, NAN, 4.0f };
    double truth[5] = { 1.0, 2.5, 0.0, 1.0, 4.0 };
    kb_verify_init(&v, 0, 0);
    kb_accuracy_init(&a);
    kb_accuracy_add(&a, got, truth, 2);
    kb_accuracy_add(&a, got + 2, truth + 2, 3);   /* in chunks, as a family checks rows */
    kb_accuracy_finish(&a, &v);
    double st = 1 + 6.25 + 16, se = 0.25;
    CHECK(v.acc_n == 4 && v.n == 0);   /* the NaN pair skipped; verification fields untouched */
    CHECK(fabs(v.acc_rel_fro - sqrt(se / st)) < 1e-15 && fabs(v.acc_max_rel - 0.5 / 4.0) < 1e-15);
    CHECK(fabs(v.acc_snr_db - 10 * log10(st / se)) < 1e-12);
    kb_accuracy_init(&a);   /* exact: no error, infinite SNR */
    kb_accuracy_add(&a, got, truth, 1);
    kb_accuracy_finish(&a, &v);
    CHECK(v.acc_rel_fro == 0 && v.acc_max_rel == 0 && isinf(v.acc_snr_db) && v.acc_snr_db > 0);
    kb_accuracy_init(&a);   /* the truth all zero, the output not */
    kb_accuracy_add(&a, got, truth + 2, 1);
    kb_accuracy_finish(&a, &v);
    CHECK(isinf(v.acc_rel_fro) && isinf(v.acc_max_rel) && v.acc_snr_db < 0 && isinf(v.acc_snr_db));
}

/* kb_verify_merge: a second output checked at its own (tighter) tolerance joins the first's
 * counts; its first bad element is indexed after the first output's, the tolerance stays */
static void test_merge(void)
{
    float want[4] = { 1.0f, 2.0f, 3.0f, 4.0f }, got[4] = { 1.0f, 2.5f, 3.0f, 4.0f };
    float lw[3] = { 100.0f, -50.0f, 10.0f }, lg[3] = { 100.0f, -50.25f, 10.001f };
    kb_verify v, w;
    kb_verify_init(&v, 1.0, 0.0);          /* O-like: 2.5 vs 2 passes at ratio 0.5 */
    kb_verify_f32(&v, got, want, 4);
    kb_verify_init(&w, 0.01, 0.0);         /* lse-like: -50.25 vs -50 is 25 times over */
    kb_verify_f32(&w, lg, lw, 3);
    unsigned char pad[2] = { 0xab, 0x00 };
    kb_verify_guard(&w, pad, 2, 0xab, 40);
    CHECK(kb_verify_ok(&v) && w.n_bad == 1 && w.first_bad == 1);
    kb_verify_merge(&v, &w);
    CHECK(v.n == 7 && v.n_bad == 1 && !kb_verify_ok(&v));
    CHECK(v.first_bad == 5 && v.got_at_bad == -50.25 && v.want_at_bad == -50.0);
    CHECK(fabs(v.max_err_ratio - 25.0) < 1e-9 && v.max_abs_err == 0.5);
    CHECK(fabs(v.max_rel_err - 0.25) < 1e-12);   /* O's 0.5 / 2 beats the lse's 0.005 */
    CHECK(v.atol == 1.0 && v.rtol == 0.0);      /* the main output's tolerance stays */
    CHECK(v.guard_bad == 1 && v.guard_first == 41);

    /* v already bad: its first_bad and values stay, the counts still add */
    kb_verify_init(&v, 0.1, 0.0);
    kb_verify_f32(&v, got, want, 4);
    kb_verify_init(&w, 0.01, 0.0);
    kb_verify_f32(&w, lg, lw, 3);
    kb_verify_merge(&v, &w);
    CHECK(v.n == 7 && v.n_bad == 2 && v.first_bad == 1 && v.got_at_bad == 2.5 && v.want_at_bad == 2.0);
    CHECK(fabs(v.max_err_ratio - 25.0) < 1e-9 && v.guard_bad == 0 && v.guard_first == -1);

    /* both clean: the merge leaves a passing verdict with the larger ratio */
    kb_verify_init(&v, 1.0, 0.0);
    kb_verify_f32(&v, want, want, 4);
    kb_verify_init(&w, 1.0, 0.0);
    kb_verify_f32(&w, lg + 2, lw + 2, 1);
    kb_verify_merge(&v, &w);
    CHECK(kb_verify_ok(&v) && v.n == 5 && v.first_bad == -1 && fabs(v.max_err_ratio - 0.001) < 1e-6);
}

int main(void)
{
    RUN(test_accuracy);
    RUN(test_equal_and_within);
    RUN(test_non_finite);
    RUN(test_chunks_accumulate);
    RUN(test_merge);
    RUN(test_tolerance_policy);
    RUN(test_known_bit_patterns);
    RUN(test_round_trips);
    TEST_MAIN_END();
}
