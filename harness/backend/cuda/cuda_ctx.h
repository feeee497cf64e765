/* cuda_ctx.h - the cuda backend's private state, shared by its files (backend_cuda.c,
 * cuda_graph.c). Not for use outside backend/cuda/. */
#ifndef KB_CUDA_CTX_H
#define KB_CUDA_CTX_H

#include "backend/cuda/cublaslt.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/cudnn_sdpa.h"
#include "backend/cuda/nvml.h"

struct kb_backend_ctx {
    kb_cuda_api api;
    CUdevice dev;
    CUcontext ctx;          /* the device's primary context (retained), NULL if not */
    CUstream stream;
    CUevent ev_start, ev_stop;
    int driver_version;     /* 13000 = CUDA 13.0 */
    kb_nvml *nvml;          /* telemetry of this device; never NULL after init */
    kb_device_info info;
    char err[1024];         /* last error, one line */
    /* vendor libraries (cuda_vendor.c): loaded at init, handles on first use */
    kb_lt_api lt;
    cublasLtHandle_t lt_handle;
    kb_dnn_api dnn;
    cudnnHandle_t dnn_handle;
    char lt_unusable[512], dnn_unusable[512]; /* why the handle cannot be created ("" until tried) */
    char tmap_why[256];     /* why tensor maps cannot be encoded here ("" when they can: cuda_tmap.c) */
    struct {                /* the blocking kernel (cuda_block.c) */
        int tried, ok, held;
        CUmodule mod;
        CUfunction fn;
        int *host;          /* host-mapped: [0] the flag, [1] timed out */
        CUdeviceptr d_flag, d_timed_out;
        long windows, timeouts;
        char why[256];      /* why it is unavailable */
        char method[320];   /* kb_cuda_timing_method's text */
    } block;
};

/* A looked-up entry, kept so that timed launch loops do not pay a lookup each. */
typedef struct {
    char *name;
    CUfunction fn;
    int dyn_smem_bytes;     /* [bytes] the function's MAX_DYNAMIC_SHARED_SIZE_BYTES now */
} fn_slot;

#define KB_CUDA_FN_SLOTS 16
struct kb_module {
    CUmodule mod;
    fn_slot fns[KB_CUDA_FN_SLOTS];
    int n_fns;
};

struct kb_graph {
    CUgraph graph;
    CUgraphExec exec;
};

/* The check macro, instantiated for this backend: the report lands in x->err. */
#define CU(x, call) KB_CU_CHECK(&(x)->api, (x)->err, sizeof (x)->err, call)

#endif /* KB_CUDA_CTX_H */
