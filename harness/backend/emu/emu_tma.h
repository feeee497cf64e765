/* emu_tma.h - cp.async.bulk.tensor in tile mode (PTX ISA 9.7.9.25.5.1) and bulk async-groups
 * (9.7.9.25.6) on the emulator; private to emu_sm90.c and emu_wgmma.c.
 *
 * A load reads its box from global memory at issue (elements out of the tensor: zeros, or NaN
 * with OOB_NAN_REQUEST_ZERO_FMA), poisons its destination (0xFF) and stays in flight until the
 * scheduler lands it: under the lockstep and warp-ahead schedules when nothing else can run (as
 * late as possible), under the random schedule also at random scheduling points. Landing
 * writes the box with the map's swizzle and completes the box's bytes on the mbarrier
 * (complete_tx). Meanwhile a read of the destination the emulator sees (ldmatrix, a wgmma, a
 * checked load) fails the launch.
 * A store snapshots its shared source at issue and writes global memory (in-bounds elements
 * only) when the thread's cp.async.bulk.wait_group[.read] retires its group, at its exit, or
 * at a random point before; a source changed by then is reported (written before
 * wait_group.read).
 * Layout in shared memory (the hardware's, cf. CUTLASS Swizzle<B,4,3>): the box densely,
 * innermost dimension first, then each 16-byte chunk at shared address a moved to
 * a ^ (((a >> 7) & (span/16 - 1)) << 4) for a 32/64/128-byte swizzle span.
 * Rules: shared address 128-byte aligned, 1024 with the 128B swizzle; a load into bytes a
 * wgmma in flight reads; a store from bytes written through the generic proxy and not fenced
 * (fence.proxy.async) by their writer; bytes that are not an emulator tensor map.
 */
#ifndef KB_EMU_TMA_H
#define KB_EMU_TMA_H

#include "backend/emu/emu_mbar.h"
#include "backend/emu/emu_proxy.h"
#include "backend/emu/emu_tmap.h"

typedef struct {
    int is_store;
    unsigned thread;              /* the issuing thread */
    uint32_t smem;                /* [bytes] shared offset of the box */
    uint32_t bytes;               /* of the box */
    unsigned bar;                 /* loads: the mbarrier (index) */
    uint32_t group;               /* stores: the thread's bulk group */
    kb_emu_tmap map;              /* stores: where the bytes go */
    int coords[KB_TMAP_MAX_RANK];
    unsigned char *data;          /* [bytes] dense box: loads what lands, stores the snapshot */
} kb_emu_tma_op;

typedef struct {
    kb_emu_tma_op *ops;           /* in flight, in issue order */
    unsigned n, cap;
    uint16_t *pending;            /* [arena / 16] in-flight loads per 16-byte chunk */
    uint16_t *reading;            /* [arena / 16] in-flight wgmma operand reads per chunk (emu_wgmma) */
    uint8_t *laid;                /* [arena / 16] the swizzle of the TMA load that last landed in each chunk
                                   * (KB_EMU_LAID_*), for the wgmma descriptor's swizzle rule (emu_wgmma) */
    size_t chunks;
    uint32_t committed[KB_EMU_MAX_THREADS]; /* bulk groups each thread closed */
    uint64_t loads, stores;       /* statistics */
} kb_emu_tma;

/* What laid a chunk out: nothing known (no TMA load, an unswizzled one, or a generic store
 * seen since), or a TMA load with the 32/64/128-byte swizzle. */
enum { KB_EMU_LAID_NONE = 0, KB_EMU_LAID_32B, KB_EMU_LAID_64B, KB_EMU_LAID_128B };
/* The KB_EMU_LAID_* of a swizzle span of 0, 32, 64 or 128 bytes. */
static inline uint8_t kb_emu_laid_of_span(unsigned span)
{
    return (uint8_t)(span == 128 ? KB_EMU_LAID_128B : span == 64 ? KB_EMU_LAID_64B : span == 32 ? KB_EMU_LAID_32B
                                                                                                   : KB_EMU_LAID_NONE);
}

int kb_emu_tma_init(kb_emu_tma *m, size_t arena_bytes);
void kb_emu_tma_fini(kb_emu_tma *m);
/* A new block: every op in flight dropped. */
void kb_emu_tma_reset(kb_emu_tma *m);

/* The chunk a swizzle of span bytes (0, 32, 64, 128) moves shared address a to. */
static inline uint32_t kb_emu_swizzle(uint32_t a, unsigned span)
{
    return span ? a ^ (((a >> 7) & (span / 16u - 1u)) << 4) : a;
}

/* The instructions, on behalf of thread t (failing the launch on a broken rule). proxy may be
 * NULL (no generic writes recorded). */
void kb_emu_tma_load(kb_emu_tma *m, kb_emu_mbars *mb, kb_emu_thr *t, void *smem, const void *tmap,
                     const int *coords, void *bar);
void kb_emu_tma_store(kb_emu_tma *m, const kb_emu_proxy *proxy, kb_emu_thr *t, const void *tmap, const void *smem,
                      const int *coords);
void kb_emu_tma_commit(kb_emu_tma *m, kb_emu_thr *t);
void kb_emu_tma_wait(kb_emu_tma *m, kb_emu_thr *t, unsigned n);
/* A scheduling point (idle: nothing else can run): land what the schedule says. */
void kb_emu_tma_tick(kb_emu_tma *m, kb_emu_mbars *mb, kb_emu_proxy *proxy, kb_emu_worker *w, int idle);
/* Thread t exits: its stores complete. */
void kb_emu_tma_exit(kb_emu_tma *m, kb_emu_thr *t);

#endif /* KB_EMU_TMA_H */
