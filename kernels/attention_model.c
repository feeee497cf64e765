/* attention_model.c - the attention family's launch geometry and its traffic model for
 * `kbench estimate` (docs/estimate.md). */
#include "attention_model.h"

#include "engine/peaks.h"
#include "kernels/families.h"

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

/* sum_{i=0}^{n-1} floor((a i + b) / m) for n, a, b >= 0, m > 0, in O(log m) steps (the
 * Euclid-like reduction of the classic floor-sum identity): the closed form of every
 * tile count below, so an estimate costs the same at s = 2^30 as at s = 2^11 (issue 28). */
static double floor_sum(int64_t n, int64_t m, int64_t a, int64_t b)
{
    double sum = 0;
    while (n > 0) {
        if (a >= m) {
            sum += (double)n * (double)(n - 1) / 2 * (double)(a / m);
            a %= m;
        }
        if (b >= m) {
            sum += (double)n * (double)(b / m);
            b %= m;
        }
        int64_t y = a * n + b;   /* a < m <= BKV and n <= s / BQ: no overflow */
        if (y < m)
            break;
        n = y / m, b = y % m;
        int64_t t = m;
        m = a, a = t;
    }
    return sum;
}

static int64_t cdiv64(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* K/V tiles the first n query tiles of a head visit: all ceil(s/BKV) each, or, causal,
 * query tile i (rows i BQ ...) the ceil(min((i+1) BQ, s) / BKV) up to the diagonal. */
static double kv_prefix(const kb_case *c, int64_t n)
{
    int64_t s = c->dims[D_S], bq = c->params[P_BQ], bkv = c->params[P_BKV], nfull = s / bq;
    if (c->params[P_CAUSAL] != CAUSAL_YES)
        return (double)n * (double)cdiv64(s, bkv);
    int64_t k = n < nfull ? n : nfull;
    double tiles = floor_sum(k, bkv, bq, bq + bkv - 1);   /* ceil((i+1) BQ / BKV), i < k */
    return n > nfull ? tiles + (double)cdiv64(s, bkv) : tiles;   /* the last, partial query tile */
}

/* K/V tiles all blocks of one head visit and of them those attn_mma masks: the tiles that
 * cross the diagonal of the block's first row (causal: all but the floor((i BQ + 1)/BKV)
 * wholly below it) or end past s. Closed form. */
static void kv_tiles_per_head(const kb_case *c, double *tiles, double *masked)
{
    int64_t s = c->dims[D_S], bq = c->params[P_BQ], bkv = c->params[P_BKV], nq = cdiv64(s, bq);
    *tiles = kv_prefix(c, nq);
    if (c->params[P_CAUSAL] == CAUSAL_YES)
        *masked = *tiles - floor_sum(nq, bkv, bq, 1);
    else
        *masked = s % bkv ? (double)nq : 0.0;
}

/* The busiest SM's work over equal blocks' (kb_traffic.imbalance) for causal attention,
 * whose block of query tile i visits kv(i) tiles, dispatched head by head with the query
 * tile fastest (grid x), so the heaviest blocks come last. Each SM is one processor taking
 * the next block when it finishes one. B <= S blocks: the heaviest block alone, over the
 * mean. Otherwise a fluid estimate: the SMs stay busy until the last block is dispatched,
 * at that moment each runs one of the last S blocks about half done, and the last block
 * dispatched (the heaviest, kv(nq-1)) runs to the end:
 *   T = total/S - (sum of the last S blocks)/(2 S) + w_last,
 * against the same for equal blocks of the mean, total/S + mean/2 (whose own quantisation
 * SM use already charges). Closed form from kv_prefix. */
static double causal_imbalance(const kb_case *c, double bh, int sms)
{
    int64_t nq = cdiv64(c->dims[D_S], c->params[P_BQ]);
    if (c->params[P_CAUSAL] != CAUSAL_YES || sms <= 0 || nq < 2)
        return 1.0;
    double head = kv_prefix(c, nq), mean = head / (double)nq, blocks = bh * (double)nq;
    double w_last = head - kv_prefix(c, nq - 1);
    if (blocks <= sms)
        return w_last / mean;
    int64_t full = (int64_t)sms / nq, rem = (int64_t)sms % nq;
    if ((double)full > bh)
        full = (int64_t)bh, rem = 0;
    double last = (double)full * head + (head - kv_prefix(c, nq - rem)), total = bh * head;
    double t = total / sms - last / (2.0 * sms) + w_last, even = total / sms + mean / 2.0;
    return t > even ? t / even : 1.0;
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

/* naive: three SIMT launches over the materialised fp32 scores (attention.c): the work
 * model's flops on the FP32 pipe, one exp per score on the SFU, its bytes_moved (the score
 * matrix written, read by the softmax's passes and by PV) through L2 and DRAM; the first
 * launch's geometry (a thread per score); each thread's two loads per step, unrolled. */
static int naive_traffic(const kb_case *c, kb_traffic *t)
{
    kb_work w = kb_families[c->family]->work(c);
    double bh = (double)(c->dims[D_B] * c->dims[D_H]), s = (double)c->dims[D_S], d = (double)c->dims[D_D];
    double block = (double)c->params[P_BLOCK], esz = (double)kb_dtype_size(c->dtype);
    memset(t, 0, sizeof *t);
    t->blocks = (int64_t)(bh * ceil(s * s / block));
    t->threads = (int)block;
    t->launches = 3;
    t->simt_flops = w.flops;
    t->sfu_ops = bh * s * s;
    t->warp_insts = bh * s * s * (2.0 * d * 3.0 + 20.0) / 32.0;   /* per score and product: 2 loads, 1 FMA */
    t->l2_bytes = w.bytes_moved;
    t->dram_bytes = w.bytes_moved;
    t->write_bytes = w.bytes_written + 2.0 * 4.0 * bh * s * s;     /* O, the scores and probabilities */
    t->inflight_bytes = 2.0 * esz * 4.0;                           /* ASSUMPTION: 4 steps unrolled */
    return 1;
}

/* The FP32 pipe's work in FLOP-equivalents: an FMA counts 2 (the datasheet FP32 peak counts
 * it so), so does every other FP32 add or multiply (one slot of the FMA pipe); a compare,
 * minimum or maximum (FMNMX, the mask's compare) runs at 64 results per clock per SM (CUDA
 * C++ Programming Guide, arithmetic instruction throughput), i.e. costs fp32_ops / 64 of
 * them: 2 on sm_80 (128 FP32 ops/clk/SM), 4 on sm_86/89/90 (256). Without the GPU, sm_80's 2. */
static double cmp_cost(const kb_traffic_gpu *g)
{
    int ops = g ? kb_peaks_ops_per_clock(g->sm, KB_DT_FP32) : 0;
    return ops > 0 ? ops / 64.0 : 2.0;
}

/* attn_mma's FP32 work per K/V tile (RW rows x BKV keys per warp): per score the FFMA
 * before ex2 and the row sum's FADD (2 each), the running max (one FMNMX); the rescale of
 * the output accumulator, d/BKV FMULs per score (oacc *= alpha, every tile); on the masked
 * fraction two more compare/select per score. */
static double mma_simt_per_score(const kb_case *c, double masked_frac, double cmp)
{
    double d = (double)c->dims[D_D], bkv = (double)c->params[P_BKV];
    return 2.0 + 2.0 + cmp + 2.0 * d / bkv + 2.0 * cmp * masked_frac;
}

/* fused and mma/fa2: per K/V tile and block, both products over whole tiles, K and V from
 * L2 and through shared memory (written once, read by every warp of attn_mma, with Q again
 * at 32 rows per warp, by every thread's slice of fused), softmax on the FP32 pipe and its
 * exponentials on the SFU, P's conversion to 16-bit, in series with the products
 * (serial_pipes: a warp's softmax needs its first product and feeds its second; FA3's
 * ping-pong exists to overlap them);
 * one K/V tile in flight (double buffer); causal blocks uneven (causal_imbalance). */
int kb_attn_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t)
{
    if (c->variant == V_CUDNN)
        return 0;   /* cuDNN's kernels: the work model only */
    if (c->variant == V_NAIVE)
        return naive_traffic(c, t);
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
    t->serial_pipes = 1;
    t->imbalance = causal_imbalance(c, bh, g ? g->sms : 0);
    double products = tiles * 2.0 * (2.0 * bq * bkv * d), warps = t->threads / 32.0;
    double rw = (double)kb_attn_rows_per_warp(c);
    t->sfu_ops = tiles * bq * (bkv + 1.0);                             /* ex2 per score, + the row's rescale */
    double cmp = cmp_cost(g);
    if (mma) {
        t->mma_flops = products;
        t->simt_flops = tiles * bq * bkv * mma_simt_per_score(c, masked_frac, cmp);
        t->cvt_ops = tiles * bq * bkv / 2.0 + bh * s * d / 2.0;           /* P packed to 16-bit; O once */
        double q_again = rw > 16 ? rw * d * esz : 0.0;
        t->smem_bytes = tiles * (kv_bytes + warps * (kv_bytes + q_again));
        t->warp_insts = tiles * warps * mma_insts_per_tile(c, masked_frac, t->threads);
    } else {
        fused_smem_insts(c, tiles, t);
        t->simt_flops = products + tiles * bq * bkv * (6.0 + 2.0 * cmp);  /* scale, sub, add; max, mask */
    }
    t->l2_bytes = tiles * kv_bytes + 2.0 * bh * s * d * esz;
    t->dram_bytes = 4.0 * bh * s * d * esz;                            /* K and V of a head stay in L2 */
    t->write_bytes = bh * s * d * esz;
    t->inflight_bytes = kv_bytes / t->threads;
    return 1;
}
