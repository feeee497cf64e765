/* gemm.c - host side of the GEMM family: descriptor, legality, work model, inputs,
 * CPU reference and verification. Device code and the layout convention: gemm.cu.
 *
 * Leading dimensions carry the pad axis: lda = (A stored M x K ? K : M) + pad, likewise
 * ldb, and ldc = N + pad [elements]. The gap elements are filled with 0xFF bytes (NaN
 * for the float types) so a kernel that reads them shows it. Base addresses stay
 * 256-byte aligned; pad 1 makes every row after the first misaligned.
 */
#include "engine/exec.h"
#include "engine/valid.h"
#include "engine/verify.h"
#include "gemm_model.h"
#include "gemm_valid.h"
#include "gemm_wgmma.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define ALL_DTYPES ((1u << KB_DT_COUNT) - 1u)
#define SMEM_DTYPES (KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16))
#define MMA_DTYPES (KB_DT_BIT(KB_DT_TF32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16) | \
                    KB_DT_BIT(KB_DT_INT8) | KB_DT_BIT(KB_DT_FP8E4M3) | KB_DT_BIT(KB_DT_FP8E5M2))
#define WGMMA_DTYPES (KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16) | KB_DT_BIT(KB_DT_INT8) | \
                      KB_DT_BIT(KB_DT_FP8E4M3) | KB_DT_BIT(KB_DT_FP8E5M2))
#define TILED ((1u << V_SMEM) | (1u << V_MMA) | (1u << V_WGMMA))
#define PIPED ((1u << V_MMA) | (1u << V_WGMMA))
#define LT_DTYPES (KB_DT_BIT(KB_DT_FP32) | MMA_DTYPES)
#define LT_ONLY (1u << V_CUBLASLT)

/* Outputs are checked on at most this many multiply-adds of reference work; bigger
 * problems are checked on evenly spaced rows (all columns of each), and the verify
 * record's first_bad then indexes the compared rows, not D. */
#define REF_MAX_MACS (1LL << 28)

static const kb_variant variants[] = {
    [V_NAIVE] = { "naive", "gemm_naive", ALL_DTYPES, "one thread per output element, operands straight from global memory" },
    [V_SMEM] = { "smem", "gemm_smem", SMEM_DTYPES,
                 "shared-memory tiles BMxBNxBK, TMxTN register micro-tile per thread, vector loads where aligned" },
    [V_MMA] = { "mma", "gemm_mma", MMA_DTYPES,
                "tensor cores (mma.sync, ldmatrix), warp tiles WMxWN, STAGES-deep cp.async pipeline" },
    [V_CUBLASLT] = { "cublaslt", NULL, LT_DTYPES,
                     "the vendor baseline: cublasLtMatmul, the algorithm of rank `algo` (heuristic or enumerated)" },
    [V_WGMMA] = { "wgmma", "gemm_wgmma", WGMMA_DTYPES,
                  "sm_90a: TMA into a STAGES-deep ring of swizzled tiles, mbarriers, a producer and two consumer "
                  "warpgroups (setmaxnreg), wgmma.mma_async, persistent tiles, TMA-store epilogue" },
};

static const char *const layouts[] = { "nn", "nt", "tn", "tt", NULL };
static const char *const searches[] = { "heuristic", "enumerate", NULL };
static const char *const dims[] = { "m", "n", "k" };
static const char *const schedules[] = { "cooperative", "pingpong", NULL };
static const char *const accums[] = { "one", "two", NULL };

static const kb_param params[] = {
    [P_LAYOUT] = { "layout", L_NN, layouts, 0, "A and B stored as is (n) or transposed (t): nn = A @ B, nt = K contiguous in both",
                   .problem = 1 },
    [P_ALPHA] = { "alpha", 1, NULL, 0, "D = alpha*A*B + beta*C (integers keep int8 exact)", -1024, 1024,
                  .problem = 1 },
    [P_BETA] = { "beta", 0, NULL, 0, "0: C is not read; otherwise C is read and scaled", -1024, 1024,
                 .problem = 1 },
    [P_BM] = { "BM", 128, NULL, TILED, "block tile rows" },
    [P_BN] = { "BN", 128, NULL, TILED, "block tile columns" },
    [P_BK] = { "BK", 32, NULL, TILED, "block tile depth along K" },
    [P_TM] = { "TM", 8, NULL, 1u << V_SMEM, "micro-tile rows per thread" },
    [P_TN] = { "TN", 8, NULL, 1u << V_SMEM, "micro-tile columns per thread" },
    [P_WM] = { "WM", 64, NULL, 1u << V_MMA, "warp tile rows (multiple of 16)" },
    [P_WN] = { "WN", 64, NULL, 1u << V_MMA, "warp tile columns (multiple of 16)" },
    [P_STAGES] = { "STAGES", 3, NULL, PIPED, "shared-memory pipeline depth (cp.async or TMA stages, >= 2)" },
    [P_ALGO] = { "algo", 0, NULL, LT_ONLY, "rank in cuBLASLt's algorithm list (0 = the heuristic's first choice)",
                 0, 1023 },
    [P_WORKSPACE] = { "workspace", 32, NULL, LT_ONLY, "MiB of workspace the algorithm may use (0 hides split-K)",
                      0, 4096 },
    [P_SEARCH] = { "search", SEARCH_HEURISTIC, searches, LT_ONLY,
                   "heuristic: AlgoGetHeuristic's ranking; enumerate: AlgoGetIds/AlgoInit/AlgoCheck configurations" },
    [P_BUDGET] = { "budget", 64, NULL, LT_ONLY, "enumerate: stop after this many runnable configurations", 1, 4096 },
    /* from here on (n_id_params): in case ids only away from the default, so older ids stay */
    [P_GROUP] = { "GROUP", 1, NULL, PIPED,
                  "rasterization: GROUP row blocks swept together column by column, sharing B in L2 (1: row by row)",
                  1, 65535 },
    [P_SPLITK] = { "SPLITK", 1, NULL, 1u << V_MMA,
                   "split K over SPLITK slices (grid.z) into a 4-byte workspace, summed by a second kernel (1: no split)",
                   1, 4 },
    [P_SCHEDULE] = { "schedule", SCHED_COOPERATIVE, schedules, 1u << V_WGMMA,
                     "wgmma consumers: cooperative (both warpgroups on one tile, BM/2 rows each) or pingpong (each "
                     "warpgroup its own tiles, taking turns at the tensor cores: one's epilogue overlaps the other's "
                     "main loop)" },
    [P_ACCUM] = { "accum", ACCUM_ONE, accums, 1u << V_WGMMA,
                  "wgmma fp8: one (the tensor core accumulates all of K) or two (each k-tile's sum added into an "
                  "f32 accumulator, as DeepGEMM does for long K)" },
};
_Static_assert(KB_COUNT(params) == P_COUNT, "a row of params[] for every P_* of gemm_model.h");

/* ---- legality: gemm_valid.c ---- */
static int is_fp8(kb_dtype d) { return d == KB_DT_FP8E4M3 || d == KB_DT_FP8E5M2; }

static void gemm_defines(const kb_case *c, kb_sb *out)
{
    /* one kernel per module: only the case's variant is compiled (and static_asserted) */
    kb_sb_printf(out, "GEMM_VARIANT=%d\n", c->variant);
    if (c->variant == V_MMA) {   /* rows 16-byte aligned: cp.async; otherwise register staging */
        kb_gemm_geo g = kb_gemm_geo_of(c);
        kb_sb_printf(out, "GEMM_ASYNC_A=%d\nGEMM_ASYNC_B=%d\n", g.lda * (int64_t)g.esz % 16 == 0,
                     g.ldb * (int64_t)g.esz % 16 == 0);
    }
}

static kb_work gemm_work(const kb_case *c)
{
    kb_gemm_geo g = kb_gemm_geo_of(c);
    double m = (double)g.m, nn = (double)g.n, k = (double)g.k;
    int beta = c->params[P_BETA] != 0;
    kb_work w = { 0 };
    w.flops = 2.0 * m * nn * k + (beta ? 2.0 * m * nn : 0.0);
    w.bytes_read = (m * k + k * nn) * (double)g.esz + (beta ? m * nn * (double)g.osz : 0.0);
    w.bytes_written = m * nn * (double)g.osz;
    return w;
}


/* ---- execution: inputs, reference, launch, check ---- */
typedef struct {
    kb_gemm_geo g;
    float scale_a, scale_b;     /* fp8 per-tensor scales (powers of two), else 1 */
    kb_dptr d_a, d_b, d_c, d_d;
    kb_dptr d_w;                /* mma SPLITK > 1: [SPLITK][m][n] 4-byte partial sums */
    float *a, *b;               /* dequantised logical A [m][k] and B [k][n] */
    float *want;                /* [ref_rows][n] reference of the checked rows */
    int64_t *rows;              /* [ref_rows] which rows of D are checked */
    int64_t ref_rows;
    void *h_d;                  /* [m * ldc] download buffer of D */
    float *got;                 /* [ref_rows][n] the checked rows of D in float (kept for --dump) */
    float *c;                   /* [m][n] C as the kernel reads it (beta != 0), for --dump */
    float *rows_f;              /* [ref_rows] the checked rows' indices as float, for --dump */
    kb_vendor_plan *plan;       /* cublaslt: the planned cublasLtMatmul */
    kb_arg maps[4];             /* wgmma: the tensor maps of A, B, C, D */
    kb_geom wg_geom;            /* wgmma: the persistent launch, from the device's SM count at setup */
} gemm_state;


/* Per-tensor scale of an fp8 operand: the smallest power of two s with amax / s within
 * the format's largest finite value, as a delayed-scaling quantiser would pick it. A
 * power of two keeps the dequantised value q * s exact. */
static float fp8_scale(kb_dtype d, float amax)
{
    double fmax = d == KB_DT_FP8E4M3 ? 448.0 : 57344.0;
    return amax > 0 ? (float)ldexp(1.0, (int)ceil(log2(amax / fmax))) : 1.0f;
}

/* Inputs are drawn from a table of VALUES seeded values, each quantised once: converting
 * every element of a 4096^3 problem one by one would cost seconds per case, and 4096
 * distinct values still make any misplaced or dropped element show in the result. */
#define VALUES 4096

typedef struct {
    uint32_t bits[VALUES];   /* storage bits (low esz bytes) */
    float val[VALUES];       /* the value the kernel computes with (times the fp8 scale) */
} value_table;

/* Operands (output = 0): uniform in [-1, 1), int8 integers in [-128, 127], fp8 scaled per
 * tensor. C (output = 1): in the output type, unscaled; int8's C is int32 in [-1000, 1000].
 * Returns the scale. */
static float make_table(kb_rng *rng, kb_dtype dt, int output, value_table *t)
{
    float x[VALUES], amax = 0.0f, scale = 1.0f;
    int int32 = output && dt == KB_DT_INT8;
    if (output && dt == KB_DT_TF32)
        dt = KB_DT_FP32;   /* C and D are plain fp32 */
    if (output && is_fp8(dt))
        dt = KB_DT_BF16;   /* fp8 GEMMs read C and write D in bf16 */
    for (int i = 0; i < VALUES; i++) {
        uint32_t u = kb_rng_u32(rng);
        x[i] = int32 ? (float)((int)(u % 2001u) - 1000)
             : dt == KB_DT_INT8 ? (float)((int)(u % 256u) - 128) : kb_rng_uniform(rng, -1.0f, 1.0f);
        amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
    }
    if (is_fp8(dt) && !output)
        scale = fp8_scale(dt, amax);
    for (int i = 0; i < VALUES; i++) {
        t->bits[i] = 0;
        if (int32) {
            int32_t v = (int32_t)x[i];
            memcpy(&t->bits[i], &v, 4);
            t->val[i] = x[i];
            continue;
        }
        float q = x[i] / scale;
        kb_host_from_f32(dt, &q, &t->bits[i], 1);   /* little-endian: the low bytes */
        kb_host_to_f32(dt, &t->bits[i], &t->val[i], 1);
        t->val[i] *= scale;
    }
    return scale;
}

/* Fill a stored matrix (rows x cols logical, element (r, j) at r*ld + j, or j*ld + r when
 * trans) from the table; logical[r*cols + j] receives each value as the kernel sees it.
 * The gap elements of padded rows keep their 0xFF poison. */
static void fill_matrix(kb_rng *rng, const value_table *t, size_t esz, void *h, int64_t ld, int trans, int64_t rows,
                        int64_t cols, float *logical)
{
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++) {
            uint32_t v = kb_rng_u32(rng) % VALUES;
            memcpy((unsigned char *)h + (size_t)(trans ? j * ld + r : r * ld + j) * esz, &t->bits[v], esz);
            logical[r * cols + j] = t->val[v];
        }
}

/* C/D element (stored in the output type) to float. */
static float out_to_f32(kb_dtype dt, const void *p)
{
    float f;
    if (is_fp8(dt))
        dt = KB_DT_BF16;   /* fp8 GEMMs write bf16 */
    if (dt == KB_DT_INT8) {
        int32_t v;
        memcpy(&v, p, 4);
        return (float)v;
    }
    kb_host_to_f32(dt, p, &f, 1);
    return f;
}

static kb_status upload_new(kb_run *r, const void *h, size_t bytes, kb_dptr *d)
{
    kb_status st = kb_run_alloc(r, bytes, d);
    return st == KB_OK ? kb_run_upload(r, *d, h, bytes) : st;
}

static void state_free(gemm_state *s)
{
    if (!s)
        return;
    free(s->a);
    free(s->b);
    free(s->want);
    free(s->rows);
    free(s->h_d);
    free(s->got);
    free(s->c);
    free(s->rows_f);
    free(s);
}

/* Reference in double from the dequantised inputs (cf: C, or NULL when beta is 0), on
 * every row when that is cheap, else on evenly spaced rows (first and last included).
 * Returns -1 when out of memory. */
static int reference(gemm_state *s, const kb_case *c, const float *cf)
{
    const kb_gemm_geo *g = &s->g;
    int64_t macs_per_row = g->n * g->k, max_rows = REF_MAX_MACS / (macs_per_row ? macs_per_row : 1);
    s->ref_rows = g->m < max_rows ? g->m : max_rows < 2 ? (g->m < 2 ? g->m : 2) : max_rows;
    s->rows = malloc((size_t)s->ref_rows * sizeof *s->rows);
    s->want = malloc((size_t)(s->ref_rows * g->n) * sizeof(float));
    double *acc = malloc((size_t)g->n * sizeof(double));
    if (!s->rows || !s->want || !acc) {
        free(acc);
        return -1;
    }
    double alpha = (double)c->params[P_ALPHA], beta = (double)c->params[P_BETA];
    for (int64_t i = 0; i < s->ref_rows; i++) {
        int64_t m = s->ref_rows == g->m ? i : (s->ref_rows > 1 ? i * (g->m - 1) / (s->ref_rows - 1) : 0);
        s->rows[i] = m;
        for (int64_t j = 0; j < g->n; j++)
            acc[j] = 0.0;
        for (int64_t k = 0; k < g->k; k++) {
            double a = s->a[m * g->k + k];
            const float *brow = s->b + k * g->n;
            for (int64_t j = 0; j < g->n; j++)
                acc[j] += a * brow[j];
        }
        for (int64_t j = 0; j < g->n; j++)
            s->want[i * g->n + j] = (float)(alpha * acc[j] + (cf ? beta * cf[m * g->n + j] : 0.0));
    }
    free(acc);
    return 0;
}

/* The cuBLASLt call of the case on the uploaded operands: the same shape, layout, leading
 * dimensions, alpha/beta and (fp8) per-tensor scales as kbench's kernels get. */
static kb_status plan_cublaslt(kb_run *r, gemm_state *s)
{
    const kb_case *c = r->c;
    const kb_gemm_geo *g = &s->g;
    const int64_t *p = c->params;
    kb_vendor_op op = { .kind = KB_VOP_MATMUL, .u.mm = {
        .dtype = c->dtype, .m = g->m, .n = g->n, .k = g->k, .a_trans = g->a_t, .b_trans = g->b_t,
        .lda = g->lda, .ldb = g->ldb, .ldc = g->ldc, .a = s->d_a, .b = s->d_b, .c = s->d_c, .d = s->d_d,
        .alpha = (float)p[P_ALPHA], .beta = (float)p[P_BETA], .algo = (int)p[P_ALGO],
        .search = p[P_SEARCH] == SEARCH_ENUMERATE ? (int)p[P_BUDGET] : 0,
        .workspace_bytes = (size_t)p[P_WORKSPACE] << 20 } };
    float scales[2] = { s->scale_a, s->scale_b };   /* fp8: cuBLASLt reads them from device memory */
    kb_status st = is_fp8(c->dtype) ? upload_new(r, scales, sizeof scales, &op.u.mm.scale_a) : KB_OK;
    op.u.mm.scale_b = op.u.mm.scale_a ? op.u.mm.scale_a + sizeof(float) : 0;
    return st == KB_OK ? kb_run_vendor_plan(r, &op, &s->plan) : st;
}

/* For --dump and the record: the logical operands (dequantised: an fp8 operand is q x its
 * scale, so q = a / scale_a), C when it is read, and the constants D = alpha A B + beta C
 * depends on. s takes cf. */
static void expose_inputs(kb_run *r, gemm_state *s, float *cf)
{
    const kb_gemm_geo *g = &s->g;
    int64_t sa[2] = { g->m, g->k }, sb[2] = { g->k, g->n }, sc[2] = { g->m, g->n };
    s->c = cf;
    kb_run_expose(r, "a", s->a, sa, 2);
    kb_run_expose(r, "b", s->b, sb, 2);
    if (cf)
        kb_run_expose(r, "c", cf, sc, 2);
    kb_run_constant(r, "alpha", (double)r->c->params[P_ALPHA]);
    kb_run_constant(r, "beta", (double)r->c->params[P_BETA]);
    kb_run_constant(r, "scale_a", s->scale_a);
    kb_run_constant(r, "scale_b", s->scale_b);
}

static kb_status gemm_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    kb_status st = KB_ERR_OOM;
    gemm_state *s = calloc(1, sizeof *s);
    void *h_a = NULL, *h_b = NULL, *h_c = NULL;
    float *cf = NULL;
    if (!s)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the gemm state");
    kb_gemm_geo g = s->g = kb_gemm_geo_of(c);
    int beta = c->params[P_BETA] != 0;
    size_t a_bytes = (size_t)(g.a_rows * g.lda) * g.esz, b_bytes = (size_t)(g.b_rows * g.ldb) * g.esz;
    size_t d_bytes = (size_t)(g.m * g.ldc) * g.osz;
    s->a = malloc((size_t)(g.m * g.k) * sizeof(float));
    s->b = malloc((size_t)(g.k * g.n) * sizeof(float));
    s->h_d = malloc(d_bytes);
    h_a = malloc(a_bytes);
    h_b = malloc(b_bytes);
    if (beta) {
        h_c = malloc(d_bytes);
        cf = malloc((size_t)(g.m * g.n) * sizeof(float));
    }
    if (!s->a || !s->b || !s->h_d || !h_a || !h_b || (beta && (!h_c || !cf))) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation of %lldx%lldx%lld operands", (long long)g.m, (long long)g.n,
                    (long long)g.k);
        goto fail;
    }
    memset(h_a, 0xff, a_bytes);
    memset(h_b, 0xff, b_bytes);
    memset(s->h_d, 0xff, d_bytes);

    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    value_table *tab = malloc(sizeof *tab);
    if (!tab) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation of the value table");
        goto fail;
    }
    s->scale_a = make_table(&rng, c->dtype, 0, tab);
    fill_matrix(&rng, tab, g.esz, h_a, g.lda, g.a_t, g.m, g.k, s->a);
    s->scale_b = make_table(&rng, c->dtype, 0, tab);
    fill_matrix(&rng, tab, g.esz, h_b, g.ldb, g.b_t, g.k, g.n, s->b);
    if (beta) {
        memset(h_c, 0xff, d_bytes);
        make_table(&rng, c->dtype, 1, tab);
        fill_matrix(&rng, tab, g.osz, h_c, g.ldc, 0, g.m, g.n, cf);
    }
    free(tab);

    if (reference(s, c, cf) != 0) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation of the reference");
        goto fail;
    }

    if ((st = upload_new(r, h_a, a_bytes, &s->d_a)) != KB_OK || (st = upload_new(r, h_b, b_bytes, &s->d_b)) != KB_OK ||
        (st = upload_new(r, s->h_d, d_bytes, &s->d_d)) != KB_OK)   /* D starts as poison: unwritten shows */
        goto fail;
    s->d_c = s->d_d;   /* never read when beta == 0 */
    if (beta && (st = upload_new(r, h_c, d_bytes, &s->d_c)) != KB_OK)
        goto fail;
    if (c->variant == V_MMA && c->params[P_SPLITK] > 1 &&
        (st = kb_run_alloc(r, (size_t)(c->params[P_SPLITK] * g.m * g.n) * 4, &s->d_w)) != KB_OK)
        goto fail;   /* every slice writes all of its M x N partial sums: no clearing */
    if (c->variant == V_CUBLASLT && (st = plan_cublaslt(r, s)) != KB_OK)
        goto fail;
    if (c->variant == V_WGMMA && (st = kb_gemm_wgmma_maps(r, &g, s->d_a, s->d_b, s->d_c, s->d_d, s->maps)) != KB_OK)
        goto fail;
    if (c->variant == V_WGMMA)
        s->wg_geom = kb_gemm_wgmma_geom(r);   /* asks the device once, outside the timed enqueue */
    expose_inputs(r, s, cf);
    cf = NULL;                 /* kept by the state for --dump */
    free(h_c);
    free(h_b);
    free(h_a);
    *state = s;
    return KB_OK;
fail:
    free(cf);
    free(h_c);
    free(h_b);
    free(h_a);
    state_free(s);
    return st;
}

static kb_status gemm_enqueue(kb_run *r, void *state)
{
    const kb_case *c = r->c;
    gemm_state *s = state;
    const kb_gemm_geo *g = &s->g;
    if (c->variant == V_CUBLASLT)
        return kb_run_vendor_run(r, s->plan);
    if (c->variant == V_WGMMA) {
        kb_arg aw[] = { s->maps[0], s->maps[1], s->maps[2], s->maps[3], kb_arg_i32((int32_t)g->m),
                        kb_arg_i32((int32_t)g->n), kb_arg_i32((int32_t)g->k), kb_arg_f32((float)c->params[P_ALPHA]),
                        kb_arg_f32((float)c->params[P_BETA]), kb_arg_f32(s->scale_a), kb_arg_f32(s->scale_b) };
        return kb_run_launch(r, r->f->variants[V_WGMMA].entry, &s->wg_geom, aw, 11);
    }
    kb_geom geom = kb_gemm_geom(c);
    kb_arg args[] = {
        kb_arg_ptr(s->d_a), kb_arg_ptr(s->d_b), kb_arg_ptr(s->d_c), kb_arg_ptr(s->d_d),
        kb_arg_i32((int32_t)g->m), kb_arg_i32((int32_t)g->n), kb_arg_i32((int32_t)g->k),
        kb_arg_i32((int32_t)g->lda), kb_arg_i32((int32_t)g->ldb), kb_arg_i32((int32_t)g->ldc),
        kb_arg_f32((float)c->params[P_ALPHA]), kb_arg_f32((float)c->params[P_BETA]),
        kb_arg_f32(s->scale_a), kb_arg_f32(s->scale_b), kb_arg_ptr(s->d_w),   /* W: mma only */
    };
    int nargs = (int)(sizeof args / sizeof args[0]) - (c->variant != V_MMA);
    kb_status st = kb_run_launch(r, r->f->variants[c->variant].entry, &geom, args, nargs);
    if (st != KB_OK || c->variant != V_MMA || c->params[P_SPLITK] == 1)
        return st;
    /* split-K: the partial sums added and the epilogue applied, one thread per element */
    kb_geom g2 = { { (unsigned)((g->m * g->n + 255) / 256), 1, 1 }, { 256, 1, 1 }, 0, { 1, 1, 1 } };
    kb_arg a2[] = { kb_arg_ptr(s->d_w), kb_arg_ptr(s->d_c), kb_arg_ptr(s->d_d), kb_arg_i32((int32_t)g->m),
                    kb_arg_i32((int32_t)g->n), kb_arg_i32((int32_t)g->ldc), kb_arg_f32((float)c->params[P_ALPHA]),
                    kb_arg_f32((float)c->params[P_BETA]),
                    kb_arg_f32((float)c->params[P_ALPHA] * s->scale_a * s->scale_b) };
    return kb_run_launch(r, "gemm_splitk_reduce", &g2, a2, 9);
}

/* Tolerance of D. The reference is exact (double) from the very operand values the
 * kernel reads, so only two errors remain, and the tolerance is built from them rather
 * than from kb_tolerance's "summed in the dtype" model, which at K = 4096 would let an
 * fp8 kernel drop a whole K tile unnoticed:
 *   - the fp32 accumulation of K products, each at most P = |alpha| max|a| max|b|: a
 *     rounding of u per addition onto partial sums that grow like a random walk gives
 *     about u K P / sqrt(2); we allow 4 u K P with u = 2^-22 (one bit of slack for tensor
 *     cores that truncate rather than round), and u = 2^-13 for fp8, whose tensor-core
 *     accumulation has been reported to keep only about 14 bits on Hopper (DeepSeek-V3
 *     technical report, section 3.3.2) - unverified here, no GPU;
 *   - the rounding of D to its storage type: relative, 2 u_out (C enters the reference
 *     as the stored values, so beta C adds no error of its own).
 * int8 accumulates in int32 and is exact. */
static void gemm_tolerance(const kb_case *c, const gemm_state *s, double *atol, double *rtol)
{
    const kb_gemm_geo *g = &s->g;
    if (c->dtype == KB_DT_INT8) {
        *atol = *rtol = 0.0;
        return;
    }
    double amax = 0, bmax = 0;
    for (int64_t i = 0; i < g->m * g->k; i++)
        amax = fmax(amax, fabs(s->a[i]));
    for (int64_t i = 0; i < g->k * g->n; i++)
        bmax = fmax(bmax, fabs(s->b[i]));
    double p = fabs((double)c->params[P_ALPHA]) * amax * bmax;
    kb_dtype out = c->dtype == KB_DT_TF32 ? KB_DT_FP32 : is_fp8(c->dtype) ? KB_DT_BF16 : c->dtype;
    double u_out = kb_dtype_unit_roundoff(out);
    double u_acc = ldexp(1.0, is_fp8(c->dtype) ? -13 : -22);
    *atol = 4.0 * u_acc * (double)g->k * p + 1e-30;
    *rtol = 2.0 * u_out;
}

static kb_status gemm_check(kb_run *r, void *state, kb_verify *v)
{
    const kb_case *c = r->c;
    gemm_state *s = state;
    const kb_gemm_geo *g = &s->g;
    kb_status st = kb_run_download(r, s->h_d, s->d_d, (size_t)(g->m * g->ldc) * g->osz);
    if (st != KB_OK)
        return st;
    if (!s->got && !(s->got = malloc((size_t)(s->ref_rows * g->n) * sizeof(float))))
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the checked output rows");
    double atol, rtol;
    gemm_tolerance(c, s, &atol, &rtol);
    kb_verify_init(v, atol, rtol);
    for (int64_t i = 0; i < s->ref_rows; i++) {
        const unsigned char *row = (const unsigned char *)s->h_d + (size_t)(s->rows[i] * g->ldc) * g->osz;
        float *got = s->got + i * g->n;
        for (int64_t j = 0; j < g->n; j++)
            got[j] = out_to_f32(c->dtype, row + (size_t)j * g->osz);
        kb_verify_f32(v, got, s->want + i * g->n, g->n);
        /* the gap columns of D's padded rows started as poison and must stay so */
        size_t gap = (size_t)(g->ldc - g->n) * g->osz;
        if (gap)
            kb_verify_guard(v, row + (size_t)g->n * g->osz, gap, 0xff, (int64_t)(row - (const unsigned char *)s->h_d) +
                            g->n * (int64_t)g->osz);
    }
    /* for --dump: the checked rows of D (every row at emulator sizes), their reference, which rows */
    int64_t shape[2] = { s->ref_rows, g->n };
    kb_run_expose(r, "out", s->got, shape, 2);
    kb_run_expose(r, "ref", s->want, shape, 2);
    if (!s->rows_f && (s->rows_f = malloc((size_t)s->ref_rows * sizeof(float))))
        for (int64_t i = 0; i < s->ref_rows; i++) s->rows_f[i] = (float)s->rows[i];
    if (s->rows_f)
        kb_run_expose(r, "rows", s->rows_f, &s->ref_rows, 1);
    return KB_OK;
}

static void gemm_teardown(kb_run *r, void *state) { state_free(state); }

/* The instruction a variant's loop issues (fp8 where it is not native: widened to f16, gemm.cu FP8_VIA_F16). */
static int gemm_path(const kb_case *c, int sm, kb_path *out)
{
    if (c->variant == V_WGMMA)
        return kb_path_set(out, "wgmma", c->dtype, 0);   /* fp8 native on sm_90a's wgmma */
    if (c->variant == V_CUBLASLT || (c->variant != V_MMA && c->dtype == KB_DT_INT8))
        return 0;   /* cuBLASLt's instructions are its own; integer SIMT has no FMA ceiling */
    return c->variant == V_MMA ? kb_path_set(out, "mma", c->dtype, is_fp8(c->dtype) && kb_gemm_fp8_widened(sm))
                               : kb_path_set(out, "fma", KB_DT_FP32, 0);
}

const kb_family kb_family_gemm = {
    .name = "gemm",
    .source = "gemm.cu",
    .about = "D = alpha*op(A)*op(B) + beta*C: naive, shared-memory SIMT, tensor cores (mma.sync + cp.async), cuBLASLt, "
             "Hopper wgmma + TMA (sm_90a)",
    .variants = variants, .n_variants = KB_COUNT(variants),
    .dims = dims, .n_dims = KB_COUNT(dims),
    .params = params, .n_params = KB_COUNT(params), .n_id_params = P_GROUP,
    .valid = kb_gemm_valid,
    .defines = gemm_defines,
    .work = gemm_work,
    .setup = gemm_setup,
    .enqueue = gemm_enqueue,
    .check = gemm_check,
    .teardown = gemm_teardown,
    .path = gemm_path,
    .traffic = kb_gemm_traffic,
};
