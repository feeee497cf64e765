/* emu_heap.h - the emulator's counterpart of compute-sanitizer's initcheck for global
 * memory (--emu-check init): for every live device allocation, which bytes something
 * wrote - an upload, a fill, or kernel code (a checked module's stores and atomics). A
 * kernel load of a byte nothing wrote is reported, whatever its type: integer kernels show
 * no NaN poison. Allocations are added and removed by the harness's thread between
 * launches; during a launch the workers only look regions up and mark bytes written. */
#ifndef KB_EMU_HEAP_H
#define KB_EMU_HEAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uintptr_t base, end;        /* [base, end) */
    unsigned char *written;     /* [end - base] 1 where written */
} kb_emu_region;

typedef struct kb_emu_heap {
    kb_emu_region *v;           /* sorted by base, disjoint */
    size_t n, cap;
} kb_emu_heap;

/* Track [base, base + bytes), nothing written yet. 0, or -1 out of memory. */
int kb_emu_heap_add(kb_emu_heap *h, const void *base, size_t bytes);
/* Forget the allocation at base (no effect when untracked). */
void kb_emu_heap_remove(kb_emu_heap *h, const void *base);
void kb_emu_heap_fini(kb_emu_heap *h);

/* The region holding p, or NULL (not device memory: a stack, an argument). */
const kb_emu_region *kb_emu_heap_find(const kb_emu_heap *h, const void *p);
/* [p, p + n) was written (clipped to its region; nothing when p is untracked). Safe from
 * several workers at once. */
void kb_emu_heap_mark(const kb_emu_heap *h, const void *p, size_t n);
/* The offset in its region of the first byte of [p, p + n) nothing wrote, or -1 (all
 * written, or untracked); *r its region. */
long long kb_emu_heap_unwritten(const kb_emu_heap *h, const void *p, size_t n, const kb_emu_region **r);

#endif /* KB_EMU_HEAP_H */
