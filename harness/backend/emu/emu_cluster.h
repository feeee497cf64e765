/* emu_cluster.h - thread block clusters on the emulator, by the PTX ISA (5.2.1 "Cluster of
 * Cooperative Thread Arrays", 9.7.13.2 "barrier.cluster", 9.7.9.21 "mapa", 10 "Special
 * Registers": %clusterid, %nclusterid, %cluster_ctaid, %cluster_nctaid, %cluster_ctarank,
 * %cluster_nctarank). Private to the emulator.
 *
 * Co-scheduling: the CTAs of one cluster run on one worker (one OS thread), each with its own
 * threads, fibers, shared memory and sm_90 state (a kb_emu_worker per CTA: the worker's own
 * and up to KB_EMU_MAX_CLUSTER - 1 peers it owns). They take turns: each CTA runs until none
 * of its threads can, then the next; a thread of one CTA waking one of another (the cluster
 * barrier, an arrive on a peer's mbarrier) makes it runnable there. The turn order of a round
 * follows --emu-schedule: rank order (lockstep), reversed rank order (warp-ahead), shuffled
 * per round from the seed (random:SEED), so that a peer access not ordered by barrier.cluster
 * or an mbarrier reads the peer's write under one schedule and the poison under another.
 * A round in which no CTA ran a thread while some still wait is a deadlock, reported by
 * what they wait for.
 *
 * Rules, each reported by name (the launch fails):
 *   - barrier.cluster.wait without this thread's barrier.cluster.arrive in the phase, and a
 *     second arrive before the wait (9.7.13.2: each thread arrives once, then waits);
 *   - a deadlock at the cluster barrier names the CTAs (rank and block) whose threads have
 *     not arrived and how many (the barrier completes when every non-exited thread of the
 *     cluster arrived);
 *   - mapa of an address outside this CTA's shared memory, or to a rank outside the cluster;
 *   - mbarrier.try_wait/test_wait/init/inval on a peer CTA's mbarrier (only arrive,
 *     expect_tx and complete_tx take a shared::cluster address: 9.7.13.15);
 *   - an access to a peer's shared memory after that CTA exited: its shared memory is
 *     poisoned (0xFF) when its last thread exits, and an mbarrier operation on it fails.
 * TMA multicast lives in emu_sm90.c (kb_emu_rt_tma_load_multicast). Not modelled: --emu-check's
 * race and init tracking of loads and stores to a peer's shared memory (they reach it,
 * unchecked; a missing barrier.cluster shows only as a wrong result under some schedule), and
 * interleavings within a turn (a CTA's turn runs until none of its threads can).
 */
#ifndef KB_EMU_CLUSTER_H
#define KB_EMU_CLUSTER_H

#include "backend/emu/emu_block.h"

#define KB_EMU_MAX_CLUSTER 8          /* the portable cluster size: kbench never opts in to more */
#define KB_EMU_WAIT_CLUSTER 4         /* kb_emu_thr.wait_kind: at barrier.cluster.wait */

typedef struct kb_emu_cluster {
    unsigned n;                       /* CTAs */
    kb_emu_worker *cta[KB_EMU_MAX_CLUSTER];   /* by %cluster_ctarank */
    kb_emu_worker *running;           /* the CTA whose thread runs now (a fault's report) */
    int exited[KB_EMU_MAX_CLUSTER];   /* every thread of the CTA exited */
    /* barrier.cluster: arrivals of the current phase, per CTA and thread */
    uint64_t phase;
    unsigned arrived_total;
    unsigned char arrived[KB_EMU_MAX_CLUSTER][KB_EMU_MAX_THREADS];
} kb_emu_cluster;

/* Blocks per cluster of l (1 without clusters). */
unsigned kb_emu_cluster_blocks(const kb_emu_launch *l);

/* A launch begins on worker w: with clusters of more than one block, its peers are made (at the
 * first such launch) and begun for w->l, each also given to begin (the sm_90 machinery's per-
 * launch set-up, emu_exec.c). KB_ERR_OOM when they cannot be had. */
kb_status kb_emu_cluster_begin(kb_emu_worker *w, kb_status (*begin)(kb_emu_worker *peer));
/* Run cluster number c (linear over the grid of clusters, x fastest) on worker w and its
 * peers (allocated at the first cluster launch). 0 when every CTA completed; -1 when the
 * launch failed (recorded in the sink). */
int kb_emu_cluster_run(kb_emu_worker *w, uint64_t c);
/* The worker whose thread runs now (w itself outside a cluster): for a signal's report. */
kb_emu_worker *kb_emu_cluster_running(kb_emu_worker *w);
/* After a fault unwound the worker: every CTA's stacks freed, the cluster left. */
void kb_emu_cluster_abandon(kb_emu_worker *w);
/* The CTA whose shared memory holds [addr, addr + bytes) - t's own, or a peer of its
 * cluster - or the launch fails naming op: not shared memory, or a CTA that exited. */
kb_emu_worker *kb_emu_cluster_owner(kb_emu_thr *t, const void *addr, unsigned bytes, const char *op);

/* The kb_emu_rt slots (kb_emu_abi.h). */
void kb_emu_rt_cluster_barrier(kb_emu_thread *p, int wait);
void *kb_emu_rt_mapa(kb_emu_thread *p, const void *addr, unsigned rank);

#endif /* KB_EMU_CLUSTER_H */
