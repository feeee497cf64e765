/* emu_exec.c - workers, launch distribution and fault catching (see emu_exec.h).
 * The per-block scheduler and the runtime table live in emu_block.c. */
#include "backend/emu/emu_exec.h"
#include "backend/emu/emu_block.h"
#include "backend/emu/emu_memrt.h"
#include "backend/emu/emu_sm90.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALT_STACK_BYTES (64u * 1024u)

struct kb_emu_exec {
    int n_workers;
    kb_emu_worker *w;               /* [n_workers]; w[0] is the caller of kb_emu_exec_run */
    int n_threads_started;          /* pool threads created (w[1..]) */
    kb_emu_sink sink;               /* errors, the arch and its shared memory limit */

    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long gen;              /* launches handed to the pool */
    int active;                     /* pool workers still on the current launch */
    int quit;

    const kb_emu_launch *l;         /* the current launch */
    uint64_t n_blocks;
    uint64_t next_block;            /* atomic */
};

/* The runtime every module is bound to: the block's slots and the memory side's. */
static const kb_emu_rt emu_rt = {
    .abi_version = KB_EMU_ABI_VERSION,
    .syncthreads = kb_emu_rt_syncthreads,
    .warp_exchange = kb_emu_rt_warp_exchange,
    .shared_static = kb_emu_rt_shared_static,
    .fault = kb_emu_rt_fault,
    .cp_async = kb_emu_rt_cp_async,
    .cp_async_commit = kb_emu_rt_cp_async_commit,
    .cp_async_wait = kb_emu_rt_cp_async_wait,
    .shared_read = kb_emu_rt_shared_read,
    .access = kb_emu_rt_access,
    .mbar_init = kb_emu_rt_mbar_init,
    .mbar_inval = kb_emu_rt_mbar_inval,
    .mbar_arrive = kb_emu_rt_mbar_arrive,
    .mbar_tx = kb_emu_rt_mbar_tx,
    .mbar_wait = kb_emu_rt_mbar_wait,
    .tma_load = kb_emu_rt_tma_load,
    .tma_store = kb_emu_rt_tma_store,
    .bulk_commit = kb_emu_rt_bulk_commit,
    .bulk_wait = kb_emu_rt_bulk_wait,
    .fence_proxy_async = kb_emu_rt_fence_proxy_async,
    .named_barrier = kb_emu_rt_named_barrier,
    .setmaxnreg = kb_emu_rt_setmaxnreg,
    .wgmma_fence = kb_emu_rt_wgmma_fence,
    .wgmma = kb_emu_rt_wgmma,
    .wgmma_commit = kb_emu_rt_wgmma_commit,
    .wgmma_wait = kb_emu_rt_wgmma_wait,
};

const kb_emu_rt *kb_emu_exec_rt(void) { return &emu_rt; }

int kb_emu_parse_schedule(const char *s, kb_emu_schedule *out, uint64_t *seed)
{
    *seed = 1;
    if (!s || !*s || !strcmp(s, "lockstep"))
        *out = KB_EMU_SCHED_LOCKSTEP;
    else if (!strcmp(s, "warp-ahead"))
        *out = KB_EMU_SCHED_WARP_AHEAD;
    else if (!strncmp(s, "random", 6) && (s[6] == 0 || s[6] == ':')) {
        *out = KB_EMU_SCHED_RANDOM;
        if (s[6] == ':') {
            char *end;
            errno = 0;
            unsigned long long v = strtoull(s + 7, &end, 10);
            if (!s[7] || *end || errno)
                return -1;
            *seed = v;
        }
    } else
        return -1;
    return 0;
}

void kb_emu_exec_settings(kb_emu_exec *e, kb_emu_schedule s, uint64_t seed, unsigned checks, const kb_emu_heap *heap)
{
    e->sink.heap = heap;
    e->sink.schedule = s;
    e->sink.seed = seed;
    e->sink.checks = checks;
}

/* ---- SIGSEGV, SIGBUS, SIGFPE, SIGILL inside kernel code ---- */
static __thread kb_emu_worker *tls_worker;  /* the worker this OS thread is, while it is one */
/* Signals a kernel thread can raise synchronously, and what they were before us. */
static const int fault_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL };
#define N_FAULT_SIGNALS ((int)(sizeof fault_signals / sizeof fault_signals[0]))
static struct sigaction old_actions[N_FAULT_SIGNALS];
static pthread_once_t signals_once = PTHREAD_ONCE_INIT;

static void on_fault_signal(int sig, siginfo_t *si, void *uctx)
{
    kb_emu_worker *w = tls_worker;
    (void)uctx;
    if (w && w->in_fiber) {
        w->sig = sig;
        w->sig_addr = si->si_addr;
        siglongjmp(w->jb, 1);      /* back to the worker's scheduler, off the broken fiber */
    }
    /* Not raised by a kernel: put the previous disposition back; the faulting
     * instruction runs again and the fault takes its ordinary course. */
    for (int i = 0; i < N_FAULT_SIGNALS; i++)
        if (fault_signals[i] == sig)
            sigaction(sig, &old_actions[i], NULL);
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_fault_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;  /* on the alternate stack: the fault may be a stack overflow */
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < N_FAULT_SIGNALS; i++)
        sigaction(fault_signals[i], &sa, &old_actions[i]);
}

static void report_signal(kb_emu_worker *w)
{
    const kb_emu_dim3 *b = &w->blk.block_idx;
    const kb_emu_dim3 *t = w->cur_thr ? &w->cur_thr->pub.thread_idx : &w->blk.block_dim;
    const char *what = w->sig == SIGBUS   ? "bus error (SIGBUS)"
                     : w->sig == SIGFPE ? "arithmetic exception, e.g. integer division by zero (SIGFPE)"
                     : w->sig == SIGILL ? "illegal instruction, e.g. __trap() (SIGILL)"
                                        : "segmentation fault (SIGSEGV)";
    if (kb_emu_fiber_in_guard(w->cur, w->sig_addr))
        kb_emu_sink_fail(w->sink, KB_ERR_FAULT,
                         "stack overflow (an emulated thread has %u KiB of stack) in block (%u,%u,%u) thread (%u,%u,%u)",
                         KB_EMU_STACK_BYTES / 1024u, b->x, b->y, b->z, t->x, t->y, t->z);
    else
        kb_emu_sink_fail(w->sink, KB_ERR_FAULT, "%s at address %p in block (%u,%u,%u) thread (%u,%u,%u)",
                         what, w->sig_addr, b->x, b->y, b->z, t->x, t->y, t->z);
}

/* ---- one worker's share of a launch ---- */
static void run_blocks(kb_emu_worker *w)
{
    kb_emu_exec *e = w->e;
    for (;;) {
        if (__atomic_load_n(&e->sink.stop, __ATOMIC_RELAXED))
            return;
        if (kb_interrupted()) {     /* Ctrl-C: a launch of 2^20 blocks must not run on */
            kb_emu_sink_fail(&e->sink, KB_ERR_INTERRUPTED, "interrupted");
            return;
        }
        uint64_t b = __atomic_fetch_add(&e->next_block, 1, __ATOMIC_RELAXED);
        if (b >= e->n_blocks)
            return;
        if (kb_emu_block_run(w, b) != 0)
            return;                 /* the error is recorded; stop is set */
    }
}

static void worker_run(kb_emu_worker *w, const kb_emu_launch *l)
{
    kb_emu_worker_begin(w, l);
    /* a checked launch of a module using the async proxy records generic shared writes */
    if (kb_emu_sm90_begin(w, l->sm90_user && w->sink->checks) != KB_OK)
        kb_emu_sink_fail(w->sink, KB_ERR_OOM, "emu: out of memory for the fence.proxy.async check");
    else if (sigsetjmp(w->jb, 1) == 0) {
        run_blocks(w);
    } else {                        /* a kernel thread faulted: on_fault_signal jumped here */
        w->in_fiber = 0;
        report_signal(w);
        kb_emu_block_abandon(w);
    }
    kb_emu_worker_end(w);
}

static void *pool_main(void *arg)
{
    kb_emu_worker *w = arg;
    kb_emu_exec *e = w->e;
    unsigned long seen = 0;
    stack_t alt = { .ss_sp = w->alt_stack, .ss_size = ALT_STACK_BYTES, .ss_flags = 0 };
    sigaltstack(&alt, NULL);
    tls_worker = w;
    pthread_mutex_lock(&e->mu);
    for (;;) {
        while (e->gen == seen && !e->quit)
            pthread_cond_wait(&e->go, &e->mu);
        if (e->quit)
            break;
        seen = e->gen;
        const kb_emu_launch *l = e->l;
        pthread_mutex_unlock(&e->mu);
        worker_run(w, l);
        pthread_mutex_lock(&e->mu);
        if (--e->active == 0)
            pthread_cond_signal(&e->done);
    }
    pthread_mutex_unlock(&e->mu);
    /* release the alternate stack before the thread ends: its memory is freed by the
     * engine, and the thread's exit (ASan's included) must not find it installed */
    stack_t off = { .ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE };
    sigaltstack(&off, NULL);
    tls_worker = NULL;
    return NULL;
}

/* ---- engine ---- */
kb_status kb_emu_exec_create(int n_workers, int sm, size_t shmem_limit_bytes, kb_emu_exec **out,
                             char *err, size_t errlen)
{
    kb_emu_exec *e = calloc(1, sizeof *e);
    sigset_t all, old;
    if (!e)
        goto oom;
    e->n_workers = n_workers < 1 ? 1 : n_workers;
    e->sink.sm = sm;
    e->sink.shmem_limit_bytes = shmem_limit_bytes;
    pthread_mutex_init(&e->sink.mu, NULL);
    pthread_mutex_init(&e->mu, NULL);
    pthread_cond_init(&e->go, NULL);
    pthread_cond_init(&e->done, NULL);
    e->w = calloc((size_t)e->n_workers, sizeof *e->w);
    if (!e->w)
        goto oom;
    for (int i = 0; i < e->n_workers; i++) {
        e->w[i].alt_stack = malloc(ALT_STACK_BYTES);
        if (!e->w[i].alt_stack || kb_emu_worker_init(&e->w[i], e, &e->sink, i) != KB_OK)
            goto oom;
    }
    pthread_once(&signals_once, install_signals);
    /* Pool threads take no asynchronous signals: SIGINT & co stay with the caller. */
    sigfillset(&all);
    sigdelset(&all, SIGSEGV);
    sigdelset(&all, SIGBUS);
    sigdelset(&all, SIGFPE);
    sigdelset(&all, SIGILL);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (int i = 1; i < e->n_workers; i++) {
        if (pthread_create(&e->w[i].tid, NULL, pool_main, &e->w[i]) != 0) {
            pthread_sigmask(SIG_SETMASK, &old, NULL);
            snprintf(err, errlen, "emu: cannot start worker thread %d of %d", i, e->n_workers);
            kb_emu_exec_destroy(e);
            return KB_ERR_SETUP;
        }
        e->n_threads_started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    *out = e;
    return KB_OK;
oom:
    snprintf(err, errlen, "emu: out of memory creating %d workers", n_workers);
    kb_emu_exec_destroy(e);
    return KB_ERR_OOM;
}

void kb_emu_exec_destroy(kb_emu_exec *e)
{
    if (!e)
        return;
    pthread_mutex_lock(&e->mu);
    e->quit = 1;
    pthread_cond_broadcast(&e->go);
    pthread_mutex_unlock(&e->mu);
    for (int i = 1; i <= e->n_threads_started; i++)
        pthread_join(e->w[i].tid, NULL);
    if (e->w)
        for (int i = 0; i < e->n_workers; i++) {
            kb_emu_worker_fini(&e->w[i]);
            free(e->w[i].alt_stack);
        }
    free(e->w);
    pthread_cond_destroy(&e->done);
    pthread_cond_destroy(&e->go);
    pthread_mutex_destroy(&e->mu);
    pthread_mutex_destroy(&e->sink.mu);
    free(e);
}

static kb_status check_geometry(const kb_emu_exec *e, const kb_emu_launch *l, char *err, size_t errlen)
{
    const unsigned *b = l->block, *g = l->grid;
    uint64_t threads = (uint64_t)b[0] * b[1] * b[2];
    if (!b[0] || !b[1] || !b[2] || b[0] > 1024 || b[1] > 1024 || b[2] > 64 || threads > KB_EMU_MAX_THREADS) {
        snprintf(err, errlen, "invalid block (%u,%u,%u): at most (1024,1024,64) and 1024 threads",
                 b[0], b[1], b[2]);
        return KB_ERR_LAUNCH;
    }
    if (!g[0] || !g[1] || !g[2] || g[0] > 0x7fffffffu || g[1] > 65535 || g[2] > 65535) {
        snprintf(err, errlen, "invalid grid (%u,%u,%u): at most (2^31-1,65535,65535)", g[0], g[1], g[2]);
        return KB_ERR_LAUNCH;
    }
    if (l->dyn_shmem_bytes > e->sink.shmem_limit_bytes) {
        snprintf(err, errlen, "%zu bytes of dynamic shared memory asked, %s allows %zu per block",
                 l->dyn_shmem_bytes, kb_arch_name(e->sink.sm), e->sink.shmem_limit_bytes);
        return KB_ERR_LAUNCH;
    }
    return KB_OK;
}

kb_status kb_emu_exec_run(kb_emu_exec *e, const kb_emu_launch *l, char *err, size_t errlen)
{
    kb_status st = check_geometry(e, l, err, errlen);
    if (st != KB_OK)
        return st;
    e->l = l;
    e->n_blocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
    e->next_block = 0;
    e->sink.stop = 0;
    e->sink.st = KB_OK;
    e->sink.msg[0] = 0;
    /* A one-block launch is not worth waking the pool for. */
    int helpers = e->n_blocks > 1 && e->n_workers > 1;
    if (helpers) {
        pthread_mutex_lock(&e->mu);
        e->active = e->n_workers - 1;
        e->gen++;
        pthread_cond_broadcast(&e->go);
        pthread_mutex_unlock(&e->mu);
    }
    /* The caller works too, on an alternate signal stack of ours for the duration. */
    kb_emu_worker *w0 = &e->w[0];
    stack_t alt = { .ss_sp = w0->alt_stack, .ss_size = ALT_STACK_BYTES, .ss_flags = 0 }, old_alt;
    sigaltstack(&alt, &old_alt);
    kb_emu_worker *old_worker = tls_worker;
    tls_worker = w0;
    worker_run(w0, l);
    tls_worker = old_worker;
    sigaltstack(&old_alt, NULL);
    if (helpers) {
        pthread_mutex_lock(&e->mu);
        while (e->active > 0)
            pthread_cond_wait(&e->done, &e->mu);
        pthread_mutex_unlock(&e->mu);
    }
    e->l = NULL;
    if (e->sink.st != KB_OK)
        snprintf(err, errlen, "%s", e->sink.msg);
    return e->sink.st;
}
