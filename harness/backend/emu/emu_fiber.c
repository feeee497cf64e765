/* emu_fiber.c - fiber stacks and the context switch (see emu_fiber.h). */
#include "backend/emu/emu_fiber.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
    return f;
fail:
    free(f);
    return NULL;
}

void kb_emu_fiber_free(kb_emu_fiber *f)
{
    if (!f)
        return;
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
    f->fn = fn;
    f->arg = arg;
    *--sp = (uintptr_t)kb_emu_fiber_entry_;   /* "return" address */
    *--sp = 0;                                /* rbp */
    *--sp = 0;                                /* rbx */
    *--sp = (uintptr_t)fn;                    /* r12 */
    *--sp = (uintptr_t)arg;                   /* r13 */
    *--sp = 0;                                /* r14 */
    *--sp = 0;                                /* r15 */
    --sp;                                     /* control words: inherit the current ones */
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpcw));
    memcpy((char *)sp, &mxcsr, 4);
    memcpy((char *)sp + 4, &fpcw, 2);
    f->ctx.sp = sp;
    kb_emu_ctx_swap_(&from->sp, f->ctx.sp);
}

void kb_emu_fiber_switch(kb_emu_ctx *from, kb_emu_ctx *to)
{
    kb_emu_ctx_swap_(&from->sp, to->sp);
}

#else /* ucontext fallback */
static __thread kb_emu_fiber *tls_starting; /* handed to the trampoline, same OS thread */

static void fiber_trampoline(void)
{
    kb_emu_fiber *f = tls_starting;
    f->fn(f->arg);
    abort(); /* fn must not return */
}

void kb_emu_fiber_start(kb_emu_ctx *from, kb_emu_fiber *f, void (*fn)(void *), void *arg)
{
    f->fn = fn;
    f->arg = arg;
    getcontext(&f->ctx.uc);
    f->ctx.uc.uc_stack.ss_sp = f->map + f->page_bytes;
    f->ctx.uc.uc_stack.ss_size = f->map_bytes - f->page_bytes - f->top_offset;
    f->ctx.uc.uc_link = NULL;
    makecontext(&f->ctx.uc, fiber_trampoline, 0);
    tls_starting = f;
    swapcontext(&from->uc, &f->ctx.uc);
}

void kb_emu_fiber_switch(kb_emu_ctx *from, kb_emu_ctx *to)
{
    swapcontext(&from->uc, &to->uc);
}
#endif
