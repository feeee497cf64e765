/* coll_comm.c - the emu transport's communicator: setup through the rendezvous, links,
 * and the progress engine (see coll_comm.h). */
#include "collective/coll_comm.h"

#include "collective/coll_sock.h"
#include "collective/rendezvous.h"
#include "core/identity.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_RING (1u << 20)
#define NODE_SHM_CAP (64u << 20)   /* all rings of a node together [bytes] */
#define MIN_RING 4096u

/* What each rank publishes through the rendezvous. */
typedef struct {
    char node[64];
    char addr[48];
    int32_t port, pid;
    uint64_t nonce;          /* rank 0's names this run (shared memory, hellos) */
} endpoint;

int kb_coll_faults_read(char *(*get)(void *user, const char *name), void *user, int rank, double *slowdown,
                        int *corrupt, char *err, size_t n)
{
    const char *slow = get(user, "KBENCH_EMU_SLOWDOWN"), *bad = get(user, "KBENCH_EMU_CORRUPT");
    char *end = NULL;
    *slowdown = slow && *slow ? strtod(slow, &end) : 1.0;
    if (slow && *slow && (*end || !(*slowdown >= 1 && *slowdown <= 1000))) {
        snprintf(err, n, "KBENCH_EMU_SLOWDOWN=%.40s: expected a factor in [1, 1000] (a test hook)", slow);
        return -1;
    }
    if (bad && *bad && strcmp(bad, "0") && strcmp(bad, "1")) {
        snprintf(err, n, "KBENCH_EMU_CORRUPT=%.40s: expected 0 or 1 (a test hook)", bad);
        return -1;
    }
    *corrupt = bad && !strcmp(bad, "1");
    int sel = kb_fault_rank_selected(get(user, "KBENCH_FAULT_RANKS"), rank, err, n);
    if (sel < 0)
        return -1;
    if (!sel) {
        *slowdown = 1.0;
        *corrupt = 0;
    }
    return 0;
}

static uint64_t fresh_nonce(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    uint64_t z = (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 20) ^ ((uint64_t)getpid() << 40);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    return z ^ (z >> 31);
}

/* Links of the ranks on this node: shared memory when there are several. */
static kb_status setup_shm(kb_coll_comm *c, const kb_coll_comm_opts *o, const endpoint *ep, int leader, double end,
                           char *err, size_t n)
{
    char name[160];
    size_t ring = o->ring_bytes ? o->ring_bytes : DEFAULT_RING;
    size_t cap = NODE_SHM_CAP / ((size_t)c->nlocal * (size_t)c->nlocal);
    ring = ring > cap ? (cap < MIN_RING ? MIN_RING : cap) : ring;
    snprintf(name, sizeof name, "/kbench-coll-%.80s-%016llx-%d", o->rdv->key, (unsigned long long)ep[0].nonce,
             leader);
    return kb_shm_open(&c->shm, name, c->nlocal, c->rank == leader, ring, end, err, n);
}

/* TCP links to every rank on another node: dial the lower ranks, accept the higher. */
static kb_status setup_sockets(kb_coll_comm *c, const endpoint *ep, int lfd, double end, char *err, size_t n)
{
    int expect = 0;
    for (int q = 0; q < c->size; q++) {
        if (c->links[q].kind != KB_LINK_SOCK)
            continue;
        if (q > c->rank) {
            expect++;
            continue;
        }
        c->links[q].fd = kb_sock_dial(ep[q].addr, ep[q].port, c->rank, ep[0].nonce, end, err, n);
        if (c->links[q].fd < 0)
            return KB_ERR_SETUP;
    }
    while (expect-- > 0) {
        int q = -1, fd = kb_sock_accept(lfd, ep[0].nonce, end, &q, err, n);
        if (fd < 0)
            return KB_ERR_TIMEOUT;
        if (q <= c->rank || q >= c->size || c->links[q].kind != KB_LINK_SOCK || c->links[q].fd >= 0) {
            close(fd);
            snprintf(err, n, "emu transport: rank %d: an unexpected connection claiming rank %d", c->rank, q);
            return KB_ERR_SETUP;
        }
        c->links[q].fd = fd;
    }
    return KB_OK;
}

/* Decide each peer's link from the endpoints. */
static void plan_links(kb_coll_comm *c, const endpoint *ep, int *leader)
{
    *leader = -1;
    for (int q = 0; q < c->size; q++) {
        kb_coll_link *l = &c->links[q];
        l->fd = -1;
        l->pid = ep[q].pid;
        int same = !strcmp(ep[q].node, ep[c->rank].node);
        l->kind = q == c->rank ? KB_LINK_SELF : same ? KB_LINK_SHM : KB_LINK_SOCK;
        if (same) {
            *leader = *leader < 0 ? q : *leader;
            l->local = c->nlocal++;
        }
    }
    c->local = c->links[c->rank].local;
}

static kb_status connect_all(kb_coll_comm *c, const kb_coll_comm_opts *o, char *err, size_t n)
{
    endpoint mine, *all = calloc((size_t)c->size, sizeof *all);
    memset(&mine, 0, sizeof mine);
    int port = 0, lfd = kb_sock_listen(&port, err, n), leader;
    kb_status st = !all ? KB_ERR_OOM : lfd < 0 ? KB_ERR_SETUP : KB_OK;
    if (st == KB_OK) {
        snprintf(mine.node, sizeof mine.node, "%.40s", o->node && *o->node ? o->node : "localhost");
        if (o->force_sockets)   /* each rank a node of its own */
            snprintf(mine.node + strlen(mine.node), sizeof mine.node - strlen(mine.node), "#%d", c->rank);
        kb_sock_local_addr(o->addr, mine.addr, sizeof mine.addr);
        mine.port = port;
        mine.pid = (int32_t)getpid();
        mine.nonce = fresh_nonce();
        st = kb_rdv_exchange(o->rdv, &mine, sizeof mine, all, err, n);
    }
    double end = kb_rdv_now() + c->timeout_s;
    if (st == KB_OK) {
        plan_links(c, all, &leader);
        if (c->nlocal > 1)
            st = setup_shm(c, o, all, leader, end, err, n);
    }
    if (st == KB_OK)
        st = setup_sockets(c, all, lfd, end, err, n);
    if (lfd >= 0)
        close(lfd);
    free(all);
    return st;
}

kb_status kb_coll_comm_init(const kb_coll_comm_opts *o, kb_coll_comm **out, char *err, size_t n)
{
    *out = NULL;
    kb_coll_comm *c = calloc(1, sizeof *c);
    if (c)
        c->links = calloc((size_t)(o->rdv->size > 0 ? o->rdv->size : 1), sizeof *c->links);
    if (!c || !c->links) {
        free(c);
        snprintf(err, n, "emu transport: out of memory");
        return KB_ERR_OOM;
    }
    c->rank = o->rdv->rank;
    c->size = o->rdv->size > 0 ? o->rdv->size : 1;
    c->timeout_s = o->timeout_s > 0 ? o->timeout_s : o->rdv->timeout_s > 0 ? o->rdv->timeout_s : 120;
    c->slowdown = o->slowdown >= 1 ? o->slowdown : 1;
    c->corrupt = o->corrupt;
    kb_status st = connect_all(c, o, err, n);
    char one = 1, *all = st == KB_OK ? malloc((size_t)c->size) : NULL;
    if (st == KB_OK && !all)
        st = KB_ERR_OOM;
    if (st == KB_OK && (st = kb_coll_allgather_ctl(c, &one, 1, all)) != KB_OK)   /* every rank has mapped */
        snprintf(err, n, "%s", c->err);
    free(all);
    if (st != KB_OK) {
        kb_coll_comm_free(c);
        return st;
    }
    kb_shm_unlink(&c->shm);   /* nothing is left behind in /dev/shm, even after a crash */
    *out = c;
    return KB_OK;
}

void kb_coll_comm_free(kb_coll_comm *c)
{
    if (!c)
        return;
    for (int q = 0; q < c->size; q++)
        if (c->links[q].kind == KB_LINK_SOCK && c->links[q].fd >= 0)
            close(c->links[q].fd);
    kb_shm_close(&c->shm);
    free(c->links);
    free(c);
}

/* One pass over the ios: bytes moved into *moved; -1 when a peer closed (c->err). */
static int pass(kb_coll_comm *c, kb_coll_io *ios, int n_ios, size_t *moved, int *pending, int *socks)
{
    *moved = 0;
    *pending = *socks = 0;
    for (int i = 0; i < n_ios; i++) {
        kb_coll_io *io = &ios[i];
        int blocked = 0;   /* an earlier io on the same link and direction goes first (FIFO) */
        for (int j = 0; j < i && !blocked; j++)
            blocked = ios[j].done < ios[j].bytes && ios[j].peer == io->peer && ios[j].send == io->send;
        if (io->done == io->bytes)
            continue;
        kb_coll_link *l = &c->links[io->peer];
        char *p = (char *)io->buf + io->done;
        size_t left = io->bytes - io->done;
        long k = 0;
        if (!blocked && l->kind == KB_LINK_SHM) {
            k = (long)(io->send ? kb_shm_put(&c->shm, c->local, l->local, p, left)
                                : kb_shm_get(&c->shm, l->local, c->local, p, left));
            if (k > 0)
                kb_shm_ring(&c->shm, l->local);
        } else if (!blocked && (k = kb_sock_try(l->fd, p, left, io->send)) < 0) {
            snprintf(c->err, sizeof c->err, "emu transport: rank %d: the link to rank %d failed: %s", c->rank,
                     io->peer, strerror(errno));
            return -1;
        }
        io->done += (size_t)k;
        *moved += (size_t)k;
        *pending += io->done < io->bytes;
        *socks += io->done < io->bytes && l->kind == KB_LINK_SOCK;
    }
    return 0;
}

/* Wait for something to happen: sockets by poll, shared memory on the doorbell. */
static void wait_some(kb_coll_comm *c, kb_coll_io *ios, int n_ios, int socks, int pending, uint32_t seen)
{
    if (!socks) {
        kb_shm_wait(&c->shm, c->local, seen, 100);
        return;
    }
    struct pollfd pf[64];
    int k = 0;
    for (int i = 0; i < n_ios && k < 64; i++)
        if (ios[i].done < ios[i].bytes && c->links[ios[i].peer].kind == KB_LINK_SOCK)
            pf[k++] = (struct pollfd){ c->links[ios[i].peer].fd, (short)(ios[i].send ? POLLOUT : POLLIN), 0 };
    poll(pf, (nfds_t)k, pending > socks ? 1 : 100);
}

/* A peer of a pending io that is gone (its process, on this node) or silent too long. */
static kb_status stalled(kb_coll_comm *c, kb_coll_io *ios, int n_ios, double idle)
{
    for (int i = 0; i < n_ios; i++) {
        kb_coll_link *l = &c->links[ios[i].peer];
        if (ios[i].done == ios[i].bytes)
            continue;
        if (l->kind == KB_LINK_SHM && kill(l->pid, 0) != 0 && errno == ESRCH) {
            snprintf(c->err, sizeof c->err, "emu transport: rank %d: rank %d (pid %d) is gone", c->rank, ios[i].peer,
                     l->pid);
            return KB_ERR_IO;
        }
        if (idle > c->timeout_s) {
            snprintf(c->err, sizeof c->err, "emu transport: rank %d: no progress from rank %d for %g s (%s %zu of "
                     "%zu bytes)", c->rank, ios[i].peer, c->timeout_s, ios[i].send ? "sent" : "received",
                     ios[i].done, ios[i].bytes);
            return KB_ERR_TIMEOUT;
        }
    }
    return KB_OK;
}

/* This thread's CPU time [s]: the work a pass did, whatever else the machine runs. */
static double cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

kb_status kb_coll_xfer(kb_coll_comm *c, kb_coll_io *ios, int n_ios)
{
    double last = kb_rdv_now();
    int drained = 0;   /* a pass ran after a peer was seen gone: what it wrote before it exited is taken */
    for (;;) {
        uint32_t seen = c->nlocal > 1 ? kb_shm_bell(&c->shm, c->local) : 0;
        double c0 = cpu_now();
        size_t moved;
        int pending, socks;
        if (pass(c, ios, n_ios, &moved, &pending, &socks) != 0)
            return KB_ERR_IO;
        double t1 = kb_rdv_now();
        if (moved && c->slowdown > 1) {   /* fault hook: this rank's own work (CPU time), F times as long */
            double s = (c->slowdown - 1) * (cpu_now() - c0);
            struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };
            nanosleep(&ts, NULL);
        }
        if (!pending)
            return KB_OK;
        if (moved) {
            last = kb_rdv_now();
            drained = 0;
            continue;
        }
        kb_status st = stalled(c, ios, n_ios, t1 - last);
        if (st == KB_ERR_IO && !drained) {
            /* a peer that finished its part may exit between our pass and the check: its last
             * bytes are in the ring; only a pass after its exit that finds nothing proves them lost */
            drained = 1;
            continue;
        }
        if (st != KB_OK)
            return st;
        wait_some(c, ios, n_ios, socks, pending, seen);
        c->wait_s += kb_rdv_now() - t1;
    }
}

kb_status kb_coll_allgather_ctl(kb_coll_comm *c, const void *mine, size_t bytes, void *all)
{
    memcpy((char *)all + (size_t)c->rank * bytes, mine, bytes);
    if (c->size == 1)
        return KB_OK;
    kb_coll_io *ios = calloc(2 * (size_t)c->size, sizeof *ios);
    if (!ios) {
        snprintf(c->err, sizeof c->err, "emu transport: out of memory");
        return KB_ERR_OOM;
    }
    int k = 0;
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank)
            continue;
        ios[k++] = (kb_coll_io){ q, 1, (void *)mine, bytes, 0 };
        ios[k++] = (kb_coll_io){ q, 0, (char *)all + (size_t)q * bytes, bytes, 0 };
    }
    kb_status st = kb_coll_xfer(c, ios, k);
    free(ios);
    return st;
}
