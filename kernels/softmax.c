/* softmax.c - host side of the softmax family: descriptor, legality, work model,
 * inputs, CPU reference and verification. Device code: softmax.cu.
 *
 * x and y are [rows x ld], ld = cols + pad: the pad axis is row-stride padding, and y
 * also starts pad elements into its allocation. So with pad = 0 and odd cols, x and y
 * rows are misaligned alike (vector body after a scalar head), and with pad > 0 they
 * are misaligned differently (the scalar fallback of the normalising pass). The padding
 * of x holds a huge value and the whole of y starts as a sentinel, so a kernel that
 * reads or writes outside its row shows up in verification. */
#include "engine/exec.h"
#include "engine/valid.h"
#include "engine/verify.h"
#include "kernels/families.h"
#include "stream_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V_NAIVE, V_ONLINE, V_REG };
enum { P_SCOPE, P_BLOCK, P_VEC, P_NVEC, P_SPLIT };
enum { SCOPE_BLOCK, SCOPE_WARP };
enum { D_ROWS, D_COLS };

/* Nominal arithmetic per element, counted once for the operation whatever the variant:
 * max compare, subtract, exp, add to the sum, multiply by 1/sum = 5 (an exp counts as
 * one op). The online variant evaluates exp twice per element and naive three reads;
 * that is implementation cost, not the operation's work. Softmax is memory-bound. */
#define SOFTMAX_FLOPS_PER_ELEM 5.0

/* In x's row padding. Softmax is shift-invariant, so a moderate value read by mistake
 * as the max would go unnoticed; 1e4 (finite in fp16) underflows every exp to 0. */
#define X_PAD_VALUE 1e4f
#define Y_SENTINEL (-1.0f)   /* y before the kernel: softmax never writes a negative */

#define SOFTMAX_DTYPES (KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16))

static const kb_variant variants[] = {
    [V_NAIVE] = { "naive", "softmax_naive", SOFTMAX_DTYPES,
                  "three passes (max, sum of exp, normalise), one row per block, scalar loads" },
    [V_ONLINE] = { "online", "softmax_online", SOFTMAX_DTYPES,
                   "online max+sum in one pass, then normalise (2 reads); VEC-wide loads; row per block or per warp" },
    [V_REG] = { "reg", "softmax_reg", SOFTMAX_DTYPES,
                "a row (SPLIT > 1: a SPLIT-th of it) per block in registers: NVEC 16-byte loads per thread issued "
                "before use, one (max, sum) merge, exp2 with log2e folded, 16-byte stores; SPLIT > 1 adds a "
                "statistics kernel" },
};

static const char *const scopes[] = { "block", "warp", NULL };
static const char *const dims[] = { [D_ROWS] = "rows", [D_COLS] = "cols" };

static const kb_param params[] = {
    [P_SCOPE] = { "scope", SCOPE_BLOCK, scopes, 1u << V_ONLINE,
                  "block: one row per block (long rows); warp: one row per warp, BLOCK/32 rows per block (short rows)" },
    [P_BLOCK] = { "BLOCK", 256, NULL, 0, "threads per block (multiple of 32, <= 1024)" },
    [P_VEC] = { "VEC", 4, NULL, 1u << V_ONLINE, "elements per vector access (1, 2, 4, 8; at most 16 bytes)" },
    [P_NVEC] = { "NVEC", 4, NULL, 1u << V_REG,
                 "16-byte vectors of the row each thread holds in registers: a block holds at most "
                 "BLOCK x NVEC x 16/esz elements", 1, 16 },
    [P_SPLIT] = { "SPLIT", 1, NULL, 1u << V_REG,
                  "blocks per row; > 1 writes partial (max, sum) pairs to a workspace and normalises in a second "
                  "kernel, so a few rows (decode) still fill the GPU", 1, 64 },
};

static int64_t rows_per_block(const kb_case *c)
{
    if (c->variant == V_ONLINE && c->params[P_SCOPE] == SCOPE_WARP)
        return c->params[P_BLOCK] / 32;
    return 1;
}

/* Blocks per row: SPLIT for reg, 1 otherwise. */
static int64_t split_of(const kb_case *c)
{
    return c->variant == V_REG ? c->params[P_SPLIT] : 1;
}

static int64_t grid_blocks(const kb_case *c)
{
    int64_t rpb = rows_per_block(c);
    return (c->dims[D_ROWS] + rpb - 1) / rpb * split_of(c);
}

/* reg: the columns of one part of a row, ceil(cols / SPLIT) rounded up to whole 16-byte
 * vectors (kb_row_span_of in kb_rowvec.h), and what a block holds in registers. */
static int64_t reg_part_len(const kb_case *c)
{
    int64_t split = c->params[P_SPLIT], rv = 16 / (int64_t)kb_dtype_size(c->dtype);
    return ((c->dims[D_COLS] + split - 1) / split + rv - 1) / rv * rv;
}

static int64_t reg_capacity(const kb_case *c)
{
    return c->params[P_BLOCK] * c->params[P_NVEC] * (16 / (int64_t)kb_dtype_size(c->dtype));
}

static int softmax_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t block = c->params[P_BLOCK], vec = c->params[P_VEC];
    if (!kb_valid_block(block, why, n))
        return 0;
    if (c->variant == V_ONLINE && !kb_valid_vec(vec, c->dtype, why, n))
        return 0;
    if (c->dims[D_ROWS] < 1 || c->dims[D_COLS] < 1) {
        snprintf(why, n, "rows=%lld, cols=%lld: need at least one row of one element", (long long)c->dims[D_ROWS],
                 (long long)c->dims[D_COLS]);
        return 0;
    }
    int64_t rpb = rows_per_block(c);
    if (grid_blocks(c) > 2147483647LL) {
        snprintf(why, n, "rows=%lld needs more than 2^31-1 blocks of %lld row(s) (SPLIT %lld per row)",
                 (long long)c->dims[D_ROWS], (long long)rpb, (long long)split_of(c));
        return 0;
    }
    if (c->variant == V_REG && reg_part_len(c) > reg_capacity(c)) {
        snprintf(why, n,
                 "reg holds at most BLOCK x NVEC x %lld = %lld %s of a row per block in registers (a compile-time "
                 "bound), but cols=%lld over SPLIT=%lld needs %lld: raise NVEC, BLOCK or SPLIT",
                 (long long)(16 / kb_dtype_size(c->dtype)), (long long)reg_capacity(c), kb_dtype_name(c->dtype),
                 (long long)c->dims[D_COLS], (long long)c->params[P_SPLIT], (long long)reg_part_len(c));
        return 0;
    }
    return 1;
}

static kb_work softmax_work(const kb_case *c)
{
    double elems = (double)c->dims[D_ROWS] * (double)c->dims[D_COLS];
    double esz = (double)kb_dtype_size(c->dtype);
    kb_work w = { 0 };
    w.flops = elems * SOFTMAX_FLOPS_PER_ELEM;
    w.bytes_read = elems * esz;
    w.bytes_written = elems * esz;
    /* load/store traffic the kernel issues (caches may serve the re-reads of a row):
     * naive reads the row three times, online twice, reg once (twice with SPLIT > 1) */
    double reads = c->variant == V_NAIVE ? 3.0 : c->variant == V_ONLINE || split_of(c) > 1 ? 2.0 : 1.0;
    w.bytes_moved = reads > 1.0 ? reads * w.bytes_read + w.bytes_written : 0.0;
    return w;
}

/* The tolerance, and why it is not kb_tolerance(dtype, cols) as is. That policy's atol
 * (2u*sqrt(K), floor 1e-5 for fp32) assumes O(1) outputs; a softmax row sums to 1, so
 * at cols = 131072 the outputs are ~1e-5 and such an atol alone would accept a kernel
 * that writes zeros. Here the error is relative: every term of the sum is positive (no
 * cancellation) and the sum is in fp32 for every dtype, so
 *   rtol = 4u(dtype)                      the output's rounding to the storage type
 *                                         (kb_tolerance's rtol for an elementwise op)
 *        + max(1e-4, 2 u_fp32 sqrt(cols)) the fp32 sum over cols, by the policy's own
 *                                         sqrt(K) rule; 1e-4 is docs/references.md's softmax
 *                                         tolerance and absorbs expf vs exp;
 *   atol = one subnormal step of the output type (fp16 2^-24, bf16 2^-133, fp32
 *          2^-149): outputs that underflow into the subnormal range are rounded in
 *          absolute, not relative, terms. */
static void softmax_tolerance(kb_dtype dt, int64_t cols, double *atol, double *rtol)
{
    double elem_atol, elem_rtol;
    kb_tolerance(dt, 1, &elem_atol, &elem_rtol);
    double sum_rel = 2.0 * kb_dtype_unit_roundoff(KB_DT_FP32) * sqrt((double)cols);
    *rtol = elem_rtol + (sum_rel > 1e-4 ? sum_rel : 1e-4);
    *atol = dt == KB_DT_FP16 ? ldexp(1.0, -24) : dt == KB_DT_BF16 ? ldexp(1.0, -133) : ldexp(1.0, -149);
}

typedef struct {
    kb_dptr d_x, d_y;   /* [rows x ld]; d_y is pad elements into its allocation */
    kb_dptr d_part;     /* reg with SPLIT > 1: [rows x SPLIT x 2] fp32 (max, sum) per part; else 0 */
    int64_t ld;         /* [elements] row stride */
    float *want;        /* [rows x ld] reference; Y_SENTINEL in the padding */
    float *row;         /* [ld] scratch for one row in float */
    float *got;         /* [rows x ld] the output in float, made only for --dump (kb_run_expose) */
    void *h_io;         /* [rows x ld] storage-typed host buffer: x on the way up, y on the way down */
    float *x;           /* [rows x ld] x as the kernel reads it (X_PAD_VALUE in the padding), for --dump */
} softmax_state;

static void softmax_free_state(softmax_state *s)
{
    if (!s)
        return;
    free(s->h_io);
    free(s->got);
    free(s->row);
    free(s->want);
    free(s->x);
    free(s);
}

/* Reference of one row in double from the dequantised inputs. */
static void softmax_ref_row(const float *x, float *y, int64_t cols)
{
    double m = -INFINITY, sum = 0.0;
    for (int64_t j = 0; j < cols; j++)
        m = x[j] > m ? x[j] : m;
    for (int64_t j = 0; j < cols; j++)
        sum += exp((double)x[j] - m);
    for (int64_t j = 0; j < cols; j++)
        y[j] = (float)(exp((double)x[j] - m) / sum);
}

static kb_status softmax_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    int64_t rows = c->dims[D_ROWS], cols = c->dims[D_COLS], ld = cols + c->pad;
    size_t esz = kb_dtype_size(c->dtype), bytes = (size_t)(rows * ld) * esz;
    kb_status st = KB_ERR_OOM;
    softmax_state *s = calloc(1, sizeof *s);
    if (!s)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the softmax state");
    s->ld = ld;
    s->want = malloc((size_t)(rows * ld) * sizeof(float));
    s->row = malloc((size_t)ld * sizeof(float));
    s->h_io = malloc(bytes);
    s->x = malloc((size_t)(rows * ld) * sizeof(float));
    if (!s->want || !s->row || !s->h_io || !s->x) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation of %lld x %lld elements", (long long)rows, (long long)ld);
        goto fail;
    }
    kb_dptr y;
    if ((st = kb_run_alloc(r, bytes, &s->d_x)) != KB_OK ||
        (st = kb_run_alloc(r, bytes + (size_t)c->pad * esz, &y)) != KB_OK)
        goto fail;
    s->d_y = y + (size_t)c->pad * esz;
    if (split_of(c) > 1 &&
        (st = kb_run_alloc(r, (size_t)(rows * split_of(c)) * 2 * sizeof(float), &s->d_part)) != KB_OK)
        goto fail;

    /* x: uniform in [-8, 8), so a row's outputs span e^16 and the max matters; every
     * second row shifted by +-100, where exp overflows or underflows fp32 unless the max
     * is subtracted first. Quantised row by row, the reference computed from exactly
     * what the kernel reads. */
    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    char *h = s->h_io;
    for (int64_t i = 0; i < rows; i++) {
        float shift = i % 4 == 1 ? -100.0f : i % 4 == 3 ? 100.0f : 0.0f;
        for (int64_t j = 0; j < ld; j++)
            s->row[j] = j < cols ? shift + kb_rng_uniform(&rng, -8.0f, 8.0f) : X_PAD_VALUE;
        kb_host_from_f32(c->dtype, s->row, h + (size_t)(i * ld) * esz, ld);
        kb_host_to_f32(c->dtype, h + (size_t)(i * ld) * esz, s->row, ld);
        memcpy(s->x + i * ld, s->row, (size_t)ld * sizeof(float));
        softmax_ref_row(s->row, s->want + i * ld, cols);
        for (int64_t j = cols; j < ld; j++)
            s->want[i * ld + j] = Y_SENTINEL;
    }
    if ((st = kb_run_upload(r, s->d_x, s->h_io, bytes)) != KB_OK)
        goto fail;
    int64_t xshape[2] = { rows, ld };
    kb_run_expose(r, "x", s->x, xshape, 2);

    /* y: the sentinel everywhere, so unwritten elements and writes into the padding fail */
    for (int64_t j = 0; j < ld; j++)
        s->row[j] = Y_SENTINEL;
    for (int64_t i = 0; i < rows; i++)
        kb_host_from_f32(c->dtype, s->row, h + (size_t)(i * ld) * esz, ld);
    if ((st = kb_run_upload(r, s->d_y, s->h_io, bytes)) != KB_OK)
        goto fail;
    *state = s;
    return KB_OK;
fail:
    softmax_free_state(s);
    return st;
}

static kb_status softmax_enqueue(kb_run *r, void *state)
{
    const kb_case *c = r->c;
    softmax_state *s = state;
    int64_t rows = c->dims[D_ROWS];
    kb_geom g = { { (unsigned)grid_blocks(c), 1, 1 }, { (unsigned)c->params[P_BLOCK], 1, 1 }, 0, { 1, 1, 1 } };
    if (c->variant == V_REG) {
        kb_status st;
        kb_arg a1[] = { kb_arg_ptr(s->d_x), kb_arg_ptr(s->d_part), kb_arg_i64(rows), kb_arg_i64(c->dims[D_COLS]),
                        kb_arg_i64(s->ld) };
        if (split_of(c) > 1 && (st = kb_run_launch(r, "softmax_reg_stats", &g, a1, 5)) != KB_OK)
            return st;
        kb_arg a2[] = { kb_arg_ptr(s->d_x), kb_arg_ptr(s->d_y), kb_arg_ptr(s->d_part), kb_arg_i64(rows),
                        kb_arg_i64(c->dims[D_COLS]), kb_arg_i64(s->ld) };
        return kb_run_launch(r, "softmax_reg", &g, a2, 6);
    }
    kb_arg args[] = { kb_arg_ptr(s->d_x), kb_arg_ptr(s->d_y), kb_arg_i64(rows), kb_arg_i64(c->dims[D_COLS]),
                      kb_arg_i64(s->ld) };
    return kb_run_launch(r, r->f->variants[c->variant].entry, &g, args, 5);
}

static kb_status softmax_check(kb_run *r, void *state, kb_verify *v)
{
    const kb_case *c = r->c;
    softmax_state *s = state;
    int64_t rows = c->dims[D_ROWS], ld = s->ld;
    size_t esz = kb_dtype_size(c->dtype);
    kb_status st = kb_run_download(r, s->h_io, s->d_y, (size_t)(rows * ld) * esz);
    if (st != KB_OK)
        return st;
    double atol, rtol;
    softmax_tolerance(c->dtype, c->dims[D_COLS], &atol, &rtol);
    kb_verify_init(v, atol, rtol);
    /* whole rows including the padding (want = the sentinel there), one row at a time */
    for (int64_t i = 0; i < rows; i++) {
        kb_host_to_f32(c->dtype, (char *)s->h_io + (size_t)(i * ld) * esz, s->row, ld);
        kb_verify_f32(v, s->row, s->want + i * ld, ld);
    }
    /* for --dump: the whole output beside the reference, padding included */
    int64_t shape[2] = { rows, ld };
    if (!s->got && (s->got = malloc((size_t)(rows * ld) * sizeof(float))) != NULL)
        kb_host_to_f32(c->dtype, s->h_io, s->got, rows * ld);
    if (s->got)
        kb_run_expose(r, "out", s->got, shape, 2);
    kb_run_expose(r, "ref", s->want, shape, 2);
    return KB_OK;
}

static void softmax_teardown(kb_run *r, void *state)
{
    softmax_free_state(state);
}

/* estimate: a row per block (or per warp, scope=warp; a SPLIT-th of one, reg); naive
 * scalar, online VEC-wide, reg 16 bytes wide with all NVEC loads of a thread in flight */
static int softmax_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t)
{
    int64_t esz = (int64_t)kb_dtype_size(c->dtype);
    double access = (double)(c->variant == V_ONLINE ? c->params[P_VEC] * esz : c->variant == V_REG ? 16 : esz);
    kb_stream_shape s = { grid_blocks(c), (int)c->params[P_BLOCK], 0, access,
                          c->variant == V_REG ? (double)c->params[P_NVEC] : KB_STREAM_UNROLL };
    (void)g;
    kb_stream_traffic(kb_families[c->family], c, &s, t);
    t->launches = split_of(c) > 1 ? 2 : 1;
    /* SFU: expf is ex2.approx after one FMUL; an exp per element in the statistics pass and
     * again in the writing pass, but reg's once (the row stays in registers) */
    t->sfu_ops = (double)c->dims[0] * (double)c->dims[1] * (c->variant == V_REG ? 1.0 : 2.0);
    return 1;
}

const kb_family kb_family_softmax = {
    .name = "softmax",
    .source = "softmax.cu",
    .about = "row softmax: naive three-pass vs online single-pass statistics vs row in registers (split rows), fp32 math",
    .variants = variants, .n_variants = KB_COUNT(variants),
    .dims = dims, .n_dims = KB_COUNT(dims),
    .params = params, .n_params = KB_COUNT(params),
    .valid = softmax_valid,
    .defines = NULL,
    .work = softmax_work,
    .setup = softmax_setup,
    .enqueue = softmax_enqueue,
    .check = softmax_check,
    .teardown = softmax_teardown,
    .traffic = softmax_traffic,
};
