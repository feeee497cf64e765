/* gemm.c - host side of the GEMM family: descriptor, work model, launch and verification.
 * Legality: gemm_valid.c; inputs, scales and references: gemm_inputs.c; device code and
 * the layout convention: gemm.cu; precisions and scaling recipes: core/precision.h and
 * docs/precision.md.
 *
 * Leading dimensions carry the pad axis: lda = (A stored M x K ? K : M) + pad, likewise
 * ldb, and ldc = N + pad [elements]. The gap elements are filled with 0xFF bytes (NaN
 * for the float types) so a kernel that reads them shows it. Base addresses stay
 * 256-byte aligned; pad 1 makes every row after the first misaligned.
 */
#include "core/precision.h"
#include "engine/exec.h"
#include "engine/valid.h"
#include "engine/verify.h"
#include "gemm_inputs.h"
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
                    KB_DT_BIT(KB_DT_INT8) | KB_DT_BIT(KB_DT_FP8E4M3) | KB_DT_BIT(KB_DT_FP8E5M2) | \
                    KB_DT_BIT(KB_DT_FP6E2M3) | KB_DT_BIT(KB_DT_FP6E3M2) | KB_DT_BIT(KB_DT_FP4E2M1))
#define WGMMA_DTYPES (KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16) | KB_DT_BIT(KB_DT_INT8) | \
                      KB_DT_BIT(KB_DT_FP8E4M3) | KB_DT_BIT(KB_DT_FP8E5M2))
#define TILED ((1u << V_SMEM) | (1u << V_MMA) | (1u << V_WGMMA))
#define PIPED ((1u << V_MMA) | (1u << V_WGMMA))
#define LT_DTYPES (KB_DT_BIT(KB_DT_FP32) | MMA_DTYPES)
#define LT_ONLY (1u << V_CUBLASLT)

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
/* the registry's names, in kb_recipe / kb_dist order (test_gemm checks them against it) */
static const char *const scales[] = { "tensor", "channel", "block1x128", "block128x128", "mx", "nv", NULL };
static const char *const dists[] = { "uniform", "normal", "outliers", "ranges", "zeros", "extremes", "nan", NULL };
_Static_assert(sizeof scales / sizeof scales[0] == KB_RECIPE_COUNT + 1, "gemm scale choices out of sync");
_Static_assert(sizeof dists / sizeof dists[0] == KB_DIST_COUNT + 1, "gemm dist choices out of sync");
static const char *const searches[] = { "heuristic", "enumerate", NULL };
static const char *const dims[] = { "m", "n", "k" };
static const char *const schedules[] = { "cooperative", "pingpong", NULL };
static const char *const accums[] = { "one", "two", NULL };
static const char *const clusters[] = { "1x1", "2x1", "1x2", NULL };

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
    [P_SCALE] = { "scale", KB_RECIPE_TENSOR, scales, (1u << V_NAIVE) | (1u << V_MMA) | (1u << V_CUBLASLT),
                  "scaling recipe of fp8/fp6/fp4 (docs/precision.md): tensor, channel, block1x128, block128x128 "
                  "(DeepSeek-V3), mx (OCP MX, UE8M0 per 32), nv (NVFP4, UE4M3 per 16 and FP32 per tensor)" },
    [P_DIST] = { "dist", KB_DIST_UNIFORM, dists, 0,
                 "input distribution: uniform, normal, outliers (a few activation channels 100x); ranges, zeros, "
                 "extremes, nan are check inputs" },
    [P_CLUSTER] = { "cluster", CLUSTER_1X1, clusters, 1u << V_WGMMA,
                    "wgmma thread block cluster, M x N tiles: 2x1 (two CTAs on neighbouring M tiles load B once by "
                    "TMA multicast), 1x2 (neighbouring N tiles, A multicast) or 1x1 (no cluster)" },
};
_Static_assert(KB_COUNT(params) == P_COUNT, "a row of params[] for every P_* of gemm_model.h");

/* ---- legality: gemm_valid.c ---- */

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

/* Compulsory bytes count the formats as packed (fp6: 6 bits, fp4: 4 bits per element) and
 * their scales; kbench's kernels keep one fp6/fp4 code per byte, so they move more
 * (bytes_moved), as does cuBLASLt with fp6 (one per byte here too). */
static kb_work gemm_work(const kb_case *c)
{
    kb_gemm_geo g = kb_gemm_geo_of(c);
    double m = (double)g.m, nn = (double)g.n, k = (double)g.k, bits = kb_dtype_bits(c->dtype);
    int beta = c->params[P_BETA] != 0;
    kb_work w = { 0 };
    w.flops = 2.0 * m * nn * k + (beta ? 2.0 * m * nn : 0.0);
    double sbytes = kb_gemm_scale_bytes(c, 0, g.m, g.k) + kb_gemm_scale_bytes(c, 1, g.n, g.k);
    double cd = beta ? m * nn * (double)g.osz : 0.0;
    w.bytes_read = (m * k + k * nn) * bits / 8.0 + sbytes + cd;
    w.bytes_written = m * nn * (double)g.osz;
    if (bits < 8.0 * (double)g.esz && !(c->variant == V_CUBLASLT && c->dtype == KB_DT_FP4E2M1))
        w.bytes_moved = (m * k + k * nn) * (double)g.esz + sbytes + cd + w.bytes_written;
    return w;
}


/* ---- execution: setup in gemm_inputs.c; launch, check ---- */
static kb_status gemm_setup(kb_run *r, void **state) { return kb_gemm_setup(r, state); }

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
        kb_arg_f32(s->scale_a), kb_arg_f32(s->scale_b), kb_arg_ptr(s->d_sa), kb_arg_ptr(s->d_sb),
        kb_arg_ptr(s->d_w),   /* W: mma only */
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

/* C/D element (stored in the output type) to float. */
static float out_to_f32(kb_dtype dt, const void *p)
{
    float f;
    if (kb_gemm_lowp(dt))
        dt = KB_DT_BF16;   /* fp8/fp6/fp4 GEMMs write bf16 */
    if (dt == KB_DT_INT8) {
        int32_t v;
        memcpy(&v, p, 4);
        return (float)v;
    }
    kb_host_to_f32(dt, p, &f, 1);
    return f;
}

/* Verification: every checked element within its allowance of the reference of the
 * dequantised operands (gemm_inputs.c: the fp32 accumulation of its own products, and D's
 * rounding, 2 u_out relative; int8 exact). Accuracy, beside it: the same outputs against
 * the fp64 product of the unquantised inputs (reported, never a pass/fail). */
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
    kb_dtype out = c->dtype == KB_DT_TF32 ? KB_DT_FP32 : kb_gemm_lowp(c->dtype) ? KB_DT_BF16 : c->dtype;
    kb_verify_init(v, c->dtype == KB_DT_INT8 ? 0.0 : 1e-30, 2.0 * kb_dtype_unit_roundoff(out));
    kb_accuracy acc;
    kb_accuracy_init(&acc);
    for (int64_t i = 0; i < s->ref_rows; i++) {
        const unsigned char *row = (const unsigned char *)s->h_d + (size_t)(s->rows[i] * g->ldc) * g->osz;
        float *got = s->got + i * g->n;
        for (int64_t j = 0; j < g->n; j++)
            got[j] = out_to_f32(c->dtype, row + (size_t)j * g->osz);
        kb_verify_f32_scaled(v, got, s->want + i * g->n, s->extra + i * g->n, g->n);
        kb_accuracy_add(&acc, got, s->truth + i * g->n, g->n);
        /* the gap columns of D's padded rows started as poison and must stay so */
        size_t gap = (size_t)(g->ldc - g->n) * g->osz;
        if (gap)
            kb_verify_guard(v, row + (size_t)g->n * g->osz, gap, 0xff, (int64_t)(row - (const unsigned char *)s->h_d) +
                            g->n * (int64_t)g->osz);
    }
    kb_accuracy_finish(&acc, v);
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

static void gemm_teardown(kb_run *r, void *state) { kb_gemm_state_free(state); }

/* The instruction a variant's loop issues: fp8 where it is not native and fp6/fp4 below sm_120a
 * widened to f16 (gemm.cu FP8_VIA_F16), the block-scaled mma.sync where it runs (gemm.cu GEMM_BS_MMA). */
static int gemm_path(const kb_case *c, int sm, kb_path *out)
{
    if (c->variant == V_WGMMA)
        return kb_path_set(out, "wgmma", c->dtype, 0);   /* fp8 native on sm_90a's wgmma */
    if (c->variant == V_CUBLASLT || (c->variant != V_MMA && c->dtype == KB_DT_INT8))
        return 0;   /* cuBLASLt's instructions are its own; integer SIMT has no FMA ceiling */
    int widened = !kb_gemm_block_scaled_mma(c, sm) && kb_gemm_widened(c->dtype, sm);
    return c->variant == V_MMA ? kb_path_set(out, "mma", c->dtype, widened) : kb_path_set(out, "fma", KB_DT_FP32, 0);
}

const kb_family kb_family_gemm = {
    .name = "gemm",
    .source = "gemm.cu",
    .about = "D = alpha*op(A)*op(B) + beta*C: naive, shared-memory SIMT, tensor cores (mma.sync + cp.async), cuBLASLt, "
             "Hopper wgmma + TMA (sm_90a)",
    .variants = variants, .n_variants = KB_COUNT(variants),
    .dims = dims, .n_dims = KB_COUNT(dims),
    .params = params, .n_params = KB_COUNT(params), .n_id_params = P_GROUP, .host_params = 1u << P_DIST,
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
