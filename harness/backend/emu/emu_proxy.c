/* emu_proxy.c - generic writes not yet fenced for the async proxy (see emu_proxy.h). */
#include "backend/emu/emu_proxy.h"

#include <stdlib.h>
#include <string.h>

int kb_emu_proxy_init(kb_emu_proxy *p, size_t bytes, unsigned threads)
{
    memset(p, 0, sizeof *p);
    p->bytes = bytes;
    p->threads = threads;
    p->block = calloc(bytes + 1, sizeof *p->block);
    p->fences = calloc(bytes + 1, sizeof *p->fences);
    p->writer = calloc(bytes + 1, sizeof *p->writer);
    p->thread_fences = calloc(threads, sizeof *p->thread_fences);
    return p->block && p->fences && p->writer && p->thread_fences ? 0 : -1;
}

void kb_emu_proxy_fini(kb_emu_proxy *p)
{
    free(p->block);
    free(p->fences);
    free(p->writer);
    free(p->thread_fences);
    memset(p, 0, sizeof *p);
}

void kb_emu_proxy_block(kb_emu_proxy *p)
{
    p->gen++;
    memset(p->thread_fences, 0, p->threads * sizeof *p->thread_fences);
}

void kb_emu_proxy_write(kb_emu_proxy *p, uint32_t off, unsigned n, unsigned thread)
{
    for (unsigned i = 0; i < n && off + i < p->bytes; i++) {
        p->block[off + i] = p->gen;
        p->fences[off + i] = p->thread_fences[thread];
        p->writer[off + i] = (uint16_t)thread;
    }
}

void kb_emu_proxy_async_write(kb_emu_proxy *p, uint32_t off, unsigned n)
{
    for (unsigned i = 0; i < n && off + i < p->bytes; i++)
        p->block[off + i] = 0;
}

void kb_emu_proxy_fence(kb_emu_proxy *p, unsigned thread) { p->thread_fences[thread]++; }

int kb_emu_proxy_unfenced(const kb_emu_proxy *p, uint32_t off, unsigned n, unsigned *writer, uint32_t *where)
{
    for (unsigned i = 0; i < n && off + i < p->bytes; i++) {
        uint32_t b = off + i;
        if (p->block[b] == p->gen && p->fences[b] == p->thread_fences[p->writer[b]]) {
            *writer = p->writer[b];
            *where = b;
            return 1;
        }
    }
    return 0;
}
