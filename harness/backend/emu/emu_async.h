/* emu_async.h - cp.async as the GPU runs it, on the emulator: a copy is pending from
 * the moment a thread issues it until a cp.async.wait_group of that thread retires its
 * group; only then is the data written. Meanwhile the destination holds poison (0xFF:
 * NaN in every float format), and a read of it that the emulator can see (ldmatrix,
 * instrumented loads) is a fault naming the copy, so a wait count one too small fails
 * the case instead of racing silently.
 *
 * Groups follow PTX: a thread's copies since its last commit_group form its open group;
 * commit_group closes it; wait_group N retires every copy of the thread's committed
 * groups except the N most recent; copies not yet committed are not waited for.
 * State is per worker, reset per block; the destination must lie in the block's shared
 * memory arena.
 */
#ifndef KB_EMU_ASYNC_H
#define KB_EMU_ASYNC_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t off;               /* [bytes] destination in the shared memory arena (16-aligned) */
    uint32_t group;             /* the issuing thread's group number */
    unsigned char data[16];     /* what lands at retire (read from global memory at issue) */
} kb_emu_copy;

typedef struct {
    kb_emu_copy *v;             /* in issue order; [head, n) still pending */
    uint32_t head, n, cap;
    uint32_t committed;         /* groups committed so far by the thread */
} kb_emu_copy_queue;

typedef struct {
    kb_emu_copy_queue *q;       /* [threads] */
    unsigned threads;
    uint16_t *pending;          /* [arena / 16] pending copies per 16-byte chunk */
    size_t chunks;
    uint64_t issued, retired;   /* statistics of the current launch */
} kb_emu_async;

/* Tables for up to threads threads and an arena of arena_bytes. 0, or -1 out of memory. */
int kb_emu_async_init(kb_emu_async *a, unsigned threads, size_t arena_bytes);
void kb_emu_async_fini(kb_emu_async *a);
/* Forget every pending copy (a new block; the previous block's are dropped). */
void kb_emu_async_reset(kb_emu_async *a);

/* Thread issues a copy of src_bytes (0..16) from src to arena + off, zero-filling the
 * rest of the 16 bytes at retire. The destination is poisoned now. 0, or -1 out of memory. */
int kb_emu_async_issue(kb_emu_async *a, unsigned char *arena, uint32_t off, const void *src, int src_bytes,
                       unsigned thread);
/* Thread closes its open group. */
void kb_emu_async_commit(kb_emu_async *a, unsigned thread);
/* Thread waits until at most n of its committed groups are pending: the older ones land. */
void kb_emu_async_wait(kb_emu_async *a, unsigned char *arena, unsigned thread, unsigned n);

/* The thread and copy of a pending copy overlapping [off, off + bytes), or -1 when none. */
int kb_emu_async_pending(const kb_emu_async *a, uint32_t off, size_t bytes, const kb_emu_copy **copy);

#endif /* KB_EMU_ASYNC_H */
