/* emu_async.c - pending cp.async copies (see emu_async.h). */
#include "backend/emu/emu_async.h"

#include <stdlib.h>
#include <string.h>

int kb_emu_async_init(kb_emu_async *a, unsigned threads, size_t arena_bytes)
{
    memset(a, 0, sizeof *a);
    a->threads = threads;
    a->chunks = (arena_bytes + 15) / 16;
    a->q = calloc(threads, sizeof *a->q);
    a->pending = calloc(a->chunks ? a->chunks : 1, sizeof *a->pending);
    return a->q && a->pending ? 0 : -1;
}

void kb_emu_async_fini(kb_emu_async *a)
{
    for (unsigned i = 0; a->q && i < a->threads; i++)
        free(a->q[i].v);
    free(a->q);
    free(a->pending);
    memset(a, 0, sizeof *a);
}

void kb_emu_async_reset(kb_emu_async *a)
{
    for (unsigned i = 0; i < a->threads; i++) {
        kb_emu_copy_queue *q = &a->q[i];
        for (uint32_t k = q->head; k < q->n; k++)
            a->pending[q->v[k].off / 16]--;
        q->head = q->n = q->committed = 0;
    }
}

int kb_emu_async_issue(kb_emu_async *a, unsigned char *arena, uint32_t off, const void *src, int src_bytes,
                       unsigned thread)
{
    kb_emu_copy_queue *q = &a->q[thread];
    if (q->head > 0 && q->head == q->n)          /* all landed: start the queue over */
        q->head = q->n = 0;
    if (q->n == q->cap) {
        uint32_t cap = q->cap ? 2 * q->cap : 16;
        kb_emu_copy *v = realloc(q->v, cap * sizeof *v);
        if (!v)
            return -1;
        q->v = v;
        q->cap = cap;
    }
    kb_emu_copy *c = &q->v[q->n++];
    c->off = off;
    c->group = q->committed;                     /* the open group */
    memset(c->data, 0, sizeof c->data);
    memcpy(c->data, src, (size_t)src_bytes);
    memset(arena + off, 0xff, 16);               /* poison until it lands */
    a->pending[off / 16]++;
    a->issued++;
    return 0;
}

void kb_emu_async_commit(kb_emu_async *a, unsigned thread) { a->q[thread].committed++; }

void kb_emu_async_wait(kb_emu_async *a, unsigned char *arena, unsigned thread, unsigned n)
{
    kb_emu_copy_queue *q = &a->q[thread];
    if (q->committed <= n)
        return;
    uint32_t upto = q->committed - n;            /* groups below this one land */
    while (q->head < q->n && q->v[q->head].group < upto) {
        const kb_emu_copy *c = &q->v[q->head++];
        memcpy(arena + c->off, c->data, 16);
        a->pending[c->off / 16]--;
        a->retired++;
    }
}

int kb_emu_async_pending(const kb_emu_async *a, uint32_t off, size_t bytes, const kb_emu_copy **copy)
{
    size_t first = off / 16, last = (off + (bytes ? bytes : 1) - 1) / 16;
    int any = 0;
    for (size_t ch = first; ch <= last && ch < a->chunks; ch++)
        any |= a->pending[ch] != 0;
    if (!any)
        return -1;
    for (unsigned t = 0; t < a->threads; t++) {
        const kb_emu_copy_queue *q = &a->q[t];
        for (uint32_t k = q->head; k < q->n; k++)
            if (q->v[k].off / 16 >= first && q->v[k].off / 16 <= last) {
                *copy = &q->v[k];
                return (int)t;
            }
    }
    return -1;
}
