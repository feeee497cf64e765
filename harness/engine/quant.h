/* quant.h - real-valued GEMM operands drawn from a distribution and quantised by a
 * scaling recipe (core/precision.h), the one implementation of the rules
 * docs/precision.md states:
 *
 *   scale exponent  E = ceil(log2(amax / fmax)) over the block's finite values: the smallest
 *                   power of two that brings the block's largest magnitude within the
 *                   element format's largest one (fmax: e4m3 448, e5m2 57344, e2m3 7.5,
 *                   e3m2 28, e2m1 6), so no element saturates. FP32 scales: 2^E, E kept in
 *                   [-149, 127]; an all-zero block gets 1. UE8M0 (mx): code E + 127, E
 *                   clamped to [-127, 127]; an all-zero block gets code 0 (2^-127).
 *   nv (two levels) S = amax(tensor) / (6 x 448) in FP32 (1 when the tensor is all zero);
 *                   per 16 elements s = RNE_ue4m3(amax(block) / (6 S)), which may round
 *                   down, and then the block's largest elements saturate at 6.
 *   elements        q = RNE_sat(x / (s S)) in the element format: round to nearest, ties to
 *                   even, magnitudes past the largest saturate to it (cvt.rn.satfinite). A
 *                   block whose scale is 0 (nv) is all zero.
 *   NaN, Inf        FP32-scaled fp8: the amax skips them, a NaN stays NaN (the format's
 *                   NaN code), an Inf saturates. UE8M0 / UE4M3 scales: a block holding a
 *                   NaN or Inf gets the NaN scale code (0xFF / 0x7F): the whole block is NaN
 *                   (MX v1.0 5.4: a NaN scale makes every element NaN); its elements are 0.
 *   partial blocks  the last block along K (or rows) holds what is left; its scale comes
 *                   from those elements alone.
 *   unscaled dtypes fp32/tf32/fp16/bf16: scale 1, rounded to the format as kb_host_from_f32
 *                   does. int8: symmetric per tensor, s = amax / 127, q = round_sat(x / s):
 *                   its GEMM runs in the integer domain, so the dequantised value is q and
 *                   the real value x / s.
 */
#ifndef KB_QUANT_H
#define KB_QUANT_H

#include "core/precision.h"

/* One operand's quantiser, the operand seen as rows x k (A: m x k; B: n x k, i.e. B^T). */
typedef struct {
    kb_dtype dt;
    kb_recipe recipe;
    int64_t rows, k;
    int64_t br, bk;              /* block extents (kb_recipe_block) */
    int64_t rblocks, kblocks;    /* ceil(rows / br), ceil(k / bk) */
    float *scale;                /* [rblocks * kblocks] decoded block scales, row-block major */
    uint8_t *code;               /* [rblocks * kblocks] UE8M0 / UE4M3 codes; NULL for FP32 scales */
    float tensor;                /* per-tensor scale: tensor recipe's, nv's second level; else 1 */
    int int_domain;              /* int8: dequantised = q, real = x / tensor */
    /* the element format's non-negative finite values in increasing order and their codes */
    int n_vals;
    double vals[256];
    uint32_t codes[256];
    uint32_t sign_bit, nan_code; /* nan_code: 0 when the format has no NaN */
} kb_qop;

/* Compute q's scales from the real values x (element (r, kk) at x[r * rs + kk * ks]) of
 * operand is_b (A: rows = m; B: rows = n) for dtype dt under recipe r (which must accept
 * dt: kb_recipe_accepts). KB_OK, or KB_ERR_OOM (nothing left to free). Free with kb_qop_free. */
kb_status kb_qop_init(kb_qop *q, kb_dtype dt, kb_recipe r, int is_b, int64_t rows, int64_t k, const float *x,
                      int64_t rs, int64_t ks);
void kb_qop_free(kb_qop *q);

/* Storage bits of element (r, kk) of real value x, and in *deq its dequantised value (what
 * the reference computes with: code value x block scale x tensor scale; int8: the code). */
uint32_t kb_qop_quantise(const kb_qop *q, int64_t r, int64_t kk, float x, float *deq);

/* The nearest value of the element format by the rule above (RNE, saturating), for
 * |a| as a double: the code with the sign of a. For tests and kb_qop_quantise. */
uint32_t kb_qop_round(const kb_qop *q, double a);

/* Largest finite magnitude of an element dtype (448 for e4m3 ...; 127 for int8; 0 for
 * unscaled floating dtypes). */
double kb_dtype_fmax(kb_dtype dt);

/* ---- distributions ---- */

/* Real values of operand is_b, seen as rows x k as kb_qop_init sees it (element (r, kk)
 * at x[r * rs + kk * ks]), drawn from dist d with rng. br x bk is the recipe's block
 * (kb_recipe_block), which the check distributions follow; fmax the element format's
 * largest magnitude (kb_dtype_fmax; 0 for unscaled formats). Values come from a table of
 * 4096 draws of the base distribution (uniform or normal) picked at random: any misplaced
 * element still shows in a result, and a 4096^3 problem fills in a second. Outlier
 * channels are columns kk of A (kb_dist_outlier_channel); B, the weights, has none. */
void kb_dist_fill(kb_dist d, kb_rng *rng, int is_b, int64_t rows, int64_t k, int64_t br, int64_t bk, double fmax,
                  float *x, int64_t rs, int64_t ks);

/* 1 when channel k of A is one of the outlier channels (100x) of dist outliers for K = k_total. */
int kb_dist_outlier_channel(int64_t k, int64_t k_total);

#endif /* KB_QUANT_H */
