/* gemm_valid.h - legality of GEMM cases (gemm_valid.c). */
#ifndef KB_GEMM_VALID_H
#define KB_GEMM_VALID_H

#include "gemm_model.h"

/* The family's valid(): 1 when case c can run on target t, else 0 with the reason in
 * why[0..n) (which param, which limit, in words). */
int kb_gemm_valid(const kb_case *c, const kb_target *t, char *why, size_t n);

/* 1 when target sm has the block-scaled mma.sync (sm_120a, sm_121a: arch codes 1120, 1121 of
 * the architecture table, issue 23 item 1; core/arch.h kb_arch_has(sm, KB_PATH_MMA_BLOCK_SCALE)
 * once it is merged). */
int kb_gemm_arch_block_scale(int sm);

/* 1 when case c's mma kernel runs the block-scaled mma.sync on target sm (gemm.cu
 * GEMM_BS_MMA: recipe mx or nv there), 0 when it takes the dequantising path. */
int kb_gemm_block_scaled_mma(const kb_case *c, int sm);

#endif
