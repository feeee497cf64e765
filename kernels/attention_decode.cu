/* attention_decode.cu - attention/decode: split-KV flash-decoding with grouped-query heads.
 * Included by attention.cu (the family's one source) when the host defines ATTN_DECODE, so
 * no other attention module compiles it; the compile cache follows the include by content.
 *
 * O = softmax(Q K^T * scale [+ causal mask]) V for a few query rows against a long KV cache:
 *   Q, O  [b, h_q, q_len, d]   (q_len = Q_LEN, 1..16: one new token, or a few speculative ones)
 *   K, V  [b, h_kv, kv, d]     (h_q = h_kv x GROUP: GROUP query heads share one K/V head;
 *                               GROUP 1 is multi-head, GROUP = h_q multi-query attention)
 * Causal (CAUSAL_YES) aligns the mask to the bottom right, as FlashAttention 2.1+ does for
 * seqlen_q != seqlen_k: query row i (0-based, of Q_LEN) sees keys j <= kv - Q_LEN + i, i.e.
 * the new tokens are the last Q_LEN positions of the cache. The host requires kv >= Q_LEN.
 *
 * Why mma.sync and not SIMT. Decode streams K and V once: per KV head 4 d bytes (fp16/bf16
 * K and V) per key feed R = GROUP x Q_LEN query rows, R FLOPs per byte (4 R d FLOPs per key).
 * At R = 1 (multi-head, one token) SIMT FP32 would keep up with DRAM (H100: 67 TFLOPS FP32
 * vs 3.35 TB/s, a ridge at 20 FLOP/B); at R = 8 (GQA 8) it is half the ridge before the
 * softmax, shuffles and conversions are counted, and at R = 64..128 (GQA 8 x 8..16 tokens)
 * SIMT would be compute-bound several times over. The tensor cores' ridge (~300 FLOP/B at
 * bf16) keeps every R this variant takes memory-bound; the m16 tiles wasted at small R cost
 * nothing that matters, since the kernel waits on DRAM. exp: one ex2 per score, R per key,
 * against the special-function unit's 16/clk/SM (H100: ~4 T/s; 512 bytes of K/V per key at
 * d = 128 take 0.15 ns of DRAM time, R ex2 take R x 0.25 ps): no limit below R ~ 600.
 *
 * The main lever: every query row of a KV head's group is in the same block, so K and V
 * are read once per head, not GROUP times. The R rows of one KV head are contiguous in Q
 * ([b, h_q, q_len, d] puts head kh's GROUP heads x Q_LEN rows side by side), and a block
 * takes DEC_ROWS = 16 x DEC_MT x DEC_RG of them (all of them when R <= DEC_ROWS; otherwise
 * DEC_NRB row blocks of one split run side by side and share K/V through L2).
 *
 * attn_decode: grid (DEC_NRB x splits, b x h_kv); WARPS warps = DEC_RG row warps x DEC_KG
 * key warps. The block streams the keys of its split, [sp x chunk, min(kv, (sp+1) chunk)),
 * in tiles of DEC_BKV = 16 DEC_KG keys through a STAGES-deep cp.async ring (16-byte copies,
 * one commit group per tile, rows past kv zero-filled). Warp (rg, kg) computes, for its
 * 16 DEC_MT rows and its 16 keys of each tile, S = Q K^T and O += P V with mma.sync
 * m16n8k16 (fp32 accumulation; K by ldmatrix, V by ldmatrix.trans, P rounded to the input
 * dtype as FlashAttention does), with its own online softmax (running max m, sum l, O
 * rescaled by exp2((m_old - m) scale log2 e) whenever m grows). Splitting the keys of a
 * tile across warps (FlashDecoding's split inside the block) keeps every K/V byte read from
 * shared memory once per row warp, instead of once per warp. At the end the key warps'
 * (m, l, O) are merged exactly through shared memory (the rescale by exp2 of the max
 * difference), and the block writes either O / l in the dtype (one split: no second
 * launch) or, per split, O / l in fp32 and its log-sum-exp lse = m scale log2 e + log2 l
 * (base 2), both 16 bytes per store.
 * attn_decode_combine (splits > 1): per output row, O = sum_s 2^(lse_s - max) O_s /
 * sum_s 2^(lse_s - max): exact, because O_s = sum_j p_j v_j / l_s with l_s = 2^(lse_s)
 * 2^(-m scale log2 e). FlashAttention-2's splitkv kernel and its combine do the same
 * (flash_fwd_kernel.h, combine_attn_seqk_parallel; lse in base e there).
 * A row or a warp that has seen no unmasked key yet keeps m = -inf; its rescale uses 0 as
 * the reference (exp2(-inf) = 0, never exp2(-inf + inf) = NaN), and a split with no key
 * for a row (causal, the last split) writes lse = -inf, weight 0 in the combine.
 *
 * Defines (from the harness): KB_T, KB_DTYPE_<X>, CAUSAL, HEAD_D, Q_LEN, GROUP, WARPS,
 * STAGES; DEC_MT (m16 row tiles per warp: 1, or 2 when R > 16 and d <= 128) and DEC_RG (row
 * warps: the power of two covering R / (16 DEC_MT), at most WARPS) chosen by the host
 * (attention_decode_model.c) so that the block geometry has one source.
 */
#ifdef ATTN_DECODE

#include "kb_rowvec.h"   /* kb_store16: a 16-byte store NVVM cannot split */

#ifndef Q_LEN
#define Q_LEN 1
#endif
#ifndef GROUP
#define GROUP 1
#endif
#ifndef WARPS
#define WARPS 4
#endif
#ifndef STAGES
#define STAGES 2
#endif
#ifndef DEC_MT
#define DEC_MT 1
#endif
#ifndef DEC_RG
#define DEC_RG 1
#endif

#define DEC_KG (WARPS / DEC_RG)                        /* key warps: each takes 16 keys of a tile */
#define DEC_THREADS (WARPS * 32)
#define DEC_ROWS (DEC_RG * DEC_MT * 16)                /* query rows per block */
#define DEC_R (GROUP * Q_LEN)                          /* query rows per KV head */
#define DEC_NRB ((DEC_R + DEC_ROWS - 1) / DEC_ROWS)    /* row blocks per KV head and split */
#define DEC_BKV (DEC_KG * 16)                          /* keys per K/V tile */
#define DEC_LD (HEAD_D + 8)       /* shared row stride [elements]: +16 bytes spreads ldmatrix rows over banks */
#define DEC_OLD (HEAD_D + 4)      /* fp32 row stride of the merge and output staging [floats] */
#define DEC_DK (HEAD_D / 16)      /* k-steps of S = Q K^T */
#define DEC_DN (HEAD_D / 8)       /* n-tiles of O = P V */
#define DEC_QREG (DEC_MT * HEAD_D <= 128)  /* Q fragments in registers; else re-read per k-step */
#define DEC_LOG2E 1.4426950408889634f
#ifndef DEC_TMA
#define DEC_TMA 0
#endif
#if DEC_TMA   /* decode_tma (attention_decode_tma.cu): dense tiles of 64-column boxes, 128B-swizzled */
#define DEC_RS 64                         /* elements per row of a 128-byte box */
#define DEC_TILE (DEC_BKV * HEAD_D)       /* elements of one K or V tile */
#define DEC_QTILE (DEC_ROWS * HEAD_D)
#else
#define DEC_RS DEC_LD
#define DEC_TILE (DEC_BKV * DEC_LD)
#define DEC_QTILE (DEC_ROWS * DEC_LD)
#endif
#define DEC_CT 128                /* threads per block of attn_decode_combine */

static_assert(sizeof(KB_T) == 2, "attention/decode takes fp16 or bf16 operands (mma.sync m16n8k16)");
static_assert(HEAD_D % 16 == 0 && HEAD_D <= 256, "HEAD_D must be a multiple of 16 (the k-step), at most 256");
static_assert(WARPS == 1 || WARPS == 2 || WARPS == 4 || WARPS == 8, "WARPS must be 1, 2, 4 or 8");
static_assert(DEC_RG >= 1 && WARPS % DEC_RG == 0, "DEC_RG (row warps) must divide WARPS");
static_assert(DEC_MT == 1 || DEC_MT == 2, "DEC_MT (m16 row tiles per warp) must be 1 or 2");
static_assert(STAGES >= 2 && STAGES <= 4, "STAGES (K/V tiles in flight) must be 2, 3 or 4");
static_assert(Q_LEN >= 1 && Q_LEN <= 16 && GROUP >= 1, "Q_LEN must be 1..16 and GROUP >= 1");
static_assert(DEC_MT * (HEAD_D / 2 + 8 + 4) + (DEC_QREG ? DEC_MT * HEAD_D / 4 : 4) <= 200,
              "O accumulators + S tile + P + Q fragments per thread would crowd the 255-register file");

#if defined(KB_DTYPE_BF16)
#define DEC_MMA kb_mma_m16n8k16_f32_bf16
#else
#define DEC_MMA kb_mma_m16n8k16_f32_f16
#endif

/* Two floats as one 32-bit register of two KB_T, low half first (an A-fragment word). */
__device__ __forceinline__ uint32_t dec_pack2(float lo, float hi)
{
    kb_vec<KB_T, 2> p;
    p.v[0] = kb_from_float<KB_T>(lo);
    p.v[1] = kb_from_float<KB_T>(hi);
    uint32_t w;
    memcpy(&w, &p, sizeof w);
    return w;
}

/* Element (r, c) of a shared tile of `rows` rows at base (r counted from a multiple of 8
 * rows). cp.async: rows of stride DEC_LD. decode_tma: the TMA's layout, HEAD_D / 64 boxes of
 * rows x 128 bytes, 16-byte chunk j of row r at chunk j ^ (r % 8) (the 128B swizzle, PTX ISA
 * 9.7.9.25.4 / CUTLASS Swizzle<3,4,3>; the tile 1024-byte aligned): an ldmatrix's 8 rows of
 * one chunk column hit 8 different chunks, so no bank conflict without padding. */
__device__ __forceinline__ const KB_T *dec_at(const KB_T *base, int rows, int r, int c)
{
#if DEC_TMA
    return base + (c >> 6) * rows * 64 + r * 64 + ((((c >> 3) & 7) ^ (r & 7)) << 3) + (c & 7);
#else
    (void)rows;
    return base + r * DEC_LD + c;
#endif
}

#if !DEC_TMA
/* Rows [r0, r0 + nrows) of a [.., HEAD_D] array into shared rows of stride DEC_LD, 16 bytes
 * per cp.async; rows at or past end are zero-filled (src not read). */
__device__ __forceinline__ void dec_load_rows(KB_T *dst, const KB_T *src, int r0, int nrows, int end)
{
    const int chunks = HEAD_D / 8;   /* 16-byte chunks per row */
    for (int e = threadIdx.x; e < nrows * chunks; e += DEC_THREADS) {
        int r = e / chunks, c = (e % chunks) * 8;
        bool in = r0 + r < end;
        kb_cp_async_16_zfill(dst + r * DEC_LD + c, in ? src + (long long)(r0 + r) * HEAD_D + c : src, in ? 16 : 0);
    }
}
#endif

/* S = Q K^T for the warp's 16 DEC_MT rows (qf in registers, or its rows of qs) and its 16
 * keys (rows of ks): two n-tiles of 8 keys per row tile. */
__device__ __forceinline__ void dec_scores(float sc[DEC_MT][2][4], const uint32_t (*qf)[4], const KB_T *qs,
                                           const KB_T *ks, int lane)
{
    const int lj = lane >> 3, li = lane & 7;   /* ldmatrix: this lane addresses row li of matrix lj */
#pragma unroll
    for (int mi = 0; mi < DEC_MT; mi++)
#pragma unroll
        for (int nt = 0; nt < 2; nt++)
            sc[mi][nt][0] = sc[mi][nt][1] = sc[mi][nt][2] = sc[mi][nt][3] = 0.0f;
#pragma unroll
    for (int kt = 0; kt < DEC_DK; kt++) {
        uint32_t b[4];   /* matrices: keys 0..7 (d lo, d hi), keys 8..15 (d lo, d hi) */
        kb_ldmatrix_x4(b, dec_at(ks, DEC_BKV, (lj >> 1) * 8 + li, kt * 16 + (lj & 1) * 8));
#pragma unroll
        for (int mi = 0; mi < DEC_MT; mi++) {
            uint32_t a[4];
#if DEC_QREG
            a[0] = qf[mi * DEC_DK + kt][0], a[1] = qf[mi * DEC_DK + kt][1];
            a[2] = qf[mi * DEC_DK + kt][2], a[3] = qf[mi * DEC_DK + kt][3];
#else
            kb_ldmatrix_x4(a, dec_at(qs, DEC_ROWS, mi * 16 + (lj & 1) * 8 + li, kt * 16 + (lj >> 1) * 8));
#endif
            DEC_MMA(sc[mi][0], a, b, sc[mi][0]);
            DEC_MMA(sc[mi][1], a, b + 2, sc[mi][1]);
        }
    }
}

/* The warp's Q rows (qw: its first row of the Q tile) as A fragments, k-step by k-step. */
__device__ __forceinline__ void dec_q_frags(uint32_t (*qf)[4], const KB_T *qw, int lane)
{
    const int lj = lane >> 3, li = lane & 7;
#pragma unroll
    for (int mi = 0; mi < DEC_MT; mi++)
#pragma unroll
        for (int kt = 0; kt < DEC_DK; kt++)
            kb_ldmatrix_x4(qf[mi * DEC_DK + kt], dec_at(qw, DEC_ROWS, mi * 16 + (lj & 1) * 8 + li, kt * 16 + (lj >> 1) * 8));
}

/* Scores of keys at or past kv, or (causal) after their row's limit kv - Q_LEN + i, become
 * -inf. key0: the warp's first key; wr0: its first row within the KV head's R rows. Only
 * called for the tiles that reach the first masked key. */
__device__ __forceinline__ void dec_mask(float sc[DEC_MT][2][4], int key0, int wr0, int kv, int lane)
{
    const int g = lane >> 2, t = lane & 3;
    (void)g;   /* the row is read only when causal */
#pragma unroll
    for (int mi = 0; mi < DEC_MT; mi++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int lim = kv;
#if CAUSAL == CAUSAL_YES
            lim = kv - Q_LEN + 1 + (wr0 + mi * 16 + (e >> 1) * 8 + g) % Q_LEN;
#endif
#pragma unroll
            for (int nt = 0; nt < 2; nt++)
                if (key0 + nt * 8 + 2 * t + (e & 1) >= lim)
                    sc[mi][nt][e] = -INFINITY;
        }
}

/* exp2((x - ref) * sl2) for a reference ref that is -inf while a row has seen no key: 0
 * then stands in for it, so nothing becomes exp2(-inf + inf) = NaN. */
__device__ __forceinline__ float dec_ref(float m) { return m == -INFINITY ? 0.0f : m; }

/* Online softmax of the warp's 16 keys: new running max m (of the raw scores; scale > 0
 * keeps the order), O and l rescaled by exp2((m_old - m) sl2), the scores replaced by
 * p = exp2(s sl2 - m sl2) (one FFMA and one ex2 each). A row's values sit in the 4 lanes
 * of a quad: two shuffles per max. l stays per lane until the end. */
__device__ __forceinline__ void dec_softmax(float sc[DEC_MT][2][4], float oacc[DEC_MT][DEC_DN][4],
                                            float m[DEC_MT][2], float l[DEC_MT][2], float sl2)
{
#pragma unroll
    for (int mi = 0; mi < DEC_MT; mi++) {
        float mt[2] = { m[mi][0], m[mi][1] }, alpha[2], msl[2], rs[2] = { 0.0f, 0.0f };
#pragma unroll
        for (int nt = 0; nt < 2; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                mt[e >> 1] = fmaxf(mt[e >> 1], sc[mi][nt][e]);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            mt[h] = fmaxf(mt[h], __shfl_xor_sync(0xffffffffu, mt[h], 1));
            mt[h] = fmaxf(mt[h], __shfl_xor_sync(0xffffffffu, mt[h], 2));
            alpha[h] = exp2f((m[mi][h] - dec_ref(mt[h])) * sl2);
            msl[h] = dec_ref(mt[h]) * sl2;
            m[mi][h] = mt[h];
        }
#pragma unroll
        for (int nt = 0; nt < 2; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                sc[mi][nt][e] = exp2f(fmaf(sc[mi][nt][e], sl2, -msl[e >> 1]));
                rs[e >> 1] += sc[mi][nt][e];
            }
        l[mi][0] = l[mi][0] * alpha[0] + rs[0];
        l[mi][1] = l[mi][1] * alpha[1] + rs[1];
#pragma unroll
        for (int dn = 0; dn < DEC_DN; dn++) {   /* the rescale of O when the running max moves */
            oacc[mi][dn][0] *= alpha[0];
            oacc[mi][dn][1] *= alpha[0];
            oacc[mi][dn][2] *= alpha[1];
            oacc[mi][dn][3] *= alpha[1];
        }
    }
}

/* O += P V over the warp's 16 keys: P as A fragments (the accumulator layout of two n-tiles
 * is the m16k16 A layout), V by ldmatrix.trans from the warp's rows of vs. */
__device__ __forceinline__ void dec_pv(float oacc[DEC_MT][DEC_DN][4], float sc[DEC_MT][2][4], const KB_T *vs,
                                       int lane)
{
    const int lj = lane >> 3, li = lane & 7;
    uint32_t pa[DEC_MT][4];
#pragma unroll
    for (int mi = 0; mi < DEC_MT; mi++) {
        pa[mi][0] = dec_pack2(sc[mi][0][0], sc[mi][0][1]);
        pa[mi][1] = dec_pack2(sc[mi][0][2], sc[mi][0][3]);
        pa[mi][2] = dec_pack2(sc[mi][1][0], sc[mi][1][1]);
        pa[mi][3] = dec_pack2(sc[mi][1][2], sc[mi][1][3]);
    }
#pragma unroll
    for (int dn = 0; dn < DEC_DN; dn += 2) {
        uint32_t b[4];   /* matrices: keys 0..7 / 8..15 of d tile dn, then of dn + 1; transposed */
        kb_ldmatrix_x4_trans(b, dec_at(vs, DEC_BKV, (lj & 1) * 8 + li, dn * 8 + (lj >> 1) * 8));
#pragma unroll
        for (int mi = 0; mi < DEC_MT; mi++) {
            DEC_MMA(oacc[mi][dn], pa[mi], b, oacc[mi][dn]);
            DEC_MMA(oacc[mi][dn + 1], pa[mi], b + 2, oacc[mi][dn + 1]);
        }
    }
}

/* Key warp kg > 0 parks its (m, l, O) for its rows in slot kg - 1 of the merge area:
 * O at [slot][row][DEC_OLD] (rows within the block), m and l at [slot][row]. */
__device__ __forceinline__ void dec_park(float *ro, float *rm, float *rl, float oacc[DEC_MT][DEC_DN][4],
                                         float m[DEC_MT][2], float l[DEC_MT][2], int wr, int lane)
{
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mi = 0; mi < DEC_MT; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int row = wr + mi * 16 + h * 8 + g;
#pragma unroll
            for (int dn = 0; dn < DEC_DN; dn++) {
                kb_vec<float, 2> w;
                w.v[0] = oacc[mi][dn][2 * h];
                w.v[1] = oacc[mi][dn][2 * h + 1];
                kb_store_vec<2>(ro + row * DEC_OLD + dn * 8 + 2 * t, w);
            }
            if (t == 0) {
                rm[row] = m[mi][h];
                rl[row] = l[mi][h];
            }
        }
}

/* Key warp 0 folds in what key warps 1.. parked: the larger max wins, each side rescaled by
 * exp2((its max - new max) sl2) (0 for a side that saw no key). Exact, like the combine. */
__device__ __forceinline__ void dec_merge(const float *ro, const float *rm, const float *rl,
                                          float oacc[DEC_MT][DEC_DN][4], float m[DEC_MT][2], float l[DEC_MT][2],
                                          int wr, int lane, float sl2)
{
    const int g = lane >> 2, t = lane & 3;
    for (int s = 0; s < DEC_KG - 1; s++)
#pragma unroll
        for (int mi = 0; mi < DEC_MT; mi++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                int row = wr + mi * 16 + h * 8 + g;
                float mo = rm[s * DEC_ROWS + row], mn = fmaxf(m[mi][h], mo);
                float a = exp2f((m[mi][h] - dec_ref(mn)) * sl2), b = exp2f((mo - dec_ref(mn)) * sl2);
                l[mi][h] = l[mi][h] * a + rl[s * DEC_ROWS + row] * b;
                m[mi][h] = mn;
#pragma unroll
                for (int dn = 0; dn < DEC_DN; dn++) {
                    kb_vec<float, 2> w = kb_load_vec<2>(ro + (s * DEC_ROWS + row) * DEC_OLD + dn * 8 + 2 * t);
                    oacc[mi][dn][2 * h] = oacc[mi][dn][2 * h] * a + w.v[0] * b;
                    oacc[mi][dn][2 * h + 1] = oacc[mi][dn][2 * h + 1] * a + w.v[1] * b;
                }
            }
}

/* Key warp 0's rows as fp32 O / l into the block's staging rows, and (several splits) each
 * row's base-2 log-sum-exp into lse_row[row] (-inf where the split holds no key of it). */
__device__ __forceinline__ void dec_stage(float *so, float *lse_row, int nrows, float oacc[DEC_MT][DEC_DN][4],
                                          float m[DEC_MT][2], float l[DEC_MT][2], int wr, int lane, float sl2)
{
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int mi = 0; mi < DEC_MT; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int row = wr + mi * 16 + h * 8 + g;
            float inv = l[mi][h] > 0.0f ? 1.0f / l[mi][h] : 0.0f;
#pragma unroll
            for (int dn = 0; dn < DEC_DN; dn++) {
                kb_vec<float, 2> w;
                w.v[0] = oacc[mi][dn][2 * h] * inv;
                w.v[1] = oacc[mi][dn][2 * h + 1] * inv;
                kb_store_vec<2>(so + row * DEC_OLD + dn * 8 + 2 * t, w);
            }
            if (lse_row && t == 0 && row < nrows)
                lse_row[row] = l[mi][h] > 0.0f ? m[mi][h] * sl2 + log2f(l[mi][h]) : -INFINITY;
        }
}

/* The block's nrows staged rows to global memory, 16 bytes per store: in the dtype to O (one
 * split) or in fp32 to the split's partial rows. */
__device__ __forceinline__ void dec_store(const float *so, KB_T *o, float *op, int nrows)
{
    const int chunks = HEAD_D / 8;
    for (int e = threadIdx.x; e < nrows * chunks; e += DEC_THREADS) {
        int r = e / chunks, c = (e % chunks) * 8;
        kb_vec<float, 4> x0 = kb_load_vec<4>(so + r * DEC_OLD + c), x1 = kb_load_vec<4>(so + r * DEC_OLD + c + 4);
        if (op) {
            kb_store16<float>(op + (long long)r * HEAD_D + c, x0);
            kb_store16<float>(op + (long long)r * HEAD_D + c + 4, x1);
        } else {
            kb_vec<KB_T, 8> w;
#pragma unroll
            for (int j = 0; j < 4; j++) {
                w.v[j] = kb_from_float<KB_T>(x0.v[j]);
                w.v[4 + j] = kb_from_float<KB_T>(x1.v[j]);
            }
            kb_store16<KB_T>(o + (long long)r * HEAD_D + c, w);
        }
    }
}

/* The accumulators before the first key: O and l zero, the running max -inf. */
__device__ __forceinline__ void dec_acc_init(float oacc[DEC_MT][DEC_DN][4], float m[DEC_MT][2], float l[DEC_MT][2])
{
#pragma unroll
    for (int mi = 0; mi < DEC_MT; mi++) {
        m[mi][0] = m[mi][1] = -INFINITY;
        l[mi][0] = l[mi][1] = 0.0f;
#pragma unroll
        for (int dn = 0; dn < DEC_DN; dn++)
            oacc[mi][dn][0] = oacc[mi][dn][1] = oacc[mi][dn][2] = oacc[mi][dn][3] = 0.0f;
    }
}

/* A barrier over the consumer warps after the loop: the block's (__syncthreads), or under
 * decode_tma named barrier 1 over the WARPS consumer warps (its producer warp has left). */
__device__ __forceinline__ void dec_consumers_sync()
{
#if DEC_TMA
    kb_bar_sync(1, DEC_THREADS);
#else
    __syncthreads();
#endif
}

/* After the loop (the consumer warps; smem: the block's shared memory, free for the merge area
 * and the output staging): l over each quad, the key warps' merge, the staging and the block's
 * stores of rows row0 .. row0 + nrows - 1, O or the split's partial and log-sum-exp. */
__device__ __forceinline__ void dec_finish(unsigned char *smem, float oacc[DEC_MT][DEC_DN][4], float m[DEC_MT][2],
                                           float l[DEC_MT][2], KB_T *o, float *o_part, float *lse_part,
                                           long long rows_total, long long row0, int nrows, int wr, float sl2)
{
    float *ro = reinterpret_cast<float *>(smem);        /* [DEC_KG-1][DEC_ROWS][DEC_OLD] */
    float *rm = ro + (DEC_KG - 1) * DEC_ROWS * DEC_OLD; /* [DEC_KG-1][DEC_ROWS] */
    float *rl = rm + (DEC_KG - 1) * DEC_ROWS;
    float *so = rl + (DEC_KG - 1) * DEC_ROWS;           /* [DEC_ROWS][DEC_OLD] output staging */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, kg = warp / DEC_RG;
    const int sp = blockIdx.x / DEC_NRB, splits = gridDim.x / DEC_NRB;
#pragma unroll
    for (int mi = 0; mi < DEC_MT; mi++)
#pragma unroll
        for (int h = 0; h < 2; h++) {   /* l over the quad's four lanes */
            l[mi][h] += __shfl_xor_sync(0xffffffffu, l[mi][h], 1);
            l[mi][h] += __shfl_xor_sync(0xffffffffu, l[mi][h], 2);
        }
    dec_consumers_sync();   /* every consumer is done with Q and the ring: they become the merge area */
    if (DEC_KG > 1 && kg > 0)
        dec_park(ro + (kg - 1) * DEC_ROWS * DEC_OLD, rm + (kg - 1) * DEC_ROWS, rl + (kg - 1) * DEC_ROWS, oacc, m, l,
                 wr, lane);
    if (DEC_KG > 1)
        dec_consumers_sync();
    if (kg == 0) {
        if (DEC_KG > 1)
            dec_merge(ro, rm, rl, oacc, m, l, wr, lane, sl2);
        dec_stage(so, splits > 1 ? lse_part + (long long)sp * rows_total + row0 : NULL, nrows, oacc, m, l, wr, lane,
                  sl2);
    }
    dec_consumers_sync();
    dec_store(so, o + row0 * HEAD_D, splits > 1 ? o_part + ((long long)sp * rows_total + row0) * HEAD_D : NULL,
              nrows);
}

#if !DEC_TMA
/* The tiles of one split: cp.async ring of STAGES tiles (one commit group per tile; groups
 * past the last tile are empty, so the wait count stays STAGES - 2), each warp on its keys. */
__device__ __forceinline__ void dec_mainloop(float oacc[DEC_MT][DEC_DN][4], float m[DEC_MT][2], float l[DEC_MT][2],
                                             const uint32_t (*qf)[4], const KB_T *qw, KB_T *kvs, const KB_T *k,
                                             const KB_T *v, int k_begin, int k_end, int kv, int wr0, float sl2)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, kg = warp / DEC_RG;
    const int ntiles = (k_end - k_begin + DEC_BKV - 1) / DEC_BKV;
    const int mask_from = CAUSAL == CAUSAL_YES ? kv - Q_LEN + 1 : kv;   /* the first key some row masks */
    for (int it = 0; it < ntiles; it++) {
        kb_cp_async_wait<STAGES - 2>();   /* tile it has landed (this thread's copies) */
        __syncthreads();                  /* ... everyone's; and the stage of tile it-1 is free again */
        const int nt = it + STAGES - 1;
        if (nt < ntiles) {
            KB_T *st = kvs + (nt % STAGES) * 2 * DEC_BKV * DEC_LD;
            dec_load_rows(st, k, k_begin + nt * DEC_BKV, DEC_BKV, k_end);
            dec_load_rows(st + DEC_BKV * DEC_LD, v, k_begin + nt * DEC_BKV, DEC_BKV, k_end);
        }
        kb_cp_async_commit();
        const KB_T *ks = kvs + (it % STAGES) * 2 * DEC_BKV * DEC_LD + kg * 16 * DEC_LD;
        const int key0 = k_begin + it * DEC_BKV + kg * 16;
        float sc[DEC_MT][2][4];
        dec_scores(sc, qf, qw, ks, lane);
        if (key0 + 16 > mask_from)
            dec_mask(sc, key0, wr0, kv, lane);
        dec_softmax(sc, oacc, m, l, sl2);
        dec_pv(oacc, sc, ks + DEC_BKV * DEC_LD, lane);
    }
}

/* One block: row block rb of KV head blockIdx.y, split sp of the keys (grid.x = DEC_NRB x
 * splits, row blocks fastest so that one split's row blocks run together and share K/V in
 * L2). chunk: keys per split (a multiple of DEC_BKV); rows_total = b x h_q x Q_LEN. With one
 * split O is written here; otherwise o_part [splits][rows_total][HEAD_D] and lse_part
 * [splits][rows_total] for attn_decode_combine. Dynamic shared memory: the Q tile, then the
 * K/V ring; after the loop (Q is read no more) all of it is the key warps' merge area and the
 * output staging. */
extern "C" __global__ void __launch_bounds__(DEC_THREADS)
attn_decode(const KB_T *__restrict__ q, const KB_T *__restrict__ k, const KB_T *__restrict__ v,
            KB_T *__restrict__ o, float *__restrict__ o_part, float *__restrict__ lse_part, int kv, int chunk,
            long long rows_total, float scale)
{
    KB_DYN_SHARED(KB_T, smem);
    KB_T *kvs = smem + DEC_ROWS * DEC_LD;               /* [STAGES][K, V][DEC_BKV][DEC_LD] */
    const int warp = threadIdx.x / 32, rg = warp % DEC_RG;
    const int rb = blockIdx.x % DEC_NRB, sp = blockIdx.x / DEC_NRB;
    const int r0 = rb * DEC_ROWS, nrows = min(DEC_ROWS, DEC_R - r0), wr = rg * DEC_MT * 16;
    const long long head = blockIdx.y, row0 = head * DEC_R + r0;   /* the block's first row of Q and O */
    const int k_begin = sp * chunk, k_end = min(kv, k_begin + chunk);
    const float sl2 = scale * DEC_LOG2E;
    k += head * kv * HEAD_D;
    v += head * kv * HEAD_D;

    /* groups in order: Q, then tiles 0 .. STAGES-2 (empty groups past the last tile) */
    dec_load_rows(smem, q + row0 * HEAD_D, 0, DEC_ROWS, nrows);
    kb_cp_async_commit();
    const int ntiles = (k_end - k_begin + DEC_BKV - 1) / DEC_BKV;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < ntiles) {
            KB_T *st = kvs + s * 2 * DEC_BKV * DEC_LD;
            dec_load_rows(st, k, k_begin + s * DEC_BKV, DEC_BKV, k_end);
            dec_load_rows(st + DEC_BKV * DEC_LD, v, k_begin + s * DEC_BKV, DEC_BKV, k_end);
        }
        kb_cp_async_commit();
    }
    const KB_T *qw = smem + wr * DEC_LD;   /* the warp's Q rows */
    uint32_t qf[DEC_QREG ? DEC_MT * DEC_DK : 1][4];
#if DEC_QREG
    kb_cp_async_wait<STAGES - 1>();        /* Q has landed */
    __syncthreads();
    dec_q_frags(qf, qw, threadIdx.x % 32);
#endif
    float oacc[DEC_MT][DEC_DN][4], m[DEC_MT][2], l[DEC_MT][2];
    dec_acc_init(oacc, m, l);
    dec_mainloop(oacc, m, l, qf, qw, kvs, k, v, k_begin, k_end, kv, r0 + wr, sl2);
    kb_cp_async_wait<0>();   /* only empty groups remain; Q and the ring become the merge area */
    dec_finish(reinterpret_cast<unsigned char *>(smem), oacc, m, l, o, o_part, lse_part, rows_total, row0, nrows, wr,
               sl2);
}
#endif /* !DEC_TMA */

/* The splits of every output row combined: weights 2^(lse_s - max_s lse_s), O = sum w_s O_s
 * / sum w_s. One thread per 8 columns of a row (one 16-byte store of the dtype, two 16-byte
 * loads of fp32 per split); the row's lse values are read by its d/8 threads (L1 hits). */
extern "C" __global__ void __launch_bounds__(DEC_CT)
attn_decode_combine(const float *__restrict__ o_part, const float *__restrict__ lse_part, KB_T *__restrict__ o,
                    long long rows_total, int splits)
{
    const int chunks = HEAD_D / 8;
    long long e = (long long)blockIdx.x * DEC_CT + threadIdx.x;
    if (e >= rows_total * chunks)
        return;
    long long row = e / chunks;
    int c = (int)(e % chunks) * 8;
    float mx = -INFINITY;
    for (int s = 0; s < splits; s++)
        mx = fmaxf(mx, lse_part[s * rows_total + row]);
    float acc[8] = { 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f }, den = 0.0f;
    for (int s = 0; s < splits; s++) {
        float w = exp2f(lse_part[s * rows_total + row] - dec_ref(mx));
        const float *src = o_part + (s * rows_total + row) * HEAD_D + c;
        kb_vec<float, 4> x0 = kb_load_vec<4>(src), x1 = kb_load_vec<4>(src + 4);
#pragma unroll
        for (int j = 0; j < 4; j++) {
            acc[j] = fmaf(w, x0.v[j], acc[j]);
            acc[4 + j] = fmaf(w, x1.v[j], acc[4 + j]);
        }
        den += w;
    }
    float inv = den > 0.0f ? 1.0f / den : 0.0f;
    kb_vec<KB_T, 8> out;
#pragma unroll
    for (int j = 0; j < 8; j++)
        out.v[j] = kb_from_float<KB_T>(acc[j] * inv);
    kb_store16<KB_T>(o + row * HEAD_D + c, out);
}

#include "attention_decode_tma.cu"   /* decode_tma's kernel: empty unless DEC_TMA */

#endif /* ATTN_DECODE */
