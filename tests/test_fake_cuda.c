/* test_fake_cuda.c - the driver double's contract (tests/fake_cuda/fake_cuda.h): the
 * errors a real driver documents for each misuse, CUBINs read from NVRTC's real output,
 * and the virtual clock the timing tests rely on. Drives the double in-process through
 * kbench's own driver table (cuda_api.h), loaded from KBENCH_FAKE_LIBCUDA. */
#include "check.h"
#include "backend/cuda/cuda_api.h"
#include "backend/cuda/kb_nvrtc.h"
#include "../tests/fake_cuda/fake_cuda.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static kb_cuda_api api;
static CUcontext ctx;
static CUstream stream;

static const char src[] =
    "extern \"C\" __global__ void __launch_bounds__(128) k_bounded(float *p) {\n"
    "    __shared__ float tile[256];\n"
    "    tile[threadIdx.x] = p[threadIdx.x]; __syncthreads(); p[threadIdx.x] = tile[127 - threadIdx.x];\n"
    "}\n"
    "extern \"C\" __global__ void k_dyn(float *p) { extern __shared__ float d[]; d[threadIdx.x] = 1.f; p[0] = d[0]; }\n"
    "extern \"C\" __global__ void kb_block_stream(volatile int *flag, int *timed_out, unsigned long long t) {\n"
    "    unsigned long long s, n; asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(s));\n"
    "    while (!*flag) { asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(n)); if (n - s > t) { *timed_out = 1; break; } }\n"
    "}\n"
    /* 96 live values a thread: over 64 registers, so 1024 threads need more than 64K */
    "extern \"C\" __global__ void k_regs(float *p) {\n"
    "    float v[96];\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < 96; i++) v[i] = p[i * blockDim.x + threadIdx.x];\n"
    "#pragma unroll\n"
    "    for (int j = 0; j < 4; j++)\n"
    "#pragma unroll\n"
    "        for (int i = 0; i < 96; i++) v[i] = v[i] * v[(i + 7) % 96] + 1.f;\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < 96; i++) p[i * blockDim.x + threadIdx.x] = v[i];\n"
    "}\n"
    "extern \"C\" __global__ void k_args(float *p, int n, double d) { p[n] = (float)d; }\n";

static kb_resources bounded_res;   /* k_bounded as ptxas reported it */
static kb_resources regs_res;      /* k_regs */

/* A CUBIN of src for sm (caller frees). */
static void *cubin_for(int sm)
{
    void *cubin = NULL;
    size_t bytes = 0;
    kb_sb log;
    kb_sb_init(&log);
    kb_status st = kb_nvrtc_compile(src, "fake_contract.cu", NULL, 0, NULL, 0, sm, &cubin, &bytes, &log);
    CHECK_MSG(st == KB_OK, "%s", log.s);
    CHECK(kb_ptxas_parse(log.s, "k_bounded", &bounded_res) == 0);
    CHECK(kb_ptxas_parse(log.s, "k_regs", &regs_res) == 0);
    kb_sb_free(&log);
    return cubin;
}

static void test_init_and_context(void)
{
    int n = 0;
    CHECK(api.DeviceGetCount(&n) == CUDA_ERROR_NOT_INITIALIZED);
    CHECK(api.Init(0) == CUDA_SUCCESS);
    CHECK(api.DeviceGetCount(&n) == CUDA_SUCCESS && n == 1);
    CUdeviceptr p;
    CHECK(api.MemAlloc(&p, 64) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(api.DevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS);
    CHECK(api.CtxSetCurrent((CUcontext)&n) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(api.CtxSetCurrent(ctx) == CUDA_SUCCESS);
    CHECK(api.MemAlloc(&p, 64) == CUDA_SUCCESS);
    CHECK(api.MemFree(p) == CUDA_SUCCESS);
    CHECK(api.MemFree(p) == CUDA_ERROR_INVALID_VALUE);   /* freed twice */
    CHECK(api.StreamCreate(&stream, 0) == CUDA_SUCCESS);
}

static void *other_thread(void *arg)
{
    CUdeviceptr p;
    *(CUresult *)arg = api.MemAlloc(&p, 64);
    return NULL;
}

/* The current context is per thread. */
static void test_context_is_per_thread(void)
{
    CUresult r = CUDA_SUCCESS;
    pthread_t t;
    pthread_create(&t, NULL, other_thread, &r);
    pthread_join(t, NULL);
    CHECK(r == CUDA_ERROR_INVALID_CONTEXT);
}

static void test_handles_and_ranges(void)
{
    char junk[64];
    CUevent e;
    CHECK(api.EventRecord((CUevent)junk, stream) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(api.EventCreate(&e, 0) == CUDA_SUCCESS);
    CHECK(api.EventRecord(e, (CUstream)junk) == CUDA_ERROR_INVALID_HANDLE);
    CHECK(api.EventDestroy(e) == CUDA_SUCCESS);
    CHECK(api.EventDestroy(e) == CUDA_ERROR_INVALID_HANDLE);
    CUdeviceptr p;
    CHECK(api.MemAlloc(&p, 64) == CUDA_SUCCESS);
    CHECK(api.MemcpyHtoD(p, junk, 64) == CUDA_SUCCESS);
    CHECK(api.MemcpyHtoD(p + 8, junk, 64) == CUDA_ERROR_INVALID_VALUE);   /* past the end */
    CHECK(api.MemsetD8Async(p, 0, 65, stream) == CUDA_ERROR_INVALID_VALUE);
    CHECK(api.MemFree(p) == CUDA_SUCCESS);
}

static void test_module_images(void)
{
    CUmodule m;
    CUfunction f;
    static const char not_cubin[64] = "// PTX? no: text";
    CHECK(api.ModuleLoadData(&m, not_cubin) == CUDA_ERROR_INVALID_IMAGE);
    void *c80 = cubin_for(80), *c90 = cubin_for(90);
    CHECK(c80 && api.ModuleLoadData(&m, c80) == CUDA_ERROR_NO_BINARY_FOR_GPU);  /* device 9.0 */
    setenv("KBENCH_FAKE_CUDA_DRIVER", "12040", 1);   /* NVRTC 13's CUBIN on an R550 driver */
    CHECK(c90 && api.ModuleLoadData(&m, c90) == CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
    unsetenv("KBENCH_FAKE_CUDA_DRIVER");
    setenv("KBENCH_FAKE_CUDA_ARCH", "86", 1);
    CHECK(api.ModuleLoadData(&m, c80) == CUDA_SUCCESS);   /* 8.0 code runs on 8.6 */
    CHECK(api.ModuleUnload(m) == CUDA_SUCCESS);
    unsetenv("KBENCH_FAKE_CUDA_ARCH");
    CHECK(api.ModuleLoadData(&m, c90) == CUDA_SUCCESS);
    CHECK(api.ModuleGetFunction(&f, m, "k_missing") == CUDA_ERROR_NOT_FOUND);
    CHECK(api.ModuleGetFunction(&f, m, "k_bounded") == CUDA_SUCCESS);
    int v = 0;
    CHECK(api.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, f) == CUDA_SUCCESS && v == 128);
    /* static shared memory from the image, as ptxas reported it (at least the 1 KiB tile) */
    int smem = bounded_res.static_shmem_bytes;
    CHECK(smem >= 1024);
    CHECK_MSG(api.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS && v == smem,
              "%d vs ptxas %d", v, smem);
    CHECK(api.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, f) == CUDA_SUCCESS &&
          v == 48 * 1024 - smem);
    CHECK(api.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_SUCCESS && v == bounded_res.registers);
    CHECK(api.ModuleUnload(m) == CUDA_SUCCESS);
    CHECK(api.FuncGetAttribute(&v, CU_FUNC_ATTRIBUTE_NUM_REGS, f) == CUDA_ERROR_INVALID_HANDLE);
    free(c80);
    free(c90);
}

/* Load the CUBIN built for code on a device of compute capability cc (x10). */
static CUresult load_on(void *cubin, int cc)
{
    char v[16];
    snprintf(v, sizeof v, "%d", cc);
    setenv("KBENCH_FAKE_CUDA_ARCH", v, 1);
    CUmodule m;
    CUresult r = api.ModuleLoadData(&m, cubin);
    if (r == CUDA_SUCCESS)
        api.ModuleUnload(m);
    unsetenv("KBENCH_FAKE_CUDA_ARCH");
    return r;
}

/* An arch-specific CUBIN (sm_90a, sm_100a, sm_120a) loads on exactly its compute capability
 * (CUDA Programming Guide 5.1.2); the plain one on the same major with a minor >= its own.
 * NVRTC's real output: the double reads the `a` from the image, not from a name. */
static void test_arch_specific_images(void)
{
    void *c90 = cubin_for(90), *c90a = cubin_for(1090), *c100 = cubin_for(100), *c100a = cubin_for(1100);
    void *c120 = cubin_for(120), *c120a = cubin_for(1120);
    CHECK(c90 && c90a && c100 && c100a && c120 && c120a);
    CHECK(load_on(c90a, 90) == CUDA_SUCCESS);
    CHECK(load_on(c90a, 100) == CUDA_ERROR_NO_BINARY_FOR_GPU);
    CHECK(load_on(c90, 100) == CUDA_ERROR_NO_BINARY_FOR_GPU);     /* never across majors */
    CHECK(load_on(c100, 100) == CUDA_SUCCESS);
    CHECK(load_on(c100, 103) == CUDA_SUCCESS);                    /* 10.0 code on a 10.3 device */
    CHECK(load_on(c100a, 100) == CUDA_SUCCESS);
    CHECK(load_on(c100a, 103) == CUDA_ERROR_NO_BINARY_FOR_GPU);   /* the `a`: 10.0 exactly */
    CHECK(load_on(c120, 121) == CUDA_SUCCESS);
    CHECK(load_on(c120a, 121) == CUDA_ERROR_NO_BINARY_FOR_GPU);
    CHECK(load_on(c120a, 120) == CUDA_SUCCESS);
    CHECK(load_on(c120, 100) == CUDA_ERROR_NO_BINARY_FOR_GPU);
    free(c90), free(c90a), free(c100), free(c100a), free(c120), free(c120a);
}

static CUmodule mod;
static CUfunction k_bounded, k_dyn, k_block, k_regs, k_args;
static CUdeviceptr buf;

static void load_kernels(void)
{
    void *c90 = cubin_for(90);
    CHECK(c90 && api.ModuleLoadData(&mod, c90) == CUDA_SUCCESS);
    free(c90);
    CHECK(api.ModuleGetFunction(&k_bounded, mod, "k_bounded") == CUDA_SUCCESS);
    CHECK(api.ModuleGetFunction(&k_dyn, mod, "k_dyn") == CUDA_SUCCESS);
    CHECK(api.ModuleGetFunction(&k_block, mod, "kb_block_stream") == CUDA_SUCCESS);
    CHECK(api.ModuleGetFunction(&k_regs, mod, "k_regs") == CUDA_SUCCESS);
    CHECK(api.ModuleGetFunction(&k_args, mod, "k_args") == CUDA_SUCCESS);
    CHECK(api.MemAlloc(&buf, 4096) == CUDA_SUCCESS);
}

static CUresult launch(CUfunction f, unsigned gy, unsigned bx, unsigned smem)
{
    void *params[] = { &buf };
    return api.LaunchKernel(f, 1, gy, 1, bx, 1, 1, smem, stream, params, NULL);
}

static void test_launch_limits(void)
{
    CHECK(launch(k_bounded, 1, 128, 0) == CUDA_SUCCESS);
    CHECK(launch(k_bounded, 1, 256, 0) == CUDA_ERROR_INVALID_VALUE);   /* over __launch_bounds__ */
    CHECK(launch(k_dyn, 1, 1025, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(launch(k_dyn, 70000, 32, 0) == CUDA_ERROR_INVALID_VALUE);     /* grid y <= 65535 */
    CHECK(launch(k_dyn, 1, 32, 64 * 1024) == CUDA_ERROR_INVALID_VALUE); /* no opt-in */
    CHECK(api.FuncSetAttribute(k_dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 300 * 1024) ==
          CUDA_ERROR_INVALID_VALUE);                                   /* over the opt-in limit */
    CHECK(api.FuncSetAttribute(k_dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024) == CUDA_SUCCESS);
    CHECK(launch(k_dyn, 1, 32, 64 * 1024) == CUDA_SUCCESS);
    CHECK(api.StreamSynchronize(stream) == CUDA_SUCCESS);
}

/* cuLaunchKernelEx with k_dyn in clusters of cx x 1 x 1 blocks over a grid of gx. */
static CUresult launch_cluster(unsigned gx, unsigned cx, unsigned bx, unsigned smem)
{
    void *params[] = { &buf };
    CUlaunchAttribute a;
    memset(&a, 0, sizeof a);
    a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    a.value.clusterDim.x = cx, a.value.clusterDim.y = 1, a.value.clusterDim.z = 1;
    CUlaunchConfig c = { gx, 1, 1, bx, 1, 1, smem, stream, &a, 1 };
    return api.LaunchKernelEx(&c, k_dyn, params, NULL);
}

/* The cluster rules of fake_cuda.h, each broken once. */
static void test_cluster_rules(void)
{
    CHECK(api.LaunchKernelEx != NULL);
    setenv("KBENCH_FAKE_CUDA_SMS", "32", 1);
    CHECK(launch_cluster(4, 2, 32, 0) == CUDA_SUCCESS);
    CHECK(launch_cluster(8, 8, 32, 0) == CUDA_SUCCESS);                        /* the portable size */
    CHECK(launch_cluster(3, 2, 32, 0) == CUDA_ERROR_INVALID_CLUSTER_SIZE);     /* grid not a multiple */
    CHECK(launch_cluster(16, 16, 32, 0) == CUDA_ERROR_INVALID_CLUSTER_SIZE);   /* non-portable, not allowed */
    CHECK(api.FuncSetAttribute(k_dyn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 1) == CUDA_SUCCESS);
    CHECK(launch_cluster(16, 16, 32, 0) == CUDA_SUCCESS);
    CHECK(launch_cluster(32, 32, 32, 0) == CUDA_ERROR_INVALID_CLUSTER_SIZE);   /* over 16 even so */
    CHECK(api.FuncSetAttribute(k_dyn, CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED, 0) == CUDA_SUCCESS);
    CHECK(launch_cluster(4, 0, 32, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(launch_cluster(4, 1, 2048, 0) == CUDA_ERROR_INVALID_VALUE);          /* the geometry checks too */
    setenv("KBENCH_FAKE_CUDA_SMS", "4", 1);
    CHECK(launch_cluster(8, 8, 32, 0) == CUDA_ERROR_INVALID_CLUSTER_SIZE);     /* more blocks than SMs */
    CHECK(launch_cluster(8, 4, 32, 0) == CUDA_SUCCESS);
    setenv("KBENCH_FAKE_CUDA_ARCH", "80", 1);
    CHECK(launch_cluster(4, 2, 32, 0) == CUDA_ERROR_INVALID_CLUSTER_SIZE);     /* no clusters before 9.0 */
    CHECK(launch_cluster(4, 1, 32, 0) == CUDA_SUCCESS);                        /* a cluster of one: none */
    /* 12.x has 100 KB of shared memory per SM, 1 KB of it reserved per block */
    setenv("KBENCH_FAKE_CUDA_ARCH", "120", 1);
    CHECK(api.FuncSetAttribute(k_dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 150 * 1024) == CUDA_SUCCESS);
    CHECK(launch_cluster(4, 2, 32, 99 * 1024) == CUDA_SUCCESS);
    CHECK(launch_cluster(4, 2, 32, 99 * 1024 + 16) == CUDA_ERROR_INVALID_CLUSTER_SIZE);
    CHECK(api.FuncSetAttribute(k_dyn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 64 * 1024) == CUDA_SUCCESS);
    unsetenv("KBENCH_FAKE_CUDA_ARCH");
    unsetenv("KBENCH_FAKE_CUDA_SMS");
    CUlaunchAttribute prio;
    memset(&prio, 0, sizeof prio);
    prio.id = CU_LAUNCH_ATTRIBUTE_PRIORITY;
    void *params[] = { &buf };
    CUlaunchConfig c = { 1, 1, 1, 32, 1, 1, 0, stream, &prio, 1 };
    CHECK(api.LaunchKernelEx(&c, k_dyn, params, NULL) == CUDA_ERROR_NOT_SUPPORTED);
    c.attrs = NULL;
    CHECK(api.LaunchKernelEx(&c, k_dyn, params, NULL) == CUDA_ERROR_INVALID_VALUE);
    CHECK(api.LaunchKernelEx(NULL, k_dyn, params, NULL) == CUDA_ERROR_INVALID_VALUE);
    /* captured like any launch */
    CUgraph g = NULL;
    CHECK(api.StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
    setenv("KBENCH_FAKE_CUDA_SMS", "8", 1);
    CHECK(launch_cluster(4, 2, 32, 0) == CUDA_SUCCESS);
    unsetenv("KBENCH_FAKE_CUDA_SMS");
    CHECK(api.StreamEndCapture(stream, &g) == CUDA_SUCCESS && g);
    CHECK(api.GraphDestroy(g) == CUDA_SUCCESS);
    CHECK(api.StreamSynchronize(stream) == CUDA_SUCCESS);
}

static void test_capture_rules(void)
{
    CUgraph g = (CUgraph)1;
    CHECK(api.StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
    CHECK(launch(k_bounded, 1, 128, 0) == CUDA_SUCCESS);
    CHECK(api.StreamSynchronize(stream) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(api.StreamEndCapture(stream, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED && g == NULL);
    CUdeviceptr p;
    CHECK(api.StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
    CHECK(api.MemAlloc(&p, 64) == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    CHECK(api.StreamEndCapture(stream, &g) == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    CHECK(api.StreamSynchronize(stream) == CUDA_SUCCESS);   /* the stream is normal again */
}

static double elapsed_ns(CUevent a, CUevent b)
{
    float ms = -1.f;
    CHECK(api.EventElapsedTime(&ms, a, b) == CUDA_SUCCESS);
    return ms * 1e6;
}

static void test_events_and_clock(void)
{
    CUevent a, b;
    float ms;
    CHECK(api.EventCreate(&a, 0) == CUDA_SUCCESS && api.EventCreate(&b, 0) == CUDA_SUCCESS);
    CHECK(api.EventElapsedTime(&ms, a, b) == CUDA_ERROR_INVALID_HANDLE);   /* never recorded */
    /* idle stream: the window opens at once, so it holds the host's launch cost */
    CHECK(api.EventRecord(a, stream) == CUDA_SUCCESS);
    CHECK(launch(k_bounded, 1, 128, 0) == CUDA_SUCCESS);
    CHECK(api.EventRecord(b, stream) == CUDA_SUCCESS);
    CHECK(api.EventElapsedTime(&ms, a, b) == CUDA_ERROR_NOT_READY);        /* still running */
    CHECK(api.EventSynchronize(b) == CUDA_SUCCESS);
    double want = FAKE_CALL_NS + FAKE_LAUNCH_HOST_NS + 10000 + FAKE_EAGER_GPU_NS;
    double got = elapsed_ns(a, b);
    CHECK_MSG(got > want - 1 && got < want + 1, "%.1f ns, want %.1f", got, want);

    /* behind the blocking kernel: GPU time only */
    int *flag = NULL, *timed_out = NULL;
    CUdeviceptr d_flag, d_to;
    CHECK(api.MemHostAlloc((void **)&flag, 2 * sizeof(int), CU_MEMHOSTALLOC_DEVICEMAP) == CUDA_SUCCESS);
    timed_out = flag + 1;
    CHECK(api.MemHostGetDevicePointer(&d_flag, flag, 0) == CUDA_SUCCESS);
    CHECK(api.MemHostGetDevicePointer(&d_to, timed_out, 0) == CUDA_SUCCESS);
    unsigned long long timeout = 500000000ull;
    void *bp[] = { &d_flag, &d_to, &timeout };
    for (int round = 0; round < 2; round++) {
        setenv("KBENCH_FAKE_CUDA_SLOWDOWN", round ? "2" : "1", 1);
        *flag = *timed_out = 0;
        CHECK(api.LaunchKernel(k_block, 1, 1, 1, 1, 1, 1, 0, stream, bp, NULL) == CUDA_SUCCESS);
        CHECK(api.EventRecord(a, stream) == CUDA_SUCCESS);
        for (int i = 0; i < 3; i++)
            CHECK(launch(k_bounded, 1, 128, 0) == CUDA_SUCCESS);
        CHECK(api.EventRecord(b, stream) == CUDA_SUCCESS);
        *flag = 1;
        CHECK(api.EventSynchronize(b) == CUDA_SUCCESS);
        want = 3 * (10000 + FAKE_EAGER_GPU_NS) * (round ? 2 : 1);
        got = elapsed_ns(a, b);
        CHECK_MSG(got > want - 1 && got < want + 1, "slowdown %d: %.1f ns, want %.1f", round + 1, got, want);
        CHECK(*timed_out == 0);
    }
    unsetenv("KBENCH_FAKE_CUDA_SLOWDOWN");
    /* a flag never set: the kernel gives up after its timeout and says so */
    *flag = *timed_out = 0;
    CHECK(api.LaunchKernel(k_block, 1, 1, 1, 1, 1, 1, 0, stream, bp, NULL) == CUDA_SUCCESS);
    CHECK(api.StreamSynchronize(stream) == CUDA_SUCCESS);
    CHECK(*timed_out == 1);
    CHECK(api.MemFreeHost(flag) == CUDA_SUCCESS);
    api.EventDestroy(a);
    api.EventDestroy(b);
}

/* A graph's first launch includes its upload unless cuGraphUpload did it. */
static void test_graph_upload(void)
{
    CUevent a, b;
    CHECK(api.EventCreate(&a, 0) == CUDA_SUCCESS && api.EventCreate(&b, 0) == CUDA_SUCCESS);
    double t[2];
    for (int upload = 0; upload < 2; upload++) {
        CUgraph g;
        CUgraphExec x;
        CHECK(api.StreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL) == CUDA_SUCCESS);
        for (int i = 0; i < 4; i++)
            CHECK(launch(k_bounded, 1, 128, 0) == CUDA_SUCCESS);
        CHECK(api.StreamEndCapture(stream, &g) == CUDA_SUCCESS);
        CHECK(api.GraphInstantiate(&x, g, 0) == CUDA_SUCCESS);
        if (upload)
            CHECK(api.GraphUpload(x, stream) == CUDA_SUCCESS);
        CHECK(api.StreamSynchronize(stream) == CUDA_SUCCESS);
        CHECK(api.EventRecord(a, stream) == CUDA_SUCCESS);
        CHECK(api.GraphLaunch(x, stream) == CUDA_SUCCESS);
        CHECK(api.EventRecord(b, stream) == CUDA_SUCCESS);
        CHECK(api.EventSynchronize(b) == CUDA_SUCCESS);
        t[upload] = elapsed_ns(a, b);
        api.GraphExecDestroy(x);
        api.GraphDestroy(g);
    }
    double window = FAKE_CALL_NS + FAKE_LAUNCH_HOST_NS + 4 * (10000 + FAKE_GRAPH_NODE_NS);
    CHECK_MSG(t[1] > window - 1 && t[1] < window + 1, "%.1f", t[1]);
    CHECK_MSG(t[0] > t[1] + FAKE_UPLOAD_NS - 1 && t[0] < t[1] + FAKE_UPLOAD_NS + 1, "%.1f vs %.1f", t[0], t[1]);
    api.EventDestroy(a);
    api.EventDestroy(b);
}

/* The double's virtual host clock [ns] (fake_cuda_host_ns). */
static double host_ns(void)
{
    double (*fn)(void) = NULL;
    *(void **)&fn = dlsym(api.lib, "fake_cuda_host_ns");
    CHECK(fn != NULL);
    return fn ? fn() : 0;
}

/* Registers: a block needs registers x threads (per warp, in units of 256) <= 64K
 * (CUDA C++ Programming Guide, compute capabilities table: 64K 32-bit registers per
 * block; CUDA Occupancy Calculator: register allocation unit 256, per warp); more is
 * CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. */
static void test_register_limit(void)
{
    CHECK_MSG(regs_res.registers > 64, "k_regs has %d registers", regs_res.registers);
    CUdeviceptr big;
    CHECK(api.MemAlloc(&big, 96 * 1024 * sizeof(float)) == CUDA_SUCCESS);
    void *params[] = { &big };
    CHECK(api.LaunchKernel(k_regs, 1, 1, 1, 1024, 1, 1, 0, stream, params, NULL) ==
          CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES);
    CHECK(api.LaunchKernel(k_regs, 1, 1, 1, 256, 1, 1, 0, stream, params, NULL) == CUDA_SUCCESS);
    CHECK(api.StreamSynchronize(stream) == CUDA_SUCCESS);
    CHECK(api.MemFree(big) == CUDA_SUCCESS);
}

/* Parameters: kernelParams holds one pointer per parameter of the image, each read for the
 * parameter's size (a NULL one is refused); extra's buffer must be the image's parameter
 * size; both at once is INVALID_VALUE (cuLaunchKernel's documentation). */
static void test_parameters(void)
{
    int n = 3;
    double d = 2.5;
    void *ok[] = { &buf, &n, &d }, *missing[] = { &buf, &n, NULL };
    CHECK(api.LaunchKernel(k_args, 1, 1, 1, 1, 1, 1, 0, stream, ok, NULL) == CUDA_SUCCESS);
    CHECK(api.LaunchKernel(k_args, 1, 1, 1, 1, 1, 1, 0, stream, missing, NULL) == CUDA_ERROR_INVALID_VALUE);
    /* the packed buffer: pointer at 0, int at 8, double at 16: 24 bytes */
    unsigned char packed[24];
    size_t size = sizeof packed, short_size = 12;
    void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &size, CU_LAUNCH_PARAM_END };
    void *wrong[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, packed, CU_LAUNCH_PARAM_BUFFER_SIZE, &short_size,
                      CU_LAUNCH_PARAM_END };
    CHECK(api.LaunchKernel(k_args, 1, 1, 1, 1, 1, 1, 0, stream, NULL, extra) == CUDA_SUCCESS);
    CHECK(api.LaunchKernel(k_args, 1, 1, 1, 1, 1, 1, 0, stream, NULL, wrong) == CUDA_ERROR_INVALID_VALUE);
    CHECK(api.LaunchKernel(k_args, 1, 1, 1, 1, 1, 1, 0, stream, ok, extra) == CUDA_ERROR_INVALID_VALUE);
    CHECK(api.StreamSynchronize(stream) == CUDA_SUCCESS);
}

/* cuMemHostAlloc takes PORTABLE | DEVICEMAP | WRITECOMBINED only; a device pointer exists
 * only for a DEVICEMAP allocation (CU_MEMHOSTALLOC_DEVICEMAP: "cuMemHostGetDevicePointer()
 * may be called on the host pointer"). */
static void test_host_alloc_flags(void)
{
    void *h = NULL;
    CUdeviceptr d;
    CHECK(api.MemHostAlloc(&h, 64, 8) == CUDA_ERROR_INVALID_VALUE);
    CHECK(api.MemHostAlloc(&h, 64, CU_MEMHOSTALLOC_PORTABLE) == CUDA_SUCCESS);
    CHECK(api.MemHostGetDevicePointer(&d, h, 0) == CUDA_ERROR_INVALID_VALUE);
    CHECK(api.MemFreeHost(h) == CUDA_SUCCESS);
    CHECK(api.MemHostAlloc(&h, 64, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_WRITECOMBINED) == CUDA_SUCCESS);
    CHECK(api.MemHostGetDevicePointer(&d, h, 0) == CUDA_SUCCESS);
    CHECK(api.MemFreeHost(h) == CUDA_SUCCESS);
}

/* Hold the stream with the blocking kernel whose flag the host never sets. */
static int *hold_forever(void)
{
    int *flag = NULL;
    CUdeviceptr d_flag, d_to;
    CHECK(api.MemHostAlloc((void **)&flag, 2 * sizeof(int), CU_MEMHOSTALLOC_DEVICEMAP) == CUDA_SUCCESS);
    flag[0] = flag[1] = 0;
    CHECK(api.MemHostGetDevicePointer(&d_flag, flag, 0) == CUDA_SUCCESS);
    CHECK(api.MemHostGetDevicePointer(&d_to, flag + 1, 0) == CUDA_SUCCESS);
    unsigned long long timeout = 500000000ull;
    void *bp[] = { &d_flag, &d_to, &timeout };
    CHECK(api.LaunchKernel(k_block, 1, 1, 1, 1, 1, 1, 0, stream, bp, NULL) == CUDA_SUCCESS);
    return flag;
}

/* A synchronous upload runs on the legacy stream, which waits for every blocking stream
 * (CUDA Driver API, "Stream synchronization behavior"): behind a held stream it waits until
 * the blocking kernel gives up. */
static void test_sync_upload_waits_for_a_held_stream(void)
{
    int *flag = hold_forever();
    char bytes[64] = { 0 };
    double t0 = host_ns();
    CHECK(api.MemcpyHtoD(buf, bytes, sizeof bytes) == CUDA_SUCCESS);
    CHECK_MSG(host_ns() - t0 >= 5e8 && flag[1] == 1, "the upload returned after %.0f ns", host_ns() - t0);
    CHECK(api.StreamSynchronize(stream) == CUDA_SUCCESS);
    CHECK(api.MemFreeHost(flag) == CUDA_SUCCESS);
}

/* Behind a held stream the driver queues about a thousand launches, then cuLaunchKernel
 * itself blocks (FAKE_QUEUE_DEPTH; nvbench's blocking_kernel warns to queue few): the host
 * then waits until the blocking kernel gives up. */
static void test_launch_queue_is_bounded(void)
{
    int *flag = hold_forever();
    double t0 = host_ns();
    int i = 0;
    for (; i < FAKE_QUEUE_DEPTH + 8 && host_ns() - t0 < 5e8; i++)
        CHECK(launch(k_bounded, 1, 128, 0) == CUDA_SUCCESS);
    CHECK_MSG(i > FAKE_QUEUE_DEPTH - 8 && i <= FAKE_QUEUE_DEPTH + 1 && flag[1] == 1,
              "launch %d blocked the host (timed out: %d)", i, flag[1]);
    CHECK(api.StreamSynchronize(stream) == CUDA_SUCCESS);
    CHECK(api.MemFreeHost(flag) == CUDA_SUCCESS);
}

/* KBENCH_FAKE_CUDA_FAULT=N: the N-th launch faults; the fault is sticky. Last: it kills the context. */
static void test_fault_injection(void)
{
    setenv("KBENCH_FAKE_CUDA_FAULT", "3000", 1);   /* counted from the first launch of the process */
    int r = CUDA_SUCCESS, i = 0;
    while (i < 5000 && (r = launch(k_bounded, 1, 128, 0)) == CUDA_SUCCESS && (r = api.StreamSynchronize(stream)) == CUDA_SUCCESS)
        i++;
    CHECK_MSG(r == CUDA_ERROR_ILLEGAL_ADDRESS, "%d after %d", r, i);
    CUdeviceptr p;
    CHECK(api.MemAlloc(&p, 64) == CUDA_ERROR_ILLEGAL_ADDRESS);
    unsetenv("KBENCH_FAKE_CUDA_FAULT");
}

int main(void)
{
    const char *fake = getenv("KBENCH_FAKE_LIBCUDA");
    char err[512];
    if (!fake || access(fake, R_OK) != 0) {
        fprintf(stderr, "KBENCH_FAKE_LIBCUDA does not name the built driver double (run through ctest)\n");
        return 1;
    }
    setenv("KBENCH_LIBCUDA", fake, 1);
    if (kb_cuda_api_load(&api, err, sizeof err) != KB_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    RUN(test_init_and_context);
    RUN(test_context_is_per_thread);
    RUN(test_handles_and_ranges);
    RUN(test_module_images);
    RUN(test_arch_specific_images);
    load_kernels();
    RUN(test_launch_limits);
    RUN(test_cluster_rules);
    RUN(test_capture_rules);
    RUN(test_events_and_clock);
    RUN(test_graph_upload);
    RUN(test_register_limit);
    RUN(test_parameters);
    RUN(test_host_alloc_flags);
    RUN(test_sync_upload_waits_for_a_held_stream);
    RUN(test_launch_queue_is_bounded);
    RUN(test_fault_injection);
    kb_cuda_api_unload(&api);
    TEST_MAIN_END();
}
