/* emu_fiber.h - fibers for the emulator: a stack of their own and a context switch.
 *
 * The threads of one emulated block run as fibers on one worker OS thread, so that
 * __syncthreads() and warp collectives are a switch back to the block's scheduler.
 * On x86-64 the switch is a few instructions (callee-saved registers, the SSE and x87
 * control words); elsewhere it falls back to ucontext (which also saves the signal mask
 * with a system call, so it is much slower). Define KB_EMU_FIBER_UCONTEXT to force the
 * fallback.
 */
#ifndef KB_EMU_FIBER_H
#define KB_EMU_FIBER_H

#include <stddef.h>

#if !defined(__x86_64__) && !defined(KB_EMU_FIBER_UCONTEXT)
#define KB_EMU_FIBER_UCONTEXT 1
#endif
#ifdef KB_EMU_FIBER_UCONTEXT
#include <ucontext.h>
#endif

/* A place to save one execution context: a fiber's, or the scheduler's own. The stack
 * bounds and fake_stack are for AddressSanitizer, tsan_fiber for ThreadSanitizer, each of
 * which must be told of every switch between stacks (KB_SANITIZE, KB_TSAN builds);
 * otherwise unused. */
typedef struct {
#ifdef KB_EMU_FIBER_UCONTEXT
    ucontext_t uc;
#else
    void *sp;                       /* saved stack pointer; the registers sit on that stack */
#endif
    const void *stack_bottom;       /* lowest address of the context's stack (ASan) */
    size_t stack_size;              /* [bytes] (ASan) */
    void *fake_stack;               /* ASan's fake stack of this context while it is away */
    void *tsan_fiber;               /* ThreadSanitizer's context of it (KB_TSAN builds) */
} kb_emu_ctx;

typedef struct kb_emu_fiber {
    kb_emu_ctx ctx;
    unsigned char *map;     /* mmap'd region: one guard page, then the stack */
    size_t map_bytes;
    size_t page_bytes;
    void (*fn)(void *);     /* what the fiber runs when started */
    void *arg;
    size_t top_offset;      /* [bytes] unused at the top of the map (cache colouring) */
    kb_emu_ctx *starter;    /* the context that started it last (ASan learns its stack) */
} kb_emu_fiber;

/* Map a fiber with a stack of stack_bytes (rounded up to pages) below a guard page.
 * color (any number, e.g. the fiber's index) shifts where the stack starts: stacks a
 * whole number of pages apart would otherwise keep their hot top bytes in the same
 * cache sets and evict each other at every switch. Returns NULL when the mapping
 * fails. Free with kb_emu_fiber_free. */
kb_emu_fiber *kb_emu_fiber_new(size_t stack_bytes, unsigned color);
void kb_emu_fiber_free(kb_emu_fiber *f);

/* Save the current context into from and start f afresh, running fn(arg) from the top of
 * its stack. fn must never return: it ends by switching away for good. */
void kb_emu_fiber_start(kb_emu_ctx *from, kb_emu_fiber *f, void (*fn)(void *), void *arg);

/* Save the current context into from and resume to (saved by an earlier switch). */
void kb_emu_fiber_switch(kb_emu_ctx *from, kb_emu_ctx *to);

/* 1 when addr lies in f's guard page (a stack overflow), else 0. */
int kb_emu_fiber_in_guard(const kb_emu_fiber *f, const void *addr);

#endif /* KB_EMU_FIBER_H */
