/* gemm_model.c - GEMM's launch geometry and its traffic model for `kbench estimate`.
 * Counts follow gemm.cu's loops; docs/estimate.md works one case by hand. Every count is
 * over whole tiles (the kernels predicate the edges, the hardware still issues them). */
#include "gemm_model.h"

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

int64_t kb_gemm_threads(const kb_case *c)
{
    const int64_t *p = c->params;
    if (c->variant == V_SMEM)
        return (p[P_BM] / p[P_TM]) * (p[P_BN] / p[P_TN]);
    if (c->variant == V_MMA)
        return (p[P_BM] / p[P_WM]) * (p[P_BN] / p[P_WN]) * 32;
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

kb_geom kb_gemm_geom(const kb_case *c)
{
    kb_geom geom = { { 1, 1, 1 }, { 1, 1, 1 }, 0 };
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

static void naive(const kb_case *c, const kb_traffic_gpu *g, const dims_t *d, kb_traffic *t)
{
    double mnk = (double)d->m * d->n * d->k;
    t->blocks = cdiv(d->n, 32) * cdiv(d->m, 8);
    t->threads = 256;
    t->simt_flops = 2.0 * mnk;
    t->warp_insts = mnk / 32.0 * 5.0;                  /* per k: 2 loads, 1 FMA, 2 address */
    t->l2_bytes = mnk * (d->esz + 1.0) + cd_bytes(d);  /* B: esz per lane; A: one 32 B sector per warp */
    t->dram_bytes = operand_dram(d, 8, 32, 1, g) + cd_bytes(d);
    t->write_bytes = (double)d->m * d->n * d->osz;
    t->inflight_bytes = 2.0 * d->esz;                  /* one k step's two loads */
    (void)c;
}

/* 16-byte chunks of one k-tile's A and B tiles each thread copies. */
static int64_t mma_chunks_per_thread(const kb_case *c, const dims_t *d)
{
    const int64_t *p = c->params;
    int64_t t = kb_gemm_threads(c);
    return cdiv(p[P_BM] * p[P_BK] * d->esz / 16, t) + cdiv(p[P_BN] * p[P_BK] * d->esz / 16, t);
}

static int mma_k_steps(const kb_case *c, const dims_t *d)
{
    int mk = c->dtype == KB_DT_TF32 ? 8 : d->esz == 2 ? 16 : 32;
    return (int)(c->params[P_BK] / mk);
}

/* Instructions one warp issues per k-tile of the mma variant. Copies: cp.async, 4 per
 * chunk; register staging (rows not 16-byte aligned), per chunk: 8/16-bit elements, 5
 * aligned word loads, 12 shifts and ors, a shared store and 6 of addressing and checks
 * (24); 32-bit elements, a load, a shift-or and a predicate each, a store and 6 (18). */
static double mma_warp_insts(const kb_case *c, const dims_t *d, int sm, int async)
{
    const int64_t *p = c->params;
    double mt = (double)(p[P_WM] / 16), ntl = (double)(p[P_WN] / 8), steps = mma_k_steps(c, d);
    int widened = kb_gemm_sub8(c->dtype) || (kb_gemm_lowp(c->dtype) && sm >= 90);
    double gather = d->esz == 4 ? 4 : 16;              /* scalar shared loads per fragment without ldmatrix */
    double a_ld = !d->a_t || d->esz == 2 ? mt : mt * gather;
    double b_ld = d->b_t || d->esz == 2 ? ntl / 2 : ntl / 2 * gather;
    double cvt = c->dtype == KB_DT_TF32 ? mt * 4 + ntl * 2 : widened ? mt * 8 + ntl * 4 : 0;
    double step = mt * ntl * (widened ? 2 : 1) + a_ld + b_ld + cvt;
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
    double epilogue = (double)(p[P_WM] / 16) * (p[P_WN] / 8) * 2 * 4;
    t->warp_insts = (double)tiles_mn * warps * (kt * mma_warp_insts(c, d, g->sm, async) + sk * epilogue);
    t->smem_bytes = tiles * (tile_bytes + warps * (double)(p[P_WM] + p[P_WN]) * bk * d->esz);
    /* split-K: the 4-byte partial sums written, then read by the reduce (gemm_splitk_reduce),
     * counted in DRAM too (conservative: at decode sizes they may stay in L2) */
    double ws = sk > 1 ? (double)sk * d->m * d->n * 4.0 : 0.0;
    t->launches = sk > 1 ? 2 : 1;
    t->l2_bytes = tiles * tile_bytes + cd_bytes(d) + 2.0 * ws;
    t->dram_bytes = operand_dram(d, bm, bn, p[P_GROUP], g) + cd_bytes(d) + 2.0 * ws;
    t->write_bytes = (double)d->m * d->n * d->osz + ws;
    /* cp.async: STAGES-1 tiles of chunks ahead; register staging: one tile */
    double chunks = (double)mma_chunks_per_thread(c, d);
    t->inflight_bytes = async ? (double)(p[P_STAGES] - 1) * chunks * 16.0 : chunks * 16.0;
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
    else
        mma(c, g, &d, &t);
    *out = t;
    return 1;
}
