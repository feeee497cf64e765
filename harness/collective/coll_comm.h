/* coll_comm.h - the emu transport: a communicator between rank processes on the CPU.
 * Ranks on one node talk through a shared-memory segment (coll_shm.h), ranks on different
 * nodes through TCP (coll_sock.h); the rendezvous (rendezvous.h) hands every rank the
 * others' node, address, port and pid. Collectives (coll_emu.h) are written once over
 * kb_coll_xfer, which moves any set of sends and receives at once, so a ring step that
 * sends to one neighbour while receiving from the other never deadlocks on a full buffer.
 *
 * No progress from a peer for timeout_s is an error naming it (and a peer process on this
 * node that is gone is named at once): no rank hangs on one that died.
 *
 * Fault hooks for tests (docs/acceptance.md "Fault injection"; KBENCH_FAULT_RANKS selects
 * the ranks): KBENCH_EMU_SLOWDOWN=F makes this rank's own work take F times as long (it
 * sleeps F - 1 times the CPU time of each pass that moved data), so its peers wait for it as
 * they would for
 * a slow link or GPU; KBENCH_EMU_CORRUPT=1 corrupts its contribution (coll_bench.h).
 */
#ifndef KB_COLL_COMM_H
#define KB_COLL_COMM_H

#include "collective/coll_shm.h"
#include "collective/rdv_common.h"

typedef struct {
    const kb_rdv *rdv;       /* rank, size, key, timeout: the rendezvous to publish through */
    const char *node;        /* this rank's node name (identity's host): same name = shared memory */
    const char *addr;        /* the address peers dial (KBENCH_COLL_ADDR; NULL: found, coll_sock.h) */
    int force_sockets;       /* 1: TCP between every pair, as if each rank were on its own node */
    size_t ring_bytes;       /* shared-memory ring per ordered pair [bytes]; 0 = 1 MiB (at most 64 MiB
                              * per node in all: fewer bytes per ring with many ranks) */
    double timeout_s;        /* no progress for this long is an error; 0 = the rendezvous's */
    double slowdown;         /* fault hook: >= 1 (1 = none) */
    int corrupt;             /* fault hook: corrupt this rank's contribution */
} kb_coll_comm_opts;

typedef enum { KB_LINK_SELF = 0, KB_LINK_SHM, KB_LINK_SOCK } kb_link_kind;

typedef struct {
    kb_link_kind kind;
    int local;               /* SHM: the peer's index on the node */
    int fd;                  /* SOCK: the connection */
    int pid;                 /* the peer's process id */
} kb_coll_link;

typedef struct {
    int rank, size;
    int local, nlocal;       /* this rank's index among its node's ranks, and their number */
    kb_coll_link *links;     /* [size] */
    kb_shm shm;
    double timeout_s, slowdown;
    int corrupt;
    double wait_s;           /* time spent waiting for peers so far [s] */
    char err[1024];          /* the last error */
} kb_coll_comm;

/* One transfer of kb_coll_xfer: send or receive bytes with peer (not this rank). */
typedef struct {
    int peer;
    int send;                /* 1 send, 0 receive */
    void *buf;
    size_t bytes;
    size_t done;             /* [bytes] moved so far; start at 0 */
} kb_coll_io;

/* Read the fault hooks for rank through get: KBENCH_EMU_SLOWDOWN (1..1000),
 * KBENCH_EMU_CORRUPT (0|1), both only where KBENCH_FAULT_RANKS selects rank. 0, or -1 with
 * err naming the malformed variable. */
int kb_coll_faults_read(char *(*get)(void *user, const char *name), void *user, int rank, double *slowdown,
                        int *corrupt, char *err, size_t n);

/* Publish this rank's endpoint through the rendezvous, connect to every peer. KB_OK and
 * *out (kb_coll_comm_free); else KB_ERR_TIMEOUT / KB_ERR_SETUP / KB_ERR_OOM with err. */
kb_status kb_coll_comm_init(const kb_coll_comm_opts *o, kb_coll_comm **out, char *err, size_t n);
void kb_coll_comm_free(kb_coll_comm *c);

/* Move every io at once until all are done. KB_OK; KB_ERR_TIMEOUT (no progress from a
 * peer for timeout_s), KB_ERR_IO (a peer closed or is gone) with c->err naming it. */
kb_status kb_coll_xfer(kb_coll_comm *c, kb_coll_io *ios, int n_ios);

/* Every rank's bytes of control data (not subject to the corrupt hook) into all
 * (size x bytes), by direct exchange. */
kb_status kb_coll_allgather_ctl(kb_coll_comm *c, const void *mine, size_t bytes, void *all);

#endif /* KB_COLL_COMM_H */
