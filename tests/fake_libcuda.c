/* fake_libcuda.c - a stand-in libcuda.so.1 for test_cuda.c, which builds it at test time
 * and points KBENCH_LIBCUDA at it, so that `kbench run --backend cuda` runs its whole
 * pipeline on a machine without a GPU.
 *
 * The functions are defined under their cuda.h names, so cuda.h's macros give them the
 * versioned export names (cuMemAlloc -> cuMemAlloc_v2, ...) that the loader asks for.
 * Device memory is host memory; kernels do nothing. With FAKE_CUDA_FAULT=1 in the
 * environment the first stream or event synchronisation after a launch reports
 * CUDA_ERROR_ILLEGAL_ADDRESS, and from then on every call returns that same error, as a
 * real context does after a sticky fault. KBENCH_FAKE_CUDA_DRIVER sets the driver's CUDA
 * version (default 13000), KBENCH_FAKE_CUDA_ARCH the compute capability x10 (default 90).
 */
#include <cuda.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static CUresult sticky;   /* the sticky error, once faulted */
static int launched;      /* a launch happened since the last synchronisation */
static char handle_pool[64];

#define STICKY() do { if (sticky) return sticky; } while (0)
#define HANDLE(i) ((void *)&handle_pool[i])

static CUresult sync_point(void)
{
    STICKY();
    const char *f = getenv("FAKE_CUDA_FAULT");
    if (launched && f && *f == '1')
        return sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
    launched = 0;
    return CUDA_SUCCESS;
}

/* An integer setting from the environment, else def. */
static int env_int(const char *name, int def)
{
    const char *e = getenv(name);
    return e && *e ? atoi(e) : def;
}

CUresult cuInit(unsigned int flags) { (void)flags; return CUDA_SUCCESS; }
/* KBENCH_FAKE_CUDA_DRIVER: the CUDA version the driver reports (12040 = an R550 driver) */
CUresult cuDriverGetVersion(int *v) { *v = env_int("KBENCH_FAKE_CUDA_DRIVER", 13000); return CUDA_SUCCESS; }

CUresult cuGetErrorName(CUresult r, const char **s)
{
    *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "CUDA_ERROR_ILLEGAL_ADDRESS" : "CUDA_ERROR_FAKE";
    return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult r, const char **s)
{
    *s = r == CUDA_ERROR_ILLEGAL_ADDRESS ? "an illegal memory access was encountered" : "fake";
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int *n) { *n = 1; return CUDA_SUCCESS; }
CUresult cuDeviceGet(CUdevice *d, int i) { *d = i; return CUDA_SUCCESS; }
CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
    (void)d;
    strncpy(name, "Fake GPU", (size_t)len);
    name[len - 1] = 0;
    return CUDA_SUCCESS;
}

CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    (void)d;
    switch (a) {
    /* KBENCH_FAKE_CUDA_ARCH: the compute capability x10 (80, 89, 90) */
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *v = env_int("KBENCH_FAKE_CUDA_ARCH", 90) / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *v = env_int("KBENCH_FAKE_CUDA_ARCH", 90) % 10; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *v = 4; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *v = 1000000; break;
    case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: *v = 1000000; break;
    case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: *v = 256; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *v = 1 << 20; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *v = 232448; break;
    default: *v = 0; break;
    }
    return CUDA_SUCCESS;
}

CUresult cuDeviceTotalMem(size_t *b, CUdevice d) { (void)d; *b = (size_t)1 << 30; return CUDA_SUCCESS; }
CUresult cuDeviceGetUuid(CUuuid *u, CUdevice d) { (void)d; memset(u, 0x11, sizeof *u); return CUDA_SUCCESS; }
CUresult cuDeviceGetPCIBusId(char *id, int len, CUdevice d)
{
    (void)d;
    strncpy(id, "00000000:00:00.0", (size_t)len);
    id[len - 1] = 0;
    return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) { (void)d; *c = HANDLE(0); return CUDA_SUCCESS; }
CUresult cuDevicePrimaryCtxRelease(CUdevice d) { (void)d; return CUDA_SUCCESS; }
CUresult cuCtxSetCurrent(CUcontext c) { (void)c; return CUDA_SUCCESS; }

CUresult cuStreamCreate(CUstream *s, unsigned int f) { (void)f; *s = HANDLE(1); return CUDA_SUCCESS; }
CUresult cuStreamDestroy(CUstream s) { (void)s; return CUDA_SUCCESS; }
CUresult cuStreamSynchronize(CUstream s) { (void)s; return sync_point(); }
CUresult cuEventCreate(CUevent *e, unsigned int f) { (void)f; static int k; *e = HANDLE(2 + (k++ & 7)); return CUDA_SUCCESS; }
CUresult cuEventRecord(CUevent e, CUstream s) { (void)e; (void)s; STICKY(); return CUDA_SUCCESS; }
CUresult cuEventSynchronize(CUevent e) { (void)e; return sync_point(); }
CUresult cuEventElapsedTime(float *ms, CUevent a, CUevent b) { (void)a; (void)b; STICKY(); *ms = 0.01f; return CUDA_SUCCESS; }
CUresult cuEventDestroy(CUevent e) { (void)e; return CUDA_SUCCESS; }

CUresult cuMemAlloc(CUdeviceptr *p, size_t n)
{
    STICKY();
    void *m = malloc(n);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *p = (CUdeviceptr)(uintptr_t)m;
    return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr p) { free((void *)(uintptr_t)p); return sticky; }
CUresult cuMemcpyHtoD(CUdeviceptr d, const void *s, size_t n)
{
    STICKY();
    memcpy((void *)(uintptr_t)d, s, n);
    return CUDA_SUCCESS;
}
CUresult cuMemcpyDtoH(void *d, CUdeviceptr s, size_t n)
{
    CUresult r = sync_point();
    if (r)
        return r;
    memcpy(d, (const void *)(uintptr_t)s, n);
    return CUDA_SUCCESS;
}
CUresult cuMemsetD8Async(CUdeviceptr d, unsigned char b, size_t n, CUstream s)
{
    (void)s;
    STICKY();
    memset((void *)(uintptr_t)d, b, n);
    return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(CUmodule *m, const void *image) { (void)image; STICKY(); *m = HANDLE(10); return CUDA_SUCCESS; }
CUresult cuModuleUnload(CUmodule m) { (void)m; return sticky; }
CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    (void)m; (void)name;
    STICKY();
    *f = HANDLE(11);
    return CUDA_SUCCESS;
}
CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
    (void)f;
    STICKY();
    *v = a == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK ? 1024
       : a == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES ? 48 * 1024 : 0;
    return CUDA_SUCCESS;
}
CUresult cuFuncSetAttribute(CUfunction f, CUfunction_attribute a, int v) { (void)f; (void)a; (void)v; STICKY(); return CUDA_SUCCESS; }
CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
{
    (void)f; (void)gx; (void)gy; (void)gz; (void)bx; (void)by; (void)bz; (void)shmem; (void)s;
    (void)params; (void)extra;
    STICKY();
    launched = 1;
    return CUDA_SUCCESS;
}

CUresult cuStreamBeginCapture(CUstream s, CUstreamCaptureMode m) { (void)s; (void)m; STICKY(); return CUDA_SUCCESS; }
CUresult cuStreamEndCapture(CUstream s, CUgraph *g) { (void)s; STICKY(); *g = HANDLE(20); return CUDA_SUCCESS; }
CUresult cuGraphInstantiate(CUgraphExec *e, CUgraph g, unsigned long long f)
{
    (void)g; (void)f;
    STICKY();
    *e = HANDLE(21);
    return CUDA_SUCCESS;
}
CUresult cuGraphLaunch(CUgraphExec e, CUstream s) { (void)e; (void)s; STICKY(); launched = 1; return CUDA_SUCCESS; }
CUresult cuGraphExecDestroy(CUgraphExec e) { (void)e; return CUDA_SUCCESS; }
CUresult cuGraphDestroy(CUgraph g) { (void)g; return CUDA_SUCCESS; }
