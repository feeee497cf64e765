/* coll_nccl.h - NCCL, loaded at run time with dlopen("libnccl.so.2") like the other vendor
 * libraries (backend/cuda/vendor_dl.h): kbench links no NCCL, starts and explains itself
 * where it is missing. nccl.h is included for its types only; the table's fields drop the
 * "nccl" prefix (api->AllReduce). Written from NCCL's documentation and nccl.h (2.28.9 is
 * the one under /usr/local/cuda here); no GPU has run it: the NCCL double
 * (tests/fake_cuda/fake_nccl.c) checks the contract below.
 *
 * The contract the glue keeps (and the double enforces):
 *   - rank 0 makes the unique id (ncclGetUniqueId) and the rendezvous (rendezvous.h) hands
 *     it to every rank before ncclCommInitRank; 0 <= rank < nranks, and the communicator
 *     then reports that rank and size (ncclCommUserRank, ncclCommCount);
 *   - the calling thread has the CUDA context of this rank's device current (the cuda
 *     backend's), and every collective is enqueued on the one stream given at init (the
 *     backend's stream, so the backend's events time it and its graphs capture it);
 *   - a send and a receive of one call are grouped (ncclGroupStart/End), as nccl-tests'
 *     sendrecv and its alltoall before NCCL 2.28 do;
 *   - an asynchronous error (ncclCommGetAsyncError, polled after every call and while
 *     waiting) makes the communicator unusable: it is aborted (ncclCommAbort), never
 *     destroyed (ncclCommDestroy may wait forever for work that cannot finish); a healthy
 *     one is destroyed exactly once, and is never used after.
 * Gating: NCCL >= 2.10 (bf16 and ncclAvg); a library from the CUDA toolkit kbench was built
 * with needs a driver of that CUDA major (cuDriverGetVersion), as NVRTC's output does.
 */
#ifndef KB_COLL_NCCL_H
#define KB_COLL_NCCL_H

/* nccl.h declares ncclGroupStart() and others without a prototype */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "collective/coll_data.h"
#include "collective/rdv_common.h"

#define KB_NCCL_SONAME "libnccl.so.2"
#define KB_NCCL_MIN_VERSION 21000   /* 2.10.0: bf16 and ncclAvg */

typedef struct {
    void *lib;   /* dlopen handle; NULL when not loaded */
    ncclResult_t (*GetVersion)(int *version);
    ncclResult_t (*GetUniqueId)(ncclUniqueId *id);
    ncclResult_t (*CommInitRank)(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank);
    ncclResult_t (*CommDestroy)(ncclComm_t comm);
    ncclResult_t (*CommAbort)(ncclComm_t comm);
    ncclResult_t (*CommGetAsyncError)(ncclComm_t comm, ncclResult_t *async_error);
    ncclResult_t (*CommCount)(const ncclComm_t comm, int *count);
    ncclResult_t (*CommUserRank)(const ncclComm_t comm, int *rank);
    const char *(*GetErrorString)(ncclResult_t r);
    ncclResult_t (*AllReduce)(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclRedOp_t op,
                              ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*AllGather)(const void *send, void *recv, size_t sendcount, ncclDataType_t dt, ncclComm_t comm,
                              cudaStream_t stream);
    ncclResult_t (*ReduceScatter)(const void *send, void *recv, size_t recvcount, ncclDataType_t dt, ncclRedOp_t op,
                                  ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*Broadcast)(const void *send, void *recv, size_t count, ncclDataType_t dt, int root,
                              ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*Send)(const void *send, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm,
                         cudaStream_t stream);
    ncclResult_t (*Recv)(void *recv, size_t count, ncclDataType_t dt, int peer, ncclComm_t comm, cudaStream_t stream);
    ncclResult_t (*GroupStart)(void);
    ncclResult_t (*GroupEnd)(void);
    /* optional: NULL when this NCCL does not export them */
    const char *(*GetLastError)(ncclComm_t comm);   /* NCCL >= 2.13 */
    ncclResult_t (*AlltoAll)(const void *send, void *recv, size_t count, ncclDataType_t dt, ncclComm_t comm,
                             cudaStream_t stream);  /* NCCL >= 2.28; else grouped send/recv */
} kb_nccl_api;

/* Open NCCL and resolve the table: $KBENCH_LIBNCCL when set, else libnccl.so.2 on the
 * loader's path, else beside the CUDA toolkit kbench was built with. KB_OK, or KB_ERR_SETUP
 * with "NCCL not found (...)" or the missing symbol in err. *from_toolkit = 1 when the
 * library came from that toolkit's folder (may be NULL). */
kb_status kb_nccl_load(kb_nccl_api *api, int *from_toolkit, char *err, size_t n);
void kb_nccl_unload(kb_nccl_api *api);

/* ncclGetVersion's code as major, minor, patch (X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z
 * after: nccl.h's NCCL_VERSION). */
void kb_nccl_version_split(int code, int *major, int *minor, int *patch);

/* Whether this NCCL can run here (pure): 0; or -1 with the reason in why when its version is
 * below KB_NCCL_MIN_VERSION, or it came from a toolkit of CUDA major toolkit_major (0:
 * unknown) and driver_version (cuDriverGetVersion: 12040 = 12.4; 0: unknown) is older. */
int kb_nccl_gate(int code, int driver_version, int toolkit_major, char *why, size_t n);

/* The NCCL types of a kbench dtype and reduction op: 0, or -1 (not a collective's). */
int kb_nccl_dtype(kb_dtype dt, ncclDataType_t *out);
int kb_nccl_redop(kb_coll_redop op, ncclRedOp_t *out);

/* ---- errors: the project's check macro for ncclResult_t ---- */

/* ncclResult_t -> kb_status (pure): success OK; ncclUnhandledCudaError (a CUDA call failed
 * inside NCCL) FAULT; ncclSystemError and ncclRemoteError (a socket, the network, a peer
 * that failed) IO; ncclInvalidArgument, ncclInvalidUsage (kbench used the API wrongly),
 * ncclInternalError INTERNAL; ncclInProgress (a non-blocking communicator, which kbench
 * does not make) INTERNAL; anything else SETUP. */
kb_status kb_nccl_status(ncclResult_t r);

/* The check behind KB_NCCL_CHECK: KB_OK on success; else "file:line function: call ->
 * NAME: ncclGetErrorString (ncclGetLastError)" into err and kb_nccl_status(r). api may be
 * NULL. */
kb_status kb_nccl_check(const kb_nccl_api *api, ncclResult_t r, char *err, size_t n, const char *file, int line,
                        const char *func, const char *call);
#define KB_NCCL_CHECK(api, err, n, call) kb_nccl_check((api), (call), (err), (n), __FILE__, __LINE__, __func__, #call)

/* ---- a communicator ---- */

typedef struct {
    const kb_nccl_api *api;
    ncclComm_t comm;         /* NULL once destroyed or aborted */
    int rank, size;
    cudaStream_t stream;     /* the one stream every call goes on (borrowed) */
    int aborted;             /* an asynchronous error ended it */
} kb_nccl_comm;

/* Rank 0 makes the unique id, the rendezvous hands it to every rank (r->rank, r->size).
 * KB_OK and *id; else the rendezvous's or NCCL's error in err. */
kb_status kb_nccl_share_id(const kb_nccl_api *api, const kb_rdv *r, ncclUniqueId *id, char *err, size_t n);

/* Join the communicator of id as rank of size on stream (the caller's current context's).
 * KB_ERR_INPUT when rank/size are out of range (before NCCL is called); NCCL's errors as
 * KB_NCCL_CHECK; KB_ERR_INTERNAL when the communicator reports another rank or size (then
 * aborted). */
kb_status kb_nccl_comm_init(const kb_nccl_api *api, const ncclUniqueId *id, int rank, int size, cudaStream_t stream,
                            kb_nccl_comm *out, char *err, size_t n);

/* Enqueue d's collective (d->nranks == c->size) on the stream: send and recv are device
 * pointers of the counts coll_def.h gives. Then poll the asynchronous error. KB_OK, or the
 * error (after which the communicator is aborted when the error was asynchronous). */
kb_status kb_nccl_run(kb_nccl_comm *c, const kb_coll_desc *d, const void *send, void *recv, char *err, size_t n);

/* Poll ncclCommGetAsyncError: KB_OK while healthy; on an error report it (with
 * ncclGetLastError) and abort the communicator. */
kb_status kb_nccl_poll(kb_nccl_comm *c, char *err, size_t n);

/* Destroy a healthy communicator (once; a second call, or one after an abort, does
 * nothing and returns KB_OK). */
kb_status kb_nccl_comm_destroy(kb_nccl_comm *c, char *err, size_t n);

#endif /* KB_COLL_NCCL_H */
