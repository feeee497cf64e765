/* emu_cluster.c - thread block clusters on the emulator (see emu_cluster.h). */
#include "backend/emu/emu_cluster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a worker owns for clusters: the cluster it runs and the peers its other CTAs run on. */
typedef struct {
    kb_emu_cluster cl;
    kb_emu_worker peer[KB_EMU_MAX_CLUSTER - 1];
    int n_init;                       /* peers initialised (kb_emu_worker_init) */
    unsigned live;                    /* threads of the cluster not exited */
    unsigned pending;                 /* of those, not arrived at the barrier in this phase */
    uint32_t arrive_phase[KB_EMU_MAX_CLUSTER][KB_EMU_MAX_THREADS];   /* 1 + the phase arrived on; 0 none */
} cl_store;

static unsigned dim(unsigned v) { return v ? v : 1; }

unsigned kb_emu_cluster_blocks(const kb_emu_launch *l)
{
    return dim(l->cluster[0]) * dim(l->cluster[1]) * dim(l->cluster[2]);
}

static void cluster_fini(kb_emu_worker *w);
static void thread_exit(kb_emu_worker *w, kb_emu_thr *t);

/* The peers of w for this launch: made at the first cluster launch, begun for l. */
static cl_store *store_of(kb_emu_worker *w, unsigned n)
{
    cl_store *s = w->cl_store;
    if (!s && !(s = w->cl_store = calloc(1, sizeof *s)))
        return NULL;
    w->cl_fini = cluster_fini;
    for (; s->n_init < (int)n - 1; s->n_init++)
        if (kb_emu_worker_init(&s->peer[s->n_init], w->e, w->sink, w->index) != KB_OK) {
            kb_emu_worker_fini(&s->peer[s->n_init]);
            return NULL;
        }
    return s;
}

kb_status kb_emu_cluster_begin(kb_emu_worker *w, kb_status (*begin)(kb_emu_worker *peer))
{
    unsigned n = kb_emu_cluster_blocks(w->l);
    if (n <= 1)
        return KB_OK;
    cl_store *s = store_of(w, n);
    if (!s)
        return KB_ERR_OOM;
    for (unsigned r = 1; r < n; r++) {
        kb_emu_worker_begin(&s->peer[r - 1], w->l);
        if (begin(&s->peer[r - 1]) != KB_OK)
            return KB_ERR_OOM;
    }
    return KB_OK;
}

static void cluster_fini(kb_emu_worker *w)
{
    cl_store *s = w->cl_store;
    if (!s)
        return;
    for (int i = 0; i < s->n_init; i++)
        kb_emu_worker_fini(&s->peer[i]);
    free(s);
    w->cl_store = NULL;
}

kb_emu_worker *kb_emu_cluster_running(kb_emu_worker *w)
{
    cl_store *s = w->cl_store;
    return s && w->cl && s->cl.running ? s->cl.running : w;
}

void kb_emu_cluster_abandon(kb_emu_worker *w)
{
    cl_store *s = w->cl_store;
    kb_emu_block_abandon(w);
    if (!s || !w->cl)
        return;
    for (unsigned r = 1; r < s->cl.n; r++)
        kb_emu_block_abandon(s->cl.cta[r]);
    for (unsigned r = 0; r < s->cl.n; r++)
        s->cl.cta[r]->cl = NULL;
}

/* ---- the barrier ---- */
static cl_store *store(kb_emu_worker *w) { return (cl_store *)w->cl->cta[0]->cl_store; }

/* The phase completes when every thread not exited arrived: waiters wake, the next begins. */
static void maybe_complete(kb_emu_cluster *cl)
{
    cl_store *s = store(cl->cta[0]);
    if (s->pending)
        return;
    cl->phase++;
    s->pending = s->live;
    for (unsigned r = 0; r < cl->n; r++) {
        kb_emu_worker *c = cl->cta[r];
        if (c->sink->checks && c->shadow.cells)
            kb_emu_shadow_barrier(&c->shadow);   /* --emu-check: the barrier orders what it synchronised */
        for (unsigned k = 0; k < c->n; k++)
            if (c->thr[k].state == KB_EMU_T_WAIT_EXT && c->thr[k].wait_kind == KB_EMU_WAIT_CLUSTER)
                kb_emu_block_wake(c, k);
    }
}

static void thread_exit(kb_emu_worker *w, kb_emu_thr *t)
{
    cl_store *s = store(w);
    s->live--;
    if (s->arrive_phase[w->blk.cluster_rank][t->pub.linear] != (uint32_t)w->cl->phase + 1u) {
        s->pending--;   /* it will not arrive: the phase no longer waits for it */
        maybe_complete(w->cl);
    }
}

void kb_emu_rt_cluster_barrier(kb_emu_thread *p, int wait)
{
    kb_emu_thr *t = (kb_emu_thr *)p;
    kb_emu_worker *w = t->w;
    if (!w->cl) {   /* a 1x1x1 cluster: the barrier is the block's threads, a block barrier */
        if (wait)
            kb_emu_rt_syncthreads(p);
        return;
    }
    kb_emu_cluster *cl = w->cl;
    cl_store *s = store(w);
    uint32_t *mine = &s->arrive_phase[w->blk.cluster_rank][p->linear];
    if (!wait) {
        if (*mine)
            kb_emu_thread_failf(t, "barrier.cluster.arrive twice without a barrier.cluster.wait between them (PTX "
                                "ISA 9.7.13.2: each thread arrives once per phase, then waits)");
        *mine = (uint32_t)cl->phase + 1u;
        s->pending--;
        maybe_complete(cl);
        return;
    }
    if (!*mine)
        kb_emu_thread_failf(t, "barrier.cluster.wait without a barrier.cluster.arrive of this thread before it "
                            "(PTX ISA 9.7.13.2: a thread arrives, then waits)");
    uint64_t q = *mine - 1u;
    *mine = 0;
    while (cl->phase <= q)
        kb_emu_block_park(t, KB_EMU_WAIT_CLUSTER, 0);
}

/* ---- distributed shared memory ---- */
static int holds(const kb_emu_worker *w, const void *addr, unsigned bytes)
{
    const unsigned char *a = addr;
    return a >= w->smem && a + bytes <= w->smem + w->sink->shmem_limit_bytes;
}

void *kb_emu_rt_mapa(kb_emu_thread *p, const void *addr, unsigned rank)
{
    kb_emu_thr *t = (kb_emu_thr *)p;
    kb_emu_worker *w = t->w;
    unsigned n = w->cl ? w->cl->n : 1;
    if (!holds(w, addr, 1))
        kb_emu_thread_failf(t, "mapa of %p, which is not in this CTA's shared memory (PTX ISA 9.7.9.21: mapa maps "
                            "a shared::cta address to the same offset in another CTA of the cluster)", addr);
    if (rank >= n)
        kb_emu_thread_failf(t, "mapa to CTA rank %u, outside the cluster of %u CTAs (a peer access outside the "
                            "cluster: ranks are 0..%%cluster_nctarank-1, PTX ISA 9.7.9.21)", rank, n);
    kb_emu_worker *o = w->cl ? w->cl->cta[rank] : w;
    return o->smem + ((const unsigned char *)addr - w->smem);
}

kb_emu_worker *kb_emu_cluster_owner(kb_emu_thr *t, const void *addr, unsigned bytes, const char *op)
{
    kb_emu_worker *w = t->w;
    if (holds(w, addr, bytes) || !w->cl)
        return w;
    for (unsigned r = 0; r < w->cl->n; r++) {
        if (!holds(w->cl->cta[r], addr, bytes))
            continue;
        if (w->cl->exited[r])
            kb_emu_thread_failf(t, "%s on the shared memory of CTA rank %u of the cluster after that CTA exited "
                                "(distributed shared memory lives as long as its CTA: keep it with "
                                "barrier.cluster until the peers are done with it)", op, r);
        return w->cl->cta[r];
    }
    return w;   /* not shared memory at all: the caller's own check names it */
}

/* ---- running a cluster ---- */
static int at_barrier(const kb_emu_thr *t) { return t->state == KB_EMU_T_WAIT_EXT && t->wait_kind == KB_EMU_WAIT_CLUSTER; }

/* The message of a cluster no CTA of which can run. */
static void report_stuck(kb_emu_cluster *cl)
{
    cl_store *s = store(cl->cta[0]);
    unsigned waiting = 0;
    for (unsigned r = 0; r < cl->n; r++)
        for (unsigned k = 0; k < cl->cta[r]->n; k++)
            waiting += at_barrier(&cl->cta[r]->thr[k]);
    if (!waiting) {
        for (unsigned r = 0; r < cl->n; r++)
            if (cl->cta[r]->n_done != cl->cta[r]->n) {
                kb_emu_block_report_stuck(cl->cta[r]);
                return;
            }
    }
    char missing[400] = "";
    size_t len = 0;
    for (unsigned r = 0; r < cl->n && len < sizeof missing - 1; r++) {
        kb_emu_worker *c = cl->cta[r];
        unsigned not_arrived = 0;
        for (unsigned k = 0; k < c->n; k++)   /* a waiter consumed its arrival: it arrived */
            not_arrived += c->thr[k].state != KB_EMU_T_DONE && !at_barrier(&c->thr[k]) &&
                           s->arrive_phase[r][k] != (uint32_t)cl->phase + 1u;
        if (not_arrived)
            len += (size_t)snprintf(missing + len, sizeof missing - len, "%sCTA rank %u, block (%u,%u,%u): %u of %u "
                                    "threads", len ? "; " : "", r, c->blk.block_idx.x, c->blk.block_idx.y,
                                    c->blk.block_idx.z, not_arrived, c->n);
    }
    const kb_emu_dim3 *id = &cl->cta[0]->blk.cluster_id;
    kb_emu_sink_fail(cl->cta[0]->sink, KB_ERR_FAULT, "deadlock at barrier.cluster in cluster (%u,%u,%u), phase "
                     "%llu: %u threads wait at barrier.cluster.wait and %u have not arrived (%s)", id->x, id->y,
                     id->z, (unsigned long long)cl->phase, waiting, s->pending, missing);
}

/* Lay out the n CTAs of cluster c; 0, or -1 with the launch failed. */
static int start(kb_emu_worker *w, cl_store *s, uint64_t c)
{
    const kb_emu_launch *l = w->l;
    unsigned cx = dim(l->cluster[0]), cy = dim(l->cluster[1]), cz = dim(l->cluster[2]);
    uint64_t ncx = l->grid[0] / cx, ncy = l->grid[1] / cy;
    uint64_t kx = c % ncx, ky = c / ncx % ncy, kz = c / (ncx * ncy);
    kb_emu_cluster *cl = &s->cl;
    cl->n = cx * cy * cz;
    cl->phase = 0;
    cl->running = NULL;
    s->live = s->pending = 0;
    for (unsigned r = 0; r < cl->n; r++) {
        kb_emu_worker *cta = r ? &s->peer[r - 1] : w;
        uint64_t bx = kx * cx + r % cx, by = ky * cy + r / cx % cy, bz = kz * cz + r / (cx * cy);
        cl->cta[r] = cta;
        cl->exited[r] = 0;
        cta->cl = cl;
        cta->cl_exit = thread_exit;
        memset(s->arrive_phase[r], 0, sizeof s->arrive_phase[r]);
        s->live += cta->n;
        if (kb_emu_block_start(cta, bx + by * l->grid[0] + bz * (uint64_t)l->grid[0] * l->grid[1]) != 0)
            return -1;
    }
    s->pending = s->live;
    return 0;
}

/* One turn of CTA r: its threads run until none can. 1 when one ran, 0 when none did, -1 on
 * a failure (recorded). */
static int turn(kb_emu_cluster *cl, unsigned r)
{
    kb_emu_worker *cta = cl->cta[r];
    uint64_t before = cta->entered;
    cl->running = cta;
    kb_emu_block_resume(cta);
    cl->running = NULL;
    if (cta->aborted)
        return -1;
    if (cta->next_unstarted < cta->n && cta->rq_len == 0) {
        kb_emu_sink_fail(cta->sink, KB_ERR_OOM, "emu: cannot map a %u KiB fiber stack", KB_EMU_STACK_BYTES / 1024u);
        return -1;
    }
    if (cta->n_done == cta->n) {   /* exited: its shared memory is gone for the peers */
        cl->exited[r] = 1;
        memset(cta->smem, 0xff, cta->smem_used);
    }
    return cta->entered != before;
}

/* The order the CTAs take their turns in this round, as the schedule says: rank order
 * (lockstep), reversed (warp-ahead: the highest rank runs as far as it can first, as its
 * highest warp does in a block), or shuffled anew each round from the seed (random:SEED,
 * drawn from rank 0's random state, so one seed gives one order). A kernel that reads a
 * peer's distributed shared memory without barrier.cluster between the write and the read
 * then sees the write under one order and the poison under another. */
static void turn_order(kb_emu_cluster *cl, unsigned *order)
{
    kb_emu_schedule sched = cl->cta[0]->sink->schedule;
    for (unsigned i = 0; i < cl->n; i++)
        order[i] = sched == KB_EMU_SCHED_WARP_AHEAD ? cl->n - 1 - i : i;
    if (sched == KB_EMU_SCHED_RANDOM)
        for (unsigned i = cl->n; i > 1; i--) {
            unsigned j = (unsigned)(kb_emu_block_rand(cl->cta[0]) % i), tmp = order[i - 1];
            order[i - 1] = order[j];
            order[j] = tmp;
        }
}

int kb_emu_cluster_run(kb_emu_worker *w, uint64_t c)
{
    cl_store *s = w->cl_store;
    int rc = -1;
    unsigned order[KB_EMU_MAX_CLUSTER];
    w->in_fiber = 1;
    if (start(w, s, c) == 0)
        for (;;) {
            int ran = 0, left = 0, k = 0;
            turn_order(&s->cl, order);
            for (unsigned i = 0; i < s->cl.n && k >= 0; i++)
                if (!s->cl.exited[order[i]] && (k = turn(&s->cl, order[i])) > 0)
                    ran = 1;
            if (k < 0)
                break;
            for (unsigned r = 0; r < s->cl.n; r++)
                left += !s->cl.exited[r];
            if (!left) {
                rc = 0;
                break;
            }
            if (!ran) {
                report_stuck(&s->cl);
                break;
            }
        }
    w->in_fiber = 0;
    if (rc != 0)
        kb_emu_cluster_abandon(w);
    for (unsigned r = 0; r < s->cl.n; r++)
        s->cl.cta[r]->cl = NULL;
    return rc;
}
