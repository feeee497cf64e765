/* attention_fa3_fp8.c - attention/fa3 in fp8 e4m3 (see attention_fa3_fp8.h; the kernel's fp8
 * path: attention_fa3_fp8.cuh). */
#include "attention_fa3_fp8.h"

#include "attention_fa3.h"
#include "engine/quant.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* As attention.c's REF_BUDGET_MADDS: every row at check sizes, a sample of rows beyond. */
#define REF_BUDGET_MADDS (256.0 * 1024 * 1024)

typedef struct {
    kb_dptr d_q, d_k, d_v, d_vt, d_o, d_lse;
    kb_dptr d_ctr;                 /* sched persistent: the int32 tile counter; else 0 */
    kb_arg maps[4];                /* Q, K, Vt, O */
    int64_t n, n_rows_all, n_rows; /* elements per tensor; b*h*s; rows checked */
    int64_t *rows;                 /* [n_rows] flattened (bh*s + i) rows the reference covers */
    float *q, *k, *v;              /* [n] dequantised inputs (exactly what the kernel reads) */
    float descale[3];              /* Q, K, V: the per-tensor scales (dequantised = code x scale) */
    float *serr;                   /* [n_rows] each checked row's bound on |S error| (fp8_tolerance) */
    float *extra, *lse_extra;      /* [n_rows * d], [n_rows]: the allowances that bound brings */
    float *want, *got, *lse_want, *lse_got, *lse_all, *o_f32, *rows_f;
    void *h_io;                    /* [n] bf16 O downloaded; [n] bytes of codes on the way up */
} fp8_state;

static void state_free(fp8_state *a)
{
    if (!a)
        return;
    free(a->rows), free(a->q), free(a->k), free(a->v), free(a->want), free(a->got), free(a->lse_want);
    free(a->lse_got), free(a->lse_all), free(a->o_f32), free(a->rows_f), free(a->h_io), free(a->serr);
    free(a->extra), free(a->lse_extra);
    free(a);
}

static int64_t gcd64(int64_t x, int64_t y)
{
    while (y) {
        int64_t t = x % y;
        x = y, y = t;
    }
    return x;
}

/* Every row within the budget, else every stride-th (stride coprime to s) and the last. */
static int pick_rows(fp8_state *a, int64_t s, int64_t d)
{
    int64_t total = a->n_rows_all, max_rows = (int64_t)(REF_BUDGET_MADDS / ((double)s * (double)d)), stride = 1;
    if (max_rows < 2)
        max_rows = 2;
    if (total > max_rows)
        for (stride = (total + max_rows - 2) / (max_rows - 1); gcd64(stride, s) != 1;)
            stride++;
    int64_t n = (total - 1) / stride + 1;
    if (!(a->rows = malloc((size_t)(n + 1) * sizeof *a->rows)))
        return 0;
    for (int64_t k = 0; k < n; k++)
        a->rows[k] = k * stride;
    if ((total - 1) % stride)
        a->rows[n++] = total - 1;
    a->n_rows = n;
    return 1;
}

/* x (n real values, rows of d) to e4m3 codes in codes and the dequantised values back in x,
 * one FP32 scale for the tensor (returned in *descale). 0 on allocation failure. */
static int quantise(float *x, int64_t n, int64_t d, uint8_t *codes, float *descale)
{
    kb_qop q;
    if (kb_qop_init(&q, KB_DT_FP8E4M3, KB_RECIPE_TENSOR, 0, n / d, d, x, d, 1) != KB_OK)
        return 0;
    for (int64_t i = 0; i < n; i++)
        codes[i] = (uint8_t)kb_qop_quantise(&q, i / d, i % d, x[i], &x[i]);
    *descale = q.tensor;
    kb_qop_free(&q);
    return 1;
}

/* Q, K, V as attention.c draws them: Q, K uniform in [-2, 2], K + 2, every fourth Q row + 4,
 * V in [-1, 1]; fa3's adversarial rows (every third Q row q[0] = 64, K's channel 0 a ramp
 * -16..16 along the keys: scores rising by more than 80 in the exponent over a row). */
static void draw(const kb_case *c, float *q, float *k, float *v, int64_t n)
{
    int64_t s = c->dims[D_S], d = c->dims[D_D];
    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    for (int64_t i = 0; i < n; i++)
        q[i] = kb_rng_uniform(&rng, -2.0f, 2.0f) + (i / d % 4 == 3 ? 4.0f : 0.0f);
    for (int64_t i = 0; i < n; i++)
        k[i] = kb_rng_uniform(&rng, -2.0f, 2.0f) + 2.0f;
    for (int64_t i = 0; i < n; i++)
        v[i] = kb_rng_uniform(&rng, -1.0f, 1.0f);
    for (int64_t r = 0; r < n / d; r++) {
        if (r % 3 == 0)
            q[r * d] = 64.0f;
        k[r * d] = s > 1 ? -16.0f + 32.0f * (float)(r % s) / (float)(s - 1) : 16.0f;
    }
}

/* Quantise and upload Q, K, V (h_io holds n bytes). KB_OK or a status with the message set. */
static kb_status upload_inputs(kb_run *r, fp8_state *a)
{
    float *x[3] = { a->q, a->k, a->v };
    kb_dptr dst[3] = { a->d_q, a->d_k, a->d_v };
    for (int t = 0; t < 3; t++) {
        if (!quantise(x[t], a->n, r->c->dims[D_D], a->h_io, &a->descale[t]))
            return kb_run_fail(r, KB_ERR_OOM, "attention/fa3 fp8: host allocation of the quantiser");
        kb_status st = kb_run_upload(r, dst[t], a->h_io, (size_t)a->n);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

/* One reference row in double from the dequantised inputs (attention.c's ref_row, plus the
 * largest sum_c |q_c k_c| x scale of the row's scores in *sabs, for the tolerance). p: [s]. */
static void ref_row(const fp8_state *a, const kb_case *c, int64_t row, double *p, float *out, float *lse,
                    double *sabs)
{
    *sabs = 0.0;
    int64_t s = c->dims[D_S], d = c->dims[D_D], i = row % s, head = row / s;
    int64_t nk = c->params[P_CAUSAL] == CAUSAL_YES ? i + 1 : s;
    const float *q = a->q + row * d, *k = a->k + head * s * d, *v = a->v + head * s * d;
    double scale = 1.0 / sqrt((double)d), mx = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < nk; j++) {
        double dot = 0.0, dabs = 0.0;
        for (int64_t e = 0; e < d; e++)
            dot += (double)q[e] * k[j * d + e], dabs += fabs((double)q[e] * k[j * d + e]);
        p[j] = dot * scale;
        mx = p[j] > mx ? p[j] : mx;
        *sabs = dabs * scale > *sabs ? dabs * scale : *sabs;
    }
    for (int64_t j = 0; j < nk; j++)
        sum += (p[j] = exp(p[j] - mx));
    for (int64_t e = 0; e < d; e++) {
        double acc = 0.0;
        for (int64_t j = 0; j < nk; j++)
            acc += p[j] * (double)v[j * d + e];
        out[e] = (float)(acc / sum);
    }
    *lse = (float)(mx + log(sum));
}

/* Host buffers of a for n elements per tensor. 0 on allocation failure. */
static int alloc_host(fp8_state *a, const kb_case *c)
{
    int64_t n = a->n, d = c->dims[D_D];
    a->q = malloc((size_t)n * sizeof(float)), a->k = malloc((size_t)n * sizeof(float));
    a->v = malloc((size_t)n * sizeof(float)), a->o_f32 = malloc((size_t)n * sizeof(float));
    a->h_io = malloc((size_t)n * 2);
    if (!a->q || !a->k || !a->v || !a->o_f32 || !a->h_io || !pick_rows(a, c->dims[D_S], d))
        return 0;
    a->want = malloc((size_t)(a->n_rows * d) * sizeof(float)), a->got = malloc((size_t)(a->n_rows * d) * sizeof(float));
    a->lse_want = malloc((size_t)a->n_rows * sizeof(float)), a->lse_got = malloc((size_t)a->n_rows * sizeof(float));
    a->lse_all = malloc((size_t)a->n_rows_all * sizeof(float));
    a->serr = malloc((size_t)a->n_rows * sizeof(float)), a->lse_extra = malloc((size_t)a->n_rows * sizeof(float));
    a->extra = malloc((size_t)(a->n_rows * d) * sizeof(float));
    return a->want && a->got && a->lse_want && a->lse_got && a->lse_all && a->serr && a->lse_extra && a->extra;
}

/* Device buffers: Q, K, V (bytes), Vt [b*h][d][sp], O (bf16), the log-sum-exp, the persistent
 * schedule's tile counter; the maps. */
static kb_status alloc_device(kb_run *r, fp8_state *a)
{
    const kb_case *c = r->c;
    size_t n = (size_t)a->n, vt = (size_t)(c->dims[D_B] * c->dims[D_H] * c->dims[D_D] * kb_attn_fa3_vt_len(c));
    kb_status st;
    if ((st = kb_run_alloc(r, n, &a->d_q)) || (st = kb_run_alloc(r, n, &a->d_k)) || (st = kb_run_alloc(r, n, &a->d_v)) ||
        (st = kb_run_alloc(r, vt, &a->d_vt)) || (st = kb_run_alloc(r, 2 * n, &a->d_o)))
        return st;
    if (c->params[P_LSE] == LSE_YES &&
        (st = kb_run_alloc(r, (size_t)a->n_rows_all * sizeof(float), &a->d_lse)) != KB_OK)
        return st;
    if (c->params[P_SCHED] == SCHED_PERSISTENT && (st = kb_attn_fa3_counter(r, &a->d_ctr)) != KB_OK)
        return st;
    return kb_attn_fa3_maps(r, a->d_q, a->d_k, a->d_vt, a->d_o, a->maps);
}

/* For --dump and the record: the dequantised inputs and the constants O depends on. */
static void expose_inputs(kb_run *r, const fp8_state *a)
{
    const kb_case *c = r->c;
    int64_t shape[4] = { c->dims[D_B], c->dims[D_H], c->dims[D_S], c->dims[D_D] };
    kb_run_expose(r, "q", a->q, shape, 4);
    kb_run_expose(r, "k", a->k, shape, 4);
    kb_run_expose(r, "v", a->v, shape, 4);
    kb_run_constant(r, "scale", 1.0 / sqrt((double)c->dims[D_D]));
    kb_run_constant(r, "causal", c->params[P_CAUSAL] == CAUSAL_YES);
    kb_run_constant(r, "q_descale", a->descale[0]);
    kb_run_constant(r, "k_descale", a->descale[1]);
    kb_run_constant(r, "v_descale", a->descale[2]);
}

kb_status kb_attn_fa3_fp8_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    int64_t s = c->dims[D_S], d = c->dims[D_D];
    fp8_state *a = calloc(1, sizeof *a);
    double *p = malloc((size_t)s * sizeof(double));
    kb_status st;
    if (!a || !p) {
        st = kb_run_fail(r, KB_ERR_OOM, "host allocation of the attention state");
        goto fail;
    }
    a->n = c->dims[D_B] * c->dims[D_H] * s * d;
    a->n_rows_all = c->dims[D_B] * c->dims[D_H] * s;
    if (!alloc_host(a, c)) {
        st = kb_run_fail(r, KB_ERR_OOM, "host allocation for %lld elements per tensor", (long long)a->n);
        goto fail;
    }
    if ((st = alloc_device(r, a)) != KB_OK)
        goto fail;
    draw(c, a->q, a->k, a->v, a->n);
    if ((st = upload_inputs(r, a)) != KB_OK)
        goto fail;
    for (int64_t k = 0; k < a->n_rows; k++) {
        double sabs;
        ref_row(a, c, a->rows[k], p, a->want + k * d, a->lse_want + k, &sabs);
        a->serr[k] = (float)((double)d / 32.0 * ldexp(sabs, -13));   /* fp8_tolerance's e of the row */
    }
    expose_inputs(r, a);
    free(p);
    *state = a;
    return KB_OK;
fail:
    free(p);
    state_free(a);
    return st;
}

kb_status kb_attn_fa3_fp8_enqueue(kb_run *r, void *state)
{
    const kb_case *c = r->c;
    fp8_state *a = state;
    int64_t s = c->dims[D_S], sp = kb_attn_fa3_vt_len(c);
    unsigned bh = (unsigned)(c->dims[D_B] * c->dims[D_H]);
    kb_geom gt = { { (unsigned)((sp + 63) / 64), bh, 1 }, { 256, 1, 1 }, 0, { 1, 1, 1 } };
    kb_arg at[] = { kb_arg_ptr(a->d_v), kb_arg_ptr(a->d_vt), kb_arg_i32((int32_t)s), kb_arg_i32((int32_t)sp) };
    kb_status st = kb_run_launch(r, "attn_fa3_vt", &gt, at, 4);
    if (st != KB_OK)
        return st;
    return kb_attn_fa3_launch(r, a->maps, a->d_lse, a->d_ctr, a->descale);
}

/* The fp8 tolerance (docs/precision.md, "fp8 attention"): O is bf16 (kb_tolerance(bf16, 1)),
 * fp32 sums over max(s, d) as every variant; P rounded to e4m3 before P V while l sums the
 * unrounded p: each p_j off by <= 2^-4 relative, so O by <= 2^-4 max|v|; O's accumulation in
 * the fp8 wgmma, which keeps 13 mantissa bits of its f32 accumulator per k32 step (emu_wgmma.c:
 * the tensor core's fp8 accumulation), over ceil(s/32) steps: < ceil(s/32) 2^-13 max|v|.
 * max|v| = 1 (V in [-1, 1]). Per row (the allowance in extra): the same truncation in S = Q K^T
 * over d/32 steps leaves S off by < e = (d/32) 2^-13 max_j sum_c |q_c k_jc| x scale, each p_j
 * by a factor within e^{+-e}, O by <= (e^{2e} - 1) max|v| (the log-sum-exp: lse_tolerance). */
static void fp8_tolerance(const kb_case *c, fp8_state *a, double *atol, double *rtol)
{
    double a1, r1, a2, r2;
    int64_t s = c->dims[D_S], d = c->dims[D_D];
    kb_tolerance(KB_DT_BF16, 1, &a1, &r1);
    kb_tolerance(KB_DT_FP32, s > d ? s : d, &a2, &r2);
    *atol = a1 + a2 + kb_dtype_unit_roundoff(KB_DT_FP8E4M3) + (double)((s + 31) / 32) * ldexp(1.0, -13);
    *rtol = r1 + r2;
    for (int64_t k = 0; k < a->n_rows; k++)
        for (int64_t e = 0; e < d; e++)
            a->extra[k * d + e] = (float)expm1(2.0 * a->serr[k]);
}

/* The log-sum-exp's own tolerance (docs/precision.md "fp8 attention"): fp32 from the fp32 S,
 * never rounded to bf16 or e4m3, and l sums the unrounded p - so no bf16, P or P V term. A
 * smooth max of the scores, it moves by at most max_j |d s_j| = e (serr, per row: the
 * wgmma's truncation over d/32 steps, which dwarfs S's fp32 roundings: 2^-13 d/32 against
 * (d + 8) 2^-24) plus l's relative error: its fp32 sum (kb_tolerance(fp32, max(s, d))'s
 * atol) and ex2.approx.f32's 2^-22 (PTX ISA) on each term and each of the <= ceil(s/BKV) - 1
 * rescales after it; rtol 4u for the output's fp32 rounding. The 2^8 P offset subtracted
 * back (8 ln 2) is one more fp32 rounding, inside rtol. */
static void lse_tolerance(const kb_case *c, fp8_state *a, double *atol, double *rtol)
{
    kb_attn_fa3_lse_tolerance(c, atol, rtol);
    for (int64_t k = 0; k < a->n_rows; k++)
        a->lse_extra[k] = a->serr[k];
}

kb_status kb_attn_fa3_fp8_check(kb_run *r, void *state, kb_verify *v)
{
    const kb_case *c = r->c;
    fp8_state *a = state;
    int64_t d = c->dims[D_D];
    kb_status st = kb_run_download(r, a->h_io, a->d_o, (size_t)a->n * 2);
    if (st != KB_OK)
        return st;
    kb_host_to_f32(KB_DT_BF16, a->h_io, a->o_f32, a->n);
    for (int64_t k = 0; k < a->n_rows; k++)
        memcpy(a->got + k * d, a->o_f32 + a->rows[k] * d, (size_t)d * sizeof(float));
    double atol, rtol;
    fp8_tolerance(c, a, &atol, &rtol);
    kb_verify_init(v, atol, rtol);
    kb_verify_f32_scaled(v, a->got, a->want, a->extra, a->n_rows * d);
    if (a->d_lse) {
        if ((st = kb_run_download(r, a->lse_all, a->d_lse, (size_t)a->n_rows_all * sizeof(float))) != KB_OK)
            return st;
        for (int64_t k = 0; k < a->n_rows; k++)
            a->lse_got[k] = a->lse_all[a->rows[k]];
        kb_verify w;
        lse_tolerance(c, a, &atol, &rtol);
        kb_verify_init(&w, atol, rtol);
        kb_verify_f32_scaled(&w, a->lse_got, a->lse_want, a->lse_extra, a->n_rows);
        kb_verify_merge(v, &w);
        kb_run_expose(r, "lse", a->lse_got, &a->n_rows, 1);
    }
    if (a->d_ctr && (st = kb_attn_fa3_check_counter(r, a->d_ctr, v)) != KB_OK)   /* after O and lse */
        return st;
    int64_t shape[2] = { a->n_rows, d };
    kb_run_expose(r, "out", a->got, shape, 2);
    kb_run_expose(r, "ref", a->want, shape, 2);
    if (!a->rows_f && (a->rows_f = malloc((size_t)a->n_rows * sizeof(float))))
        for (int64_t k = 0; k < a->n_rows; k++)
            a->rows_f[k] = (float)a->rows[k];
    if (a->rows_f)
        kb_run_expose(r, "rows", a->rows_f, &a->n_rows, 1);
    return KB_OK;
}

void kb_attn_fa3_fp8_teardown(kb_run *r, void *state)
{
    (void)r;
    state_free(state);
}
