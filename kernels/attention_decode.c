/* attention_decode.c - host side of attention/decode: legality, defines, work model, inputs
 * (with the adversarial rows), CPU reference in double, launches and verification.
 * See attention_decode.h for the layout and attention_decode.cu for the kernels. */
#include "attention_decode.h"
#include "attention_decode_model.h"
#include "attention_decode_tma.h"
#include "engine/verify.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reference rows: all of them up to this many multiply-adds in double (every check shape),
 * else an evenly spaced sample (as attention.c). */
#define REF_BUDGET_MADDS (256.0 * 1024 * 1024)

/* Adversarial rows: every third output row (flattened over b, h, q_len) has q[0] = ADV_Q while
 * channel 0 of every K row ramps from -ADV_K to +ADV_K along the sequence. Those rows' scores
 * rise by 2 ADV_Q ADV_K / sqrt(d) across the cache - 256 at d = 64, 181 at 128, 128 at 256,
 * always more than 80 in the exponent - so every tile and every split raises the running
 * max: an O not rescaled when the max moves, or splits combined without their log-sum-exp,
 * are wrong by orders of magnitude, and exp without the max subtracted overflows fp32. The
 * other rows keep |q[0]| <= 0.25, so the ramp only tilts their softmax. */
#define ADV_Q 64.0f
#define ADV_K 16.0f

/* The reason a case is refused, for `return fail(...)`. */
static int fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return 0;
}

static int valid_shape(const kb_case *c, char *why, size_t n)
{
    int64_t h = c->dims[D_H], s = c->dims[D_S], d = c->dims[D_D];
    int64_t q_len = c->params[P_QLEN], group = c->params[P_GROUP];
    if (d % 16 || d > 256)
        return fail(why, n, "d=%lld: decode takes head dims that are multiples of 16 (the mma k-step) up to 256",
                    (long long)d);
    if (group < 1 || h % group)
        return fail(why, n, "group=%lld does not divide h=%lld (query heads per KV head)", (long long)group,
                    (long long)h);
    if (q_len < 1 || q_len > 16)
        return fail(why, n, "q_len=%lld: decode takes 1 to 16 query rows per sequence", (long long)q_len);
    if (c->params[P_CAUSAL] == CAUSAL_YES && s < q_len)
        return fail(why, n, "s=%lld < q_len=%lld: with the causal mask aligned bottom-right the KV cache holds "
                    "the new tokens, so the first rows would see no key", (long long)s, (long long)q_len);
    if (s > (1LL << 30))
        return fail(why, n, "s=%lld: the kernel counts keys in 32-bit ints (at most 2^30)", (long long)s);
    return 1;
}

static int valid_tiles(const kb_case *c, const kb_target *t, const kb_dec_geom *g, char *why, size_t n)
{
    int64_t warps = c->params[P_WARPS], stages = c->params[P_STAGES], chunk = c->params[P_CHUNK];
    if (warps != 1 && warps != 2 && warps != 4 && warps != 8)
        return fail(why, n, "WARPS=%lld: must be 1, 2, 4 or 8 (row warps x key warps, powers of two)",
                    (long long)warps);
    if (stages < 2 || stages > 4)
        return fail(why, n, "STAGES=%lld: the K/V ring takes 2 to 4 tiles", (long long)stages);
    if (chunk > 0 && chunk % g->bkv)
        return fail(why, n, "CHUNK=%lld is not a multiple of the tile's %lld keys (16 per key warp)",
                    (long long)chunk, (long long)g->bkv);
    if (g->splits > KB_DEC_MAX_SPLITS)
        return fail(why, n, "%lld splits (s / CHUNK): more than %d, the fp32 partials would outweigh K and V",
                    (long long)g->splits, KB_DEC_MAX_SPLITS);
    if (g->heads_kv > 65535)
        return fail(why, n, "b*h/group=%lld: one (batch, KV head) per grid.y, limited to 65535",
                    (long long)g->heads_kv);
    if (g->shmem > t->max_shmem_per_block) {
        char what[96];
        if (g->shmem == g->merge_bytes)
            snprintf(what, sizeof what, "the key warps' merge and the fp32 output of %lld rows", (long long)g->rows);
        else
            snprintf(what, sizeof what, "Q tile, %lld K/V tiles of %lld keys", (long long)stages, (long long)g->bkv);
        return fail(why, n, "%lld bytes of shared memory (%s, d=%lld) exceed the %d-byte limit of %s",
                    (long long)g->shmem, what, (long long)c->dims[D_D], t->max_shmem_per_block, kb_arch_name(t->sm));
    }
    return 1;
}

int kb_attn_decode_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    if (!valid_shape(c, why, n))
        return 0;
    if (c->variant == V_DECODE_TMA && !kb_attn_decode_tma_valid(c, t, why, n))
        return 0;
    kb_dec_geom g;
    kb_dec_geom_of(c, &g);
    return valid_tiles(c, t, &g, why, n);
}

void kb_attn_decode_defines(const kb_case *c, kb_sb *out)
{
    kb_dec_geom g;
    kb_dec_geom_of(c, &g);
    kb_sb_printf(out, "ATTN_DECODE=1\nHEAD_D=%lld\nDEC_MT=%lld\nDEC_RG=%lld\n", (long long)c->dims[D_D],
                 (long long)g.mt, (long long)g.rg);
    if (g.tma)   /* decode_tma: attention_decode_tma.cu's kernel instead of attn_decode */
        kb_sb_printf(out, "DEC_TMA=1\n");
}

kb_work kb_attn_decode_work(const kb_case *c)
{
    double b = (double)c->dims[D_B], h = (double)c->dims[D_H], s = (double)c->dims[D_S], d = (double)c->dims[D_D];
    double ql = (double)c->params[P_QLEN], esz = (double)kb_dtype_size(c->dtype);
    kb_dec_geom g;
    kb_dec_geom_of(c, &g);
    double kept = ql * s - (c->params[P_CAUSAL] == CAUSAL_YES ? ql * (ql - 1) / 2 : 0);
    kb_work w = { 0 };
    w.flops = 4.0 * b * h * d * kept;
    w.bytes_read = (b * h * ql * d + 2.0 * (double)g.heads_kv * s * d) * esz;
    w.bytes_written = b * h * ql * d * esz;
    if (g.splits > 1)   /* fp32 partial rows and their lse, written by the splits, read by the combine */
        w.bytes_moved = w.bytes_read + w.bytes_written + 2.0 * (double)g.splits * (double)g.rows_total * (d + 1) * 4;
    return w;
}

typedef struct {
    kb_dec_geom g;
    kb_dptr d_q, d_k, d_v, d_o;
    kb_dptr d_part, d_lse;  /* splits > 1: fp32 [splits][rows_total][d] and [splits][rows_total] */
    kb_arg maps[3];         /* decode_tma: the tensor maps of Q, K, V */
    int64_t nq, nkv;        /* elements of Q (= of O) and of K (= of V) */
    int64_t *rows;          /* [n_rows] output rows (of rows_total) the reference covers */
    int64_t n_rows;
    float *want, *got;      /* [n_rows * d] reference rows and the same rows of the output */
    float *o_f32;           /* [nq] downloaded output, dequantised */
    void *h_io;             /* [max(nq, nkv)] storage-typed host buffer */
    float *q, *k, *v;       /* the inputs as the kernel reads them (for the reference and --dump) */
    float *rows_f;          /* [n_rows] the checked rows as float, for --dump */
} dec_state;

static void state_free(dec_state *a)
{
    if (!a)
        return;
    free(a->rows);
    free(a->want);
    free(a->got);
    free(a->o_f32);
    free(a->h_io);
    free(a->q);
    free(a->k);
    free(a->v);
    free(a->rows_f);
    free(a);
}

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Rows the reference covers: all within REF_BUDGET_MADDS, else every stride-th (stride coprime
 * to q_len, so the sample walks through every query position) plus the last one. */
static kb_status pick_rows(dec_state *a, int64_t q_len, int64_t s, int64_t d)
{
    int64_t total = a->g.rows_total, max_rows = (int64_t)(REF_BUDGET_MADDS / ((double)s * (double)d));
    int64_t stride = 1;
    if (max_rows < 2)
        max_rows = 2;
    if (total > max_rows) {
        stride = (total + max_rows - 2) / (max_rows - 1);
        while (gcd64(stride, q_len) != 1)
            stride++;
    }
    int64_t n = (total - 1) / stride + 1;
    int last_extra = (total - 1) % stride != 0;
    if (!(a->rows = malloc((size_t)(n + last_extra) * sizeof *a->rows)))
        return KB_ERR_OOM;
    for (int64_t i = 0; i < n; i++)
        a->rows[i] = i * stride;
    if (last_extra)
        a->rows[n++] = total - 1;
    a->n_rows = n;
    return KB_OK;
}

/* Host arrays of the case; KB_ERR_OOM (message in r) when one cannot be had. */
static kb_status alloc_host(kb_run *r, dec_state *a)
{
    const kb_case *c = r->c;
    int64_t d = c->dims[D_D], big = a->nq > a->nkv ? a->nq : a->nkv;
    a->q = malloc((size_t)a->nq * sizeof(float));
    a->o_f32 = malloc((size_t)a->nq * sizeof(float));
    a->k = malloc((size_t)a->nkv * sizeof(float));
    a->v = malloc((size_t)a->nkv * sizeof(float));
    a->h_io = malloc((size_t)big * kb_dtype_size(c->dtype));
    if (!a->q || !a->o_f32 || !a->k || !a->v || !a->h_io ||
        pick_rows(a, c->params[P_QLEN], c->dims[D_S], d) != KB_OK ||
        !(a->want = malloc((size_t)(a->n_rows * d) * sizeof(float))) ||
        !(a->got = malloc((size_t)(a->n_rows * d) * sizeof(float))))
        return kb_run_fail(r, KB_ERR_OOM, "host allocation for %lld + %lld elements", (long long)a->nq,
                           (long long)a->nkv);
    return KB_OK;
}

static kb_status alloc_device(kb_run *r, dec_state *a)
{
    size_t esz = kb_dtype_size(r->c->dtype);
    kb_status st;
    if ((st = kb_run_alloc(r, (size_t)a->nq * esz, &a->d_q)) != KB_OK ||
        (st = kb_run_alloc(r, (size_t)a->nkv * esz, &a->d_k)) != KB_OK ||
        (st = kb_run_alloc(r, (size_t)a->nkv * esz, &a->d_v)) != KB_OK ||
        (st = kb_run_alloc(r, (size_t)a->nq * esz, &a->d_o)) != KB_OK)
        return st;
    if (a->g.splits > 1) {
        size_t rows = (size_t)(a->g.splits * a->g.rows_total);
        if ((st = kb_run_alloc(r, rows * (size_t)r->c->dims[D_D] * sizeof(float), &a->d_part)) != KB_OK ||
            (st = kb_run_alloc(r, rows * sizeof(float), &a->d_lse)) != KB_OK)
            return st;
    }
    return a->g.tma ? kb_attn_decode_tma_maps(r, a->d_q, a->d_k, a->d_v, a->maps) : KB_OK;
}

/* f (n values already drawn) quantised to the dtype through h_io, kept dequantised (what the
 * kernel reads) and uploaded to dst. */
static kb_status quantise_upload(kb_run *r, float *f, int64_t n, void *h_io, kb_dptr dst)
{
    kb_dtype dt = r->c->dtype;
    kb_host_from_f32(dt, f, h_io, n);
    kb_host_to_f32(dt, h_io, f, n);
    return kb_run_upload(r, dst, h_io, (size_t)n * kb_dtype_size(dt));
}

/* Q in [-2, 2] with channel 0 ADV_Q on every third row and in [-0.25, 0.25] elsewhere; K in
 * [-2, 2] with channel 0 the ramp -ADV_K .. +ADV_K along each head's s keys; V in [-1, 1]. */
static kb_status make_inputs(kb_run *r, dec_state *a)
{
    const kb_case *c = r->c;
    int64_t s = c->dims[D_S], d = c->dims[D_D];
    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    for (int64_t i = 0; i < a->nq; i++) {
        int64_t row = i / d;
        a->q[i] = i % d ? kb_rng_uniform(&rng, -2.0f, 2.0f)
                        : row % 3 == 0 ? ADV_Q : kb_rng_uniform(&rng, -0.25f, 0.25f);
    }
    float step = 2.0f * ADV_K / (float)(s > 1 ? s - 1 : 1);
    for (int64_t i = 0; i < a->nkv; i++) {
        a->k[i] = i % d ? kb_rng_uniform(&rng, -2.0f, 2.0f) : -ADV_K + step * (float)(i / d % s);
        a->v[i] = kb_rng_uniform(&rng, -1.0f, 1.0f);
    }
    kb_status st;
    if ((st = quantise_upload(r, a->q, a->nq, a->h_io, a->d_q)) != KB_OK ||
        (st = quantise_upload(r, a->k, a->nkv, a->h_io, a->d_k)) != KB_OK ||
        (st = quantise_upload(r, a->v, a->nkv, a->h_io, a->d_v)) != KB_OK)
        return st;
    return KB_OK;
}

/* One output row in double: softmax over its nk visible keys of q.k / sqrt(d), times V. */
static void ref_row(const float *q, const float *k, const float *v, int64_t nk, int64_t d, double *p, float *out)
{
    double scale = 1.0 / sqrt((double)d), mx = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < nk; j++) {
        double dot = 0.0;
        for (int64_t e = 0; e < d; e++)
            dot += (double)q[e] * (double)k[j * d + e];
        p[j] = dot * scale;
        mx = p[j] > mx ? p[j] : mx;
    }
    for (int64_t j = 0; j < nk; j++)
        sum += p[j] = exp(p[j] - mx);
    for (int64_t e = 0; e < d; e++) {
        double acc = 0.0;
        for (int64_t j = 0; j < nk; j++)
            acc += p[j] * (double)v[j * d + e];
        out[e] = (float)(acc / sum);
    }
}

/* The reference of every sampled row: row = (b h_q + hq) q_len + i reads KV head
 * b h_kv + hq / group, keys 0 .. s - 1 (causal: 0 .. s - q_len + i). */
static kb_status reference(kb_run *r, dec_state *a)
{
    const kb_case *c = r->c;
    int64_t h = c->dims[D_H], s = c->dims[D_S], d = c->dims[D_D];
    int64_t q_len = c->params[P_QLEN], group = c->params[P_GROUP];
    double *p = malloc((size_t)s * sizeof(double));
    if (!p)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of %lld scores", (long long)s);
    for (int64_t i = 0; i < a->n_rows; i++) {
        int64_t row = a->rows[i], head = row / q_len, qi = row % q_len;
        int64_t kvh = head / h * a->g.h_kv + head % h / group;
        int64_t nk = c->params[P_CAUSAL] == CAUSAL_YES ? s - q_len + qi + 1 : s;
        ref_row(a->q + row * d, a->k + kvh * s * d, a->v + kvh * s * d, nk, d, p, a->want + i * d);
    }
    free(p);
    return KB_OK;
}

/* For --dump and the record: Q [b, h, q_len, d], K and V [b, h_kv, s, d], and the constants. */
static void expose_inputs(kb_run *r, dec_state *a)
{
    const kb_case *c = r->c;
    int64_t qs[4] = { c->dims[D_B], c->dims[D_H], c->params[P_QLEN], c->dims[D_D] };
    int64_t ks[4] = { c->dims[D_B], a->g.h_kv, c->dims[D_S], c->dims[D_D] };
    kb_run_expose(r, "q", a->q, qs, 4);
    kb_run_expose(r, "k", a->k, ks, 4);
    kb_run_expose(r, "v", a->v, ks, 4);
    kb_run_constant(r, "scale", 1.0 / sqrt((double)c->dims[D_D]));
    kb_run_constant(r, "causal", c->params[P_CAUSAL] == CAUSAL_YES);
    kb_run_constant(r, "q_len", (double)c->params[P_QLEN]);
    kb_run_constant(r, "group", (double)c->params[P_GROUP]);
    kb_run_constant(r, "splits", (double)a->g.splits);
}

kb_status kb_attn_decode_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    dec_state *a = calloc(1, sizeof *a);
    if (!a)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the decode state");
    kb_dec_geom_of(c, &a->g);
    a->nq = a->g.rows_total * c->dims[D_D];
    a->nkv = a->g.heads_kv * c->dims[D_S] * c->dims[D_D];
    kb_status st;
    if ((st = alloc_host(r, a)) != KB_OK || (st = alloc_device(r, a)) != KB_OK || (st = make_inputs(r, a)) != KB_OK ||
        (st = reference(r, a)) != KB_OK) {
        state_free(a);
        return st;
    }
    expose_inputs(r, a);
    *state = a;
    return KB_OK;
}

kb_status kb_attn_decode_enqueue(kb_run *r, void *state)
{
    const kb_case *c = r->c;
    dec_state *a = state;
    const kb_dec_geom *g = &a->g;
    float scale = (float)(1.0 / sqrt((double)c->dims[D_D]));
    kb_geom g1 = { { (unsigned)(g->nrb * g->splits), (unsigned)g->heads_kv, 1 }, { (unsigned)g->threads, 1, 1 },
                   (size_t)g->shmem, { 1, 1, 1 } };
    kb_arg a1[] = { kb_arg_ptr(a->d_q), kb_arg_ptr(a->d_k), kb_arg_ptr(a->d_v), kb_arg_ptr(a->d_o),
                    kb_arg_ptr(a->d_part), kb_arg_ptr(a->d_lse), kb_arg_i32((int32_t)c->dims[D_S]),
                    kb_arg_i32((int32_t)g->chunk), kb_arg_i64(g->rows_total), kb_arg_f32(scale) };
    if (g->tma)   /* decode_tma: Q, K, V by their tensor maps, the rest as attn_decode */
        for (int i = 0; i < 3; i++)
            a1[i] = a->maps[i];
    kb_status st = kb_run_launch(r, r->f->variants[c->variant].entry, &g1, a1, 10);
    if (st != KB_OK || g->splits == 1)
        return st;
    /* the combine: one thread per 8 columns of an output row, 128 per block */
    int64_t threads = g->rows_total * (c->dims[D_D] / 8);
    kb_geom g2 = { { (unsigned)((threads + 127) / 128), 1, 1 }, { 128, 1, 1 }, 0, { 1, 1, 1 } };
    kb_arg a2[] = { kb_arg_ptr(a->d_part), kb_arg_ptr(a->d_lse), kb_arg_ptr(a->d_o), kb_arg_i64(g->rows_total),
                    kb_arg_i32((int32_t)g->splits) };
    return kb_run_launch(r, "attn_decode_combine", &g2, a2, 5);
}

/* The mma variant's tolerance (attention.c): the inputs are exact in the dtype and every
 * intermediate fp32, so the dtype enters in O's rounding (kb_tolerance(dtype, 1)) and in P
 * rounded to it before P V (u x max|v| = u: V is in [-1, 1]); the fp32 sums over s and d add
 * kb_tolerance(fp32, max(s, d)). The split partials stay fp32 and the combine's weights are
 * exp2 of lse differences: a few fp32 roundings, inside that term. The adversarial rows'
 * scores reach |s| log2 e ~ 370 in the exponent, whose fp32 rounding moves p by ~2^-24 x 370
 * relative: far below u of fp16 (2^-11). */
void kb_attn_decode_tolerance(const kb_case *c, double *atol, double *rtol)
{
    double a1, r1, a2, r2;
    int64_t s = c->dims[D_S], d = c->dims[D_D];
    kb_tolerance(c->dtype, 1, &a1, &r1);
    kb_tolerance(KB_DT_FP32, s > d ? s : d, &a2, &r2);
    *atol = a1 + a2 + kb_dtype_unit_roundoff(c->dtype);
    *rtol = r1 + r2;
}

kb_status kb_attn_decode_check(kb_run *r, void *state, kb_verify *v)
{
    const kb_case *c = r->c;
    dec_state *a = state;
    int64_t d = c->dims[D_D];
    kb_status st = kb_run_download(r, a->h_io, a->d_o, (size_t)a->nq * kb_dtype_size(c->dtype));
    if (st != KB_OK)
        return st;
    kb_host_to_f32(c->dtype, a->h_io, a->o_f32, a->nq);
    for (int64_t i = 0; i < a->n_rows; i++)
        memcpy(a->got + i * d, a->o_f32 + a->rows[i] * d, (size_t)d * sizeof(float));
    double atol, rtol;
    kb_attn_decode_tolerance(c, &atol, &rtol);
    kb_verify_init(v, atol, rtol);
    kb_verify_f32(v, a->got, a->want, a->n_rows * d);
    int64_t shape[2] = { a->n_rows, d };
    kb_run_expose(r, "out", a->got, shape, 2);
    kb_run_expose(r, "ref", a->want, shape, 2);
    if (!a->rows_f && (a->rows_f = malloc((size_t)a->n_rows * sizeof(float))))
        for (int64_t i = 0; i < a->n_rows; i++)
            a->rows_f[i] = (float)a->rows[i];
    if (a->rows_f)
        kb_run_expose(r, "rows", a->rows_f, &a->n_rows, 1);
    return KB_OK;
}

void kb_attn_decode_teardown(kb_run *r, void *state)
{
    (void)r;
    state_free(state);
}
