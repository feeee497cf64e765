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

#include "backend/emu/emu_launch.h"

typedef struct kb_emu_exec kb_emu_exec;

/* Start n_workers workers (>= 1; the caller of kb_emu_exec_run is one of them) for an
 * emulated arch sm whose per-block shared memory limit is shmem_limit_bytes.
 * KB_ERR_SETUP / KB_ERR_OOM with a message in err on failure; *out freed by destroy. */
kb_status kb_emu_exec_create(int n_workers, int sm, size_t shmem_limit_bytes, kb_emu_exec **out,
                             char *err, size_t errlen);
void kb_emu_exec_destroy(kb_emu_exec *e);

/* Parse a schedule name: "lockstep" (also NULL or ""), "warp-ahead", "random",
 * "random:SEED" (seed 1 by default). 0, or -1 for anything else. */
int kb_emu_parse_schedule(const char *s, kb_emu_schedule *out, uint64_t *seed);

/* The schedule of every later launch (see kb_emu_schedule), the checks (KB_EMU_CHECK_*)
 * its checked modules report accesses for, and the written-bytes map of device memory
 * the init check reads (NULL without it). */
void kb_emu_exec_settings(kb_emu_exec *e, kb_emu_schedule s, uint64_t seed, unsigned checks, const kb_emu_heap *heap);

/* The runtime table handed to every module's kb_emu_bind (static, never NULL). */
const kb_emu_rt *kb_emu_exec_rt(void);

/* Run every block of l and return when all workers are done. KB_ERR_LAUNCH for bad
 * geometry or shared memory over the limit, KB_ERR_FAULT for a fault or a divergent
 * barrier, KB_ERR_OOM when fiber stacks cannot be mapped; the message goes to err.
 * Not reentrant: one launch at a time per engine. */
kb_status kb_emu_exec_run(kb_emu_exec *e, const kb_emu_launch *l, char *err, size_t errlen);

#endif /* KB_EMU_EXEC_H */
