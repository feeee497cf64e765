/* gemm_wgmma.cuh - the Hopper GEMM variant gemm_wgmma, included by gemm.cu (its operand
 * convention, out_t/acc_t and epilogue()); sm_90a only (wgmma.mma_async and setmaxnreg).
 *
 * Warp specialisation (CUTLASS's "KernelTmaWarpSpecializedCooperative" design, written from
 * the PTX ISA and the CUDA Programming Guide; no code taken):
 *   warpgroup 0, the producer: gives registers back (setmaxnreg.dec 40); one elected thread
 *     fills a STAGES-deep ring of shared-memory stages with TMA loads (cp.async.bulk.tensor)
 *     of A's BM x BK and B's BN x BK tiles, each as BK*esz/SPAN boxes of SPAN bytes of K, laid
 *     out by the TMA with the SPAN-byte swizzle (SPAN = min(128, BK*esz): 32, 64 or 128). A
 *     stage is announced on its full mbarrier (arrive.expect_tx of the stage's bytes, the
 *     loads' complete_tx) and reused after its empty mbarrier completes.
 *   warpgroups 1 and 2, the consumers (cooperative schedule: both work on the same output
 *     tile, BM/2 rows each): take registers (setmaxnreg.inc 232); per k-tile wait for the full
 *     barrier, issue BK*esz/32 wgmma m64nBNk(32 bytes) per 64 rows, operands straight from the
 *     swizzled stages through matrix descriptors (K-major, start address advanced 32 bytes
 *     per k-step inside the SPAN-byte rows, SBO = 8 rows = 8*SPAN bytes), commit, and keep one
 *     group in flight: wgmma.wait_group 1 retires the previous k-tile's group, whose stage is
 *     then released (every consumer thread arrives on empty: count 256).
 * Persistent: gridDim.x = min(tiles, SMs) blocks loop over the output tiles t = blockIdx.x,
 * blockIdx.x + gridDim.x, ...; tile t is placed by grouped rasterisation (GROUP row bands
 * swept together column by column, as block_coords in gemm.cu). The ring's stage and phase
 * run on across tiles, so the producer loads the next tile while the consumers store.
 * Epilogue through shared memory: the consumers' issuer thread waits until the previous
 * tile's TMA store has read the staging buffer (cp.async.bulk.wait_group.read 0), a named
 * barrier (1, 256) tells the others; beta != 0: the C tile is TMA-loaded into the staging
 * buffer (mbarrier cbar); each thread turns its accumulators into D (alpha, beta, the fp8
 * scales) in place, fence.proxy.async, named barrier, and the issuer TMA-stores the BM x BN
 * box (unswizzled, row-major); the TMA writes only the in-bounds part.
 * Edges: TMA fills out-of-bounds elements with zeros, so M, N, K need no tile multiple;
 * it needs 16-byte global strides (gemm_valid.c refuses the pad values that break that).
 * Layout nt only: both operands K-major (fp8 and int8 wgmma take no other).
 * ACCUM two (fp8): two-level accumulation as DeepGEMM does it - each k-tile's wgmmas start
 * from zero (the tensor core's fp8 accumulation, reported to keep about 14 bits on Hopper,
 * then spans BK of K only) and are added into a second f32 accumulator once the group
 * retired (wait_group 0, so no group stays in flight across k-tiles).
 * SCHEDULE pingpong: each consumer warpgroup owns every other tile of the block (its own BM x BN
 * tile, BM 64 or 128, accumulators, staging tile, C barrier and named barrier 1 + cw), so one's
 * epilogue overlaps the other's main loop; named barriers 3 and 4 hand the tensor cores over
 * (warpgroup 1 issues tile j's main loop once warpgroup 0 has issued tile j-1's, and back);
 * the empty barriers count one warpgroup (128).
 * CLUSTER 2x1 / 1x2 (thread block clusters of two CTAs, launched as {2,1,1}; CUTLASS's
 * sm90 TMA multicast mainloop in idea, written from the PTX ISA): the two CTAs of a cluster take
 * two output tiles next to each other along M (2x1: the same N tile, so the same B) or along N
 * (1x2: the same A). Each CTA's producer loads its own operand; the shared one is loaded once:
 * the producer of rank 0 issues the whole box with .multicast::cluster (mask 0b11), which
 * lands at the same shared offset in both CTAs and completes_tx on both CTAs' full barriers
 * (one issuer instead of CUTLASS's split into halves: no second tensor map, any BN/BM). Each
 * CTA's full barrier expects the bytes that land in it: A + B per stage, as without a cluster
 * (the peer's complete_tx may come first: the tx-count goes negative, which the ISA allows).
 * A stage of either CTA may be overwritten by either producer, so each consumer thread
 * releases a stage on the empty barrier of every CTA of the cluster (kb_mbar_arrive_remote)
 * and the empty barriers count 2 x the consumer threads. Tiles: the persistent loop runs
 * over cluster units (2 x 1 or 1 x 2 tiles, grouped rasterisation over units); unit u goes
 * to cluster u mod clusters, and rank r takes the unit's r-th tile. Where the unit sticks out
 * of the M or N tiles (an odd tile count), the CTA without a tile runs a phantom one wholly
 * outside the matrix: its own operand is zero-filled by the TMA, its multicast half is real
 * (the partner needs it), its store writes nothing; so both CTAs always run the same number
 * of units and the barrier protocol never waits on a CTA that has left. The grid is a
 * multiple of 2 (gemm_wgmma.c). The barriers are initialised before a cluster barrier and no
 * CTA exits before a final one (a peer may still arrive on its empty barriers).
 * Defines: BM (cooperative 128 or 256, ping-pong 64 or 128), BN (16..256, a multiple of 16), BK,
 * STAGES, GROUP, SCHEDULE (0 cooperative, 1 pingpong), ACCUM (0 one, 1 two), CLUSTER (0 1x1,
 * 1 2x1, 2 1x2).
 */
#ifndef ACCUM
#define ACCUM 0
#endif
#ifndef SCHEDULE
#define SCHEDULE 0
#endif
#ifndef CLUSTER
#define CLUSTER 0
#endif
#define WG_CM (CLUSTER == 1 ? 2 : 1)                /* CTAs of a cluster along M (2x1: B multicast) */
#define WG_CN (CLUSTER == 2 ? 2 : 1)                /* ... along N (1x2: A multicast) */
#define WG_CL (WG_CM * WG_CN)                       /* CTAs per cluster */
#define WG_PP (SCHEDULE == 1)                       /* ping-pong: each consumer warpgroup its own tiles */
#if defined(KB_DTYPE_FP16)
#define WG_MMA kb_wgmma_f32_f16
#define WG_ESZ 2
#elif defined(KB_DTYPE_BF16)
#define WG_MMA kb_wgmma_f32_bf16
#define WG_ESZ 2
#elif defined(KB_DTYPE_FP8E4M3)
#define WG_MMA kb_wgmma_f32_e4m3
#define WG_ESZ 1
#elif defined(KB_DTYPE_FP8E5M2)
#define WG_MMA kb_wgmma_f32_e5m2
#define WG_ESZ 1
#elif defined(KB_DTYPE_INT8)
#define WG_MMA kb_wgmma_s32_s8
#define WG_ESZ 1
#else
#error "gemm_wgmma: fp16, bf16, fp8e4m3, fp8e5m2 or int8"
#endif

#define WG_CONS 2                                   /* consumer warpgroups */
#define WG_THREADS (128 * (1 + WG_CONS))
#define WG_ROWS (WG_PP ? BM : BM / WG_CONS)          /* output rows per consumer warpgroup */
#define WG_OUT_TILES (WG_PP ? WG_CONS : 1)          /* staging tiles (and C barriers) */
#define WG_EMPTY_COUNT (128 * (WG_PP ? 1 : WG_CONS) * WG_CL) /* consumer threads releasing a stage, cluster-wide */
#define WG_MI (WG_ROWS / 64)                        /* wgmma m64 blocks per consumer */
#define WG_SPAN (BK * WG_ESZ >= 128 ? 128 : BK * WG_ESZ)   /* swizzle span [bytes] */
#define WG_BOX_K (WG_SPAN / WG_ESZ)                 /* K elements per TMA box */
#define WG_NBOX (BK / WG_BOX_K)                     /* boxes per operand per stage */
#define WG_KSTEPS (BK * WG_ESZ / 32)                /* wgmma per 64 rows per k-tile */
#define WG_A_STAGE (BM * BK * WG_ESZ)
#define WG_B_STAGE (BN * BK * WG_ESZ)
#define WG_OUT_BYTES (BM * BN * (int)sizeof(out_t))
#define WG_DESC_SW (WG_SPAN == 128 ? KB_WG_SW_128B : WG_SPAN == 64 ? KB_WG_SW_64B : KB_WG_SW_32B)
#define WG_REGS_PRODUCER 40                         /* setmaxnreg: 128 x 40 + 256 x 232 <= 65536 */
#define WG_REGS_CONSUMER 232

static_assert(WG_PP || (BM % (64 * WG_CONS) == 0 && BM <= 256), "gemm_wgmma: cooperative BM is 128 or 256");
static_assert(!WG_PP || BM == 64 || BM == 128, "gemm_wgmma: ping-pong BM is 64 or 128");
static_assert(BN % 16 == 0 && BN >= 16 && BN <= 256, "gemm_wgmma: BN is a multiple of 16 in [16, 256]");
static_assert(BK * WG_ESZ == 32 || BK * WG_ESZ == 64 || BK * WG_ESZ % 128 == 0,
              "gemm_wgmma: BK * element size is 32, 64 or a multiple of 128 bytes (the swizzle spans)");
static_assert(WG_MI * BN / 2 <= 128, "gemm_wgmma: at most 128 accumulators per consumer thread");
static_assert(STAGES >= 2, "gemm_wgmma: STAGES >= 2");
static_assert(!ACCUM || WG_MI * BN <= 128, "gemm_wgmma: ACCUM two keeps a second accumulator: MI x BN <= 128");

/* Output tile t's row and column block: GROUP row bands swept together, column by column
 * (the last group has tm % GROUP bands when GROUP does not divide tm). */
__device__ __forceinline__ void wg_tile_coords(int t, int tm, int tn, int &mb, int &nb)
{
    const int per = GROUP * tn, first = t / per * GROUP, rows = min(tm - first, GROUP);
    mb = first + t % per % rows, nb = t % per / rows;
}

/* This CTA's rank in its cluster, its cluster's index and the clusters of the grid (1x1: a
 * cluster per block). */
__device__ __forceinline__ int wg_rank(void)
{
#if WG_CL > 1
    return (int)kb_cluster_ctarank();
#else
    return 0;
#endif
}

/* The cluster units (WG_CM x WG_CN tiles) of a tm x tn tile grid. */
__device__ __forceinline__ int wg_units(int tm, int tn)
{
    return (tm + WG_CM - 1) / WG_CM * ((tn + WG_CN - 1) / WG_CN);
}

/* Unit u's tile for cluster rank r: the unit placed by wg_tile_coords on the unit grid, r its
 * r-th tile along M (2x1) or N (1x2); may lie past tm or tn (a phantom tile, see above). */
__device__ __forceinline__ void wg_unit_tile(int u, int tm, int tn, int r, int &mb, int &nb)
{
    wg_tile_coords(u, (tm + WG_CM - 1) / WG_CM, (tn + WG_CN - 1) / WG_CN, mb, nb);
    mb = mb * WG_CM + (WG_CM > 1 ? r : 0), nb = nb * WG_CN + (WG_CN > 1 ? r : 0);
}

/* Release a stage: one arrival on its empty barrier in every CTA of the cluster (either
 * producer may overwrite this CTA's copy of the multicast operand). */
__device__ __forceinline__ void wg_release(uint64_t *empty)
{
#if WG_CL > 1
#pragma unroll
    for (unsigned r = 0; r < WG_CL; r++)
        kb_mbar_arrive_remote(empty, r);
#else
    kb_mbar_arrive(empty);
#endif
}

/* Stage s's loads of box b for tile (mb, nb) at k element kx: this CTA's own operand, and the
 * shared one multicast by rank 0 to both CTAs of the cluster. */
__device__ __forceinline__ void wg_load_box(const kb_tmap *tm_a, const kb_tmap *tm_b, unsigned char *da,
                                            unsigned char *db, uint64_t *bar, int kx, int mb, int nb, int rank)
{
#if CLUSTER == 1
    kb_tma_load(da, tm_a, bar, kx, mb * BM);
    if (rank == 0)
        kb_tma_load_mc(db, tm_b, bar, (unsigned short)0x3, kx, nb * BN);
#elif CLUSTER == 2
    if (rank == 0)
        kb_tma_load_mc(da, tm_a, bar, (unsigned short)0x3, kx, mb * BM);
    kb_tma_load(db, tm_b, bar, kx, nb * BN);
#else
    (void)rank;
    kb_tma_load(da, tm_a, bar, kx, mb * BM);
    kb_tma_load(db, tm_b, bar, kx, nb * BN);
#endif
}

/* The producer's elected thread: every k-tile of every tile of this block, into the ring. */
__device__ __forceinline__ void wg_produce(const kb_tmap *tm_a, const kb_tmap *tm_b, unsigned char *sa,
                                           unsigned char *sb, uint64_t *full, uint64_t *empty, int tm, int tn,
                                           int kt_n)
{
    int it = 0;
    const int rank = wg_rank(), units = wg_units(tm, tn);
    for (int u = (int)blockIdx.x / WG_CL; u < units; u += (int)gridDim.x / WG_CL) {
        int mb, nb;
        wg_unit_tile(u, tm, tn, rank, mb, nb);
        for (int kt = 0; kt < kt_n; kt++, it++) {
            const int s = it % STAGES;
            kb_mbar_wait_parity(&empty[s], (uint32_t)(((it / STAGES) & 1) ^ 1));   /* the consumers freed it */
            kb_mbar_arrive_expect_tx(&full[s], WG_A_STAGE + WG_B_STAGE);
#pragma unroll
            for (int b = 0; b < WG_NBOX; b++)
                wg_load_box(tm_a, tm_b, sa + s * WG_A_STAGE + b * BM * WG_SPAN, sb + s * WG_B_STAGE + b * BN * WG_SPAN,
                            &full[s], kt * BK + b * WG_BOX_K, mb, nb, rank);
        }
    }
}

/* One k-tile of one consumer warpgroup (cw): WG_KSTEPS x WG_MI wgmmas from stage s. */
__device__ __forceinline__ void wg_mma_stage(acc_t (&acc)[WG_MI][BN / 2], const unsigned char *sa,
                                             const unsigned char *sb, int cw, int first)
{
#pragma unroll
    for (int kk = 0; kk < WG_KSTEPS; kk++) {
        const int box = kk * 32 / WG_SPAN, in = kk * 32 % WG_SPAN;
        const uint64_t db = kb_wgmma_desc(sb + box * BN * WG_SPAN + in, WG_DESC_SW, 16, 8 * WG_SPAN);
#pragma unroll
        for (int i = 0; i < WG_MI; i++) {
            const uint64_t da = kb_wgmma_desc(sa + box * BM * WG_SPAN + ((WG_PP ? 0 : cw * WG_ROWS) + 64 * i) * WG_SPAN + in,
                                              WG_DESC_SW, 16, 8 * WG_SPAN);
            WG_MMA<BN>(acc[i], da, db, first && kk == 0 ? 0 : 1);
        }
    }
}

/* The epilogue of one tile (m0, n0) through the staging buffer sd; ct = consumer thread
 * 0..255, tile_i = the tiles this warpgroup (cooperative: both) did so far (cbar's parity).
 * The issuing thread: consumer thread 0 (cooperative), each warpgroup's first (ping-pong). */
__device__ __forceinline__ void wg_epilogue(acc_t (&acc)[WG_MI][BN / 2], const kb_tmap *tm_c, const kb_tmap *tm_d,
                                            unsigned char *sd, uint64_t *cbar, int m0, int n0, int ct, int tile_i,
                                            float alpha, float beta, float ab)
{
    const int cw = ct / 128, lt = ct % 128, w = lt / 32, g = lt % 32 / 4, tq = lt % 4;
    const int issuer = WG_PP ? lt == 0 : ct == 0, bar = WG_PP ? 1 + cw : 1, row0 = WG_PP ? 0 : cw * WG_ROWS;
    const unsigned nbar = WG_PP ? 128u : 128u * WG_CONS;
    if (issuer)
        kb_bulk_wait_read<0>();               /* the previous tile's store has read sd */
    kb_bar_sync(bar, nbar);
    if (beta != 0.0f) {
        if (issuer) {
            kb_mbar_arrive_expect_tx(cbar, WG_OUT_BYTES);
            kb_tma_load(sd, tm_c, cbar, n0, m0);
        }
        kb_mbar_wait_parity(cbar, (uint32_t)(tile_i & 1));
    }
    out_t *ds = reinterpret_cast<out_t *>(sd);
#pragma unroll
    for (int i = 0; i < WG_MI; i++)
#pragma unroll
        for (int j = 0; j < BN / 8; j++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int r = row0 + 64 * i + 16 * w + g + 8 * (e >> 1), col = 8 * j + 2 * tq + (e & 1);
                const long long x = (long long)r * BN + col;
                ds[x] = epilogue(acc[i][4 * j + e], ds, x, alpha, beta, ab);
            }
    kb_fence_proxy_async();                   /* the generic writes, visible to the TMA store */
    kb_bar_sync(bar, nbar);
    if (issuer) {
        kb_tma_store(tm_d, sd, n0, m0);
        kb_bulk_commit();
    }
}

/* Two-level accumulation: tot = (first ? 0 : tot) + acc, in f32 (acc's group retired). */
__device__ __forceinline__ void wg_promote(acc_t (&tot)[WG_MI][BN / 2], const acc_t (&acc)[WG_MI][BN / 2], int first)
{
#pragma unroll
    for (int i = 0; i < WG_MI; i++)
#pragma unroll
        for (int j = 0; j < BN / 2; j++)
            tot[i][j] = first ? acc[i][j] : tot[i][j] + acc[i][j];
}

/* The consumers: every tile of this block (ping-pong: every other one, j = cw, cw + 2, ...),
 * main loop then epilogue. The ring position of tile j's first k-tile is j x kt_n. */
__device__ __forceinline__ void wg_consume(const kb_tmap *tm_c, const kb_tmap *tm_d, unsigned char *sa,
                                           unsigned char *sb, unsigned char *sd, uint64_t *full, uint64_t *empty,
                                           uint64_t *cbar, int tm, int tn, int kt_n, float alpha, float beta, float ab)
{
    const int ct = (int)threadIdx.x - 128, cw = ct / 128, units = wg_units(tm, tn), rank = wg_rank();
    const int cid = (int)blockIdx.x / WG_CL, ncl = (int)gridDim.x / WG_CL;
    const int n_b = (cid < units ? units - cid + ncl - 1 : 0) / ncl;   /* this cluster's units */
    sd += (WG_PP ? cw : 0) * WG_OUT_BYTES, cbar += WG_PP ? cw : 0;
    acc_t acc[WG_MI][BN / 2];
#if ACCUM
    acc_t tot[WG_MI][BN / 2];
#endif
    int it = 0, tile_i = 0;
    for (int j = WG_PP ? cw : 0; j < n_b; j += WG_PP ? 2 : 1, tile_i++) {
        int mb, nb;
        wg_unit_tile(cid + j * ncl, tm, tn, rank, mb, nb);
        it = j * kt_n;
        if (WG_PP && j > 0)
            kb_bar_sync(j % 2 ? 3 : 4, 256);  /* the other warpgroup issued tile j-1's main loop */
        for (int kt = 0; kt < kt_n; kt++, it++) {
            const int s = it % STAGES;
            kb_mbar_wait_parity(&full[s], (uint32_t)((it / STAGES) & 1));     /* the stage landed */
            kb_wgmma_fence();
#if ACCUM
            wg_mma_stage(acc, sa + s * WG_A_STAGE, sb + s * WG_B_STAGE, cw, 1);   /* this k-tile alone */
            kb_wgmma_commit();
            kb_wgmma_wait<0>();
            wg_release(&empty[s]);
            wg_promote(tot, acc, kt == 0);
#else
            wg_mma_stage(acc, sa + s * WG_A_STAGE, sb + s * WG_B_STAGE, cw, kt == 0);
            kb_wgmma_commit();
            kb_wgmma_wait<1>();               /* k-tile kt-1's group retired: its stage is free */
            if (kt > 0)
                wg_release(&empty[(it - 1) % STAGES]);
#endif
        }
        if (WG_PP && j + 1 < n_b)
            kb_bar_arrive(j % 2 ? 4 : 3, 256); /* tile j+1's main loop may start */
#if ACCUM
        wg_epilogue(tot, tm_c, tm_d, sd, cbar, mb * BM, nb * BN, ct, tile_i, alpha, beta, ab);
#else
        kb_wgmma_wait<0>();
        wg_release(&empty[(it - 1) % STAGES]);
        wg_epilogue(acc, tm_c, tm_d, sd, cbar, mb * BM, nb * BN, ct, tile_i, alpha, beta, ab);
#endif
    }
    if (WG_PP ? ct % 128 == 0 : ct == 0)
        kb_bulk_wait<0>();                    /* the last store has completed */
}

/* Shared memory (dynamic, aligned up to 1024 bytes here; gemm_model.c sizes it the same):
 * STAGES A stages, STAGES B stages, the BM x BN staging tile(s), full[STAGES], empty[STAGES],
 * cbar[WG_OUT_TILES]. */
extern "C" __global__ void __launch_bounds__(WG_THREADS, 1)
    gemm_wgmma(const __grid_constant__ kb_tmap tm_a, const __grid_constant__ kb_tmap tm_b,
               const __grid_constant__ kb_tmap tm_c, const __grid_constant__ kb_tmap tm_d, int M, int N, int K,
               float alpha, float beta, float scale_a, float scale_b)
{
    KB_DYN_SHARED(unsigned char, dyn);
    unsigned char *sa = reinterpret_cast<unsigned char *>(((uintptr_t)dyn + 1023) & ~(uintptr_t)1023);
    unsigned char *sb = sa + STAGES * WG_A_STAGE, *sd = sb + STAGES * WG_B_STAGE;
    uint64_t *full = reinterpret_cast<uint64_t *>(sd + WG_OUT_TILES * WG_OUT_BYTES), *empty = full + STAGES;
    uint64_t *cbar = empty + STAGES;
    const int tm = (M + BM - 1) / BM, tn = (N + BN - 1) / BN, kt_n = (K + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            kb_mbar_init(&full[s], 1);
            kb_mbar_init(&empty[s], WG_EMPTY_COUNT);
        }
        for (int o = 0; o < WG_OUT_TILES; o++)
            kb_mbar_init(&cbar[o], 1);
        kb_fence_proxy_async();               /* the initialised barriers, visible to the TMA */
    }
#if WG_CL > 1
    kb_cluster_sync();                        /* ... and to the peer CTA (its multicast, its arrivals) */
#else
    __syncthreads();
#endif
    if (threadIdx.x < 128) {
        kb_setmaxnreg_dec<WG_REGS_PRODUCER>();
        if (threadIdx.x < 32 && kb_elect_one())
            wg_produce(&tm_a, &tm_b, sa, sb, full, empty, tm, tn, kt_n);
    } else {
        kb_setmaxnreg_inc<WG_REGS_CONSUMER>();
        wg_consume(&tm_c, &tm_d, sa, sb, sd, full, empty, cbar, tm, tn, kt_n, alpha, beta, alpha * scale_a * scale_b);
    }
#if WG_CL > 1
    kb_cluster_sync();                        /* no CTA exits while its peer may still arrive on its barriers */
#endif
}
