/* emu_wgmma.h - wgmma.mma_async and its fence / commit_group / wait_group (PTX ISA 9.7.15) on
 * the emulator; private to emu_sm90.c.
 *
 * Issue is a warpgroup rendezvous (kb_emu_wg_rendezvous): the last of the 128 threads checks
 * that all agree (shape, types, immediates, scale-d, descriptors), decodes the shared
 * operands through their descriptors (kb_wgmma.h states the canonical layouts) into values,
 * and snapshots the 16-byte chunks they occupy. Each thread's accumulator registers are saved
 * (scale-d) and poisoned (0xFF: NaN) at issue; its wgmma.wait_group that retires the group
 * computes its own elements and writes them back. A later wgmma into the same registers
 * before that wait chains on the result, as the hardware's accumulator chaining does.
 * Numerics: products exact, summed in double with D, rounded once per wgmma to the
 * accumulator type (f32, f16 round-to-nearest-even; s32 wraps); e4m3/e5m2 into f32 are then
 * truncated to 13 explicit mantissa bits, a model of the ~14-bit fp8 accumulation reported for
 * Hopper (DeepGEMM; docs/architecture.md's fp8 tolerances assume it).
 * Rules: a wgmma without a wgmma.fence since the thread's last wgmma.wait_group (or start);
 * threads of the warpgroup disagreeing; a shape or immediate the ISA does not offer; a base
 * offset (not modelled); operands outside shared memory, under a TMA load or cp.async not
 * landed, or written through the generic proxy without fence.proxy.async; at retirement,
 * operand bytes changed since issue, accumulator or A registers touched while in flight.
 */
#ifndef KB_EMU_WGMMA_H
#define KB_EMU_WGMMA_H

#include "backend/emu/emu_proxy.h"
#include "backend/emu/emu_tma.h"

#define KB_EMU_WG_MAX_INFLIGHT 32     /* wgmmas one thread may have in flight (an emulator limit) */

typedef struct kb_emu_wg_op kb_emu_wg_op;   /* one warpgroup's wgmma (emu_wgmma.c) */

typedef struct {
    kb_emu_wg_op *op;
    uint32_t group;                   /* the thread's commit group */
    void *d;                          /* the accumulator registers */
    unsigned words;                   /* of d */
    int scale_d;
    int chained;                      /* D comes from the registers an earlier wgmma writes */
    uint32_t saved[128];              /* D at issue (scale_d, not chained) */
    const uint32_t *a_ptr;            /* RS: the A registers, and their values at issue */
    uint32_t a_snap[4];
} kb_emu_wg_rec;

typedef struct {
    kb_emu_wg_rec *rec;               /* [KB_EMU_WG_MAX_INFLIGHT] in issue order, or NULL */
    unsigned n;
    uint32_t committed;               /* groups closed */
    int fenced;                       /* a wgmma.fence since the last wait_group */
} kb_emu_wg_thread;

typedef struct {
    kb_emu_wg_thread th[KB_EMU_MAX_THREADS];
    uint32_t *stamp;                  /* [arena / 16] dedupe of an op's chunks */
    uint32_t serial;
    kb_emu_wg_op *forming;            /* an op being built: freed by reset when a rule failed it */
    uint64_t issued;                  /* statistics */
} kb_emu_wg;

int kb_emu_wg_init(kb_emu_wg *g, size_t arena_bytes);
void kb_emu_wg_fini(kb_emu_wg *g);
/* A new block: ops in flight dropped. tma: whose reading counters they hold. */
void kb_emu_wg_reset(kb_emu_wg *g, kb_emu_tma *tma);

void kb_emu_wg_fence(kb_emu_wg *g, kb_emu_thr *t);
void kb_emu_wg_mma(kb_emu_wg *g, kb_emu_tma *tma, const kb_emu_proxy *proxy, kb_emu_thr *t, const kb_emu_wgmma_op *op);
void kb_emu_wg_commit(kb_emu_wg *g, kb_emu_thr *t);
void kb_emu_wg_wait(kb_emu_wg *g, kb_emu_tma *tma, kb_emu_thr *t, unsigned n);
/* Thread t exits: its wgmmas in flight are dropped (their results are never read). */
void kb_emu_wg_exit(kb_emu_wg *g, kb_emu_tma *tma, kb_emu_thr *t);

/* The byte offset, relative to the start address, of element (row, k) of an operand of
 * rows x (32 bytes of K) under descriptor layout swizzle (0 none, 1 128B, 2 64B, 3 32B),
 * K-major (mn_major 0) or MN-major, element size es, lbo/sbo in bytes, before the address
 * swizzle (PTX ISA 9.7.15.5.1.2; the layouts of kb_wgmma.h). */
uint32_t kb_emu_wg_offset(int swizzle, int mn_major, unsigned es, uint32_t lbo, uint32_t sbo, unsigned row, unsigned k);

#endif /* KB_EMU_WGMMA_H */
