/* fake_nccl.c - the NCCL double (CMake target kbench_fake_nccl: build/fake-driver/
 * libnccl.so.2, loaded through KBENCH_LIBNCCL), built like the driver double: it moves no
 * data between processes; it enforces the contract kbench's glue (harness/collective/
 * coll_nccl.h) promises, returning the error NCCL documents for each breach and counting it:
 *
 *   - ncclGetVersion / ncclGetUniqueId / ncclCommInitRank: NULL pointers, nranks < 1, a rank
 *     outside [0, nranks) -> ncclInvalidArgument; an id ncclGetUniqueId did not make ->
 *     ncclInvalidArgument (the double's stand-in: a real NCCL would try to reach the id's
 *     address and fail with ncclSystemError);
 *   - a communicator: every call on one it did not make, or one destroyed or aborted
 *     (use after destroy, destroy twice) -> ncclInvalidArgument; handles are never reused,
 *     so a stale one stays detectable; ncclCommCount / ncclCommUserRank report the nranks
 *     and rank it was made with;
 *   - collectives: a datatype or op out of range, NULL buffers with count > 0, a root or peer
 *     outside [0, nranks) -> ncclInvalidArgument; the legacy NULL stream, or a stream other
 *     than the communicator's first (kbench's rule: one stream per communicator, the
 *     backend's) -> ncclInvalidUsage;
 *   - groups: ncclGroupEnd without ncclGroupStart, ncclSend/ncclRecv outside a group, a group
 *     whose sends and receives on a communicator do not pair up (a single-process NCCL would
 *     hang), ncclCommDestroy inside an open group -> ncclInvalidUsage;
 *   - asynchronous errors: after the N-th collective call (KBENCH_FAKE_NCCL_ASYNC=N) the
 *     communicator's ncclCommGetAsyncError says ncclRemoteError, later calls on it return
 *     it, and ncclCommDestroy of it is ncclInvalidUsage (only ncclCommAbort ends it);
 *   - KBENCH_FAKE_NCCL_FAIL=ncclCommInitRank (or any entry's name) makes that entry fail
 *     with ncclSystemError (a network failure), KBENCH_FAKE_NCCL_VERSION sets the version
 *     code (default 22809 = 2.28.9, the toolkit's here).
 * With nranks == 1 the collectives do their one-rank work (recv = send; a send to itself
 * reaches its receive at ncclGroupEnd), so a single rank checks data end to end.
 * Built with FAKE_NCCL_OLD (target kbench_fake_nccl_old) it is an NCCL 2.12 without
 * ncclAlltoAll and ncclGetLastError. Test hooks: fakeNcclViolations (contract breaches so
 * far), fakeNcclLiveComms, fakeNcclCalls.
 */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define MAX_COMMS 4096
#define MAX_P2P 256

struct ncclComm {
    int made, alive, nranks, rank, async_err;
    cudaStream_t stream;     /* bound by the first collective */
    int sends, recvs;        /* in the open group */
};
typedef struct { struct ncclComm *comm; int send; void *buf; size_t bytes; } p2p;

static struct ncclComm comms[MAX_COMMS];
static int n_comms, group_depth, n_p2p;
static p2p pending[MAX_P2P];
static long violations, calls;
static char last[512] = "";

static const char *const names[] = { "no error", "unhandled cuda error", "unhandled system error", "internal error",
                                     "invalid argument", "invalid usage",
                                     "remote process exited or there was a network error",
                                     "NCCL operation in progress" };

/* nccl.h declares these two without a prototype */
ncclResult_t ncclGroupStart(void);
ncclResult_t ncclGroupEnd(void);
EXPORT long fakeNcclViolations(void);
EXPORT int fakeNcclLiveComms(void);
EXPORT long fakeNcclCalls(void);
EXPORT long fakeNcclViolations(void) { return violations; }
EXPORT long fakeNcclCalls(void) { return calls; }
EXPORT int fakeNcclLiveComms(void)
{
    int k = 0;
    for (int i = 0; i < n_comms; i++)
        k += comms[i].alive;
    return k;
}

/* A breach: counted, the reason kept for ncclGetLastError. */
static ncclResult_t breach(ncclResult_t r, const char *what)
{
    violations++;
    snprintf(last, sizeof last, "fake NCCL: %s", what);
    return r;
}

static int failing(const char *entry)
{
    const char *f = getenv("KBENCH_FAKE_NCCL_FAIL");
    if (!f || !strstr(f, entry))
        return 0;
    snprintf(last, sizeof last, "fake NCCL: %s: connection refused (injected)", entry);
    return 1;
}

/* A live communicator of the double, or NULL (with the breach recorded in *r). */
static struct ncclComm *live(ncclComm_t c, ncclResult_t *r)
{
    if (!c || c < comms || c >= comms + n_comms || !c->made) {
        *r = breach(ncclInvalidArgument, "not a communicator of this NCCL");
        return NULL;
    }
    if (!c->alive) {
        *r = breach(ncclInvalidArgument, "the communicator was destroyed or aborted: used after its end");
        return NULL;
    }
    *r = ncclSuccess;
    return c;
}

static size_t type_size(ncclDataType_t t)
{
    static const size_t s[] = { 1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1 };
    return (unsigned)t < ncclNumTypes ? s[t] : 0;
}

/* The checks every collective makes; ncclSuccess to go on. */
static ncclResult_t coll_check(struct ncclComm **out, ncclComm_t comm, ncclDataType_t t, int op, int root,
                               const void *a, const void *b, size_t count, cudaStream_t stream, const char *entry)
{
    ncclResult_t r;
    struct ncclComm *c = *out = live(comm, &r);
    if (!c)
        return r;
    calls++;
    if (c->async_err)
        return c->async_err;
    if (failing(entry))
        return ncclSystemError;
    if ((unsigned)t >= ncclNumTypes || (unsigned)op >= ncclNumOps)
        return breach(ncclInvalidArgument, "datatype or reduction op out of range");
    if (count && (!a || !b))
        return breach(ncclInvalidArgument, "NULL buffer");
    if (root < 0 || root >= c->nranks)
        return breach(ncclInvalidArgument, "root or peer outside [0, nranks)");
    if (!stream)
        return breach(ncclInvalidUsage, "the legacy NULL stream: kbench enqueues on the backend's stream");
    if (c->stream && c->stream != stream)
        return breach(ncclInvalidUsage, "a second stream on one communicator");
    c->stream = stream;
    const char *n = getenv("KBENCH_FAKE_NCCL_ASYNC");
    if (n && *n && calls == atol(n)) {
        c->async_err = ncclRemoteError;
        snprintf(last, sizeof last, "fake NCCL: rank %d: a peer disconnected (injected after call %ld)", c->rank,
                 calls);
    }
    return ncclSuccess;
}

EXPORT ncclResult_t ncclGetVersion(int *version)
{
    const char *v = getenv("KBENCH_FAKE_NCCL_VERSION");
    if (!version)
        return breach(ncclInvalidArgument, "ncclGetVersion(NULL)");
#ifdef FAKE_NCCL_OLD
    *version = v && *v ? atoi(v) : 21205;
#else
    *version = v && *v ? atoi(v) : NCCL_VERSION_CODE;
#endif
    return ncclSuccess;
}

EXPORT ncclResult_t ncclGetUniqueId(ncclUniqueId *id)
{
    static unsigned counter;
    if (!id)
        return breach(ncclInvalidArgument, "ncclGetUniqueId(NULL)");
    if (failing("ncclGetUniqueId"))
        return ncclSystemError;
    memset(id, 0, sizeof *id);
    snprintf(id->internal, sizeof id->internal, "kbfakeid %d %u", (int)getpid(), ++counter);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommInitRank(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank)
{
    if (!comm)
        return breach(ncclInvalidArgument, "ncclCommInitRank(NULL, ...)");
    if (nranks < 1 || rank < 0 || rank >= nranks)
        return breach(ncclInvalidArgument, "rank outside [0, nranks) or nranks < 1");
    if (strncmp(id.internal, "kbfakeid ", 9))
        return breach(ncclInvalidArgument, "a unique id ncclGetUniqueId did not make");
    if (failing("ncclCommInitRank"))
        return ncclSystemError;
    if (n_comms == MAX_COMMS)
        return ncclSystemError;
    struct ncclComm *c = &comms[n_comms++];
    memset(c, 0, sizeof *c);
    c->made = c->alive = 1;
    c->nranks = nranks;
    c->rank = rank;
    *comm = c;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommCount(const ncclComm_t comm, int *count)
{
    ncclResult_t r;
    struct ncclComm *c = live(comm, &r);
    if (c && !count)
        return breach(ncclInvalidArgument, "ncclCommCount(comm, NULL)");
    if (c)
        *count = c->nranks;
    return r;
}

EXPORT ncclResult_t ncclCommUserRank(const ncclComm_t comm, int *rank)
{
    ncclResult_t r;
    struct ncclComm *c = live(comm, &r);
    if (c && !rank)
        return breach(ncclInvalidArgument, "ncclCommUserRank(comm, NULL)");
    if (c)
        *rank = c->rank;
    return r;
}

EXPORT ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *err)
{
    ncclResult_t r;
    struct ncclComm *c = live(comm, &r);
    if (c && !err)
        return breach(ncclInvalidArgument, "ncclCommGetAsyncError(comm, NULL)");
    if (c)
        *err = c->async_err ? (ncclResult_t)c->async_err : ncclSuccess;
    return r;
}

EXPORT ncclResult_t ncclCommDestroy(ncclComm_t comm)
{
    ncclResult_t r;
    struct ncclComm *c = live(comm, &r);
    if (!c)
        return r;
    if (group_depth)
        return breach(ncclInvalidUsage, "ncclCommDestroy inside an open group");
    if (c->async_err)
        return breach(ncclInvalidUsage, "ncclCommDestroy after an asynchronous error: ncclCommAbort it");
    c->alive = 0;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclCommAbort(ncclComm_t comm)
{
    ncclResult_t r;
    struct ncclComm *c = live(comm, &r);
    if (c)
        c->alive = 0;
    return r;
}

EXPORT const char *ncclGetErrorString(ncclResult_t r)
{
    return (unsigned)r < ncclNumResults ? names[r] : "unknown result code";
}

#ifndef FAKE_NCCL_OLD
EXPORT const char *ncclGetLastError(ncclComm_t comm)
{
    (void)comm;
    return last;
}
#endif

/* ---- collectives: with one rank, the one-rank result ---- */

static ncclResult_t one_rank_copy(struct ncclComm *c, void *recv, const void *send, size_t bytes)
{
    if (c->nranks == 1 && bytes && recv != send)
        memmove(recv, send, bytes);
    return ncclSuccess;
}

EXPORT ncclResult_t ncclAllReduce(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t stream)
{
    struct ncclComm *c;
    ncclResult_t r = coll_check(&c, comm, t, op, 0, send, recv, count, stream, "ncclAllReduce");
    return r ? r : one_rank_copy(c, recv, send, count * type_size(t));
}

EXPORT ncclResult_t ncclAllGather(const void *send, void *recv, size_t count, ncclDataType_t t, ncclComm_t comm,
                                  cudaStream_t stream)
{
    struct ncclComm *c;
    ncclResult_t r = coll_check(&c, comm, t, 0, 0, send, recv, count, stream, "ncclAllGather");
    return r ? r : one_rank_copy(c, recv, send, count * type_size(t));
}

EXPORT ncclResult_t ncclReduceScatter(const void *send, void *recv, size_t count, ncclDataType_t t, ncclRedOp_t op,
                                      ncclComm_t comm, cudaStream_t stream)
{
    struct ncclComm *c;
    ncclResult_t r = coll_check(&c, comm, t, op, 0, send, recv, count, stream, "ncclReduceScatter");
    return r ? r : one_rank_copy(c, recv, send, count * type_size(t));
}

EXPORT ncclResult_t ncclBroadcast(const void *send, void *recv, size_t count, ncclDataType_t t, int root,
                                  ncclComm_t comm, cudaStream_t stream)
{
    struct ncclComm *c;
    ncclResult_t r = coll_check(&c, comm, t, 0, root, send, recv, count, stream, "ncclBroadcast");
    return r ? r : one_rank_copy(c, recv, send, count * type_size(t));
}

#ifndef FAKE_NCCL_OLD
EXPORT ncclResult_t ncclAlltoAll(const void *send, void *recv, size_t count, ncclDataType_t t, ncclComm_t comm,
                                 cudaStream_t stream)
{
    struct ncclComm *c;
    ncclResult_t r = coll_check(&c, comm, t, 0, 0, send, recv, count, stream, "ncclAlltoAll");
    return r ? r : one_rank_copy(c, recv, send, count * type_size(t) * (size_t)c->nranks);
}
#endif

static ncclResult_t point(int send, void *buf, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                          cudaStream_t stream)
{
    struct ncclComm *c;
    ncclResult_t r = coll_check(&c, comm, t, 0, peer, buf, buf, count, stream, send ? "ncclSend" : "ncclRecv");
    if (r)
        return r;
    if (!group_depth)
        return breach(ncclInvalidUsage, "ncclSend/ncclRecv outside a group: a send and a receive must be grouped");
    if (n_p2p == MAX_P2P)
        return breach(ncclInvalidUsage, "too many operations in one group");
    pending[n_p2p++] = (p2p){ c, send, buf, count * type_size(t) };
    if (send)
        c->sends++;
    else
        c->recvs++;
    return ncclSuccess;
}

EXPORT ncclResult_t ncclSend(const void *send, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t stream)
{
    return point(1, (void *)send, count, t, peer, comm, stream);
}

EXPORT ncclResult_t ncclRecv(void *recv, size_t count, ncclDataType_t t, int peer, ncclComm_t comm,
                             cudaStream_t stream)
{
    return point(0, recv, count, t, peer, comm, stream);
}

EXPORT ncclResult_t ncclGroupStart(void)
{
    group_depth++;
    return ncclSuccess;
}

/* Close the group: every communicator's sends and receives pair up; one-rank ones copy. */
EXPORT ncclResult_t ncclGroupEnd(void)
{
    if (group_depth == 0)
        return breach(ncclInvalidUsage, "ncclGroupEnd without ncclGroupStart");
    if (--group_depth)
        return ncclSuccess;
    ncclResult_t r = ncclSuccess;
    for (int i = 0; i < n_p2p; i++) {
        struct ncclComm *c = pending[i].comm;
        if (c->sends != c->recvs && r == ncclSuccess)
            r = breach(ncclInvalidUsage, "a group whose sends and receives do not pair up would hang");
        for (int j = i + 1; c->nranks == 1 && pending[i].send == 1 && j < n_p2p; j++)
            if (pending[j].comm == c && !pending[j].send && pending[j].bytes == pending[i].bytes) {
                one_rank_copy(c, pending[j].buf, pending[i].buf, pending[i].bytes);
                pending[j].send = -1;   /* matched */
                break;
            }
    }
    for (int i = 0; i < n_p2p; i++)
        pending[i].comm->sends = pending[i].comm->recvs = 0;
    n_p2p = 0;
    return r;
}
