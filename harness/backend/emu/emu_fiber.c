/* emu_fiber.c - fiber stacks and the context switch (see emu_fiber.h). */
#include "backend/emu/emu_fiber.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* AddressSanitizer keeps its own idea of which stack is running: every switch is
 * announced before (start_switch) and confirmed after (finish_switch), with the stack
 * bounds of where we go. Without it ASan misreads fiber frames as wild accesses. */
#if defined(__SANITIZE_ADDRESS__)
#define KB_ASAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KB_ASAN_FIBERS 1
#endif
#endif
#ifdef KB_ASAN_FIBERS
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

/* ThreadSanitizer keeps a context (shadow stack, vector clock) per thread; a fiber gets its
 * own (created with the fiber, named to TSan just before each switch), and a switch
 * synchronises the two contexts: the fibers of one block run one at a time on one worker,
 * handing the block's state over at each switch, as threads handing it over through a lock
 * would. Without it TSan would take the fibers for one thread whose stack jumps around. */
#if defined(__SANITIZE_THREAD__)
#define KB_TSAN_FIBERS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KB_TSAN_FIBERS 1
#endif
#endif
#ifdef KB_TSAN_FIBERS
#include <sanitizer/tsan_interface.h>
#endif

/* A fiber's stack starts afresh: frames of instrumented code that never returned (a
 * fiber ends by switching away for good) left their redzones poisoned in ASan's shadow,
 * and the kernel code that reuses the stack is not instrumented to clear them. */
static void stack_fresh(const kb_emu_fiber *f)
{
#ifdef KB_ASAN_FIBERS
    __asan_unpoison_memory_region(f->ctx.stack_bottom, f->ctx.stack_size);
#else
    (void)f;
#endif
}

/* About to leave from for to. */
static void switch_begin(kb_emu_ctx *from, const kb_emu_ctx *to)
{
#ifdef KB_TSAN_FIBERS
    from->tsan_fiber = __tsan_get_current_fiber();   /* the scheduler's: its worker thread's */
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
#ifdef KB_ASAN_FIBERS
    __sanitizer_start_switch_fiber(&from->fake_stack, to->stack_bottom, to->stack_size);
#else
    (void)from; (void)to;
#endif
}

/* Back in self, arrived from a context whose stack bounds go to came (may be NULL). */
static void switch_end(kb_emu_ctx *self, kb_emu_ctx *came)
{
#ifdef KB_ASAN_FIBERS
    const void *bottom = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(self ? self->fake_stack : NULL, &bottom, &size);
    if (came) {
        came->stack_bottom = bottom;
        came->stack_size = size;
    }
#else
    (void)self; (void)came;
#endif
}

/* Every fiber's first frame: tell ASan we arrived (and learn the starter's stack, which
 * switches back to it will need), then run the fiber's function. */
static void fiber_main(void *arg)
{
    kb_emu_fiber *f = arg;
    switch_end(NULL, f->starter);
    f->fn(f->arg);
    abort(); /* fn must not return */
}

/* Colours step by 5 cache lines (a fiber's hot frames span a few) over 64 KiB. */
#define COLOR_STEP_BYTES 320u
#define COLOR_SPAN_BYTES (64u * 1024u)

kb_emu_fiber *kb_emu_fiber_new(size_t stack_bytes, unsigned color)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t offset = (size_t)color * COLOR_STEP_BYTES % COLOR_SPAN_BYTES;
    size_t stack = (stack_bytes + offset + page - 1) / page * page;
    kb_emu_fiber *f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
    /* NORESERVE: only the pages a kernel actually touches cost memory. */
    void *m = mmap(NULL, stack + page, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
    if (m == MAP_FAILED)
        goto fail;
    if (mprotect(m, page, PROT_NONE) != 0) {   /* the guard page turns overflow into SIGSEGV */
        munmap(m, stack + page);
        goto fail;
    }
    f->map = m;
    f->map_bytes = stack + page;
    f->page_bytes = page;
    f->top_offset = offset;
    f->ctx.stack_bottom = f->map + page;
    f->ctx.stack_size = f->map_bytes - page;
#ifdef KB_TSAN_FIBERS
    f->ctx.tsan_fiber = __tsan_create_fiber(0);
#endif
    return f;
fail:
    free(f);
    return NULL;
}

void kb_emu_fiber_free(kb_emu_fiber *f)
{
    if (!f)
        return;
#ifdef KB_TSAN_FIBERS
    __tsan_destroy_fiber(f->ctx.tsan_fiber);
#endif
    munmap(f->map, f->map_bytes);
    free(f);
}

int kb_emu_fiber_in_guard(const kb_emu_fiber *f, const void *addr)
{
    const unsigned char *a = addr;
    return f && a >= f->map && a < f->map + f->page_bytes;
}

#ifndef KB_EMU_FIBER_UCONTEXT
/* kb_emu_ctx_swap_(save, load): push the callee-saved registers and the MXCSR / x87
 * control words on the current stack, store the stack pointer in *save, switch to the
 * stack load and pop the same layout from it. kb_emu_fiber_entry_ is where a new fiber's
 * first "return" lands: it calls r12(r13) with the stack 16-byte aligned. */
void kb_emu_ctx_swap_(void **save, void *load) __attribute__((visibility("hidden")));
void kb_emu_fiber_entry_(void) __attribute__((visibility("hidden")));
__asm__(".text\n"
        ".globl kb_emu_ctx_swap_\n"
        ".hidden kb_emu_ctx_swap_\n"
        ".type kb_emu_ctx_swap_,@function\n"
        "kb_emu_ctx_swap_:\n"
        "  pushq %rbp\n"
        "  pushq %rbx\n"
        "  pushq %r12\n"
        "  pushq %r13\n"
        "  pushq %r14\n"
        "  pushq %r15\n"
        "  subq $8, %rsp\n"
        "  stmxcsr (%rsp)\n"
        "  fnstcw 4(%rsp)\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  ldmxcsr (%rsp)\n"
        "  fldcw 4(%rsp)\n"
        "  addq $8, %rsp\n"
        "  popq %r15\n"
        "  popq %r14\n"
        "  popq %r13\n"
        "  popq %r12\n"
        "  popq %rbx\n"
        "  popq %rbp\n"
        "  ret\n"
        ".size kb_emu_ctx_swap_, .-kb_emu_ctx_swap_\n"
        ".globl kb_emu_fiber_entry_\n"
        ".hidden kb_emu_fiber_entry_\n"
        ".type kb_emu_fiber_entry_,@function\n"
        "kb_emu_fiber_entry_:\n"
        "  movq %r13, %rdi\n"
        "  callq *%r12\n"
        "  ud2\n"
        ".size kb_emu_fiber_entry_, .-kb_emu_fiber_entry_\n");

void kb_emu_fiber_start(kb_emu_ctx *from, kb_emu_fiber *f, void (*fn)(void *), void *arg)
{
    uintptr_t *sp = (uintptr_t *)((uintptr_t)(f->map + f->map_bytes - f->top_offset) & ~(uintptr_t)15);
    uint32_t mxcsr;
    uint16_t fpcw;
    stack_fresh(f);    /* before the first frame is written on it */
    f->fn = fn;
    f->arg = arg;
    f->starter = from;
    *--sp = (uintptr_t)kb_emu_fiber_entry_;   /* "return" address */
    *--sp = 0;                                /* rbp */
    *--sp = 0;                                /* rbx */
    *--sp = (uintptr_t)fiber_main;            /* r12 */
    *--sp = (uintptr_t)f;                     /* r13 */
    *--sp = 0;                                /* r14 */
    *--sp = 0;                                /* r15 */
    --sp;                                     /* control words: inherit the current ones */
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpcw));
    memcpy((char *)sp, &mxcsr, 4);
    memcpy((char *)sp + 4, &fpcw, 2);
    f->ctx.sp = sp;
    switch_begin(from, &f->ctx);
    kb_emu_ctx_swap_(&from->sp, f->ctx.sp);
    switch_end(from, NULL);
}

void kb_emu_fiber_switch(kb_emu_ctx *from, kb_emu_ctx *to)
{
    switch_begin(from, to);
    kb_emu_ctx_swap_(&from->sp, to->sp);
    switch_end(from, NULL);
}

#else /* ucontext fallback */
static __thread kb_emu_fiber *tls_starting; /* handed to the trampoline, same OS thread */

static void fiber_trampoline(void)
{
    fiber_main(tls_starting);
}

void kb_emu_fiber_start(kb_emu_ctx *from, kb_emu_fiber *f, void (*fn)(void *), void *arg)
{
    f->fn = fn;
    f->arg = arg;
    f->starter = from;
    getcontext(&f->ctx.uc);
    f->ctx.uc.uc_stack.ss_sp = f->map + f->page_bytes;
    f->ctx.uc.uc_stack.ss_size = f->map_bytes - f->page_bytes - f->top_offset;
    f->ctx.uc.uc_link = NULL;
    makecontext(&f->ctx.uc, fiber_trampoline, 0);
    tls_starting = f;
    stack_fresh(f);
    switch_begin(from, &f->ctx);
    swapcontext(&from->uc, &f->ctx.uc);
    switch_end(from, NULL);
}

void kb_emu_fiber_switch(kb_emu_ctx *from, kb_emu_ctx *to)
{
    switch_begin(from, to);
    swapcontext(&from->uc, &to->uc);
    switch_end(from, NULL);
}
#endif
