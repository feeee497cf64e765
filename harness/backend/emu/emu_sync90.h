/* emu_sync90.h - named barriers (bar.sync / bar.arrive id, n: PTX ISA 9.7.13.1) and setmaxnreg
 * (9.7.19.5) on the emulator; private to emu_sm90.c.
 *
 * Named barrier id (1..15; 0 is __syncthreads', kept apart here) completes when n threads
 * (a multiple of 32, at most the block's) have arrived; bar.sync waits for that, bar.arrive
 * does not. All arrivals at one barrier instance must name the same n.
 * setmaxnreg: every thread of the warpgroup executes it with the same count, a multiple of 8
 * in [24, 256]; .inc asks for at least the warpgroup's current count, .dec at most. The
 * block's pool is the SM's register file, 65536 registers (one block per SM, as the kernels
 * that use setmaxnreg run); each warpgroup starts with the largest multiple of 8 the launch
 * could have given every thread (min(256, 65536 / threads rounded to warpgroups)), so .inc
 * waits until enough registers were given back by .dec elsewhere - a deadlock when never.
 */
#ifndef KB_EMU_SYNC90_H
#define KB_EMU_SYNC90_H

#include "backend/emu/emu_block.h"

#define KB_EMU_WAIT_NAMED 2          /* kb_emu_thr.wait_kind: wait_on is the barrier id */
#define KB_EMU_WAIT_REGS 3           /* wait_on is the warpgroup */
#define KB_EMU_REGFILE 65536         /* registers per SM (H100: 64K 32-bit registers) */

typedef struct {
    struct { unsigned n, arrived; } bar[16];
    unsigned regs[KB_EMU_MAX_THREADS / 128];     /* per warpgroup, registers per thread */
    unsigned want[KB_EMU_MAX_THREADS / 128];     /* a .inc waiting for the pool: its count; 0 none */
    int regs_set;                                /* regs[] initialised for this block */
} kb_emu_sync90;

void kb_emu_sync90_reset(kb_emu_sync90 *s);
void kb_emu_named_barrier(kb_emu_sync90 *s, kb_emu_thr *t, unsigned id, unsigned n, int arrive_only);
void kb_emu_setmaxnreg(kb_emu_sync90 *s, kb_emu_thr *t, int inc, unsigned regs);
/* Registers the block's warpgroups hold now, and the pool's total. */
unsigned kb_emu_regs_used(const kb_emu_sync90 *s, const kb_emu_worker *w);

#endif /* KB_EMU_SYNC90_H */
