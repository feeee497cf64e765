/* cuda_p2p.c - the copy-engine matrix between the node's GPUs (see cuda_p2p.h). */
#include "backend/cuda/cuda_p2p.h"

#include "backend/cuda/cuda_api.h"

#include <stdio.h>
#include <string.h>

#define CHECK_BYTES 4096

typedef struct {
    kb_cuda_api api;
    int n;
    CUdevice dev[KB_P2P_MAX_GPUS];   /* cuDeviceGet once per ordinal; the handles are passed on */
    int got[KB_P2P_MAX_GPUS];        /* dev[d] valid */
    CUcontext ctx[KB_P2P_MAX_GPUS];
    CUstream stream[KB_P2P_MAX_GPUS];
    CUevent start[KB_P2P_MAX_GPUS], stop[KB_P2P_MAX_GPUS];
    CUdeviceptr buf[KB_P2P_MAX_GPUS];
    size_t bytes;
    int reps;
    char *err;
    size_t err_n;
    CUresult last;   /* the last call that failed */
    volatile unsigned *gate;   /* host-mapped: both directions' streams wait until it reaches gen */
    CUdeviceptr gate_dev;
    unsigned gen;
} p2p;

/* KB_CU_CHECK that also keeps the failing CUresult (a pair's cell is named by it). */
static kb_status cu_check(p2p *x, CUresult r, const char *file, int line, const char *func, const char *call)
{
    if (r != CUDA_SUCCESS)
        x->last = r;
    return kb_cuda_check(&x->api, r, x->err, x->err_n, file, line, func, call);
}
#define CU(x, call) cu_check((x), (call), __FILE__, __LINE__, __func__, #call)

/* Device d's handle and bus id, its context current, its stream, events and buffer made. */
static kb_status open_device(p2p *x, int d, char *bus_id)
{
    kb_status st = CU(x, x->api.DeviceGet(&x->dev[d], d));
    x->got[d] = !st;
    if (!st)
        st = CU(x, x->api.DeviceGetPCIBusId(bus_id, KB_P2P_BUS_ID_LEN, x->dev[d]));
    if (!st)
        st = CU(x, x->api.DevicePrimaryCtxRetain(&x->ctx[d], x->dev[d]));
    if (!st)
        st = CU(x, x->api.CtxSetCurrent(x->ctx[d]));
    /* Blocking stream: ordered after the synchronous pageable cuMemcpyHtoD in verified(),
     * which may return before its DMA lands (Driver API "API synchronization behavior"). */
    if (!st)
        st = CU(x, x->api.StreamCreate(&x->stream[d], CU_STREAM_DEFAULT));
    if (!st)
        st = CU(x, x->api.EventCreate(&x->start[d], CU_EVENT_DEFAULT));
    if (!st)
        st = CU(x, x->api.EventCreate(&x->stop[d], CU_EVENT_DEFAULT));
    if (!st)
        st = CU(x, x->api.MemAlloc(&x->buf[d], x->bytes));
    return st;
}

static kb_status enable_peers(p2p *x, int a, int (*no_peer)[KB_P2P_MAX_GPUS])
{
    kb_status st = CU(x, x->api.CtxSetCurrent(x->ctx[a]));
    for (int b = 0; b < x->n && !st; b++) {
        int can = 0;
        if (b == a || (st = CU(x, x->api.DeviceCanAccessPeer(&can, x->dev[a], x->dev[b]))))
            continue;
        no_peer[a][b] = !can;
        CUresult r = can ? x->api.CtxEnablePeerAccess(x->ctx[b], 0) : CUDA_SUCCESS;
        if (r != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
            st = CU(x, r);
    }
    return st;
}

/* Every device's stream can wait on the gate: a wait already satisfied (the word is 0) queued on
 * each and synchronised. A device that refuses (CUDA_ERROR_NOT_SUPPORTED: no stream memory
 * operations on host memory) drops the gate for every pair, named in gate_why; so does any other
 * error of the probe (its call named). 1: the gate holds on every device. */
static int gate_probe(p2p *x, kb_p2p_matrix *out)
{
    for (int d = 0; d < x->n; d++) {
        kb_status st = CU(x, x->api.CtxSetCurrent(x->ctx[d]));
        CUresult r = CUDA_SUCCESS;
        if (!st)
            r = x->api.StreamWaitValue32(x->stream[d], x->gate_dev, 0, CU_STREAM_WAIT_VALUE_GEQ);
        if (r == CUDA_ERROR_NOT_SUPPORTED) {
            snprintf(out->gate_why, sizeof out->gate_why, "GPU %d: cuStreamWaitValue32 on host memory: "
                     "CUDA_ERROR_NOT_SUPPORTED", d);
            return 0;
        }
        if (!st)
            st = CU(x, r);
        if (!st)
            st = CU(x, x->api.StreamSynchronize(x->stream[d]));
        if (st) {
            snprintf(out->gate_why, sizeof out->gate_why, "GPU %d: %.140s", d, x->err);
            return 0;
        }
    }
    return 1;
}

/* The gate the bidirectional windows start at together (nvbandwidth holds both streams with a spin
 * kernel until both directions are queued; here each stream waits on host memory,
 * cuStreamWaitValue32): one 4-byte host-mapped word for every context (PORTABLE | DEVICEMAP),
 * probed on every device's stream first (gate_probe). Without it (an older driver, a device
 * without stream memory operations) the directions are queued one after the other, said in
 * out->gate_why. */
static void open_gate(p2p *x, kb_p2p_matrix *out)
{
    void *p = NULL;
    if (!x->api.StreamWaitValue32) {
        snprintf(out->gate_why, sizeof out->gate_why, "the driver lacks cuStreamWaitValue32_v2");
        return;
    }
    kb_status st = CU(x, x->api.CtxSetCurrent(x->ctx[0]));
    if (!st)
        st = CU(x, x->api.MemHostAlloc(&p, sizeof(unsigned), CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    if (!st)
        st = CU(x, x->api.MemHostGetDevicePointer(&x->gate_dev, p, 0));
    if (!st) {
        *(volatile unsigned *)p = 0;
        if (!gate_probe(x, out))
            st = KB_ERR_SETUP;
    } else {
        snprintf(out->gate_why, sizeof out->gate_why, "%.150s", x->err);
    }
    x->last = CUDA_SUCCESS;
    if (st) {
        if (p && x->api.CtxSetCurrent(x->ctx[0]) == CUDA_SUCCESS)
            x->api.MemFreeHost(p);
        return;
    }
    x->gate = p;
    out->bidir_gated = 1;
}

/* The seconds of reps copies of bytes a -> b queued on a's stream, started from the host at once
 * with (when b_too) the same b -> a on b's stream, both behind the gate when gated (the gate
 * opened, peer access both ways: gate_ok); *t_ba gets that one's. */
static kb_status timed(p2p *x, int a, int b, size_t bytes, int b_too, int gated, double *t_ab, double *t_ba)
{
    int who[2] = { a, b }, held = 0;
    kb_status st = KB_OK;
    x->gen++;
    gated = gated && b_too;
    for (int k = 0; k <= b_too && !st; k++) {
        int s = who[k], d = who[1 - k];
        st = CU(x, x->api.CtxSetCurrent(x->ctx[s]));
        if (!st)   /* one copy before the window: the path set up */
            st = CU(x, x->api.MemcpyPeerAsync(x->buf[d], x->ctx[d], x->buf[s], x->ctx[s], bytes, x->stream[s]));
        if (!st && gated && !(st = CU(x, x->api.StreamWaitValue32(x->stream[s], x->gate_dev, x->gen,
                                                                    CU_STREAM_WAIT_VALUE_GEQ))))
            held = 1;
        if (!st)
            st = CU(x, x->api.EventRecord(x->start[s], x->stream[s]));
        for (int i = 0; i < x->reps && !st; i++)
            st = CU(x, x->api.MemcpyPeerAsync(x->buf[d], x->ctx[d], x->buf[s], x->ctx[s], bytes, x->stream[s]));
        if (!st)
            st = CU(x, x->api.EventRecord(x->stop[s], x->stream[s]));
    }
    if (held)   /* always let the held streams go, a failed call too: nothing else would */
        __atomic_store_n(x->gate, x->gen, __ATOMIC_SEQ_CST);
    for (int k = 0; k <= b_too && !st; k++) {
        float ms = 0;
        int s = who[k];
        st = CU(x, x->api.EventSynchronize(x->stop[s]));
        if (!st)
            st = CU(x, x->api.EventElapsedTime(&ms, x->start[s], x->stop[s]));
        *(k ? t_ba : t_ab) = ms * 1e-3;
    }
    return st;
}

/* A pattern copied a -> b reads back equal: 1, 0, or -1 on an error (err). */
static int verified(p2p *x, int a, int b)
{
    unsigned char want[CHECK_BYTES], got[CHECK_BYTES];
    for (int i = 0; i < CHECK_BYTES; i++)
        want[i] = (unsigned char)(i * 31 + a * 7 + b * 13 + 1);
    memset(got, 0, sizeof got);
    kb_status st = CU(x, x->api.CtxSetCurrent(x->ctx[a]));
    if (!st)
        st = CU(x, x->api.MemcpyHtoD(x->buf[a], want, CHECK_BYTES));
    if (!st)
        st = CU(x, x->api.MemcpyPeerAsync(x->buf[b], x->ctx[b], x->buf[a], x->ctx[a], CHECK_BYTES, x->stream[a]));
    if (!st)
        st = CU(x, x->api.StreamSynchronize(x->stream[a]));
    if (!st)
        st = CU(x, x->api.CtxSetCurrent(x->ctx[b]));
    if (!st)
        st = CU(x, x->api.MemcpyDtoH(got, x->buf[b], CHECK_BYTES));
    return st ? -1 : !memcmp(want, got, CHECK_BYTES);
}

/* Mark (a, b) failed with the name of the driver's error r (its full report is in x->err). */
static void pair_failed(p2p *x, int a, int b, CUresult r, kb_p2p_matrix *out)
{
    const char *name = NULL;
    if (!x->api.GetErrorName || x->api.GetErrorName(r, &name) != CUDA_SUCCESS || !name)
        name = NULL;
    if (name)
        snprintf(out->failed[a][b], sizeof out->failed[a][b], "%s", name);
    else
        snprintf(out->failed[a][b], sizeof out->failed[a][b], "CUresult %d", (int)r);
    if (!out->n_failed++)
        snprintf(out->fail_why, sizeof out->fail_why, "GPU %d -> GPU %d: %.200s", a, b, x->err);
    out->uni[a][b] = out->bidir[a][b] = out->lat_us[a][b] = 0;
    for (int k = 0; k < 2; k++)   /* drain what the pair queued before it failed (errors aside) */
        if (x->api.CtxSetCurrent(x->ctx[k ? b : a]) == CUDA_SUCCESS)
            x->api.StreamSynchronize(x->stream[k ? b : a]);
}

/* The pair's bidirectional windows may be held at the gate: it opened, and peer access runs both
 * ways. Without peer access b -> a, cuMemcpyPeerAsync stages that copy through the host and may
 * block the host while a's stream is held on the word, which only the host releases (a hang);
 * such a pair's directions are queued one after the other (out->one_way[a][b]). */
static int gate_ok(const kb_p2p_matrix *out, int a, int b)
{
    return out->bidir_gated && !out->no_peer[a][b] && !out->no_peer[b][a];
}

/* Measure (a, b) into out; a failing call fails the cell, not the matrix. */
static void measure_pair(p2p *x, int a, int b, kb_p2p_matrix *out)
{
    double t1 = 0, t2 = 0, tl = 0, unused = 0, uni_t = 0;
    x->last = CUDA_SUCCESS;
    out->one_way[a][b] = out->no_peer[b][a];
    int ok = verified(x, a, b);
    kb_status st = ok < 0 ? KB_ERR_SETUP : KB_OK;
    if (!ok && out->wrong_a < 0) {
        out->wrong_a = a;
        out->wrong_b = b;
    }
    if (!st)
        st = timed(x, a, b, x->bytes, 0, 0, &uni_t, &unused);
    if (!st)
        st = timed(x, a, b, x->bytes, 1, gate_ok(out, a, b), &t1, &t2);   /* both ways at once */
    if (!st)
        st = timed(x, a, b, 4, 0, 0, &tl, &unused);
    if (st) {
        pair_failed(x, a, b, x->last, out);
        return;
    }
    double moved = (double)x->bytes * x->reps;
    out->uni[a][b] = uni_t > 0 ? moved / uni_t / 1e9 : 0;
    out->bidir[a][b] = t1 > 0 && t2 > 0 ? moved / t1 / 1e9 + moved / t2 / 1e9 : 0;
    out->lat_us[a][b] = tl / x->reps * 1e6;
}

static kb_status run(p2p *x, kb_p2p_matrix *out)
{
    kb_status st = KB_OK;
    for (int d = 0; d < x->n && !st; d++)
        st = open_device(x, d, out->bus_id[d]);
    for (int a = 0; a < x->n && !st; a++)
        st = enable_peers(x, a, out->no_peer);
    if (!st && x->n > 1)
        open_gate(x, out);
    for (int a = 0; a < x->n && !st; a++)
        for (int b = 0; b < x->n; b++)
            if (a != b && !out->no_peer[a][b])
                measure_pair(x, a, b, out);
    return st;
}

static void close_all(p2p *x)
{
    if (x->gate && x->api.CtxSetCurrent(x->ctx[0]) == CUDA_SUCCESS)   /* before its context may go */
        x->api.MemFreeHost((void *)x->gate);
    for (int d = 0; d < x->n; d++) {
        if (!x->ctx[d] || x->api.CtxSetCurrent(x->ctx[d]) != CUDA_SUCCESS)
            continue;
        if (x->buf[d])
            x->api.MemFree(x->buf[d]);
        if (x->start[d])
            x->api.EventDestroy(x->start[d]);
        if (x->stop[d])
            x->api.EventDestroy(x->stop[d]);
        if (x->stream[d])
            x->api.StreamDestroy(x->stream[d]);
        if (x->got[d])
            x->api.DevicePrimaryCtxRelease(x->dev[d]);
    }
    x->api.CtxSetCurrent(NULL);
}

/* The driver loaded, with the peer entry points, initialised, its devices counted (at most
 * KB_P2P_MAX_GPUS) into x->n. KB_OK, or KB_ERR_SETUP with x->err. */
static kb_status start(p2p *x, int need_peer)
{
    if (kb_cuda_api_load(&x->api, x->err, x->err_n))
        return KB_ERR_SETUP;
    if (need_peer && (!x->api.DeviceCanAccessPeer || !x->api.CtxEnablePeerAccess || !x->api.MemcpyPeerAsync)) {
        snprintf(x->err, x->err_n, "the driver lacks cuDeviceCanAccessPeer/cuCtxEnablePeerAccess/cuMemcpyPeerAsync");
        kb_cuda_api_unload(&x->api);
        return KB_ERR_SETUP;
    }
    kb_status st = CU(x, x->api.Init(0));
    if (!st)
        st = CU(x, x->api.DeviceGetCount(&x->n));
    if (!st && x->n > KB_P2P_MAX_GPUS)
        x->n = KB_P2P_MAX_GPUS;
    if (st)
        kb_cuda_api_unload(&x->api);
    return st ? KB_ERR_SETUP : KB_OK;
}

kb_status kb_cuda_devices_read(kb_cuda_devices *out)
{
    p2p x;
    memset(&x, 0, sizeof x);
    memset(out, 0, sizeof *out);
    x.err = out->why;
    x.err_n = sizeof out->why;
    if (start(&x, 0))
        return KB_ERR_SETUP;
    kb_status st = KB_OK;
    for (int d = 0; d < x.n && !st; d++) {
        CUdevice dev;
        st = CU(&x, x.api.DeviceGet(&dev, d));
        if (!st)
            st = CU(&x, x.api.DeviceGetPCIBusId(out->bus_id[d], KB_P2P_BUS_ID_LEN, dev));
    }
    kb_cuda_api_unload(&x.api);
    out->n = st ? 0 : x.n;
    return st ? KB_ERR_SETUP : KB_OK;
}

kb_status kb_cuda_p2p_measure(size_t bytes, int reps, kb_p2p_matrix *out)
{
    static p2p x;   /* large: matrices of handles; one measurement at a time */
    memset(&x, 0, sizeof x);
    memset(out, 0, sizeof *out);
    out->wrong_a = out->wrong_b = -1;
    x.bytes = bytes < CHECK_BYTES ? CHECK_BYTES : bytes;
    x.reps = reps < 1 ? 1 : reps;
    x.err = out->why;
    x.err_n = sizeof out->why;
    if (start(&x, 1))
        return KB_ERR_SETUP;
    kb_status st = run(&x, out);
    close_all(&x);
    kb_cuda_api_unload(&x.api);
    out->n = st ? 0 : x.n;
    if (!st)
        out->why[0] = 0;   /* a failed pair's report is in fail_why */
    return st ? KB_ERR_SETUP : KB_OK;
}
