/* emu_proxy.h - the async-proxy fence rule (PTX ISA 8.x memory consistency model, "proxies";
 * 9.7.13.4 fence.proxy.async): a generic-proxy write of shared memory is not visible to the
 * async proxy (TMA stores, wgmma operand reads) until the writing thread has executed
 * fence.proxy.async. Per byte of shared memory: which thread last wrote it through the
 * generic proxy and how many proxy fences that thread had executed then; an async read of a
 * byte whose writer has not fenced since is the finding. Fed by checked modules (--emu-check,
 * which see every store) of kernels that use the sm_90 machinery; async-proxy writes (a TMA
 * load landing) clear the bytes. Private to the emulator (emu_memrt.c, emu_tma.c, emu_wgmma.c).
 */
#ifndef KB_EMU_PROXY_H
#define KB_EMU_PROXY_H

#include <stddef.h>
#include <stdint.h>

typedef struct kb_emu_proxy {
    uint32_t *block;          /* [bytes] block generation of the generic write; 0 none */
    uint32_t *fences;         /* [bytes] the writer's fence count at the write */
    uint16_t *writer;         /* [bytes] the writer's linear id */
    uint32_t *thread_fences;  /* [threads] fences each thread executed in this block */
    unsigned threads;
    size_t bytes;
    uint32_t gen;             /* the current block's generation, from 1 */
} kb_emu_proxy;

/* Tables for an arena of bytes and threads threads; 0, or -1 out of memory. */
int kb_emu_proxy_init(kb_emu_proxy *p, size_t bytes, unsigned threads);
void kb_emu_proxy_fini(kb_emu_proxy *p);
/* A new block: nothing written, no fences. */
void kb_emu_proxy_block(kb_emu_proxy *p);
/* Thread wrote [off, off + n) through the generic proxy. */
void kb_emu_proxy_write(kb_emu_proxy *p, uint32_t off, unsigned n, unsigned thread);
/* The async proxy wrote [off, off + n) (visible to it by construction). */
void kb_emu_proxy_async_write(kb_emu_proxy *p, uint32_t off, unsigned n);
/* Thread executed fence.proxy.async. */
void kb_emu_proxy_fence(kb_emu_proxy *p, unsigned thread);
/* 1 when a byte of [off, off + n) was written through the generic proxy by a thread that has
 * not fenced since (*writer, *where: that thread and the byte); else 0. */
int kb_emu_proxy_unfenced(const kb_emu_proxy *p, uint32_t off, unsigned n, unsigned *writer, uint32_t *where);

#endif /* KB_EMU_PROXY_H */
