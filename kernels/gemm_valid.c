/* gemm_valid.c - which GEMM cases can run, and why not: the family's valid() (gemm.c),
 * its reasons in words. Tile rules mirror gemm.cu's static_asserts. */
#include "core/precision.h"
#include "engine/valid.h"
#include "gemm_valid.h"

#include <stdio.h>

static int mma_k_of(kb_dtype d)
{
    return d == KB_DT_TF32 ? 8 : d == KB_DT_FP16 || d == KB_DT_BF16 ? 16 : 32;
}

#define REFUSE(...) do { snprintf(why, n, __VA_ARGS__); return 0; } while (0)

/* Scaled recipes in gemm.cu's mma kernel: block1x128/block128x128 keep a second set of
 * accumulators (the current 128-K block's partial sums, promoted to the FP32 ones with
 * their scales: DeepSeek-V3's promotion), the rest none; nv on the block-scaled mma.sync
 * steps K by 64. */
static int valid_mma_recipe(const kb_case *c, const kb_target *t, int64_t acc, char *why, size_t n)
{
    int64_t r = c->params[P_SCALE];
    if ((r == KB_RECIPE_BLOCK1X128 || r == KB_RECIPE_BLOCK128X128) && 2 * acc > 128)
        REFUSE("scale=%s keeps a 128-K block's partial sums beside the accumulators: 2 x %lld registers of them "
               "exceed 128 and would spill (a smaller warp tile)", kb_recipe_name((kb_recipe)r), (long long)acc);
    if (r == KB_RECIPE_NV && kb_gemm_block_scaled_mma(c, t->sm) && c->params[P_BK] % 64)
        REFUSE("scale=nv on the block-scaled mma.sync (m16n8k64, 4 UE4M3 scales of 16): BK=%lld is not a multiple of 64",
               (long long)c->params[P_BK]);
    return 1;
}

static int valid_smem(const kb_case *c, char *why, size_t n)
{
    const int64_t *p = c->params;
    int64_t bm = p[P_BM], bn = p[P_BN], bk = p[P_BK], tm = p[P_TM], tn = p[P_TN];
    if (tm < 1 || tn < 1 || bm % tm || bn % tn)
        REFUSE("BM=%lld, BN=%lld must be multiples of TM=%lld, TN=%lld", (long long)bm, (long long)bn, (long long)tm,
               (long long)tn);
    int64_t thr = kb_gemm_threads(c);
    if (thr % 32 || thr > 1024)
        REFUSE("(BM/TM)*(BN/TN) = %lld threads: must be a multiple of 32, at most 1024", (long long)thr);
    if (tm * tn > 128)
        REFUSE("TM*TN = %lld accumulators per thread: more than 128 registers of them would spill", (long long)(tm * tn));
    if ((bm + bn) * bk * 4 > 48 * 1024)
        REFUSE("(BM+BN)*BK*4 = %lld bytes of float tiles exceed the 48 KiB of static shared memory",
               (long long)((bm + bn) * bk * 4));
    return 1;
}

static int valid_mma(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    const int64_t *p = c->params;
    int64_t bm = p[P_BM], bn = p[P_BN], bk = p[P_BK], wm = p[P_WM], wn = p[P_WN], st = p[P_STAGES];
    int mk = mma_k_of(c->dtype);
    if ((c->dtype == KB_DT_FP8E4M3 || c->dtype == KB_DT_FP8E5M2) && !kb_arch_has(t->sm, KB_PATH_MMA_FP8))
        REFUSE("fp8 mma.sync (m16n8k32 e4m3/e5m2) needs sm_89 or newer (the architecture's fp8 mma path); the "
               "target is %s", kb_arch_name(t->sm));
    if (wm < 16 || wm % 16)
        REFUSE("WM=%lld is not a multiple of the mma tile height 16", (long long)wm);
    if (wn < 16 || wn % 16)
        REFUSE("WN=%lld is not a multiple of 16 (B fragments of two n8 tiles per ldmatrix.x4)", (long long)wn);
    if (bm % wm)
        REFUSE("BM=%lld is not a multiple of WM=%lld", (long long)bm, (long long)wm);
    if (bn % wn)
        REFUSE("BN=%lld is not a multiple of WN=%lld", (long long)bn, (long long)wn);
    if (bk < mk || bk % mk)
        REFUSE("BK=%lld is not a multiple of the %s mma depth %d", (long long)bk, kb_dtype_name(c->dtype), mk);
    if (kb_gemm_threads(c) > 1024)
        REFUSE("(BM/WM)*(BN/WN) = %lld warps exceed 1024 threads", (long long)(kb_gemm_threads(c) / 32));
    if (st < 2 || st > 8)
        REFUSE("STAGES=%lld: the pipeline needs 2 to 8 stages", (long long)st);
    if (p[P_SPLITK] < 1 || p[P_SPLITK] > 4)
        REFUSE("SPLITK=%lld: K is split into 1 to 4 slices", (long long)p[P_SPLITK]);
    int64_t acc = wm / 16 * (wn / 8) * 4;
    if (acc > 128)
        REFUSE("warp tile %lldx%lld holds %lld accumulators per thread: more than 128 registers of them would spill",
               (long long)wm, (long long)wn, (long long)acc);
    if (!valid_mma_recipe(c, t, acc, why, n))
        return 0;
    kb_gemm_geo g = kb_gemm_geo_of(c);
    /* rows not 16-byte aligned (pad 1, odd K): each thread holds its staged chunks of the next
     * k-tile in registers (4 each); 8/16-bit chunks also need the funnel-shift words. ptxas
     * spilled 16-bit 128x128x64 tiles at pad 1 (64 + 128 registers) on sm_80 and sm_90. */
    int64_t thr = kb_gemm_threads(c), esz = (int64_t)g.esz;
    int64_t staged = (g.lda * esz % 16 ? (bm * bk * esz / 16 + thr - 1) / thr : 0) +
                     (g.ldb * esz % 16 ? (bn * bk * esz / 16 + thr - 1) / thr : 0);
    if (esz < 4 && acc + 4 * staged > 160)
        REFUSE("rows not 16-byte aligned: %lld register-staged 16-byte chunks per thread (%lld registers) on top of %lld "
               "accumulators exceed 160 registers, which spills (smaller BK or block tile)",
               (long long)staged, (long long)(4 * staged), (long long)acc);
    if (p[P_GROUP] > 1 && ((g.m + bm - 1) / bm) * ((g.n + bn - 1) / bn) > INT32_MAX)
        REFUSE("GROUP=%lld: the grouped block order numbers the blocks with 32-bit int; the grid has more",
               (long long)p[P_GROUP]);
    int64_t smem = kb_gemm_mma_smem_bytes(c);
    if (t->max_shmem_per_block > 0 && smem > t->max_shmem_per_block)
        REFUSE("STAGES*(A+B tiles) = %lld bytes of shared memory; %s allows %d per block", (long long)smem,
               kb_arch_name(t->sm), t->max_shmem_per_block);
    return 1;
}

/* wgmma (gemm_wgmma.cuh): sm_90a, tensor maps, layout nt, 16-byte strides, the tile rules
 * of its static_asserts, shared memory. */
static int valid_wgmma_tile(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    const int64_t *p = c->params;
    int64_t bm = p[P_BM], bn = p[P_BN], bk = p[P_BK], st = p[P_STAGES], esz = (int64_t)kb_dtype_size(c->dtype);
    int pp = p[P_SCHEDULE] == SCHED_PINGPONG;
    int64_t mi = pp ? bm / 64 : bm / 128;   /* 64-row wgmmas per consumer warpgroup */
    if (!pp && bm != 128 && bm != 256)
        REFUSE("BM=%lld: the cooperative schedule's two consumer warpgroups take BM/2 rows each in 64-row wgmmas: BM "
               "is 128 or 256", (long long)bm);
    if (pp && bm != 64 && bm != 128)
        REFUSE("BM=%lld: under pingpong one consumer warpgroup takes the whole tile in 64-row wgmmas: BM is 64 or 128",
               (long long)bm);
    if (bn < 16 || bn > 256 || bn % 16)
        REFUSE("BN=%lld: the wgmma N (and the TMA box) is a multiple of 16 in [16, 256]", (long long)bn);
    if (bk * esz != 32 && bk * esz != 64 && (bk * esz) % 128)
        REFUSE("BK=%lld: BK x %lld bytes must be 32, 64 or a multiple of 128 (the TMA/wgmma swizzle spans)",
               (long long)bk, (long long)esz);
    if (mi * bn / 2 > 128)
        REFUSE("BM=%lld, BN=%lld: %lld accumulators per consumer thread; at most 128 fit beside the rest of its 232 "
               "registers", (long long)bm, (long long)bn, (long long)(mi * bn / 2));
    if (p[P_ACCUM] == ACCUM_TWO && mi * bn > 128)
        REFUSE("accum=two keeps a second f32 accumulator: %lld of them per thread, at most 128 fit",
               (long long)(mi * bn));
    if (st < 2 || st > 8)
        REFUSE("STAGES=%lld: the TMA ring needs 2 to 8 stages", (long long)st);
    if (p[P_GROUP] < 1)
        REFUSE("GROUP=%lld: at least 1", (long long)p[P_GROUP]);
    int64_t smem = kb_gemm_wgmma_smem_bytes(c);
    if (t->max_shmem_per_block > 0 && smem > t->max_shmem_per_block)
        REFUSE("STAGES*(A+B tiles) + the BM x BN output tile = %lld bytes of shared memory; %s allows %d per block",
               (long long)smem, kb_arch_name(t->sm), t->max_shmem_per_block);
    return 1;
}

/* cluster 2x1 / 1x2: thread block clusters of two CTAs and TMA multicast (sm_90a here). Any
 * tile works: one CTA multicasts the whole shared box and a CTA past the M/N edge runs a
 * phantom tile (gemm_wgmma.cuh), so only the target is refused. */
static int valid_wgmma_cluster(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    if (c->params[P_CLUSTER] == CLUSTER_1X1)
        return 1;
    if (!kb_arch_has(t->sm, KB_PATH_CLUSTER) || !kb_arch_has(t->sm, KB_PATH_TMA))
        REFUSE("cluster=%s needs thread block clusters and TMA multicast (.multicast::cluster, sm_90 and newer; PTX "
               "ISA 9.7.9.25); the target is %s", c->params[P_CLUSTER] == CLUSTER_2X1 ? "2x1" : "1x2",
               kb_arch_name(t->sm));
    return 1;
}

static int valid_wgmma(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    const int64_t *p = c->params;
    if (!kb_arch_has(t->sm, KB_PATH_WGMMA))
        REFUSE("gemm/wgmma is built on wgmma.mma_async and setmaxnreg, which only sm_90a has (PTX ISA 9.7.15); the "
               "target is %s (a 9.0 GPU compiles for sm_90a by default; on the emulator or offline use --arch sm_90a)",
               kb_arch_name(t->sm));
    if (t->caps && !kb_valid_tma(t, why, n))   /* caps 0: offline (compile, estimate) */
        return 0;
    if (p[P_LAYOUT] != L_NT)
        REFUSE("gemm/wgmma reads A (M x K) and B (N x K) K-major through TMA: layout nt only (MN-major operands, "
               "f16/bf16 only on wgmma, are not written)");
    int fp8 = c->dtype == KB_DT_FP8E4M3 || c->dtype == KB_DT_FP8E5M2;
    if (p[P_ACCUM] == ACCUM_TWO && !fp8)
        REFUSE("accum=two is for fp8, whose tensor-core accumulation keeps about 14 bits; %s accumulates in full f32 "
               "or exactly in s32", kb_dtype_name(c->dtype));

    kb_gemm_geo g = kb_gemm_geo_of(c);
    int64_t sa = g.lda * (int64_t)g.esz, sb = g.ldb * (int64_t)g.esz, sc = g.ldc * (int64_t)g.osz;
    if (sa % 16 || sb % 16 || sc % 16)
        REFUSE("TMA needs global row strides that are multiples of 16 bytes (cuTensorMapEncodeTiled): lda, ldb, ldc = "
               "%lld, %lld, %lld bytes at pad %d", (long long)sa, (long long)sb, (long long)sc, c->pad);
    if (!valid_wgmma_tile(c, t, why, n))
        return 0;
    if (!valid_wgmma_cluster(c, t, why, n))
        return 0;
    if (((g.m + p[P_BM] - 1) / p[P_BM]) * ((g.n + p[P_BN] - 1) / p[P_BN]) > INT32_MAX)
        REFUSE("more than 2^31 - 1 output tiles: the tile loop counts with 32-bit int");
    return 1;
}

/* cuBLASLt's scaling modes by recipe (cublasLt.h cublasLtMatmulMatrixScale_t; the cuBLAS
 * 12.9 release: outer-vector and 128-element block scaling for FP8 on Hopper; the VEC32_UE8M0
 * and VEC16_UE4M3 modes are Blackwell's): what the documentation rules out; the rest is for
 * its heuristic to answer on the device (skipped with its reason). */
static int valid_cublaslt_recipe(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t r = c->params[P_SCALE];
    kb_gemm_geo g = kb_gemm_geo_of(c);
    if (!kb_gemm_lowp(c->dtype))
        return 1;
    if (c->params[P_LAYOUT] != L_NT)
        REFUSE("cuBLASLt's scaled (FP8/FP6/FP4) matmul takes only the TN form (A transposed, B not, column-major): "
               "kbench's layout nt");
    int cc = kb_arch_cc(t->sm);
    if ((r == KB_RECIPE_MX || r == KB_RECIPE_NV) && cc < 100)
        REFUSE("scale=%s: cuBLASLt's %s scaling needs Blackwell tensor cores (sm_100 and later); the target is %s",
               kb_recipe_name((kb_recipe)r), r == KB_RECIPE_MX ? "VEC32_UE8M0" : "VEC16_UE4M3", kb_arch_name(t->sm));
    if ((r == KB_RECIPE_CHANNEL || r == KB_RECIPE_BLOCK1X128 || r == KB_RECIPE_BLOCK128X128) && cc < 90)
        REFUSE("scale=%s: cuBLASLt's outer-vector and 128-element block scaling came with cuBLAS 12.9 for Hopper "
               "(sm_90 and later); the target is %s", kb_recipe_name((kb_recipe)r), kb_arch_name(t->sm));
    if (c->dtype == KB_DT_FP4E2M1 && (g.lda % 2 || g.ldb % 2))
        REFUSE("fp4 for cuBLASLt is packed two per byte: lda=%lld and ldb=%lld must be even (pad)", (long long)g.lda,
               (long long)g.ldb);
    return 1;
}

/* cuBLASLt: a GPU with the library, and what its documentation requires of FP8; what its
 * heuristic cannot serve on the device (an alignment, a rank) is skipped at setup. */
static int valid_cublaslt(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    const int64_t *p = c->params;
    if (!kb_valid_vendor(t, KB_CAP_CUBLASLT, "cuBLASLt", "libcublasLt.so.13", "KBENCH_LIBCUBLASLT", why, n))
        return 0;
    if (c->dtype == KB_DT_FP8E5M2 && p[P_SCALE] == KB_RECIPE_TENSOR)
        REFUSE("cuBLASLt has no e5m2 x e5m2 matmul (its FP8 operand pairs: e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3)");
    if (!valid_cublaslt_recipe(c, t, why, n))
        return 0;
    if (c->dtype == KB_DT_FP8E4M3 && !kb_arch_has(t->sm, KB_PATH_MMA_FP8))
        REFUSE("cuBLASLt FP8 matmul needs FP8 tensor cores (sm_89 and later); the target is %s", kb_arch_name(t->sm));
    if (c->dtype == KB_DT_FP8E4M3 && p[P_LAYOUT] != L_NT)
        REFUSE("cuBLASLt FP8 matmul takes only the TN form (A transposed, B not, column-major): kbench's layout nt");
    /* cuBLAS documentation, cublasLtMatmul(): IMMA kernels with the regular data ordering
     * take only the TN format (A transposed, B not); the other orderings are IMMA-specific
     * (COL32 and tiled), which kbench does not lay out */
    if (c->dtype == KB_DT_INT8 && p[P_LAYOUT] != L_NT)
        REFUSE("cuBLASLt INT8 matmul takes only the TN form (A transposed, B not, column-major) with the regular data "
               "ordering: kbench's layout nt");
    if (p[P_ALGO] < 0 || p[P_ALGO] > 1023 || p[P_WORKSPACE] < 0 || p[P_WORKSPACE] > 4096)
        REFUSE("algo must be 0..1023 and workspace 0..4096 MiB");
    if (p[P_SEARCH] == SEARCH_ENUMERATE && (p[P_BUDGET] < 1 || p[P_ALGO] >= p[P_BUDGET]))
        REFUSE("enumerate: algo=%lld must be below budget=%lld", (long long)p[P_ALGO], (long long)p[P_BUDGET]);
    return 1;
}

int kb_gemm_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    kb_gemm_geo g = kb_gemm_geo_of(c);
    const int64_t *p = c->params;
    if (c->pad < 0)
        REFUSE("pad=%d: must be >= 0", c->pad);
    /* kernels index rows and leading dimensions with int, offsets with 64 bits */
    if (g.m > INT32_MAX || g.n > INT32_MAX || g.k > INT32_MAX || g.lda > INT32_MAX || g.ldb > INT32_MAX ||
        g.ldc > INT32_MAX)
        REFUSE("dims and leading dimensions must fit in 32-bit int");
    if (p[P_ALPHA] < -16777216 || p[P_ALPHA] > 16777216 || p[P_BETA] < -16777216 || p[P_BETA] > 16777216)
        REFUSE("alpha and beta must be exact in fp32 (|x| <= 2^24)");
    if (c->variant != V_SMEM && !kb_recipe_accepts((kb_recipe)p[P_SCALE], c->dtype, why, n))
        return 0;
    if (c->variant == V_CUBLASLT)
        return valid_cublaslt(c, t, why, n);
    if (c->variant == V_WGMMA)
        return valid_wgmma(c, t, why, n);
    if (c->variant == V_NAIVE) {
        if ((g.m + 7) / 8 > 65535)
            REFUSE("m=%lld needs more than 65535 blocks of 8 rows in grid.y", (long long)g.m);
        return 1;
    }
    int64_t bm = p[P_BM], bn = p[P_BN], bk = p[P_BK];
    if (bm < 1 || bn < 1 || bk < 1)
        REFUSE("BM, BN, BK must be >= 1");
    if ((g.m + bm - 1) / bm > 65535)
        REFUSE("m=%lld needs more than 65535 row blocks of BM=%lld in grid.y", (long long)g.m, (long long)bm);
    return c->variant == V_SMEM ? valid_smem(c, why, n) : valid_mma(c, t, why, n);
}

