/* attention_fa3.cu - attention/fa3: FlashAttention-3's forward structure on sm_90a (TMA,
 * mbarriers, warp-specialised wgmma). Included by attention.cu (the family's one source) when
 * the host defines ATTN_FA3; empty otherwise. Written from the FA3 paper (Shah et al. 2024,
 * sections 3.1-3.2) and the PTX ISA (9.7.15 wgmma, 9.7.9.25 cp.async.bulk.tensor, 9.7.13
 * mbarrier and bar); no code taken from the FlashAttention sources.
 *
 * A block owns FA_BM = 128 query rows of one (batch, head), blockIdx.x the row block,
 * blockIdx.y the (batch, head). 384 threads, three warpgroups:
 *   warpgroup 0, the producer: setmaxnreg.dec 24; one elected thread TMA-loads the Q tile
 *     (qbar) and then, for each K/V tile j of the block's range, K_j and V_j into stage
 *     j % STAGES of a ring, each on its own full barrier (fullk, fullv: S_j may start when K_j
 *     has landed), after the stage's empty barrier says both consumers released it.
 *   warpgroups 1 and 2, the consumers (setmaxnreg.inc 240): warpgroup cw owns query rows
 *     64cw .. 64cw+63 of the block. Per K/V tile j:
 *       S_j = Q K_j^T       wgmma m64nBKVk16, Q and K from the 128B-swizzled TMA tiles
 *                           (both K-major), HEAD_D/16 of them, one commit group;
 *       O += P_{j-1} V_{j-1} wgmma m64nHEAD_Dk16 with A = P_{j-1} in registers (the RS form)
 *                           and B = V_{j-1} MN-major (the transpose immediate: V is [key][d],
 *                           d contiguous), issued right after S_j so the softmax of tile j
 *                           (below) overlaps it (FA3's intra-warpgroup pipelining);
 *       softmax of S_j      running max m and sum l per row (the 4 lanes of a quad share a
 *                           row: shuffles xor 1, 2), exp2 with scale*log2(e) folded in; the
 *                           mask only on tiles that end past s or cross the diagonal; once
 *                           O's group retired (wait_group 0) O is rescaled by
 *                           exp2(m_old - m_new) and the stage of tile j-1 released;
 *       P_j                 the S accumulator fragment converted in place to the RS A
 *                           fragment: thread (w, g, t) holds S rows 16w+g, 16w+g+8, columns
 *                           8i+2t, 8i+2t+1 (i = 0..BKV/8-1), which for k-step kk is exactly
 *                           the m16k16 A fragment {(g,2t..) (g+8,2t..) (g,2t+8..) (g+8,2t+8..)}
 *                           of columns 16kk..16kk+15 (PTX ISA 9.7.15.5.1.1): no shuffles.
 *     Ping-pong (FA3 3.1): the two consumers take turns issuing their wgmmas, ordered by
 *     named barriers 3 (warpgroup 0 may issue) and 4 (warpgroup 1 may issue): warpgroup 0's
 *     turn t is followed by warpgroup 1's turn t, then warpgroup 0's turn t+1, so one
 *     warpgroup's softmax runs while the other's GEMMs hold the tensor cores. Each side
 *     bar.syncs its own barrier before a turn and bar.arrives on the other's after it.
 *   The epilogue: O / l rounded to the dtype into the warpgroup's own rows of the Q tile
 *     (its S wgmmas have retired; the layout is the TMA's 128-byte swizzle), fence.proxy.async,
 *     named barrier 1 + cw (128 threads), and the warpgroup's first thread TMA-stores its
 *     64 x HEAD_D rows (the TMA writes only rows < s). LSE: with LSE_YES, lse[row] =
 *     m * scale + ln(l) (natural log) for rows < s, plain stores.
 * Causal: the block stops at the tile holding its last row's key; both consumers run the
 * same tiles (their empty arrivals must match), so warpgroup 0 sees one fully masked tile
 * at most. Rows past s (zero Q from the TMA's fill) compute harmlessly and are not stored.
 * Defines: HEAD_D (64, 128, 256), BKV (keys per tile: 64, 128, 176 ...; a multiple of 16),
 * STAGES (>= 2), CAUSAL, LSE (LSE_YES: write the log-sum-exp), KB_T, KB_DTYPE_FP16 | KB_DTYPE_BF16
 * | KB_DTYPE_FP8E4M3.
 * fp8 e4m3 (attention_fa3_fp8.cuh): Q and K tiles of 64-byte rows with the 64-byte swizzle, V
 * from the pre-pass's transposed Vt, P V by k32 steps with P in the fp8 A fragment, O in bf16
 * through its own staging buffer, scale = softmax scale x q_descale x k_descale and O x o_scale
 * (v_descale), the kernel's extra last argument.
 */
#ifdef ATTN_FA3
#ifndef STAGES
#define STAGES 2
#endif
#ifndef LSE
#define LSE 0
#define LSE_YES 1
#endif
#define LSE_OUT (LSE == LSE_YES)
#if defined(KB_DTYPE_FP16)
#define FA_MMA kb_wgmma_f32_f16
#define FA_MMA_RS kb_wgmma_f32_f16_rs
#elif defined(KB_DTYPE_BF16)
#define FA_MMA kb_wgmma_f32_bf16
#define FA_MMA_RS kb_wgmma_f32_bf16_rs
#elif defined(KB_DTYPE_FP8E4M3)
#define FA_MMA kb_wgmma_f32_e4m3
#define FA_MMA_RS kb_wgmma_f32_e4m3_rs
#define FA_FP8 1
#else
#error "attention/fa3: fp16, bf16 or fp8e4m3"
#endif
#ifndef FA_FP8
#define FA_FP8 0
#endif

#define FA_BM 128                           /* query rows per block, 64 per consumer warpgroup */
#define FA_THREADS 384
#define FA_NBOX (HEAD_D / 64)               /* 128-byte (64-element) boxes along the head dim */
#define FA_ESZ ((int)sizeof(KB_T))
#define FA_ROWB (64 * FA_ESZ)               /* bytes of a box row: 128 (16-bit), 64 (fp8) */
#define FA_SW (FA_FP8 ? KB_WG_SW_64B : KB_WG_SW_128B)   /* the TMA swizzle of Q and K, = FA_ROWB */
#define FA_Q_BYTES (FA_BM * HEAD_D * FA_ESZ)
#define FA_KV_BYTES (BKV * HEAD_D * FA_ESZ) /* one K or V tile */
#define FA_O_BYTES (FA_FP8 ? FA_BM * HEAD_D * 2 : 0)   /* fp8: the bf16 O staging; else O reuses Q */
#define FA_REGS_PRODUCER 24                 /* 128 x 24 + 256 x 240 = 64512 <= 65536 */
#define FA_REGS_CONSUMER 240
#define FA_LOG2E 1.4426950408889634f

static_assert(HEAD_D % 64 == 0 && HEAD_D <= 256, "attention/fa3: HEAD_D is 64, 128 or 256 (128-byte TMA boxes)");
static_assert(BKV % 16 == 0 && BKV >= 16 && BKV <= 256, "attention/fa3: BKV is a multiple of 16 in [16, 256]");
static_assert(STAGES >= 2, "attention/fa3: STAGES >= 2");
static_assert(HEAD_D / 2 + BKV / 2 + BKV / (FA_FP8 ? 8 : 4) <= 200,
              "attention/fa3: O, S and P fragments exceed the consumer's registers");
static_assert(!FA_FP8 || BKV % 64 == 0, "attention/fa3: fp8 key tiles are whole 64-key boxes of Vt");

#if FA_FP8
typedef kb_bf16 fa_out_t;                   /* FA3's fp8 forward writes bf16 */
#else
typedef KB_T fa_out_t;
#define FA_P_OFFSET 0.0f
#define FA_PA_STEPS (BKV / 16)
#endif

/* Two floats as one register of two T, the lower column first (an A-fragment word, O). */
template <typename T> __device__ __forceinline__ uint32_t fa_pack2_as(float lo, float hi)
{
    kb_vec<T, 2> p;
    p.v[0] = kb_from_float<T>(lo);
    p.v[1] = kb_from_float<T>(hi);
    uint32_t w;
    memcpy(&w, &p, sizeof w);
    return w;
}
__device__ __forceinline__ uint32_t fa_pack2(float lo, float hi) { return fa_pack2_as<KB_T>(lo, hi); }

#if FA_FP8
#include "attention_fa3_fp8.cuh"
#else
/* V_j: FA_NBOX boxes of BKV keys x 64 head-dim columns, as K. */
__device__ __forceinline__ void fa_load_v(unsigned char *vs, const kb_tmap *tv, uint64_t *bar, int j, int bh)
{
#pragma unroll
    for (int b = 0; b < FA_NBOX; b++)
        kb_tma_load(vs + b * BKV * 128, tv, bar, 64 * b, j * BKV, bh);
}

/* O += P V: P's BKV/16 A fragments from registers, V of stage vs MN-major (the transpose
 * immediate): rows of 128 bytes = 64 head-dim columns, 8-key groups 1024 bytes apart (SBO),
 * 64-column boxes BKV*128 bytes apart (LBO). */
__device__ __forceinline__ void fa_pv(float (&o)[HEAD_D / 2], const uint32_t (&pa)[FA_PA_STEPS][4], const unsigned char *vs)
{
#pragma unroll
    for (int kk = 0; kk < BKV / 16; kk++) {
        const uint64_t db = kb_wgmma_desc(vs + kk * 16 * 128, KB_WG_SW_128B, BKV * 128, 1024);
        FA_MMA_RS<HEAD_D, 0, 0, 1>(o, pa[kk], db, 1);
    }
}
#endif /* FA_FP8 */

/* The producer's elected thread: Q once, then K_j and V_j for j in [0, nt) into the ring. */
__device__ __forceinline__ void fa_produce(const kb_tmap *tq, const kb_tmap *tk, const kb_tmap *tv, unsigned char *sq,
                                           unsigned char *sk, unsigned char *sv, uint64_t *qbar, uint64_t *fullk,
                                           uint64_t *fullv, uint64_t *empty, int nt)
{
    const int bh = (int)blockIdx.y, q0 = (int)blockIdx.x * FA_BM;
    kb_mbar_arrive_expect_tx(qbar, FA_Q_BYTES);
#pragma unroll
    for (int b = 0; b < FA_NBOX; b++)
        kb_tma_load(sq + b * FA_BM * FA_ROWB, tq, qbar, 64 * b, q0, bh);
    for (int j = 0; j < nt; j++) {
        const int s = j % STAGES;
        kb_mbar_wait_parity(&empty[s], (uint32_t)(((j / STAGES) & 1) ^ 1));   /* both consumers freed it */
        kb_mbar_arrive_expect_tx(&fullk[s], FA_KV_BYTES);
#pragma unroll
        for (int b = 0; b < FA_NBOX; b++)
            kb_tma_load(sk + s * FA_KV_BYTES + b * BKV * FA_ROWB, tk, &fullk[s], 64 * b, j * BKV, bh);
        kb_mbar_arrive_expect_tx(&fullv[s], FA_KV_BYTES);
        fa_load_v(sv + s * FA_KV_BYTES, tv, &fullv[s], j, bh);
    }
}

/* S = Q K^T for the warpgroup's 64 rows (Q rows at sq + 64cw rows) against stage ks: 32-byte
 * k-steps (k16, fp8 k32), FA_ROWB / 32 of them per box. */
__device__ __forceinline__ void fa_qk(float (&sc)[BKV / 2], const unsigned char *sq, const unsigned char *ks, int cw)
{
#pragma unroll
    for (int kk = 0; kk < HEAD_D * FA_ESZ / 32; kk++) {
        const int box = kk / (FA_ROWB / 32), in = kk % (FA_ROWB / 32) * 32;
        const uint64_t da = kb_wgmma_desc(sq + box * FA_BM * FA_ROWB + cw * 64 * FA_ROWB + in, FA_SW, 16, 8 * FA_ROWB);
        const uint64_t db = kb_wgmma_desc(ks + box * BKV * FA_ROWB + in, FA_SW, 16, 8 * FA_ROWB);
        FA_MMA<BKV>(sc, da, db, kk > 0);
    }
}

/* Keys past s, and causal keys after the row, to -inf. Row r0 of this thread (and r0 + 8). */
__device__ __forceinline__ void fa_mask(float (&sc)[BKV / 2], int kv0, int r0, int s)
{
    const int t = (int)threadIdx.x % 4;
#pragma unroll
    for (int i = 0; i < BKV / 8; i++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int lim = s;
#if CAUSAL == CAUSAL_YES
            lim = min(s, r0 + 8 * (e >> 1) + 1);
#endif
            if (kv0 + 8 * i + 2 * t + (e & 1) >= lim)
                sc[4 * i + e] = -INFINITY;
        }
}

/* The online softmax of one tile: new running max per row (h = 0: row g, 1: row g+8), the
 * factor alpha O and l must be scaled by, P = exp2((S - m) * sl2 + FA_P_OFFSET) in sc (the
 * offset: fp8's range, attention_fa3_fp8.cuh; 0 for 16-bit types), l updated. */
__device__ __forceinline__ void fa_softmax(float (&sc)[BKV / 2], float (&m)[2], float (&l)[2], float (&alpha)[2],
                                           float sl2)
{
#pragma unroll
    for (int h = 0; h < 2; h++) {
        float mx = m[h];
#pragma unroll
        for (int i = 0; i < BKV / 8; i++)
            mx = fmaxf(mx, fmaxf(sc[4 * i + 2 * h], sc[4 * i + 2 * h + 1]));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        alpha[h] = m[h] == -INFINITY ? 0.0f : exp2f((m[h] - mx) * sl2);
        m[h] = mx;
        const float mb = (mx == -INFINITY ? 0.0f : mx * sl2) - FA_P_OFFSET;   /* no key yet: p = 0, not NaN */
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < BKV / 8; i++)
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const float p = exp2f(fmaf(sc[4 * i + 2 * h + e], sl2, -mb));   /* one FFMA per score */
                sc[4 * i + 2 * h + e] = p;
                sum += p;
            }
        l[h] = l[h] * alpha[h] + sum;   /* this thread's columns; the quad's sum at the end */
    }
}

#if !FA_FP8
/* P (the S fragment after fa_softmax) as the RS A fragments of P V, k-step kk = keys
 * 16kk..16kk+15: {row g cols 2t.., row g+8 cols 2t.., row g cols 2t+8.., row g+8 cols 2t+8..}. */
__device__ __forceinline__ void fa_pack_p(uint32_t (&pa)[FA_PA_STEPS][4], const float (&sc)[BKV / 2])
{
#pragma unroll
    for (int kk = 0; kk < BKV / 16; kk++) {
        const float *lo = sc + 8 * kk, *hi = sc + 8 * kk + 4;
        pa[kk][0] = fa_pack2(lo[0], lo[1]);
        pa[kk][1] = fa_pack2(lo[2], lo[3]);
        pa[kk][2] = fa_pack2(hi[0], hi[1]);
        pa[kk][3] = fa_pack2(hi[2], hi[3]);
    }
}
#endif /* FA_FP8 */

__device__ __forceinline__ void fa_rescale(float (&o)[HEAD_D / 2], const float (&alpha)[2])
{
#pragma unroll
    for (int i = 0; i < HEAD_D / 8; i++) {
        o[4 * i + 0] *= alpha[0], o[4 * i + 1] *= alpha[0];
        o[4 * i + 2] *= alpha[1], o[4 * i + 3] *= alpha[1];
    }
}

/* O x o_scale / l rounded to fa_out_t into the warpgroup's rows of the staging tile so (the
 * Q tile for 16-bit types), laid out as the TMA's 128-byte swizzle does (16-byte chunk c of
 * row r at chunk c ^ (r % 8)), then TMA-stored. */
__device__ __forceinline__ void fa_epilogue(const float (&o)[HEAD_D / 2], const float (&l)[2], unsigned char *so,
                                            const kb_tmap *to, int cw, int lt, float o_scale)
{
    const int w = lt / 32, g = lt % 32 / 4, t = lt % 4;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int r = 64 * cw + 16 * w + g + 8 * h;
        const float inv = l[h] > 0.0f ? o_scale / l[h] : 0.0f;
#pragma unroll
        for (int i = 0; i < HEAD_D / 8; i++) {
            const int col = 8 * i + 2 * t, box = col / 64, byte = col % 64 * 2;
            unsigned char *p = so + box * FA_BM * 128 + r * 128 + ((byte / 16) ^ (r % 8)) * 16 + byte % 16;
            const uint32_t v = fa_pack2_as<fa_out_t>(o[4 * i + 2 * h] * inv, o[4 * i + 2 * h + 1] * inv);
            memcpy(p, &v, 4);
        }
    }
    kb_fence_proxy_async();                   /* the generic writes, visible to the TMA store */
    kb_bar_sync(1 + cw, 128);
    if (lt == 0) {
#pragma unroll
        for (int b = 0; b < FA_NBOX; b++)
            kb_tma_store(to, so + b * FA_BM * 128 + cw * 64 * 128, 64 * b, (int)blockIdx.x * FA_BM + 64 * cw,
                         (int)blockIdx.y);
        kb_bulk_commit();
        kb_bulk_wait<0>();                    /* the store has read (and written) before exit */
    }
}

/* Whether tile j needs the mask for rows r_lo.. of this warpgroup: it ends past s, or
 * (causal) its last key lies after the warpgroup's first row. */
__device__ __forceinline__ bool fa_needs_mask(int j, int r_lo, int s)
{
    const int end = (j + 1) * BKV;
    return end > s || (CAUSAL == CAUSAL_YES && end - 1 > r_lo);
}

/* Ping-pong: wait for this warpgroup's turn (barrier 3 + cw), and hand the tensor cores to
 * the other after issuing (arrive on 3 + the other). Warpgroup 0's first turn needs no wait;
 * warpgroup 1 does not hand over after its last turn (the counts on each barrier match). */
__device__ __forceinline__ void fa_turn_begin(int cw, int turn)
{
    if (cw == 1 || turn > 0)
        kb_bar_sync(3 + cw, 256);
}
__device__ __forceinline__ void fa_turn_end(int cw, int turn, int turns)
{
    if (cw == 0 || turn + 1 < turns)
        kb_bar_arrive(3 + (1 - cw), 256);
}

/* One consumer warpgroup over the block's nt tiles: nt + 1 turns (S_0; S_j with PV_{j-1};
 * PV_{nt-1}). */
__device__ __forceinline__ void fa_consume(const kb_tmap *to, float *lse, unsigned char *sq, const unsigned char *sk,
                                           const unsigned char *sv, uint64_t *qbar, uint64_t *fullk, uint64_t *fullv,
                                           uint64_t *empty, int nt, int s, float scale, unsigned char *so, float o_scale)
{
    const int ct = (int)threadIdx.x - 128, cw = ct / 128, lt = ct % 128;
    const int r0 = (int)blockIdx.x * FA_BM + 64 * cw + 16 * (lt / 32) + lt % 32 / 4;   /* row g; r0 + 8: g+8 */
    const int r_lo = (int)blockIdx.x * FA_BM + 64 * cw;
    const float sl2 = scale * FA_LOG2E;
    float o[HEAD_D / 2], sc[BKV / 2], m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.0f, 0.0f }, alpha[2];
    uint32_t pa[FA_PA_STEPS][4];
#pragma unroll
    for (int i = 0; i < HEAD_D / 2; i++)
        o[i] = 0.0f;
    kb_mbar_wait_parity(qbar, 0u);
    for (int j = 0; j <= nt; j++) {
        const int st = j % STAGES, sp = (j + STAGES - 1) % STAGES;
        if (j < nt)
            kb_mbar_wait_parity(&fullk[st], (uint32_t)((j / STAGES) & 1));
        if (j > 0)
            kb_mbar_wait_parity(&fullv[sp], (uint32_t)(((j - 1) / STAGES) & 1));
        fa_turn_begin(cw, j);
        kb_wgmma_fence();
        if (j < nt) {
            fa_qk(sc, sq, sk + st * FA_KV_BYTES, cw);
            kb_wgmma_commit();
        }
        if (j > 0) {
            fa_pv(o, pa, sv + sp * FA_KV_BYTES);
            kb_wgmma_commit();
        }
        fa_turn_end(cw, j, nt + 1);
        if (j < nt) {
            if (j > 0)
                kb_wgmma_wait<1>();           /* S_j retired; PV_{j-1} may still run */
            else
                kb_wgmma_wait<0>();
            if (fa_needs_mask(j, r_lo, s))
                fa_mask(sc, j * BKV, r0, s);
            fa_softmax(sc, m, l, alpha, sl2);
        }
        kb_wgmma_wait<0>();                   /* PV_{j-1} retired: O and P are free, stage j-1 too */
        if (j > 0)
            kb_mbar_arrive(&empty[sp]);
        if (j < nt) {
            fa_rescale(o, alpha);
            fa_pack_p(pa, sc);
        }
    }
#pragma unroll
    for (int h = 0; h < 2; h++) {
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
#if LSE_OUT
        if (lt % 4 == 0 && r0 + 8 * h < s)
            lse[(long long)blockIdx.y * s + r0 + 8 * h] = m[h] * scale + logf(l[h]) - FA_P_OFFSET * 0.6931471805599453f;
#endif
    }
    (void)lse;
    fa_epilogue(o, l, so, to, cw, lt, o_scale);
}

/* Shared memory (dynamic, aligned up to 1024 here; the host sizes it as kb_attn_fa3_smem):
 * the Q tile, STAGES K tiles, STAGES V tiles, (fp8) the bf16 O tile, qbar, fullk[STAGES],
 * fullv[STAGES], empty[STAGES]. fp8 takes one more argument, o_scale (v_descale). */
#if FA_FP8
#define FA_EXTRA_PARAMS , float o_scale
#define FA_O_SCALE o_scale
#else
#define FA_EXTRA_PARAMS
#define FA_O_SCALE 1.0f
#endif
extern "C" __global__ void __launch_bounds__(FA_THREADS, 1)
    attn_fa3(const __grid_constant__ kb_tmap tm_q, const __grid_constant__ kb_tmap tm_k,
             const __grid_constant__ kb_tmap tm_v, const __grid_constant__ kb_tmap tm_o, float *lse, int s,
             float scale FA_EXTRA_PARAMS)
{
    KB_DYN_SHARED(unsigned char, dyn);
    unsigned char *sq = reinterpret_cast<unsigned char *>(((uintptr_t)dyn + 1023) & ~(uintptr_t)1023);
    unsigned char *sk = sq + FA_Q_BYTES, *sv = sk + STAGES * FA_KV_BYTES;
    unsigned char *so = FA_FP8 ? sv + STAGES * FA_KV_BYTES : sq;
    uint64_t *qbar = reinterpret_cast<uint64_t *>(sv + STAGES * FA_KV_BYTES + FA_O_BYTES);
    uint64_t *fullk = qbar + 1, *fullv = fullk + STAGES, *empty = fullv + STAGES;
    const int kv_end = CAUSAL == CAUSAL_YES ? min(s, ((int)blockIdx.x + 1) * FA_BM) : s;
    const int nt = (kv_end + BKV - 1) / BKV;
    if (threadIdx.x == 0) {
        kb_mbar_init(qbar, 1);
        for (int i = 0; i < STAGES; i++) {
            kb_mbar_init(&fullk[i], 1);
            kb_mbar_init(&fullv[i], 1);
            kb_mbar_init(&empty[i], 256);
        }
        kb_fence_proxy_async();               /* the initialised barriers, visible to the TMA */
    }
    __syncthreads();
    if (threadIdx.x < 128) {
        kb_setmaxnreg_dec<FA_REGS_PRODUCER>();
        if (threadIdx.x < 32 && kb_elect_one())
            fa_produce(&tm_q, &tm_k, &tm_v, sq, sk, sv, qbar, fullk, fullv, empty, nt);
        return;
    }
    kb_setmaxnreg_inc<FA_REGS_CONSUMER>();
    fa_consume(&tm_o, lse, sq, sk, sv, qbar, fullk, fullv, empty, nt, s, scale, so, FA_O_SCALE);
}

#endif /* ATTN_FA3 */
