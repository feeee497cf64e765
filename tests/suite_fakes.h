/* suite_fakes.h - two small fake families for the suite/plan tests and the planner
 * benchmark, so they depend on the descriptor contract only, not on the real table.
 * Only the fields the loader and planner read are filled.
 *
 *   gelu: dims {n}; variants naive, vec (fp32/fp16/bf16); params BLOCK (all),
 *         VEC (vec only), form = erf|tanh (all).
 *   gemm: dims {m, n, k}; variants naive (fp32), tiled (fp32, tf32),
 *         wmma (fp16, bf16, int8); params BM, BN (tiled, wmma), BK (wmma only).
 */
#ifndef KB_SUITE_FAKES_H
#define KB_SUITE_FAKES_H

#include "engine/family.h"

static const kb_variant fake_gelu_variants[] = {
    { "naive", "gelu_naive", KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16), "one element per thread" },
    { "vec", "gelu_vec", KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16), "VEC elements per thread" },
};
static const char *const fake_gelu_dims[] = { "n" };
static const char *const fake_gelu_forms[] = { "erf", "tanh", NULL };
static const kb_param fake_gelu_params[] = {
    { "BLOCK", 256, NULL, 0, "threads per block", 0, 0, 0 },
    { "VEC", 4, NULL, 1u << 1, "elements per thread (vec only)", 0, 0, 0 },
    { "form", 0, fake_gelu_forms, 0, "erf or tanh approximation", 0, 0, 0 },
};
static const kb_family fake_gelu = {
    .name = "gelu", .source = "gelu.cu", .about = "fake gelu",
    .variants = fake_gelu_variants, .n_variants = KB_COUNT(fake_gelu_variants),
    .dims = fake_gelu_dims, .n_dims = KB_COUNT(fake_gelu_dims),
    .params = fake_gelu_params, .n_params = KB_COUNT(fake_gelu_params),
};

static const kb_variant fake_gemm_variants[] = {
    { "naive", "gemm_naive", KB_DT_BIT(KB_DT_FP32), "one output per thread" },
    { "tiled", "gemm_tiled", KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_TF32), "shared-memory tiles" },
    { "wmma", "gemm_wmma", KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16) | KB_DT_BIT(KB_DT_INT8), "tensor cores" },
};
static const char *const fake_gemm_dims[] = { "m", "n", "k" };
static const kb_param fake_gemm_params[] = {
    { "BM", 64, NULL, (1u << 1) | (1u << 2), "block tile rows", 0, 0, 0 },
    { "BN", 64, NULL, (1u << 1) | (1u << 2), "block tile cols", 0, 0, 0 },
    { "BK", 16, NULL, 1u << 2, "k step (wmma only)", 0, 0, 0 },
};
static const kb_family fake_gemm = {
    .name = "gemm", .source = "gemm.cu", .about = "fake gemm",
    .variants = fake_gemm_variants, .n_variants = KB_COUNT(fake_gemm_variants),
    .dims = fake_gemm_dims, .n_dims = KB_COUNT(fake_gemm_dims),
    .params = fake_gemm_params, .n_params = KB_COUNT(fake_gemm_params),
};

static const kb_family *const fake_fams[] = { &fake_gelu, &fake_gemm };
#define N_FAKE_FAMS 2

#endif /* KB_SUITE_FAKES_H */
