/* emu_launch.h - the data a launch shares between the emulator's engine (emu_exec.c:
 * workers, block distribution, faults) and its block scheduler (emu_block.c): the
 * launch as the backend prepared it, and the sink where any thread reports the launch's
 * first error. Types only. */
#ifndef KB_EMU_LAUNCH_H
#define KB_EMU_LAUNCH_H

#include "backend/emu/emu_heap.h"
#include "core/kb.h"
#include "kernels/abi/kb_emu_abi.h"

#include <ffi.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* Stack of one emulated thread [bytes]: room for small register arrays in kernels. */
#define KB_EMU_STACK_BYTES (256u * 1024u)
#define KB_EMU_MAX_THREADS 1024

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
    int sm90_user;                       /* the module uses the async proxy (TMA stores, wgmma) */
} kb_emu_launch;

/* How the threads of a block take turns (--emu-schedule). Threads run until they wait
 * (a barrier, a warp exchange); the schedule decides who runs next. */
typedef enum {
    KB_EMU_SCHED_LOCKSTEP = 0,  /* first come, first served: warps keep in step */
    KB_EMU_SCHED_WARP_AHEAD,    /* the highest warp runs as far as it can before the others */
    KB_EMU_SCHED_RANDOM         /* seeded random choices, a different sequence per block */
} kb_emu_schedule;

/* Where the threads of a launch report the first error; the engine owns it, resets it
 * per launch, and reads it when the launch ends. It also carries the launch-wide
 * settings every worker reads. */
typedef struct {
    pthread_mutex_t mu;
    int stop;                            /* atomic: an error was raised, skip what is left */
    kb_status st;                        /* the first error (under mu) */
    char msg[512];
    int sm;                              /* the emulated arch: a code of core/arch.h (sm_90a = 1090) */
    size_t shmem_limit_bytes;            /* per block */
    kb_emu_schedule schedule;
    uint64_t seed;                       /* KB_EMU_SCHED_RANDOM */
    unsigned checks;                     /* KB_EMU_CHECK_* the modules were built with */
    const kb_emu_heap *heap;             /* KB_EMU_CHECK_INIT: what device memory holds */
} kb_emu_sink;

#endif /* KB_EMU_LAUNCH_H */
