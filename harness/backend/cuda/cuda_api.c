/* cuda_api.c - dlopen'ed CUDA driver API table and its pure helpers (see cuda_api.h). */
#include "backend/cuda/cuda_api.h"

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every entry point, by the symbol cuda.h (CUDA 13.0) binds its API name to.
 * `fallback` is an older export with the same signature, tried when `sym` is
 * missing: cuEventElapsedTime_v2 only exists from driver 12.8 on, and a benchmark
 * must not refuse a 12.x driver just for its timer. An `optional` entry stays NULL on a
 * driver without it; its caller refuses what needs it, with the reason. */
static const struct {
    const char *sym;
    const char *fallback;
    size_t offset;
    int optional;
} syms[] = {
#define E(field, sym) { sym, NULL, offsetof(kb_cuda_api, field), 0 }
    E(Init, "cuInit"),
    E(DriverGetVersion, "cuDriverGetVersion"),
    E(GetErrorName, "cuGetErrorName"),
    E(GetErrorString, "cuGetErrorString"),
    E(DeviceGetCount, "cuDeviceGetCount"),
    E(DeviceGet, "cuDeviceGet"),
    E(DeviceGetName, "cuDeviceGetName"),
    E(DeviceGetAttribute, "cuDeviceGetAttribute"),
    E(DeviceTotalMem, "cuDeviceTotalMem_v2"),
    E(DeviceGetUuid, "cuDeviceGetUuid_v2"),
    E(DeviceGetPCIBusId, "cuDeviceGetPCIBusId"),
    E(DevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"),
    E(DevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"),
    E(CtxSetCurrent, "cuCtxSetCurrent"),
    E(StreamCreate, "cuStreamCreate"),
    E(StreamDestroy, "cuStreamDestroy_v2"),
    E(StreamSynchronize, "cuStreamSynchronize"),
    E(EventCreate, "cuEventCreate"),
    E(EventRecord, "cuEventRecord"),
    E(EventSynchronize, "cuEventSynchronize"),
    { "cuEventElapsedTime_v2", "cuEventElapsedTime", offsetof(kb_cuda_api, EventElapsedTime), 0 },
    E(EventDestroy, "cuEventDestroy_v2"),
    E(MemAlloc, "cuMemAlloc_v2"),
    E(MemFree, "cuMemFree_v2"),
    E(MemcpyHtoD, "cuMemcpyHtoD_v2"),
    E(MemcpyDtoH, "cuMemcpyDtoH_v2"),
    E(MemsetD8Async, "cuMemsetD8Async"),
    E(ModuleLoadData, "cuModuleLoadData"),
    E(ModuleUnload, "cuModuleUnload"),
    E(ModuleGetFunction, "cuModuleGetFunction"),
    E(FuncGetAttribute, "cuFuncGetAttribute"),
    E(FuncSetAttribute, "cuFuncSetAttribute"),
    E(LaunchKernel, "cuLaunchKernel"),
    { "cuDeviceCanAccessPeer", NULL, offsetof(kb_cuda_api, DeviceCanAccessPeer), 1 },   /* peer copies */
    { "cuCtxEnablePeerAccess", NULL, offsetof(kb_cuda_api, CtxEnablePeerAccess), 1 },
    { "cuMemcpyPeerAsync", NULL, offsetof(kb_cuda_api, MemcpyPeerAsync), 1 },
    { "cuStreamWaitValue32_v2", NULL, offsetof(kb_cuda_api, StreamWaitValue32), 1 },   /* cuda.h 13.0 binds the name to _v2 */
    E(StreamBeginCapture, "cuStreamBeginCapture_v2"),
    E(StreamEndCapture, "cuStreamEndCapture"),
    E(GraphInstantiate, "cuGraphInstantiateWithFlags"),
    E(GraphLaunch, "cuGraphLaunch"),
    E(GraphExecDestroy, "cuGraphExecDestroy"),
    E(GraphDestroy, "cuGraphDestroy"),
    E(GraphUpload, "cuGraphUpload"),
    /* CUDA 12.0+: the entry-point table (cuda.h binds cuGetProcAddress to _v2 from 12.0 on) */
    { "cuGetProcAddress_v2", NULL, offsetof(kb_cuda_api, GetProcAddress), 1 },
    E(MemHostAlloc, "cuMemHostAlloc"),
    E(MemHostGetDevicePointer, "cuMemHostGetDevicePointer_v2"),
    E(MemFreeHost, "cuMemFreeHost"),
#undef E
};

kb_status kb_cuda_api_load(kb_cuda_api *api, char *err, size_t n)
{
    memset(api, 0, sizeof *api);
    const char *path = getenv("KBENCH_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";

    /* RTLD_NOW: a driver that lacks a symbol the library itself needs should
     * fail here, not in the middle of a sweep. RTLD_LOCAL: keep its symbols out
     * of the global namespace (NVRTC and cuBLASLt load their own). */
    api->lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!api->lib) {
        const char *why = dlerror();
        snprintf(err, n, "no CUDA driver found (libcuda.so.1: %s)", why ? why : "dlopen failed");
        return KB_ERR_SETUP;
    }
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++) {
        void *fn = dlsym(api->lib, syms[i].sym);
        if (!fn && syms[i].fallback)
            fn = dlsym(api->lib, syms[i].fallback);
        if (!fn && syms[i].optional)
            continue;
        if (!fn) {
            snprintf(err, n, "the CUDA driver is too old: %s has no %s", path, syms[i].sym);
            kb_cuda_api_unload(api);
            return KB_ERR_SETUP;
        }
        /* POSIX guarantees a dlsym result converts to a function pointer. */
        memcpy((char *)api + syms[i].offset, &fn, sizeof fn);
    }
    return KB_OK;
}

int kb_cuda_api_resolve(const kb_cuda_api *api, int driver_version, const char *symbol, int since, void *fn,
                        char *why, size_t n)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    memset(fn, 0, sizeof p);
    /* "If the specified CUDA version is greater than the driver version, the API will return
     * CUDA_ERROR_INVALID_VALUE": say so in words before asking */
    if (driver_version < since) {
        snprintf(why, n, "this driver (CUDA %d.%d) predates %s, which needs a CUDA %d.%d or newer driver",
                 driver_version / 1000, driver_version % 1000 / 10, symbol, since / 1000, since % 1000 / 10);
        return -1;
    }
    if (!api->GetProcAddress) {
        snprintf(why, n, "this driver (CUDA %d.%d) exports no cuGetProcAddress_v2 to resolve %s through",
                 driver_version / 1000, driver_version % 1000 / 10, symbol);
        return -1;
    }
    /* the version of the symbol's ABI kbench's prototype is (cuda.h's, unchanged since `since`) */
    CUresult r = api->GetProcAddress(symbol, &p, since, CU_GET_PROC_ADDRESS_DEFAULT, &found);
    if (r != CUDA_SUCCESS || !p || found != CU_GET_PROC_ADDRESS_SUCCESS) {
        snprintf(why, n, "the driver's entry-point table (cuGetProcAddress) has no %s for CUDA %d.%d (%s)", symbol,
                 since / 1000, since % 1000 / 10,
                 r != CUDA_SUCCESS ? "the call failed" :
                 found == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT ? "version not sufficient" : "symbol not found");
        return -1;
    }
    memcpy(fn, &p, sizeof p);   /* POSIX: a data pointer from the driver converts to a function pointer */
    return 0;
}

void kb_cuda_api_unload(kb_cuda_api *api)
{
    if (api->lib)
        dlclose(api->lib);
    memset(api, 0, sizeof *api);
}

kb_status kb_cuda_status(CUresult r)
{
    switch (r) {
    case CUDA_SUCCESS:
        return KB_OK;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return KB_ERR_OOM;

    /* The launch was refused before anything ran: geometry or resources. */
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
    case CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING:
    case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
        return KB_ERR_LAUNCH;

    /* The kernel ran and faulted. CUDA_ERROR_LAUNCH_FAILED belongs here: the
     * driver documents it as an exception on the device while the kernel
     * executed (bad pointer, out-of-bounds shared memory), which leaves the
     * context unusable, not as a rejected launch. */
    case CUDA_ERROR_ILLEGAL_ADDRESS:
    case CUDA_ERROR_MISALIGNED_ADDRESS:
    case CUDA_ERROR_ASSERT:
    case CUDA_ERROR_HARDWARE_STACK_ERROR:
    case CUDA_ERROR_ILLEGAL_INSTRUCTION:
    case CUDA_ERROR_INVALID_ADDRESS_SPACE:
    case CUDA_ERROR_INVALID_PC:
    case CUDA_ERROR_LAUNCH_FAILED:
    case CUDA_ERROR_TENSOR_MEMORY_LEAK:
    case CUDA_ERROR_ECC_UNCORRECTABLE:
    case CUDA_ERROR_NVLINK_UNCORRECTABLE:
    case CUDA_ERROR_CONTAINED:
        return KB_ERR_FAULT;

    case CUDA_ERROR_LAUNCH_TIMEOUT:
    case CUDA_ERROR_TIMEOUT:
        return KB_ERR_TIMEOUT;

    /* The module image cannot run here: built for another arch, or PTX the
     * driver cannot JIT. That is one module's problem, like a compile error. */
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
    case CUDA_ERROR_JIT_COMPILER_NOT_FOUND:
    case CUDA_ERROR_JIT_COMPILATION_DISABLED:
    case CUDA_ERROR_INVALID_SOURCE:
        return KB_ERR_COMPILE;

    /* kbench used the API wrongly: a bug in kbench. */
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_CONTEXT:
    case CUDA_ERROR_CONTEXT_IS_DESTROYED:
    case CUDA_ERROR_ILLEGAL_STATE:
    case CUDA_ERROR_NOT_FOUND:
    case CUDA_ERROR_NOT_READY:
    case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
    case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
    case CUDA_ERROR_STREAM_CAPTURE_MERGE:
    case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
    case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
    case CUDA_ERROR_STREAM_CAPTURE_ISOLATION:
    case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
    case CUDA_ERROR_CAPTURED_EVENT:
    case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
        return KB_ERR_INTERNAL;

    /* No driver, no device, stub library, driver/toolkit mismatch, and every
     * code not named above: the environment, not the case. */
    default:
        return KB_ERR_SETUP;
    }
}

void kb_cuda_format_error(char *buf, size_t n, const char *file, int line, const char *func,
                          const char *call, int code, const char *name, const char *msg)
{
    if (!n)
        return;
    if (!name)
        snprintf(buf, n, "%s:%d %s: %s -> CUresult %d", file, line, func, call, code);
    else if (!msg)
        snprintf(buf, n, "%s:%d %s: %s -> %s", file, line, func, call, name);
    else
        snprintf(buf, n, "%s:%d %s: %s -> %s: %s", file, line, func, call, name, msg);
}

kb_status kb_cuda_check(const kb_cuda_api *api, CUresult r, char *err, size_t n,
                        const char *file, int line, const char *func, const char *call)
{
    if (r == CUDA_SUCCESS)
        return KB_OK;
    const char *name = NULL, *msg = NULL;
    /* Both return CUDA_ERROR_INVALID_VALUE for a code they do not know (and the
     * stub library fails them): fall back to the number rather than print junk. */
    if (api && api->GetErrorName && api->GetErrorName(r, &name) != CUDA_SUCCESS)
        name = NULL;
    if (name && api->GetErrorString && api->GetErrorString(r, &msg) != CUDA_SUCCESS)
        msg = NULL;
    kb_cuda_format_error(err, n, file, line, func, call, (int)r, name, msg);
    return kb_cuda_status(r);
}

void kb_cuda_format_uuid(const unsigned char b[16], char *out, size_t n)
{
    snprintf(out, n,
             "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7],
             b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
}

size_t kb_cuda_arg_bytes(kb_arg_kind kind)
{
    switch (kind) {
    case KB_ARG_PTR: return sizeof(CUdeviceptr);
    case KB_ARG_I32: return sizeof(int32_t);
    case KB_ARG_I64: return sizeof(int64_t);
    case KB_ARG_F32: return sizeof(float);
    case KB_ARG_TMAP: return KB_TMAP_BYTES;   /* sizeof(CUtensorMap) */
    }
    return 0;
}

int kb_cuda_marshal(const kb_arg *args, int n, void **params)
{
    /* cuLaunchKernel reads each parameter's size from the kernel's own metadata
     * and copies that many bytes from params[i], so each pointer must address a
     * value of exactly the kernel-side type: point into the matching union
     * member rather than at the union, so the intent survives any layout. */
    _Static_assert(sizeof(CUdeviceptr) == sizeof(kb_dptr), "kb_dptr must hold a CUdeviceptr");
    for (int i = 0; i < n; i++) {
        const kb_arg *a = &args[i];
        switch (a->kind) {
        case KB_ARG_PTR: params[i] = (void *)&a->v.ptr; break;
        case KB_ARG_I32: params[i] = (void *)&a->v.i32; break;
        case KB_ARG_I64: params[i] = (void *)&a->v.i64; break;
        case KB_ARG_F32: params[i] = (void *)&a->v.f32; break;
        case KB_ARG_TMAP: params[i] = (void *)a->v.tmap; break;
        default: return -1;
        }
    }
    return 0;
}
