/* emu_heap.c - which bytes of device memory were written (see emu_heap.h). */
#include "backend/emu/emu_heap.h"

#include <stdlib.h>
#include <string.h>

/* Index of the first region whose base is above p. */
static size_t upper(const kb_emu_heap *h, uintptr_t p)
{
    size_t lo = 0, hi = h->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (h->v[mid].base <= p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int kb_emu_heap_add(kb_emu_heap *h, const void *base, size_t bytes)
{
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 32;
        kb_emu_region *v = realloc(h->v, cap * sizeof *v);
        if (!v)
            return -1;
        h->v = v;
        h->cap = cap;
    }
    unsigned char *w = calloc(bytes ? bytes : 1, 1);
    if (!w)
        return -1;
    size_t i = upper(h, (uintptr_t)base);
    memmove(&h->v[i + 1], &h->v[i], (h->n - i) * sizeof *h->v);
    h->v[i] = (kb_emu_region){ (uintptr_t)base, (uintptr_t)base + bytes, w };
    h->n++;
    return 0;
}

void kb_emu_heap_remove(kb_emu_heap *h, const void *base)
{
    size_t i = upper(h, (uintptr_t)base);
    if (i == 0 || h->v[i - 1].base != (uintptr_t)base)
        return;
    free(h->v[i - 1].written);
    memmove(&h->v[i - 1], &h->v[i], (h->n - i) * sizeof *h->v);
    h->n--;
}

void kb_emu_heap_fini(kb_emu_heap *h)
{
    for (size_t i = 0; i < h->n; i++)
        free(h->v[i].written);
    free(h->v);
    memset(h, 0, sizeof *h);
}

const kb_emu_region *kb_emu_heap_find(const kb_emu_heap *h, const void *p)
{
    size_t i = upper(h, (uintptr_t)p);
    return i > 0 && (uintptr_t)p < h->v[i - 1].end ? &h->v[i - 1] : NULL;
}

void kb_emu_heap_mark(const kb_emu_heap *h, const void *p, size_t n)
{
    const kb_emu_region *r = kb_emu_heap_find(h, p);
    if (!r)
        return;
    size_t off = (uintptr_t)p - r->base, end = off + n;
    if (end > r->end - r->base)
        end = r->end - r->base;
    for (size_t b = off; b < end; b++)
        if (!__atomic_load_n(&r->written[b], __ATOMIC_RELAXED))
            __atomic_store_n(&r->written[b], 1, __ATOMIC_RELAXED);
}

long long kb_emu_heap_unwritten(const kb_emu_heap *h, const void *p, size_t n, const kb_emu_region **r)
{
    *r = kb_emu_heap_find(h, p);
    if (!*r)
        return -1;
    size_t off = (uintptr_t)p - (*r)->base, end = off + n;
    if (end > (*r)->end - (*r)->base)
        end = (*r)->end - (*r)->base;
    for (size_t b = off; b < end; b++)
        if (!__atomic_load_n(&(*r)->written[b], __ATOMIC_RELAXED))
            return (long long)b;
    return -1;
}
