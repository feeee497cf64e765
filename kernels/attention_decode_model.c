/* attention_decode_model.c - attention/decode's launch geometry and its traffic model for
 * `kbench estimate` (docs/estimate.md). The device code is kernels/attention_decode.cu. */
#include "attention_decode_model.h"

#include <string.h>

static int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The split length: CHUNK, else the fewest splits reaching KB_DEC_TARGET_BLOCKS blocks with
 * splits of at least KB_DEC_MIN_CHUNK keys, rounded up to whole tiles. */
static int64_t chunk_of(const kb_case *c, const kb_dec_geom *g)
{
    int64_t s = c->dims[D_S];
    if (c->params[P_CHUNK] > 0)
        return c->params[P_CHUNK];
    int64_t want = cdiv(KB_DEC_TARGET_BLOCKS, g->heads_kv * g->nrb), cap = cdiv(s, KB_DEC_MIN_CHUNK);
    int64_t splits = want < cap ? want : cap;
    return cdiv(cdiv(s, splits), g->bkv) * g->bkv;
}

void kb_dec_geom_of(const kb_case *c, kb_dec_geom *g)
{
    int64_t b = c->dims[D_B], h = c->dims[D_H], s = c->dims[D_S], d = c->dims[D_D];
    int64_t group = c->params[P_GROUP] > 0 ? c->params[P_GROUP] : 1, warps = c->params[P_WARPS];
    memset(g, 0, sizeof *g);
    g->h_kv = h / group;
    g->heads_kv = b * g->h_kv;
    g->r = group * c->params[P_QLEN];
    g->mt = g->r > 16 && d <= 128 ? 2 : 1;
    g->rg = 1;
    while (g->rg < cdiv(g->r, 16 * g->mt) && g->rg < warps)
        g->rg *= 2;
    g->kg = warps / g->rg > 0 ? warps / g->rg : 1;
    g->rows = 16 * g->mt * g->rg;
    g->nrb = cdiv(g->r, g->rows);
    g->bkv = 16 * g->kg;
    g->chunk = chunk_of(c, g);
    g->splits = g->chunk > 0 ? cdiv(s, g->chunk) : 1;
    g->rows_total = b * h * c->params[P_QLEN];
    g->tma = c->variant == V_DECODE_TMA;
    g->threads = 32 * (warps + g->tma);
    int64_t ld = g->tma ? d : d + 8;   /* TMA tiles are dense (the 128B swizzle spreads the banks) */
    int64_t qtile = g->rows * ld * 2, ring = c->params[P_STAGES] * 2 * g->bkv * ld * 2;
    g->merge_bytes = ((g->kg - 1) * g->rows * (d + 4) + 2 * (g->kg - 1) * g->rows + g->rows * (d + 4)) * 4;
    g->shmem = qtile + ring > g->merge_bytes ? qtile + ring : g->merge_bytes;
    if (g->tma)
        g->shmem = 1024 + (g->shmem + 7) / 8 * 8 + 8 * (1 + 2 * c->params[P_STAGES]);
}

/* K/V tiles one row block visits over all splits (the last split's may be short). */
static double tiles_per_head(const kb_case *c, const kb_dec_geom *g)
{
    int64_t s = c->dims[D_S], last = s - (g->splits - 1) * g->chunk;
    return (double)((g->splits - 1) * (g->chunk / g->bkv) + cdiv(last, g->bkv));
}

/* Warp instructions per K/V tile and consumer warp: the mma.sync of both products (2 mt d/16
 * and mt d/8), ldmatrix.x4 (K d/16, V d/16, Q again mt d/16 when not in registers), the
 * tile's cp.async (decode_tma: none; its full-barrier wait and empty arrival instead), 8 mt
 * scores per lane at 4.5 instructions (max, FFMA, ex2, sum, half a pack), the rescale of O
 * (mt d/2 multiplies per lane), 24 of loop, mask test and barrier. */
static double insts_per_tile(const kb_case *c, const kb_dec_geom *g)
{
    double d = (double)c->dims[D_D], mt = (double)g->mt, esz = (double)kb_dtype_size(c->dtype);
    int qreg = g->mt * c->dims[D_D] <= 128;
    double mma = mt * (2 * d / 16 + d / 8), ldm = d / 16 + d / 16 + (qreg ? 0 : mt * d / 16);
    double copy = g->tma ? 6 : 2 * (double)g->bkv * d * esz / 16 / (double)g->threads;
    return mma + ldm + copy + 8 * mt * 4.5 + mt * d / 2 + 24;
}

int kb_dec_traffic(const kb_case *c, const kb_traffic_gpu *gpu, kb_traffic *t)
{
    kb_dec_geom g;
    kb_dec_geom_of(c, &g);
    double d = (double)c->dims[D_D], s = (double)c->dims[D_S], esz = (double)kb_dtype_size(c->dtype);
    double rows = (double)g.rows, bkv = (double)g.bkv, warps = (double)g.threads / 32 - (double)g.tma;
    double tiles = tiles_per_head(c, &g) * (double)(g.heads_kv * g.nrb);   /* (tile, row block) pairs */
    double tile_bytes = 2 * bkv * d * esz;
    double qo_bytes = (double)g.rows_total * d * esz;                       /* Q, and O */
    double part_bytes = g.splits > 1 ? (double)g.splits * (double)g.rows_total * (d + 1) * 4 : 0;
    double kv_bytes = 2 * (double)g.heads_kv * s * d * esz;
    memset(t, 0, sizeof *t);
    t->blocks = g.nrb * g.splits * g.heads_kv;
    t->threads = (int)g.threads;
    t->dyn_smem_bytes = g.shmem;
    t->launches = g.splits > 1 ? 2 : 1;
    t->mma_flops = tiles * 4 * rows * bkv * d;                              /* padded rows and keys */
    /* FP32 pipe per score: max, FFMA, sum (3); each key warp's O rescale per tile; the
     * combine's 2 d + 16 per row and split. The ex2 per score (and the combine's per split)
     * go to the special-function unit (sfu_ops: its own roof, 16 per clock per SM). The
     * softmax sits between the two products as in the square attention: in series. */
    t->simt_flops = tiles * rows * bkv * 3 + tiles * rows * d * (double)g.kg +
                    (g.splits > 1 ? (double)g.splits * (double)g.rows_total * 2 * d : 0);
    t->sfu_ops = tiles * rows * bkv + (g.splits > 1 ? (double)g.splits * (double)g.rows_total : 0);
    t->cvt_ops = tiles * rows * bkv / 2;                                    /* P packed to 16 bits */
    t->serial_pipes = 1;
    /* decode_tma's producer warp per tile: the empty wait, expect_tx, 2 d/64 TMA loads, loop */
    t->warp_insts = tiles * (warps * insts_per_tile(c, &g) + (g.tma ? 2 * d / 64 + 8 : 0));
    int qreg = g.mt * c->dims[D_D] <= 128;
    /* shared: the tile written once, read once per row warp (each key warp its 16 keys), Q
     * again per tile when not in registers; per block the Q tile and the output staging */
    t->smem_bytes = tiles * (tile_bytes * (1 + (double)g.rg) + (qreg ? 0 : warps * 16 * g.mt * d * esz)) +
                    (double)t->blocks * rows * d * (esz + 8);
    t->l2_bytes = tiles * tile_bytes + (double)g.splits * qo_bytes + qo_bytes + 2 * part_bytes;
    t->dram_bytes = kv_bytes + 2 * qo_bytes + 2 * part_bytes;               /* partials: as split-K, to DRAM */
    t->write_bytes = qo_bytes + part_bytes;
    /* cp.async: STAGES - 1 tiles ahead of the one being read; decode_tma's producer refills a
     * slot as soon as it is released, so STAGES tiles (one block's ring) are in flight */
    t->inflight_bytes = ((double)c->params[P_STAGES] - (g.tma ? 0 : 1)) * tile_bytes / (double)g.threads;
    (void)gpu;
    return 1;
}
