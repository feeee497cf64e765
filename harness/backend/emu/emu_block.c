/* emu_block.c - the block scheduler and the runtime table modules call
 * (barrier, warp exchange, static shared memory, faults). See emu_block.h. */
#include "backend/emu/emu_block.h"

#include <stdarg.h>
#include <stdio.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- worker tables ---- */
void kb_emu_sink_fail(kb_emu_sink *s, kb_status st, const char *fmt, ...)
{
    va_list ap;
    pthread_mutex_lock(&s->mu);
    if (s->st == KB_OK) {          /* the first error is the one reported */
        s->st = st;
        va_start(ap, fmt);
        vsnprintf(s->msg, sizeof s->msg, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&s->mu);
    __atomic_store_n(&s->stop, 1, __ATOMIC_RELAXED);
}

kb_status kb_emu_worker_init(kb_emu_worker *w, struct kb_emu_exec *e, kb_emu_sink *sink, int index)
{
    size_t limit = sink->shmem_limit_bytes;
    w->e = e;
    w->sink = sink;
    w->index = index;
    w->thr = calloc(KB_EMU_MAX_THREADS, sizeof *w->thr);
    w->waiters = calloc(KB_EMU_MAX_THREADS, sizeof *w->waiters);
    w->runq = calloc(KB_EMU_MAX_THREADS, sizeof *w->runq);
    w->order = calloc(KB_EMU_MAX_THREADS, sizeof *w->order);
    w->pool = calloc(KB_EMU_MAX_THREADS + 1, sizeof *w->pool);
    w->free_fibers = calloc(KB_EMU_MAX_THREADS + 1, sizeof *w->free_fibers);
    /* untouched pages of these two cost nothing until a kernel needs them */
    w->xchg = malloc((size_t)KB_EMU_MAX_WARPS * 2 * KB_EMU_WARP_SIZE * KB_EMU_XCHG_MAX_BYTES);
    /* 1024-aligned: a shared offset has the alignment of the address (TMA's 128B swizzle) */
    w->smem = aligned_alloc(1024, (limit + 1023) / 1024 * 1024 + 1024);
    if (kb_emu_async_init(&w->async, KB_EMU_MAX_THREADS, limit) != 0)
        return KB_ERR_OOM;
    if (!w->thr || !w->waiters || !w->runq || !w->order || !w->pool || !w->free_fibers || !w->xchg || !w->smem)
        return KB_ERR_OOM;
    for (int i = 0; i < KB_EMU_MAX_WARPS; i++)
        w->warp[i].area = w->xchg + (size_t)i * 2 * KB_EMU_WARP_SIZE * KB_EMU_XCHG_MAX_BYTES;
    return KB_OK;
}

void kb_emu_worker_fini(kb_emu_worker *w)
{
    if (w->ext && w->ext->fini)
        w->ext->fini(w);
    kb_emu_async_fini(&w->async);
    kb_emu_shadow_fini(&w->shadow);
    for (int i = 0; i < w->n_pool; i++)
        kb_emu_fiber_free(w->pool[i]);
    free(w->smem);
    free(w->xchg);
    free(w->free_fibers);
    free(w->pool);
    free(w->runq);
    free(w->order);
    free(w->waiters);
    free(w->thr);
}

void kb_emu_worker_begin(kb_emu_worker *w, const kb_emu_launch *l)
{
    unsigned bx = l->block[0], by = l->block[1];
    w->l = l;
    w->slot = l->tls_slot();       /* this OS thread's instance of the module's TLS */
    w->n = bx * by * l->block[2];
    w->n_warps = (w->n + KB_EMU_WARP_SIZE - 1) / KB_EMU_WARP_SIZE;
    w->blk.block_dim = (kb_emu_dim3){ l->block[0], l->block[1], l->block[2] };
    w->blk.grid_dim = (kb_emu_dim3){ l->grid[0], l->grid[1], l->grid[2] };
    w->blk.dyn_shared = w->smem;
    w->blk.dyn_shared_bytes = l->dyn_shmem_bytes;
    for (unsigned i = 0; i < w->n; i++) {
        kb_emu_thr *t = &w->thr[i];
        t->pub.thread_idx = (kb_emu_dim3){ i % bx, (i / bx) % by, i / (bx * by) };
        t->pub.linear = i;
        t->pub.lane = i % KB_EMU_WARP_SIZE;
        t->pub.block = &w->blk;
        t->w = w;
    }
    for (unsigned k = 0; k < w->n_warps; k++) {
        unsigned lanes = w->n - k * KB_EMU_WARP_SIZE;
        w->warp[k].exists = lanes >= 32 ? 0xffffffffu : (1u << lanes) - 1u;
    }
}

void kb_emu_worker_end(kb_emu_worker *w)
{
    *w->slot = NULL;
    w->l = NULL;
}

/* ---- fibers ---- */
static kb_emu_fiber *fiber_get(kb_emu_worker *w)
{
    if (w->n_free > 0)
        return w->free_fibers[--w->n_free];
    if (w->n_pool > KB_EMU_MAX_THREADS)
        return NULL;
    kb_emu_fiber *f = kb_emu_fiber_new(KB_EMU_STACK_BYTES, (unsigned)w->n_pool);
    if (f)
        w->pool[w->n_pool++] = f;
    return f;
}

static void fiber_put(kb_emu_worker *w, kb_emu_fiber *f) { w->free_fibers[w->n_free++] = f; }

void kb_emu_block_abandon(kb_emu_worker *w)
{
    /* The threads on those stacks are never resumed: every stack is free again. */
    for (int i = 0; i < w->n_pool; i++)
        w->free_fibers[i] = w->pool[i];
    w->n_free = w->n_pool;
    w->cur = NULL;
    w->cur_thr = NULL;
}

/* ---- running threads ---- */
static void enter_thread(kb_emu_worker *w, kb_emu_thr *t)
{
    *w->slot = &t->pub;
    w->cur_thr = t;
    t->state = KB_EMU_T_RUNNING;
}

static void make_runnable(kb_emu_worker *w, unsigned i)
{
    w->runq[(w->rq_head + w->rq_len++) % KB_EMU_MAX_THREADS] = i;
}

static void runner_main(void *arg);

#if defined(__x86_64__)
typedef void (*direct_fn)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, double, double, double,
                          double, double, double, double, double, uint64_t, uint64_t, uint64_t, uint64_t,
                          uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t);
_Static_assert(KB_EMU_DIRECT_STACK_SLOTS == 10, "direct_fn spells out the stack slots");
#endif

/* Run the kernel entry for the current thread. */
static inline void call_entry(const kb_emu_launch *l)
{
#if defined(__x86_64__)
    if (l->direct.ok) {
        const uint64_t *g = l->direct.gpr;
        const double *x = l->direct.sse;
        ((direct_fn)(void (*)(void))l->fn)(g[0], g[1], g[2], g[3], g[4], g[5], x[0], x[1], x[2], x[3], x[4],
                                            x[5], x[6], x[7], g[6], g[7], g[8], g[9], g[10], g[11], g[12],
                                            g[13], g[14], g[15]);
        return;
    }
#endif
    ffi_call(l->cif, l->fn, NULL, l->avalues);
}

/* xorshift64* */
uint64_t kb_emu_block_rand(kb_emu_worker *w)
{
    uint64_t x = w->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    w->rng = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Take the next thread to resume out of the run queue, as the schedule says: the
 * longest waiting (lockstep), the highest warp (warp-ahead), any (random). */
static unsigned take_runnable(kb_emu_worker *w)
{
    unsigned pick = 0;                           /* position in the ring, from its head */
    if (w->sink->schedule == KB_EMU_SCHED_RANDOM) {
        pick = (unsigned)(kb_emu_block_rand(w) % w->rq_len);
    } else if (w->sink->schedule == KB_EMU_SCHED_WARP_AHEAD) {
        for (unsigned k = 1, best = w->runq[w->rq_head] / KB_EMU_WARP_SIZE; k < w->rq_len; k++) {
            unsigned warp = w->runq[(w->rq_head + k) % KB_EMU_MAX_THREADS] / KB_EMU_WARP_SIZE;
            if (warp > best) {
                best = warp;
                pick = k;
            }
        }
    }
    unsigned *head = &w->runq[w->rq_head], *at = &w->runq[(w->rq_head + pick) % KB_EMU_MAX_THREADS];
    unsigned i = *at;
    *at = *head;                                 /* the head takes the picked one's place */
    w->rq_head = (w->rq_head + 1) % KB_EMU_MAX_THREADS;
    w->rq_len--;
    return i;
}

/* Under the random schedule, start an unstarted thread before resuming a waiting one,
 * now and then, so that late warps can overtake early ones. */
static int start_first(kb_emu_worker *w)
{
    return w->sink->schedule == KB_EMU_SCHED_RANDOM && w->next_unstarted < w->n && (kb_emu_block_rand(w) & 3u) == 0;
}

/* The order threads start in: warp by warp, first to last (lockstep), last to first
 * (warp-ahead), or warps shuffled (random); lanes in order within a warp. */
static void start_order(kb_emu_worker *w)
{
    unsigned n_w = w->n_warps, warps[KB_EMU_MAX_WARPS], k = 0;
    for (unsigned i = 0; i < n_w; i++)
        warps[i] = w->sink->schedule == KB_EMU_SCHED_WARP_AHEAD ? n_w - 1 - i : i;
    if (w->sink->schedule == KB_EMU_SCHED_RANDOM)
        for (unsigned i = n_w; i > 1; i--) {
            unsigned j = (unsigned)(kb_emu_block_rand(w) % i), tmp = warps[i - 1];
            warps[i - 1] = warps[j];
            warps[j] = tmp;
        }
    for (unsigned i = 0; i < n_w; i++)
        for (unsigned l = warps[i] * KB_EMU_WARP_SIZE; l < w->n && l < (warps[i] + 1) * KB_EMU_WARP_SIZE; l++)
            w->order[k++] = l;
}

/* Leave the running fiber (its context saved into from) for the next work of the block:
 * a thread ready to resume, else a new runner for threads not started yet, else the
 * scheduler (block over, stuck, or out of stacks). Switching fiber to fiber directly
 * halves the switches a barrier costs. */
static void dispatch(kb_emu_worker *w, kb_emu_ctx *from)
{
    kb_emu_fiber *f = NULL;
    if (w->ext_live && w->ext->tick)   /* the sm_90 machinery lands async copies here */
        w->ext->tick(w, w->rq_len == 0 && w->next_unstarted >= w->n);
    int start = w->next_unstarted < w->n && (w->rq_len == 0 || start_first(w));
    if (start && (f = fiber_get(w)) != NULL) {
        w->cur = f;
        kb_emu_fiber_start(from, f, runner_main, w);
    } else if (w->rq_len > 0) {
        kb_emu_thr *t = &w->thr[take_runnable(w)];
        enter_thread(w, t);
        w->cur = t->fiber;
        if (&t->fiber->ctx != from)   /* a thread that yielded may be the next to run: it just goes on */
            kb_emu_fiber_switch(from, &t->fiber->ctx);
    } else {
        kb_emu_fiber_switch(from, &w->sched);   /* block over, stuck, or out of stacks */
    }
}

/* Park the calling thread until a later dispatch resumes it. */
static void suspend(kb_emu_worker *w, kb_emu_thr *t) { dispatch(w, &t->fiber->ctx); }

static void runner_main(void *arg)
{
    kb_emu_worker *w = arg;
    kb_emu_fiber *self = w->cur;
    const kb_emu_launch *l = w->l;
    while (w->next_unstarted < w->n) {
        kb_emu_thr *t = &w->thr[w->order[w->next_unstarted++]];
        t->fiber = self;
        enter_thread(w, t);
        call_entry(l);
        if (w->ext_live && w->ext->thread_exit)
            w->ext->thread_exit(w, t);
        t->state = KB_EMU_T_DONE;
        w->n_done++;
    }
    /* Every thread has started, so the dispatch below only resumes other fibers or
     * returns to the scheduler: it never restarts this stack while we stand on it. */
    fiber_put(w, self);
    dispatch(w, &self->ctx);
    abort(); /* a finished runner is restarted, never resumed */
}

static void report_stuck(kb_emu_worker *w)
{
    const kb_emu_dim3 *b = &w->blk.block_idx;
    if (w->ext_live && w->ext->report_stuck && w->ext->report_stuck(w))
        return;
    for (unsigned k = 0; k < w->n_warps; k++) {
        const kb_emu_warp *wp = &w->warp[k];
        if (!wp->arrived)
            continue;
        kb_emu_sink_fail(w->sink, KB_ERR_FAULT,
                         "divergent warp collective in block (%u,%u,%u) warp %u: lanes 0x%08x waited for "
                         "lanes 0x%08x (%u threads of the block had exited, %u waited at __syncthreads)",
                         b->x, b->y, b->z, k, wp->arrived, wp->mask, w->n_done, w->n_wait_block);
        return;
    }
    kb_emu_sink_fail(w->sink, KB_ERR_FAULT,
                     "divergent __syncthreads in block (%u,%u,%u): %u of %u threads waited, %u had exited",
                     b->x, b->y, b->z, w->n_wait_block, w->n, w->n_done);
}

/* A new block: pending copies forgotten; under --emu-check, the shadow (allocated on
 * first use) cleared. 0, or -1 with the launch failed. */
static int start_checks(kb_emu_worker *w)
{
    kb_emu_async_reset(&w->async);
    for (unsigned g = 0; g < KB_EMU_MAX_THREADS / 128; g++)
        w->wgx[g].arrived = 0;
    if (w->ext) {
        w->ext->block_start(w);
        w->ext_live = 0;
    }
    if (!w->sink->checks)
        return 0;
    if (!w->shadow.cells && kb_emu_shadow_init(&w->shadow, w->sink->shmem_limit_bytes) != 0) {
        kb_emu_shadow_fini(&w->shadow);
        kb_emu_sink_fail(w->sink, KB_ERR_OOM, "emu: out of memory for the shared-memory shadow of --emu-check");
        return -1;
    }
    kb_emu_shadow_block(&w->shadow);
    return 0;
}

int kb_emu_block_run(kb_emu_worker *w, uint64_t b)
{
    const kb_emu_launch *l = w->l;
    uint64_t gx = l->grid[0], gy = l->grid[1];
    w->blk.block_idx = (kb_emu_dim3){ (unsigned)(b % gx), (unsigned)(b / gx % gy), (unsigned)(b / (gx * gy)) };
    for (unsigned i = 0; i < w->n; i++)
        w->thr[i].state = KB_EMU_T_UNSTARTED;
    w->next_unstarted = w->n_done = w->n_wait_block = 0;
    w->rq_head = w->rq_len = 0;
    for (unsigned k = 0; k < w->n_warps; k++)
        w->warp[k].arrived = w->warp[k].gen = w->warp[k].unread[0] = w->warp[k].unread[1] = 0;
    /* poison: a read of shared memory before any write shows as NaN */
    memset(w->smem, 0xff, l->dyn_shmem_bytes);
    if (start_checks(w) != 0)
        return -1;
    w->rng = (w->sink->seed ^ (b + 1) * 0x9e3779b97f4a7c15ull) | 1u;   /* per block, never 0 */
    start_order(w);
    w->smem_used = l->dyn_shmem_bytes;
    w->n_decl = 0;
    w->aborted = 0;

    w->in_fiber = 1;
    dispatch(w, &w->sched);   /* the block runs until nothing more can run */
    w->in_fiber = 0;
    if (w->aborted) {
        kb_emu_block_abandon(w);
        return -1;
    }
    if (w->next_unstarted < w->n) {
        kb_emu_sink_fail(w->sink, KB_ERR_OOM, "emu: cannot map a %u KiB fiber stack", KB_EMU_STACK_BYTES / 1024u);
        kb_emu_block_abandon(w);
        return -1;
    }
    if (w->n_done != w->n) {   /* nothing can run, yet threads wait: they never will */
        report_stuck(w);
        kb_emu_block_abandon(w);
        return -1;
    }
    return 0;
}

/* ---- the runtime table ---- */
void kb_emu_thread_fail(kb_emu_thr *t, kb_status st, const char *msg)
{
    kb_emu_worker *w = t->w;
    const kb_emu_dim3 *b = &w->blk.block_idx, *i = &t->pub.thread_idx;
    kb_emu_sink_fail(w->sink, st, "%s in block (%u,%u,%u) thread (%u,%u,%u)", msg, b->x, b->y, b->z, i->x,
                     i->y, i->z);
    w->aborted = 1;
    /* from the fiber running now: a rule broken on another thread's behalf (a TMA load
     * landing at a scheduling point) is reported by that thread but raised on this stack */
    kb_emu_fiber_switch(w->cur ? &w->cur->ctx : &t->fiber->ctx, &w->sched);
    abort(); /* never resumed */
}

void kb_emu_thread_failf(kb_emu_thr *t, const char *fmt, ...)
{
    char msg[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
}

void kb_emu_rt_fault(kb_emu_thread *p, int kind, const char *msg)
{
    kb_emu_thread_fail((kb_emu_thr *)p, kind == KB_EMU_FAULT_LAUNCH ? KB_ERR_LAUNCH : KB_ERR_FAULT, msg);
}

void kb_emu_block_park(kb_emu_thr *t, int wait_kind, unsigned wait_on)
{
    t->state = KB_EMU_T_WAIT_EXT;
    t->wait_kind = wait_kind;
    t->wait_on = wait_on;
    suspend(t->w, t);
    t->state = KB_EMU_T_RUNNING;
}

void kb_emu_block_wake(kb_emu_worker *w, unsigned linear)
{
    kb_emu_thr *t = &w->thr[linear];
    if (t->state != KB_EMU_T_WAIT_EXT)
        return;
    t->state = KB_EMU_T_WAIT_WARP;   /* in the run queue: not parked any more */
    make_runnable(w, linear);
}

void kb_emu_block_yield(kb_emu_thr *t)
{
    make_runnable(t->w, t->pub.linear);
    t->state = KB_EMU_T_WAIT_WARP;
    suspend(t->w, t);
    t->state = KB_EMU_T_RUNNING;
}

int kb_emu_wg_rendezvous(kb_emu_thr *t, const void *payload, const void *const **slots, const char *what)
{
    kb_emu_worker *w = t->w;
    unsigned g = t->pub.linear / 128, i = t->pub.linear % 128;
    kb_emu_wgx *x = &w->wgx[g];
    if ((g + 1) * 128 > w->n) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s by a warpgroup of %u threads: a warpgroup is 4 whole warps, 128 threads "
                 "(PTX ISA 9.7.15.1), and the block has %u", what, w->n - g * 128, w->n);
        kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
    }
    x->slot[i] = payload;
    *slots = x->slot;
    if (++x->arrived == 128) {
        for (unsigned k = 0; k < 127; k++)
            kb_emu_block_wake(w, x->waiters[k]);
        x->arrived = 0;
        return 1;
    }
    x->waiters[x->arrived - 1] = t->pub.linear;
    kb_emu_block_park(t, -1, g);   /* -1: a warpgroup rendezvous */
    return 0;
}

void kb_emu_rt_syncthreads(kb_emu_thread *p)
{
    kb_emu_thr *t = (kb_emu_thr *)p;
    kb_emu_worker *w = t->w;
    /* Released only when all n threads arrive: a thread that exited never will. */
    if (w->n_wait_block + 1 == w->n) {
        if (w->sink->checks)
            kb_emu_shadow_barrier(&w->shadow);    /* a new epoch for --emu-check */
        for (unsigned i = 0; i < w->n_wait_block; i++)
            make_runnable(w, w->waiters[i]);
        w->n_wait_block = 0;
        return;
    }
    w->waiters[w->n_wait_block++] = p->linear;
    t->state = KB_EMU_T_WAIT_BLOCK;
    suspend(w, t);
}

const void *kb_emu_rt_warp_exchange(kb_emu_thread *p, unsigned mask, const void *src, unsigned bytes,
                                     unsigned *members)
{
    kb_emu_thr *t = (kb_emu_thr *)p;
    kb_emu_worker *w = t->w;
    kb_emu_warp *wp = &w->warp[p->linear / KB_EMU_WARP_SIZE];
    unsigned me = 1u << p->lane, need = mask & wp->exists;
    char msg[160];
    if (!(need & me)) {
        snprintf(msg, sizeof msg, "warp collective with mask 0x%08x called by lane %u, not in the mask", mask,
                 p->lane);
        kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
    }
    if (bytes > KB_EMU_XCHG_MAX_BYTES) {
        snprintf(msg, sizeof msg, "warp exchange of %u bytes per lane (at most %d)", bytes, KB_EMU_XCHG_MAX_BYTES);
        kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
    }
    /* Two halves, alternating: lanes released from exchange g read its half when they
     * resume, and the last lane in runs on meanwhile. With a full mask no lane reaches
     * g+2 before every lane arrived at g+1, i.e. read g; but a subset of the warp can
     * run g+1 and g+2 alone. So a lane about to write a half that released lanes have
     * not read yet lets them (they are ahead in the run queue) go first. */
    unsigned h;
    while (wp->unread[h = wp->gen & 1u]) {
        make_runnable(w, p->linear);
        t->state = KB_EMU_T_WAIT_WARP;
        suspend(w, t);
    }
    if (!wp->arrived) {
        wp->mask = need;
        wp->bytes = bytes;
    } else if (wp->mask != need || wp->bytes != bytes) {
        snprintf(msg, sizeof msg, "lanes of one warp disagree in a warp collective (mask 0x%08x vs 0x%08x, "
                 "%u vs %u bytes)", need, wp->mask, bytes, wp->bytes);
        kb_emu_thread_fail(t, KB_ERR_FAULT, msg);
    }
    unsigned char *area = wp->area + (size_t)h * KB_EMU_WARP_SIZE * KB_EMU_XCHG_MAX_BYTES;
    if (bytes)
        memcpy(area + (size_t)p->lane * bytes, src, bytes);
    wp->arrived |= me;
    *members = need;
    if (wp->arrived == need) {     /* the last lane in releases the others and carries on */
        unsigned base = p->linear - p->lane;
        for (unsigned l = 0; l < KB_EMU_WARP_SIZE; l++)
            if (((need & ~me) >> l) & 1u)
                make_runnable(w, base + l);
        wp->arrived = 0;
        wp->unread[h] = need & ~me;
        wp->gen++;
        return area;
    }
    t->state = KB_EMU_T_WAIT_WARP;
    suspend(w, t);
    wp->unread[h] &= ~me;          /* the caller reads the area before anything else runs */
    return area;
}

void *kb_emu_rt_shared_static(kb_emu_thread *p, const void *key, size_t bytes, size_t align)
{
    kb_emu_thr *t = (kb_emu_thr *)p;
    kb_emu_worker *w = t->w;
    char msg[200];
    for (int i = 0; i < w->n_decl; i++)
        if (w->decl[i].key == key)
            return w->decl[i].ptr;
    if (align < 16)
        align = 16;
    size_t off = (w->smem_used + align - 1) / align * align, limit = w->sink->shmem_limit_bytes;
    if (off + bytes - w->l->dyn_shmem_bytes > KB_EMU_STATIC_SHMEM_MAX) {
        /* ptxas rejects more static __shared__ than this on every arch: fail as the GPU build would */
        snprintf(msg, sizeof msg, "%zu bytes of static shared memory asked, CUDA allows %u in __shared__ "
                 "arrays (use KB_DYN_SHARED beyond that)", off + bytes - w->l->dyn_shmem_bytes, KB_EMU_STATIC_SHMEM_MAX);
        kb_emu_thread_fail(t, KB_ERR_LAUNCH, msg);
    }
    if (off + bytes > limit) {
        size_t dyn = w->l->dyn_shmem_bytes;
        snprintf(msg, sizeof msg, "%zu bytes of shared memory asked (static %zu + dynamic %zu), %s allows %zu per block",
                 off + bytes, off + bytes - dyn, dyn, kb_arch_name(w->sink->sm), limit);
        kb_emu_thread_fail(t, KB_ERR_LAUNCH, msg);
    }
    if (w->n_decl == KB_EMU_MAX_SHARED_DECLS) {
        snprintf(msg, sizeof msg, "more than %d KB_SHARED declarations in one block", KB_EMU_MAX_SHARED_DECLS);
        kb_emu_thread_fail(t, KB_ERR_LAUNCH, msg);
    }
    memset(w->smem + off, 0xff, bytes);   /* poison, as the whole arena would be */
    w->smem_used = off + bytes;
    w->decl[w->n_decl].key = key;
    w->decl[w->n_decl].ptr = w->smem + off;
    return w->decl[w->n_decl++].ptr;
}
