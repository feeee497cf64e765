/* emu_cluster.cu - test kernels for thread block clusters on the emulator (tests/
 * test_emu_cluster.c), built for sm_90: the special registers, distributed shared memory
 * through mapa under barrier.cluster, an arrive on a peer CTA's mbarrier, and kernels that
 * break each cluster rule. Valid for both backends (test_emu_cluster compiles it with NVRTC). */
#include "kb_device.h"

/* Per thread: out[8 * g + 0..7] = rank, nctarank, cluster_ctaid x/y, clusterid x/y, then the
 * value the thread read from the next CTA's shared memory (rank + 1 mod n) at its own index,
 * which that CTA wrote as 1000 * its rank + tid, and what its own CTA's next thread wrote;
 * g = the block's linear index * threads + tid. */
extern "C" __global__ void cluster_dsmem(int *out)
{
    KB_SHARED(int, buf, [256]);
    unsigned tid = threadIdx.x, rank = kb_cluster_ctarank(), n = kb_cluster_nctarank();
    buf[tid] = (int)(1000 * rank + tid);
    kb_cluster_sync();                                   /* every CTA's buf written */
    const int *peer = kb_mapa(buf, (rank + 1) % n);
    int v = peer[tid], mine = buf[(tid + 1) % blockDim.x];   /* another thread's write: ordered by the barrier */
    kb_cluster_sync();                                   /* no CTA exits while a peer reads it */
    size_t g = ((size_t)blockIdx.x + (size_t)blockIdx.y * gridDim.x) * blockDim.x + tid;
    int *o = out + 8 * g;
    o[0] = (int)rank;
    o[1] = (int)n;
    o[2] = (int)kb_cluster_ctaid_x();
    o[3] = (int)kb_cluster_ctaid_y();
    o[4] = (int)kb_clusterid_x();
    o[5] = (int)kb_clusterid_y();
    o[6] = v;
    o[7] = mine;
}

/* Every CTA but rank 0 writes 100 + its rank into rank 0's slots[rank] through mapa and arrives
 * on rank 0's mbarrier (count n - 1); rank 0 waits on it and writes the slots out, per cluster:
 * out[cluster * 8 + r]. */
extern "C" __global__ void cluster_mbar_remote(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    KB_SHARED(int, slots, [8]);
    unsigned rank = kb_cluster_ctarank(), n = kb_cluster_nctarank();
    if (threadIdx.x == 0 && rank == 0) {
        kb_mbar_init(&bar[0], n - 1);
        for (unsigned r = 0; r < 8; r++)
            slots[r] = -1;
    }
    kb_cluster_sync();                                   /* the barrier is initialised */
    if (threadIdx.x == 0 && rank != 0) {
        kb_mapa(slots, 0)[rank] = (int)(100 + rank);
        kb_mbar_arrive_remote(&bar[0], 0);
    }
    if (threadIdx.x == 0 && rank == 0) {
        kb_mbar_wait_parity(&bar[0], 0);
        for (unsigned r = 0; r < n; r++)
            out[kb_clusterid_x() * 8 + r] = slots[r];
    }
    kb_cluster_sync();                                   /* rank 0 alive until the peers are done */
}

/* Without clusters: one CTA of a 1x1x1 cluster, the cluster barrier a block barrier. */
extern "C" __global__ void cluster_none(int *out)
{
    KB_SHARED(int, buf, [64]);
    buf[threadIdx.x] = (int)threadIdx.x;
    kb_cluster_sync();
    out[blockIdx.x * 64 + threadIdx.x] = (int)(kb_cluster_ctarank() * 1000 + kb_cluster_nctarank() * 100) +
                                         kb_mapa(buf, 0)[63 - threadIdx.x];
}

/* Rank 0 writes 7 + tid into its buf; rank 1 reads it through mapa after a barrier.cluster
 * and writes it to out[cluster * 64 + tid]. The second barrier keeps rank 0 alive. */
extern "C" __global__ void cluster_dsmem_sync(int *out)
{
    KB_SHARED(int, buf, [64]);
    unsigned rank = kb_cluster_ctarank();
    if (rank == 0)
        buf[threadIdx.x] = (int)(7 + threadIdx.x);
    kb_cluster_sync();                                   /* rank 0's write before rank 1's read */
    if (rank == 1)
        out[kb_clusterid_x() * 64 + threadIdx.x] = kb_mapa(buf, 0)[threadIdx.x];
    kb_cluster_sync();
}

/* ---- each rule broken ---- */
extern "C" __global__ void cluster_mapa_outside(int *out)
{
    KB_SHARED(int, buf, [64]);
    buf[threadIdx.x] = 1;
    kb_cluster_sync();
    out[threadIdx.x] = kb_mapa(buf, kb_cluster_nctarank())[threadIdx.x];   /* the bug: rank n */
    kb_cluster_sync();
}

/* Rank 1's upper warp never arrives: it waits at a named barrier no one else reaches. */
extern "C" __global__ void cluster_barrier_deadlock(int *out)
{
    if (kb_cluster_ctarank() == 1 && threadIdx.x >= 32)
        kb_bar_sync(1, 64);
    kb_cluster_sync();
    out[threadIdx.x] = 1;
}

extern "C" __global__ void cluster_arrive_twice(int *out)
{
    kb_cluster_arrive();
    kb_cluster_arrive();   /* the bug */
    kb_cluster_wait();
    out[threadIdx.x] = 1;
}

extern "C" __global__ void cluster_wait_without_arrive(int *out)
{
    kb_cluster_wait();     /* the bug */
    out[threadIdx.x] = 1;
}

/* A wait on a peer's mbarrier: only arrive/expect_tx/complete_tx take shared::cluster. */
extern "C" __global__ void cluster_wait_remote(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    if (threadIdx.x == 0)
        kb_mbar_init(&bar[0], 1);
    kb_cluster_sync();
    if (threadIdx.x == 0 && kb_cluster_ctarank() == 0)
        out[0] = kb_mbar_try_wait_parity(kb_mapa(&bar[0], 1), 0);   /* the bug */
    kb_cluster_sync();
}

/* Rank 1 arrives on rank 0's barrier and exits without the closing cluster barrier; rank 0
 * then arrives on rank 1's: shared memory of a CTA that exited. */
extern "C" __global__ void cluster_peer_exited(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    unsigned rank = kb_cluster_ctarank();
    if (threadIdx.x == 0)
        kb_mbar_init(&bar[0], 1);
    kb_cluster_sync();
    if (rank == 1) {
        if (threadIdx.x == 0)
            kb_mbar_arrive_remote(&bar[0], 0);
        return;            /* the bug: no barrier.cluster keeps rank 1 alive for rank 0 */
    }
    if (threadIdx.x == 0) {
        kb_mbar_wait_parity(&bar[0], 0);
        kb_mbar_arrive_remote(&bar[0], 1);
    }
    out[threadIdx.x] = 1;
}

/* A fault in rank 1 while rank 0 waits for it at the cluster barrier: reported for rank 1's
 * block, and the next launch runs. */
extern "C" __global__ void cluster_fault(int *out)
{
    if (kb_cluster_ctarank() == 1 && threadIdx.x == 5)
        out = (int *)(uintptr_t)8;
    kb_cluster_sync();
    out[threadIdx.x] = 1;
}

/* TMA multicast: rank r of cluster c loads the 8-row box at row (c * n + r) * 8 of a 32-column
 * fp32 tensor into shared offset r * 1024 of every CTA of `mask`; each CTA expects n boxes on
 * its own mbarrier, waits, and copies its n * 1024 bytes to out + block * n * 256.
 * bug 1: a mask bit outside the cluster; bug 2: rank 1 never initialises its mbarrier. */
extern "C" __global__ void cluster_tma_mc(const __grid_constant__ kb_tmap tm, float *out, int bug)
{
    KB_SHARED(uint64_t, bar, [1]);
    KB_DYN_SHARED(unsigned char, smem);
    unsigned rank = kb_cluster_ctarank(), n = kb_cluster_nctarank();
    unsigned short mask = (unsigned short)((1u << n) - 1u);
    if (bug == 1)
        mask = (unsigned short)(mask | 1u << n);
    if (threadIdx.x == 0 && !(bug == 2 && rank == 1)) {
        kb_mbar_init(&bar[0], 1);
        kb_fence_proxy_async();
    }
    kb_cluster_sync();                                   /* every CTA's barrier initialised */
    if (threadIdx.x == 0) {
        kb_mbar_arrive_expect_tx(&bar[0], n * 1024u);
        kb_tma_load_mc(smem + rank * 1024u, &tm, &bar[0], mask, 0, (int)((kb_clusterid_x() * n + rank) * 8u));
    }
    kb_mbar_wait_parity(&bar[0], 0);
    const float *s = (const float *)smem;
    for (unsigned i = threadIdx.x; i < n * 256u; i += blockDim.x)
        out[(size_t)blockIdx.x * n * 256u + i] = s[i];
    kb_cluster_sync();                                   /* no CTA exits while a multicast may reach it */
}

/* cluster_dsmem_sync without the barrier between rank 0's write and rank 1's read: a race
 * on distributed shared memory. Only the barrier at the end keeps rank 0 alive, so rank 1
 * reads whatever is there when it runs - the emulator must not let it pass under every
 * schedule (the CTAs' turn order follows --emu-schedule). */
extern "C" __global__ void cluster_dsmem_no_sync(int *out)
{
    KB_SHARED(int, buf, [64]);
    unsigned rank = kb_cluster_ctarank();
    if (rank == 0)
        buf[threadIdx.x] = (int)(7 + threadIdx.x);
    if (rank == 1)                                       /* the bug: no barrier.cluster before it */
        out[kb_clusterid_x() * 64 + threadIdx.x] = kb_mapa(buf, 0)[threadIdx.x];
    kb_cluster_sync();
}
