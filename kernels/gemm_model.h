/* gemm_model.h - what gemm.c (the family) and gemm_model.c (its traffic model for
 * `kbench estimate`) share: variant and param indices, the launch geometry. */
#ifndef KB_GEMM_MODEL_H
#define KB_GEMM_MODEL_H

#include "engine/family.h"

enum { V_NAIVE, V_SMEM, V_MMA, V_CUBLASLT };
enum { P_LAYOUT, P_ALPHA, P_BETA, P_BM, P_BN, P_BK, P_TM, P_TN, P_WM, P_WN, P_STAGES, P_ALGO, P_WORKSPACE, P_SEARCH,
       P_BUDGET, P_GROUP, P_SPLITK, P_SCALE, P_DIST, P_COUNT };
enum { L_NN, L_NT, L_TN, L_TT };
enum { SEARCH_HEURISTIC, SEARCH_ENUMERATE };

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

/* 1 when target sm has the block-scaled mma.sync (sm_120a, sm_121a: arch codes 1120, 1121 of
 * the architecture table, issue 23 item 1; core/arch.h kb_arch_has(sm, KB_PATH_MMA_BLOCK_SCALE)
 * once it is merged). */
int kb_gemm_arch_block_scale(int sm);

/* 1 when case c's mma kernel runs the block-scaled mma.sync on target sm (gemm.cu
 * GEMM_BS_MMA: recipe mx or nv there), 0 when it takes the dequantising path. */
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

/* The launch of case c (not for cublaslt): grid, block, dynamic shared memory. */
kb_geom kb_gemm_geom(const kb_case *c);

/* The family's traffic hook (engine/traffic.h): the tiling's L2, shared-memory and DRAM
 * bytes, tensor or FP32 work over whole tiles, instructions per k-tile (docs/estimate.md). */
int kb_gemm_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *out);

#endif
