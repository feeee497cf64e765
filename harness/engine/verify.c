/* verify.c - element comparison, the tolerance policy, host dtype conversions
 * (see verify.h for the rules). */
#include "engine/verify.h"
#include "kernels/abi/kb_convert.h"

#include <math.h>
#include <string.h>

void kb_verify_init(kb_verify *v, double atol, double rtol)
{
    memset(v, 0, sizeof *v);
    v->first_bad = -1;
    v->guard_first = -1;
    v->atol = atol;
    v->rtol = rtol;
}

void kb_verify_guard(kb_verify *v, const unsigned char *bytes, size_t n, unsigned char sentinel, int64_t off)
{
    for (size_t i = 0; i < n; i++)
        if (bytes[i] != sentinel) {
            if (v->guard_first < 0)
                v->guard_first = off + (int64_t)i;
            v->guard_bad++;
        }
}

void kb_verify_f32(kb_verify *v, const float *got, const float *want, int64_t n)
{
    kb_verify_f32_scaled(v, got, want, NULL, n);
}

void kb_verify_f32_scaled(kb_verify *v, const float *got, const float *want, const float *extra, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], w = want[i];
        int bad;
        if (!isfinite(w)) {
            /* inf must match with its sign, NaN with NaN; there is no error to measure */
            bad = isnan(w) ? !isnan(g) : g != w;
        } else {
            double err = fabs(g - w);
            double tol = v->atol + v->rtol * fabs(w) + (extra ? extra[i] : 0.0);
            bad = !(err <= tol); /* NaN got -> bad */
            if (isfinite(g)) {
                if (err > v->max_abs_err)
                    v->max_abs_err = err;
                if (fabs(w) > v->atol && err / fabs(w) > v->max_rel_err)
                    v->max_rel_err = err / fabs(w);
                double ratio = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0.0);
                if (ratio > v->max_err_ratio)
                    v->max_err_ratio = ratio;
            } else {
                v->max_err_ratio = INFINITY;
            }
        }
        if (bad) {
            if (v->n_bad == 0) {
                v->first_bad = v->n + i;
                v->got_at_bad = g;
                v->want_at_bad = w;
            }
            v->n_bad++;
        }
    }
    v->n += n;
}

void kb_verify_merge(kb_verify *v, const kb_verify *w)
{
    if (v->n_bad == 0 && w->n_bad > 0) {
        v->first_bad = v->n + w->first_bad;
        v->got_at_bad = w->got_at_bad;
        v->want_at_bad = w->want_at_bad;
    }
    if (v->guard_bad == 0 && w->guard_bad > 0)
        v->guard_first = w->guard_first;
    v->n += w->n;
    v->n_bad += w->n_bad;
    v->guard_bad += w->guard_bad;
    v->max_abs_err = fmax(v->max_abs_err, w->max_abs_err);
    v->max_rel_err = fmax(v->max_rel_err, w->max_rel_err);
    v->max_err_ratio = fmax(v->max_err_ratio, w->max_err_ratio);
}

void kb_accuracy_init(kb_accuracy *a) { memset(a, 0, sizeof *a); }

void kb_accuracy_add(kb_accuracy *a, const float *got, const double *truth, int64_t n)
{
    for (int64_t i = 0; i < n; i++) {
        double g = got[i], t = truth[i], e = fabs(g - t);
        if (!isfinite(g) || !isfinite(t))
            continue;
        a->se += e * e;
        a->st += t * t;
        a->max_e = e > a->max_e ? e : a->max_e;
        a->max_t = fabs(t) > a->max_t ? fabs(t) : a->max_t;
        a->n++;
    }
}

/* num / den for error ratios: 0 / 0 is no error, x / 0 an infinite one. */
static double ratio(double num, double den) { return den > 0 ? num / den : num > 0 ? INFINITY : 0.0; }

void kb_accuracy_finish(const kb_accuracy *a, kb_verify *v)
{
    v->acc_n = a->n;
    v->acc_rel_fro = sqrt(ratio(a->se, a->st));
    v->acc_max_rel = ratio(a->max_e, a->max_t);
    v->acc_snr_db = a->se > 0 ? (a->st > 0 ? 10.0 * log10(a->st / a->se) : -INFINITY) : INFINITY;
}

double kb_dtype_unit_roundoff(kb_dtype dt)
{
    switch (dt) {
    case KB_DT_FP32: return ldexp(1.0, -24);
    case KB_DT_TF32: return ldexp(1.0, -11);  /* 10 stored mantissa bits, like fp16 */
    case KB_DT_FP16: return ldexp(1.0, -11);
    case KB_DT_BF16: return ldexp(1.0, -8);
    case KB_DT_FP8E4M3: return ldexp(1.0, -4);
    case KB_DT_FP8E5M2: return ldexp(1.0, -3);
    case KB_DT_FP6E2M3: return ldexp(1.0, -4);
    case KB_DT_FP6E3M2: return ldexp(1.0, -3);
    case KB_DT_FP4E2M1: return ldexp(1.0, -2);
    default: return 0.0;                      /* int8: exact integer arithmetic */
    }
}

void kb_tolerance(kb_dtype dt, int64_t reduction_len, double *atol, double *rtol)
{
    double u = kb_dtype_unit_roundoff(dt);
    double k = reduction_len > 1 ? (double)reduction_len : 1.0;
    *rtol = 4.0 * u;
    *atol = 2.0 * u * sqrt(k);
    if (dt == KB_DT_FP32 && *atol < 1e-5)
        *atol = 1e-5;
}

void kb_host_to_f32(kb_dtype dt, const void *src, float *dst, int64_t n)
{
    const uint16_t *h = src;
    const uint8_t *b = src;
    const int8_t *s8 = src;
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case KB_DT_FP32:
        case KB_DT_TF32: memcpy(&dst[i], (const float *)src + i, sizeof(float)); break;
        case KB_DT_FP16: dst[i] = kb_f16_bits_to_f32(h[i]); break;
        case KB_DT_BF16: dst[i] = kb_bf16_bits_to_f32(h[i]); break;
        case KB_DT_INT8: dst[i] = (float)s8[i]; break;
        case KB_DT_FP8E4M3: dst[i] = kb_e4m3_bits_to_f32(b[i]); break;
        case KB_DT_FP8E5M2: dst[i] = kb_e5m2_bits_to_f32(b[i]); break;
        case KB_DT_FP6E2M3: dst[i] = kb_e2m3_bits_to_f32(b[i]); break;
        case KB_DT_FP6E3M2: dst[i] = kb_e3m2_bits_to_f32(b[i]); break;
        case KB_DT_FP4E2M1: dst[i] = kb_e2m1_bits_to_f32(b[i]); break;
        default: dst[i] = NAN; break;
        }
    }
}

static int8_t f32_to_s8_sat(float x)
{
    if (isnan(x))
        return 0;
    float r = nearbyintf(x);   /* default rounding mode: to nearest, ties to even */
    if (r > 127.0f) return 127;
    if (r < -128.0f) return -128;
    return (int8_t)r;
}

void kb_host_from_f32(kb_dtype dt, const float *src, void *dst, int64_t n)
{
    uint16_t *h = dst;
    uint8_t *b = dst;
    int8_t *s8 = dst;
    float *f = dst;
    for (int64_t i = 0; i < n; i++) {
        switch (dt) {
        case KB_DT_FP32: f[i] = src[i]; break;
        case KB_DT_TF32: f[i] = kb_f32_round_tf32(src[i]); break;
        case KB_DT_FP16: h[i] = kb_f32_to_f16_bits(src[i]); break;
        case KB_DT_BF16: h[i] = kb_f32_to_bf16_bits(src[i]); break;
        case KB_DT_INT8: s8[i] = f32_to_s8_sat(src[i]); break;
        case KB_DT_FP8E4M3: b[i] = kb_f32_to_e4m3_bits(src[i]); break;
        case KB_DT_FP8E5M2: b[i] = kb_f32_to_e5m2_bits(src[i]); break;
        case KB_DT_FP6E2M3: b[i] = kb_f32_to_e2m3_bits(src[i]); break;
        case KB_DT_FP6E3M2: b[i] = kb_f32_to_e3m2_bits(src[i]); break;
        case KB_DT_FP4E2M1: b[i] = kb_f32_to_e2m1_bits(src[i]); break;
        default: break;
        }
    }
}
