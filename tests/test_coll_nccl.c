/* test_coll_nccl.c - the NCCL glue (collective/coll_nccl) against the NCCL double
 * (tests/fake_cuda/fake_nccl.c): loading, version and driver gating, the check macro, the
 * whole life of a communicator with every op x dtype x reduction op (one rank: the data is
 * checked), the id handed out by the rendezvous to forked ranks, the fallback for an NCCL
 * without ncclAlltoAll; and the contract's negative side - each breach the double reports
 * (call order, use after destroy, streams, groups, ranks, async errors) and the glue never
 * committing one; graph capture on the driver double (a captured call moves nothing until its
 * graph is launched, then at every launch; a capture of another stream, a synchronisation inside
 * a capture, send/recv captured before any ran, not relaxed: each refused and counted). */
#include "backend/cuda/cuda_api.h"
#include "check.h"
#include "collective/coll_nccl.h"
#include "collective/rendezvous.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define STREAM ((cudaStream_t)(uintptr_t)0x5eed)

static long (*violations)(void);
static int (*live_comms)(void);

/* Load the double at env (KBENCH_FAKE_LIBNCCL or _OLD) into api, with its test hooks. */
static int load(const char *env, kb_nccl_api *api)
{
    const char *path = getenv(env);
    char err[512];
    if (!path)
        return -1;
    setenv("KBENCH_LIBNCCL", path, 1);
    if (kb_nccl_load(api, NULL, err, sizeof err) != KB_OK) {
        fprintf(stderr, "%s\n", err);
        return -1;
    }
    void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    void *v = h ? dlsym(h, "fakeNcclViolations") : NULL, *l = h ? dlsym(h, "fakeNcclLiveComms") : NULL;
    memcpy(&violations, &v, sizeof v);
    memcpy(&live_comms, &l, sizeof l);
    return violations && live_comms ? 0 : -1;
}

static void test_load_and_gate(void)
{
    kb_nccl_api api;
    char err[512];
    setenv("KBENCH_LIBNCCL", "/nonexistent/libnccl.so.2", 1);
    CHECK(kb_nccl_load(&api, NULL, err, sizeof err) == KB_ERR_SETUP && strstr(err, "NCCL not found"));
    setenv("KBENCH_LIBNCCL", getenv("KBENCH_FAKE_LIBNVML"), 1);   /* a library, not NCCL */
    CHECK(kb_nccl_load(&api, NULL, err, sizeof err) == KB_ERR_SETUP && strstr(err, "has no ncclGetVersion"));
    CHECK(load("KBENCH_FAKE_LIBNCCL", &api) == 0 && api.AlltoAll && api.GetLastError);
    int code = 0, ma, mi, pa;
    CHECK(api.GetVersion(&code) == ncclSuccess && code == NCCL_VERSION_CODE);
    kb_nccl_version_split(code, &ma, &mi, &pa);
    CHECK(ma == NCCL_MAJOR && mi == NCCL_MINOR && pa == NCCL_PATCH);
    kb_nccl_version_split(2708, &ma, &mi, &pa);   /* the encoding before 2.9 */
    CHECK(ma == 2 && mi == 7 && pa == 8);
    CHECK(kb_nccl_gate(code, 13000, 13, err, sizeof err) == 0);
    CHECK(kb_nccl_gate(20905, 0, 0, err, sizeof err) == -1 && strstr(err, "NCCL 2.9.5 is older than 2.10"));
    CHECK(kb_nccl_gate(2708, 0, 0, err, sizeof err) == -1 && strstr(err, "2.7.8"));
    CHECK(kb_nccl_gate(22809, 12040, 13, err, sizeof err) == -1 && strstr(err, "needs a driver for CUDA 13") &&
          strstr(err, "12.4"));
    CHECK(kb_nccl_gate(22809, 12040, 0, err, sizeof err) == 0);   /* not the toolkit's: NCCL itself will say */
    ncclDataType_t t;
    ncclRedOp_t o;
    CHECK(kb_nccl_dtype(KB_DT_BF16, &t) == 0 && t == ncclBfloat16 && kb_nccl_dtype(KB_DT_TF32, &t) == -1);
    CHECK(kb_nccl_redop(KB_REDOP_AVG, &o) == 0 && o == ncclAvg && kb_nccl_redop(KB_REDOP_COUNT, &o) == -1);
}

static void test_check_macro(void)
{
    kb_nccl_api api;
    char err[512];
    CHECK(load("KBENCH_FAKE_LIBNCCL", &api) == 0);
    ncclComm_t none = NULL;
    kb_status st = KB_NCCL_CHECK(&api, err, sizeof err, api.CommDestroy(none));
    CHECK_MSG(st == KB_ERR_INTERNAL && strstr(err, "test_coll_nccl.c:") && strstr(err, "api.CommDestroy(none) -> "
              "ncclInvalidArgument: invalid argument (fake NCCL: not a communicator"), "%s", err);
    CHECK(kb_nccl_check(NULL, (ncclResult_t)99, err, sizeof err, "f.c", 3, "fn", "call") == KB_ERR_SETUP &&
          !strcmp(err, "f.c:3 fn: call -> ncclResult_t 99"));
    CHECK(kb_nccl_status(ncclSystemError) == KB_ERR_IO && kb_nccl_status(ncclRemoteError) == KB_ERR_IO &&
          kb_nccl_status(ncclUnhandledCudaError) == KB_ERR_FAULT && kb_nccl_status(ncclSuccess) == KB_OK);
}

/* Every op x dtype x redop through the glue on one rank: the data checked as on emu. */
static int one_rank_sweep(kb_nccl_comm *c)
{
    static const kb_dtype dts[] = { KB_DT_FP32, KB_DT_BF16, KB_DT_FP16, KB_DT_INT8 };
    char err[512], send[37 * 4], recv[37 * 4];
    int bad = 0;
    for (int op = 0; op < KB_COLL_OP_COUNT; op++)
        for (int t = 0; t < 4; t++)
            for (int ro = 0; ro < (kb_coll_op_reduces((kb_coll_op)op) ? KB_REDOP_COUNT : 1); ro++) {
                kb_coll_desc d = { (kb_coll_op)op, dts[t], (kb_coll_redop)ro, 1, 0, 37, 3 };
                kb_coll_check chk;
                kb_coll_fill(&d, 0, send);
                memset(recv, 0xFF, sizeof recv);
                kb_status st = kb_nccl_run(c, &d, send, recv, err, sizeof err);
                if (st != KB_OK || kb_coll_verify(&d, 0, recv, &chk) != 0) {
                    fprintf(stderr, "%s %s: %s %s\n", kb_coll_op_name(d.op), kb_dtype_name(d.dtype),
                            kb_status_name(st), err);
                    bad++;
                }
            }
    return bad;
}

static void test_communicator_life(void)
{
    kb_nccl_api api;
    char err[512];
    CHECK(load("KBENCH_FAKE_LIBNCCL", &api) == 0);
    long v0 = violations();
    kb_rdv alone = { .kind = KB_RDV_NONE, .rank = 0, .size = 1 };
    ncclUniqueId id;
    kb_nccl_comm c;
    CHECK(kb_nccl_share_id(&api, &alone, &id, err, sizeof err) == KB_OK);
    CHECK(kb_nccl_comm_init(&api, &id, 0, 1, STREAM, &c, err, sizeof err) == KB_OK && live_comms() == 1);
    CHECK(one_rank_sweep(&c) == 0);
    CHECK(kb_nccl_poll(&c, err, sizeof err) == KB_OK);
    CHECK(kb_nccl_comm_destroy(&c, err, sizeof err) == KB_OK && live_comms() == 0);
    CHECK(kb_nccl_comm_destroy(&c, err, sizeof err) == KB_OK);   /* once: the second does nothing */
    kb_coll_desc d = { KB_COLL_ALL_REDUCE, KB_DT_FP32, KB_REDOP_SUM, 1, 0, 1, 1 };
    float x = 1, y;
    CHECK(kb_nccl_run(&c, &d, &x, &y, err, sizeof err) == KB_ERR_INTERNAL && strstr(err, "destroyed"));
    /* rank 2 of 4 in one process: the grouped sendrecv and alltoall pair up */
    CHECK(kb_nccl_comm_init(&api, &id, 2, 4, STREAM, &c, err, sizeof err) == KB_OK);
    float s4[8] = { 0 }, r4[8];
    kb_coll_desc sr = { KB_COLL_SENDRECV, KB_DT_FP32, KB_REDOP_SUM, 4, 0, 2, 1 };
    CHECK(kb_nccl_run(&c, &sr, s4, r4, err, sizeof err) == KB_OK);
    CHECK(kb_nccl_comm_destroy(&c, err, sizeof err) == KB_OK);
    /* the glue refuses a rank outside [0, size) before NCCL sees it */
    CHECK(kb_nccl_comm_init(&api, &id, 4, 4, STREAM, &c, err, sizeof err) == KB_ERR_INPUT && strstr(err, "rank 4 of 4"));
    CHECK(violations() == v0);   /* the glue committed no breach */
}

static void test_old_nccl_fallback(void)
{
    kb_nccl_api api;
    char err[512];
    CHECK(load("KBENCH_FAKE_LIBNCCL_OLD", &api) == 0 && !api.AlltoAll && !api.GetLastError);
    int code;
    CHECK(api.GetVersion(&code) == ncclSuccess && kb_nccl_gate(code, 0, 0, err, sizeof err) == 0);
    long v0 = violations();
    kb_rdv alone = { .kind = KB_RDV_NONE, .rank = 0, .size = 1 };
    ncclUniqueId id;
    kb_nccl_comm c;
    CHECK(kb_nccl_share_id(&api, &alone, &id, err, sizeof err) == KB_OK);
    CHECK(kb_nccl_comm_init(&api, &id, 0, 1, STREAM, &c, err, sizeof err) == KB_OK);
    CHECK(one_rank_sweep(&c) == 0);   /* alltoall through grouped send/recv to itself */
    CHECK(kb_nccl_comm_destroy(&c, err, sizeof err) == KB_OK && violations() == v0);
    ncclComm_t none = NULL;   /* without ncclGetLastError the report still has the string */
    CHECK(KB_NCCL_CHECK(&api, err, sizeof err, api.CommAbort(none)) == KB_ERR_INTERNAL &&
          strlen(err) > 16 && !strcmp(err + strlen(err) - 16, "invalid argument"));   /* no "(last error)" */
}

/* Each breach, committed on purpose through the raw table, is reported as NCCL documents. */
static void test_double_refuses_breaches(void)
{
    kb_nccl_api a;
    CHECK(load("KBENCH_FAKE_LIBNCCL", &a) == 0);
    long v0 = violations();
    ncclUniqueId id, zero;
    memset(&zero, 0, sizeof zero);
    ncclComm_t c, c2;
    float x[4] = { 0 };
    CHECK(a.GetUniqueId(&id) == ncclSuccess && a.GetUniqueId(NULL) == ncclInvalidArgument);
    CHECK(a.CommInitRank(&c, 4, id, 4) == ncclInvalidArgument && a.CommInitRank(&c, 0, id, 0) == ncclInvalidArgument);
    CHECK(a.CommInitRank(&c, 2, id, -1) == ncclInvalidArgument && a.CommInitRank(NULL, 2, id, 0) == ncclInvalidArgument);
    CHECK(a.CommInitRank(&c, 2, zero, 0) == ncclInvalidArgument);   /* not an id from ncclGetUniqueId */
    CHECK(a.CommInitRank(&c, 2, id, 1) == ncclSuccess);
    CHECK(a.AllReduce(x, x, 4, ncclFloat32, ncclSum, c, NULL) == ncclInvalidUsage);      /* legacy stream */
    CHECK(a.AllReduce(x, x, 4, ncclFloat32, ncclSum, c, STREAM) == ncclSuccess);
    CHECK(a.AllReduce(x, x, 4, ncclFloat32, ncclSum, c, (cudaStream_t)(uintptr_t)7) == ncclInvalidUsage);  /* 2nd stream */
    CHECK(a.AllReduce(x, x, 4, (ncclDataType_t)ncclNumTypes, ncclSum, c, STREAM) == ncclInvalidArgument);
    CHECK(a.AllReduce(x, x, 4, ncclFloat32, (ncclRedOp_t)ncclNumOps, c, STREAM) == ncclInvalidArgument);
    CHECK(a.AllReduce(NULL, x, 4, ncclFloat32, ncclSum, c, STREAM) == ncclInvalidArgument);
    CHECK(a.Broadcast(x, x, 4, ncclFloat32, 2, c, STREAM) == ncclInvalidArgument);        /* root outside */
    CHECK(a.Send(x, 4, ncclFloat32, 0, c, STREAM) == ncclInvalidUsage);                   /* outside a group */
    CHECK(a.GroupEnd() == ncclInvalidUsage);                                              /* no GroupStart */
    CHECK(a.GroupStart() == ncclSuccess && a.Send(x, 4, ncclFloat32, 0, c, STREAM) == ncclSuccess);
    CHECK(a.CommDestroy(c) == ncclInvalidUsage);                                          /* inside a group */
    CHECK(a.GroupEnd() == ncclInvalidUsage);                                              /* a send with no receive */
    int n = 0;
    CHECK(a.CommCount(c, &n) == ncclSuccess && n == 2 && a.CommUserRank(c, &n) == ncclSuccess && n == 1);
    CHECK(a.CommDestroy(c) == ncclSuccess);
    CHECK(a.CommDestroy(c) == ncclInvalidArgument);                                       /* twice */
    CHECK(a.AllReduce(x, x, 4, ncclFloat32, ncclSum, c, STREAM) == ncclInvalidArgument);  /* after destroy */
    CHECK(a.CommCount(c, &n) == ncclInvalidArgument && a.CommAbort(c) == ncclInvalidArgument);
    c2 = (ncclComm_t)(uintptr_t)x;
    CHECK(a.CommGetAsyncError(c2, (ncclResult_t *)&n) == ncclInvalidArgument);           /* not a communicator */
    CHECK(violations() - v0 == 21 && !strcmp(a.GetLastError(NULL), "fake NCCL: not a communicator of this NCCL"));
}

static void test_async_error_aborts(void)
{
    kb_nccl_api api;
    char err[512];
    CHECK(load("KBENCH_FAKE_LIBNCCL", &api) == 0);
    long v0 = violations();
    kb_rdv alone = { .kind = KB_RDV_NONE, .rank = 0, .size = 1 };
    ncclUniqueId id;
    kb_nccl_comm c;
    CHECK(kb_nccl_share_id(&api, &alone, &id, err, sizeof err) == KB_OK);
    CHECK(kb_nccl_comm_init(&api, &id, 0, 1, STREAM, &c, err, sizeof err) == KB_OK);
    kb_coll_desc d = { KB_COLL_ALL_REDUCE, KB_DT_FP32, KB_REDOP_SUM, 1, 0, 4, 1 };
    float x[4] = { 0 }, y[4];
    CHECK(kb_nccl_run(&c, &d, x, y, err, sizeof err) == KB_OK);
    long (*calls)(void);
    void *h = dlopen(getenv("KBENCH_FAKE_LIBNCCL"), RTLD_NOW | RTLD_NOLOAD), *f = dlsym(h, "fakeNcclCalls");
    memcpy(&calls, &f, sizeof f);
    char at[32];
    snprintf(at, sizeof at, "%ld", calls() + 1);
    setenv("KBENCH_FAKE_NCCL_ASYNC", at, 1);   /* the next call succeeds, then a peer is lost */
    CHECK(kb_nccl_run(&c, &d, x, y, err, sizeof err) == KB_ERR_IO);
    CHECK_MSG(strstr(err, "ncclRemoteError") && strstr(err, "a peer disconnected"), "%s", err);
    CHECK(c.aborted && !c.comm && live_comms() == 0);   /* aborted, not destroyed */
    CHECK(kb_nccl_comm_destroy(&c, err, sizeof err) == KB_OK && violations() == v0);
    unsetenv("KBENCH_FAKE_NCCL_ASYNC");
    /* the double: destroying a communicator with an asynchronous error is a breach */
    ncclComm_t raw;
    CHECK(api.GetUniqueId(&id) == ncclSuccess && api.CommInitRank(&raw, 1, id, 0) == ncclSuccess);
    snprintf(at, sizeof at, "%ld", calls() + 1);
    setenv("KBENCH_FAKE_NCCL_ASYNC", at, 1);
    CHECK(api.AllReduce(x, y, 4, ncclFloat32, ncclSum, raw, STREAM) == ncclSuccess);
    CHECK(api.AllReduce(x, y, 4, ncclFloat32, ncclSum, raw, STREAM) == ncclRemoteError);
    CHECK(api.CommDestroy(raw) == ncclInvalidUsage && api.CommAbort(raw) == ncclSuccess);
    unsetenv("KBENCH_FAKE_NCCL_ASYNC");
    /* injected failures of init and of the id */
    setenv("KBENCH_FAKE_NCCL_FAIL", "ncclCommInitRank,ncclGetUniqueId", 1);
    CHECK(kb_nccl_comm_init(&api, &id, 0, 1, STREAM, &c, err, sizeof err) == KB_ERR_IO &&
          strstr(err, "ncclSystemError") && strstr(err, "connection refused (injected)"));
    CHECK(kb_nccl_share_id(&api, &alone, &id, err, sizeof err) == KB_ERR_IO);
    unsetenv("KBENCH_FAKE_NCCL_FAIL");
}

/* Three forked ranks: rank 0's id reaches every rank through a directory rendezvous. */
static void test_id_through_rendezvous(void)
{
    char dir[128];
    snprintf(dir, sizeof dir, "/tmp/kb_test_nccl_%d", (int)getpid());
    mkdir(dir, 0700);
    pid_t pids[3];
    for (int r = 0; r < 3; r++) {
        if ((pids[r] = fork()) != 0)
            continue;
        kb_nccl_api api;
        kb_rdv rdv = { .kind = KB_RDV_DIR, .rank = r, .size = 3, .timeout_s = 20 };
        snprintf(rdv.path, sizeof rdv.path, "%s", dir);
        snprintf(rdv.key, sizeof rdv.key, "nccl-%d", (int)getppid());
        snprintf(rdv.spec, sizeof rdv.spec, "dir:%s", dir);
        ncclUniqueId id;
        kb_nccl_comm c;
        char err[512], path[200];
        int ok = load("KBENCH_FAKE_LIBNCCL", &api) == 0 && kb_nccl_share_id(&api, &rdv, &id, err, sizeof err) == KB_OK &&
                 kb_nccl_comm_init(&api, &id, r, 3, STREAM, &c, err, sizeof err) == KB_OK;
        ok = ok && kb_nccl_comm_destroy(&c, err, sizeof err) == KB_OK;
        snprintf(path, sizeof path, "%s/id-%d", dir, r);
        FILE *f = fopen(path, "w");
        if (f) {
            fputs(id.internal, f);
            fclose(f);
        }
        _exit(ok ? 0 : 1);
    }
    char ids[3][128] = { "", "", "" };
    for (int r = 0; r < 3; r++) {
        int status;
        waitpid(pids[r], &status, 0);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        char path[200];
        snprintf(path, sizeof path, "%s/id-%d", dir, r);
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(ids[r], sizeof ids[r], f))
                ids[r][0] = 0;
            fclose(f);
            unlink(path);
        }
    }
    char want[64];
    snprintf(want, sizeof want, "kbfakeid %d ", (int)pids[0]);   /* made by rank 0 */
    CHECK_MSG(!strncmp(ids[0], want, strlen(want)) && !strcmp(ids[0], ids[1]) && !strcmp(ids[0], ids[2]),
              "%s / %s / %s", ids[0], ids[1], ids[2]);
    rmdir(dir);
}


/* Graph capture, with the driver double loaded (the NCCL double asks it about the stream). */
typedef struct { kb_cuda_api cu; kb_nccl_api a; CUcontext ctx; CUdevice dev; CUstream s, other; } cap_env;

static int cap_open(cap_env *e)
{
    char err[512];
    setenv("KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), 1);
    if (kb_cuda_api_load(&e->cu, err, sizeof err) != KB_OK || load("KBENCH_FAKE_LIBNCCL", &e->a) != 0)
        return -1;
    return e->cu.Init(0) || e->cu.DeviceGet(&e->dev, 0) || e->cu.DevicePrimaryCtxRetain(&e->ctx, e->dev) ||
                   e->cu.CtxSetCurrent(e->ctx) || e->cu.StreamCreate(&e->s, CU_STREAM_NON_BLOCKING) ||
                   e->cu.StreamCreate(&e->other, CU_STREAM_NON_BLOCKING)
               ? -1
               : 0;
}

static int zero(cap_env *e, CUdeviceptr p)
{
    return e->cu.MemsetD8Async(p, 0, 64, e->s) || e->cu.StreamSynchronize(e->s);
}

/* recv == the 16 floats 1..16 (the one-rank result). */
static int holds_input(cap_env *e, CUdeviceptr recv)
{
    float h[16];
    if (e->cu.MemcpyDtoH(h, recv, sizeof h))
        return 0;
    for (int i = 0; i < 16; i++)
        if (h[i] != (float)(i + 1))
            return 0;
    return 1;
}

/* Capture one call (all_reduce, or a send/recv pair) on e->s in mode m; its graph, or NULL. */
static CUgraphExec cap_one(cap_env *e, ncclComm_t c, int p2p, CUstreamCaptureMode m, CUdeviceptr send,
                           CUdeviceptr recv, ncclResult_t *r)
{
    CUgraph g = NULL;
    CUgraphExec x = NULL;
    void *sp = (void *)(uintptr_t)send, *rp = (void *)(uintptr_t)recv;
    cudaStream_t s = (cudaStream_t)e->s;
    if (e->cu.StreamBeginCapture(e->s, m))
        return NULL;
    if (!p2p)
        *r = e->a.AllReduce(sp, rp, 16, ncclFloat32, ncclSum, c, s);
    else {
        e->a.GroupStart();
        *r = e->a.Send(sp, 16, ncclFloat32, 0, c, s);
        ncclResult_t r2 = e->a.Recv(rp, 16, ncclFloat32, 0, c, s);
        *r = *r ? *r : r2;
        ncclResult_t r3 = e->a.GroupEnd();
        *r = *r ? *r : r3;
    }
    if (e->cu.StreamEndCapture(e->s, &g) == CUDA_SUCCESS && *r == ncclSuccess)
        e->cu.GraphInstantiate(&x, g, 0);
    if (g)
        e->cu.GraphDestroy(g);
    return x;
}

static void test_capture_contract(void)
{
    static cap_env e;
    CHECK(cap_open(&e) == 0);
    if (!e.s)
        return;
    float in[16];
    for (int i = 0; i < 16; i++)
        in[i] = (float)(i + 1);
    CUdeviceptr send = 0, recv = 0;
    CHECK(!e.cu.MemAlloc(&send, 64) && !e.cu.MemAlloc(&recv, 64) && !e.cu.MemcpyHtoD(send, in, 64));
    ncclUniqueId id;
    ncclComm_t c, c2;
    ncclResult_t r = ncclInternalError;
    CHECK(e.a.GetUniqueId(&id) == ncclSuccess && e.a.CommInitRank(&c, 1, id, 0) == ncclSuccess);
    CHECK(e.a.CommInitRank(&c2, 1, id, 0) == ncclSuccess);
    long v0 = violations();
    /* the captured call moves nothing until its graph is launched, then at every launch */
    CHECK(!zero(&e, recv));
    CUgraphExec x = cap_one(&e, c, 0, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL, send, recv, &r);
    CHECK(x != NULL && r == ncclSuccess && !holds_input(&e, recv));
    for (int launch = 0; launch < 2 && x; launch++) {
        CHECK(!zero(&e, recv) && !e.cu.GraphLaunch(x, e.s) && !e.cu.StreamSynchronize(e.s));
        CHECK_MSG(holds_input(&e, recv), "launch %d", launch);
    }
    if (x)
        e.cu.GraphExecDestroy(x);
    CHECK(violations() == v0);
    /* a capture of a stream other than the communicator's (bound to e.s above) */
    CHECK(!e.cu.StreamBeginCapture(e.other, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CHECK(e.a.AllReduce((void *)(uintptr_t)send, (void *)(uintptr_t)recv, 16, ncclFloat32, ncclSum, c,
                        (cudaStream_t)e.other) == ncclInvalidUsage);
    CUgraph g = NULL;
    CHECK(!e.cu.StreamEndCapture(e.other, &g) && g);
    e.cu.GraphDestroy(g);
    /* a synchronisation inside the capture: the driver refuses it and the capture is invalid */
    CHECK(!e.cu.StreamBeginCapture(e.s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    CHECK(e.cu.StreamSynchronize(e.s) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(e.a.AllReduce((void *)(uintptr_t)send, (void *)(uintptr_t)recv, 16, ncclFloat32, ncclSum, c,
                        (cudaStream_t)e.s) == ncclUnhandledCudaError);
    CHECK(e.cu.StreamEndCapture(e.s, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(violations() - v0 == 2);
    /* send/recv captured before any ran on c2: refused unless relaxed; relaxed, it runs */
    CHECK(cap_one(&e, c2, 1, CU_STREAM_CAPTURE_MODE_GLOBAL, send, recv, &r) == NULL && r == ncclInvalidUsage);
    CHECK(violations() - v0 == 4);   /* the send and the receive */
    CHECK(!zero(&e, recv));
    x = cap_one(&e, c2, 1, CU_STREAM_CAPTURE_MODE_RELAXED, send, recv, &r);
    CHECK(x && r == ncclSuccess && !holds_input(&e, recv) && !e.cu.GraphLaunch(x, e.s) && holds_input(&e, recv));
    if (x)
        e.cu.GraphExecDestroy(x);
    CHECK(violations() - v0 == 4);
    CHECK(e.a.CommDestroy(c) == ncclSuccess && e.a.CommDestroy(c2) == ncclSuccess);
    e.cu.MemFree(send);
    e.cu.MemFree(recv);
    unsetenv("KBENCH_LIBCUDA");
}

int main(void)
{
    if (!getenv("KBENCH_FAKE_LIBNCCL") || !getenv("KBENCH_FAKE_LIBNCCL_OLD")) {
        fprintf(stderr, "test_coll_nccl: KBENCH_FAKE_LIBNCCL and KBENCH_FAKE_LIBNCCL_OLD name the NCCL doubles "
                "(CTest sets them)\n");
        return 1;
    }
    RUN(test_load_and_gate);
    RUN(test_check_macro);
    RUN(test_communicator_life);
    RUN(test_old_nccl_fallback);
    RUN(test_double_refuses_breaches);
    RUN(test_async_error_aborts);
    RUN(test_id_through_rendezvous);
    RUN(test_capture_contract);
    TEST_MAIN_END();
}
