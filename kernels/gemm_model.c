/* gemm_model.c - GEMM's launch geometry and its traffic model for `kbench estimate`.
 * Counts follow gemm.cu's loops; docs/estimate.md works one case by hand. Every count is
 * over whole tiles (the kernels predicate the edges, the hardware still issues them). */
#include "gemm_model.h"

#include "core/precision.h"

typedef struct {
    int64_t m, n, k, lda, ldb;
    int a_t, b_t, esz, osz;
    int beta;
} dims_t;


kb_gemm_geo kb_gemm_geo_of(const kb_case *c)
{
    kb_gemm_geo g;
    int l = (int)c->params[P_LAYOUT];
    g.m = c->dims[0], g.n = c->dims[1], g.k = c->dims[2];
    g.a_t = l == L_TN || l == L_TT;
    g.b_t = l == L_NT || l == L_TT;
    g.lda = (g.a_t ? g.m : g.k) + c->pad;
    g.ldb = (g.b_t ? g.k : g.n) + c->pad;
    g.ldc = g.n + c->pad;
    g.a_rows = g.a_t ? g.k : g.m;
    g.b_rows = g.b_t ? g.n : g.k;
    g.esz = kb_dtype_size(c->dtype);
    g.osz = c->dtype == KB_DT_INT8 ? 4 : kb_gemm_lowp(c->dtype) ? 2 : g.esz;   /* int32; fp8/6/4: bf16 C/D */
    return g;
}

static dims_t dims_of(const kb_case *c)
{
    kb_gemm_geo g = kb_gemm_geo_of(c);
    dims_t d = { g.m, g.n, g.k, g.lda, g.ldb, g.a_t, g.b_t, (int)g.esz, (int)g.osz, c->params[P_BETA] != 0 };
    return d;
}

int kb_gemm_block_scaled_mma(const kb_case *c, int sm)
{
    int64_t r = c->params[P_SCALE];
    return c->variant == V_MMA && (r == KB_RECIPE_MX || r == KB_RECIPE_NV) && kb_arch_has(sm, KB_PATH_MMA_BLOCK_SCALE);
}

double kb_gemm_scale_bytes(const kb_case *c, int is_b, int64_t rows, int64_t k)
{
    const kb_recipe_info *ri = kb_recipe_get((kb_recipe)c->params[P_SCALE]);
    if (!kb_gemm_lowp(c->dtype) || !ri)
        return 0.0;
    int64_t br, bk;
    kb_recipe_block((kb_recipe)c->params[P_SCALE], is_b, rows, k, &br, &bk);
    double blocks = (double)((rows + br - 1) / br) * (double)((k + bk - 1) / bk);
    return blocks * (ri->sfmt == KB_SFMT_FP32 ? 4.0 : 1.0) + (ri->tensor_scale ? 4.0 : 0.0);
}

int64_t kb_gemm_threads(const kb_case *c)
{
    const int64_t *p = c->params;
    if (c->variant == V_SMEM)
        return (p[P_BM] / p[P_TM]) * (p[P_BN] / p[P_TN]);
    if (c->variant == V_MMA)
        return (p[P_BM] / p[P_WM]) * (p[P_BN] / p[P_WN]) * 32;
    if (c->variant == V_WGMMA)
        return 384;   /* a producer and two consumer warpgroups */
    return 256;
}

int64_t kb_gemm_mma_smem_bytes(const kb_case *c)
{
    dims_t g = dims_of(c);
    int64_t bm = c->params[P_BM], bn = c->params[P_BN], bk = c->params[P_BK];
    int64_t pipe = c->params[P_STAGES] * (bm + bn) * bk * (int64_t)g.esz;   /* swizzled, unpadded tiles */
    /* the epilogue stages a 16 x (WN + 8) band of 4-byte accumulators per warp in the same bytes */
    int64_t epi = kb_gemm_threads(c) / 32 * 16 * (c->params[P_WN] + 8) * 4;
    return pipe > epi ? pipe : epi;
}

int64_t kb_gemm_wgmma_smem_bytes(const kb_case *c)
{
    dims_t g = dims_of(c);
    int64_t bm = c->params[P_BM], bn = c->params[P_BN], bk = c->params[P_BK], st = c->params[P_STAGES];
    int64_t outs = c->params[P_SCHEDULE] == SCHED_PINGPONG ? 2 : 1;
    return 1024 + st * (bm + bn) * bk * (int64_t)g.esz + outs * bm * bn * (int64_t)g.osz + (2 * st + outs) * 8;
}

int kb_gemm_wgmma_cluster(const kb_case *c, int is_n)
{
    return c->params[P_CLUSTER] == (is_n ? CLUSTER_1X2 : CLUSTER_2X1) ? 2 : 1;
}

kb_geom kb_gemm_geom(const kb_case *c)
{
    kb_geom geom = { { 1, 1, 1 }, { 1, 1, 1 }, 0, { 1, 1, 1 } };
    int64_t m = c->dims[0], n = c->dims[1];
    if (c->variant == V_NAIVE) {
        geom.block[0] = 32, geom.block[1] = 8;
        geom.grid[0] = (unsigned)((n + 31) / 32), geom.grid[1] = (unsigned)((m + 7) / 8);
        return geom;
    }
    int64_t bm = c->params[P_BM], bn = c->params[P_BN];
    geom.block[0] = (unsigned)kb_gemm_threads(c);
    geom.grid[0] = (unsigned)((n + bn - 1) / bn), geom.grid[1] = (unsigned)((m + bm - 1) / bm);
    if (c->variant == V_MMA) {
        geom.shmem_bytes = (size_t)kb_gemm_mma_smem_bytes(c);
        geom.grid[2] = (unsigned)c->params[P_SPLITK];   /* K slices */
    }
    if (c->variant == V_WGMMA) {   /* persistent: a CTA per tile (per tile of a cluster unit) in grid.x, clamped at launch */
        unsigned cm = (unsigned)kb_gemm_wgmma_cluster(c, 0), cn = (unsigned)kb_gemm_wgmma_cluster(c, 1);
        geom.shmem_bytes = (size_t)kb_gemm_wgmma_smem_bytes(c);
        geom.grid[0] = (geom.grid[0] + cn - 1) / cn * ((geom.grid[1] + cm - 1) / cm) * cm * cn, geom.grid[1] = 1;
        geom.cluster[0] = cm * cn;
    }
    return geom;
}

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* [bytes] of A and B one wave of w consecutive blocks reads: the A row bands and B column
 * blocks it touches. Block order (gemm.cu block_coords): group row bands swept together
 * column by column, blockIdx.x fastest (group 1: row by row). */
static double wave_bytes(const dims_t *d, int64_t bm, int64_t bn, int64_t grp, int64_t gm, int64_t gn, int64_t w)
{
    int64_t bands, cols;
    if (w <= grp * gn)   /* a wave inside one group: up to grp bands, w / grp columns */
        bands = min64(grp, w), cols = min64(gn, cdiv(w, grp));
    else                 /* whole groups: their bands, every column */
        bands = min64(gm, cdiv(w, grp * gn) * grp), cols = gn;
    return (double)(bands * bm + cols * bn) * d->k * d->esz;
}

/* DRAM bytes of A and B: compulsory when both fit in half of L2 (or before the resident
 * blocks are known); else every wave of resident blocks reads from DRAM what it touches,
 * the last, partial wave only what its own blocks touch (issue 24: it was charged as a
 * full wave), at least the compulsory bytes. */
static double operand_dram(const dims_t *d, int64_t bm, int64_t bn, int64_t group, const kb_traffic_gpu *g)
{
    double a = (double)d->m * d->k * d->esz, b = (double)d->k * d->n * d->esz;
    int64_t gm = cdiv(d->m, bm), gn = cdiv(d->n, bn), blocks = gm * gn, grp = min64(group, gm);
    if (a + b <= g->l2_bytes / 2 || g->resident_blocks <= 0)
        return a + b;
    int64_t w = min64(g->resident_blocks, blocks), full = blocks / w, last = blocks - full * w;
    double bytes = (double)full * wave_bytes(d, bm, bn, grp, gm, gn, w);
    if (last > 0)
        bytes += wave_bytes(d, bm, bn, grp, gm, gn, last);
    return bytes > a + b ? bytes : a + b;
}

/* C read (beta != 0) and D written, compulsory. */
static double cd_bytes(const dims_t *d)
{
    return (double)d->m * d->n * d->osz * (d->beta ? 2 : 1);
}

/* Instructions of the recipe's scales (gemm.cu promote, bs_codes), per mma tile, from NVRTC
 * 13.0's PTX of gemm_mma for sm_90 (2048x12288x4096 nt, BK 64, warp tile 64 x 32: 32 promotes
 * per k-tile): fp8 block1x128 1203 instructions more than fp8 per tensor, mx 2998 more, fp4 nv
 * 4390 more than fp4 mx - a promote (4 scales read and decoded, 8 FP32 multiplies) about 38
 * with FP32 scales, 94 with UE8M0 codes, 115 with UE4M3; channel 476 more in the epilogue,
 * about 30 per tile. PTX, not SASS: no GPU here to count SASS. The block-scaled mma.sync's
 * codes: a bounds check, a byte load and a shift-or per code, 8 (an ASSUMPTION), for each of
 * A's and B's per K block. */
#define KB_GEMM_PROMOTE_INSTS_FP32 38.0
#define KB_GEMM_PROMOTE_INSTS_UE8M0 94.0
#define KB_GEMM_PROMOTE_INSTS_UE4M3 115.0
#define KB_GEMM_CHANNEL_INSTS 30.0
#define KB_GEMM_BS_CODE_INSTS 8.0
/* fp6/fp4 widened to f16 (kb_mma.h kb_cvt_f16x2_lowp), per two codes where fp8 takes one
 * cvt: the same PTX, fp6 mx 5579 instructions more than fp8 mx for 96 widenings, 58 each. */
#define KB_GEMM_LOWP_WIDEN_INSTS 58.0

static double promote_insts(const kb_case *c)
{
    const kb_recipe_info *ri = kb_recipe_get((kb_recipe)c->params[P_SCALE]);
    if (!ri || ri->sfmt == KB_SFMT_FP32)
        return KB_GEMM_PROMOTE_INSTS_FP32;
    return ri->sfmt == KB_SFMT_UE8M0 ? KB_GEMM_PROMOTE_INSTS_UE8M0 : KB_GEMM_PROMOTE_INSTS_UE4M3;
}

static void naive(const kb_case *c, const kb_traffic_gpu *g, const dims_t *d, kb_traffic *t)
{
    double mnk = (double)d->m * d->n * d->k;
    t->blocks = cdiv(d->n, 32) * cdiv(d->m, 8);
    t->threads = 256;
    /* per k: 2 loads, 1 FMA, 2 address; a block or channel recipe (gemm.cu GEMM_SCALED) also
     * reads the two elements' scales and multiplies by them: half a promote */
    int scaled = kb_gemm_lowp(c->dtype) && c->params[P_SCALE] != KB_RECIPE_TENSOR;
    t->simt_flops = (scaled ? 4.0 : 2.0) * mnk;
    t->warp_insts = mnk / 32.0 * (5.0 + (scaled ? promote_insts(c) / 2.0 : 0.0));
    t->l2_bytes = mnk * (d->esz + 1.0) + cd_bytes(d);  /* B: esz per lane; A: one 32 B sector per warp */
    t->dram_bytes = operand_dram(d, 8, 32, 1, g) + cd_bytes(d);
    t->write_bytes = (double)d->m * d->n * d->osz;
    t->inflight_bytes = 2.0 * d->esz;                  /* one k step's two loads */
}

/* 16-byte chunks of one k-tile's A and B tiles each thread copies. */
static int64_t mma_chunks_per_thread(const kb_case *c, const dims_t *d)
{
    const int64_t *p = c->params;
    int64_t t = kb_gemm_threads(c);
    return cdiv(p[P_BM] * p[P_BK] * d->esz / 16, t) + cdiv(p[P_BN] * p[P_BK] * d->esz / 16, t);
}

/* The mma variant's K per step: 8 tf32, 16 fp16/bf16, 32 for 8-bit tiles, 64 for nv on the
 * block-scaled m16n8k64 (gemm.cu MMA_K). */
static int mma_k_of(const kb_case *c, const dims_t *d, int sm)
{
    if (kb_gemm_block_scaled_mma(c, sm) && c->params[P_SCALE] == KB_RECIPE_NV)
        return 64;
    return c->dtype == KB_DT_TF32 ? 8 : d->esz == 2 ? 16 : 32;
}

static int mma_k_steps(const kb_case *c, const dims_t *d, int sm)
{
    return (int)(c->params[P_BK] / mma_k_of(c, d, sm));
}

/* Promotes per mma tile and k-step: mx/nv's blocks at once below sm_120a (one per 32 or 16 K),
 * the 128-K blocks' every 128 K, none otherwise (channel and tensor scale in the epilogue). */
static double promotes_per_step(const kb_case *c, int mk, int sm)
{
    int64_t r = c->params[P_SCALE];
    if (!kb_gemm_lowp(c->dtype) || kb_gemm_block_scaled_mma(c, sm))
        return 0.0;
    if (r == KB_RECIPE_MX || r == KB_RECIPE_NV)
        return mk / (r == KB_RECIPE_MX ? 32.0 : 16.0);
    return r == KB_RECIPE_BLOCK1X128 || r == KB_RECIPE_BLOCK128X128 ? mk / 128.0 : 0.0;
}


/* Per warp and k-step: the recipe's instructions (*insts) and FP32 operations (*flops: a
 * promote's 2 per accumulator, 4 accumulators per lane). */
static void recipe_step(const kb_case *c, const dims_t *d, int sm, double tiles, double *insts, double *flops)
{
    int mk = mma_k_of(c, d, sm);
    double pr = promotes_per_step(c, mk, sm);
    *insts = tiles * pr * promote_insts(c);
    *flops = tiles * pr * 32.0 * 4.0 * 2.0;
    if (kb_gemm_block_scaled_mma(c, sm))
        *insts += tiles * 2.0 * (mk / (c->params[P_SCALE] == KB_RECIPE_NV ? 16.0 : 32.0)) * KB_GEMM_BS_CODE_INSTS;
}

/* Instructions one warp issues per k-tile of the mma variant. Copies: cp.async, 4 per
 * chunk; register staging (rows not 16-byte aligned), per chunk: 8/16-bit elements, 5
 * aligned word loads, 12 shifts and ors, a shared store and 6 of addressing and checks
 * (24); 32-bit elements, a load, a shift-or and a predicate each, a store and 6 (18). */
static double mma_warp_insts(const kb_case *c, const dims_t *d, int sm, int async)
{
    const int64_t *p = c->params;
    double mt = (double)(p[P_WM] / 16), ntl = (double)(p[P_WN] / 8), steps = mma_k_steps(c, d, sm);
    int bs = kb_gemm_block_scaled_mma(c, sm);
    int widened = !bs && kb_gemm_widened(c->dtype, sm);
    double gather = d->esz == 4 ? 4 : 16;              /* scalar shared loads per fragment without ldmatrix */
    double a_ld = !d->a_t || d->esz == 2 ? mt : mt * gather;
    double b_ld = d->b_t || d->esz == 2 ? ntl / 2 : ntl / 2 * gather;
    double cvt = c->dtype == KB_DT_TF32 ? mt * 4 + ntl * 2 : widened ? mt * 8 + ntl * 4 : 0;
    if (widened && kb_gemm_sub8(c->dtype))
        cvt *= KB_GEMM_LOWP_WIDEN_INSTS;
    double scales, unused;
    recipe_step(c, d, sm, mt * ntl, &scales, &unused);
    double step = mt * ntl * (widened ? 2 : 1) + a_ld + b_ld + cvt + scales;
    double chunks = (double)mma_chunks_per_thread(c, d);
    double copy = async ? chunks * 4.0 : chunks * (d->esz < 4 ? 24.0 : 18.0);
    return steps * step + copy + 12.0;                 /* + wait, barrier, commit, loop */
}

static void mma(const kb_case *c, const kb_traffic_gpu *g, const dims_t *d, kb_traffic *t)
{
    const int64_t *p = c->params;
    int64_t bm = p[P_BM], bn = p[P_BN], bk = p[P_BK], kt = cdiv(d->k, bk);
    double warps = (double)(kb_gemm_threads(c) / 32);
    int async = d->lda * d->esz % 16 == 0 && d->ldb * d->esz % 16 == 0;  /* gemm.c GEMM_ASYNC_A/B */
    int64_t sk = p[P_SPLITK], tiles_mn = cdiv(d->m, bm) * cdiv(d->n, bn);
    t->blocks = tiles_mn * sk;   /* split-K: SPLITK slices of each output tile */
    t->threads = (int)kb_gemm_threads(c);
    t->dyn_smem_bytes = kb_gemm_mma_smem_bytes(c);
    double tiles = (double)tiles_mn * kt, tile_bytes = (double)(bm + bn) * bk * d->esz;
    t->mma_flops = 2.0 * tiles * bm * bn * bk;
    double mtiles = (double)(p[P_WM] / 16) * (p[P_WN] / 8), epilogue = mtiles * 2 * 4, unused, sflops;
    recipe_step(c, d, g->sm, mtiles, &unused, &sflops);
    t->simt_flops = (double)tiles_mn * warps * kt * mma_k_steps(c, d, g->sm) * sflops;
    if (kb_gemm_lowp(c->dtype) && p[P_SCALE] == KB_RECIPE_CHANNEL) {   /* acc *= sa(m) sb(n): 2 scales each */
        epilogue += mtiles * KB_GEMM_CHANNEL_INSTS;
        t->simt_flops += (double)tiles_mn * warps * sk * mtiles * 32.0 * 4.0 * 2.0;
    }
    t->warp_insts = (double)tiles_mn * warps * (kt * mma_warp_insts(c, d, g->sm, async) + sk * epilogue);
    t->smem_bytes = tiles * (tile_bytes + warps * (double)(p[P_WM] + p[P_WN]) * bk * d->esz);
    /* split-K: the 4-byte partial sums written, then read by the reduce (gemm_splitk_reduce),
     * counted in DRAM too (conservative: at decode sizes they may stay in L2) */
    double ws = sk > 1 ? (double)sk * d->m * d->n * 4.0 : 0.0;
    t->launches = sk > 1 ? 2 : 1;
    /* the recipe's scales: read once from DRAM, by every block of a row band (A) or column (B) */
    double sa = kb_gemm_scale_bytes(c, 0, d->m, d->k), sb = kb_gemm_scale_bytes(c, 1, d->n, d->k);
    t->l2_bytes = tiles * tile_bytes + cd_bytes(d) + 2.0 * ws + sa * cdiv(d->n, bn) + sb * cdiv(d->m, bm);
    t->dram_bytes = operand_dram(d, bm, bn, p[P_GROUP], g) + cd_bytes(d) + 2.0 * ws + sa + sb;
    t->write_bytes = (double)d->m * d->n * d->osz + ws;
    /* cp.async: STAGES-1 tiles of chunks ahead; register staging: one tile */
    double chunks = (double)mma_chunks_per_thread(c, d);
    t->inflight_bytes = async ? (double)(p[P_STAGES] - 1) * chunks * 16.0 : chunks * 16.0;
}

/* wgmma (gemm_wgmma.cuh). The persistent grid's min(tiles, SMs) blocks walk the output tiles
 * one after another, as a grid of one block per tile with one block resident per SM would
 * (its shared memory allows no second): counted so. Per k-tile the TMA writes the A and B
 * tiles to shared memory and the wgmmas read A once and B once per warpgroup on the tile
 * (cooperative: two, each with half of A; ping-pong: one); per tile the epilogue writes D's
 * staging tile and the TMA store reads it (beta: C loaded into it and read too). Instructions
 * per k-tile: each consumer warp on the tile (cooperative 8, ping-pong 4) BK esz/32 x MI
 * wgmmas (MI = its rows / 64) with two descriptor computations each, plus ~12 (wait, fence,
 * commit, wait_group, arrive, loop); the producer warp 2 x boxes TMA copies + 6; per tile each
 * of those warps ~4 per accumulator (scale, C, convert, shared store) + 20. The TMA keeps
 * STAGES tiles in flight per block: as bytes per thread for the latency roof. Cluster 2x1 / 1x2:
 * the multicast operand leaves L2 once per cluster of 2 CTAs (its L2 -> SM bytes halve); the
 * shared-memory writes stay per CTA. */
static void wgmma(const kb_case *c, const kb_traffic_gpu *g, const dims_t *d, kb_traffic *t)
{
    const int64_t *p = c->params;
    int64_t bm = p[P_BM], bn = p[P_BN], bk = p[P_BK], kt = cdiv(d->k, bk);
    int64_t tiles_mn = cdiv(d->m, bm) * cdiv(d->n, bn), span = bk * d->esz < 128 ? bk * d->esz : 128;
    int pp = p[P_SCHEDULE] == SCHED_PINGPONG;
    double warps = pp ? 4.0 : 8.0, wgs = pp ? 1.0 : 2.0, mi = (double)(pp ? bm / 64 : bm / 128);
    double ksteps = (double)(bk * d->esz / 32), boxes = (double)(bk * d->esz / span);
    t->blocks = tiles_mn;
    t->threads = (int)kb_gemm_threads(c);
    t->dyn_smem_bytes = kb_gemm_wgmma_smem_bytes(c);
    t->tensor_path = KB_TENSOR_WGMMA;
    double tiles = (double)tiles_mn * kt, tile_bytes = (double)(bm + bn) * bk * d->esz;
    t->mma_flops = 2.0 * tiles * bm * bn * bk;
    double epi = (double)bm * bn * d->osz * (d->beta ? 4 : 2);
    t->smem_bytes = tiles * (tile_bytes + ((double)bm + wgs * (double)bn) * bk * d->esz) + (double)tiles_mn * epi;
    double promote = p[P_ACCUM] == ACCUM_TWO ? mi * (double)bn / 2.0 : 0.0;   /* two-level: an FADD per accumulator */
    t->warp_insts = tiles * (warps * (3.0 * ksteps * mi + 12.0 + promote) + 2.0 * boxes + 6.0) +
                    (double)tiles_mn * warps * (mi * (double)bn / 2.0 * 4.0 + 20.0);
    /* cluster 2x1 (1x2): B's (A's) box is multicast to the 2 CTAs, read from L2 once per cluster */
    double cm = (double)kb_gemm_wgmma_cluster(c, 0), cn = (double)kb_gemm_wgmma_cluster(c, 1);
    t->l2_bytes = tiles * ((double)bm / cn + (double)bn / cm) * bk * d->esz + cd_bytes(d);
    t->dram_bytes = operand_dram(d, bm, bn, p[P_GROUP], g) + cd_bytes(d);
    t->write_bytes = (double)d->m * d->n * d->osz;
    t->inflight_bytes = (double)p[P_STAGES] * tile_bytes / (double)t->threads;
}

static void smem(const kb_case *c, const kb_traffic_gpu *g, const dims_t *d, kb_traffic *t)
{
    const int64_t *p = c->params;
    int64_t bm = p[P_BM], bn = p[P_BN], bk = p[P_BK], kt = cdiv(d->k, bk), tm = p[P_TM], tn = p[P_TN];
    int vec = d->lda * d->esz % 16 == 0 && d->ldb * d->esz % 16 == 0;
    t->blocks = cdiv(d->m, bm) * cdiv(d->n, bn);
    t->threads = (int)kb_gemm_threads(c);
    double tiles = (double)t->blocks * kt, elems = (double)(bm + bn) * bk;
    t->simt_flops = 2.0 * tiles * bm * bn * bk;
    double loads = elems / t->threads / (vec ? 16.0 / d->esz : 1.0) * 3.0;
    double per_warp = (double)bk * (tm * tn + (tm + tn) / 4.0 + 2.0) + loads + 10.0;
    t->warp_insts = tiles * (t->threads / 32.0) * per_warp;
    t->smem_bytes = tiles * (elems * 4.0 + (double)t->threads * bk * (tm + tn) * 4.0);
    t->l2_bytes = tiles * elems * d->esz + cd_bytes(d);
    t->dram_bytes = operand_dram(d, bm, bn, 1, g) + cd_bytes(d);
    t->write_bytes = (double)d->m * d->n * d->osz;
    t->inflight_bytes = elems * d->esz / t->threads;   /* the tile's loads, all issued before the barrier */
}

int kb_gemm_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *out)
{
    if (c->variant == V_CUBLASLT)
        return 0;
    dims_t d = dims_of(c);
    kb_traffic t = { 0 };
    t.launches = 1;
    if (c->variant == V_NAIVE)
        naive(c, g, &d, &t);
    else if (c->variant == V_SMEM)
        smem(c, g, &d, &t);
    else if (c->variant == V_WGMMA)
        wgmma(c, g, &d, &t);
    else
        mma(c, g, &d, &t);
    *out = t;
    return 1;
}
