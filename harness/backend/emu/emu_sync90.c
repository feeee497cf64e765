/* emu_sync90.c - named barriers and setmaxnreg (see emu_sync90.h). */
#include "backend/emu/emu_sync90.h"

#include <stdio.h>
#include <string.h>

void kb_emu_sync90_reset(kb_emu_sync90 *s) { memset(s, 0, sizeof *s); }

void kb_emu_named_barrier(kb_emu_sync90 *s, kb_emu_thr *t, unsigned id, unsigned n, int arrive_only)
{
    kb_emu_worker *w = t->w;
    const char *op = arrive_only ? "bar.arrive" : "bar.sync";
    if (id > 15)
        kb_emu_thread_failf(t, "%s %u, %u: barrier ids are 0..15 (PTX ISA 9.7.13.1)", op, id, n);
    if (id == 0)
        kb_emu_thread_failf(t, "%s 0, %u: barrier 0 is __syncthreads' (the emulator keeps the two apart): name barriers 1..15",
             op, n);
    if (n == 0 || n % 32)
        kb_emu_thread_failf(t, "%s %u, %u: the thread count must be a non-zero multiple of the warp size (PTX ISA 9.7.13.1)", op, id, n);
    if (n > w->n)
        kb_emu_thread_failf(t, "%s %u, %u: more threads than the block's %u, so the barrier can never complete", op, id, n, w->n);
    if (s->bar[id].arrived && s->bar[id].n != n)
        kb_emu_thread_failf(t, "%s %u, %u: threads disagree on the count of barrier %u (%u arrived expecting %u)", op, id, n, id,
             s->bar[id].arrived, s->bar[id].n);
    s->bar[id].n = n;
    if (++s->bar[id].arrived == n) {
        s->bar[id].arrived = 0;
        for (unsigned k = 0; k < w->n; k++)
            if (w->thr[k].state == KB_EMU_T_WAIT_EXT && w->thr[k].wait_kind == KB_EMU_WAIT_NAMED && w->thr[k].wait_on == id)
                kb_emu_block_wake(w, k);
        if (w->sink->checks && w->shadow.cells)
            kb_emu_shadow_barrier(&w->shadow);
        return;
    }
    if (!arrive_only)
        kb_emu_block_park(t, KB_EMU_WAIT_NAMED, id);
}

static void init_regs(kb_emu_sync90 *s, const kb_emu_worker *w)
{
    unsigned groups = (w->n + 127) / 128, r0 = KB_EMU_REGFILE / (groups * 128) / 8 * 8;
    for (unsigned g = 0; g < groups; g++)
        s->regs[g] = r0 > 256 ? 256 : r0;
    s->regs_set = 1;
}

unsigned kb_emu_regs_used(const kb_emu_sync90 *s, const kb_emu_worker *w)
{
    unsigned used = 0;
    for (unsigned g = 0; g < (w->n + 127) / 128; g++)
        used += s->regs[g] * 128;
    return used;
}

/* Grant every waiting .inc the pool can now serve. */
static void grant(kb_emu_sync90 *s, kb_emu_worker *w)
{
    for (unsigned g = 0; g < (w->n + 127) / 128; g++)
        if (s->want[g] && kb_emu_regs_used(s, w) + (s->want[g] - s->regs[g]) * 128 <= KB_EMU_REGFILE) {
            s->regs[g] = s->want[g];
            s->want[g] = 0;
            for (unsigned k = g * 128; k < (g + 1) * 128; k++)
                kb_emu_block_wake(w, k);
        }
}

void kb_emu_setmaxnreg(kb_emu_sync90 *s, kb_emu_thr *t, int inc, unsigned regs)
{
    kb_emu_worker *w = t->w;
    const char *op = inc ? "setmaxnreg.inc" : "setmaxnreg.dec";
    unsigned g = t->pub.linear / 128, payload = (unsigned)inc << 16 | regs;
    if (regs % 8 || regs < 24 || regs > 256)
        kb_emu_thread_failf(t, "%s %u: the count must be a multiple of 8 in [24, 256] (PTX ISA 9.7.19.5)", op, regs);
    if (!s->regs_set)
        init_regs(s, w);
    const void *const *slots;
    if (!kb_emu_wg_rendezvous(t, (const void *)(uintptr_t)payload, &slots, op)) {
        while (s->want[g])
            kb_emu_block_park(t, KB_EMU_WAIT_REGS, g);
        return;
    }
    for (unsigned i = 0; i < 128; i++)
        if ((uintptr_t)slots[i] != payload)
            kb_emu_thread_failf(t, "%s %u: not uniform across warpgroup %u (its thread %u asked for %s %u): every thread of the "
                 "warpgroup executes the same setmaxnreg (PTX ISA 9.7.19.5, .sync.aligned)", op, regs, g, i,
                 ((uintptr_t)slots[i] >> 16) ? "inc" : "dec", (unsigned)((uintptr_t)slots[i] & 0xffffu));
    if (inc ? regs < s->regs[g] : regs > s->regs[g])
        kb_emu_thread_failf(t, "%s %u: warpgroup %u holds %u registers per thread; .inc may only raise the count and .dec only "
             "lower it (PTX ISA 9.7.19.5)", op, regs, g, s->regs[g]);
    if (!inc) {
        s->regs[g] = regs;
        grant(s, w);
        return;
    }
    s->want[g] = regs;
    grant(s, w);
    while (s->want[g])
        kb_emu_block_park(t, KB_EMU_WAIT_REGS, g);
}
