/* gemm_inputs.h - a GEMM case's inputs, references and scale tensors (gemm_inputs.c): what
 * gemm.c's setup makes and its enqueue and check read.
 *
 * Real-valued operands are drawn from the case's distribution (param dist) and quantised
 * by its recipe (param scale; engine/quant.h). Two references come out of one pass over
 * the checked rows: want, from the dequantised operands the kernels see (verification,
 * strict), and truth, the fp64 product of the unquantised real values (accuracy, reported).
 */
#ifndef KB_GEMM_INPUTS_H
#define KB_GEMM_INPUTS_H

#include "engine/exec.h"
#include "gemm_model.h"

typedef struct {
    kb_gemm_geo g;
    int recipe, dist;           /* kb_recipe, kb_dist */
    float scale_a, scale_b;     /* per-tensor scales the kernels apply in the epilogue (tensor, nv), else 1 */
    kb_dptr d_a, d_b, d_c, d_d;
    kb_dptr d_sa, d_sb;         /* the block / channel scales of A and B (gemm.cu SA, SB), or 0 */
    kb_dptr d_w;                /* mma SPLITK > 1: [SPLITK][m][n] 4-byte partial sums */
    float *a, *b;               /* dequantised logical A [m][k] and B [k][n] (every scale applied) */
    float *ra, *rb;             /* the real values before quantisation (int8: divided by its scale) */
    float *want;                /* [ref_rows][n] verification reference of the checked rows */
    float *extra;               /* [ref_rows][n] its per-element allowance: the fp32 accumulation */
    double *truth;              /* [ref_rows][n] fp64 product of the real values (accuracy) */
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

/* The family's setup: inputs, references, uploads, the cuBLASLt plan, wgmma's tensor maps and
 * persistent grid (gemm.c's setup slot). */
kb_status kb_gemm_setup(kb_run *r, void **state);

/* Free a state (NULL is fine). */
void kb_gemm_state_free(gemm_state *s);

#endif
