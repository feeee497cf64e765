/* precision.h - precisions and scaling recipes as one registry (docs/precision.md).
 *
 * A recipe says how real-valued GEMM operands become low-precision ones: the element
 * formats it defines, the scale format, the block of elements one scale covers in A
 * (M x K) and B (K x N), a second FP32 per-tensor scale where it has one, and the source
 * of the definition. The quantisation rules themselves (rounding, saturation, NaN and
 * Inf, the partial last block) are implemented once in engine/quant.c and written down in
 * docs/precision.md; the scale tensor layouts cuBLASLt expects are here, as pure index
 * arithmetic, so the family (kernels/gemm.c) and the cuBLASLt glue (backend/cuda) agree.
 *
 * The input distributions of the accuracy axis are here too: their names and what they
 * model; engine/quant.c draws them.
 */
#ifndef KB_PRECISION_H
#define KB_PRECISION_H

#include "core/kb.h"

/* ---- scaling recipes: one enum, one table (precision.c), checked by a static assert ---- */
typedef enum {
    KB_RECIPE_TENSOR = 0,    /* one FP32 scale per operand (the default; 1 for unscaled dtypes) */
    KB_RECIPE_CHANNEL,       /* one FP32 scale per row of A and per column of B */
    KB_RECIPE_BLOCK1X128,    /* one FP32 scale per 1 x 128 (K) block of A and of B^T */
    KB_RECIPE_BLOCK128X128,  /* DeepSeek-V3: A in 1 x 128 blocks, B in 128 x 128 blocks */
    KB_RECIPE_MX,            /* OCP MX: one UE8M0 scale per 32 elements along K */
    KB_RECIPE_NV,            /* NVFP4: one UE4M3 scale per 16 elements along K, and an FP32 per tensor */
    KB_RECIPE_COUNT
} kb_recipe;

typedef enum { KB_SFMT_FP32 = 0, KB_SFMT_UE8M0, KB_SFMT_UE4M3, KB_SFMT_COUNT } kb_scale_fmt;

typedef struct {
    const char *name;        /* the gemm `scale` value: "tensor", "channel", "block1x128", ... */
    kb_scale_fmt sfmt;       /* of the block scales */
    int a_rows, a_k;         /* A's block: rows x K elements; 0 = the whole extent */
    int b_cols, b_k;         /* B's block: K x columns (written columns x K); 0 = the whole extent */
    int tensor_scale;        /* 1: an FP32 per-tensor scale on top of the block scales (nv) */
    uint32_t dtypes;         /* KB_DT_BIT of the element dtypes the recipe defines */
    const char *source;      /* where the definition comes from */
    const char *about;       /* one line */
} kb_recipe_info;

/* The row of recipe r, or NULL for a value outside the enum. */
const kb_recipe_info *kb_recipe_get(kb_recipe r);
const char *kb_recipe_name(kb_recipe r);               /* "mx"; "?" out of range */
int kb_recipe_parse(const char *s, kb_recipe *out);    /* 0, or -1 for an unknown name */
const char *kb_scale_fmt_name(kb_scale_fmt f);         /* "fp32", "ue8m0", "ue4m3"; "?" */
/* 1 when recipe r defines dtype dt, else 0 with the reason in why[0..n). */
int kb_recipe_accepts(kb_recipe r, kb_dtype dt, char *why, size_t n);

/* The block extents of recipe r for an operand: rows (M of A, N of B) and k per block,
 * with 0 replaced by the operand's extent (rows, k). */
void kb_recipe_block(kb_recipe r, int is_b, int64_t rows, int64_t k, int64_t *br, int64_t *bk);

/* ---- input distributions (the gemm `dist` param) ---- */
typedef enum {
    KB_DIST_UNIFORM = 0,     /* uniform in [-1, 1) */
    KB_DIST_NORMAL,          /* standard normal */
    KB_DIST_OUTLIERS,        /* normal, with a few channels (K columns of A) 100x larger */
    /* check inputs (tests/suites): special values a recipe must handle by its rule */
    KB_DIST_RANGES,          /* normal, each scale block of A and B scaled by 2^-40 .. 2^40 */
    KB_DIST_ZEROS,           /* normal, with all-zero blocks and rows (a scale of zero) */
    KB_DIST_EXTREMES,        /* values at and beyond the element format's largest magnitude */
    KB_DIST_NAN,             /* normal, one NaN in A and one +Inf in B */
    KB_DIST_COUNT
} kb_dist;

const char *kb_dist_name(kb_dist d);                   /* "uniform"; "?" out of range */
int kb_dist_parse(const char *s, kb_dist *out);        /* 0, or -1 */
const char *kb_dist_about(kb_dist d);                  /* one line; "" out of range */

/* ---- scale tensors as cuBLASLt reads them (cuBLAS documentation, "Scaling factor
 * layouts"; unverified on a GPU: none was available to this project) ----
 *
 * An operand is seen as rows x K with its scale blocks along K (A: M x K; B: N x K, the
 * layout nt kbench maps onto cuBLASLt's TN form). s = (r, kb): the scale of row (or row
 * block) r, K block kb. kblocks = ceil(K / block k), rblocks = ceil(rows / block rows).
 *   VEC32_UE8M0, VEC16_UE4M3 (mx, nv): 128 x 4 tiles of one byte, rows padded to 128 and
 *     K blocks to 4; tile (r / 128, kb / 4) at ((r / 128) * ceil(kblocks / 4) + kb / 4) * 512,
 *     inside it (r % 32) * 16 + (r % 128 / 32) * 4 + kb % 4 (nvmath-python's
 *     get_block_scale_offset, which cites the same section).
 *   VEC128_32F (block1x128, and A of block128x128): FP32, K-block-major with the rows
 *     padded to a multiple of 4: kb * roundup(rows, 4) + r (TransformerEngine's GEMM_READY
 *     1D block scales).
 *   BLK128x128_32F (B of block128x128): FP32, rb * roundup(kblocks, 4) + kb (its 2D ones).
 *   OUTER_VEC_32F (channel): FP32, r.   SCALAR_32F (tensor, nv's tensor scale): one FP32.
 * Offsets are in elements of the scale type. */
typedef enum { KB_LT_SCALE_SCALAR = 0, KB_LT_SCALE_OUTER, KB_LT_SCALE_VEC128, KB_LT_SCALE_BLK128,
               KB_LT_SCALE_TILED, KB_LT_SCALE_COUNT } kb_lt_scale_layout;

/* The layout's name as cuBLASLt's scale modes spell it ("SCALAR_32F", ..., "tiled" for
 * VEC32_UE8M0 / VEC16_UE4M3); "?" out of range. Static storage. */
const char *kb_lt_scale_layout_name(kb_lt_scale_layout l);

/* The layout of operand is_b's scale tensor under recipe r. */
kb_lt_scale_layout kb_recipe_lt_layout(kb_recipe r, int is_b);
/* Elements of the scale tensor (padding included) for an operand of rows x k. */
int64_t kb_lt_scale_count(kb_lt_scale_layout l, int64_t rows, int64_t kblocks, int64_t rblocks);
/* Offset of scale (r, kb) (r a row block for BLK128: r = row / 128). */
int64_t kb_lt_scale_offset(kb_lt_scale_layout l, int64_t rows, int64_t kblocks, int64_t r, int64_t kb);

#endif /* KB_PRECISION_H */
