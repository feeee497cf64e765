/* cuda_api.h - the CUDA driver API, loaded at run time with dlopen("libcuda.so.1").
 *
 * kbench never links libcuda: the binary must start, and explain itself, on a
 * machine without a driver. cuda.h is included for its types only. cuda.h
 * #defines many API names to versioned symbols (cuMemAlloc -> cuMemAlloc_v2,
 * cuGraphInstantiate -> cuGraphInstantiateWithFlags, ...); the loader resolves
 * each entry point by the exported name that cuda.h of CUDA 13.0 maps it to. The
 * table's fields drop the "cu" prefix (api->MemAlloc) so that no cuda.h macro
 * renames them behind the reader's back.
 *
 * The pure helpers below (error formatting, CUresult -> kb_status, UUID text,
 * kernel-argument marshalling) need no driver and are unit-tested.
 */
#ifndef KB_CUDA_API_H
#define KB_CUDA_API_H

#include <cuda.h>

#include "backend/backend.h"

typedef struct {
    void *lib; /* dlopen handle; NULL when not loaded */

    CUresult (CUDAAPI *Init)(unsigned int flags);
    CUresult (CUDAAPI *DriverGetVersion)(int *version);
    CUresult (CUDAAPI *GetErrorName)(CUresult r, const char **name);
    CUresult (CUDAAPI *GetErrorString)(CUresult r, const char **msg);

    CUresult (CUDAAPI *DeviceGetCount)(int *count);
    CUresult (CUDAAPI *DeviceGet)(CUdevice *dev, int ordinal);
    CUresult (CUDAAPI *DeviceGetName)(char *name, int len, CUdevice dev);
    CUresult (CUDAAPI *DeviceGetAttribute)(int *value, CUdevice_attribute attr, CUdevice dev);
    CUresult (CUDAAPI *DeviceTotalMem)(size_t *bytes, CUdevice dev);           /* _v2 */
    CUresult (CUDAAPI *DeviceGetUuid)(CUuuid *uuid, CUdevice dev);             /* _v2 */
    CUresult (CUDAAPI *DeviceGetPCIBusId)(char *id, int len, CUdevice dev);
    CUresult (CUDAAPI *DevicePrimaryCtxRetain)(CUcontext *ctx, CUdevice dev);
    CUresult (CUDAAPI *DevicePrimaryCtxRelease)(CUdevice dev);                 /* _v2 */
    CUresult (CUDAAPI *CtxSetCurrent)(CUcontext ctx);

    CUresult (CUDAAPI *StreamCreate)(CUstream *stream, unsigned int flags);
    CUresult (CUDAAPI *StreamDestroy)(CUstream stream);                        /* _v2 */
    CUresult (CUDAAPI *StreamSynchronize)(CUstream stream);
    CUresult (CUDAAPI *EventCreate)(CUevent *ev, unsigned int flags);
    CUresult (CUDAAPI *EventRecord)(CUevent ev, CUstream stream);
    CUresult (CUDAAPI *EventSynchronize)(CUevent ev);
    CUresult (CUDAAPI *EventElapsedTime)(float *ms, CUevent start, CUevent end); /* _v2, or v1 on drivers < 12.8 */
    CUresult (CUDAAPI *EventDestroy)(CUevent ev);                              /* _v2 */

    CUresult (CUDAAPI *MemAlloc)(CUdeviceptr *dptr, size_t bytes);             /* _v2 */
    CUresult (CUDAAPI *MemFree)(CUdeviceptr dptr);                             /* _v2 */
    CUresult (CUDAAPI *MemcpyHtoD)(CUdeviceptr dst, const void *src, size_t bytes); /* _v2 */
    CUresult (CUDAAPI *MemcpyDtoH)(void *dst, CUdeviceptr src, size_t bytes);  /* _v2 */
    CUresult (CUDAAPI *MemsetD8Async)(CUdeviceptr dst, unsigned char byte, size_t n, CUstream stream);

    CUresult (CUDAAPI *ModuleLoadData)(CUmodule *mod, const void *image);
    CUresult (CUDAAPI *ModuleUnload)(CUmodule mod);
    CUresult (CUDAAPI *ModuleGetFunction)(CUfunction *fn, CUmodule mod, const char *name);
    CUresult (CUDAAPI *FuncGetAttribute)(int *value, CUfunction_attribute attr, CUfunction fn);
    CUresult (CUDAAPI *FuncSetAttribute)(CUfunction fn, CUfunction_attribute attr, int value);
    CUresult (CUDAAPI *LaunchKernel)(CUfunction fn, unsigned gx, unsigned gy, unsigned gz,
                                     unsigned bx, unsigned by, unsigned bz, unsigned shmem_bytes,
                                     CUstream stream, void **params, void **extra);

    CUresult (CUDAAPI *StreamBeginCapture)(CUstream stream, CUstreamCaptureMode mode); /* _v2 */
    CUresult (CUDAAPI *StreamEndCapture)(CUstream stream, CUgraph *graph);
    CUresult (CUDAAPI *GraphInstantiate)(CUgraphExec *exec, CUgraph graph,
                                         unsigned long long flags); /* cuGraphInstantiateWithFlags */
    CUresult (CUDAAPI *GraphLaunch)(CUgraphExec exec, CUstream stream);
    CUresult (CUDAAPI *GraphExecDestroy)(CUgraphExec exec);
    CUresult (CUDAAPI *GraphDestroy)(CUgraph graph);
    CUresult (CUDAAPI *GraphUpload)(CUgraphExec exec, CUstream stream);

    /* OPTIONAL: the driver's entry-point table (cuGetProcAddress_v2, CUDA 12.0+); NULL on an
     * older driver. What is resolved through it (below) is NULL until kb_cuda_api_resolve. */
    CUresult (CUDAAPI *GetProcAddress)(const char *symbol, void **pfn, int cuda_version, cuuint64_t flags,
                                       CUdriverProcAddressQueryResult *status);
    /* OPTIONAL, through GetProcAddress (CUDA 11.8+ entry point; a 12.0+ driver's table): the
     * launch with a cluster (backend_cuda.c). Never linked nor dlsym'ed: kbench loads on a
     * driver that predates it and refuses only the cluster launch, with the reason. */
    CUresult (CUDAAPI *LaunchKernelEx)(const CUlaunchConfig *config, CUfunction fn, void **params, void **extra);
    /* OPTIONAL, through GetProcAddress (CUDA 12.0+): tensor maps for TMA (cuda_tmap.c) */
    CUresult (CUDAAPI *TensorMapEncodeTiled)(CUtensorMap *map, CUtensorMapDataType dtype, cuuint32_t rank,
                                             void *address, const cuuint64_t *dims, const cuuint64_t *strides,
                                             const cuuint32_t *box, const cuuint32_t *elem_strides,
                                             CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                             CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob);

    /* OPTIONAL: peer copies between the node's GPUs (cuda_p2p.h, accept --system) */
    CUresult (CUDAAPI *DeviceCanAccessPeer)(int *can, CUdevice dev, CUdevice peer);
    CUresult (CUDAAPI *CtxEnablePeerAccess)(CUcontext peer, unsigned int flags);
    CUresult (CUDAAPI *MemcpyPeerAsync)(CUdeviceptr dst, CUcontext dst_ctx, CUdeviceptr src, CUcontext src_ctx,
                                        size_t bytes, CUstream stream);
    /* OPTIONAL: a stream held until host memory holds a value (cuda_p2p.c's bidirectional gate) */
    CUresult (CUDAAPI *StreamWaitValue32)(CUstream stream, CUdeviceptr addr, cuuint32_t value, unsigned int flags);

    /* host memory the device reads (the blocking kernel's flag) */
    CUresult (CUDAAPI *MemHostAlloc)(void **p, size_t bytes, unsigned int flags);
    CUresult (CUDAAPI *MemHostGetDevicePointer)(CUdeviceptr *d, void *p, unsigned int flags); /* _v2 */
    CUresult (CUDAAPI *MemFreeHost)(void *p);
} kb_cuda_api;

/* Open the driver library and resolve every entry point of the table (the OPTIONAL ones
 * stay NULL when the driver lacks them).
 * The library is env KBENCH_LIBCUDA when set, else "libcuda.so.1".
 * Returns KB_OK, or KB_ERR_SETUP with a message in err: "no CUDA driver found
 * (libcuda.so.1: <dlerror text>)" when the library cannot be opened, or a
 * message naming the missing symbol (the driver is too old) — in which case the
 * library is closed again. On success release with kb_cuda_api_unload. */
kb_status kb_cuda_api_load(kb_cuda_api *api, char *err, size_t n);

/* Resolve entry point `symbol` as of CUDA version `since` (12000 = 12.0) through the driver's
 * entry-point table (cuGetProcAddress, Driver API "Driver Entry Point Access") into *fn (a
 * function pointer of the table, passed as its address). 0 when found; -1 with *fn NULL and
 * why ("this driver (CUDA 11.8) predates ...", "... has no cuTensorMapEncodeTiled") otherwise.
 * driver_version is cuDriverGetVersion's. */
int kb_cuda_api_resolve(const kb_cuda_api *api, int driver_version, const char *symbol, int since, void *fn,
                        char *why, size_t n);

/* dlclose the library and clear the table; safe on a table never loaded. */
void kb_cuda_api_unload(kb_cuda_api *api);

/* Map a driver result to a kbench status (pure):
 * success -> KB_OK; out of memory -> KB_ERR_OOM; launch rejected (too many
 * resources, bad cluster or cooperative size) -> KB_ERR_LAUNCH; a kernel fault
 * (illegal address, misaligned address, device assert, illegal instruction,
 * CUDA_ERROR_LAUNCH_FAILED, ...) -> KB_ERR_FAULT; watchdog -> KB_ERR_TIMEOUT;
 * unusable module image (wrong arch, bad PTX) -> KB_ERR_COMPILE; no driver or
 * device, stub library, driver mismatch -> KB_ERR_SETUP; misuse of the API by
 * kbench (invalid value/handle/context, capture errors) -> KB_ERR_INTERNAL;
 * anything else -> KB_ERR_SETUP (the environment is in a state kbench cannot use). */
kb_status kb_cuda_status(CUresult r);

/* Format one API failure (pure) as
 *   "file:line function: call -> NAME: message"
 * into buf (always NUL-terminated, truncated to n). name/msg come from
 * cuGetErrorName/cuGetErrorString; when name is NULL the tail is "CUresult <code>",
 * when only msg is NULL it is just "NAME". */
void kb_cuda_format_error(char *buf, size_t n, const char *file, int line, const char *func,
                          const char *call, int code, const char *name, const char *msg);

/* The check behind KB_CU_CHECK: KB_OK when r is CUDA_SUCCESS; otherwise formats
 * the failure (asking api for the error's name and message when it can) into
 * err and returns kb_cuda_status(r). api may be NULL. */
kb_status kb_cuda_check(const kb_cuda_api *api, CUresult r, char *err, size_t n,
                        const char *file, int line, const char *func, const char *call);

/* Evaluate a driver call once; on failure write its one-line report into err[n]
 * and yield the mapped kb_status (KB_OK on success). Usage:
 *   if ((st = KB_CU_CHECK(api, err, n, api->MemAlloc(&p, bytes))) != KB_OK) goto fail; */
#define KB_CU_CHECK(api, err, n, call) \
    kb_cuda_check((api), (call), (err), (n), __FILE__, __LINE__, __func__, #call)

/* Format a device UUID (pure) the way nvidia-smi and NVML print it:
 * "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", lower-case hex (41 chars + NUL). */
void kb_cuda_format_uuid(const unsigned char bytes[16], char *out, size_t n);

/* Marshal kernel arguments into the kernelParams array cuLaunchKernel expects
 * (pure): params[i] points at the value inside args[i] with the size its kind
 * says (8-byte device pointer, 4-byte int32, 8-byte int64, 4-byte float).
 * args must outlive the launch call (cuLaunchKernel copies the values).
 * Returns 0, or -1 when an argument has an unknown kind. */
int kb_cuda_marshal(const kb_arg *args, int n, void **params);

/* Size in bytes of the value a kb_arg of this kind passes; 0 for an unknown kind. */
size_t kb_cuda_arg_bytes(kb_arg_kind kind);

#endif /* KB_CUDA_API_H */
