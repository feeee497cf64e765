/* emu_mbar.c - mbarrier phases, arrivals and transaction counts (see emu_mbar.h). */
#include "backend/emu/emu_mbar.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKER 0x4b424d4200000000ull   /* "KBMB" | index: what a live barrier's 8 bytes hold */

int kb_emu_mbars_init(kb_emu_mbars *m)
{
    memset(m, 0, sizeof *m);
    m->seen = calloc((size_t)KB_EMU_MAX_THREADS * KB_EMU_MAX_MBARS, sizeof *m->seen);
    return m->seen ? 0 : -1;
}

void kb_emu_mbars_fini(kb_emu_mbars *m)
{
    free(m->seen);
    memset(m, 0, sizeof *m);
}

void kb_emu_mbars_reset(kb_emu_mbars *m)
{
    if (m->n)
        memset(m->seen, 0, (size_t)KB_EMU_MAX_THREADS * KB_EMU_MAX_MBARS * sizeof *m->seen);
    m->n = 0;
    m->changes = 0;
}

/* The shared-memory offset of an 8-byte barrier, or the launch fails. */
static uint32_t bar_offset(kb_emu_thr *t, const void *bar, const char *op)
{
    const kb_emu_worker *w = t->w;
    const unsigned char *p = bar;
    if (p < w->smem || p + 8 > w->smem + w->sink->shmem_limit_bytes)
        kb_emu_thread_failf(t, "%s: the mbarrier at %p is not in shared memory (PTX ISA 9.7.13.15: an mbarrier object lives in "
             "shared memory)", op, bar);
    if ((uintptr_t)bar % 8)
        kb_emu_thread_failf(t, "%s: the mbarrier at shared offset %ld is not 8-byte aligned (PTX ISA 9.7.13.15.1)", op,
             (long)(p - w->smem));
    return (uint32_t)(p - w->smem);
}

static int slot_of(const kb_emu_mbars *m, uint32_t off)
{
    for (unsigned i = 0; i < m->n; i++)
        if (m->v[i].off == off)
            return (int)i;
    return -1;
}

unsigned kb_emu_mbar_find(kb_emu_mbars *m, kb_emu_thr *t, const void *bar, const char *op)
{
    uint32_t off = bar_offset(t, bar, op);
    int i = slot_of(m, off);
    if (i < 0 || !m->v[i].live)
        kb_emu_thread_failf(t, "mbarrier use before init: %s on shared offset %u, which no mbarrier.init of this block "
             "initialised%s (PTX ISA 9.7.13.15.9)", op, off, i >= 0 ? " since its mbarrier.inval" : "");
    uint64_t word;
    memcpy(&word, bar, 8);
    if (word != (MARKER | (unsigned)i))
        kb_emu_thread_failf(t, "mbarrier memory overwritten: %s on the mbarrier at shared offset %u, whose 8 bytes an ordinary "
             "store changed since its mbarrier.init (the object is opaque: only mbarrier instructions may "
             "access it, PTX ISA 9.7.13.15.1)", op, off);
    return (unsigned)i;
}

void kb_emu_mbar_init(kb_emu_mbars *m, kb_emu_thr *t, void *bar, unsigned count)
{
    uint32_t off = bar_offset(t, bar, "mbarrier.init");
    int i = slot_of(m, off);
    if (count < 1 || count > KB_EMU_MBAR_MAX)
        kb_emu_thread_failf(t, "mbarrier.init count %u out of range: the expected arrival count is 1..2^20-1 (PTX ISA "
             "9.7.13.15.1)", count);
    if (i >= 0 && m->v[i].live)
        kb_emu_thread_failf(t, "mbarrier.init of a live mbarrier at shared offset %u (in phase %llu): mbarrier.inval it first "
             "(PTX ISA 9.7.13.15.10)", off, (unsigned long long)m->v[i].phase);
    if (i < 0) {
        if (m->n == KB_EMU_MAX_MBARS)
            kb_emu_thread_failf(t, "more than %d mbarriers in one block (an emulator limit)", KB_EMU_MAX_MBARS);
        i = (int)m->n++;
    }
    kb_emu_mbar *b = &m->v[i];
    memset(b, 0, sizeof *b);
    b->off = off;
    b->live = 1;
    b->expected = b->pending = count;
    for (unsigned k = 0; k < KB_EMU_MAX_THREADS; k++)
        m->seen[(size_t)k * KB_EMU_MAX_MBARS + (unsigned)i] = 0;
    uint64_t word = MARKER | (unsigned)i;
    memcpy(bar, &word, 8);
    m->changes++;
}

void kb_emu_mbar_inval(kb_emu_mbars *m, kb_emu_thr *t, void *bar)
{
    unsigned i = kb_emu_mbar_find(m, t, bar, "mbarrier.inval");
    m->v[i].live = 0;
    memset(bar, 0, 8);
    m->changes++;
}

/* Phase completion (9.7.13.15.2): the next phase, every waiter of the barrier woken, and,
 * under --emu-check, a new race epoch (the barrier orders the threads it synchronised). */
static void maybe_complete(kb_emu_mbars *m, kb_emu_worker *w, unsigned i)
{
    kb_emu_mbar *b = &m->v[i];
    m->changes++;
    if (b->pending || b->tx)
        return;
    b->phase++;
    b->pending = b->expected;
    for (unsigned k = 0; k < w->n; k++)
        if (w->thr[k].state == KB_EMU_T_WAIT_EXT && w->thr[k].wait_kind == KB_EMU_WAIT_MBAR && w->thr[k].wait_on == i)
            kb_emu_block_wake(w, k);
    if (w->sink->checks && w->shadow.cells)
        kb_emu_shadow_barrier(&w->shadow);
}

static void add_tx(kb_emu_mbars *m, kb_emu_thr *who, unsigned i, int64_t delta, const char *op)
{
    kb_emu_mbar *b = &m->v[i];
    int64_t tx = (int64_t)b->tx + delta;
    if (tx > (int64_t)KB_EMU_MBAR_MAX || tx < -(int64_t)KB_EMU_MBAR_MAX)
        kb_emu_thread_failf(who, "mbarrier tx-count %s: %s of %lld bytes on the mbarrier at shared offset %u takes its tx-count "
             "from %d to %lld, outside -(2^20-1)..2^20-1 (PTX ISA 9.7.13.15.1)", tx > 0 ? "overflow" : "underflow",
             op, (long long)(delta < 0 ? -delta : delta), b->off, b->tx, (long long)tx);
    b->tx = (int32_t)tx;
}

uint64_t kb_emu_mbar_arrive(kb_emu_mbars *m, kb_emu_thr *t, void *bar, unsigned count, unsigned tx_bytes)
{
    const char *op = tx_bytes ? "mbarrier.arrive.expect_tx" : "mbarrier.arrive";
    unsigned i = kb_emu_mbar_find(m, t, bar, op);
    kb_emu_mbar *b = &m->v[i];
    if (count < 1 || count > KB_EMU_MBAR_MAX)
        kb_emu_thread_failf(t, "%s count %u out of range 1..2^20-1 (PTX ISA 9.7.13.15.11)", op, count);
    if (tx_bytes)
        add_tx(m, t, i, tx_bytes, op);
    if (count > b->pending)
        kb_emu_thread_failf(t, "%s of %u on the mbarrier at shared offset %u, which has only %u of %u arrivals pending in phase "
             "%llu: more arrivals than its expected count", op, count, b->off, b->pending, b->expected,
             (unsigned long long)b->phase);
    uint64_t state = b->phase;
    b->pending -= count;
    maybe_complete(m, t->w, i);
    return state;
}

void kb_emu_mbar_tx(kb_emu_mbars *m, kb_emu_thr *t, unsigned i, int sign, unsigned bytes, kb_emu_thr *who)
{
    if (bytes > KB_EMU_MBAR_MAX)
        kb_emu_thread_failf(who, "%s of %u bytes: a transaction count is at most 2^20-1 (PTX ISA 9.7.13.15.1)",
             sign > 0 ? "mbarrier.expect_tx" : "complete_tx", bytes);
    add_tx(m, who, i, sign > 0 ? (int64_t)bytes : -(int64_t)bytes, sign > 0 ? "expect_tx" : "complete_tx");
    maybe_complete(m, who->w, i);
    (void)t;
}

/* The phase a wait asks about (9.7.13.15.16): a state token names it; a parity names the
 * current phase when it is the current parity, else the immediately preceding one. */
static int64_t target_phase(const kb_emu_mbar *b, kb_emu_thr *t, int how, uint64_t arg)
{
    if (how & KB_EMU_MBAR_PARITY)
        return (arg & 1u) == (b->phase & 1u) ? (int64_t)b->phase : (int64_t)b->phase - 1;
    if (arg > b->phase)
        kb_emu_thread_failf(t, "mbarrier wait with state token %llu on the mbarrier at shared offset %u, which is only in phase "
             "%llu: not a token of this barrier", (unsigned long long)arg, b->off, (unsigned long long)b->phase);
    if (arg + 1 < b->phase)
        kb_emu_thread_failf(t, "mbarrier wait on a stale phase: state token of phase %llu on the mbarrier at shared offset %u, now "
             "in phase %llu; only the current or the immediately preceding phase may be waited on (PTX ISA "
             "9.7.13.15.16)", (unsigned long long)arg, b->off, (unsigned long long)b->phase);
    return (int64_t)arg;
}

int kb_emu_mbar_wait(kb_emu_mbars *m, kb_emu_thr *t, void *bar, int how, uint64_t arg)
{
    const char *op = how & KB_EMU_MBAR_PARITY ? (how & KB_EMU_MBAR_TRY ? "mbarrier.try_wait.parity"
                                                                      : "mbarrier.test_wait.parity")
                                              : (how & KB_EMU_MBAR_TRY ? "mbarrier.try_wait" : "mbarrier.test_wait");
    unsigned i = kb_emu_mbar_find(m, t, bar, op);
    kb_emu_mbar *b = &m->v[i];
    int64_t q = target_phase(b, t, how, arg);
    uint64_t *seen = &m->seen[(size_t)t->pub.linear * KB_EMU_MAX_MBARS + i];
    if ((how & KB_EMU_MBAR_PARITY) && q < (int64_t)b->phase && (uint64_t)(q + 2) <= *seen)
        kb_emu_thread_failf(t, "mbarrier wait on a stale parity: %s(%u) on the mbarrier at shared offset %u (now in phase %llu) "
             "resolves to phase %lld, which this thread already saw complete: a parity not flipped after a "
             "wait? (PTX ISA 9.7.13.15.16: the parity names the current or the preceding phase)", op,
             (unsigned)(arg & 1u), b->off, (unsigned long long)b->phase, (long long)q);
    if (q >= (int64_t)b->phase) {
        /* not complete: test_wait answers now; try_wait (and a test_wait that will be asked
         * again) waits for the barrier to change. Under the random schedule a try_wait
         * sometimes gives up at once, as its time limit allows (9.7.13.15.16). */
        kb_emu_worker *w = t->w;
        if (!(how & KB_EMU_MBAR_TRY)) {
            /* a polling loop: let the others run; alone, wait for a change (or the deadlock report) */
            if (w->rq_len == 0 && w->next_unstarted >= w->n)
                kb_emu_block_park(t, KB_EMU_WAIT_MBAR, i);
            else
                kb_emu_block_yield(t);
            return 0;
        }
        if (w->sink->schedule == KB_EMU_SCHED_RANDOM && (kb_emu_block_rand(w) & 3u) == 0)
            return 0;
        while (q >= (int64_t)m->v[i].phase) {
            kb_emu_block_park(t, KB_EMU_WAIT_MBAR, i);
            if (!m->v[i].live || m->v[i].off != b->off)
                kb_emu_thread_failf(t, "%s: the mbarrier at shared offset %u was invalidated while this thread waited on it", op, b->off);
        }
    }
    if ((uint64_t)(q + 2) > *seen)
        *seen = (uint64_t)(q + 2);
    return 1;
}

void kb_emu_mbar_describe(const kb_emu_mbars *m, unsigned i, char *buf, size_t len)
{
    const kb_emu_mbar *b = &m->v[i];
    snprintf(buf, len, "the mbarrier at shared offset %u: phase %llu (parity %u), %u of %u arrivals and %d "
             "transaction bytes still missing", b->off, (unsigned long long)b->phase, (unsigned)(b->phase & 1u),
             b->pending, b->expected, b->tx);
}
