/* coll_nccl.c - NCCL through dlopen: the table, gating, the check macro, a communicator
 * and the collectives on one stream (see coll_nccl.h). Written from NCCL's documentation
 * (docs.nvidia.com/deeplearning/nccl: "Creating a Communicator", comms.rst, colls.rst,
 * "Group Calls", "Error handling and communicator abort") and nccl.h; no GPU has run it. */
#include "collective/coll_nccl.h"

#include "backend/cuda/cuda_api.h"
#include "backend/cuda/vendor_dl.h"
#include "collective/rendezvous.h"

#include <dlfcn.h>
#include <link.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static const kb_dl_sym syms[] = {
#define E(field) { "nccl" #field, offsetof(kb_nccl_api, field) }
    E(GetVersion), E(GetUniqueId), E(CommInitRank), E(CommDestroy), E(CommAbort), E(CommGetAsyncError),
    E(CommCount), E(CommUserRank), E(GetErrorString), E(AllReduce), E(AllGather), E(ReduceScatter), E(Broadcast),
    E(Send), E(Recv), E(GroupStart), E(GroupEnd),
#undef E
};

/* Whether the loaded library lives in the toolkit's lib64 or lib folder. */
static int in_toolkit(void *lib)
{
    struct link_map *lm = NULL;
    char dir[1024];
    if (dlinfo(lib, RTLD_DI_LINKMAP, &lm) != 0 || !lm || !lm->l_name)
        return 0;
    for (int i = 0; kb_dl_toolkit_path(i, KB_NCCL_SONAME, dir, sizeof dir) == 0; i++) {
        char *slash = strrchr(dir, '/');
        if (slash && !strncmp(lm->l_name, dir, (size_t)(slash - dir + 1)))
            return 1;
    }
    return 0;
}

kb_status kb_nccl_load(kb_nccl_api *api, int *from_toolkit, char *err, size_t n)
{
    memset(api, 0, sizeof *api);
    kb_status st = kb_dl_load(&api->lib, api, syms, sizeof syms / sizeof syms[0], "KBENCH_LIBNCCL", KB_NCCL_SONAME,
                              "NCCL", err, n);
    if (st != KB_OK)
        return st;
    void *f = dlsym(api->lib, "ncclGetLastError"), *g = dlsym(api->lib, "ncclAlltoAll");
    memcpy(&api->GetLastError, &f, sizeof f);   /* POSIX: a dlsym result converts to a function pointer */
    memcpy(&api->AlltoAll, &g, sizeof g);
    if (from_toolkit)
        *from_toolkit = in_toolkit(api->lib);
    return KB_OK;
}

void kb_nccl_unload(kb_nccl_api *api)
{
    kb_dl_forget(&api->lib, api, sizeof *api);   /* stays loaded: see vendor_dl.h */
}

void kb_nccl_version_split(int code, int *major, int *minor, int *patch)
{
    if (code >= 10000) {   /* NCCL_VERSION: X*10000 + Y*100 + Z from 2.9 on */
        *major = code / 10000, *minor = code / 100 % 100, *patch = code % 100;
    } else {               /* before: X*1000 + Y*100 + Z */
        *major = code / 1000, *minor = code / 100 % 10, *patch = code % 100;
    }
}

int kb_nccl_gate(int code, int driver_version, int toolkit_major, char *why, size_t n)
{
    int ma, mi, pa;
    kb_nccl_version_split(code, &ma, &mi, &pa);
    if (code < 10000 || code < KB_NCCL_MIN_VERSION) {
        snprintf(why, n, "NCCL %d.%d.%d is older than 2.10 (bf16 and ncclAvg)", ma, mi, pa);
        return -1;
    }
    if (toolkit_major > 0 && driver_version > 0 && driver_version / 1000 < toolkit_major) {
        snprintf(why, n, "NCCL %d.%d.%d from the CUDA %d toolkit needs a driver for CUDA %d (this one is for %d.%d)",
                 ma, mi, pa, toolkit_major, toolkit_major, driver_version / 1000, driver_version % 1000 / 10);
        return -1;
    }
    return 0;
}

int kb_nccl_dtype(kb_dtype dt, ncclDataType_t *out)
{
    switch (dt) {
    case KB_DT_FP32: *out = ncclFloat32; return 0;
    case KB_DT_FP16: *out = ncclFloat16; return 0;
    case KB_DT_BF16: *out = ncclBfloat16; return 0;
    case KB_DT_INT8: *out = ncclInt8; return 0;
    default: return -1;
    }
}

int kb_nccl_redop(kb_coll_redop op, ncclRedOp_t *out)
{
    static const ncclRedOp_t map[] = { ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg };
    _Static_assert(sizeof map / sizeof map[0] == KB_REDOP_COUNT, "one NCCL op per kb_coll_redop");
    if ((unsigned)op >= KB_REDOP_COUNT)
        return -1;
    *out = map[op];
    return 0;
}

/* ---- errors ---- */

static const char *const result_names[] = { "ncclSuccess", "ncclUnhandledCudaError", "ncclSystemError",
                                             "ncclInternalError", "ncclInvalidArgument", "ncclInvalidUsage",
                                             "ncclRemoteError", "ncclInProgress" };
_Static_assert(sizeof result_names / sizeof result_names[0] == ncclNumResults, "one name per ncclResult_t");

kb_status kb_nccl_status(ncclResult_t r)
{
    switch (r) {
    case ncclSuccess: return KB_OK;
    case ncclUnhandledCudaError: return KB_ERR_FAULT;
    case ncclSystemError: case ncclRemoteError: return KB_ERR_IO;
    case ncclInternalError: case ncclInvalidArgument: case ncclInvalidUsage: case ncclInProgress:
        return KB_ERR_INTERNAL;
    default: return KB_ERR_SETUP;
    }
}

kb_status kb_nccl_check(const kb_nccl_api *api, ncclResult_t r, char *err, size_t n, const char *file, int line,
                        const char *func, const char *call)
{
    if (r == ncclSuccess)
        return KB_OK;
    const char *name = (unsigned)r < ncclNumResults ? result_names[r] : NULL;
    const char *str = api && api->GetErrorString ? api->GetErrorString(r) : NULL;
    const char *last = api && api->GetLastError ? api->GetLastError(NULL) : NULL;
    char msg[600];
    snprintf(msg, sizeof msg, "%s%s%s%s", str ? str : "", last && *last ? " (" : "", last && *last ? last : "",
             last && *last ? ")" : "");
    if (name)
        kb_cuda_format_error(err, n, file, line, func, call, (int)r, name, msg[0] ? msg : NULL);
    else
        snprintf(err, n, "%s:%d %s: %s -> ncclResult_t %d", file, line, func, call, (int)r);
    return kb_nccl_status(r);
}

/* ---- a communicator ---- */

#define NC(api, err, n, call) KB_NCCL_CHECK(api, err, n, call)

kb_status kb_nccl_share_id(const kb_nccl_api *api, const kb_rdv *r, ncclUniqueId *id, char *err, size_t n)
{
    ncclUniqueId mine;
    memset(&mine, 0, sizeof mine);
    if (r->rank == 0) {
        kb_status st = NC(api, err, n, api->GetUniqueId(&mine));
        if (st != KB_OK)
            return st;
    }
    ncclUniqueId *all = calloc((size_t)(r->size > 0 ? r->size : 1), sizeof *all);
    if (!all) {
        snprintf(err, n, "NCCL: out of memory (the unique id's table)");
        return KB_ERR_OOM;
    }
    kb_status st = kb_rdv_exchange(r, &mine, sizeof mine, all, err, n);
    if (st == KB_OK)
        *id = all[0];   /* rank 0's */
    free(all);
    return st;
}

kb_status kb_nccl_comm_init(const kb_nccl_api *api, const ncclUniqueId *id, int rank, int size, cudaStream_t stream,
                            kb_nccl_comm *out, char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    out->api = api;
    out->stream = stream;
    if (size < 1 || rank < 0 || rank >= size) {
        snprintf(err, n, "NCCL: rank %d of %d ranks: a rank must be in [0, ranks)", rank, size);
        return KB_ERR_INPUT;
    }
    kb_status st = NC(api, err, n, api->CommInitRank(&out->comm, size, *id, rank));
    if (st != KB_OK) {
        out->comm = NULL;
        return st;
    }
    int count = -1, user = -1;
    if ((st = NC(api, err, n, api->CommCount(out->comm, &count))) == KB_OK &&
        (st = NC(api, err, n, api->CommUserRank(out->comm, &user))) == KB_OK && (count != size || user != rank)) {
        snprintf(err, n, "NCCL: the communicator says rank %d of %d, kbench asked for rank %d of %d", user, count,
                 rank, size);
        st = KB_ERR_INTERNAL;
    }
    if (st != KB_OK) {
        api->CommAbort(out->comm);
        out->comm = NULL;
        return st;
    }
    out->rank = rank;
    out->size = size;
    return KB_OK;
}

kb_status kb_nccl_poll(kb_nccl_comm *c, char *err, size_t n)
{
    if (!c->comm) {
        snprintf(err, n, "NCCL: the communicator was %s", c->aborted ? "aborted after an error" : "destroyed");
        return KB_ERR_INTERNAL;
    }
    ncclResult_t async = ncclSuccess;
    kb_status st = NC(c->api, err, n, c->api->CommGetAsyncError(c->comm, &async));
    if (st == KB_OK && async != ncclSuccess && async != ncclInProgress)
        st = kb_nccl_check(c->api, async, err, n, __FILE__, __LINE__, __func__, "asynchronous error");
    if (st != KB_OK) {
        c->api->CommAbort(c->comm);   /* never ncclCommDestroy: it may wait for work that cannot end */
        c->comm = NULL;
        c->aborted = 1;
    }
    return st;
}

/* A grouped send to next and receive from prev (sendrecv), or to and from every rank
 * (alltoall without ncclAlltoAll: nccl-tests' fallback). */
static kb_status grouped(kb_nccl_comm *c, const kb_coll_desc *d, ncclDataType_t t, const void *send, void *recv,
                         char *err, size_t n)
{
    const kb_nccl_api *a = c->api;
    size_t b = d->count * kb_coll_esz(d->dtype);
    kb_status st = NC(a, err, n, a->GroupStart()), end;
    if (st != KB_OK)
        return st;
    if (d->op == KB_COLL_SENDRECV) {
        if ((st = NC(a, err, n, a->Send(send, d->count, t, (c->rank + 1) % c->size, c->comm, c->stream))) == KB_OK)
            st = NC(a, err, n, a->Recv(recv, d->count, t, (c->rank + c->size - 1) % c->size, c->comm, c->stream));
    } else {
        for (int q = 0; st == KB_OK && q < c->size; q++)
            if ((st = NC(a, err, n, a->Send((const char *)send + q * b, d->count, t, q, c->comm, c->stream))) == KB_OK)
                st = NC(a, err, n, a->Recv((char *)recv + q * b, d->count, t, q, c->comm, c->stream));
    }
    char end_err[512];
    end = NC(a, end_err, sizeof end_err, a->GroupEnd());   /* always closed, even after a failed call */
    if (st == KB_OK && end != KB_OK)
        snprintf(err, n, "%s", end_err);
    return st != KB_OK ? st : end;
}

kb_status kb_nccl_run(kb_nccl_comm *c, const kb_coll_desc *d, const void *send, void *recv, char *err, size_t n)
{
    ncclDataType_t t;
    ncclRedOp_t op = ncclSum;
    if (!c->comm)
        return kb_nccl_poll(c, err, n);
    if (kb_nccl_dtype(d->dtype, &t) != 0 || (kb_coll_op_reduces(d->op) && kb_nccl_redop(d->redop, &op) != 0) ||
        d->nranks != c->size || d->root < 0 || d->root >= c->size) {
        snprintf(err, n, "NCCL: %s of %s (%s) over %d ranks, root %d, on a communicator of %d",
                 kb_coll_op_name(d->op), kb_dtype_name(d->dtype), kb_coll_redop_name(d->redop), d->nranks, d->root,
                 c->size);
        return KB_ERR_INPUT;
    }
    const kb_nccl_api *a = c->api;
    kb_status st;
    switch (d->op) {
    case KB_COLL_ALL_REDUCE: st = NC(a, err, n, a->AllReduce(send, recv, d->count, t, op, c->comm, c->stream)); break;
    case KB_COLL_ALL_GATHER: st = NC(a, err, n, a->AllGather(send, recv, d->count, t, c->comm, c->stream)); break;
    case KB_COLL_REDUCE_SCATTER:
        st = NC(a, err, n, a->ReduceScatter(send, recv, d->count, t, op, c->comm, c->stream));
        break;
    case KB_COLL_BROADCAST:
        st = NC(a, err, n, a->Broadcast(send, recv, d->count, t, d->root, c->comm, c->stream));
        break;
    case KB_COLL_ALLTOALL:
        st = a->AlltoAll ? NC(a, err, n, a->AlltoAll(send, recv, d->count, t, c->comm, c->stream))
                         : grouped(c, d, t, send, recv, err, n);
        break;
    default: st = grouped(c, d, t, send, recv, err, n); break;
    }
    char perr[512];
    kb_status pst = kb_nccl_poll(c, perr, sizeof perr);   /* an asynchronous error ends the communicator */
    if (st == KB_OK && pst != KB_OK)
        snprintf(err, n, "%s", perr);
    return st != KB_OK ? st : pst;
}

kb_status kb_nccl_comm_destroy(kb_nccl_comm *c, char *err, size_t n)
{
    if (!c->comm)
        return KB_OK;
    kb_status st = NC(c->api, err, n, c->api->CommDestroy(c->comm));
    c->comm = NULL;
    return st;
}
