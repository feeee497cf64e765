/* emu_mbar.h - mbarrier as the PTX ISA defines it (9.7.13.15, "mbarrier"), on the emulator:
 * private to emu_sm90.c and emu_tma.c.
 *
 * State per barrier (9.7.13.15.1 "Contents of the mbarrier object"): the current phase (here
 * its number, counting from 0; the parity is its low bit), the pending arrival count, the
 * expected arrival count (1 .. 2^20-1) and the tx-count (-(2^20-1) .. 2^20-1). A phase
 * completes when pending == 0 and tx-count == 0 (9.7.13.15.2 "Phase completion"): the phase
 * number advances and pending is reset to expected; every thread waiting on the barrier wakes.
 *
 * Rules, each reported by name (the launch fails): use before init (an op on 8 bytes no
 * mbarrier.init of this block initialised, or invalidated since), init of a live barrier,
 * a count outside 1..2^20-1, more arrivals than pending, tx-count overflow or underflow, the
 * barrier's memory overwritten (the emulator keeps a marker there), a wait on a stale phase
 * (a state token older than the preceding phase; a parity wait that resolves to a phase this
 * thread already saw complete: a parity not flipped), and, through emu_sm90's deadlock report,
 * every live thread waiting.
 */
#ifndef KB_EMU_MBAR_H
#define KB_EMU_MBAR_H

#include "backend/emu/emu_block.h"

#define KB_EMU_MAX_MBARS 64           /* live mbarriers one block may have (an emulator limit) */
#define KB_EMU_MBAR_MAX ((1u << 20) - 1)
#define KB_EMU_WAIT_MBAR 1            /* kb_emu_thr.wait_kind: wait_on is the barrier index */

typedef struct {
    uint32_t off;                     /* [bytes] in shared memory */
    int live;                         /* initialised and not invalidated */
    uint32_t expected, pending;       /* arrivals */
    int32_t tx;                       /* [bytes] outstanding transactions */
    uint64_t phase;                   /* phases completed so far = the current phase's number */
} kb_emu_mbar;

typedef struct {
    kb_emu_mbar v[KB_EMU_MAX_MBARS];
    unsigned n;                       /* slots used in this block */
    uint64_t *seen;                   /* [KB_EMU_MAX_THREADS][KB_EMU_MAX_MBARS]: per thread and
                                       * barrier, 2 + the last phase a wait saw complete; 0 none */
    uint64_t changes;                 /* state changes in this block (progress, for the report) */
} kb_emu_mbars;

/* Tables; 0, or -1 out of memory. */
int kb_emu_mbars_init(kb_emu_mbars *m);
void kb_emu_mbars_fini(kb_emu_mbars *m);
/* A new block: no barrier is live. */
void kb_emu_mbars_reset(kb_emu_mbars *m);

/* The live barrier at bar for thread t (its index), or the launch fails naming op and the
 * rule (not shared memory, misaligned, use before init, memory overwritten). */
unsigned kb_emu_mbar_find(kb_emu_mbars *m, kb_emu_thr *t, const void *bar, const char *op);

/* The instructions, on behalf of thread t (each fails the launch on a broken rule). */
void kb_emu_mbar_init(kb_emu_mbars *m, kb_emu_thr *t, void *bar, unsigned count);
void kb_emu_mbar_inval(kb_emu_mbars *m, kb_emu_thr *t, void *bar);
/* arrive (count, after tx_bytes of expect_tx): returns the state token (the phase number). */
uint64_t kb_emu_mbar_arrive(kb_emu_mbars *m, kb_emu_thr *t, void *bar, unsigned count, unsigned tx_bytes);
/* expect_tx (sign > 0) or complete_tx (sign < 0) of bytes on barrier i; t may be NULL (a TMA
 * load completing: then a rule break is reported by `who`, the issuing thread). */
void kb_emu_mbar_tx(kb_emu_mbars *m, kb_emu_thr *t, unsigned i, int sign, unsigned bytes, kb_emu_thr *who);
/* test_wait / try_wait (KB_EMU_MBAR_* of kb_emu_abi.h): 1 when the phase completed. */
int kb_emu_mbar_wait(kb_emu_mbars *m, kb_emu_thr *t, void *bar, int how, uint64_t arg);

/* "mbarrier at shared offset X: phase P (parity p), A of E arrivals and B transaction bytes
 * still missing" for barrier i, into buf. */
void kb_emu_mbar_describe(const kb_emu_mbars *m, unsigned i, char *buf, size_t len);

#endif /* KB_EMU_MBAR_H */
