/* fake_state.h - the driver double's shared state and helpers, private to tests/fake_cuda/
 * (fake_core.c defines them; fake_libcuda.c and fake_launch.c are the API). Hidden: nothing
 * here is exported from the library, so no name can interpose with a host program's. */
#ifndef FAKE_STATE_H
#define FAKE_STATE_H

#include <cuda.h>
#include <stddef.h>
#include <stdint.h>

#include "fake_cubin.h"
#include "fake_cuda.h"

#define FAKE_HIDDEN __attribute__((visibility("hidden")))
#define OPTIN_SMEM 232448          /* [bytes] the opt-in shared memory limit per block */
#define MAX_ALLOCS 65536
#define FAKE_HOST_NODES 64        /* host-function nodes one capture may hold */

enum { K_CTX = 1, K_STREAM, K_EVENT, K_MODULE, K_FUNC, K_GRAPH, K_EXEC };

typedef struct fevent fevent;
typedef struct { double dur; fevent *ev; } op;        /* work (dur) or an event record */
typedef struct {
    double tail;            /* when the stream's queued work ends */
    int blocked;            /* held by the blocking kernel */
    double block_start;
    volatile int *flag;
    int wait_value_mode;    /* held by cuStreamWaitValue32: until (int32_t)(*flag - wait_value) >= 0 */
    unsigned wait_value;
    int *timed_out;
    double timeout_ns;
    op pending[FAKE_QUEUE_DEPTH]; /* queued behind the blocking kernel */
    int n_pending;
    int capturing, invalidated;
    int cap_mode;           /* the CUstreamCaptureMode of the capture under way */
    int n_host;             /* host-function nodes captured (cuLaunchHostFunc) */
    CUhostFn host_fn[FAKE_HOST_NODES];
    void *host_data[FAKE_HOST_NODES];
    int non_blocking;       /* CU_STREAM_NON_BLOCKING: the legacy stream does not wait for it */
    double cap_ns;          /* captured GPU time */
} fstream;
struct fevent { int recorded, known; double stamp; fstream *s; };
typedef struct { fake_image img; } fmodule;
typedef struct {
    fmodule *mod;
    const fake_entry *e;
    int max_dyn;            /* MAX_DYNAMIC_SHARED_SIZE_BYTES now */
    int nonportable;        /* NON_PORTABLE_CLUSTER_SIZE_ALLOWED */
} ffunc;
typedef struct {
    double gpu_ns;
    int n_host;             /* host-function nodes, run in order at every launch */
    CUhostFn host_fn[FAKE_HOST_NODES];
    void *host_data[FAKE_HOST_NODES];
} fgraph;
typedef struct { fgraph g; int uploaded; } fexec;

/* settings (fake_cuda.h) */
FAKE_HIDDEN int arch(void);
FAKE_HIDDEN int sm_count(void);
FAKE_HIDDEN int driver(void);
FAKE_HIDDEN double slowdown(void);
FAKE_HIDDEN double kernel_ns(void);
FAKE_HIDDEN long fault_at(void);
FAKE_HIDDEN int fails(const char *fn);             /* fn is listed in KBENCH_FAKE_CUDA_FAIL */
FAKE_HIDDEN int missing(const char *fn);           /* fn is listed in KBENCH_FAKE_CUDA_MISSING */

/* handles: every object the double made, by kind */
FAKE_HIDDEN void *obj_new(int kind, size_t bytes);
FAKE_HIDDEN int obj_ok(const void *p, int kind);
FAKE_HIDDEN void obj_free(void *p);
FAKE_HIDDEN void obj_free_functions_of(const void *module);

/* state */
FAKE_HIDDEN extern int initialised;
FAKE_HIDDEN extern char primary_ctx_obj;           /* the primary context's handle */
FAKE_HIDDEN extern int primary_refs;               /* its retain count */
FAKE_HIDDEN extern __thread CUcontext current;     /* the calling thread's current context */
FAKE_HIDDEN extern fstream legacy;                 /* the NULL stream */
FAKE_HIDDEN extern int upload_unordered;           /* a pageable cuMemcpyHtoD not yet ordered before non-blocking streams */
FAKE_HIDDEN extern double host_ns;                 /* the virtual host clock */
FAKE_HIDDEN extern CUresult sticky;                /* a sticky fault */
FAKE_HIDDEN extern long launches;                  /* launches so far (fault injection) */
FAKE_HIDDEN extern int fault_pending;              /* 0, or the CUresult the next synchronisation reports */
FAKE_HIDDEN extern fstream *streams[64];
FAKE_HIDDEN extern int n_streams;
FAKE_HIDDEN extern uintptr_t alloc_base[MAX_ALLOCS]; /* device and host-mapped allocations */
FAKE_HIDDEN extern size_t alloc_size[MAX_ALLOCS];
FAKE_HIDDEN extern unsigned alloc_host_flags[MAX_ALLOCS]; /* cuMemHostAlloc's flags | FAKE_HOST_ALLOC */
#define FAKE_HOST_ALLOC 0x80000000u

/* device memory */
FAKE_HIDDEN int alloc_find(uintptr_t p);
FAKE_HIDDEN int range_ok(uintptr_t p, size_t n);
FAKE_HIDDEN CUresult alloc_add(void *m, size_t n);

/* tensor maps (fake_tmap.c): the fault a launch of e with these kernelParams causes on the
 * device because of a tensor map it was given (CUDA_SUCCESS: none) */
FAKE_HIDDEN CUresult tmap_param_fault(const fake_entry *e, void **params);

/* the node (fake_peer.c): devices counted, the context of device d, the device of a context (-1),
 * device d's PCI bus id (cuDeviceGetPCIBusId's text, at most n bytes with the NUL) */
FAKE_HIDDEN int fake_devices(void);
FAKE_HIDDEN void fake_bus_id(int d, char *out, size_t n);
FAKE_HIDDEN CUcontext fake_ctx_of(int d);
FAKE_HIDDEN int fake_device_of(CUcontext c);

/* the virtual clock */
FAKE_HIDDEN double gpu(double ns);                 /* a GPU duration under the slowdown */
FAKE_HIDDEN void host_launch(void);                /* a launch call's host cost */
FAKE_HIDDEN void poll_all(void);                   /* blocking kernels look at their flags */
FAKE_HIDDEN void enqueue(fstream *s, double dur, fevent *ev);
FAKE_HIDDEN int still_held(const fstream *s);    /* a held stream's condition not met yet */
FAKE_HIDDEN void wait_stream(fstream *s);          /* the host waits for everything on s */
FAKE_HIDDEN void wait_legacy(void);                /* ... on the legacy stream and every blocking stream */
FAKE_HIDDEN CUresult capture_forbids(void);        /* a call illegal while a stream captures */
FAKE_HIDDEN CUresult sync_point(void);             /* where a pending fault surfaces */
FAKE_HIDDEN fstream *stream_of(CUstream h);        /* NULL for a handle not a stream */

/* Every entry point: the host's time passes, the blocking kernel looks at its flag. */
#define ENTER() do { host_ns += FAKE_CALL_NS; poll_all(); } while (0)
#define NEED_INIT() do { ENTER(); if (!initialised) return CUDA_ERROR_NOT_INITIALIZED; } while (0)
#define NEED_CTX() do { NEED_INIT(); if (!current) return CUDA_ERROR_INVALID_CONTEXT; \
                        if (sticky) return sticky; } while (0)

#endif
