/* attention_fa3.cu - attention/fa3: FlashAttention-3's forward structure on sm_90a (TMA,
 * mbarriers, warp-specialised wgmma). Included by attention.cu (the family's one source) when
 * the host defines ATTN_FA3; empty otherwise. Written from the FA3 paper (Shah et al. 2024,
 * sections 3.1-3.2) and the PTX ISA (9.7.15 wgmma, 9.7.9.25 cp.async.bulk.tensor, 9.7.13
 * mbarrier and bar); no code taken from the FlashAttention sources.
 *
 * A work tile is FA_BM = 128 query rows (row block mb) of one (batch, head) hb. 384 threads,
 * three warpgroups:
 *   warpgroup 0, the producer: setmaxnreg.dec 24; one elected thread, per work tile: hands the
 *     tile's coordinates to the consumers (below), then TMA-loads K_j and V_j of each K/V tile j of
 *     the tile's range into stage it % STAGES of a ring (it counts K/V tiles across work tiles:
 *     the ring's stages and phases run on), each on its own full barrier (fullk, fullv: S_j may
 *     start when K_j has landed), after the stage's empty barrier says both consumers released
 *     it; after the first K/V tile's loads it TMA-loads the Q tile (qbar) once qempty says both
 *     consumer warpgroups' output stores of the previous work tile have read the Q buffer.
 * Scheduling (SCHED; FlashAttention-3's hopper/tile_scheduler.hpp in idea, written from its
 * description, not its code):
 *   SCHED_GRID: one work tile per block, blockIdx.x the row block, blockIdx.y the (batch, head)
 *     (the same code, its tile loop cut after one tile).
 *   SCHED_PERSISTENT: gridDim.x = min(SMs, tiles) blocks; block b's first tile is b, each next one
 *     comes from a global atomic counter (index = atomicAdd(ctr, 1) + gridDim.x), fetched by the
 *     producer when it has issued its current tile's loads, so an SM takes the next tile as it
 *     frees up (dynamic, not a static stride: causal tiles differ in length up to nmb-fold, and
 *     a fixed stride would leave the unlucky SMs with the long ones). Tile index i is mapped
 *     longest-first: (batch, head)s in L2 sections of SECT heads (K and V of a section within
 *     32 MiB, FA3's rule); within a section the heads are interleaved fastest and the row blocks
 *     run from the last (the most key tiles under causal masking) to the first. The fetch that
 *     returns the launch's last index (ctr = tiles - 1: every block's last fetch is past the end,
 *     so there are exactly `tiles` fetches) sets the counter back to 0: the next launch, a CUDA
 *     Graph replay included, starts from 0 without a memset.
 *   The hand-off: the producer writes the tile's row block and (batch, head) (row block -1: no
 *     more work) into slot t % 2 of shared memory after the slot's empty mbarrier (sche, 256
 *     consumer arrivals) completed and arrives on its full mbarrier (schf, count 1: arrive
 *     releases the write); every consumer thread waits on schf, reads the slot (again for the
 *     epilogue: not held in registers across the tile) and arrives on sche once the tile is
 *     done. Work tile t of the block uses parity (t / 2) & 1 on the slot's barriers and t & 1
 *     on qbar and qempty.
 *   warpgroups 1 and 2, the consumers (setmaxnreg.inc 240): warpgroup cw owns query rows
 *     64cw .. 64cw+63 of the work tile. Per K/V tile j:
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
 *     bar.syncs its own barrier before a turn and bar.arrives on the other's after it. Turns
 *     count on across the block's work tiles (nt + 1 per tile), so the alternation holds at
 *     tile boundaries too: only warpgroup 0's first turn waits for nobody, and warpgroup 0
 *     takes warpgroup 1's hand-over after its very last turn once no tile is left.
 *   The epilogue: O / l rounded to the dtype into the warpgroup's own rows of the Q tile (fp8:
 *     bf16 into its own O tile; below) (its S wgmmas have retired; the layout is the TMA's
 *     128-byte swizzle), fence.proxy.async,
 *     named barrier 1 + cw (128 threads), and the warpgroup's first thread TMA-stores its
 *     64 x HEAD_D rows (the TMA writes only rows < s), waits until the store has read the
 *     buffer (wait_group.read) and arrives on qempty (count 2). LSE: with LSE_YES, lse[row] =
 *     m * scale + ln(l) (natural log) for rows < s, plain stores.
 * Causal: a work tile stops at the K/V tile holding its last row's key; both consumers run the
 * same tiles (their empty arrivals must match), so warpgroup 0 sees one fully masked tile
 * at most. Rows past s (zero Q from the TMA's fill) compute harmlessly and are not stored.
 * Defines: HEAD_D (64, 128, 256), BKV (keys per tile: 64, 128, 176 ...; a multiple of 16),
 * STAGES (>= 2), CAUSAL, LSE (LSE_YES: write the log-sum-exp), SCHED (SCHED_GRID |
 * SCHED_PERSISTENT), KB_T, KB_DTYPE_FP16 | KB_DTYPE_BF16 | KB_DTYPE_FP8E4M3.
 * fp8 e4m3 (attention_fa3_fp8.cuh): Q and K tiles of 64-byte rows with the 64-byte swizzle, V
 * from the pre-pass's transposed Vt, P V by k32 steps with P in the fp8 A fragment, O in bf16
 * through its own staging buffer so (after the V ring), scale = softmax scale x q_descale x
 * k_descale and O x o_scale (v_descale), the kernel's extra last argument. Across work tiles
 * qempty still guards the Q buffer (its last readers, the tile's S wgmmas, retired before the
 * epilogue, so the arrival after the store is late but safe), and so's reuse is ordered by the
 * same chain: a warpgroup writes so for tile t+1 only after its storing thread's wait_group.read
 * of tile t (that thread is one of the 128 the warpgroup's next ping-pong bar.sync waits for, and
 * tile t+1's Q, which every consumer waits for, is loaded only after both such arrivals).
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
#ifndef SCHED
#define SCHED 1
#define SCHED_GRID 0
#define SCHED_PERSISTENT 1
#endif
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
#define FA_SLOTS 2                          /* tile-index slots of the producer -> consumer hand-off */

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

/* The block's shared memory: the Q tile (also the output's staging tile for 16-bit types), the
 * K/V ring, (fp8) the bf16 O staging tile, the mbarriers and the tile-index slots. */
#define FA_BAR0 (FA_Q_BYTES + 2 * STAGES * FA_KV_BYTES + FA_O_BYTES)   /* the first mbarrier's offset */
struct fa_smem {
    unsigned char *q;   /* the 1024-aligned base: everything else at a constant offset */
    __device__ __forceinline__ unsigned char *k(void) const { return q + FA_Q_BYTES; }
    __device__ __forceinline__ unsigned char *v(void) const { return q + FA_Q_BYTES + STAGES * FA_KV_BYTES; }
    /* O's staging tile: fp8's own after the ring, else the Q tile */
    __device__ __forceinline__ unsigned char *o(void) const { return FA_FP8 ? q + FA_Q_BYTES + 2 * STAGES * FA_KV_BYTES : q; }
    __device__ __forceinline__ uint64_t *bar(int i) const { return reinterpret_cast<uint64_t *>(q + FA_BAR0) + i; }
    __device__ __forceinline__ uint64_t *qbar(void) const { return bar(0); }
    __device__ __forceinline__ uint64_t *qempty(void) const { return bar(1); }
    __device__ __forceinline__ uint64_t *fullk(int s) const { return bar(2 + s); }
    __device__ __forceinline__ uint64_t *fullv(int s) const { return bar(2 + STAGES + s); }
    __device__ __forceinline__ uint64_t *empty(int s) const { return bar(2 + 2 * STAGES + s); }
    __device__ __forceinline__ uint64_t *schf(int i) const { return bar(2 + 3 * STAGES + i); }
    __device__ __forceinline__ uint64_t *sche(int i) const { return bar(2 + 3 * STAGES + FA_SLOTS + i); }
    /* slot i: the work tile's row block and (batch, head), or -1 and 0 when no tile is left */
    __device__ __forceinline__ int *slot(int i) const { return reinterpret_cast<int *>(bar(2 + 3 * STAGES + 2 * FA_SLOTS)) + 2 * i; }
};

/* The problem's work tiles: nmb row blocks x bh (batch, head)s, and the L2 section size. */
struct fa_work {
    int nmb, bh, total, sect;
};

/* Work tile i's row block mb and (batch, head) hb. Persistent: longest-first within L2
 * sections of w.sect heads (the last section may hold fewer), heads fastest; grid: i is
 * blockIdx.y * nmb + blockIdx.x. */
__device__ __forceinline__ void fa_tile_coords(int i, const fa_work &w, int &mb, int &hb)
{
#if SCHED == SCHED_PERSISTENT
    const int per = w.sect * w.nmb, sec = i / per, r = i - sec * per, rows = min(w.sect, w.bh - sec * w.sect);
    mb = w.nmb - 1 - r / rows;
    hb = sec * w.sect + r % rows;
#else
    mb = i % w.nmb, hb = i / w.nmb;
#endif
}

/* K/V tiles of row block mb: causal, up to the tile holding the block's last row's key. */
__device__ __forceinline__ int fa_kv_tiles(int mb, int s)
{
    const int kv_end = CAUSAL == CAUSAL_YES ? min(s, (mb + 1) * FA_BM) : s;
    return (kv_end + BKV - 1) / BKV;
}

/* The block's first work tile. */
__device__ __forceinline__ int fa_first_tile(const fa_work &w)
{
#if SCHED == SCHED_PERSISTENT
    return (int)blockIdx.x;
#else
    return (int)blockIdx.y * w.nmb + (int)blockIdx.x;
#endif
}

/* The block's next work tile (w.total: none). Persistent: the global counter's next index past
 * the grid's first tiles; the fetch of the launch's last index (there are exactly w.total
 * fetches, one per tile processed) resets the counter for the next launch. */
__device__ __forceinline__ int fa_next_tile(int *ctr, const fa_work &w)
{
#if SCHED == SCHED_PERSISTENT
    const int old = atomicAdd(ctr, 1);
    if (old == w.total - 1)
        atomicExch(ctr, 0);
    return min(old + (int)gridDim.x, w.total);
#else
    (void)ctr;
    return w.total;
#endif
}

/* The producer's loads of one work tile: K_j and V_j for j in [0, nt) into the ring from
 * position it, and the Q tile after the first K/V tile (once the previous tile's stores read
 * the Q buffer: qempty, t-th use). */
__device__ __forceinline__ void fa_load_tile(const kb_tmap *tq, const kb_tmap *tk, const kb_tmap *tv,
                                             const fa_smem &sm, int mb, int hb, int nt, int it, int t)
{
    for (int j = 0; j < nt; j++, it++) {
        const int s = it % STAGES;
        kb_mbar_wait_parity(sm.empty(s), (uint32_t)(((it / STAGES) & 1) ^ 1));   /* both consumers freed it */
        kb_mbar_arrive_expect_tx(sm.fullk(s), FA_KV_BYTES);
#pragma unroll
        for (int b = 0; b < FA_NBOX; b++)
            kb_tma_load(sm.k() + s * FA_KV_BYTES + b * BKV * FA_ROWB, tk, sm.fullk(s), 64 * b, j * BKV, hb);
        kb_mbar_arrive_expect_tx(sm.fullv(s), FA_KV_BYTES);
        fa_load_v(sm.v() + s * FA_KV_BYTES, tv, sm.fullv(s), j, hb);
        if (j == 0) {
            kb_mbar_wait_parity(sm.qempty(), (uint32_t)((t & 1) ^ 1));
            kb_mbar_arrive_expect_tx(sm.qbar(), FA_Q_BYTES);
#pragma unroll
            for (int b = 0; b < FA_NBOX; b++)
                kb_tma_load(sm.q + b * FA_BM * FA_ROWB, tq, sm.qbar(), 64 * b, mb * FA_BM, hb);
        }
    }
}

/* The producer's elected thread: per work tile, the hand-off of its coordinates (slot t % 2),
 * then its loads; after the last tile row block -1 tells the consumers to stop. */
__device__ __forceinline__ void fa_produce(const kb_tmap *tq, const kb_tmap *tk, const kb_tmap *tv, const fa_smem &sm,
                                           const fa_work &w, int *ctr, int s)
{
    int tile = fa_first_tile(w), it = 0;
    for (int t = 0;; t++) {
        const int sl = t % FA_SLOTS;
        kb_mbar_wait_parity(sm.sche(sl), (uint32_t)(((t / FA_SLOTS) & 1) ^ 1));   /* every consumer read it */
        int mb = -1, hb = 0;
        if (tile < w.total)
            fa_tile_coords(tile, w, mb, hb);
        sm.slot(sl)[0] = mb, sm.slot(sl)[1] = hb;
        kb_mbar_arrive(sm.schf(sl));
        if (mb < 0)
            return;
        const int nt = fa_kv_tiles(mb, s);
        fa_load_tile(tq, tk, tv, sm, mb, hb, nt, it, t);
        it += nt;
        tile = fa_next_tile(ctr, w);
    }
}

/* x, as a value the compiler cannot see through, made afresh at the top of each work tile:
 * what the tile derives from the lane id and the shared-memory base (the epilogue's swizzled
 * store offsets, Q's wgmma descriptors, the TMA store's sources) is then computed per tile, as
 * in a one-tile block, instead of being hoisted out of the tile loop, where it would hold tens
 * of registers across every tile (and spill). */
#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
__device__ __forceinline__ int fa_unhoisted(int x)
{
    asm volatile("" : "+r"(x));
    return x;
}
__device__ __forceinline__ unsigned char *fa_unhoisted(unsigned char *p)
{
    asm volatile("" : "+l"(p));
    return p;
}
#else
inline int fa_unhoisted(int x) { return x; }
inline unsigned char *fa_unhoisted(unsigned char *p) { return p; }
#endif

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

/* O x o_scale / l rounded to fa_out_t into the warpgroup's rows of the staging tile sm.o() (the
 * Q tile for 16-bit types, fp8's own bf16 tile), laid out as the TMA's 128-byte swizzle does
 * (16-byte chunk c of row r at chunk c ^ (r % 8)), then TMA-stored at row block mb of (batch,
 * head) hb; once the store has read the tile, qempty frees the Q buffer for the next work tile's
 * Q (and, with fp8, so for this warpgroup's next epilogue: the header). */
__device__ __forceinline__ void fa_epilogue(const float (&o)[HEAD_D / 2], const float (&l)[2], const fa_smem &sm,
                                            const kb_tmap *to, int cw, int lt, int mb, int hb, float o_scale)
{
    unsigned char *so = sm.o();
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
            kb_tma_store(to, so + b * FA_BM * 128 + cw * 64 * 128, 64 * b, mb * FA_BM + 64 * cw, hb);
        kb_bulk_commit();
        kb_bulk_wait_read<0>();               /* the store has read the Q buffer: the next Q may land */
        kb_mbar_arrive(sm.qempty());
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
 * the other after issuing (arrive on 3 + the other). turn counts across the block's work
 * tiles: warpgroup 0's first turn needs no wait; warpgroup 1's hand-over after its last turn
 * is taken by warpgroup 0 at the end (fa_consume), so the counts on each barrier match. */
__device__ __forceinline__ void fa_turn_begin(int cw, int turn)
{
    if (cw == 1 || turn > 0)
        kb_bar_sync(3 + cw, 256);
}
__device__ __forceinline__ void fa_turn_end(int cw)
{
    kb_bar_arrive(3 + (1 - cw), 256);
}

/* One consumer warpgroup over one work tile (row block mb of (batch, head) hb, nt K/V tiles
 * from ring position it, ping-pong turns from turn): nt + 1 turns (S_0; S_j with PV_{j-1};
 * PV_{nt-1}), the log-sum-exp, the epilogue. */
__device__ __forceinline__ void fa_consume_tile(const kb_tmap *to, float *lse, const fa_smem &sm, int ct, int sl, int mb,
                                                int nt, int it, int turn, int s, float scale, float o_scale)
{
    const int cw = ct / 128, lt = ct % 128;
    const int r_lo = mb * FA_BM + 64 * cw, r0 = r_lo + 16 * (lt / 32) + lt % 32 / 4;   /* row g; r0 + 8: g+8 */
    const float sl2 = scale * FA_LOG2E;
    float o[HEAD_D / 2], sc[BKV / 2], m[2] = { -INFINITY, -INFINITY }, l[2] = { 0.0f, 0.0f }, alpha[2];
    uint32_t pa[FA_PA_STEPS][4];
    /* every fragment defined afresh per work tile: S's "+f" wgmma operands and P are read
     * before the tile writes them, and left undefined the compiler keeps the previous tile's
     * values live across the tile loop (and spills) */
#pragma unroll
    for (int i = 0; i < HEAD_D / 2; i++)
        o[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < BKV / 2; i++)
        sc[i] = 0.0f;
#pragma unroll
    for (int i = 0; i < FA_PA_STEPS; i++)
        pa[i][0] = pa[i][1] = pa[i][2] = pa[i][3] = 0u;
    for (int j = 0; j <= nt; j++) {
        const int st = (it + j) % STAGES, sp = (it + j + STAGES - 1) % STAGES;
        if (j < nt)
            kb_mbar_wait_parity(sm.fullk(st), (uint32_t)(((it + j) / STAGES) & 1));
        if (j > 0)
            kb_mbar_wait_parity(sm.fullv(sp), (uint32_t)(((it + j - 1) / STAGES) & 1));
        fa_turn_begin(cw, turn + j);
        kb_wgmma_fence();
        if (j < nt) {
            fa_qk(sc, sm.q, sm.k() + st * FA_KV_BYTES, cw);
            kb_wgmma_commit();
        }
        if (j > 0) {
            fa_pv(o, pa, sm.v() + sp * FA_KV_BYTES);
            kb_wgmma_commit();
        }
        fa_turn_end(cw);
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
            kb_mbar_arrive(sm.empty(sp));
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
            lse[(long long)sm.slot(sl)[1] * s + r0 + 8 * h] =
                m[h] * scale + logf(l[h]) - FA_P_OFFSET * 0.6931471805599453f;
#endif
    }
    (void)lse;
    fa_epilogue(o, l, sm, to, cw, lt, sm.slot(sl)[0], sm.slot(sl)[1], o_scale);
}

/* One consumer warpgroup over the block's work tiles: each tile's coordinates from the
 * producer's slot (row block -1: stop), its Q (qbar), the tile; the ring position and the
 * ping-pong turn run on across tiles. */
__device__ __forceinline__ void fa_consume(const kb_tmap *to, float *lse, const fa_smem &sm, int s, float scale, float o_scale)
{
    const int cw = ((int)threadIdx.x - 128) / 128;
    int it = 0, t = 0;
    for (;; t++) {
        const int sl = t % FA_SLOTS;
        kb_mbar_wait_parity(sm.schf(sl), (uint32_t)((t / FA_SLOTS) & 1));
        const int mb = sm.slot(sl)[0];
        if (mb < 0)
            break;
        const int nt = fa_kv_tiles(mb, s);
        kb_mbar_wait_parity(sm.qbar(), (uint32_t)(t & 1));
        fa_smem tsm;
        tsm.q = fa_unhoisted(sm.q);
        fa_consume_tile(to, lse, tsm, fa_unhoisted((int)threadIdx.x - 128), sl, mb, nt, it, it + t, s, scale, o_scale);
        kb_mbar_arrive(sm.sche(sl));
        it += nt;
        if (SCHED == SCHED_GRID) {            /* the block's one tile: no loop for the compiler */
            t++;
            break;
        }
    }
    if (cw == 0 && t > 0)
        kb_bar_sync(3, 256);                  /* warpgroup 1's hand-over after its last turn */
    if ((int)threadIdx.x % 128 == 0)
        kb_bulk_wait<0>();                    /* the last store has written before exit */
}

/* Shared memory (dynamic, aligned up to 1024 here; the host sizes it as kb_attn_fa3_smem):
 * the Q tile, STAGES K tiles, STAGES V tiles, (fp8) the bf16 O tile, qbar, qempty, fullk[STAGES],
 * fullv[STAGES], empty[STAGES], schf[2], sche[2], then the two tile-index slots. ctr: the
 * persistent schedule's tile counter (0 at launch; unused by SCHED_GRID); bh = b*h; sect: heads
 * per L2 section. fp8 takes one more argument, o_scale (v_descale). */
#if FA_FP8
#define FA_EXTRA_PARAMS , float o_scale
#define FA_O_SCALE o_scale
#else
#define FA_EXTRA_PARAMS
#define FA_O_SCALE 1.0f
#endif
extern "C" __global__ void __launch_bounds__(FA_THREADS, 1)
    attn_fa3(const __grid_constant__ kb_tmap tm_q, const __grid_constant__ kb_tmap tm_k,
             const __grid_constant__ kb_tmap tm_v, const __grid_constant__ kb_tmap tm_o, float *lse, int *ctr, int s,
             int bh, int sect, float scale FA_EXTRA_PARAMS)
{
    KB_DYN_SHARED(unsigned char, dyn);
    fa_smem sm;
    sm.q = reinterpret_cast<unsigned char *>(((uintptr_t)dyn + 1023) & ~(uintptr_t)1023);
    const int nmb = (s + FA_BM - 1) / FA_BM;
    const fa_work w = { nmb, bh, nmb * bh, sect };
    if (threadIdx.x == 0) {
        kb_mbar_init(sm.qbar(), 1);
        kb_mbar_init(sm.qempty(), 2);         /* each consumer warpgroup's storing thread */
        for (int i = 0; i < STAGES; i++) {
            kb_mbar_init(sm.fullk(i), 1);
            kb_mbar_init(sm.fullv(i), 1);
            kb_mbar_init(sm.empty(i), 256);
        }
        for (int i = 0; i < FA_SLOTS; i++) {
            kb_mbar_init(sm.schf(i), 1);
            kb_mbar_init(sm.sche(i), 256);
        }
        kb_fence_proxy_async();               /* the initialised barriers, visible to the TMA */
    }
    __syncthreads();
    if (threadIdx.x < 128) {
        kb_setmaxnreg_dec<FA_REGS_PRODUCER>();
        if (threadIdx.x < 32 && kb_elect_one())
            fa_produce(&tm_q, &tm_k, &tm_v, sm, w, ctr, s);
        return;
    }
    kb_setmaxnreg_inc<FA_REGS_CONSUMER>();
    fa_consume(&tm_o, lse, sm, s, scale, FA_O_SCALE);
}

#endif /* ATTN_FA3 */
