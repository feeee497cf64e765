/* precision.c - the recipe and distribution registry and cuBLASLt's scale layouts (see
 * precision.h; the rules in words: docs/precision.md). */
#include "core/precision.h"

#include <stdio.h>
#include <string.h>

#define FP8 (KB_DT_BIT(KB_DT_FP8E4M3) | KB_DT_BIT(KB_DT_FP8E5M2))
#define FP6 (KB_DT_BIT(KB_DT_FP6E2M3) | KB_DT_BIT(KB_DT_FP6E3M2))
#define FP4 KB_DT_BIT(KB_DT_FP4E2M1)
/* per-tensor: fp8 scaled; fp32/tf32/fp16/bf16 rounded (scale 1); int8 symmetric */
#define TENSOR_DTYPES ((1u << (KB_DT_FP8E5M2 + 1)) - 1u)

static const char DEEPSEEK[] = "DeepSeek-AI, DeepSeek-V3 Technical Report (arXiv:2412.19437), section 3.3.2";

static const kb_recipe_info recipes[] = {
    [KB_RECIPE_TENSOR] = { "tensor", KB_SFMT_FP32, 0, 0, 0, 0, 0, TENSOR_DTYPES,
                           "Micikevicius et al., FP8 Formats for Deep Learning (arXiv:2209.05433); cuBLASLt SCALAR_32F",
                           "one FP32 scale per operand, the smallest power of two that fits its amax" },
    [KB_RECIPE_CHANNEL] = { "channel", KB_SFMT_FP32, 1, 0, 1, 0, 0, FP8,
                            "cuBLAS 12.9 outer-vector scaling (cuBLASLt OUTER_VEC_32F)",
                            "one FP32 scale per row of A (token) and per column of B (output channel)" },
    [KB_RECIPE_BLOCK1X128] = { "block1x128", KB_SFMT_FP32, 1, 128, 1, 128, 0, FP8, DEEPSEEK,
                               "one FP32 scale per 1 x 128 block along K of A and of B^T, promoted every 128 K" },
    [KB_RECIPE_BLOCK128X128] = { "block128x128", KB_SFMT_FP32, 1, 128, 128, 128, 0, FP8, DEEPSEEK,
                                 "A (activations) in 1 x 128 blocks, B (weights) in 128 x 128 blocks, FP32 scales" },
    [KB_RECIPE_MX] = { "mx", KB_SFMT_UE8M0, 1, 32, 1, 32, 0, FP8 | FP6 | FP4,
                       "OCP Microscaling Formats (MX) Specification v1.0, sections 5 and 6.3",
                       "MXFP8/MXFP6/MXFP4: one UE8M0 (power of two) scale per 32 elements along K" },
    [KB_RECIPE_NV] = { "nv", KB_SFMT_UE4M3, 1, 16, 1, 16, 1, FP4,
                       "NVIDIA, Introducing NVFP4 for Efficient and Accurate Low-Precision Inference (2025); "
                       "cuBLASLt VEC16_UE4M3",
                       "NVFP4: one UE4M3 scale per 16 fp4 elements along K, and an FP32 scale per tensor" },
};
_Static_assert(sizeof recipes / sizeof recipes[0] == KB_RECIPE_COUNT, "recipes out of sync with kb_recipe");

static const char *const sfmt_names[] = { "fp32", "ue8m0", "ue4m3" };
_Static_assert(sizeof sfmt_names / sizeof sfmt_names[0] == KB_SFMT_COUNT, "scale formats out of sync");

const kb_recipe_info *kb_recipe_get(kb_recipe r) { return (unsigned)r < KB_RECIPE_COUNT ? &recipes[r] : NULL; }
const char *kb_recipe_name(kb_recipe r) { return (unsigned)r < KB_RECIPE_COUNT ? recipes[r].name : "?"; }
const char *kb_scale_fmt_name(kb_scale_fmt f) { return (unsigned)f < KB_SFMT_COUNT ? sfmt_names[f] : "?"; }

int kb_recipe_parse(const char *s, kb_recipe *out)
{
    for (int i = 0; i < KB_RECIPE_COUNT; i++)
        if (strcmp(s, recipes[i].name) == 0) {
            *out = (kb_recipe)i;
            return 0;
        }
    return -1;
}

int kb_recipe_accepts(kb_recipe r, kb_dtype dt, char *why, size_t n)
{
    const kb_recipe_info *ri = kb_recipe_get(r);
    if (ri && (ri->dtypes & KB_DT_BIT(dt)))
        return 1;
    if (!ri)
        snprintf(why, n, "scale=%d is not a recipe", (int)r);
    else if (dt == KB_DT_FP4E2M1)
        snprintf(why, n, "scale=%s: fp4 e2m1 is defined with block scales only (scale=mx or nv)", ri->name);
    else if (dt == KB_DT_FP6E2M3 || dt == KB_DT_FP6E3M2)
        snprintf(why, n, "scale=%s: %s is an MX element format (scale=mx)", ri->name, kb_dtype_name(dt));
    else if (r == KB_RECIPE_NV)
        snprintf(why, n, "scale=nv is NVFP4: fp4e2m1 elements only; %s is not", kb_dtype_name(dt));
    else
        snprintf(why, n, "scale=%s needs a scaled element format (fp8%s); %s is not scaled", ri->name,
                 r == KB_RECIPE_MX ? ", fp6 or fp4" : "", kb_dtype_name(dt));
    return 0;
}

void kb_recipe_block(kb_recipe r, int is_b, int64_t rows, int64_t k, int64_t *br, int64_t *bk)
{
    const kb_recipe_info *ri = kb_recipe_get(r);
    int64_t rr = ri ? (is_b ? ri->b_cols : ri->a_rows) : 0, kk = ri ? (is_b ? ri->b_k : ri->a_k) : 0;
    *br = rr > 0 ? rr : rows;
    *bk = kk > 0 ? kk : k;
}

/* ---- distributions ---- */

static const struct { const char *name, *about; } dists[] = {
    [KB_DIST_UNIFORM] = { "uniform", "uniform in [-1, 1)" },
    [KB_DIST_NORMAL] = { "normal", "standard normal" },
    [KB_DIST_OUTLIERS] = { "outliers", "normal weights; activations normal with a few channels (K columns) 100x "
                                       "larger, as LLM activations have (Dettmers et al., LLM.int8(), 2022)" },
    [KB_DIST_RANGES] = { "ranges", "check input: normal, every scale block scaled by a power of two in 2^-40..2^40" },
    [KB_DIST_ZEROS] = { "zeros", "check input: normal, with all-zero scale blocks and an all-zero row of A" },
    [KB_DIST_EXTREMES] = { "extremes", "check input: values at and beyond the element format's largest magnitude" },
    [KB_DIST_NAN] = { "nan", "check input: normal, one NaN in A and one +Inf in B" },
};
_Static_assert(sizeof dists / sizeof dists[0] == KB_DIST_COUNT, "distributions out of sync with kb_dist");

const char *kb_dist_name(kb_dist d) { return (unsigned)d < KB_DIST_COUNT ? dists[d].name : "?"; }
const char *kb_dist_about(kb_dist d) { return (unsigned)d < KB_DIST_COUNT ? dists[d].about : ""; }

int kb_dist_parse(const char *s, kb_dist *out)
{
    for (int i = 0; i < KB_DIST_COUNT; i++)
        if (strcmp(s, dists[i].name) == 0) {
            *out = (kb_dist)i;
            return 0;
        }
    return -1;
}

/* ---- cuBLASLt scale layouts ---- */

static int64_t roundup(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

static const char *const lt_layout_names[] = { "SCALAR_32F", "OUTER_VEC_32F", "VEC128_32F", "BLK128x128_32F",
                                               "tiled" };
_Static_assert(sizeof lt_layout_names / sizeof lt_layout_names[0] == KB_LT_SCALE_COUNT,
               "scale layout names out of sync with kb_lt_scale_layout");

const char *kb_lt_scale_layout_name(kb_lt_scale_layout l)
{
    return (unsigned)l < KB_LT_SCALE_COUNT ? lt_layout_names[l] : "?";
}

kb_lt_scale_layout kb_recipe_lt_layout(kb_recipe r, int is_b)
{
    switch (r) {
    case KB_RECIPE_CHANNEL: return KB_LT_SCALE_OUTER;
    case KB_RECIPE_BLOCK1X128: return KB_LT_SCALE_VEC128;
    case KB_RECIPE_BLOCK128X128: return is_b ? KB_LT_SCALE_BLK128 : KB_LT_SCALE_VEC128;
    case KB_RECIPE_MX:
    case KB_RECIPE_NV: return KB_LT_SCALE_TILED;
    default: return KB_LT_SCALE_SCALAR;
    }
}

int64_t kb_lt_scale_count(kb_lt_scale_layout l, int64_t rows, int64_t kblocks, int64_t rblocks)
{
    switch (l) {
    case KB_LT_SCALE_OUTER: return rows;
    case KB_LT_SCALE_VEC128: return kblocks * roundup(rows, 4);
    case KB_LT_SCALE_BLK128: return rblocks * roundup(kblocks, 4);
    case KB_LT_SCALE_TILED: return roundup(rows, 128) * roundup(kblocks, 4);
    default: return 1;
    }
}

int64_t kb_lt_scale_offset(kb_lt_scale_layout l, int64_t rows, int64_t kblocks, int64_t r, int64_t kb)
{
    switch (l) {
    case KB_LT_SCALE_OUTER: return r;
    case KB_LT_SCALE_VEC128: return kb * roundup(rows, 4) + r;
    case KB_LT_SCALE_BLK128: return r * roundup(kblocks, 4) + kb;
    case KB_LT_SCALE_TILED:
        return (r / 128 * (roundup(kblocks, 4) / 4) + kb / 4) * 512 + r % 32 * 16 + r % 128 / 32 * 4 + kb % 4;
    default: return 0;
    }
}
