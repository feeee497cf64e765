/* coll_data.c - inputs, expected results, tolerances and the check (see coll_data.h). */
#include "collective/coll_data.h"

#include <float.h>
#include <math.h>
#include <string.h>

size_t kb_coll_esz(kb_dtype dt) { return dt == KB_DT_FP32 ? 4 : dt == KB_DT_INT8 ? 1 : 2; }

/* Significand bits (with the implicit one), smallest normal exponent, largest finite. */
static void float_format(kb_dtype dt, int *p, int *emin, double *max)
{
    switch (dt) {
    case KB_DT_FP16: *p = 11; *emin = -14; *max = 65504.0; break;
    case KB_DT_BF16: *p = 8; *emin = -126; *max = 0x1.fep127; break;
    default: *p = 24; *emin = -126; *max = FLT_MAX; break;
    }
}

double kb_coll_unit_roundoff(kb_dtype dt)
{
    int p, emin;
    double max;
    float_format(dt, &p, &emin, &max);
    return dt == KB_DT_INT8 ? 0 : ldexp(1.0, -p);
}

/* The smallest subnormal of a float dtype. */
static double subnormal(kb_dtype dt)
{
    int p, emin;
    double max;
    float_format(dt, &p, &emin, &max);
    return ldexp(1.0, emin - (p - 1));
}

/* v rounded to nearest even at the dtype's precision and range (inf beyond it). */
static double round_to(kb_dtype dt, double v)
{
    if (v == 0 || !isfinite(v))
        return v;
    int p, emin;
    double max;
    float_format(dt, &p, &emin, &max);
    int e = ilogb(v);
    double q = ldexp(1.0, (e < emin ? emin : e) - (p - 1));   /* the quantum at v */
    double r = nearbyint(v / q) * q;
    return fabs(r) > max ? copysign(INFINITY, v) : r;
}

static uint16_t fp16_bits(double r)
{
    uint16_t s = signbit(r) ? 0x8000 : 0;
    double a = fabs(r);
    if (isnan(r))
        return 0x7e00;
    if (isinf(a))
        return s | 0x7c00;
    if (a < 0x1p-14)
        return s | (uint16_t)(a * 0x1p24);                   /* subnormal: units of 2^-24 */
    int e = ilogb(a);
    return s | (uint16_t)((e + 15) << 10) | (uint16_t)((ldexp(a, -e) - 1.0) * 1024.0);
}

static double fp16_value(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(1024 + m, e - 25);
    return h & 0x8000 ? -v : v;
}

double kb_coll_load(kb_dtype dt, const void *buf, size_t i)
{
    switch (dt) {
    case KB_DT_INT8: return ((const int8_t *)buf)[i];
    case KB_DT_FP16: { uint16_t h; memcpy(&h, (const char *)buf + 2 * i, 2); return fp16_value(h); }
    case KB_DT_BF16: {
        uint16_t h;
        uint32_t w;
        float f;
        memcpy(&h, (const char *)buf + 2 * i, 2);
        w = (uint32_t)h << 16;
        memcpy(&f, &w, 4);
        return f;
    }
    default: { float f; memcpy(&f, (const char *)buf + 4 * i, 4); return f; }
    }
}

void kb_coll_store(kb_dtype dt, void *buf, size_t i, double v)
{
    if (dt == KB_DT_INT8) {
        double r = isnan(v) ? 0 : nearbyint(v);
        ((int8_t *)buf)[i] = (int8_t)(r > 127 ? 127 : r < -128 ? -128 : r);
        return;
    }
    if (dt == KB_DT_FP32) {
        float f = (float)v;
        memcpy((char *)buf + 4 * i, &f, 4);
        return;
    }
    double r = round_to(dt, v);
    uint16_t h;
    if (dt == KB_DT_FP16) {
        h = fp16_bits(r);
    } else {
        float f = (float)r;   /* exact: r has 8 significant bits */
        uint32_t w;
        memcpy(&w, &f, 4);
        h = isnan(r) ? 0x7fc0 : (uint16_t)(w >> 16);
    }
    memcpy((char *)buf + 2 * i, &h, 2);
}

/* ---- inputs ---- */

static uint64_t mix(uint64_t seed, uint64_t a, uint64_t b)
{
    uint64_t z = seed + a * 0x9E3779B97F4A7C15ull + b * 0xD1B54A32D192ED03ull + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The product scheme of coll_data.h: rank's factor at element i. */
static double prod_input(const kb_coll_desc *d, int rank, size_t i)
{
    int n = d->nranks, p, emin;
    double max;
    float_format(d->dtype, &p, &emin, &max);
    uint64_t h = mix(d->seed, i, 0x5eed);
    int k = (int)(h % (uint64_t)n);                    /* the rank that contributes m */
    int j = (rank - k + n) % n, pairs = (n - 1) / 2 < 3 ? (n - 1) / 2 : 3;
    uint64_t r = mix(d->seed, i, (uint64_t)rank + 1);
    double sign = r & 1 ? -1.0 : 1.0;
    if (j == 0)
        return sign * (1.0 + ldexp((double)(r >> (64 - (p - 1))), -(p - 1)));
    return sign * (j > 2 * pairs ? 1.0 : j % 2 ? 2.0 : 0.5);
}

double kb_coll_input(const kb_coll_desc *d, int rank, size_t i)
{
    int reduce = kb_coll_op_reduces(d->op);
    if (d->dtype == KB_DT_INT8) {
        int8_t v = (int8_t)(mix(d->seed, i, (uint64_t)rank + 1) >> 56);
        return reduce && d->redop == KB_REDOP_PROD && v == 0 ? 1 : v;   /* no zero factors */
    }
    if (reduce && d->redop == KB_REDOP_PROD)
        return prod_input(d, rank, i);
    double u = ldexp((double)(mix(d->seed, i, (uint64_t)rank + 1) >> 40), -23) - 1.0;   /* [-1, 1) */
    return d->dtype == KB_DT_FP32 ? u : round_to(d->dtype, u);
}

void kb_coll_fill(const kb_coll_desc *d, int rank, void *buf)
{
    kb_coll_counts c;
    kb_coll_counts_of(d->op, d->count, d->nranks, &c);
    for (size_t i = 0; i < c.send_count; i++)
        kb_coll_store(d->dtype, buf, i, kb_coll_input(d, rank, i));
}

/* ---- expected results ---- */

static double gamma_of(double u, int k) { return k * u / (1.0 - k * u); }

/* int8 arithmetic wraps modulo 256 (NCCL computes in int8_t). */
static double wrap8(double v) { return (double)(int8_t)(uint8_t)(((int64_t)v % 256 + 256) % 256); }

static void reduce_expect(const kb_coll_desc *d, size_t idx, double *want, double *tol)
{
    int n = d->nranks, int8 = d->dtype == KB_DT_INT8;
    double sum = 0, abs_sum = 0, prod = 1, mx = -INFINITY, mn = INFINITY;
    for (int r = 0; r < n; r++) {
        double x = kb_coll_input(d, r, idx);
        sum = int8 ? wrap8(sum + x) : sum + x;
        abs_sum += fabs(x);
        prod = int8 ? wrap8(prod * x) : prod * x;
        mx = x > mx ? x : mx;
        mn = x < mn ? x : mn;
    }
    double u = kb_coll_unit_roundoff(d->dtype), sub = int8 ? 0 : subnormal(d->dtype);
    *tol = 0;
    switch (d->redop) {
    case KB_REDOP_SUM:
        *want = sum;
        *tol = int8 ? 0 : gamma_of(u, n - 1) * abs_sum + (n - 1) * sub;
        break;
    case KB_REDOP_AVG:
        *want = int8 ? trunc(sum / n) : sum / n;
        *tol = int8 ? 0 : gamma_of(u, n + 1) * abs_sum / n + n * sub;
        break;
    case KB_REDOP_PROD: *want = prod; break;
    case KB_REDOP_MAX: *want = mx; break;
    default: *want = mn; break;
    }
}

void kb_coll_expect(const kb_coll_desc *d, int rank, size_t j, double *want, double *tol, int *src)
{
    size_t c = d->count, n = (size_t)d->nranks;
    *tol = 0;
    *src = -1;
    switch (d->op) {
    case KB_COLL_ALL_REDUCE: reduce_expect(d, j, want, tol); return;
    case KB_COLL_REDUCE_SCATTER: reduce_expect(d, (size_t)rank * c + j, want, tol); return;
    case KB_COLL_ALL_GATHER: *src = (int)(j / c); *want = kb_coll_input(d, *src, j % c); return;
    case KB_COLL_BROADCAST: *src = d->root; *want = kb_coll_input(d, *src, j); return;
    case KB_COLL_ALLTOALL: *src = (int)(j / c); *want = kb_coll_input(d, *src, (size_t)rank * c + j % c); return;
    default: *src = (int)(((size_t)rank + n - 1) % n); *want = kb_coll_input(d, *src, j); return;
    }
}

/* ---- the check ---- */

void kb_coll_add_suspect(kb_coll_check *c, int src)
{
    int k = 0;
    while (k < c->n_suspects && c->suspects[k] < src)
        k++;
    if ((k < c->n_suspects && c->suspects[k] == src) || c->n_suspects >= KB_COLL_MAX_SUSPECTS)
        return;
    memmove(c->suspects + k + 1, c->suspects + k, (size_t)(c->n_suspects - k) * sizeof c->suspects[0]);
    c->suspects[k] = src;
    c->n_suspects++;
}

/* Whether element j of recv holds want (tol 0: bit for bit for a copy, equal otherwise). */
static int element_ok(kb_dtype dt, const void *recv, size_t j, double want, double tol, int src, double got)
{
    if (src >= 0) {
        unsigned char w[4];
        size_t esz = kb_coll_esz(dt);
        kb_coll_store(dt, w, 0, want);
        return !memcmp(w, (const char *)recv + j * esz, esz);
    }
    return tol == 0 ? got == want : fabs(got - want) <= tol;
}

int64_t kb_coll_verify(const kb_coll_desc *d, int rank, const void *recv, kb_coll_check *out)
{
    kb_coll_counts c;
    kb_coll_counts_of(d->op, d->count, d->nranks, &c);
    memset(out, 0, sizeof *out);
    out->first_wrong = -1;
    for (size_t j = 0; j < c.recv_count; j++) {
        double want, tol, got = kb_coll_load(d->dtype, recv, j);
        int src;
        kb_coll_expect(d, rank, j, &want, &tol, &src);
        double e = fabs(got - want);
        out->max_err = e > out->max_err || isnan(e) ? e : out->max_err;
        out->max_tol = tol > out->max_tol ? tol : out->max_tol;
        out->checked++;
        if (element_ok(d->dtype, recv, j, want, tol, src, got))
            continue;
        if (out->wrong++ == 0) {
            out->first_wrong = (int64_t)j;
            out->got_at_first = got;
            out->want_at_first = want;
        }
        if (src >= 0)
            kb_coll_add_suspect(out, src);
    }
    return out->wrong;
}
