/* fake_libcuda.c - the driver double's API: init, device, context, streams, events and
 * memory (contract, clock and settings: fake_cuda.h; modules, launches, graphs:
 * fake_launch.c).
 *
 * The functions are defined under their cuda.h names, so cuda.h's macros give them the
 * versioned export names (cuMemAlloc -> cuMemAlloc_v2, ...) that kbench's loader asks for.
 * Device memory is host memory. Single-process, single-device; not thread-safe beyond what
 * kbench does (one thread drives the device).
 */
#include "fake_state.h"

#include <stdlib.h>
#include <string.h>

/* ---- init, device, context ---- */

CUresult cuInit(unsigned int flags)
{
    ENTER();
    if (flags)
        return CUDA_ERROR_INVALID_VALUE;
    initialised = 1;
    return CUDA_SUCCESS;
}

CUresult cuDriverGetVersion(int *v)
{
    if (!v)
        return CUDA_ERROR_INVALID_VALUE;
    *v = driver();
    return CUDA_SUCCESS;
}

static const struct { CUresult r; const char *name, *msg; } errors[] = {
    { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
    { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
    { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
    { CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
    { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
    { CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device" },
    { CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain." },
    { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
    { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
    { CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
    { CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered" },
    { CUDA_ERROR_MISALIGNED_ADDRESS, "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address" },
    { CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing" },
    { CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture" },
    { CUDA_ERROR_INVALID_CLUSTER_SIZE, "CUDA_ERROR_INVALID_CLUSTER_SIZE", "a kernel launch error due to cluster misconfiguration" },
    { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
    { CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

CUresult cuGetErrorName(CUresult r, const char **s)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].r == r) {
            *s = errors[i].name;
            return CUDA_SUCCESS;
        }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
    for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
        if (errors[i].r == r) {
            *s = errors[i].msg;
            return CUDA_SUCCESS;
        }
    *s = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuDeviceGetCount(int *n) { NEED_INIT(); *n = fake_devices(); return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int i)
{
    NEED_INIT();
    if (i < 0 || i >= fake_devices())
        return CUDA_ERROR_INVALID_DEVICE;
    *d = i;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    NEED_INIT();
    if (d != 0 || len <= 0)
        return d ? CUDA_ERROR_INVALID_DEVICE : CUDA_ERROR_INVALID_VALUE;
    const char *e = getenv("KBENCH_FAKE_CUDA_NAME");
    strncpy(name, e && *e ? e : "Fake GPU", (size_t)len);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    NEED_INIT();
    if (d != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (a) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = arch() / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = arch() % 10; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = sm_count(); break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1000000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 1000000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 256; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 1 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = OPTIN_SMEM; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = 1024; break;
    case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: *v = 1; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *b, CUdevice d) { NEED_INIT(); (void)d; *b = (size_t)1 << 30; return CUDA_SUCCESS; }
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d) { NEED_INIT(); (void)d; memset(u, 0x11, sizeof *u); return CUDA_SUCCESS; }
/* Device d's id: the d-th of KBENCH_FAKE_CUDA_BUS_IDS (fake_peer.c), else 0000:(0x10 + 8 d):00.0,
 * the NVML double's GPU d (CUDA's form: a 4-digit domain, lower-case hex, 13 bytes with the NUL). */
CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
    NEED_INIT();
    if (!id || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (d < 0 || d >= fake_devices())
        return CUDA_ERROR_INVALID_DEVICE;
    fake_bus_id(d, id, (size_t)len);
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    NEED_INIT();
    if (d > 0 && d < fake_devices()) {   /* another device of the node (fake_peer.c) */
        *c = fake_ctx_of(d);
        return CUDA_SUCCESS;
    }
    if (d != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (primary_refs++ == 0)
        host_ns += FAKE_CTX_CREATE_NS;   /* the context is created (again) */
    *c = (CUcontext)&primary_ctx_obj;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice d)
{
    NEED_INIT();
    if (d > 0 && d < fake_devices())
        return CUDA_SUCCESS;
    if (d != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    if (primary_refs > 0)
        primary_refs--;
    return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(CUcontext c)
{
    NEED_INIT();
    if (c && fake_device_of(c) < 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    current = c;
    return CUDA_SUCCESS;
}


/* ---- streams and events ---- */

CUresult cuStreamCreate(CUstream *out, unsigned int f)
{
    NEED_CTX();
    if (f & ~(unsigned)CU_STREAM_NON_BLOCKING)
        return CUDA_ERROR_INVALID_VALUE;
    fstream *s = n_streams < 64 ? obj_new(K_STREAM, sizeof *s) : NULL;
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->non_blocking = (f & CU_STREAM_NON_BLOCKING) != 0;
    streams[n_streams++] = s;
    *out = (CUstream)s;
    return CUDA_SUCCESS;
}

CUresult cuStreamDestroy(CUstream h)
{
    NEED_INIT();
    fstream *s = obj_ok(h, K_STREAM) ? (fstream *)h : NULL;
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < n_streams; i++)
        if (streams[i] == s)
            streams[i] = streams[--n_streams];
    obj_free(s);
    return CUDA_SUCCESS;
}

CUresult cuStreamSynchronize(CUstream h)
{
    NEED_CTX();
    fstream *s = stream_of(h);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = capture_forbids();
    if (r)
        return r;
    wait_stream(s);
    return sync_point();
}

CUresult cuEventCreate(CUevent *e, unsigned int f)
{
    NEED_CTX();
    (void)f;
    fevent *ev = obj_new(K_EVENT, sizeof *ev);
    if (!ev)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *e = (CUevent)ev;
    return CUDA_SUCCESS;
}

CUresult cuEventRecord(CUevent e, CUstream h)
{
    NEED_CTX();
    fstream *s = stream_of(h);
    if (!obj_ok(e, K_EVENT) || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (fails("cuEventRecord"))
        return CUDA_ERROR_UNKNOWN;
    if (s->capturing)
        return CUDA_SUCCESS;   /* a node of the graph: the event is not stamped now */
    fevent *ev = (fevent *)e;
    ev->recorded = 1;
    ev->s = s;
    enqueue(s, 0, ev);
    return CUDA_SUCCESS;
}

CUresult cuEventSynchronize(CUevent e)
{
    NEED_CTX();
    if (!obj_ok(e, K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = capture_forbids();
    if (r)
        return r;
    fevent *ev = (fevent *)e;
    if (ev->recorded) {
        if (!ev->known)
            wait_stream(ev->s);
        if (ev->stamp > host_ns)
            host_ns = ev->stamp;
    }
    return sync_point();
}

CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b)
{
    NEED_CTX();
    if (!obj_ok(a, K_EVENT) || !obj_ok(b, K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    fevent *x = (fevent *)a, *y = (fevent *)b;
    if (!x->recorded || !y->recorded)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!x->known || !y->known || x->stamp > host_ns || y->stamp > host_ns)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)((y->stamp - x->stamp) / 1e6);
    return CUDA_SUCCESS;
}

CUresult cuEventDestroy(CUevent e)
{
    NEED_INIT();
    if (!obj_ok(e, K_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    obj_free(e);
    return CUDA_SUCCESS;
}

/* ---- memory ---- */

CUresult cuMemAlloc(CUdeviceptr *p, size_t n)
{
    NEED_CTX();
    CUresult r = capture_forbids();
    if (r)
        return r;
    if (n == 0)
        return CUDA_ERROR_INVALID_VALUE;
    void *m = malloc(n);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if ((r = alloc_add(m, n)) != CUDA_SUCCESS) {
        free(m);
        return r;
    }
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

static CUresult mem_free(uintptr_t p)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (alloc_base[i] == p) {
            alloc_base[i] = 0;
            free((void *)p);
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_INVALID_VALUE;
}

CUresult cuMemFree(CUdeviceptr p)
{
    ENTER();
    if (!initialised)
        return CUDA_ERROR_NOT_INITIALIZED;
    CUresult r = capture_forbids();
    if (r)
        return r;
    r = mem_free((uintptr_t)p);
    return r ? r : sticky;
}

/* Pinned host memory (a blocking kernel's flag): flags are PORTABLE | DEVICEMAP |
 * WRITECOMBINED, nothing else; the device address (the same address here) exists only for
 * a DEVICEMAP allocation. */
CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
    NEED_CTX();
    if (flags & ~(unsigned)(CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = capture_forbids();
    if (r)
        return r;
    void *m = calloc(1, n ? n : 1);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    if ((r = alloc_add(m, n)) != CUDA_SUCCESS) {
        free(m);
        return r;
    }
    alloc_host_flags[alloc_find((uintptr_t)m)] = flags | FAKE_HOST_ALLOC;
    *p = m;
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags)
{
    NEED_CTX();
    int i = alloc_find((uintptr_t)p);
    if (flags || i < 0 || !(alloc_host_flags[i] & CU_MEMHOSTALLOC_DEVICEMAP))
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)p;
    return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *p)
{
    NEED_INIT();
    return mem_free((uintptr_t)p);
}

CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n)
{
    NEED_CTX();
    CUresult r = capture_forbids();
    if (r)
        return r;
    if (!range_ok((uintptr_t)d, n))
        return CUDA_ERROR_INVALID_VALUE;
    /* synchronous, on the legacy stream, which waits for every blocking stream */
    wait_legacy();
    memcpy((void *)(uintptr_t)d, s, n);
    upload_unordered = 1;   /* pageable: the DMA may land after return (see fake_cuda.h) */
    host_ns += gpu((double)n / 1000.0);
    return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n)
{
    NEED_CTX();
    CUresult r = capture_forbids();
    if (r)
        return r;
    if (!range_ok((uintptr_t)s, n))
        return CUDA_ERROR_INVALID_VALUE;
    /* synchronous, on the legacy stream, which waits for every blocking stream */
    wait_legacy();
    upload_unordered = 0;   /* a later legacy-stream operation: the upload has landed */
    if ((r = sync_point()) != CUDA_SUCCESS)
        return r;
    memcpy(d, (const void *)(uintptr_t)s, n);
    host_ns += gpu((double)n / 1000.0);
    return CUDA_SUCCESS;
}

CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char b, size_t n, CUstream h)
{
    NEED_CTX();
    fstream *s = stream_of(h);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!range_ok((uintptr_t)d, n))
        return CUDA_ERROR_INVALID_VALUE;
    if (s->capturing) {
        s->cap_ns += gpu((double)n / 1000.0);
        return CUDA_SUCCESS;
    }
    memset((void *)(uintptr_t)d, b, n);
    enqueue(s, gpu((double)n / 1000.0), NULL);
    return CUDA_SUCCESS;
}
