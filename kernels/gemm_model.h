/* gemm_model.h - what gemm.c (the family) and gemm_model.c (its traffic model for
 * `kbench estimate`) share: variant and param indices, the launch geometry. */
#ifndef KB_GEMM_MODEL_H
#define KB_GEMM_MODEL_H

#include "engine/family.h"

enum { V_NAIVE, V_SMEM, V_MMA, V_CUBLASLT, V_WGMMA };
enum { P_LAYOUT, P_ALPHA, P_BETA, P_BM, P_BN, P_BK, P_TM, P_TN, P_WM, P_WN, P_STAGES, P_ALGO, P_WORKSPACE, P_SEARCH,
       P_BUDGET, P_GROUP, P_SPLITK, P_SCHEDULE, P_ACCUM, P_SCALE, P_DIST, P_CLUSTER,
       P_COUNT };
enum { L_NN, L_NT, L_TN, L_TT };
enum { SEARCH_HEURISTIC, SEARCH_ENUMERATE };
enum { SCHED_COOPERATIVE, SCHED_PINGPONG };   /* gemm/wgmma's consumer schedule */
enum { CLUSTER_1X1, CLUSTER_2X1, CLUSTER_1X2 };   /* gemm/wgmma's cluster shape (M x N tiles) */
enum { ACCUM_ONE, ACCUM_TWO };  /* gemm/wgmma's fp8 accumulation: in the tensor core, or two-level */

/* fp8, fp6 and fp4: scaled operands, C and D in bf16. */
static inline int kb_gemm_lowp(kb_dtype d)
{
    return d == KB_DT_FP8E4M3 || d == KB_DT_FP8E5M2 || d == KB_DT_FP6E2M3 || d == KB_DT_FP6E3M2 || d == KB_DT_FP4E2M1;
}
/* fp6 and fp4: one code per byte; no mma.sync below sm_120a, so kbench's kernels widen them to f16. */
static inline int kb_gemm_sub8(kb_dtype d) { return d == KB_DT_FP6E2M3 || d == KB_DT_FP6E3M2 || d == KB_DT_FP4E2M1; }

/* The stored operands of case c: layout, leading dimensions with the pad axis, element
 * sizes (C/D: int32 for int8, bf16 for fp8/fp6/fp4). One rule for the family and its model. */
typedef struct {
    int64_t m, n, k;
    int a_t, b_t;            /* A stored K x M, B stored N x K */
    int64_t lda, ldb, ldc;   /* [elements], pad included */
    int64_t a_rows, b_rows;  /* stored rows of A and B */
    size_t esz, osz;         /* [bytes] operand and C/D elements */
} kb_gemm_geo;

kb_gemm_geo kb_gemm_geo_of(const kb_case *c);

/* 1 when case c's mma kernel runs the block-scaled mma.sync on target sm (gemm.cu
 * GEMM_BS_MMA: recipe mx or nv where the architecture table has KB_PATH_MMA_BLOCK_SCALE,
 * sm_120a and sm_121a), 0 when it takes the dequantising path. */
int kb_gemm_block_scaled_mma(const kb_case *c, int sm);

/* [bytes] of operand is_b's scales (is_b 0: A, rows = M; 1: B, rows = N) under case c's
 * recipe: fp32 or one-byte codes per block, plus nv's per-tensor fp32; 0 for the dtypes
 * that are not scaled (anything but fp8/fp6/fp4). */
double kb_gemm_scale_bytes(const kb_case *c, int is_b, int64_t rows, int64_t k);

/* Threads per block of case c's kernel. */
int64_t kb_gemm_threads(const kb_case *c);

/* Dynamic shared memory of the mma variant [bytes]: the larger of the pipeline (A_STAGE,
 * B_STAGE in gemm.cu) and the epilogue staging (EPI_WARP per warp); must match gemm.cu. */
int64_t kb_gemm_mma_smem_bytes(const kb_case *c);

/* Dynamic shared memory of the wgmma variant [bytes]: 1024 of alignment slack, STAGES x
 * (A + B tiles), the BM x BN output staging tile (ping-pong: one per consumer warpgroup) and
 * 2 x STAGES mbarriers plus one per staging tile; must match gemm_wgmma.cuh. */
int64_t kb_gemm_wgmma_smem_bytes(const kb_case *c);

/* CTAs per cluster of case c's wgmma kernel along M (is_n 0) or N (is_n 1): 2 on the axis of
 * its cluster param (2x1: M, 1x2: N), else 1. */
int kb_gemm_wgmma_cluster(const kb_case *c, int is_n);

/* 1 when gemm.cu's mma variant widens fp8 fragments to f16 on the architecture of code:
 * fp8 mma.sync exists there but is not its native fp8 path (core/arch.h
 * KB_PATH_MMA_FP8_NATIVE; gemm.cu FP8_VIA_F16, checked against this by test_ptx). */
static inline int kb_gemm_fp8_widened(int code)
{ return kb_arch_has(code, KB_PATH_MMA_FP8) && !kb_arch_has(code, KB_PATH_MMA_FP8_NATIVE); }

/* 1 when the dequantising mma path widens dtype d's fragments to f16 on code: fp6/fp4
 * always (no mma.sync takes them outside the block-scaled kinds), fp8 where
 * kb_gemm_fp8_widened says. The block-scaled mma.sync (kb_gemm_block_scaled_mma) widens
 * nothing. */
static inline int kb_gemm_widened(kb_dtype d, int code)
{ return kb_gemm_sub8(d) || ((d == KB_DT_FP8E4M3 || d == KB_DT_FP8E5M2) && kb_gemm_fp8_widened(code)); }

/* The launch of case c (not for cublaslt): grid, block, dynamic shared memory. wgmma: the
 * grid has one block per output tile; the launch clamps it to the SM count (persistent). */
kb_geom kb_gemm_geom(const kb_case *c);

/* The family's traffic hook (engine/traffic.h): the tiling's L2, shared-memory and DRAM
 * bytes, tensor or FP32 work over whole tiles, instructions per k-tile (docs/estimate.md). */
int kb_gemm_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *out);

#endif
