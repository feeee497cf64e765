/* fake_peer.c - the driver double's node of GPUs, for the P2P copy matrix of `kbench accept
 * --system` (backend/cuda/cuda_p2p.h):
 *   KBENCH_FAKE_CUDA_DEVICES   devices counted (default 1; at most FAKE_MAX_DEVICES). Device 0's
 *                              primary context is the double's one; the others' are handles
 *                              of their own sharing its memory (a unified address space)
 *   KBENCH_FAKE_CUDA_P2P_GBS   a copy between two devices [GB/s] (default 390)
 *   KBENCH_FAKE_CUDA_P2P_HALF  "a-b,...": those pairs copy at half that, both ways
 *   KBENCH_FAKE_CUDA_NO_PEER   "a-b,...": cuDeviceCanAccessPeer says 0 for those pairs, both ways
 *   KBENCH_FAKE_CUDA_NO_PEER_FROM "a-b,...": cuDeviceCanAccessPeer(a, b) says 0, (b, a) still 1
 *                              (peer access one way only)
 *   KBENCH_FAKE_CUDA_P2P_FAIL  "a-b,...": cuMemcpyPeerAsync between those devices, either way, fails
 *                              with CUDA_ERROR_UNKNOWN (a link that errors: the copy is not queued)
 *   KBENCH_FAKE_CUDA_BUS_IDS   "id,...": cuDeviceGetPCIBusId of device 0, 1, ... (CUDA's order; e.g.
 *                              the NVML double's GPUs in another order, as CUDA_DEVICE_ORDER=
 *                              FASTEST_FIRST or a reordered CUDA_VISIBLE_DEVICES give); default
 *                              "0000:%02x:00.0" of 0x10 + 8 d, the NVML double's GPU d
 * Pairs are named by CUDA ordinal. cuStreamWaitValue32 (CU_STREAM_WAIT_VALUE_GEQ only, on a DEVICEMAP
 * host allocation) holds the stream as the blocking kernel does until the word reaches the value
 * (gives up after FAKE_WAIT_VALUE_NS of virtual time, where a GPU would hang);
 * KBENCH_FAKE_CUDA_NO_MEMOPS=1 makes it CUDA_ERROR_NOT_SUPPORTED (no stream memory operations) on
 * every device, KBENCH_FAKE_CUDA_NO_MEMOPS_ON="d,..." on those devices (the current context's).
 * Peer access (cuDeviceCanAccessPeer, cuCtxEnablePeerAccess) is allowed between every two
 * devices but the pairs listed; enabling it twice is CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, with
 * itself or with flags CUDA_ERROR_INVALID_VALUE. cuMemcpyPeerAsync checks both contexts, both
 * ranges and that the current context enabled access to the other side where it could, moves the
 * first FAKE_PEER_MOVED bytes (a longer copy is timed whole: the double's memory is the host's) and
 * queues n / GB/s. Where the current device cannot access the other one, the copy is staged
 * through the host as the driver does: the host waits for it; if a stream is then held on a word
 * only the host can set, a GPU would hang: the double waits out the hold (FAKE_WAIT_VALUE_NS),
 * says so on stderr and returns CUDA_ERROR_LAUNCH_TIMEOUT. */
#include "fake_state.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_MAX_DEVICES 16
#define FAKE_PEER_MOVED (1u << 20)
#define FAKE_WAIT_VALUE_NS 1e10

static char peer_ctx_obj[FAKE_MAX_DEVICES];
static unsigned char enabled[FAKE_MAX_DEVICES][FAKE_MAX_DEVICES];   /* [from][to] */

int fake_devices(void)
{
    const char *s = getenv("KBENCH_FAKE_CUDA_DEVICES");
    int n = s && *s ? atoi(s) : 1;
    return n < 1 ? 1 : n > FAKE_MAX_DEVICES ? FAKE_MAX_DEVICES : n;
}

CUcontext fake_ctx_of(int d) { return d == 0 ? (CUcontext)&primary_ctx_obj : (CUcontext)&peer_ctx_obj[d]; }

int fake_device_of(CUcontext c)
{
    if (c == (CUcontext)&primary_ctx_obj)
        return 0;
    for (int d = 1; d < fake_devices(); d++)
        if (c == (CUcontext)&peer_ctx_obj[d])
            return d;
    return -1;
}

/* a-b listed in env ("1-3,0-2"), either way round */
static int pair_listed(const char *env, int a, int b)
{
    const char *s = getenv(env);
    while (s && *s) {
        int x, y;
        if (sscanf(s, "%d-%d", &x, &y) == 2 && ((x == a && y == b) || (x == b && y == a)))
            return 1;
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    return 0;
}

/* a-b listed in env, in that order */
static int ordered_listed(const char *env, int a, int b)
{
    const char *s = getenv(env);
    while (s && *s) {
        int x, y;
        if (sscanf(s, "%d-%d", &x, &y) == 2 && x == a && y == b)
            return 1;
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    return 0;
}

/* device d is listed in env ("0,3") */
static int device_listed(const char *env, int d)
{
    const char *s = getenv(env);
    while (s && *s) {
        if (atoi(s) == d)
            return 1;
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    return 0;
}

/* dev can reach peer's memory directly */
static int can_peer(int dev, int peer)
{
    return dev != peer && !pair_listed("KBENCH_FAKE_CUDA_NO_PEER", dev, peer) &&
           !ordered_listed("KBENCH_FAKE_CUDA_NO_PEER_FROM", dev, peer);
}

/* A copy staged through the host: the host waits for it, and cannot while a stream is held on a
 * word only it sets (a hang on a GPU: here the holds are waited out and the copy refused). */
static CUresult staged(void)
{
    int held = 0;
    for (int i = 0; i < n_streams; i++)
        if (streams[i]->blocked && still_held(streams[i])) {
            held = 1;
            wait_stream(streams[i]);
        }
    if (held) {
        fprintf(stderr, "fake cuda: a peer copy staged through the host while a stream waits on host memory: "
                "a GPU would hang here\n");
        return CUDA_ERROR_LAUNCH_TIMEOUT;
    }
    return CUDA_SUCCESS;
}

static int half_pair(int a, int b) { return pair_listed("KBENCH_FAKE_CUDA_P2P_HALF", a, b); }

void fake_bus_id(int d, char *out, size_t n)
{
    const char *s = getenv("KBENCH_FAKE_CUDA_BUS_IDS");
    for (int i = 0; s && *s && i < d; i++)
        s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL;
    if (s && *s)
        snprintf(out, n, "%.*s", (int)strcspn(s, ","), s);
    else
        snprintf(out, n, "0000:%02x:00.0", 0x10u + 8u * (unsigned)d);
}

CUresult cuDeviceCanAccessPeer(int *can, CUdevice dev, CUdevice peer)
{
    NEED_INIT();
    int n = fake_devices();
    if (!can || dev < 0 || dev >= n || peer < 0 || peer >= n)
        return !can ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_INVALID_DEVICE;
    *can = can_peer(dev, peer);
    return CUDA_SUCCESS;
}

CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags)
{
    NEED_CTX();
    int from = fake_device_of(current), to = fake_device_of(peer);
    if (to < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (flags || from == to)
        return CUDA_ERROR_INVALID_VALUE;
    if (enabled[from][to])
        return CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED;
    enabled[from][to] = 1;
    return CUDA_SUCCESS;
}

CUresult cuMemcpyPeerAsync(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx, size_t n,
                           CUstream h)
{
    NEED_CTX();
    int d = fake_device_of(dst_ctx), s = fake_device_of(src_ctx), me = fake_device_of(current);
    fstream *st = stream_of(h);
    if (d < 0 || s < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (!st)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!range_ok((uintptr_t)dst, n) || !range_ok((uintptr_t)src, n))
        return CUDA_ERROR_INVALID_VALUE;
    int other = me == s ? d : s, stage = d != s && !can_peer(me, other);
    if (d != s && !stage && !enabled[me][other])
        return CUDA_ERROR_PEER_ACCESS_NOT_ENABLED;   /* the double insists: kbench measures direct copies */
    CUresult r = stage ? staged() : CUDA_SUCCESS;
    if (r != CUDA_SUCCESS)
        return r;
    if (d != s && pair_listed("KBENCH_FAKE_CUDA_P2P_FAIL", s, d))
        return CUDA_ERROR_UNKNOWN;
    const char *g = getenv("KBENCH_FAKE_CUDA_P2P_GBS");
    double gbs = g && *g ? atof(g) : 390.0;
    if (half_pair(s, d))
        gbs /= 2;
    if (!st->non_blocking)
        upload_unordered = 0;
    if (!upload_unordered)   /* else the copy reads memory the pageable upload has not reached */
        memmove((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n < FAKE_PEER_MOVED ? n : FAKE_PEER_MOVED);
    if (st->capturing) {
        st->cap_ns += gpu((double)n / gbs);
        return CUDA_SUCCESS;
    }
    enqueue(st, gpu((double)n / gbs), NULL);
    if (stage)   /* through the host: it waits */
        wait_stream(st);
    return CUDA_SUCCESS;
}

CUresult cuStreamWaitValue32(CUstream h, CUdeviceptr addr, cuuint32_t value, unsigned int flags)
{
    static int gave_up;
    NEED_CTX();
    fstream *st = stream_of(h);
    const char *no = getenv("KBENCH_FAKE_CUDA_NO_MEMOPS");
    if (!st)
        return CUDA_ERROR_INVALID_HANDLE;
    if ((no && *no == '1') || device_listed("KBENCH_FAKE_CUDA_NO_MEMOPS_ON", fake_device_of(current)) ||
        flags != CU_STREAM_WAIT_VALUE_GEQ)
        return CUDA_ERROR_NOT_SUPPORTED;
    int i = alloc_find((uintptr_t)addr);
    if (i < 0 || !(alloc_host_flags[i] & CU_MEMHOSTALLOC_DEVICEMAP) || !range_ok((uintptr_t)addr, 4) || st->blocked ||
        st->capturing)
        return CUDA_ERROR_INVALID_VALUE;
    st->blocked = 1;
    st->block_start = st->tail > host_ns ? st->tail : host_ns;
    st->flag = (volatile int *)(uintptr_t)addr;
    st->wait_value_mode = 1;
    st->wait_value = value;
    st->timed_out = &gave_up;
    st->timeout_ns = FAKE_WAIT_VALUE_NS;
    st->n_pending = 0;
    return CUDA_SUCCESS;
}
