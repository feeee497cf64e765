/* emu_memrt.c - cp.async and checked accesses (see emu_memrt.h). */
#include "backend/emu/emu_memrt.h"

#include "backend/backend.h"
#include "backend/emu/emu_sm90.h"
#include "backend/emu/emu_symbol.h"

#include <stdio.h>

/* The offset of [addr, addr + bytes) in the block's shared memory arena, or -1. */
static long arena_offset(const kb_emu_worker *w, const void *addr, size_t bytes)
{
    const unsigned char *p = addr;
    size_t limit = w->sink->shmem_limit_bytes;
    if (p < w->smem || p + bytes > w->smem + limit)
        return -1;
    return (long)(p - w->smem);
}

/* A global-memory access of kernel code: a write marks its bytes; a read of a byte
 * nothing wrote fails the launch (--emu-check init). */
static void global_access(kb_emu_thr *t, const void *addr, unsigned bytes, int kind, const void *pc)
{
    const kb_emu_heap *heap = t->w->sink->heap;
    if (!heap)
        return;
    if (kind != KB_EMU_ACCESS_READ) {
        kb_emu_heap_mark(heap, addr, bytes);
        return;
    }
    const kb_emu_region *r;
    long long off = kb_emu_heap_unwritten(heap, addr, bytes, &r);
    if (off < 0)
        return;
    char here[400], msg[700];
    kb_emu_symbolize(pc, here, sizeof here);
    snprintf(msg, sizeof msg, "read of memory never written: global memory, byte %lld of a %llu-byte allocation "
             "(nothing uploaded, filled or stored it), read at %s", off, (unsigned long long)(r->end - r->base), here);
    kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
}

/* Fail t's launch for hazard h found at its access at pc. */
__attribute__((noreturn)) static void hazard_fail(kb_emu_thr *t, const kb_emu_hazard *h, const void *pc)
{
    char here[400], there[400], msg[1200];
    kb_emu_symbolize(pc, here, sizeof here);
    if (h->kind == KB_HAZ_UNINIT) {
        snprintf(msg, sizeof msg, "%s: shared memory at offset %u, read at %s", kb_emu_hazard_name(h->kind), h->off,
                 here);
    } else {
        const kb_emu_dim3 *o = &t->w->thr[h->other].pub.thread_idx;
        kb_emu_symbolize(h->other_pc, there, sizeof there);
        snprintf(msg, sizeof msg, "shared-memory race (%s) at offset %u with no __syncthreads between: thread "
                 "(%u,%u,%u) %s at %s; this %s at %s", kb_emu_hazard_name(h->kind), h->off, o->x, o->y, o->z,
                 h->kind == KB_HAZ_WAR ? "read" : "wrote", there, h->kind == KB_HAZ_RAW ? "read" : "write", here);
    }
    kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
}

void kb_emu_rt_cp_async(kb_emu_thread *p, void *smem, const void *gmem, int src_bytes)
{
    kb_emu_thr *t = (kb_emu_thr *)p;
    kb_emu_worker *w = t->w;
    long off = arena_offset(w, smem, 16);
    if (off < 0)
        kb_emu_thread_fail(t, KB_ERR_FAULT, "cp.async: the destination is not shared memory");
    kb_emu_hazard h;
    if (src_bytes > 0)
        global_access(t, gmem, (unsigned)src_bytes, KB_EMU_ACCESS_READ, __builtin_return_address(0));
    /* the copy may land any time until its wait: a write from the issue on */
    if ((w->sink->checks & KB_EMU_CHECK_RACE) &&
        kb_emu_shadow_access(&w->shadow, (uint32_t)off, 16, 1, p->linear, __builtin_return_address(0), 1, 0, &h))
        hazard_fail(t, &h, __builtin_return_address(0));
    if (kb_emu_async_issue(&w->async, w->smem, (uint32_t)off, gmem, src_bytes, p->linear) != 0)
        kb_emu_thread_fail(t, KB_ERR_OOM, "cp.async: out of memory for pending copies");
}

void kb_emu_rt_cp_async_commit(kb_emu_thread *p) { kb_emu_async_commit(&((kb_emu_thr *)p)->w->async, p->linear); }

void kb_emu_rt_cp_async_wait(kb_emu_thread *p, int n)
{
    kb_emu_worker *w = ((kb_emu_thr *)p)->w;
    const kb_emu_copy_queue *q = &w->async.q[p->linear];
    uint32_t first = q->head;
    kb_emu_async_wait(&w->async, w->smem, p->linear, n < 0 ? 0 : (unsigned)n);
    if (w->sink->checks)             /* what landed was written by this thread, now */
        for (uint32_t k = first; k < q->head; k++)
            kb_emu_shadow_wrote(&w->shadow, q->v[k].off, 16, p->linear, __builtin_return_address(0));
}

void kb_emu_rt_shared_read(kb_emu_thread *p, const void *addr, unsigned bytes)
{
    kb_emu_thr *t = (kb_emu_thr *)p;
    long off = arena_offset(t->w, addr, bytes);
    const kb_emu_copy *c;
    if (off >= 0 && t->w->ext_live)
        kb_emu_sm90_check_read(t, (uint32_t)off, bytes);
    int owner = off < 0 ? -1 : kb_emu_async_pending(&t->w->async, (uint32_t)off, bytes, &c);
    if (owner < 0)
        return;
    const kb_emu_dim3 *i = &t->w->thr[owner].pub.thread_idx;
    char msg[300];
    snprintf(msg, sizeof msg, "reads %u bytes of shared memory at offset %ld while a cp.async to offset %u, issued "
             "by thread (%u,%u,%u) in its group %u, is still pending (its cp.async.wait_group has not retired "
             "that group: a wait count too small?)", bytes, off, c->off, i->x, i->y, i->z, c->group);
    kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
}

void kb_emu_rt_access(kb_emu_thread *p, const void *addr, unsigned bytes, int kind, const void *pc)
{
    kb_emu_thr *t = (kb_emu_thr *)p;
    kb_emu_worker *w = t->w;
    unsigned c = w->sink->checks;
    long off = arena_offset(w, addr, bytes);
    if (!c)
        return;
    if (off < 0) {
        global_access(t, addr, bytes, kind, pc);
        return;
    }
    if (kind == KB_EMU_ACCESS_READ)
        kb_emu_rt_shared_read(p, addr, bytes);
    else if (w->ext && kind == KB_EMU_ACCESS_WRITE)
        kb_emu_sm90_generic_write(t, (uint32_t)off, bytes);
    kb_emu_hazard h;
    int atomic = kind == KB_EMU_ACCESS_ATOMIC;   /* synchronises: written, never a race */
    if (kb_emu_shadow_access(&w->shadow, (uint32_t)off, bytes, kind != KB_EMU_ACCESS_READ, p->linear, pc,
                             !atomic && (c & KB_EMU_CHECK_RACE), !atomic && (c & KB_EMU_CHECK_INIT), &h))
        hazard_fail(t, &h, pc);
}
