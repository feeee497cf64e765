/* attention_decode_tma.cu - attention/decode_tma: the split-KV flash-decoding of
 * attention_decode.cu with its K/V stream on sm_90a's asynchronous machinery. Included at the
 * end of attention_decode.cu (inside ATTN_DECODE) and compiled only when the host defines
 * DEC_TMA (the decode_tma variant); it shares that file's block geometry (DEC_*), its mma.sync
 * tile code (dec_scores, dec_mask, dec_softmax, dec_pv, reading the tiles through dec_at, which
 * is the 128B-swizzled TMA layout here), its key-warp merge and output staging, and the split
 * combine attn_decode_combine. Written from the PTX ISA (9.7.9.25 cp.async.bulk.tensor,
 * 9.7.13.15 mbarrier, 9.7.13.1 bar) and the warp-specialised pipeline of CUTLASS's
 * PipelineTmaAsync / FlashAttention-3 (a producer filling a ring that consumers release).
 *
 * attn_decode_tma: grid (DEC_NRB x splits, b x h_kv) as attn_decode; WARPS consumer warps
 * (DEC_RG row warps x DEC_KG key warps, the same roles) plus one producer warp (warp WARPS).
 *   producer  one elected thread: Q's rows of the block by TMA (a 3-d map {HEAD_D, R, b h_kv}:
 *             rows past the KV head's R load as zeros) on qbar; then for each K/V tile j of
 *             the split, after the ring slot's empty barrier completes its phase (every
 *             consumer thread released it), arrive.expect_tx on the slot's full barrier for
 *             the whole K and V boxes and issue their TMA loads (maps {HEAD_D, kv, b h_kv};
 *             keys past kv load as zeros and are masked, and the TMA counts their bytes too,
 *             so the expected count is the whole boxes' for a partial last tile as well).
 *   consumers per tile: wait for the full barrier's phase, S = Q K^T, mask (only the tiles
 *             that reach the first masked key), online softmax, O += P V exactly as attn_decode,
 *             then arrive on the slot's empty barrier after the last read of the slot (V in
 *             dec_pv). After the loop the key warps merge and stage through shared memory
 *             (named barrier 1 over the consumers: the producer warp has left) and the block
 *             writes O, or its split's fp32 partial and log-sum-exp for attn_decode_combine.
 * Against attn_decode: no thread spends issue slots on 16-byte cp.async copies or their address
 * arithmetic, the producer runs up to STAGES tiles ahead (cp.async: STAGES - 1) and no
 * __syncthreads orders the ring: a consumer warp waits only for its tile's bytes. The compute
 * stays mma.sync m16n8k16: the rows of one KV head are GROUP x Q_LEN = 1..128, and wgmma's
 * m64 would run 64-row tiles at 1..16 rows (the common cases), a 4x..64x padding, and need a
 * warpgroup per 64 rows; at these rows decode is HBM-bound either way (attention_decode.cu's
 * header), so the mma.sync tile code is shared and the memory path is what changes. No
 * setmaxnreg: the consumers need < 128 registers (docs/families/attention.md records them),
 * so moving registers from the producer would buy nothing, and the producer is one warp, not
 * the warpgroup setmaxnreg acts on.
 * Shared memory (dynamic, aligned up to 1024 here; the host's kb_dec_geom_of sizes it): the Q
 * tile, the ring [STAGES][K, V] of dense swizzled tiles (after the loop: the merge area and
 * output staging, as attn_decode), then qbar, full[STAGES], empty[STAGES].
 */
#if DEC_TMA

static_assert(HEAD_D % 64 == 0, "attention/decode_tma: HEAD_D is 64, 128 or 256 (whole 128-byte TMA boxes)");
static_assert(DEC_ROWS <= 256 && DEC_BKV <= 256, "attention/decode_tma: a TMA box has at most 256 rows");

#define DEC_NBOX (HEAD_D / 64)                       /* 128-byte boxes along the head dim */
#define DEC_Q_BYTES (DEC_QTILE * 2)
#define DEC_KV_BYTES (2 * DEC_TILE * 2)              /* a K and a V tile: one slot */
#define DEC_MERGE_BYTES (((DEC_KG - 1) * DEC_ROWS * DEC_OLD + 2 * (DEC_KG - 1) * DEC_ROWS + DEC_ROWS * DEC_OLD) * 4)
#define DEC_DATA_BYTES (DEC_Q_BYTES + STAGES * DEC_KV_BYTES)
#define DEC_BAR_OFF ((((DEC_DATA_BYTES > DEC_MERGE_BYTES ? DEC_DATA_BYTES : DEC_MERGE_BYTES) + 7) / 8) * 8)

/* The producer's elected thread: Q, then K_j and V_j of the split's tiles into the ring. */
__device__ __forceinline__ void dec_produce(const kb_tmap *tq, const kb_tmap *tk, const kb_tmap *tv, KB_T *sq,
                                            KB_T *kvs, uint64_t *qbar, uint64_t *full, uint64_t *empty, int head,
                                            int r0, int k_begin, int k_end)
{
    const int ntiles = (k_end - k_begin + DEC_BKV - 1) / DEC_BKV;
    kb_mbar_arrive_expect_tx(qbar, DEC_Q_BYTES);
#pragma unroll
    for (int b = 0; b < DEC_NBOX; b++)
        kb_tma_load(sq + b * DEC_ROWS * 64, tq, qbar, 64 * b, r0, head);
    for (int j = 0; j < ntiles; j++) {
        const int st = j % STAGES, k0 = k_begin + j * DEC_BKV;
        KB_T *ks = kvs + st * 2 * DEC_TILE, *vs = ks + DEC_TILE;
        kb_mbar_wait_parity(&empty[st], (uint32_t)(((j / STAGES) & 1) ^ 1));   /* the consumers freed it */
        kb_mbar_arrive_expect_tx(&full[st], DEC_KV_BYTES);   /* whole boxes: keys past kv are bytes too */
#pragma unroll
        for (int b = 0; b < DEC_NBOX; b++) {
            kb_tma_load(ks + b * DEC_BKV * 64, tk, &full[st], 64 * b, k0, head);
            kb_tma_load(vs + b * DEC_BKV * 64, tv, &full[st], 64 * b, k0, head);
        }
    }
}

/* The consumers' loop over the split's tiles: each waits for its slot's bytes, runs
 * attn_decode's tile step on its 16 keys and releases the slot after its last read. */
__device__ __forceinline__ void dec_consume(float oacc[DEC_MT][DEC_DN][4], float m[DEC_MT][2], float l[DEC_MT][2],
                                            const uint32_t (*qf)[4], const KB_T *qw, const KB_T *kvs, uint64_t *full,
                                            uint64_t *empty, int k_begin, int k_end, int kv, int wr0, float sl2)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, kg = warp / DEC_RG;
    const int ntiles = (k_end - k_begin + DEC_BKV - 1) / DEC_BKV;
    const int mask_from = CAUSAL == CAUSAL_YES ? kv - Q_LEN + 1 : kv;   /* the first key some row masks */
    for (int it = 0; it < ntiles; it++) {
        const int st = it % STAGES;
        kb_mbar_wait_parity(&full[st], (uint32_t)((it / STAGES) & 1));   /* K and V of tile it landed */
        const KB_T *ks = kvs + st * 2 * DEC_TILE + kg * 16 * DEC_RS;
        const int key0 = k_begin + it * DEC_BKV + kg * 16;
        float sc[DEC_MT][2][4];
        dec_scores(sc, qf, qw, ks, lane);
        if (key0 + 16 > mask_from)
            dec_mask(sc, key0, wr0, kv, lane);
        dec_softmax(sc, oacc, m, l, sl2);
        dec_pv(oacc, sc, ks + DEC_TILE, lane);
        kb_mbar_arrive(&empty[st]);   /* after the last read of the slot: the producer may refill it */
    }
}

/* One block: row block rb of KV head blockIdx.y, split sp (attn_decode's grid and outputs);
 * tm_q over Q as {HEAD_D, R, b h_kv}, tm_k and tm_v over K and V as {HEAD_D, kv, b h_kv}, each
 * with 64-element boxes of the head dim (DEC_ROWS rows for Q, DEC_BKV for K and V) and the
 * 128-byte swizzle (attention_decode_tma.c). */
extern "C" __global__ void __launch_bounds__(DEC_THREADS + 32)
attn_decode_tma(const __grid_constant__ kb_tmap tm_q, const __grid_constant__ kb_tmap tm_k,
                const __grid_constant__ kb_tmap tm_v, KB_T *__restrict__ o, float *__restrict__ o_part,
                float *__restrict__ lse_part, int kv, int chunk, long long rows_total, float scale)
{
    KB_DYN_SHARED(unsigned char, dyn);
    unsigned char *base = reinterpret_cast<unsigned char *>(((uintptr_t)dyn + 1023) & ~(uintptr_t)1023);
    KB_T *sq = reinterpret_cast<KB_T *>(base), *kvs = sq + DEC_QTILE;
    uint64_t *qbar = reinterpret_cast<uint64_t *>(base + DEC_BAR_OFF), *full = qbar + 1, *empty = full + STAGES;
    const int warp = threadIdx.x / 32, rg = warp % DEC_RG;
    const int rb = blockIdx.x % DEC_NRB, sp = blockIdx.x / DEC_NRB;
    const int r0 = rb * DEC_ROWS, nrows = min(DEC_ROWS, DEC_R - r0), wr = rg * DEC_MT * 16;
    const int head = (int)blockIdx.y, k_begin = sp * chunk, k_end = min(kv, k_begin + chunk);
    if (threadIdx.x == 0) {
        kb_mbar_init(qbar, 1);
        for (int i = 0; i < STAGES; i++) {
            kb_mbar_init(&full[i], 1);
            kb_mbar_init(&empty[i], DEC_THREADS);   /* every consumer thread releases a slot */
        }
        kb_fence_proxy_async();   /* the initialised barriers, visible to the TMA */
    }
    __syncthreads();
    if (warp == WARPS) {          /* the producer warp */
        if (kb_elect_one())
            dec_produce(&tm_q, &tm_k, &tm_v, sq, kvs, qbar, full, empty, head, r0, k_begin, k_end);
        return;
    }
    const KB_T *qw = sq + wr * DEC_RS;   /* the warp's Q rows */
    uint32_t qf[DEC_QREG ? DEC_MT * DEC_DK : 1][4];
    kb_mbar_wait_parity(qbar, 0u);
#if DEC_QREG
    dec_q_frags(qf, qw, threadIdx.x % 32);
#endif
    float oacc[DEC_MT][DEC_DN][4], m[DEC_MT][2], l[DEC_MT][2];
    dec_acc_init(oacc, m, l);
    const float sl2 = scale * DEC_LOG2E;
    dec_consume(oacc, m, l, qf, qw, kvs, full, empty, k_begin, k_end, kv, r0 + wr, sl2);
    dec_finish(base, oacc, m, l, o, o_part, lse_part, rows_total, (long long)head * DEC_R + r0, nrows, wr, sl2);
}

#endif /* DEC_TMA */
