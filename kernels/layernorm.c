/* layernorm.c - host side of the layernorm family (LayerNorm and RMSNorm forward):
 * descriptor, legality, work model, inputs, CPU reference and verification. Device
 * code: layernorm.cu.
 *
 * x and y are [rows x ld], ld = cols + pad: the pad axis is row-stride padding. gamma
 * and beta are [cols] in the data dtype (rmsnorm has no beta); the kernel also writes
 * fp32 mean[rows] (layernorm) and rstd[rows] (both kinds). The padding of x holds NaN
 * and the whole of y starts as a sentinel, so a kernel that reads or writes outside its
 * row fails verification; mean and rstd start as NaN, so a row whose statistics were
 * not written fails too. */
#include "engine/exec.h"
#include "engine/valid.h"
#include "engine/verify.h"
#include "kernels/families.h"
#include "stream_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V_BLOCK, V_WARP, V_VEC, V_REG };
enum { P_KIND, P_BLOCK, P_VEC, P_NVEC, P_SPLIT };
enum { KIND_LAYERNORM, KIND_RMSNORM };
enum { D_ROWS, D_COLS };

#define LN_EPS 1e-5f

/* Nominal arithmetic per element, counted once for the operation whatever the variant
 * (Welford's divisions or a re-read of the row are implementation cost, not work):
 *   layernorm: sum 1, centred square and add 3 (sub, mul, add), normalise and affine 4
 *              (sub, mul by rstd, mul by gamma, add beta) = 8;
 *   rmsnorm:   square and add 2, mul by rstd and by gamma 2 = 4.
 * The per-row division and rsqrt are negligible next to cols elements. */
#define LAYERNORM_FLOPS_PER_ELEM 8.0
#define RMSNORM_FLOPS_PER_ELEM 4.0

/* y before the kernel: exact in fp16 and bf16, and far from any output, since
 * |y| <= |x - mean| * rstd * 1.5 + 1 and the normalised |x - mean| * rstd stays below
 * ~2 for these uniform inputs (below sqrt(cols) for any input). */
#define Y_SENTINEL 1000.0f

#define LN_DTYPES (KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16))

static const kb_variant variants[] = {
    [V_BLOCK] = { "block", "layernorm_block", LN_DTYPES,
                  "one row per block, two-pass statistics through block reductions; x read 3 times" },
    [V_WARP] = { "warp", "layernorm_warp", LN_DTYPES,
                 "one row per warp, single-pass Welford merged with shuffles; x read twice" },
    [V_VEC] = { "vec", "layernorm_vec", LN_DTYPES,
                "one row per warp, VEC-wide accesses, row cached in shared memory; x read once" },
    [V_REG] = { "reg", "layernorm_reg", LN_DTYPES,
                "a row (SPLIT > 1: a SPLIT-th of it) per block in registers: NVEC 16-byte loads per thread issued "
                "before use, one-pass statistics, 16-byte stores; SPLIT > 1 adds a statistics kernel" },
};

static const char *const kinds[] = { [KIND_LAYERNORM] = "layernorm", [KIND_RMSNORM] = "rmsnorm", NULL };
static const char *const dims[] = { [D_ROWS] = "rows", [D_COLS] = "cols" };

static const kb_param params[] = {
    [P_KIND] = { "kind", KIND_LAYERNORM, kinds, 0,
                 "layernorm: (x - mean) * rstd * gamma + beta; rmsnorm: x * rstd * gamma, rstd from mean(x^2)",
                 .problem = 1 },
    [P_BLOCK] = { "BLOCK", 256, NULL, 0,
                  "threads per block (multiple of 32, <= 1024); warp and vec own BLOCK/32 rows per block" },
    [P_VEC] = { "VEC", 4, NULL, 1u << V_VEC, "elements per vector access (1, 2, 4, 8; at most 16 bytes)" },
    [P_NVEC] = { "NVEC", 4, NULL, 1u << V_REG,
                 "16-byte vectors of the row each thread holds in registers: a block holds at most "
                 "BLOCK x NVEC x 16/esz elements", 1, 16 },
    [P_SPLIT] = { "SPLIT", 1, NULL, 1u << V_REG,
                  "blocks per row; > 1 writes partial statistics to a workspace and normalises in a second "
                  "kernel, so a few rows (decode) still fill the GPU", 1, 64 },
};

static int64_t rows_per_block(const kb_case *c)
{
    return c->variant == V_BLOCK || c->variant == V_REG ? 1 : c->params[P_BLOCK] / 32;
}

/* Blocks per row: SPLIT for reg, 1 otherwise. */
static int64_t split_of(const kb_case *c)
{
    return c->variant == V_REG ? c->params[P_SPLIT] : 1;
}

/* The grid: ceil(rows / rows per block) blocks, times SPLIT for reg. */
static int64_t grid_blocks(const kb_case *c)
{
    int64_t rpb = rows_per_block(c);
    return (c->dims[D_ROWS] + rpb - 1) / rpb * split_of(c);
}

/* reg: elements of one 16-byte vector, and the columns of one part of a row: ceil(cols /
 * SPLIT) rounded up to whole vectors, as reg_span_of in layernorm.cu. */
static int64_t reg_vec(kb_dtype dt)
{
    return 16 / (int64_t)kb_dtype_size(dt);
}

static int64_t reg_part_len(const kb_case *c)
{
    int64_t split = c->params[P_SPLIT], rv = reg_vec(c->dtype);
    return ((c->dims[D_COLS] + split - 1) / split + rv - 1) / rv * rv;
}

/* Elements of one warp's row cache in layernorm_vec: VEC_SLICE(cols) in layernorm.cu. */
static int64_t vec_slice(int64_t cols, int64_t vec)
{
    return (cols + 2 * vec - 2) / vec * vec;
}

/* Dynamic shared memory of one launch [bytes]: only layernorm_vec has any. */
static size_t shmem_bytes(const kb_case *c)
{
    if (c->variant != V_VEC)
        return 0;
    return (size_t)(rows_per_block(c) * vec_slice(c->dims[D_COLS], c->params[P_VEC])) * kb_dtype_size(c->dtype);
}

static int layernorm_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t block = c->params[P_BLOCK], vec = c->params[P_VEC];
    int64_t rows = c->dims[D_ROWS], cols = c->dims[D_COLS];
    if (!kb_valid_block(block, why, n))
        return 0;
    if (c->variant == V_VEC && !kb_valid_vec(vec, c->dtype, why, n))
        return 0;
    if (rows < 1 || cols < 1) {
        snprintf(why, n, "rows=%lld, cols=%lld: need at least one row of one element", (long long)rows,
                 (long long)cols);
        return 0;
    }
    /* column indices are int in the kernels, stepped by up to 32 * VEC or BLOCK */
    if (cols > (1LL << 30)) {
        snprintf(why, n, "cols=%lld exceeds 2^30: column indices are 32-bit in the kernels", (long long)cols);
        return 0;
    }
    int64_t rpb = rows_per_block(c);
    if (grid_blocks(c) > 2147483647LL) {
        snprintf(why, n, "rows=%lld needs more than 2^31-1 blocks of %lld row(s) (SPLIT %lld per row)",
                 (long long)rows, (long long)rpb, (long long)split_of(c));
        return 0;
    }
    if (c->variant == V_REG && reg_part_len(c) > block * c->params[P_NVEC] * reg_vec(c->dtype)) {
        snprintf(why, n,
                 "reg holds at most BLOCK x NVEC x %lld = %lld %s of a row per block in registers (a compile-time "
                 "bound), but cols=%lld over SPLIT=%lld needs %lld: raise NVEC, BLOCK or SPLIT",
                 (long long)reg_vec(c->dtype), (long long)(block * c->params[P_NVEC] * reg_vec(c->dtype)),
                 kb_dtype_name(c->dtype), (long long)cols, (long long)c->params[P_SPLIT], (long long)reg_part_len(c));
        return 0;
    }
    size_t shmem = shmem_bytes(c);
    if (shmem > (size_t)t->max_shmem_per_block) {
        snprintf(why, n,
                 "vec caches %lld rows of %lld %s (BLOCK/32 warps, one row each) in %zu bytes of shared memory; "
                 "%s allows %d per block: lower BLOCK",
                 (long long)rpb, (long long)cols, kb_dtype_name(c->dtype), shmem, kb_arch_name(t->sm),
                 t->max_shmem_per_block);
        return 0;
    }
    return 1;
}

/* Compulsory traffic: x read and y written once, gamma (and beta) read once, and the
 * fp32 statistics written (mean and rstd for layernorm, rstd for rmsnorm) - they are
 * outputs of the forward pass, kept for the backward pass. bytes_moved is the load and
 * store traffic each variant issues (caches may serve a row's re-reads): block reads x
 * three times (twice for rmsnorm), warp twice, vec once, reg once (twice with SPLIT > 1). */
static kb_work layernorm_work(const kb_case *c)
{
    double rows = (double)c->dims[D_ROWS], cols = (double)c->dims[D_COLS];
    double esz = (double)kb_dtype_size(c->dtype), elems = rows * cols;
    int rms = c->params[P_KIND] == KIND_RMSNORM;
    kb_work w = { 0 };
    w.flops = elems * (rms ? RMSNORM_FLOPS_PER_ELEM : LAYERNORM_FLOPS_PER_ELEM);
    w.bytes_read = elems * esz + (rms ? 1.0 : 2.0) * cols * esz;
    w.bytes_written = elems * esz + (rms ? 1.0 : 2.0) * rows * sizeof(float);
    double x_reads = c->variant == V_BLOCK ? (rms ? 2.0 : 3.0) : c->variant == V_WARP ? 2.0 : 1.0;
    if (c->variant == V_REG && c->params[P_SPLIT] > 1)
        x_reads = 2.0;   /* the statistics kernel, then the normalising one */
    if (x_reads > 1.0)
        w.bytes_moved = w.bytes_read + (x_reads - 1.0) * elems * esz + w.bytes_written;
    return w;
}

/* Tolerances (each row's statistics' share scaled by its condition number: verify_rows).
 * The inputs are dequantised exactly and the statistics are fp32 whatever
 * the data dtype, so the dtype enters y once, in its final rounding. mean and rstd: fp32
 * results, so the fp32 policy over cols, with rtol widened by 2 ulp for rsqrtf's error on
 * the GPU (CUDA C Programming Guide, single-precision intrinsics: rsqrtf max 2 ulp).
 * y: its rounding to the dtype, kb_tolerance(dtype, 1), plus the statistics' error (as
 * attention adds its fp32 sums to O's rounding). Not kb_tolerance(dtype, cols): that
 * models a sum kept in the dtype, and at cols = 4096 would let bf16 outputs of order 1
 * be off by 0.5 (fp16 by 0.06) - a kernel several percent wrong would pass. */
static void stats_tolerance(int64_t cols, double *atol, double *rtol)
{
    kb_tolerance(KB_DT_FP32, cols, atol, rtol);
    *rtol += 2.0 * kb_dtype_unit_roundoff(KB_DT_FP32) * 2.0;  /* 2 ulp = 4u at most */
}

typedef struct {
    kb_dptr d_x, d_y;       /* [rows x ld] */
    kb_dptr d_gamma, d_beta; /* [cols]; d_beta 0 for rmsnorm */
    kb_dptr d_mean, d_rstd; /* [rows] fp32; d_mean 0 for rmsnorm */
    kb_dptr d_part;         /* reg with SPLIT > 1: [rows x SPLIT x 3] fp32 partial statistics; else 0 */
    int64_t ld;             /* [elements] row stride */
    float *x;               /* [rows x ld] the inputs as the kernel reads them; NaN in the padding */
    float *want;            /* [rows x ld] reference y; Y_SENTINEL in the padding */
    float *got;             /* [rows x ld] downloaded y */
    float *want_stats;      /* [2 x rows] reference mean (layernorm only), then rstd */
    float *got_stats;       /* [2 x rows] downloaded statistics */
    float *gb;              /* [2 x cols] dequantised gamma, then beta */
    void *h_io;             /* [rows x ld] storage-typed host buffer: x on the way up, y on the way down */
} layernorm_state;

static void layernorm_free_state(layernorm_state *s)
{
    if (!s)
        return;
    free(s->h_io);
    free(s->gb);
    free(s->got_stats);
    free(s->want_stats);
    free(s->got);
    free(s->want);
    free(s->x);
    free(s);
}

/* Reference of one row in double from the dequantised inputs: two-pass mean and
 * centred variance (layernorm) or mean of squares (rmsnorm). */
static void layernorm_ref_row(const float *x, const float *gamma, const float *beta, int64_t cols, int rms,
                              float *y, float *mean_out, float *rstd_out)
{
    double mean = 0.0, var = 0.0;
    if (rms) {
        for (int64_t j = 0; j < cols; j++)
            var += (double)x[j] * x[j];
        var /= (double)cols;
    } else {
        for (int64_t j = 0; j < cols; j++)
            mean += x[j];
        mean /= (double)cols;
        for (int64_t j = 0; j < cols; j++)
            var += (x[j] - mean) * (x[j] - mean);
        var /= (double)cols;
    }
    double rstd = 1.0 / sqrt(var + (double)LN_EPS);
    for (int64_t j = 0; j < cols; j++)
        y[j] = (float)(rms ? x[j] * rstd * gamma[j] : (x[j] - mean) * rstd * gamma[j] + beta[j]);
    *mean_out = (float)mean;
    *rstd_out = (float)rstd;
}

/* Quantise n floats into storage h and read them back as the kernel will see them. */
static void quantise(kb_dtype dt, float *v, void *h, int64_t n)
{
    kb_host_from_f32(dt, v, h, n);
    kb_host_to_f32(dt, h, v, n);
}

/* x: a per-row offset in [-1, 1) plus uniform [-1, 1), so the mean is not ~0 and a
 * variance taken as E[x^2] - E[x]^2 would show its cancellation; every fourth row (from
 * the second) adversarial, its offset +-[50, 100) so |mean|/std is ~90 to 170, where that
 * cancellation loses most of fp32's digits; NaN in the padding. Quantised row by row into
 * s->h_io; the reference (y, mean, rstd) is computed from exactly what the kernel reads. */
static void make_rows(const kb_case *c, layernorm_state *s, kb_rng *rng)
{
    int64_t rows = c->dims[D_ROWS], cols = c->dims[D_COLS], ld = s->ld;
    size_t esz = kb_dtype_size(c->dtype);
    int rms = c->params[P_KIND] == KIND_RMSNORM;
    const float *gamma = s->gb, *beta = s->gb + cols;
    char *h = s->h_io;
    float *want_mean = s->want_stats, *want_rstd = s->want_stats + rows;
    for (int64_t i = 0; i < rows; i++) {
        float offset = kb_rng_uniform(rng, -1.0f, 1.0f), *xr = s->x + i * ld;
        if (i % 4 == 1)
            offset = (offset < 0 ? -50.0f : 50.0f) + 50.0f * offset;
        for (int64_t j = 0; j < ld; j++)
            xr[j] = j < cols ? offset + kb_rng_uniform(rng, -1.0f, 1.0f) : NAN;
        quantise(c->dtype, xr, h + (size_t)(i * ld) * esz, ld);
        layernorm_ref_row(xr, gamma, beta, cols, rms, s->want + i * ld, &want_mean[i], &want_rstd[i]);
        for (int64_t j = cols; j < ld; j++)
            s->want[i * ld + j] = Y_SENTINEL;
    }
}

static kb_status layernorm_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    kb_run_constant(r, "eps", LN_EPS);   /* recorded and dumped: y depends on it */
    int64_t rows = c->dims[D_ROWS], cols = c->dims[D_COLS], ld = cols + c->pad;
    int rms = c->params[P_KIND] == KIND_RMSNORM;
    size_t esz = kb_dtype_size(c->dtype), bytes = (size_t)(rows * ld) * esz;
    size_t pbytes = (size_t)cols * esz, sbytes = (size_t)rows * sizeof(float);
    kb_status st = KB_ERR_OOM;
    layernorm_state *s = calloc(1, sizeof *s);
    if (!s)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the layernorm state");
    s->ld = ld;
    s->x = malloc((size_t)(rows * ld) * sizeof(float));
    s->want = malloc((size_t)(rows * ld) * sizeof(float));
    s->got = malloc((size_t)(rows * ld) * sizeof(float));
    s->want_stats = malloc(2 * sbytes);
    s->got_stats = malloc(2 * sbytes);
    s->gb = malloc(2 * (size_t)cols * sizeof(float));
    s->h_io = malloc(bytes > 2 * pbytes ? bytes : 2 * pbytes);
    if (!s->x || !s->want || !s->got || !s->want_stats || !s->got_stats || !s->gb || !s->h_io) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation of %lld x %lld elements", (long long)rows, (long long)ld);
        goto fail;
    }
    if ((st = kb_run_alloc(r, bytes, &s->d_x)) != KB_OK || (st = kb_run_alloc(r, bytes, &s->d_y)) != KB_OK ||
        (st = kb_run_alloc(r, pbytes, &s->d_gamma)) != KB_OK || (st = kb_run_alloc(r, sbytes, &s->d_rstd)) != KB_OK)
        goto fail;
    if (!rms && ((st = kb_run_alloc(r, pbytes, &s->d_beta)) != KB_OK ||
                 (st = kb_run_alloc(r, sbytes, &s->d_mean)) != KB_OK))
        goto fail;
    if (split_of(c) > 1 && (st = kb_run_alloc(r, 3 * (size_t)split_of(c) * sbytes, &s->d_part)) != KB_OK)
        goto fail;

    /* gamma in [-1.5, 1.5), beta in [-1, 1), quantised to the dtype */
    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    float *gamma = s->gb, *beta = s->gb + cols;
    for (int64_t j = 0; j < cols; j++) {
        gamma[j] = kb_rng_uniform(&rng, -1.5f, 1.5f);
        beta[j] = rms ? 0.0f : kb_rng_uniform(&rng, -1.0f, 1.0f);
    }
    quantise(c->dtype, s->gb, s->h_io, 2 * cols);
    if ((st = kb_run_upload(r, s->d_gamma, s->h_io, pbytes)) != KB_OK ||
        (!rms && (st = kb_run_upload(r, s->d_beta, (char *)s->h_io + pbytes, pbytes)) != KB_OK))
        goto fail;

    make_rows(c, s, &rng);
    if ((st = kb_run_upload(r, s->d_x, s->h_io, bytes)) != KB_OK)
        goto fail;

    /* y: the sentinel everywhere, so unwritten elements and writes into the padding
     * fail; mean and rstd: NaN (all-ones bytes), so unwritten statistics fail */
    for (int64_t k = 0; k < rows * ld; k++)
        s->got[k] = Y_SENTINEL;
    kb_host_from_f32(c->dtype, s->got, s->h_io, rows * ld);
    if ((st = kb_run_upload(r, s->d_y, s->h_io, bytes)) != KB_OK)
        goto fail;
    memset(s->got_stats, 0xff, 2 * sbytes);
    if ((st = kb_run_upload(r, s->d_rstd, s->got_stats, sbytes)) != KB_OK ||
        (!rms && (st = kb_run_upload(r, s->d_mean, s->got_stats, sbytes)) != KB_OK))
        goto fail;
    *state = s;
    return KB_OK;
fail:
    layernorm_free_state(s);
    return st;
}

/* reg: the statistics kernel (SPLIT > 1), then layernorm_reg with the workspace. */
static kb_status enqueue_reg(kb_run *r, layernorm_state *s, const kb_geom *g)
{
    const kb_case *c = r->c;
    kb_status st;
    int32_t cols = (int32_t)c->dims[D_COLS];
    if (split_of(c) > 1) {
        kb_arg a1[] = { kb_arg_ptr(s->d_x), kb_arg_ptr(s->d_part), kb_arg_i64(c->dims[D_ROWS]), kb_arg_i32(cols),
                        kb_arg_i64(s->ld) };
        if ((st = kb_run_launch(r, "layernorm_reg_stats", g, a1, 5)) != KB_OK)
            return st;
    }
    kb_arg args[] = { kb_arg_ptr(s->d_x), kb_arg_ptr(s->d_gamma), kb_arg_ptr(s->d_beta), kb_arg_ptr(s->d_y),
                      kb_arg_ptr(s->d_mean), kb_arg_ptr(s->d_rstd), kb_arg_ptr(s->d_part),
                      kb_arg_i64(c->dims[D_ROWS]), kb_arg_i32(cols), kb_arg_i64(s->ld), kb_arg_f32(LN_EPS) };
    return kb_run_launch(r, "layernorm_reg", g, args, 11);
}

static kb_status layernorm_enqueue(kb_run *r, void *state)
{
    const kb_case *c = r->c;
    layernorm_state *s = state;
    int64_t rows = c->dims[D_ROWS];
    kb_geom g = { { (unsigned)grid_blocks(c), 1, 1 }, { (unsigned)c->params[P_BLOCK], 1, 1 },
        shmem_bytes(c), { 1, 1, 1 } };
    if (c->variant == V_REG)
        return enqueue_reg(r, s, &g);
    kb_arg args[] = { kb_arg_ptr(s->d_x), kb_arg_ptr(s->d_gamma), kb_arg_ptr(s->d_beta),
                      kb_arg_ptr(s->d_y), kb_arg_ptr(s->d_mean), kb_arg_ptr(s->d_rstd),
                      kb_arg_i64(rows), kb_arg_i32((int32_t)c->dims[D_COLS]), kb_arg_i64(s->ld),
                      kb_arg_f32(LN_EPS) };
    return kb_run_launch(r, r->f->variants[c->variant].entry, &g, args, 10);
}

/* Fold the comparison w (made after v's elements) into v: counts add up, first_bad
 * continues v's numbering, the maxima take the larger. v keeps its own tolerance; the
 * err/tol ratio stays comparable across both since each is relative to its own. */
static void verify_append(kb_verify *v, const kb_verify *w)
{
    if (v->n_bad == 0 && w->n_bad > 0) {
        v->first_bad = v->n + w->first_bad;
        v->got_at_bad = w->got_at_bad;
        v->want_at_bad = w->want_at_bad;
    }
    v->n += w->n;
    v->n_bad += w->n_bad;
    if (w->max_abs_err > v->max_abs_err)
        v->max_abs_err = w->max_abs_err;
    if (w->max_rel_err > v->max_rel_err)
        v->max_rel_err = w->max_rel_err;
    if (w->max_err_ratio > v->max_err_ratio)
        v->max_err_ratio = w->max_err_ratio;
}

/* The statistics' condition number of row i: centering x by a mean computed in fp32
 * errs by about u * |mean|, which y sees multiplied by rstd, so the statistics' error -
 * in mean, rstd and y - grows with |mean| * rstd (1 at least; rmsnorm does not center). */
static double row_kappa(const kb_case *c, const layernorm_state *s, int64_t i)
{
    int64_t rows = c->dims[D_ROWS];
    if (c->params[P_KIND] == KIND_RMSNORM)
        return 1.0;
    double k = fabs((double)s->want_stats[i]) * (double)s->want_stats[rows + i];
    return k > 1.0 ? k : 1.0;
}

/* Compare one array under the tolerance (atol, rtol) into v, or start v with it. */
static void verify_part(kb_verify *v, int first, double atol, double rtol, const float *got, const float *want,
                        int64_t n)
{
    kb_verify w;
    kb_verify_init(&w, atol, rtol);
    kb_verify_f32(&w, got, want, n);
    if (first)
        *v = w;
    else
        verify_append(v, &w);
}

/* y row by row, then mean (layernorm), then rstd, each row's statistics' share of the
 * tolerance scaled by its row_kappa (the y tolerance of a row of order 1 is unchanged);
 * v reports the tolerance of a row with kappa 1. */
static void verify_rows(const kb_case *c, layernorm_state *s, kb_verify *v)
{
    int64_t rows = c->dims[D_ROWS], cols = c->dims[D_COLS], ld = s->ld;
    double ya, yr, sa, sr, gmax = 1.0;
    kb_tolerance(c->dtype, 1, &ya, &yr);
    stats_tolerance(cols, &sa, &sr);
    for (int64_t j = 0; j < cols; j++)
        gmax = fmax(gmax, fabs((double)s->gb[j]));
    for (int64_t i = 0; i < rows; i++) {
        double k = row_kappa(c, s, i);
        verify_part(v, i == 0, ya + sa * k * gmax, yr + sr, s->got + i * ld, s->want + i * ld, ld);
    }
    int rms = c->params[P_KIND] == KIND_RMSNORM;
    for (int64_t i = rms ? rows : 0; i < 2 * rows; i++) {
        double k = row_kappa(c, s, i % rows);
        verify_part(v, 0, sa * k, sr * k, s->got_stats + i, s->want_stats + i, 1);
    }
    v->atol = ya + sa * gmax;
    v->rtol = yr + sr;
}

/* Compared, in this order (first_bad indexes it): y as [rows x ld] including the
 * padding (want = the sentinel there), then mean[rows] (layernorm only), then rstd[rows].
 * v's atol/rtol are y's; the statistics use stats_tolerance(). Exposed for --dump: x,
 * gamma, beta (layernorm), out and ref [rows x ld], and the statistics, got and
 * reference: stats/stats_ref [2 x rows] (mean, rstd) or rstd/rstd_ref [rows]. */
static kb_status layernorm_check(kb_run *r, void *state, kb_verify *v)
{
    const kb_case *c = r->c;
    layernorm_state *s = state;
    int64_t rows = c->dims[D_ROWS], cols = c->dims[D_COLS], ld = s->ld;
    int rms = c->params[P_KIND] == KIND_RMSNORM;
    size_t esz = kb_dtype_size(c->dtype), sbytes = (size_t)rows * sizeof(float);
    kb_status st = kb_run_download(r, s->h_io, s->d_y, (size_t)(rows * ld) * esz);
    if (st != KB_OK)
        return st;
    if ((st = kb_run_download(r, s->got_stats + rows, s->d_rstd, sbytes)) != KB_OK ||
        (!rms && (st = kb_run_download(r, s->got_stats, s->d_mean, sbytes)) != KB_OK))
        return st;

    kb_host_to_f32(c->dtype, s->h_io, s->got, rows * ld);

    int64_t shape[2] = { rows, ld }, stats_shape[2] = { 2, rows };
    kb_run_expose(r, "x", s->x, shape, 2);
    kb_run_expose(r, "gamma", s->gb, &cols, 1);
    if (!rms)
        kb_run_expose(r, "beta", s->gb + cols, &cols, 1);
    kb_run_expose(r, "out", s->got, shape, 2);
    kb_run_expose(r, "ref", s->want, shape, 2);
    if (rms) {
        kb_run_expose(r, "rstd", s->got_stats + rows, &rows, 1);
        kb_run_expose(r, "rstd_ref", s->want_stats + rows, &rows, 1);
    } else {
        kb_run_expose(r, "stats", s->got_stats, stats_shape, 2);
        kb_run_expose(r, "stats_ref", s->want_stats, stats_shape, 2);
    }

    verify_rows(c, s, v);
    return KB_OK;
}

static void layernorm_teardown(kb_run *r, void *state)
{
    layernorm_free_state(state);
}

/* estimate: a row per block (block, reg: a SPLIT-th of one) or per warp; scalar accesses
 * but vec's VEC-wide ones and reg's 16-byte ones, of which reg keeps all NVEC in flight */
static int layernorm_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t)
{
    int64_t esz = (int64_t)kb_dtype_size(c->dtype);
    double access = (double)(c->variant == V_VEC ? c->params[P_VEC] * esz : c->variant == V_REG ? 16 : esz);
    kb_stream_shape s = { grid_blocks(c), (int)c->params[P_BLOCK], (int64_t)shmem_bytes(c), access,
                          c->variant == V_REG ? (double)c->params[P_NVEC] : KB_STREAM_UNROLL };
    (void)g;
    kb_stream_traffic(kb_families[c->family], c, &s, t);
    t->launches = split_of(c) > 1 ? 2 : 1;
    return 1;
}

const kb_family kb_family_layernorm = {
    .name = "layernorm",
    .source = "layernorm.cu",
    .about = "LayerNorm and RMSNorm forward over rows: block two-pass, warp Welford, vectorised row cache, row in registers (split rows)",
    .variants = variants, .n_variants = KB_COUNT(variants),
    .dims = dims, .n_dims = KB_COUNT(dims),
    .params = params, .n_params = KB_COUNT(params),
    .valid = layernorm_valid,
    .defines = NULL,
    .work = layernorm_work,
    .setup = layernorm_setup,
    .enqueue = layernorm_enqueue,
    .check = layernorm_check,
    .teardown = layernorm_teardown,
    .traffic = layernorm_traffic,
};
