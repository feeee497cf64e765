/* emu_tma.c - TMA tile loads and stores, in flight until the scheduler lands them (see
 * emu_tma.h). */
#include "backend/emu/emu_tma.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_emu_tma_init(kb_emu_tma *m, size_t arena_bytes)
{
    memset(m, 0, sizeof *m);
    m->chunks = (arena_bytes + 15) / 16;
    m->pending = calloc(m->chunks + 1, sizeof *m->pending);
    m->reading = calloc(m->chunks + 1, sizeof *m->reading);
    m->laid = calloc(m->chunks + 1, sizeof *m->laid);
    return m->pending && m->reading && m->laid ? 0 : -1;
}

void kb_emu_tma_reset(kb_emu_tma *m)
{
    for (unsigned i = 0; i < m->n; i++)
        free(m->ops[i].data);
    m->n = 0;
    memset(m->pending, 0, m->chunks * sizeof *m->pending);
    memset(m->reading, 0, m->chunks * sizeof *m->reading);
    if (m->laid)
        memset(m->laid, 0, m->chunks * sizeof *m->laid);
    memset(m->committed, 0, sizeof m->committed);
}

void kb_emu_tma_fini(kb_emu_tma *m)
{
    if (m->pending)
        kb_emu_tma_reset(m);
    free(m->ops);
    free(m->pending);
    free(m->reading);
    free(m->laid);
    memset(m, 0, sizeof *m);
}

/* The map, the box's shared offset and size, with the alignment rules; fails the launch. */
static uint32_t check_box(kb_emu_thr *t, const void *tmap, const void *smem, kb_emu_tmap *map, uint32_t *bytes,
                          const char *op)
{
    kb_emu_worker *w = t->w;
    if (!tmap || kb_emu_tmap_decode(tmap, map) != 0)
        kb_emu_thread_failf(t, "%s: the tensor map is not one kb_backend_tmap_encode made (corrupt, or not a tensor map)", op);
    uint64_t n = map->elem_bytes;
    for (unsigned i = 0; i < map->rank; i++)
        n *= (map->box[i] + map->estride[i] - 1) / map->estride[i];
    uint32_t inner = (map->box[0] + map->estride[0] - 1) / map->estride[0] * map->elem_bytes;
    if (inner % 16)
        kb_emu_thread_failf(t, "%s: an inner box row of %u bytes (element strides) is not a multiple of 16 bytes", op, inner);
    const unsigned char *p = smem;
    if (p < w->smem || p + n > w->smem + w->sink->shmem_limit_bytes)
        kb_emu_thread_failf(t, "%s: the %llu-byte box at %p is not in shared memory", op, (unsigned long long)n, smem);
    uint32_t off = (uint32_t)(p - w->smem), align = map->swizzle_bytes == 128 ? 1024 : 128;
    if (off % align)
        kb_emu_thread_failf(t, "%s: shared address %u is not %u-byte aligned (PTX ISA 9.7.9.25.5.1: the shared box is 128-byte "
             "aligned%s)", op, off, align, align == 1024 ? "; the 128B swizzle's pattern repeats every 1024 bytes" : "");
    *bytes = (uint32_t)n;
    return off;
}

/* Visit every element of the box at coords: fn(dense byte offset, global address or NULL out of bounds). */
static void each_element(const kb_emu_tmap *m, const int *coords, void (*fn)(void *ctx, uint32_t at, unsigned char *g),
                         void *ctx)
{
    uint32_t n[KB_TMAP_MAX_RANK] = { 1, 1, 1, 1, 1 }, x[KB_TMAP_MAX_RANK] = { 0 };
    uint64_t total = 1;
    for (unsigned i = 0; i < m->rank; i++)
        total *= n[i] = (m->box[i] + m->estride[i] - 1) / m->estride[i];
    for (uint64_t e = 0; e < total; e++) {
        uint64_t r = e, addr = m->base;
        int in = 1;
        for (unsigned i = 0; i < m->rank; i++) {
            x[i] = (uint32_t)(r % n[i]);
            r /= n[i];
            int64_t g = (int64_t)coords[i] + (int64_t)x[i] * m->estride[i];
            in &= g >= 0 && (uint64_t)g < m->dims[i];
            addr += (uint64_t)g * m->strides[i];
        }
        fn(ctx, (uint32_t)(e * m->elem_bytes), in ? (unsigned char *)(uintptr_t)addr : NULL);
    }
}

typedef struct {
    const kb_emu_tma_op *op;
    const kb_emu_heap *heap;      /* --emu-check init: global bytes written */
    kb_emu_thr *t;                /* the issuing thread (loads) */
} visit_ctx;

static void gather(void *ctx, uint32_t at, unsigned char *g)
{
    const visit_ctx *c = ctx;
    unsigned es = c->op->map.elem_bytes;
    const kb_emu_region *r;
    long long off;
    if (g && c->heap && (off = kb_emu_heap_unwritten(c->heap, g, es, &r)) >= 0)
        kb_emu_thread_failf(c->t, "read of memory never written: a TMA load reads byte %lld of a %llu-byte allocation that nothing "
             "uploaded, filled or stored", off, (unsigned long long)(r->end - r->base));
    if (g)
        memcpy(c->op->data + at, g, es);
    else
        memset(c->op->data + at, c->op->map.oob_nan ? 0xff : 0, es);   /* all-ones: NaN in every float type */
}

static void scatter(void *ctx, uint32_t at, unsigned char *g)
{
    const visit_ctx *c = ctx;
    if (!g)
        return;                                  /* out of bounds: not written */
    memcpy(g, c->op->data + at, c->op->map.elem_bytes);
    if (c->heap)
        kb_emu_heap_mark(c->heap, g, c->op->map.elem_bytes);
}

static kb_emu_tma_op *new_op(kb_emu_tma *m, kb_emu_thr *t, uint32_t bytes)
{
    if (m->n == m->cap) {
        unsigned cap = m->cap ? 2 * m->cap : 16;
        kb_emu_tma_op *v = realloc(m->ops, cap * sizeof *v);
        if (!v)
            kb_emu_thread_fail(t, KB_ERR_OOM, "TMA: out of memory for copies in flight");
        m->ops = v;
        m->cap = cap;
    }
    kb_emu_tma_op *op = &m->ops[m->n];
    memset(op, 0, sizeof *op);
    op->data = malloc(bytes ? bytes : 1);
    if (!op->data)
        kb_emu_thread_fail(t, KB_ERR_OOM, "TMA: out of memory for copies in flight");
    op->thread = t->pub.linear;
    op->bytes = bytes;
    m->n++;
    return op;
}

void kb_emu_tma_load(kb_emu_tma *m, kb_emu_mbars *mb, kb_emu_thr *t, void *smem, const void *tmap,
                     const int *coords, void *bar)
{
    kb_emu_tmap map;
    uint32_t bytes, off = check_box(t, tmap, smem, &map, &bytes, "cp.async.bulk.tensor (load)");
    unsigned b = kb_emu_mbar_find(mb, t, bar, "cp.async.bulk.tensor (load)");
    for (uint32_t c = 0; c < bytes; c += 16) {
        uint32_t ph = kb_emu_swizzle(off + c, map.swizzle_bytes);
        if (m->reading[ph / 16])
            kb_emu_thread_failf(t, "TMA load into shared memory a wgmma in flight reads: shared offset %u is an operand of a "
                 "wgmma.mma_async not yet retired by wgmma.wait_group (released to the producer too early?)", ph);
    }
    kb_emu_tma_op *op = new_op(m, t, bytes);
    op->smem = off;
    op->bar = b;
    op->map = map;
    memcpy(op->coords, coords, sizeof op->coords);
    visit_ctx ctx = { op, t->w->sink->heap, t };
    each_element(&map, coords, gather, &ctx);
    for (uint32_t c = 0; c < bytes; c += 16) {
        uint32_t ph = kb_emu_swizzle(off + c, map.swizzle_bytes);
        memset(t->w->smem + ph, 0xff, 16);       /* poison until it lands */
        m->pending[ph / 16]++;
    }
    m->loads++;
}

/* Land load k: the box into shared memory, then its bytes complete on the mbarrier. */
static void land_load(kb_emu_tma *m, kb_emu_mbars *mb, kb_emu_proxy *proxy, kb_emu_worker *w, unsigned k)
{
    kb_emu_tma_op op = m->ops[k];
    kb_emu_thr *who = &w->thr[op.thread];
    memmove(&m->ops[k], &m->ops[k + 1], (m->n - k - 1) * sizeof *m->ops);
    m->n--;
    for (uint32_t c = 0; c < op.bytes; c += 16) {
        uint32_t ph = kb_emu_swizzle(op.smem + c, op.map.swizzle_bytes);
        memcpy(w->smem + ph, op.data + c, 16);
        m->pending[ph / 16]--;
        m->laid[ph / 16] = kb_emu_laid_of_span(op.map.swizzle_bytes);
        if (w->sink->checks && w->shadow.cells)
            kb_emu_shadow_wrote(&w->shadow, ph, 16, op.thread, NULL);
        if (proxy)
            kb_emu_proxy_async_write(proxy, ph, 16);
    }
    free(op.data);
    if (!mb->v[op.bar].live)
        kb_emu_thread_failf(who, "TMA load completed on the mbarrier at shared offset %u, invalidated since the load was issued",
             mb->v[op.bar].off);
    kb_emu_mbar_tx(mb, NULL, op.bar, -1, op.bytes, who);
}

void kb_emu_tma_store(kb_emu_tma *m, const kb_emu_proxy *proxy, kb_emu_thr *t, const void *tmap, const void *smem,
                      const int *coords)
{
    kb_emu_tmap map;
    uint32_t bytes, off = check_box(t, tmap, smem, &map, &bytes, "cp.async.bulk.tensor (store)"), where;
    unsigned writer;
    for (uint32_t c = 0; c < bytes; c += 16) {
        uint32_t ph = kb_emu_swizzle(off + c, map.swizzle_bytes);
        if (m->pending[ph / 16])
            kb_emu_thread_failf(t, "TMA store from shared offset %u, which a TMA load has not landed in yet", ph);
        if (proxy && kb_emu_proxy_unfenced(proxy, ph, 16, &writer, &where))
            kb_emu_thread_failf(t, "async proxy read without fence.proxy.async: a TMA store reads shared offset %u, which thread %u "
                 "wrote with an ordinary store and did not follow with fence.proxy.async (PTX ISA 9.7.13.4: "
                 "generic-proxy writes are not visible to the async proxy without it)", where, writer);
    }
    kb_emu_tma_op *op = new_op(m, t, bytes);
    op->is_store = 1;
    op->smem = off;
    op->map = map;
    op->group = m->committed[t->pub.linear];
    memcpy(op->coords, coords, sizeof op->coords);
    for (uint32_t c = 0; c < bytes; c += 16)
        memcpy(op->data + c, t->w->smem + kb_emu_swizzle(off + c, map.swizzle_bytes), 16);
    m->stores++;
}

/* Perform store k: its source must be what it was at issue; then global memory. */
static void do_store(kb_emu_tma *m, kb_emu_worker *w, unsigned k)
{
    kb_emu_tma_op op = m->ops[k];
    memmove(&m->ops[k], &m->ops[k + 1], (m->n - k - 1) * sizeof *m->ops);
    m->n--;
    for (uint32_t c = 0; c < op.bytes; c += 16) {
        uint32_t ph = kb_emu_swizzle(op.smem + c, op.map.swizzle_bytes);
        if (memcmp(w->smem + ph, op.data + c, 16)) {
            free(op.data);
            kb_emu_thread_failf(&w->thr[op.thread], "shared source of a TMA store written before cp.async.bulk.wait_group.read: "
                 "shared offset %u changed after the store was issued, before its bulk group was waited for", ph);
        }
    }
    visit_ctx ctx = { &op, w->sink->heap, NULL };
    each_element(&op.map, op.coords, scatter, &ctx);
    free(op.data);
}

void kb_emu_tma_commit(kb_emu_tma *m, kb_emu_thr *t) { m->committed[t->pub.linear]++; }

void kb_emu_tma_wait(kb_emu_tma *m, kb_emu_thr *t, unsigned n)
{
    uint32_t c = m->committed[t->pub.linear];
    if (c <= n)
        return;
    for (unsigned k = 0; k < m->n;) {
        if (m->ops[k].is_store && m->ops[k].thread == t->pub.linear && m->ops[k].group < c - n)
            do_store(m, t->w, k);
        else
            k++;
    }
}

void kb_emu_tma_exit(kb_emu_tma *m, kb_emu_thr *t)
{
    for (unsigned k = 0; k < m->n;) {
        if (m->ops[k].is_store && m->ops[k].thread == t->pub.linear)
            do_store(m, t->w, k);
        else
            k++;
    }
}

void kb_emu_tma_tick(kb_emu_tma *m, kb_emu_mbars *mb, kb_emu_proxy *proxy, kb_emu_worker *w, int idle)
{
    if (!m->n)
        return;
    if (w->sink->schedule == KB_EMU_SCHED_RANDOM && (kb_emu_block_rand(w) & 7u) == 0) {
        unsigned k = (unsigned)(kb_emu_block_rand(w) % m->n);
        if (m->ops[k].is_store)
            do_store(m, w, k);
        else
            land_load(m, mb, proxy, w, k);
    }
    for (unsigned k = 0; idle && k < m->n;) {
        if (!m->ops[k].is_store)
            land_load(m, mb, proxy, w, k);
        else
            k++;
    }
}
