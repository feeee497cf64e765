/* emu_sm90.c - the sm_90 machinery's runtime slots and scheduler extension (see emu_sm90.h). */
#include "backend/emu/emu_sm90.h"

#include "backend/emu/emu_mbar.h"
#include "backend/emu/emu_proxy.h"
#include "backend/emu/emu_sync90.h"
#include "backend/emu/emu_tma.h"
#include "backend/emu/emu_wgmma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    kb_emu_mbars mbar;
    kb_emu_tma tma;
    kb_emu_wg wg;
    kb_emu_sync90 sync;
    kb_emu_proxy proxy;
    int proxy_on;                 /* this launch records generic shared writes */
    int dirty;                    /* a block used the machinery since the last reset */
} sm90_state;

/* A new block: the last one's state forgotten - only when a block used it, so a worker that
 * once ran an sm_90 kernel costs today's kernels nothing per block. */
static void ext_block_start(kb_emu_worker *w)
{
    sm90_state *s = w->ext_state;
    if (s->dirty) {
        kb_emu_wg_reset(&s->wg, &s->tma);
        kb_emu_tma_reset(&s->tma);
        kb_emu_mbars_reset(&s->mbar);
        kb_emu_sync90_reset(&s->sync);
        s->dirty = 0;
    }
    if (s->proxy_on)
        kb_emu_proxy_block(&s->proxy);
}

static void ext_tick(kb_emu_worker *w, int idle)
{
    sm90_state *s = w->ext_state;
    kb_emu_tma_tick(&s->tma, &s->mbar, s->proxy_on ? &s->proxy : NULL, w, idle);
}

static void ext_thread_exit(kb_emu_worker *w, kb_emu_thr *t)
{
    sm90_state *s = w->ext_state;
    kb_emu_tma_exit(&s->tma, t);
    kb_emu_wg_exit(&s->wg, &s->tma, t);
}

/* Deadlock: what the waiting threads wait for, the first of each kind named in full. */
static int ext_report_stuck(kb_emu_worker *w)
{
    sm90_state *s = w->ext_state;
    unsigned mbar = 0, named = 0, wg = 0, regs = 0, first_mbar = 0, first_named = 0, first_wg = 0;
    for (unsigned k = 0; k < w->n; k++) {
        const kb_emu_thr *t = &w->thr[k];
        if (t->state != KB_EMU_T_WAIT_EXT)
            continue;
        if (t->wait_kind == KB_EMU_WAIT_MBAR && !mbar++)
            first_mbar = t->wait_on;
        else if (t->wait_kind == KB_EMU_WAIT_NAMED && !named++)
            first_named = t->wait_on;
        else if (t->wait_kind == KB_EMU_WAIT_REGS)
            regs++;
        else if (t->wait_kind == -1 && !wg++)
            first_wg = t->wait_on;
    }
    if (!mbar && !named && !wg && !regs)
        return 0;
    char what[400] = "", part[300];
    if (mbar) {
        kb_emu_mbar_describe(&s->mbar, first_mbar, part, sizeof part);
        snprintf(what, sizeof what, "%u on mbarriers (%s)", mbar, part);
    } else if (named) {
        snprintf(what, sizeof what, "%u at bar.sync %u (%u of %u threads arrived)", named, first_named,
                 s->sync.bar[first_named].arrived, s->sync.bar[first_named].n);
    } else if (wg) {
        snprintf(what, sizeof what, "%u at a warpgroup collective of warpgroup %u (%u of 128 threads arrived)", wg,
                 first_wg, w->wgx[first_wg].arrived);
    } else {
        snprintf(what, sizeof what, "%u at setmaxnreg.inc (the block holds %u of %u registers)", regs,
                 kb_emu_regs_used(&s->sync, w), KB_EMU_REGFILE);
    }
    const kb_emu_dim3 *b = &w->blk.block_idx;
    kb_emu_sink_fail(w->sink, KB_ERR_FAULT, "deadlock: every live thread of block (%u,%u,%u) waits and no copy is in "
                     "flight: %s; %u on mbarriers, %u at named barriers, %u at warpgroup collectives, %u at "
                     "setmaxnreg, %u at __syncthreads; %u of %u threads exited", b->x, b->y, b->z, what, mbar,
                     named, wg, regs, w->n_wait_block, w->n_done, w->n);
    return 1;
}

static void ext_fini(kb_emu_worker *w)
{
    sm90_state *s = w->ext_state;
    kb_emu_wg_reset(&s->wg, &s->tma);
    kb_emu_wg_fini(&s->wg);
    kb_emu_tma_fini(&s->tma);
    kb_emu_mbars_fini(&s->mbar);
    kb_emu_proxy_fini(&s->proxy);
    free(s);
    w->ext_state = NULL;
    w->ext = NULL;
}

static const kb_emu_ext sm90_ext = {
    .block_start = ext_block_start,
    .tick = ext_tick,
    .thread_exit = ext_thread_exit,
    .report_stuck = ext_report_stuck,
    .fini = ext_fini,
};

static sm90_state *alloc_state(kb_emu_worker *w)
{
    sm90_state *s = calloc(1, sizeof *s);
    size_t arena = w->sink->shmem_limit_bytes;
    if (!s)
        return NULL;
    if (kb_emu_mbars_init(&s->mbar) || kb_emu_tma_init(&s->tma, arena) || kb_emu_wg_init(&s->wg, arena)) {
        kb_emu_wg_fini(&s->wg);
        kb_emu_tma_fini(&s->tma);
        kb_emu_mbars_fini(&s->mbar);
        free(s);
        return NULL;
    }
    w->ext_state = s;
    w->ext = &sm90_ext;
    return s;
}

/* The state of t's worker, made at the first sm_90 call; the block now runs the extension. */
static sm90_state *get(kb_emu_thread *p)
{
    kb_emu_thr *t = (kb_emu_thr *)p;
    kb_emu_worker *w = t->w;
    if (!w->ext_state && !alloc_state(w))
        kb_emu_thread_fail(t, KB_ERR_OOM, "emu: out of memory for the sm_90 machinery");
    w->ext_live = 1;
    ((sm90_state *)w->ext_state)->dirty = 1;
    return w->ext_state;
}

kb_status kb_emu_sm90_begin(kb_emu_worker *w, int record_proxy)
{
    if (!record_proxy) {
        if (w->ext_state)
            ((sm90_state *)w->ext_state)->proxy_on = 0;
        return KB_OK;
    }
    sm90_state *s = w->ext_state ? w->ext_state : alloc_state(w);
    if (!s)
        return KB_ERR_OOM;
    if (!s->proxy.block && kb_emu_proxy_init(&s->proxy, w->sink->shmem_limit_bytes, KB_EMU_MAX_THREADS) != 0) {
        kb_emu_proxy_fini(&s->proxy);
        return KB_ERR_OOM;
    }
    s->proxy_on = 1;
    return KB_OK;
}

void kb_emu_sm90_generic_write(kb_emu_thr *t, uint32_t off, unsigned bytes)
{
    sm90_state *s = t->w->ext_state;
    if (!s)
        return;
    if (s->proxy_on)
        kb_emu_proxy_write(&s->proxy, off, bytes, t->pub.linear);
    for (uint32_t c = off / 16; c <= (off + (bytes ? bytes : 1) - 1) / 16 && c < s->tma.chunks; c++) {
        s->tma.laid[c] = KB_EMU_LAID_NONE;   /* re-laid by a generic store: no TMA layout to hold it to */
        if (s->tma.pending[c] || s->tma.reading[c]) {
            char msg[300];
            snprintf(msg, sizeof msg, "%s: a store to shared offset %u %s", s->tma.reading[c]
                     ? "shared memory of a wgmma operand written between issue and retirement"
                     : "shared memory written while a TMA load to it is in flight",
                     off, s->tma.reading[c] ? "before wgmma.wait_group retired the wgmma that reads it"
                                            : "before the load landed (a race with the copy)");
            kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
        }
    }
}

void kb_emu_sm90_check_read(kb_emu_thr *t, uint32_t off, unsigned bytes)
{
    sm90_state *s = t->w->ext_state;
    for (uint32_t c = off / 16; s && c <= (off + (bytes ? bytes : 1) - 1) / 16 && c < s->tma.chunks; c++)
        if (s->tma.pending[c]) {
            char msg[300];
            snprintf(msg, sizeof msg, "reads %u bytes of shared memory at offset %u while a TMA load to it has not "
                     "landed (wait on the load's mbarrier before reading its destination)", bytes, off);
            kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
        }
}

/* ---- the runtime slots ---- */
#define T_ ((kb_emu_thr *)p)
void kb_emu_rt_mbar_init(kb_emu_thread *p, void *bar, unsigned count) { kb_emu_mbar_init(&get(p)->mbar, T_, bar, count); }
void kb_emu_rt_mbar_inval(kb_emu_thread *p, void *bar) { kb_emu_mbar_inval(&get(p)->mbar, T_, bar); }
unsigned long long kb_emu_rt_mbar_arrive(kb_emu_thread *p, void *bar, unsigned count, unsigned tx_bytes)
{
    return kb_emu_mbar_arrive(&get(p)->mbar, T_, bar, count, tx_bytes);
}
void kb_emu_rt_mbar_tx(kb_emu_thread *p, void *bar, int sign, unsigned bytes)
{
    sm90_state *s = get(p);
    unsigned i = kb_emu_mbar_find(&s->mbar, T_, bar, sign > 0 ? "mbarrier.expect_tx" : "mbarrier.complete_tx");
    kb_emu_mbar_tx(&s->mbar, T_, i, sign, bytes, T_);
}
int kb_emu_rt_mbar_wait(kb_emu_thread *p, void *bar, int how, unsigned long long arg)
{
    return kb_emu_mbar_wait(&get(p)->mbar, T_, bar, how, arg);
}
void kb_emu_rt_tma_load(kb_emu_thread *p, void *smem, const void *tmap, const int *coords, void *bar)
{
    sm90_state *s = get(p);
    kb_emu_tma_load(&s->tma, &s->mbar, T_, smem, tmap, coords, bar);
}
void kb_emu_rt_tma_store(kb_emu_thread *p, const void *tmap, const void *smem, const int *coords)
{
    sm90_state *s = get(p);
    kb_emu_tma_store(&s->tma, s->proxy_on ? &s->proxy : NULL, T_, tmap, smem, coords);
}
void kb_emu_rt_bulk_commit(kb_emu_thread *p) { kb_emu_tma_commit(&get(p)->tma, T_); }
void kb_emu_rt_bulk_wait(kb_emu_thread *p, int n, int read_only)
{
    (void)read_only;   /* the model reads and writes a store at once: .read waits as long */
    kb_emu_tma_wait(&get(p)->tma, T_, n < 0 ? 0u : (unsigned)n);
}
void kb_emu_rt_fence_proxy_async(kb_emu_thread *p)
{
    sm90_state *s = get(p);
    if (s->proxy_on)
        kb_emu_proxy_fence(&s->proxy, p->linear);
}
void kb_emu_rt_named_barrier(kb_emu_thread *p, unsigned id, unsigned n, int arrive_only)
{
    kb_emu_named_barrier(&get(p)->sync, T_, id, n, arrive_only);
}
void kb_emu_rt_setmaxnreg(kb_emu_thread *p, int inc, unsigned regs) { kb_emu_setmaxnreg(&get(p)->sync, T_, inc, regs); }
void kb_emu_rt_wgmma_fence(kb_emu_thread *p) { kb_emu_wg_fence(&get(p)->wg, T_); }
void kb_emu_rt_wgmma(kb_emu_thread *p, const kb_emu_wgmma_op *op)
{
    sm90_state *s = get(p);
    kb_emu_wg_mma(&s->wg, &s->tma, s->proxy_on ? &s->proxy : NULL, T_, op);
}
void kb_emu_rt_wgmma_commit(kb_emu_thread *p) { kb_emu_wg_commit(&get(p)->wg, T_); }
void kb_emu_rt_wgmma_wait(kb_emu_thread *p, int n) { kb_emu_wg_wait(&get(p)->wg, &get(p)->tma, T_, n < 0 ? 0u : (unsigned)n); }
#undef T_
