/* sysnccl.c - the NCCL sweep of accept --system (see sysnccl.h). */
#include "accept/sysnccl.h"

#include "backend/cuda/cuda_api.h"
#include "collective/coll_nccl.h"
#include "collective/rendezvous.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 5

typedef struct {
    kb_cuda_api cu;
    kb_nccl_api nc;
    CUcontext ctx;
    CUdevice dev;
    CUstream stream;
    CUevent start, stop;
    kb_nccl_comm comm;
    char *why;
    size_t n;
    int graphs;         /* 1: the graph axis runs (always, once open_nccl succeeded) */
} nccl_run;

#define CU(x, call) KB_CU_CHECK(&(x)->cu, (x)->why, (x)->n, call)

static char *env_get(void *user, const char *name)
{
    (void)user;
    return getenv(name);
}

static kb_status open_cuda(nccl_run *x, int device)
{
    kb_status st = kb_cuda_api_load(&x->cu, x->why, x->n);
    if (st)
        return st;
    if (!(st = CU(x, x->cu.Init(0))))
        st = CU(x, x->cu.DeviceGet(&x->dev, device));
    if (!st)
        st = CU(x, x->cu.DevicePrimaryCtxRetain(&x->ctx, x->dev));
    if (!st)
        st = CU(x, x->cu.CtxSetCurrent(x->ctx));
    /* Blocking stream: NCCL must see the pageable cuMemcpyHtoD upload, which may return before
     * its DMA lands (Driver API "API synchronization behavior"); as backend_cuda.c. */
    if (!st)
        st = CU(x, x->cu.StreamCreate(&x->stream, CU_STREAM_DEFAULT));
    if (!st)
        st = CU(x, x->cu.EventCreate(&x->start, CU_EVENT_DEFAULT));
    if (!st)
        st = CU(x, x->cu.EventCreate(&x->stop, CU_EVENT_DEFAULT));
    return st;
}

/* NCCL's calls can be captured with NCCL >= 2.9 on a CUDA >= 11.3 driver ("Using NCCL with CUDA
 * Graphs"). kb_nccl_gate's NCCL 2.10 floor implies the first and kb_cuda_api_load's required
 * cuGraphInstantiateWithFlags (CUDA 11.4) the second, so this only guards that invariant:
 * 0, or -1 with the reason in why. */
static int graph_gate(int version, int driver, char *why, size_t n)
{
    if (version >= 20900 && driver >= 11040)
        return 0;
    snprintf(why, n, "the collectives' graph axis needs NCCL >= 2.9 and a CUDA >= 11.4 driver (NCCL %d, "
                     "CUDA %d.%d)", version, driver / 1000, driver % 1000 / 10);
    return -1;
}

/* NCCL loaded, gated, and this rank's communicator joined. */
static kb_status open_nccl(nccl_run *x, const kb_identity *id)
{
    int from_toolkit = 0, version = 0, driver = 0;
    kb_status st = kb_nccl_load(&x->nc, &from_toolkit, x->why, x->n);
    if (st)
        return st;
    if ((st = KB_NCCL_CHECK(&x->nc, x->why, x->n, x->nc.GetVersion(&version))))
        return st;
    x->cu.DriverGetVersion(&driver);
    if (kb_nccl_gate(version, driver, from_toolkit ? CUDA_VERSION / 1000 : 0, x->why, x->n) != 0)
        return KB_ERR_SETUP;
    if (graph_gate(version, driver, x->why, x->n) != 0)
        return KB_ERR_SETUP;
    x->graphs = 1;
    kb_rdv rdv;
    ncclUniqueId uid;
    if (kb_rdv_setup(env_get, NULL, id, &rdv, x->why, x->n) != 0)
        return KB_ERR_SETUP;
    if ((st = kb_nccl_share_id(&x->nc, &rdv, &uid, x->why, x->n)))
        return st;
    return kb_nccl_comm_init(&x->nc, &uid, rdv.rank, rdv.size, (cudaStream_t)x->stream, &x->comm, x->why, x->n);
}

/* The graph of one call d on the communicator's stream (NCCL >= 2.9 captures its calls:
 * "Using NCCL with CUDA Graphs"). Thread-local mode: this thread's unsafe calls would end the
 * capture, and nothing synchronises inside it (a driver refuses a capturing stream's sync).
 * The capture is always ended, so a failed call leaves no stream capturing. */
static kb_status capture(nccl_run *x, const kb_coll_desc *d, CUdeviceptr send, CUdeviceptr recv, CUgraphExec *exec)
{
    CUgraph g = NULL;
    kb_status st = CU(x, x->cu.StreamBeginCapture(x->stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL));
    if (st)
        return st;
    st = kb_nccl_run(&x->comm, d, (void *)(uintptr_t)send, (void *)(uintptr_t)recv, x->why, x->n);
    char end_why[512];   /* NCCL's error, when the call failed, stays in why (as coll_nccl.c) */
    kb_status end = KB_CU_CHECK(&x->cu, end_why, sizeof end_why, x->cu.StreamEndCapture(x->stream, &g));
    if (!st && end)
        snprintf(x->why, x->n, "%s", end_why);
    if (!st)
        st = end;
    if (!st)
        st = CU(x, x->cu.GraphInstantiate(exec, g, 0));
    if (g)
        x->cu.GraphDestroy(g);
    return st;
}

/* One warm-up and ITERS calls between the events: launched (eager), or the captured call's
 * graph launched (graph, time per launch). *ms is the time between the events. */
static kb_status timed(nccl_run *x, const kb_coll_desc *d, int graph, CUdeviceptr send, CUdeviceptr recv, float *ms)
{
    CUgraphExec exec = NULL;
    kb_status st = graph ? capture(x, d, send, recv, &exec) : KB_OK;
    for (int i = 0; i <= ITERS && !st; i++) {
        if (i == 1)
            st = CU(x, x->cu.EventRecord(x->start, x->stream));
        if (!st && graph)
            st = CU(x, x->cu.GraphLaunch(exec, x->stream));
        else if (!st)
            st = kb_nccl_run(&x->comm, d, (void *)(uintptr_t)send, (void *)(uintptr_t)recv, x->why, x->n);
    }
    if (!st && graph)
        st = kb_nccl_poll(&x->comm, x->why, x->n);   /* an asynchronous error during the launches */
    if (!st)
        st = CU(x, x->cu.EventRecord(x->stop, x->stream));
    if (!st)
        st = CU(x, x->cu.EventSynchronize(x->stop));
    if (!st)
        st = CU(x, x->cu.EventElapsedTime(ms, x->start, x->stop));
    if (exec)
        x->cu.GraphExecDestroy(exec);
    return st;
}

/* One size, eager or graph: upload, poison, warm up, time, read back, verify; *r filled. */
static kb_status one(nccl_run *x, const kb_coll_desc *d, int graph, char *host_send, char *host_recv,
                     kb_coll_result *r)
{
    kb_coll_counts cn;
    kb_coll_counts_of(d->op, d->count, d->nranks, &cn);
    size_t esz = kb_coll_esz(d->dtype), sb = cn.send_count * esz, rb = cn.recv_count * esz;
    CUdeviceptr send = 0, recv = 0;
    memset(r, 0, sizeof *r);
    r->desc = *d;
    r->warmup = 1;
    r->iters = ITERS;
    r->clock = "gpu";
    r->launch = graph ? "graph" : "eager";
    r->busy_us = r->busy_us_max = -1;   /* NCCL does not say how long a rank waited */
    r->size_bytes = kb_coll_size_bytes(&cn, esz);
    kb_coll_fill(d, x->comm.rank, host_send);
    kb_status st = CU(x, x->cu.MemAlloc(&send, sb ? sb : 1));
    if (!st)
        st = CU(x, x->cu.MemAlloc(&recv, rb ? rb : 1));
    if (!st)
        st = CU(x, x->cu.MemcpyHtoD(send, host_send, sb));
    if (!st)
        st = CU(x, x->cu.MemsetD8Async(recv, 0xFF, rb, x->stream));   /* poison: NaN / -1 unless written */
    float ms = 0;
    if (!st)
        st = timed(x, d, graph, send, recv, &ms);
    if (!st)
        st = CU(x, x->cu.StreamSynchronize(x->stream));
    if (!st)
        st = CU(x, x->cu.MemcpyDtoH(host_recv, recv, rb));
    if (!st) {
        r->time_us = r->time_us_max = ms * 1e3 / ITERS;
        kb_coll_bandwidth(d->op, d->nranks, r->size_bytes, r->time_us > 0 ? r->time_us : 1e-3, &r->algbw_gbs,
                          &r->busbw_gbs);
        r->wrong_all = kb_coll_verify(d, x->comm.rank, host_recv, &r->check);
        r->busiest = -1;
    }
    if (send)
        x->cu.MemFree(send);
    if (recv)
        x->cu.MemFree(recv);
    return st;
}

/* Every op at every size (fp32 sum; all_reduce also bf16 and int8), eager then, when the
 * graph axis is open, captured: the eager call has run before its capture (NCCL connects
 * send/recv peers lazily, which a capture that is not relaxed would refuse). */
static kb_status sweep(nccl_run *x, const uint64_t *sizes, int ns, kb_acc_coll_sink sink, void *user)
{
    static const kb_dtype extra[] = { KB_DT_BF16, KB_DT_INT8 };
    size_t most = sizes[ns - 1] + 64;   /* no buffer of a size exceeds it (coll_def.h's rounding) */
    char *hs = malloc(most), *hr = malloc(most);
    kb_status st = hs && hr ? KB_OK : KB_ERR_OOM;
    if (st)
        snprintf(x->why, x->n, "out of memory (two host buffers of %zu bytes)", most);
    for (int op = 0; op < KB_COLL_OP_COUNT && !st; op++)
        for (int k = 0; k < ns && !st; k++)
            for (int t = -1; t < (op == KB_COLL_ALL_REDUCE ? 2 : 0) && !st; t++) {
                kb_dtype dt = t < 0 ? KB_DT_FP32 : extra[t];
                kb_coll_desc d = { (kb_coll_op)op, dt, KB_REDOP_SUM, x->comm.size, 0,
                                   kb_coll_count_of_size((kb_coll_op)op, sizes[k], kb_coll_esz(dt), x->comm.size),
                                   1000u + (unsigned)(op * 64 + k) };
                kb_coll_result r;
                for (int graph = 0; graph <= x->graphs && d.count && !st; graph++)
                    if (!(st = one(x, &d, graph, hs, hr, &r)))
                        sink(user, &r);
            }
    free(hs);
    free(hr);
    return st;
}

int kb_acc_nccl_sweep(const kb_identity *id, int device, const uint64_t *sizes, int ns, kb_acc_coll_sink sink,
                      void *user, char *why, size_t n)
{
    static nccl_run x;
    memset(&x, 0, sizeof x);
    x.why = why;
    x.n = n;
    kb_status st = ns > 0 ? open_cuda(&x, device < 0 ? 0 : device) : KB_ERR_INPUT;
    if (ns <= 0)
        snprintf(why, n, "an empty sweep");
    if (!st)
        st = open_nccl(&x, id);
    int started = !st;
    if (!st)
        st = sweep(&x, sizes, ns, sink, user);
    char ignore[256];
    if (x.comm.comm && st)
        x.nc.CommAbort(x.comm.comm);   /* never ncclCommDestroy after a failure: it may wait for work
                                          that cannot end (coll_nccl.c, NCCL "Error handling") */
    else if (x.comm.comm)
        kb_nccl_comm_destroy(&x.comm, ignore, sizeof ignore);
    if (x.nc.lib)
        kb_nccl_unload(&x.nc);
    if (x.ctx) {
        if (x.start)
            x.cu.EventDestroy(x.start);
        if (x.stop)
            x.cu.EventDestroy(x.stop);
        if (x.stream)
            x.cu.StreamDestroy(x.stream);
        x.cu.DevicePrimaryCtxRelease(x.dev);
    }
    if (x.cu.lib)
        kb_cuda_api_unload(&x.cu);
    return !st ? 0 : started ? -2 : -1;
}
