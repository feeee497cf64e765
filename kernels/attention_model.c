/* attention_model.c - the attention family's launch geometry and its traffic model for
 * `kbench estimate` (docs/estimate.md). */
#include "attention_model.h"

#include <math.h>
#include <string.h>

int kb_attn_is_mma(const kb_case *c) { return c->variant == V_MMA || c->variant == V_FA2; }

int64_t kb_attn_rows_per_warp(const kb_case *c) { return c->variant == V_FA2 ? 32 : 16; }

int64_t kb_attn_threads(const kb_case *c)
{
    int64_t bq = c->params[P_BQ];
    if (kb_attn_is_mma(c))
        return bq / kb_attn_rows_per_warp(c) * 32;
    return bq / c->params[P_RQ] * c->params[P_TPR];
}

int64_t kb_attn_shmem_bytes(const kb_case *c)
{
    int64_t d = c->dims[D_D], bq = c->params[P_BQ], bkv = c->params[P_BKV];
    if (kb_attn_is_mma(c))
        return (bq + 4 * bkv) * (d + 8) * (int64_t)kb_dtype_size(c->dtype);
    return 2 * bkv * d * 4;
}

/* K/V tiles all blocks of one head visit (every tile, or, causal, those up to the
 * diagonal), and of them the tiles attn_mma masks: those that cross the diagonal of the
 * block's rows (causal) or end past s. */
static void kv_tiles_per_head(const kb_case *c, double *tiles, double *masked)
{
    int64_t s = c->dims[D_S], bq = c->params[P_BQ], bkv = c->params[P_BKV], n = 0, nm = 0;
    int causal = c->params[P_CAUSAL] == CAUSAL_YES;
    for (int64_t q0 = 0; q0 < s; q0 += bq) {
        int64_t keys = causal ? (q0 + bq < s ? q0 + bq : s) : s;
        for (int64_t kv0 = 0; kv0 < keys; kv0 += bkv) {
            n++;
            nm += kv0 + bkv > s || (causal && kv0 + bkv - 1 > q0);
        }
    }
    *tiles = (double)n;
    *masked = (double)nm;
}

/* Warp instructions of attn_mma per K/V tile and warp: the mma.sync of both products,
 * their ldmatrix (K, V, and at 32 rows per warp Q again), the cp.async of the tile, and
 * per score a max, the FFMA before ex2, ex2, the row sum and half a pack; plus 3 per score
 * (index, compare, select) on the masked fraction of the tiles; 20 of loop and barriers. */
static double mma_insts_per_tile(const kb_case *c, double masked_frac, double threads)
{
    double d = (double)c->dims[D_D], bkv = (double)c->params[P_BKV], esz = (double)kb_dtype_size(c->dtype);
    double rw = (double)kb_attn_rows_per_warp(c), mt = rw / 16;
    double mmas = mt * (bkv / 8 * d / 16 + d / 8 * bkv / 16);
    double ldm = (bkv / 16 * d / 16) * 2 + (rw > 16 ? mt * d / 16 : 0);
    double per_lane = rw * bkv / 32;
    return mmas + ldm + 2 * bkv * d * esz / 16 / threads + per_lane * (4.5 + 3 * masked_frac) + 20;
}

/* fused, per K/V tile and warp: the tile's K and V rows read by each lane in runs of CW
 * adjacent floats (CW = 4, 2 or 1, the largest dividing d/TPR): 2 x BKV x d/TPR/CW shared
 * loads, each one 128-byte wavefront (the warp's row groups read the same addresses: a
 * broadcast; more when TPR x CW x 4 bytes exceed 128); the fp32 tile written once. Per
 * thread: 2 x BKV x RQ x d/TPR FMAs, those loads, RQ x log2(TPR) shuffles and 6 softmax
 * operations per key and row, the tile's conversion (2 BKV d / threads), 20 of loop. */
static void fused_smem_insts(const kb_case *c, double tiles, kb_traffic *t)
{
    double d = (double)c->dims[D_D], bkv = (double)c->params[P_BKV], tpr = (double)c->params[P_TPR];
    double rq = (double)c->params[P_RQ], dpt = d / tpr, warps = t->threads / 32.0;
    int64_t idpt = c->dims[D_D] / c->params[P_TPR];
    double cw = idpt % 4 == 0 ? 4 : idpt % 2 == 0 ? 2 : 1, loads = 2 * bkv * dpt / cw;
    double wave = tpr * cw * 4 > 128 ? tpr * cw * 4 : 128;
    t->smem_bytes = tiles * (2.0 * bkv * d * 4.0 + warps * loads * wave);
    double per_thread = 2 * bkv * rq * dpt + loads + bkv * rq * (log2(tpr) + 6) + 2 * bkv * d / t->threads + 20;
    t->warp_insts = tiles * warps * per_thread;
}

/* fused and mma/fa2: per K/V tile and block, both products over whole tiles, K and V from
 * L2 and through shared memory (written once, read by every warp of attn_mma, with Q again
 * at 32 rows per warp, by every thread's slice of fused), softmax on the FP32 pipe; one K/V
 * tile in flight (double buffer). */
int kb_attn_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t)
{
    if (c->variant == V_NAIVE || c->variant == V_CUDNN)
        return 0;   /* naive's three launches and cuDNN's kernels: the work model only */
    double bh = (double)(c->dims[D_B] * c->dims[D_H]), s = (double)c->dims[D_S], d = (double)c->dims[D_D];
    double bq = (double)c->params[P_BQ], bkv = (double)c->params[P_BKV], esz = (double)kb_dtype_size(c->dtype);
    int mma = kb_attn_is_mma(c);
    double tiles, masked, kv_bytes = 2.0 * bkv * d * esz;
    kv_tiles_per_head(c, &tiles, &masked);
    double masked_frac = tiles > 0 ? masked / tiles : 0.0;
    tiles *= bh;
    memset(t, 0, sizeof *t);
    t->blocks = (int64_t)(bh * ceil(s / bq));
    t->threads = (int)kb_attn_threads(c);
    t->dyn_smem_bytes = kb_attn_shmem_bytes(c);
    t->launches = 1;
    double products = tiles * 2.0 * (2.0 * bq * bkv * d), warps = t->threads / 32.0;
    double rw = (double)kb_attn_rows_per_warp(c);
    if (mma) {
        t->mma_flops = products;
        t->simt_flops = tiles * bq * bkv * (4.0 + 2.0 * masked_frac);   /* max, FFMA, ex2, sum; mask */
        double q_again = rw > 16 ? rw * d * esz : 0.0;
        t->smem_bytes = tiles * (kv_bytes + warps * (kv_bytes + q_again));
        t->warp_insts = tiles * warps * mma_insts_per_tile(c, masked_frac, t->threads);
    } else {
        fused_smem_insts(c, tiles, t);
        t->simt_flops = products + tiles * bq * bkv * 6.0;               /* scale, max, sub, exp, add, mask */
    }
    t->l2_bytes = tiles * kv_bytes + 2.0 * bh * s * d * esz;
    t->dram_bytes = 4.0 * bh * s * d * esz;                            /* K and V of a head stay in L2 */
    t->write_bytes = bh * s * d * esz;
    t->inflight_bytes = kv_bytes / t->threads;
    (void)g;
    return 1;
}
