/* emu_shadow.c - shared-memory race and init checks (see emu_shadow.h). */
#include "backend/emu/emu_shadow.h"

#include "kernels/abi/kb_emu_abi.h"

#include <stdlib.h>
#include <string.h>

const char *kb_emu_hazard_name(kb_emu_hazard_kind k)
{
    switch (k) {
    case KB_HAZ_RAW: return "read after write";
    case KB_HAZ_WAR: return "write after read";
    case KB_HAZ_WAW: return "write after write";
    case KB_HAZ_UNINIT: return "read of memory never written";
    default: return "none";
    }
}

int kb_emu_shadow_init(kb_emu_shadow *s, size_t bytes)
{
    memset(s, 0, sizeof *s);
    s->bytes = bytes;
    s->cells = calloc(bytes + 1, sizeof *s->cells);
    s->written = calloc(bytes + 1, sizeof *s->written);
    return s->cells && s->written ? 0 : -1;
}

void kb_emu_shadow_fini(kb_emu_shadow *s)
{
    free(s->cells);
    free(s->written);
    memset(s, 0, sizeof *s);
}

void kb_emu_shadow_block(kb_emu_shadow *s)
{
    s->block++;
    s->seq = (uint64_t)s->block << 32;
}

void kb_emu_shadow_barrier(kb_emu_shadow *s) { s->seq++; }

static unsigned warp_of(unsigned thread) { return thread / KB_EMU_WARP_SIZE; }

/* The race check of one byte; 1 and *h on a hazard. */
static int cell_race(const kb_emu_cell *w, uint64_t seq, int is_write, unsigned thread, kb_emu_hazard *h)
{
    unsigned warp = warp_of(thread);
    if (w->w_seq == seq && warp_of(w->writer) != warp) {
        h->kind = is_write ? KB_HAZ_WAW : KB_HAZ_RAW;
        h->other = w->writer;
        h->other_pc = w->w_pc;
        return 1;
    }
    if (is_write && w->r_seq == seq && (w->readers & ~(1u << warp))) {
        h->kind = KB_HAZ_WAR;
        h->other = w->reader;
        h->other_pc = w->r_pc;
        return 1;
    }
    return 0;
}

static void cell_record(kb_emu_cell *w, uint64_t seq, int is_write, unsigned thread, const void *pc)
{
    if (is_write) {
        w->w_seq = seq;
        w->writer = (uint16_t)thread;
        w->w_pc = pc;
        w->readers = 0;                /* the reads before are ordered by this write's race check */
        return;
    }
    if (w->r_seq != seq) {
        w->r_seq = seq;
        w->readers = 0;
    }
    if (!(w->readers & (1u << warp_of(thread)))) {
        w->readers |= 1u << warp_of(thread);
        w->reader = (uint16_t)thread;
        w->r_pc = pc;
    }
}

int kb_emu_shadow_access(kb_emu_shadow *s, uint32_t off, unsigned bytes, int is_write, unsigned thread,
                         const void *pc, int races, int init, kb_emu_hazard *h)
{
    if (!bytes || off + bytes > s->bytes)
        return 0;
    if (init && !is_write)
        for (uint32_t b = off; b < off + bytes; b++)
            if (s->written[b] != s->block) {
                h->kind = KB_HAZ_UNINIT;
                h->off = b;
                h->other = thread;
                h->other_pc = pc;
                return 1;
            }
    for (uint32_t b = off; b < off + bytes; b++) {
        if (races && cell_race(&s->cells[b], s->seq, is_write, thread, h)) {
            h->off = b;
            return 1;
        }
        cell_record(&s->cells[b], s->seq, is_write, thread, pc);
    }
    if (is_write)
        for (uint32_t b = off; b < off + bytes; b++)
            s->written[b] = s->block;
    return 0;
}

void kb_emu_shadow_wrote(kb_emu_shadow *s, uint32_t off, unsigned bytes, unsigned thread, const void *pc)
{
    if (off + bytes > s->bytes)
        return;
    for (uint32_t b = off; b < off + bytes; b++)
        cell_record(&s->cells[b], s->seq, 1, thread, pc);
    for (uint32_t b = off; b < off + bytes; b++)
        s->written[b] = s->block;
}
