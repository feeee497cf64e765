/* fake_launch.c - the driver double's modules, functions, launches and graphs (contract:
 * fake_cuda.h). */
#include "fake_state.h"

#include <string.h>

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
    else if (mod->img.specific ? mod->img.sm != dev : mod->img.sm / 10 != dev / 10 || mod->img.sm % 10 > dev % 10)
        r = CUDA_ERROR_NO_BINARY_FOR_GPU;   /* an `a` CUBIN runs on exactly its cc (Programming Guide 5.1.2) */
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
    obj_free_functions_of(m);   /* its functions go with it */
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
    case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED: *v = fn->nonportable; break;
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
    if (a == CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED) {
        if (v != 0 && v != 1)
            return CUDA_ERROR_INVALID_VALUE;
        fn->nonportable = v;
        return CUDA_SUCCESS;
    }
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

/* Registers: 64K 32-bit registers per block (CUDA C++ Programming Guide, technical
 * specifications per compute capability), allocated per warp in units of 256 (CUDA
 * Occupancy Calculator); more is CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES. */
static CUresult check_registers(const ffunc *fn, unsigned long long threads)
{
    if (fn->e->regs <= 0)
        return CUDA_SUCCESS;
    unsigned long long per_warp = ((unsigned long long)fn->e->regs * 32 + 255) / 256 * 256;
    return (threads + 31) / 32 * per_warp > 65536 ? CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES : CUDA_SUCCESS;
}

/* Parameters (cuLaunchKernel): kernelParams holds one pointer per parameter of the image,
 * from which the driver copies the parameter's size (the copy reads what a real driver
 * reads: a short value is read past its end); extra's buffer must hold the image's parameter
 * bytes (*assumed* exact: the size the image declares); never both. */
static CUresult check_params(const ffunc *fn, void **params, void **extra)
{
    const fake_entry *e = fn->e;
    unsigned char copy[4096];
    if (params && extra)
        return CUDA_ERROR_INVALID_VALUE;
    if (!params && !extra)
        return e->n_params > 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
    if (params) {
        for (int i = 0; i < e->n_params && i < FAKE_MAX_PARAMS; i++) {
            if (!params[i] || e->param_size[i] > (int)sizeof copy)
                return CUDA_ERROR_INVALID_VALUE;
            memcpy(copy, params[i], (size_t)e->param_size[i]);
        }
        return CUDA_SUCCESS;
    }
    const size_t *size = NULL;
    const void *buffer = NULL;
    for (int i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            buffer = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            size = extra[i + 1];
        else
            return CUDA_ERROR_INVALID_VALUE;
    }
    if (!buffer || !size || (e->param_bytes >= 0 && *size != (size_t)e->param_bytes))
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* The blocking kernel holds s from now on. */
static void block(fstream *s, void **params)
{
    s->blocked = 1;
    s->block_start = s->tail > host_ns ? s->tail : host_ns;
    s->flag = *(volatile int **)params[0];
    s->wait_value_mode = 0;
    s->timed_out = *(int **)params[1];
    s->timeout_ns = (double)*(unsigned long long *)params[2];
    s->n_pending = 0;
}

/* The checks every launch of fn makes (geometry, registers, parameters). */
static CUresult check_launch(const ffunc *fn, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                             unsigned bz, unsigned shmem, void **params, void **extra)
{
    CUresult r = check_geometry(fn, gx, gy, gz, bx, by, bz, shmem);
    if (r == CUDA_SUCCESS)
        r = check_registers(fn, (unsigned long long)bx * by * bz);
    if (r == CUDA_SUCCESS)
        r = check_params(fn, params, extra);
    return r;
}

/* A launch the checks passed: captured, the blocking kernel, or queued work. */
static CUresult enqueue_launch(const ffunc *fn, fstream *s, void **params)
{
    if (s->capturing) {
        s->cap_ns += gpu(kernel_ns() + FAKE_GRAPH_NODE_NS);
        return CUDA_SUCCESS;
    }
    if (!strcmp(fn->e->name, FAKE_BLOCK_ENTRY) && params) {
        block(s, params);
        return CUDA_SUCCESS;
    }
    if (++launches == fault_at())
        fault_pending = CUDA_ERROR_ILLEGAL_ADDRESS;
    CUresult tm = params ? tmap_param_fault(fn->e, params) : CUDA_SUCCESS;
    if (tm != CUDA_SUCCESS && !fault_pending)
        fault_pending = tm;   /* the kernel runs and faults on the map it was given */
    enqueue(s, gpu(kernel_ns() + FAKE_EAGER_GPU_NS), NULL);
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                        unsigned bz, unsigned shmem, CUstream h, void **params, void **extra)
{
    NEED_CTX();
    host_launch();
    fstream *s = stream_of(h);
    if (!obj_ok(f, K_FUNC) || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    const ffunc *fn = (const ffunc *)f;
    CUresult r = check_launch(fn, gx, gy, gz, bx, by, bz, shmem, params, extra);
    if (r)
        return r;
    return enqueue_launch(fn, s, params);
}

/* Resident blocks of fn per SM at this launch (threads, registers, shared memory); 0 when
 * one block does not fit. Per compute capability (CUDA Programming Guide 5.1, Tables 30
 * and 31): 64 K registers, 228 KB of shared memory (100 KB on 12.x) with 1 KB reserved per
 * block, 2048 resident threads (1536 on 12.x). */
static int blocks_per_sm(const ffunc *fn, unsigned threads, unsigned shmem)
{
    int cc = arch(), regs = fn->e->regs < 0 ? 32 : fn->e->regs;
    long smem_sm = cc / 10 == 12 ? 100 * 1024 : 228 * 1024, threads_sm = cc / 10 == 12 ? 1536 : 2048;
    long per_block = (long)shmem + fn->e->static_shmem + 1024, b = threads_sm / (long)threads;
    if (65536L / ((long)regs * threads) < b)
        b = 65536L / ((long)regs * threads);
    if (smem_sm / per_block < b)
        b = smem_sm / per_block;
    return (int)b;
}

/* The cluster rules (contract: fake_cuda.h). */
static CUresult check_cluster(const ffunc *fn, const CUlaunchConfig *c, const unsigned cl[3])
{
    unsigned n = cl[0] * cl[1] * cl[2];
    if (n == 1)
        return CUDA_SUCCESS;
    if (arch() < 90)
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    if (c->gridDimX % cl[0] || c->gridDimY % cl[1] || c->gridDimZ % cl[2])
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    if (n > (fn->nonportable ? 16u : 8u) || n > (unsigned)sm_count())
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;
    if (blocks_per_sm(fn, c->blockDimX * c->blockDimY * c->blockDimZ, c->sharedMemBytes) < 1)
        return CUDA_ERROR_INVALID_CLUSTER_SIZE;   /* no cluster of it can be resident */
    return CUDA_SUCCESS;
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    NEED_CTX();
    host_launch();
    if (!c || (c->numAttrs && !c->attrs))
        return CUDA_ERROR_INVALID_VALUE;
    fstream *s = stream_of(c->hStream);
    if (!obj_ok(f, K_FUNC) || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    const ffunc *fn = (const ffunc *)f;
    CUresult r = check_launch(fn, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
                              c->sharedMemBytes, params, extra);
    if (r)
        return r;
    unsigned cl[3] = { 1, 1, 1 };
    for (unsigned i = 0; i < c->numAttrs; i++) {
        const CUlaunchAttribute *a = &c->attrs[i];
        if (a->id == CU_LAUNCH_ATTRIBUTE_IGNORE)
            continue;
        if (a->id != CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION)
            return CUDA_ERROR_NOT_SUPPORTED;   /* the double models no other attribute */
        cl[0] = a->value.clusterDim.x, cl[1] = a->value.clusterDim.y, cl[2] = a->value.clusterDim.z;
        if (!cl[0] || !cl[1] || !cl[2])
            return CUDA_ERROR_INVALID_VALUE;
    }
    if ((r = check_cluster(fn, c, cl)) != CUDA_SUCCESS)
        return r;
    return enqueue_launch(fn, s, params);
}

/* ---- graphs ---- */

CUresult cuStreamBeginCapture(CUstream h, CUstreamCaptureMode m)
{
    NEED_CTX();
    fstream *s = stream_of(h);
    if (!s || s == &legacy)
        return s ? CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED : CUDA_ERROR_INVALID_HANDLE;
    if ((unsigned)m > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    if (s->capturing)
        return CUDA_ERROR_ILLEGAL_STATE;
    s->capturing = 1;
    s->cap_mode = (int)m;
    s->invalidated = 0;
    s->cap_ns = 0;
    s->n_host = 0;
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
    gr->n_host = s->n_host;
    memcpy(gr->host_fn, s->host_fn, sizeof gr->host_fn);
    memcpy(gr->host_data, s->host_data, sizeof gr->host_data);
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
    x->g = *(fgraph *)g;
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
    host_launch();
    fstream *s = stream_of(h);
    if (!obj_ok(e, K_EXEC) || !s)
        return CUDA_ERROR_INVALID_HANDLE;
    fexec *x = (fexec *)e;
    if (++launches == fault_at())
        fault_pending = CUDA_ERROR_ILLEGAL_ADDRESS;
    enqueue(s, x->g.gpu_ns + (x->uploaded ? 0 : gpu(FAKE_UPLOAD_NS)), NULL);
    x->uploaded = 1;
    for (int i = 0; i < x->g.n_host; i++)
        x->g.host_fn[i](x->g.host_data[i]);   /* the double's work is done when it is enqueued */
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

/* A host function: run now (the double's stream work is done when enqueued), or, while the
 * stream captures, a node of the graph, run at each cuGraphLaunch. */
CUresult cuLaunchHostFunc(CUstream h, CUhostFn fn, void *data)
{
    NEED_CTX();
    fstream *s = stream_of(h);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    if (!s->capturing) {
        fn(data);
        enqueue(s, 0, NULL);
        return CUDA_SUCCESS;
    }
    if (s->n_host == FAKE_HOST_NODES)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->host_fn[s->n_host] = fn;
    s->host_data[s->n_host++] = data;
    s->cap_ns += gpu(FAKE_GRAPH_NODE_NS);
    return CUDA_SUCCESS;
}

CUresult cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *status)
{
    NEED_CTX();
    fstream *s = stream_of(h);
    if (!s)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!status)
        return CUDA_ERROR_INVALID_VALUE;
    *status = !s->capturing ? CU_STREAM_CAPTURE_STATUS_NONE
              : s->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    return CUDA_SUCCESS;
}

/* Test hook for the NCCL double: the mode of h's capture under way, -1 when it does not capture. */
int fakeCudaCaptureMode(CUstream h);
int fakeCudaCaptureMode(CUstream h)
{
    fstream *s = stream_of(h);
    return s && s->capturing ? s->cap_mode : -1;
}
