/* quant.c - distributions and the recipe quantiser (the rules: quant.h, docs/precision.md). */
#include "engine/quant.h"

#include "engine/verify.h"
#include "kernels/abi/kb_convert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The element format of a scaled dtype; 0 when dt has none (unscaled or int8). */
static int fmt_of(kb_dtype dt, kb_fmt *f)
{
    switch (dt) {
    case KB_DT_FP8E4M3: *f = KB_FMT_E4M3; return 1;
    case KB_DT_FP8E5M2: *f = KB_FMT_E5M2; return 1;
    case KB_DT_FP6E2M3: *f = KB_FMT_E2M3; return 1;
    case KB_DT_FP6E3M2: *f = KB_FMT_E3M2; return 1;
    case KB_DT_FP4E2M1: *f = KB_FMT_E2M1; return 1;
    default: return 0;
    }
}

double kb_dtype_fmax(kb_dtype dt)
{
    kb_fmt f;
    if (dt == KB_DT_INT8)
        return 127.0;
    return fmt_of(dt, &f) ? kb_fmt_decode(f, kb_fmt_max_code(f)) : 0.0;
}

/* The non-negative finite values of f in code order (increasing), for the RNE search. */
static void table_of(kb_fmt f, double *vals, uint32_t *codes, int *n)
{
    uint32_t max = kb_fmt_max_code(f);
    *n = 0;
    for (uint32_t c = 0; c <= max && *n < 256; c++) {
        vals[*n] = kb_fmt_decode(f, c);
        codes[(*n)++] = c;
    }
}

/* Index into vals[0..n) of the value nearest m >= 0, ties to the even code, saturating. */
static int nearest(const double *vals, const uint32_t *codes, int n, double m)
{
    if (!(m < vals[n - 1]))
        return n - 1;
    int lo = 0, hi = n - 1;   /* vals[lo] <= m < vals[hi] */
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (vals[mid] <= m) lo = mid;
        else hi = mid;
    }
    double half = 0.5 * (vals[lo] + vals[hi]);   /* exact: a few significant bits each */
    if (m < half) return lo;
    if (m > half) return hi;
    return codes[lo] % 2 == 0 ? lo : hi;
}

uint32_t kb_qop_round(const kb_qop *q, double a)
{
    if (isnan(a))
        return q->nan_code ? q->nan_code : q->codes[q->n_vals - 1];
    uint32_t sign = signbit(a) ? q->sign_bit : 0u;
    return sign | q->codes[nearest(q->vals, q->codes, q->n_vals, fabs(a))];
}

/* The smallest power of two 2^E with v / 2^E <= 1 (v > 0, finite): E = ceil(log2 v). */
static int ceil_log2(double v)
{
    int e;
    double m = frexp(v, &e);   /* v = m 2^e, m in [0.5, 1) */
    return m == 0.5 ? e - 1 : e;
}

/* amax over the finite elements of block (rb, kb); *bad set when it holds a NaN or Inf. */
static double block_amax(const kb_qop *q, const float *x, int64_t rs, int64_t ks, int64_t rb, int64_t kb, int *bad)
{
    double amax = 0.0;
    int64_t r1 = (rb + 1) * q->br < q->rows ? (rb + 1) * q->br : q->rows;
    int64_t k1 = (kb + 1) * q->bk < q->k ? (kb + 1) * q->bk : q->k;
    *bad = 0;
    for (int64_t r = rb * q->br; r < r1; r++)
        for (int64_t kk = kb * q->bk; kk < k1; kk++) {
            double v = fabs((double)x[r * rs + kk * ks]);
            if (!isfinite(v))
                *bad = 1;
            else if (v > amax)
                amax = v;
        }
    return amax;
}

/* One block's scale by the recipe's scale format (quant.h). */
static void block_scale(kb_qop *q, int64_t i, double amax, int bad, double fmax, const double *e4_vals,
                        const uint32_t *e4_codes, int e4_n)
{
    kb_scale_fmt sf = kb_recipe_get(q->recipe)->sfmt;
    if (sf == KB_SFMT_FP32) {
        int e = amax > 0 ? ceil_log2(amax / fmax) : 0;
        q->scale[i] = ldexpf(1.0f, e < -149 ? -149 : e > 127 ? 127 : e);
    } else if (sf == KB_SFMT_UE8M0) {
        int e = amax > 0 ? ceil_log2(amax / fmax) : -127;
        q->code[i] = bad ? 255u : (uint8_t)((e < -127 ? -127 : e > 127 ? 127 : e) + 127);
        q->scale[i] = kb_ue8m0_to_f32(q->code[i]);
    } else {
        q->code[i] = bad ? 0x7fu : (uint8_t)e4_codes[nearest(e4_vals, e4_codes, e4_n, amax / (fmax * q->tensor))];
        q->scale[i] = kb_ue4m3_to_f32(q->code[i]);
    }
}

/* The per-tensor amax over finite values. */
static double tensor_amax(const float *x, int64_t rows, int64_t k, int64_t rs, int64_t ks)
{
    double amax = 0.0;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t kk = 0; kk < k; kk++) {
            double v = fabs((double)x[r * rs + kk * ks]);
            if (isfinite(v) && v > amax)
                amax = v;
        }
    return amax;
}

kb_status kb_qop_init(kb_qop *q, kb_dtype dt, kb_recipe r, int is_b, int64_t rows, int64_t k, const float *x,
                      int64_t rs, int64_t ks)
{
    kb_fmt f;
    memset(q, 0, sizeof *q);
    q->dt = dt, q->recipe = r, q->rows = rows, q->k = k, q->tensor = 1.0f;
    int scaled = fmt_of(dt, &f);
    kb_recipe_block(scaled ? r : KB_RECIPE_TENSOR, is_b, rows, k, &q->br, &q->bk);
    if (q->br < 1) q->br = 1;
    if (q->bk < 1) q->bk = 1;
    q->rblocks = rows > 0 ? (rows + q->br - 1) / q->br : 1;
    q->kblocks = k > 0 ? (k + q->bk - 1) / q->bk : 1;
    q->scale = malloc((size_t)(q->rblocks * q->kblocks) * sizeof *q->scale);
    if (!q->scale)
        return KB_ERR_OOM;
    q->scale[0] = 1.0f;
    if (dt == KB_DT_INT8) {
        double amax = tensor_amax(x, rows, k, rs, ks);
        q->int_domain = 1;
        q->tensor = amax > 0 ? (float)(amax / 127.0) : 1.0f;
        return KB_OK;
    }
    if (!scaled)
        return KB_OK;
    table_of(f, q->vals, q->codes, &q->n_vals);
    q->sign_bit = 1u << (f.ebits + f.mbits);
    q->nan_code = f.nan_free ? 0u : (((1u << f.ebits) - 1u) << f.mbits) | ((1u << f.mbits) - 1u);
    double fmax = q->vals[q->n_vals - 1];
    kb_scale_fmt sf = kb_recipe_get(r)->sfmt;
    if (sf != KB_SFMT_FP32 && !(q->code = malloc((size_t)(q->rblocks * q->kblocks)))) {
        kb_qop_free(q);
        return KB_ERR_OOM;
    }
    double e4_vals[256];
    uint32_t e4_codes[256];
    int e4_n = 0;
    if (r == KB_RECIPE_NV) {   /* the FP32 tensor scale first: the block scales are relative to it */
        double amax = tensor_amax(x, rows, k, rs, ks);
        q->tensor = amax > 0 ? (float)(amax / (fmax * 448.0)) : 1.0f;
        table_of(KB_FMT_E4M3, e4_vals, e4_codes, &e4_n);
    }
    for (int64_t rb = 0; rb < q->rblocks; rb++)
        for (int64_t kb = 0; kb < q->kblocks; kb++) {
            int bad;
            double amax = block_amax(q, x, rs, ks, rb, kb, &bad);
            block_scale(q, rb * q->kblocks + kb, amax, bad, fmax, e4_vals, e4_codes, e4_n);
        }
    if (r == KB_RECIPE_TENSOR) {   /* kernels take the tensor recipe's scale as a scalar */
        q->tensor = q->scale[0];
        q->scale[0] = 1.0f;
    }
    return KB_OK;
}

void kb_qop_free(kb_qop *q)
{
    free(q->scale);
    free(q->code);
    q->scale = NULL;
    q->code = NULL;
}

static uint32_t int8_code(float v)
{
    if (isnan(v))
        return 0;
    float r = nearbyintf(v);
    int i = r > 127.0f ? 127 : r < -127.0f ? -127 : (int)r;   /* symmetric: -128 is not used */
    return (uint32_t)(uint8_t)(int8_t)i;
}

uint32_t kb_qop_quantise(const kb_qop *q, int64_t r, int64_t kk, float x, float *deq)
{
    if (q->int_domain) {
        uint32_t c = int8_code(x / q->tensor);
        *deq = (float)(int8_t)(uint8_t)c;
        return c;
    }
    if (!q->n_vals) {   /* fp32, tf32, fp16, bf16: rounded to the format */
        uint32_t bits = 0;
        kb_host_from_f32(q->dt, &x, &bits, 1);
        kb_host_to_f32(q->dt, &bits, deq, 1);
        return bits;
    }
    int64_t b = (r / q->br) * q->kblocks + kk / q->bk;
    double s = (double)q->scale[b] * q->tensor;
    if (isnan(s) || (isnan(x) && !q->nan_code)) {   /* a NaN block scale: the block is NaN */
        *deq = NAN;
        return 0;
    }
    if (s == 0.0) {   /* nv's zero block scale: the block is zero */
        *deq = 0.0f;
        return 0;
    }
    uint32_t c = kb_qop_round(q, (double)x / s);
    double v = q->vals[(c & ~q->sign_bit) < (uint32_t)q->n_vals ? (c & ~q->sign_bit) : 0];
    *deq = isnan(x) ? NAN : (float)((c & q->sign_bit ? -v : v) * s);
    return c;
}

/* ---- distributions ---- */

#define TABLE 4096

int kb_dist_outlier_channel(int64_t k, int64_t k_total)
{
    /* about 1 channel in 200, and at least one in any K: LLM.int8() saw a handful of
     * outlier feature dimensions per layer (6 of 4096 at 6.7B parameters) */
    return k % 199 == 7 % (k_total > 0 ? k_total : 1);
}

/* A block's deterministic 32-bit hash (salted per draw). */
static uint32_t block_hash(uint32_t salt, int64_t rb, int64_t kb)
{
    uint64_t h = (uint64_t)salt * 0x9e3779b97f4a7c15ull ^ (uint64_t)rb * 0xbf58476d1ce4e5b9ull ^
                 (uint64_t)kb * 0x94d049bb133111ebull;
    h ^= h >> 31;
    h *= 0xd6e8feb86659fd39ull;
    return (uint32_t)(h >> 32);
}

static void base_table(kb_dist d, kb_rng *rng, float *t)
{
    for (int i = 0; i < TABLE; i += 2) {
        float u1 = kb_rng_uniform(rng, 0.0f, 1.0f), u2 = kb_rng_uniform(rng, 0.0f, 1.0f);
        if (d == KB_DIST_UNIFORM) {
            t[i] = 2.0f * u1 - 1.0f;
            t[i + 1] = 2.0f * u2 - 1.0f;
            continue;
        }
        /* Box-Muller; u1 in (0, 1] so the log is finite */
        double rad = sqrt(-2.0 * log(1.0 - (double)u1)), th = 6.283185307179586 * u2;
        t[i] = (float)(rad * cos(th));
        t[i + 1] = (float)(rad * sin(th));
    }
}

/* The check distributions' change to value v of element (r, kk) in block (rb, kb). */
static float special(kb_dist d, int is_b, float v, int64_t r, int64_t kk, int64_t rows, int64_t k, uint32_t h,
                     double fmax)
{
    double f = fmax > 0 ? fmax : 1.0;
    switch (d) {
    case KB_DIST_RANGES:
        return ldexpf(v, (int)(h % 81u) - 40);
    case KB_DIST_ZEROS:
        return h % 3u == 0 || (!is_b && r == rows / 2) ? 0.0f : v;
    case KB_DIST_EXTREMES: {
        int j = (int)(h % 9u) - 4;
        double sign = v < 0 ? -1.0 : 1.0;
        switch (kk % 4) {
        case 0: return (float)(sign * ldexp(f, j));                 /* the format's max, times 2^j */
        case 1: return (float)(sign * ldexp(f * 0.999, j));         /* just below it */
        case 2: return (float)(sign * ldexp(f * 0.5 * 1.0009765625, j)); /* just above half of it */
        default: return (float)ldexp(v, j);
        }
    }
    case KB_DIST_NAN:
        if (!is_b && r == rows - 1 && kk == k - 1) return NAN;
        if (is_b && r == 0 && kk == 0) return INFINITY;
        return v;
    default:
        return v;
    }
}

void kb_dist_fill(kb_dist d, kb_rng *rng, int is_b, int64_t rows, int64_t k, int64_t br, int64_t bk, double fmax,
                  float *x, int64_t rs, int64_t ks)
{
    float t[TABLE];
    base_table(d == KB_DIST_UNIFORM ? KB_DIST_UNIFORM : KB_DIST_NORMAL, rng, t);
    uint32_t salt = kb_rng_u32(rng);
    br = br > 0 ? br : 1;
    bk = bk > 0 ? bk : 1;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t kk = 0; kk < k; kk++) {
            float v = t[kb_rng_u32(rng) % TABLE];
            if (d == KB_DIST_OUTLIERS && !is_b && kb_dist_outlier_channel(kk, k))
                v *= 100.0f;
            else if (d > KB_DIST_OUTLIERS)
                v = special(d, is_b, v, r, kk, rows, k, block_hash(salt, r / br, kk / bk), fmax);
            x[r * rs + kk * ks] = v;
        }
}
