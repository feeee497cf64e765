/* emu_block.h - private to the emulator (emu_exec.c, emu_block.c): one worker and the
 * scheduler that runs a block's threads as fibers on it.
 *
 * Scheduling: a "runner" fiber starts threads one after another on its stack. A thread
 * that waits (block barrier, warp exchange) keeps that fiber, and the scheduler starts a
 * new runner for the threads not yet started; a thread that finishes hands its fiber to
 * the next unstarted thread. So a block without barriers costs one fiber switch, and a
 * block whose threads all wait at a barrier holds one stack per thread. Waiting threads
 * are released by the last one to arrive and resumed round-robin in arrival order.
 */
#ifndef KB_EMU_BLOCK_H
#define KB_EMU_BLOCK_H

#include "backend/emu/emu_async.h"
#include "backend/emu/emu_fiber.h"
#include "backend/emu/emu_launch.h"
#include "backend/emu/emu_shadow.h"

#include <setjmp.h>
#include <signal.h>
#include <stdint.h>

#define KB_EMU_MAX_WARPS (KB_EMU_MAX_THREADS / KB_EMU_WARP_SIZE)
#define KB_EMU_MAX_SHARED_DECLS 64   /* distinct KB_SHARED declarations one block may reach */
#define KB_EMU_STATIC_SHMEM_MAX (48u * 1024u) /* static __shared__ limit of every arch [bytes] */

/* KB_EMU_T_WAIT_EXT: parked by an extension (emu_sm90.h: an mbarrier phase, a named
 * barrier, a warpgroup rendezvous, registers), which wakes it. */
typedef enum { KB_EMU_T_UNSTARTED, KB_EMU_T_RUNNING, KB_EMU_T_WAIT_BLOCK, KB_EMU_T_WAIT_WARP, KB_EMU_T_WAIT_EXT,
               KB_EMU_T_DONE } kb_emu_tstate;

typedef struct kb_emu_worker kb_emu_worker;

typedef struct {
    kb_emu_thread pub;            /* first: the module holds a pointer to it */
    kb_emu_worker *w;
    kb_emu_fiber *fiber;          /* the fiber whose stack this thread runs on */
    kb_emu_tstate state;
    int wait_kind;                /* KB_EMU_T_WAIT_EXT: what it waits for (the extension's code) */
    unsigned wait_on;             /* and which one (an mbarrier index, a barrier id ...) */
} kb_emu_thr;

/* A warpgroup rendezvous (kb_emu_wg_rendezvous): the 128 threads' payload pointers. */
typedef struct {
    unsigned arrived;             /* threads in the current rendezvous */
    const void *slot[128];        /* each thread's payload, by its index in the warpgroup */
    unsigned waiters[128];        /* linear ids of the parked ones */
} kb_emu_wgx;

/* What an extension of the scheduler (emu_sm90.c) plugs in: the block scheduler calls these
 * without knowing the extension (no include upward). All may be NULL but block_start. */
typedef struct {
    void (*block_start)(kb_emu_worker *w);          /* a new block: forget the last one's state */
    void (*tick)(kb_emu_worker *w, int idle);       /* a scheduling point; idle: nothing can run */
    void (*thread_exit)(kb_emu_worker *w, kb_emu_thr *t);
    int (*report_stuck)(kb_emu_worker *w);          /* 1 when it reported the block's deadlock */
    void (*fini)(kb_emu_worker *w);                 /* the worker goes away */
} kb_emu_ext;

typedef struct {
    unsigned exists;              /* lanes present in the block */
    unsigned arrived;             /* lanes waiting in the current exchange */
    unsigned mask;                /* lanes the current exchange waits for */
    unsigned bytes;               /* per-lane payload of the current exchange [bytes] */
    unsigned gen;                 /* completed exchanges; gen & 1 picks the half of area */
    unsigned unread[2];           /* lanes released from the last exchange on each half that
                                   * have not resumed yet (they read the half first thing) */
    unsigned char *area;          /* 2 halves x 32 lanes x KB_EMU_XCHG_MAX_BYTES */
} kb_emu_warp;

struct kb_emu_worker {
    struct kb_emu_exec *e;        /* the engine that owns this worker (opaque here) */
    kb_emu_sink *sink;            /* where this worker's threads report errors */
    int index;
    pthread_t tid;
    void *alt_stack;              /* alternate signal stack (emu_exec.c) */

    /* the current launch */
    const kb_emu_launch *l;
    kb_emu_thread **slot;         /* the module's "current thread" pointer for this OS thread */
    unsigned n;                   /* threads per block */
    unsigned n_warps;

    /* the current block */
    kb_emu_block blk;
    kb_emu_thr *thr;       /* [KB_EMU_MAX_THREADS] */
    unsigned next_unstarted, n_done, n_wait_block;
    unsigned *waiters;            /* [KB_EMU_MAX_THREADS] at the block barrier, arrival order */
    unsigned *runq;               /* [KB_EMU_MAX_THREADS] ring of threads ready to resume */
    unsigned *order;              /* [KB_EMU_MAX_THREADS] the order unstarted threads start in */
    uint64_t rng;                 /* the block's random state (KB_EMU_SCHED_RANDOM) */
    unsigned rq_head, rq_len;
    kb_emu_warp warp[KB_EMU_MAX_WARPS];
    unsigned char *xchg;          /* backing store of every warp's area */
    unsigned char *smem;          /* shared memory arena: dynamic first, then static */
    size_t smem_used;             /* [bytes] */
    struct { const void *key; void *ptr; } decl[KB_EMU_MAX_SHARED_DECLS];
    int n_decl;
    int aborted;                  /* a thread failed the launch; abandon the block */
    kb_emu_async async;           /* the block's pending cp.async copies */
    kb_emu_shadow shadow;         /* --emu-check: who accessed shared memory, allocated on first use */
    kb_emu_wgx wgx[KB_EMU_MAX_THREADS / 128]; /* warpgroup rendezvous */
    const kb_emu_ext *ext;        /* the sm_90 machinery, once a kernel used it (emu_sm90.c) */
    void *ext_state;
    int ext_live;                 /* this block used it: the hooks run */

    /* fibers: every stack mapped so far, and the free ones */
    kb_emu_fiber **pool;          /* [KB_EMU_MAX_THREADS + 1] */
    kb_emu_fiber **free_fibers;
    int n_pool, n_free;
    kb_emu_fiber *cur;            /* the fiber running now */
    kb_emu_thr *cur_thr;   /* the thread running now */
    kb_emu_ctx sched;             /* the scheduler's own context */

    /* a signal raised by kernel code unwinds here */
    sigjmp_buf jb;
    volatile sig_atomic_t in_fiber;
    int sig;
    void *sig_addr;
};

/* Allocate a worker's tables (arena sized by sink->shmem_limit_bytes). */
kb_status kb_emu_worker_init(kb_emu_worker *w, struct kb_emu_exec *e, kb_emu_sink *sink, int index);
void kb_emu_worker_fini(kb_emu_worker *w);
/* Per launch, on the worker's own OS thread: bind the module's slot, lay out threads. */
void kb_emu_worker_begin(kb_emu_worker *w, const kb_emu_launch *l);
void kb_emu_worker_end(kb_emu_worker *w);
/* Run block number b (linear, x fastest). 0 when it completed; -1 when it failed
 * (the error is recorded in the engine, which then stops the launch). */
int kb_emu_block_run(kb_emu_worker *w, uint64_t b);
/* Forget every fiber of the current block (after a fault): all stacks become free. */
void kb_emu_block_abandon(kb_emu_worker *w);

/* Park thread t (the running one) as KB_EMU_T_WAIT_EXT with what it waits for, until
 * kb_emu_block_wake makes it runnable; returns then. Yield: park and wake at once (the
 * others run first). */
void kb_emu_block_park(kb_emu_thr *t, int wait_kind, unsigned wait_on);
void kb_emu_block_wake(kb_emu_worker *w, unsigned linear);
void kb_emu_block_yield(kb_emu_thr *t);
/* A warpgroup rendezvous: thread t of a full warpgroup (128 threads) deposits payload and
 * waits for the other 127. The last to arrive returns 1 with slots[i] the payload of the
 * warpgroup's thread i, before any other resumes (it runs on until it waits); the others
 * return 0. what names the instruction in the fault for a partial warpgroup. */
int kb_emu_wg_rendezvous(kb_emu_thr *t, const void *payload, const void *const **slots, const char *what);
/* A random number of the block's schedule (xorshift64*). */
uint64_t kb_emu_block_rand(kb_emu_worker *w);

/* Fail the launch from kernel thread t (msg, then where: block and thread); never returns. */
__attribute__((noreturn)) void kb_emu_thread_fail(kb_emu_thr *t, kb_status st, const char *msg);
/* kb_emu_thread_fail(t, KB_ERR_FAULT, message) with the message formatted (at most 700
 * bytes): the rule a kernel broke, named by the emulator's sm_90 modules. */
__attribute__((noreturn, format(printf, 2, 3))) void kb_emu_thread_failf(kb_emu_thr *t, const char *fmt, ...);

/* Report an error of the launch: the first one is kept, and every worker stops taking
 * blocks. Thread-safe. */
void kb_emu_sink_fail(kb_emu_sink *s, kb_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The kb_emu_rt slots (kb_emu_abi.h) of the block's threads: faults, the block barrier,
 * warp collectives, static shared memory. */
void kb_emu_rt_fault(kb_emu_thread *p, int kind, const char *msg);
void kb_emu_rt_syncthreads(kb_emu_thread *p);
const void *kb_emu_rt_warp_exchange(kb_emu_thread *p, unsigned mask, const void *src, unsigned bytes,
                                    unsigned *members);
void *kb_emu_rt_shared_static(kb_emu_thread *p, const void *key, size_t bytes, size_t align);

#endif /* KB_EMU_BLOCK_H */
