/* emu_exec.h - the emulator's execution engine: runs one kernel launch on the CPU.
 *
 * Blocks are spread over worker OS threads (the calling thread is worker 0), each
 * worker taking the next block index from an atomic counter. The threads of a block run
 * as fibers on their worker: a thread keeps running until it finishes or waits (block
 * barrier, warp exchange), and a kernel without barriers never switches fibers at all.
 * The engine implements the kb_emu_rt table (kernels/kb_emu_abi.h) that modules call.
 *
 * Errors fail the launch, never the process: a divergent barrier, a misaligned vector
 * access, SIGSEGV/SIGBUS/SIGFPE/SIGILL inside kernel code (caught on an alternate signal stack and
 * unwound to the worker's scheduler), shared memory over the arch's limit. Once one is
 * raised, blocks not yet started are skipped.
 */
#ifndef KB_EMU_EXEC_H
#define KB_EMU_EXEC_H

#include "core/kb.h"
#include "kb_emu_abi.h"

#include <ffi.h>
#include <stdint.h>

/* Stack of one emulated thread [bytes]: room for small register arrays in kernels. */
#define KB_EMU_STACK_BYTES (256u * 1024u)
#define KB_EMU_MAX_THREADS 1024

typedef struct kb_emu_exec kb_emu_exec;

/* Arguments classified once per launch for a direct call (x86-64 System V only): the
 * entry is called through a fixed prototype of 6 integer registers, 8 SSE registers and
 * 10 stack slots, which puts every kb_arg exactly where the real prototype expects it.
 * libffi re-classifies the arguments at every call, which costs more than a small
 * kernel thread; it stays the general path. */
#define KB_EMU_DIRECT_STACK_SLOTS 10
typedef struct {
    int ok;                              /* 1: use this instead of ffi_call */
    uint64_t gpr[6 + KB_EMU_DIRECT_STACK_SLOTS]; /* integer-class args: registers, then stack */
    double sse[8];                       /* float args, their bits in the low 32 bits */
} kb_emu_direct;

/* One launch, as the backend prepared it. */
typedef struct {
    void (*fn)(void);                    /* the kernel entry */
    ffi_cif *cif;                        /* prepared for the entry's argument kinds */
    void **avalues;                      /* argument values (read-only, shared by workers) */
    kb_emu_direct direct;
    kb_emu_thread **(*tls_slot)(void);   /* the module's kb_emu_tls_slot */
    unsigned grid[3];                    /* blocks */
    unsigned block[3];                   /* threads per block */
    size_t dyn_shmem_bytes;              /* [bytes] */
} kb_emu_launch;

/* Start n_workers workers (>= 1; the caller of kb_emu_exec_run is one of them) for an
 * emulated arch sm whose per-block shared memory limit is shmem_limit_bytes.
 * KB_ERR_SETUP / KB_ERR_OOM with a message in err on failure; *out freed by destroy. */
kb_status kb_emu_exec_create(int n_workers, int sm, size_t shmem_limit_bytes, kb_emu_exec **out,
                             char *err, size_t errlen);
void kb_emu_exec_destroy(kb_emu_exec *e);

/* The runtime table handed to every module's kb_emu_bind (static, never NULL). */
const kb_emu_rt *kb_emu_exec_rt(void);

/* Run every block of l and return when all workers are done. KB_ERR_LAUNCH for bad
 * geometry or shared memory over the limit, KB_ERR_FAULT for a fault or a divergent
 * barrier, KB_ERR_OOM when fiber stacks cannot be mapped; the message goes to err.
 * Not reentrant: one launch at a time per engine. */
kb_status kb_emu_exec_run(kb_emu_exec *e, const kb_emu_launch *l, char *err, size_t errlen);

#endif /* KB_EMU_EXEC_H */
