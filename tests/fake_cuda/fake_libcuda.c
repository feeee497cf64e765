/* fake_libcuda.c - the driver double's API (contract, clock and settings: fake_cuda.h).
 *
 * The functions are defined under their cuda.h names, so cuda.h's macros give them the
 * versioned export names (cuMemAlloc -> cuMemAlloc_v2, ...) that kbench's loader asks for.
 * Device memory is host memory. Single-process, single-device; not thread-safe beyond what
 * kbench does (one thread drives the device).
 */
#include <cuda.h>

#include "fake_cubin.h"
#include "fake_cuda.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- settings ---- */

static double env_num(const char *name, double def)
{
    const char *e = getenv(name);
    return e && *e ? atof(e) : def;
}

static int arch(void) { return (int)env_num("KBENCH_FAKE_CUDA_ARCH", 90); }
static int driver(void) { return (int)env_num("KBENCH_FAKE_CUDA_DRIVER", 13000); }
static double slowdown(void) { return env_num("KBENCH_FAKE_CUDA_SLOWDOWN", 1.0); }
static double kernel_ns(void) { return env_num("KBENCH_FAKE_CUDA_KERNEL_NS", 10000.0); }
static long fault_at(void)
{
    long n = (long)env_num("KBENCH_FAKE_CUDA_FAULT", 0);
    return n ? n : (long)env_num("FAKE_CUDA_FAULT", 0);
}
#define OPTIN_SMEM 232448

/* ---- handles: every object the double made, by kind ---- */

enum { K_CTX = 1, K_STREAM, K_EVENT, K_MODULE, K_FUNC, K_GRAPH, K_EXEC };
#define MAX_OBJS 4096
static void *objs[MAX_OBJS];
static int kinds[MAX_OBJS];

static void *obj_new(int kind, size_t bytes)
{
    for (int i = 0; i < MAX_OBJS; i++)
        if (!objs[i]) {
            if (!(objs[i] = calloc(1, bytes)))
                return NULL;
            kinds[i] = kind;
            return objs[i];
        }
    return NULL;
}

static int obj_ok(const void *p, int kind)
{
    for (int i = 0; p && i < MAX_OBJS; i++)
        if (objs[i] == p)
            return kinds[i] == kind;
    return 0;
}

static void obj_free(void *p)
{
    for (int i = 0; p && i < MAX_OBJS; i++)
        if (objs[i] == p) {
            objs[i] = NULL;
            free(p);
        }
}

typedef struct fevent fevent;
typedef struct { double dur; fevent *ev; } op;        /* work (dur) or an event record */
typedef struct {
    double tail;            /* when the stream's queued work ends */
    int blocked;            /* held by the blocking kernel */
    double block_start;
    volatile int *flag;
    int *timed_out;
    double timeout_ns;
    op pending[8192];       /* queued behind the blocking kernel */
    int n_pending;
    int capturing, invalidated;
    double cap_ns;          /* captured GPU time */
} fstream;
struct fevent { int recorded, known; double stamp; fstream *s; };
typedef struct { fake_image img; } fmodule;
typedef struct { fmodule *mod; const fake_entry *e; int max_dyn; } ffunc;
typedef struct { double gpu_ns; } fgraph;
typedef struct { double gpu_ns; int uploaded; } fexec;

static int initialised;
static char primary_ctx_obj;            /* the primary context's handle */
static __thread CUcontext current;      /* the calling thread's current context */
static fstream legacy;                  /* the NULL stream */
static double host_ns = 1e9;            /* the virtual host clock */
static CUresult sticky;                 /* a sticky fault */
static long launches;                   /* launches so far (fault injection) */
static int fault_pending;
static fstream *streams[64];
static int n_streams;

/* ---- device memory: allocations, for validation ---- */

#define MAX_ALLOCS 65536
static uintptr_t alloc_base[MAX_ALLOCS];
static size_t alloc_size[MAX_ALLOCS];

static int alloc_find(uintptr_t p)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (alloc_base[i] && p >= alloc_base[i] && p < alloc_base[i] + alloc_size[i] + (alloc_size[i] == 0))
            return i;
    return -1;
}

static int range_ok(uintptr_t p, size_t n)
{
    int i = alloc_find(p);
    return i >= 0 && p + n <= alloc_base[i] + alloc_size[i];
}

static CUresult alloc_add(void *m, size_t n)
{
    for (int i = 0; i < MAX_ALLOCS; i++)
        if (!alloc_base[i]) {
            alloc_base[i] = (uintptr_t)m;
            alloc_size[i] = n;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_OUT_OF_MEMORY;
}

/* ---- the virtual clock ---- */

static double gpu(double ns) { return ns * slowdown(); }

static void release(fstream *s, double t)
{
    s->blocked = 0;
    s->tail = t;
    for (int i = 0; i < s->n_pending; i++) {
        if (s->pending[i].ev) {
            s->pending[i].ev->stamp = s->tail;
            s->pending[i].ev->known = 1;
        } else {
            s->tail += s->pending[i].dur;
        }
    }
    s->n_pending = 0;
}

/* The blocking kernel sees the host's flag, or times out. */
static void poll_stream(fstream *s)
{
    if (!s->blocked)
        return;
    if (*s->flag)
        release(s, host_ns > s->block_start ? host_ns : s->block_start);
    else if (host_ns - s->block_start >= s->timeout_ns) {
        *s->timed_out = 1;
        release(s, s->block_start + s->timeout_ns);
    }
}

static void poll_all(void)
{
    poll_stream(&legacy);
    for (int i = 0; i < n_streams; i++)
        poll_stream(streams[i]);
}

/* Queue work of dur ns, or an event record (ev), on s. */
static void enqueue(fstream *s, double dur, fevent *ev)
{
    if (s->blocked) {
        if (s->n_pending < (int)(sizeof s->pending / sizeof s->pending[0]))
            s->pending[s->n_pending++] = (op){ dur, ev };
        if (ev)
            ev->known = 0;
        return;
    }
    double start = s->tail > host_ns ? s->tail : host_ns;
    if (ev) {
        ev->stamp = start;
        ev->known = 1;
        return;
    }
    s->tail = start + dur;
}

/* The host waits for everything queued on s (a blocked stream: until the timeout). */
static void wait_stream(fstream *s)
{
    if (s->blocked && !*s->flag && host_ns < s->block_start + s->timeout_ns)
        host_ns = s->block_start + s->timeout_ns;
    poll_stream(s);
    if (s->tail > host_ns)
        host_ns = s->tail;
}

/* Every entry point: the host's time passes, the blocking kernel looks at its flag. */
#define ENTER() do { host_ns += FAKE_CALL_NS; poll_all(); } while (0)
#define NEED_INIT() do { ENTER(); if (!initialised) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
#define NEED_CTX() do { NEED_INIT(); if (!current) return CUDA_ERROR_INVALID_CONTEXT; \
                        if (sticky) return sticky; } while (0)

static int any_capturing(void)
{
    for (int i = 0; i < n_streams; i++)
        if (streams[i]->capturing)
            return 1;
    return legacy.capturing;
}

/* A call that may not run while a stream captures (THREAD_LOCAL/GLOBAL modes). */
static CUresult capture_forbids(void)
{
    if (!any_capturing())
        return CUDA_SUCCESS;
    for (int i = 0; i < n_streams; i++)
        if (streams[i]->capturing)
            streams[i]->invalidated = 1;
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
}

static CUresult sync_point(void)
{
    if (sticky)
        return sticky;
    if (fault_pending)
        return sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
    return CUDA_SUCCESS;
}

static fstream *stream_of(CUstream h)
{
    if (!h)
        return &legacy;
    return obj_ok(h, K_STREAM) ? (fstream *)h : NULL;
}

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
    { CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing" },
    { CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture" },
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

CUresult cuDeviceGetCount(int *n) { NEED_INIT(); *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int i)
{
    NEED_INIT();
    if (i != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *d = 0;
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
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 4; break;
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
CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
    NEED_INIT();
    (void)d;
    strncpy(id, "00000000:00:00.0", (size_t)len);
    id[len - 1] = 0;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    NEED_INIT();
    if (d != 0)
        return CUDA_ERROR_INVALID_DEVICE;
    *c = (CUcontext)&primary_ctx_obj;
    return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRelease(CUdevice d) { NEED_INIT(); (void)d; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c)
{
    NEED_INIT();
    if (c && c != (CUcontext)&primary_ctx_obj)
        return CUDA_ERROR_INVALID_CONTEXT;
    current = c;
    return CUDA_SUCCESS;
}


/* ---- streams and events ---- */

CUresult cuStreamCreate(CUstream *out, unsigned int f)
{
    NEED_CTX();
    (void)f;
    fstream *s = n_streams < 64 ? obj_new(K_STREAM, sizeof *s) : NULL;
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
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

/* Host memory the device can address (a blocking kernel's flag): the same address here. */
CUresult cuMemHostAlloc(void **p, size_t n, unsigned int flags)
{
    NEED_CTX();
    (void)flags;
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
    *p = m;
    return CUDA_SUCCESS;
}

CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags)
{
    NEED_CTX();
    if (flags || !range_ok((uintptr_t)p, 1))
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
    wait_stream(&legacy);
    memcpy((void *)(uintptr_t)d, s, n);
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
    /* synchronous, on the legacy stream, which a blocking stream synchronises with */
    for (int i = 0; i < n_streams; i++)
        wait_stream(streams[i]);
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

/* ---- modules and functions ---- */

CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
    NEED_CTX();
    fmodule *mod = obj_new(K_MODULE, sizeof *mod);
    if (!mod)
        return CUDA_ERROR_OUT_OF_MEMORY;
    CUresult r = CUDA_SUCCESS;
    int dev = arch();
    if (fake_cubin_parse(image, &mod->img) != 0)
        r = CUDA_ERROR_INVALID_IMAGE;
    else if (mod->img.toolkit_major * 1000 > driver())
        r = CUDA_ERROR_UNSUPPORTED_PTX_VERSION;
    else if (mod->img.sm / 10 != dev / 10 || mod->img.sm % 10 > dev % 10)
        r = CUDA_ERROR_NO_BINARY_FOR_GPU;
    if (r) {
        obj_free(mod);
        return r;
    }
    *m = (CUmodule)mod;
    return CUDA_SUCCESS;
}

CUresult cuModuleUnload(CUmodule m)
{
    NEED_INIT();
    if (!obj_ok(m, K_MODULE))
        return CUDA_ERROR_INVALID_HANDLE;
    for (int i = 0; i < MAX_OBJS; i++)   /* its functions go with it */
        if (objs[i] && kinds[i] == K_FUNC && ((ffunc *)objs[i])->mod == (fmodule *)m)
            obj_free(objs[i]);
    obj_free(m);
    return sticky;
}

CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    NEED_CTX();
    if (!obj_ok(m, K_MODULE))
        return CUDA_ERROR_INVALID_HANDLE;
    const fake_entry *e = fake_cubin_entry(&((fmodule *)m)->img, name);
    if (!e)
        return CUDA_ERROR_NOT_FOUND;
    ffunc *fn = obj_new(K_FUNC, sizeof *fn);
    if (!fn)
        return CUDA_ERROR_OUT_OF_MEMORY;
    fn->mod = (fmodule *)m;
    fn->e = e;
    fn->max_dyn = 48 * 1024 - e->static_shmem;
    *f = (CUfunction)fn;
    return CUDA_SUCCESS;
}

CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
    NEED_CTX();
    if (!obj_ok(f, K_FUNC))
        return CUDA_ERROR_INVALID_HANDLE;
    const ffunc *fn = (const ffunc *)f;
    switch (a) {
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *v = fn->e->max_threads; break;
    case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *v = fn->max_dyn; break;
    case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES: *v = fn->e->static_shmem; break;
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *v = fn->e->regs < 0 ? 32 : fn->e->regs; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v)
{
    NEED_CTX();
    if (!obj_ok(f, K_FUNC))
        return CUDA_ERROR_INVALID_HANDLE;
    ffunc *fn = (ffunc *)f;
    if (a != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)
        return CUDA_SUCCESS;
    if (v < 0 || v > OPTIN_SMEM - fn->e->static_shmem)
        return CUDA_ERROR_INVALID_VALUE;
    fn->max_dyn = v;
    return CUDA_SUCCESS;
}

/* ---- launches ---- */

static CUresult check_geometry(const ffunc *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                               unsigned bz, unsigned shmem)
{
    unsigned long long threads = (unsigned long long)bx * by * bz;
    if (!gx || !gy || !gz || !bx || !by || !bz || gx > 0x7fffffffu || gy > 65535 || gz > 65535)
        return CUDA_ERROR_INVALID_VALUE;
    if (bx > 1024 || by > 1024 || bz > 64 || threads > 1024)
        return CUDA_ERROR_INVALID_VALUE;
    if (threads > (unsigned long long)fn->e->max_threads)
        return CUDA_ERROR_INVALID_VALUE;
    if ((int)shmem > fn->max_dyn)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* The blocking kernel holds s from now on. */
static void block(fstream *s, void **params)
{
    s->blocked = 1;
    s->block_start = s->tail > host_ns ? s->tail : host_ns;
    s->flag = *(volatile int **)params[0];
    s->timed_out = *(int **)params[1];
    s->timeout_ns = (double)*(unsigned long long *)params[2];
    s->n_pending = 0;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, CUstream h, void **params, void **extra)
{
    NEED_CTX();
    host_ns += FAKE_LAUNCH_HOST_NS;
    fstream *s = stream_of(h);
    if (!obj_ok(f, K_FUNC) || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    const ffunc *fn = (const ffunc *)f;
    CUresult r = check_geometry(fn, gx, gy, gz, bx, by, bz, shmem);
    if (r)
        return r;
    if ((fn->e->n_params > 0 && !params && !extra) || (params && extra))
        return CUDA_ERROR_INVALID_VALUE;
    if (s->capturing) {
        s->cap_ns += gpu(kernel_ns() + FAKE_GRAPH_NODE_NS);
        return CUDA_SUCCESS;
    }
    if (!strcmp(fn->e->name, FAKE_BLOCK_ENTRY) && params) {
        block(s, params);
        return CUDA_SUCCESS;
    }
    if (++launches == fault_at())
        fault_pending = 1;
    enqueue(s, gpu(kernel_ns() + FAKE_EAGER_GPU_NS), NULL);
    return CUDA_SUCCESS;
}

/* ---- graphs ---- */

CUresult cuStreamBeginCapture(CUstream h, CUstreamCaptureMode m)
{
    NEED_CTX();
    fstream *s = stream_of(h);
    if (!s || s == &legacy)
        return s ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_ERROR_INVALID_HANDLE;
    (void)m;
    if (s->capturing)
        return CUDA_ERROR_ILLEGAL_STATE;
    s->capturing = 1;
    s->invalidated = 0;
    s->cap_ns = 0;
    return CUDA_SUCCESS;
}

CUresult cuStreamEndCapture(CUstream h, CUgraph *g)
{
    NEED_CTX();
    fstream *s = stream_of(h);
    if (!s || !s->capturing)
        return s ? CUDA_ERROR_ILLEGAL_STATE : CUDA_ERROR_INVALID_HANDLE;
    s->capturing = 0;
    *g = NULL;
    if (s->invalidated)
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    fgraph *gr = obj_new(K_GRAPH, sizeof *gr);
    if (!gr)
        return CUDA_ERROR_OUT_OF_MEMORY;
    gr->gpu_ns = s->cap_ns;
    *g = (CUgraph)gr;
    return CUDA_SUCCESS;
}

CUresult cuGraphInstantiate(CUgraphExec *e, CUgraph g, unsigned long long f)
{
    NEED_CTX();
    (void)f;
    if (!obj_ok(g, K_GRAPH))
        return CUDA_ERROR_INVALID_HANDLE;
    fexec *x = obj_new(K_EXEC, sizeof *x);
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    x->gpu_ns = ((fgraph *)g)->gpu_ns;
    *e = (CUgraphExec)x;
    return CUDA_SUCCESS;
}

CUresult cuGraphUpload(CUgraphExec e, CUstream h)
{
    NEED_CTX();
    fstream *s = stream_of(h);
    if (!obj_ok(e, K_EXEC) || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    fexec *x = (fexec *)e;
    if (!x->uploaded)
        enqueue(s, gpu(FAKE_UPLOAD_NS), NULL);
    x->uploaded = 1;
    return CUDA_SUCCESS;
}

CUresult cuGraphLaunch(CUgraphExec e, CUstream h)
{
    NEED_CTX();
    host_ns += FAKE_LAUNCH_HOST_NS;
    fstream *s = stream_of(h);
    if (!obj_ok(e, K_EXEC) || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    fexec *x = (fexec *)e;
    if (++launches == fault_at())
        fault_pending = 1;
    enqueue(s, x->gpu_ns + (x->uploaded ? 0 : gpu(FAKE_UPLOAD_NS)), NULL);
    x->uploaded = 1;
    return CUDA_SUCCESS;
}

CUresult cuGraphExecDestroy(CUgraphExec e)
{
    NEED_INIT();
    if (!obj_ok(e, K_EXEC))
        return CUDA_ERROR_INVALID_HANDLE;
    obj_free(e);
    return CUDA_SUCCESS;
}

CUresult cuGraphDestroy(CUgraph g)
{
    NEED_INIT();
    if (!obj_ok(g, K_GRAPH))
        return CUDA_ERROR_INVALID_HANDLE;
    obj_free(g);
    return CUDA_SUCCESS;
}
