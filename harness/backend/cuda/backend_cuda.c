/* backend_cuda.c - the real backend: the CUDA driver API loaded with dlopen
 * (cuda_api.h), NVRTC for CUBINs (nvrtc.h), CUDA events for timing and stream
 * capture into CUDA Graphs. Implements kb_backend (backend.h).
 *
 * Threading: a context is used from the thread that created it (init makes the
 * device's primary context current on that thread only).
 *
 * Ordering: all work goes to one stream created with CU_STREAM_DEFAULT, i.e. a
 * blocking stream that synchronises with the legacy default stream. The
 * synchronous cuMemcpyHtoD/DtoH run on the legacy stream, so an upload is
 * complete before any later launch, and a download waits for every earlier
 * launch and fill, without extra synchronisation here.
 *
 * build and toolchain_id accept a NULL context: NVRTC needs no driver, so
 * kernels can be compiled for any --arch on a machine without a GPU.
 */
#include "backend/cuda/cuda_block.h"
#include "backend/cuda/cuda_build.h"
#include "backend/cuda/cuda_ctx.h"
#include "backend/cuda/cuda_graph.h"
#include "backend/cuda/cuda_tmap.h"
#include "backend/cuda/cuda_vendor.h"
#include "core/fsutil.h"
#include "backend/cuda/kb_nvrtc.h"
#include "backend/cuda/kb_nvrtc_lib.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KB_CUDA_MAX_ARGS 64

static void set_err(kb_backend_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void set_err(kb_backend_ctx *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->err, sizeof x->err, fmt, ap);
    va_end(ap);
}

/* ---- init / fini ---- */

static void cuda_fini(kb_backend_ctx *x)
{
    if (!x)
        return;
    /* Reverse order of init; errors are ignored, there is nothing left to do. */
    kb_cuda_vendor_close(x);
    if (x->api.lib) {
        kb_cuda_block_free(x);
        if (x->ev_stop) x->api.EventDestroy(x->ev_stop);
        if (x->ev_start) x->api.EventDestroy(x->ev_start);
        if (x->stream) x->api.StreamDestroy(x->stream);
        if (x->ctx) {
            x->api.CtxSetCurrent(NULL);
            x->api.DevicePrimaryCtxRelease(x->dev);
        }
    }
    kb_nvml_close(x->nvml);
    kb_cuda_api_unload(&x->api);
    free(x);
}

/* The architecture kernels are compiled for: --arch when given, else the newest plain
 * target of the table whose CUBIN loads on the device (its own cc, or an older minor for a
 * cc the table lacks, e.g. sm_86 for an 8.7 device). Refused before any case, with the
 * reason, when the CUBIN would not load here (an `a` target of another cc, a newer major)
 * or when kbench has no target for the device. */
static kb_status choose_target(kb_backend_ctx *x, int sm_override)
{
    kb_device_info *d = &x->info;
    char why[512];
    if (sm_override > 0) {
        if (!kb_arch_runs_on(sm_override, d->sm, why, sizeof why)) {
            set_err(x, "--arch %s: %s", kb_arch_name(sm_override), why);
            return KB_ERR_INPUT;
        }
        d->target_sm = sm_override;
        return KB_OK;
    }
    for (int i = kb_n_archs - 1; i >= 0; i--)
        if (!kb_archs[i].specific && kb_arch_runs_on(kb_archs[i].code, d->sm, why, sizeof why)) {
            d->target_sm = kb_archs[i].code;
            return KB_OK;
        }
    set_err(x, "%s is compute capability %d.%d: kbench has no architecture whose CUBIN loads on it (%s)", d->name,
            d->sm / 10, d->sm % 10, kb_arch_list(why, sizeof why, NULL, NULL));
    return KB_ERR_SETUP;
}

static kb_status query_info(kb_backend_ctx *x, int sm_override)
{
    kb_device_info *d = &x->info;
    kb_status st;
    CUuuid uuid;
    int major = 0, minor = 0;
    const struct { CUdevice_attribute attr; int *out; } attrs[] = {
        { CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major },
        { CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor },
        { CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &d->sm_count },
        { CU_DEVICE_ATTRIBUTE_CLOCK_RATE, &d->clock_khz },
        { CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, &d->mem_clock_khz },
        { CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, &d->mem_bus_bits },
        { CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, &d->l2_bytes },
        { CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &d->max_shmem_per_block_optin },
    };

    memset(d, 0, sizeof *d);
    if ((st = CU(x, x->api.DeviceGetName(d->name, (int)sizeof d->name, x->dev))) != KB_OK)
        return st;
    if ((st = CU(x, x->api.DeviceGetUuid(&uuid, x->dev))) != KB_OK)
        return st;
    kb_cuda_format_uuid((const unsigned char *)uuid.bytes, d->uuid, sizeof d->uuid);
    if ((st = CU(x, x->api.DeviceGetPCIBusId(d->pci_bus_id, (int)sizeof d->pci_bus_id, x->dev))) != KB_OK)
        return st;
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if ((st = CU(x, x->api.DeviceGetAttribute(attrs[i].out, attrs[i].attr, x->dev))) != KB_OK)
            return st;
    if ((st = CU(x, x->api.DeviceTotalMem(&d->total_mem_bytes, x->dev))) != KB_OK)
        return st;
    d->sm = major * 10 + minor;   /* peaks, devices and records keep the device's own */
    d->caps = kb_backend_cuda.caps;
    d->driver_version = x->driver_version;
    return choose_target(x, sm_override);
}

/* Choose the NVRTC this driver can load CUBINs of; when none fits the device is still
 * described (kbench devices shows why) but marked unusable, and run stops with exit 3. */
static void choose_nvrtc(kb_backend_ctx *x)
{
    kb_device_info *d = &x->info;
    char note[sizeof d->toolchain_note - 64];
    if (kb_nvrtc_lib_select(x->driver_version, note, sizeof note) == KB_OK) {
        snprintf(d->toolchain_note, sizeof d->toolchain_note, "%s; its CUBINs load on this driver", note);
        return;
    }
    d->toolchain_unusable = 1;
    snprintf(d->toolchain_note, sizeof d->toolchain_note, "%s", note);
}

/* --arch (or the device's own target) must be one the chosen NVRTC compiles for, read at
 * run time (nvrtcGetSupportedArchs): --arch otherwise is KB_ERR_INPUT with NVRTC's list; the
 * device's own otherwise leaves the device described but its toolchain unusable (run stops
 * with exit 3 and the note, `kbench devices` shows it). */
static kb_status check_nvrtc_arch(kb_backend_ctx *x, int sm_override)
{
    char why[768];
    kb_device_info *d = &x->info;
    if (d->toolchain_unusable || kb_nvrtc_supports(d->target_sm, why, sizeof why) != 0)
        return KB_OK;   /* no usable NVRTC: run stops with the toolchain note instead */
    if (sm_override) {
        set_err(x, "--arch %s: %s", kb_arch_name(d->target_sm), why);
        return KB_ERR_INPUT;
    }
    d->toolchain_unusable = 1;
    snprintf(d->toolchain_note, sizeof d->toolchain_note, "%.400s (the device's own architecture)", why);
    return KB_OK;
}

static kb_status cuda_init(const kb_backend_opts *o, kb_backend_ctx **out, char *err, size_t errlen)
{
    kb_status st;
    int count = 0;
    CUresult r;

    *out = NULL;
    kb_backend_ctx *x = calloc(1, sizeof *x);
    if (!x) {
        snprintf(err, errlen, "cuda: out of memory");
        return KB_ERR_OOM;
    }
    if ((st = kb_cuda_api_load(&x->api, x->err, sizeof x->err)) != KB_OK)
        goto fail;
    if ((st = CU(x, r = x->api.Init(0))) != KB_OK) {
        /* The two ways a machine without a GPU answers: say it in words. */
        char why[sizeof x->err];
        memcpy(why, x->err, sizeof why);
        if (r == CUDA_ERROR_NO_DEVICE)
            set_err(x, "no CUDA device found (%s)", why);
        else if (r == CUDA_ERROR_STUB_LIBRARY)
            set_err(x, "no CUDA driver found: the toolkit's stub libcuda was loaded (%s)", why);
        goto fail;
    }
    if ((st = CU(x, x->api.DriverGetVersion(&x->driver_version))) != KB_OK)
        goto fail;
    if ((st = CU(x, x->api.DeviceGetCount(&count))) != KB_OK)
        goto fail;
    if (count == 0) {
        set_err(x, "no CUDA device found");
        st = KB_ERR_SETUP;
        goto fail;
    }
    if (o->device_index < 0 || o->device_index >= count) {
        set_err(x, "CUDA device %d not found (%d device%s present)", o->device_index, count,
                count == 1 ? "" : "s");
        st = KB_ERR_SETUP;
        goto fail;
    }
    if ((st = CU(x, x->api.DeviceGet(&x->dev, o->device_index))) != KB_OK)
        goto fail;
    /* The primary context is the one the runtime API and libraries such as
     * cuBLASLt share, so kbench's allocations are usable by them. */
    if ((st = CU(x, x->api.DevicePrimaryCtxRetain(&x->ctx, x->dev))) != KB_OK) {
        x->ctx = NULL;
        goto fail;
    }
    if ((st = CU(x, x->api.CtxSetCurrent(x->ctx))) != KB_OK)
        goto fail;
    if ((st = CU(x, x->api.StreamCreate(&x->stream, CU_STREAM_DEFAULT))) != KB_OK)
        goto fail;
    /* CU_EVENT_DEFAULT: timing enabled (DISABLE_TIMING would make elapsed time fail). */
    if ((st = CU(x, x->api.EventCreate(&x->ev_start, CU_EVENT_DEFAULT))) != KB_OK)
        goto fail;
    if ((st = CU(x, x->api.EventCreate(&x->ev_stop, CU_EVENT_DEFAULT))) != KB_OK)
        goto fail;
    if ((st = query_info(x, o->sm_override)) != KB_OK)
        goto fail;
    choose_nvrtc(x);
    if ((st = check_nvrtc_arch(x, o->sm_override)) != KB_OK)
        goto fail;
    kb_cuda_vendor_open(x);   /* optional: a library that does not load drops its cap */
    kb_cuda_tmap_open(x);     /* optional: no TMA on this device or driver drops KB_CAP_TMA */
    /* CUDA's and NVML's PCI bus ids agree; the UUID is the fallback */
    if (!(x->nvml = kb_nvml_open(x->info.pci_bus_id, x->info.uuid))) {
        set_err(x, "cuda: out of memory");
        st = KB_ERR_OOM;
        goto fail;
    }
    /* under MIG, cuDeviceGetUuid gives the instance's UUID, which NVML prints "MIG-..." */
    if (kb_nvml_mig_enabled(x->nvml) && !strncmp(x->info.uuid, "GPU-", 4))
        memcpy(x->info.uuid, "MIG-", 4);
    x->err[0] = 0;
    *out = x;
    return KB_OK;
fail:
    snprintf(err, errlen, "%s", x->err);
    cuda_fini(x);
    return st;
}

static const char *cuda_last_error(kb_backend_ctx *x)
{
    return x ? x->err : "cuda: no backend context";
}

static kb_status cuda_device_info(kb_backend_ctx *x, kb_device_info *out)
{
    *out = x->info;
    return KB_OK;
}

/* ---- build / load ---- */

static kb_status cuda_load(kb_backend_ctx *x, const char *artifact_path, kb_module **out)
{
    kb_status st;
    char *image = NULL;
    kb_module *m = NULL;

    *out = NULL;
    if (kb_fs_read_all(artifact_path, &image, NULL) != KB_OK) {
        set_err(x, "cuda: cannot read %s: %s", artifact_path, strerror(errno));
        return KB_ERR_IO;
    }
    if (!(m = calloc(1, sizeof *m))) {
        set_err(x, "cuda: out of memory");
        st = KB_ERR_OOM;
        goto fail;
    }
    if ((st = CU(x, x->api.ModuleLoadData(&m->mod, image))) != KB_OK) {
        /* A CUBIN from an NVRTC newer than the driver is the usual cause: say so. */
        int major = 0, minor = 0;
        if (st == KB_ERR_COMPILE && kb_nvrtc_version(&major, &minor) == 0 &&
            x->driver_version < major * 1000 + minor * 10) {
            size_t len = strlen(x->err);
            snprintf(x->err + len, sizeof x->err - len,
                     " (the driver supports CUDA %d.%d, older than NVRTC %d.%d that built %s)",
                     x->driver_version / 1000, x->driver_version % 1000 / 10, major, minor,
                     artifact_path);
        }
        free(m);
        m = NULL;
        goto fail;
    }
    *out = m;
    st = KB_OK;
fail:
    free(image);
    return st;
}

static void cuda_unload(kb_backend_ctx *x, kb_module *m)
{
    if (!m)
        return;
    for (int i = 0; i < m->n_fns; i++)
        free(m->fns[i].name);
    x->api.ModuleUnload(m->mod);
    free(m);
}

/* Look entry up in m; *slot is its cache slot, or NULL when the cache is full. */
static kb_status get_fn(kb_backend_ctx *x, kb_module *m, const char *entry, CUfunction *fn, fn_slot **slot)
{
    kb_status st;
    *slot = NULL;
    for (int i = 0; i < m->n_fns; i++)
        if (strcmp(m->fns[i].name, entry) == 0) {
            *fn = m->fns[i].fn;
            *slot = &m->fns[i];
            return KB_OK;
        }
    if ((st = CU(x, x->api.ModuleGetFunction(fn, m->mod, entry))) != KB_OK)
        return st;
    if (m->n_fns < KB_CUDA_FN_SLOTS) {
        fn_slot *s = &m->fns[m->n_fns];
        if ((st = CU(x, x->api.FuncGetAttribute(&s->dyn_smem_bytes,
                                                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, *fn))) != KB_OK)
            return st;
        if ((s->name = strdup(entry)) != NULL) {
            s->fn = *fn;
            m->n_fns++;
            *slot = s;
        }
    }
    return KB_OK;
}

static kb_status cuda_resources(kb_backend_ctx *x, kb_module *m, const char *entry, kb_resources *out)
{
    kb_status st;
    CUfunction fn;
    fn_slot *slot;

    out->registers = out->spill_store_bytes = out->spill_load_bytes = -1;
    out->stack_bytes = out->static_shmem_bytes = out->max_threads = -1;
    if ((st = get_fn(x, m, entry, &fn, &slot)) != KB_OK)
        return st;
    /* The driver does not report spills (only the ptxas log does): they stay -1.
     * LOCAL_SIZE_BYTES is the per-thread local memory, i.e. the stack frame,
     * which includes any spill slots. */
    const struct { CUfunction_attribute attr; int *out; } attrs[] = {
        { CU_FUNC_ATTRIBUTE_NUM_REGS, &out->registers },
        { CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &out->stack_bytes },
        { CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &out->static_shmem_bytes },
        { CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &out->max_threads },
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
        if ((st = CU(x, x->api.FuncGetAttribute(attrs[i].out, attrs[i].attr, fn))) != KB_OK)
            return st;
    return KB_OK;
}

/* ---- memory ---- */

static kb_status cuda_alloc(kb_backend_ctx *x, size_t bytes, kb_dptr *out)
{
    CUdeviceptr p = 0;
    /* cuMemAlloc rejects 0 bytes; an empty buffer still needs a distinct handle. */
    kb_status st = CU(x, x->api.MemAlloc(&p, bytes ? bytes : 1));
    *out = st == KB_OK ? (kb_dptr)p : 0;
    return st;
}

static void cuda_free(kb_backend_ctx *x, kb_dptr p)
{
    if (p)
        x->api.MemFree((CUdeviceptr)p);
}

static kb_status cuda_upload(kb_backend_ctx *x, kb_dptr dst, const void *src, size_t bytes)
{
    return bytes ? CU(x, x->api.MemcpyHtoD((CUdeviceptr)dst, src, bytes)) : KB_OK;
}

static kb_status cuda_download(kb_backend_ctx *x, void *dst, kb_dptr src, size_t bytes)
{
    return bytes ? CU(x, x->api.MemcpyDtoH(dst, (CUdeviceptr)src, bytes)) : KB_OK;
}

static kb_status cuda_fill(kb_backend_ctx *x, kb_dptr dst, uint8_t byte, size_t bytes)
{
    return bytes ? CU(x, x->api.MemsetD8Async((CUdeviceptr)dst, byte, bytes, x->stream)) : KB_OK;
}

/* ---- launch, sync, timing ---- */

/* cuLaunchKernel and cuFuncSetAttribute answer a bad geometry or a shared-memory
 * request over the limit with CUDA_ERROR_INVALID_VALUE: here that is the case's
 * launch being rejected, not kbench misusing the API. */
static kb_status as_launch(kb_status st)
{
    return st == KB_ERR_INTERNAL ? KB_ERR_LAUNCH : st;
}

/* A launch in thread block clusters: cuLaunchKernelEx with CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
 * (Driver API, CUDA 12.0+). Refused here, with the reason, where the device has no clusters
 * (compute capability < 9.0), the driver has no cuLaunchKernelEx, or the cluster is larger
 * than the portable size (kbench never opts in to non-portable sizes); the driver checks
 * the rest (grid a multiple of the cluster, resources per cluster). */
static kb_status launch_cluster(kb_backend_ctx *x, CUfunction fn, const kb_geom *g, unsigned shmem, void **params)
{
    const kb_arch *dev = kb_arch_of_cc(x->info.sm);
    unsigned n = kb_geom_cluster_blocks(g);
    if (!dev || !(dev->paths & KB_PATH_CLUSTER)) {
        set_err(x, "cuda: a %ux%ux%u cluster launch needs thread block clusters (compute capability 9.0 or newer); "
                "this device is %d.%d", g->cluster[0], g->cluster[1], g->cluster[2], x->info.sm / 10, x->info.sm % 10);
        return KB_ERR_LAUNCH;
    }
    if (n > (unsigned)dev->cluster_portable) {
        set_err(x, "cuda: a cluster of %u blocks is larger than the portable %d of %s (kbench does not opt in to "
                "non-portable cluster sizes)", n, dev->cluster_portable, dev->name);
        return KB_ERR_LAUNCH;
    }
    if (!x->api.LaunchKernelEx) {
        set_err(x, "cuda: a cluster launch needs cuLaunchKernelEx, which this driver (CUDA %d.%d) lacks: it needs a "
                "CUDA 12.0 or newer driver", x->driver_version / 1000, x->driver_version % 1000 / 10);
        return KB_ERR_LAUNCH;
    }
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = g->cluster[0] ? g->cluster[0] : 1;
    attr.value.clusterDim.y = g->cluster[1] ? g->cluster[1] : 1;
    attr.value.clusterDim.z = g->cluster[2] ? g->cluster[2] : 1;
    CUlaunchConfig cfg = { g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2], shmem,
                           x->stream, &attr, 1 };
    return as_launch(CU(x, x->api.LaunchKernelEx(&cfg, fn, params, NULL)));
}

static kb_status cuda_launch(kb_backend_ctx *x, kb_module *m, const char *entry,
                             const kb_geom *g, const kb_arg *args, int nargs)
{
    kb_status st;
    void *params[KB_CUDA_MAX_ARGS] = { 0 };   /* past nargs NULL: a kernel with more parameters is refused, not fed garbage */
    CUfunction fn;
    fn_slot *slot;

    if (nargs < 0 || nargs > KB_CUDA_MAX_ARGS || kb_cuda_marshal(args, nargs, params) != 0) {
        set_err(x, "cuda: %s: bad kernel arguments (%d, at most %d of known kinds)", entry, nargs,
                KB_CUDA_MAX_ARGS);
        return KB_ERR_INTERNAL;
    }
    if (g->shmem_bytes > INT_MAX) {
        set_err(x, "cuda: %s: %zu bytes of dynamic shared memory", entry, g->shmem_bytes);
        return KB_ERR_LAUNCH;
    }
    if ((st = get_fn(x, m, entry, &fn, &slot)) != KB_OK)
        return as_launch(st);
    /* A function may use dynamic shared memory up to its attribute
     * MAX_DYNAMIC_SHARED_SIZE_BYTES, by default 48 KiB minus its static shared
     * memory; more needs an opt-in (up to the device's opt-in limit minus the
     * static part). Raise it when this launch needs more than the function has,
     * once per function (remembered in its slot), not on every launch. */
    int shmem = (int)g->shmem_bytes, limit = 0;
    if (slot)
        limit = slot->dyn_smem_bytes;
    else if ((st = CU(x, x->api.FuncGetAttribute(&limit, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, fn))) != KB_OK)
        return as_launch(st);
    if (shmem > limit) {
        st = CU(x, x->api.FuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shmem));
        if (st != KB_OK)
            return as_launch(st);
        if (slot)
            slot->dyn_smem_bytes = shmem;
    }
    if (kb_geom_cluster_blocks(g) > 1)
        return launch_cluster(x, fn, g, (unsigned)shmem, params);
    st = CU(x, x->api.LaunchKernel(fn, g->grid[0], g->grid[1], g->grid[2],
                                   g->block[0], g->block[1], g->block[2],
                                   (unsigned)shmem, x->stream, params, NULL));
    return as_launch(st);
}

static kb_status cuda_sync(kb_backend_ctx *x)
{
    return CU(x, x->api.StreamSynchronize(x->stream));
}

/* The window opens behind the blocking kernel (cuda_block.h): what is queued until
 * timer_stop runs back to back once the host lets the stream go, so the events stamp GPU
 * time only, not the host's cost of each launch call. */
static kb_status cuda_timer_start(kb_backend_ctx *x)
{
    kb_status st = kb_cuda_block_hold(x);
    if (st != KB_OK)
        return st;
    st = CU(x, x->api.EventRecord(x->ev_start, x->stream));
    if (st != KB_OK)
        kb_cuda_block_abandon(x);   /* no timer_stop follows a failed start: let the stream go now */
    return st;
}

static kb_status cuda_timer_stop(kb_backend_ctx *x, double *elapsed_us)
{
    kb_status st;
    float ms = 0.f;
    *elapsed_us = 0.0;
    st = CU(x, x->api.EventRecord(x->ev_stop, x->stream));
    kb_cuda_block_release(x);   /* also after a failure: the stream must not stay held */
    if (st != KB_OK)
        return st;
    st = CU(x, x->api.EventSynchronize(x->ev_stop));
    kb_cuda_block_done(x);
    if (st != KB_OK)
        return st;
    if ((st = CU(x, x->api.EventElapsedTime(&ms, x->ev_start, x->ev_stop))) != KB_OK)
        return st;
    *elapsed_us = (double)ms * 1000.0;
    return KB_OK;
}

static void cuda_telemetry(kb_backend_ctx *x, kb_telemetry *out)
{
    kb_nvml_read(x->nvml, out);
}

/* The health reading is taken under load: the blocking kernel keeps the GPU busy while NVML
 * is read, since an idle GPU trains its PCIe link down (the reading's gpu_idle value says
 * when it could not be, e.g. without the blocking kernel). *Assumption*: 20 ms of a running
 * kernel bring the link back to its working generation (DCGM reads the link in its PCIe
 * test under load). */
static void cuda_health(kb_backend_ctx *x, kb_health *out)
{
    int held = kb_cuda_block_hold(x) == KB_OK && x->block.held;
    if (held)
        nanosleep(&(struct timespec){ 0, 20 * 1000 * 1000 }, NULL);
    kb_nvml_health(x->nvml, out);
    if (held) {
        kb_cuda_block_abandon(x);
        x->api.StreamSynchronize(x->stream);
    }
}

static int cuda_sample_clock(kb_backend_ctx *x, int *sm_mhz, int *sm_ref_mhz)
{
    return kb_nvml_sm_clock(x->nvml, sm_mhz, sm_ref_mhz);
}

/* Every slot but the name, the artefact and its build: the two tables below share them. */
#define CUDA_SLOTS                                                                                                  \
    .caps = KB_CAP_GPU_TIMER | KB_CAP_ROOFLINE | KB_CAP_FULL_SPEED | KB_CAP_GRAPHS | KB_CAP_RESOURCES |             \
            KB_CAP_TELEMETRY | KB_CAP_VENDOR_LIBS | KB_CAP_CUBLASLT | KB_CAP_CUDNN | KB_CAP_TMA,                    \
    .init = cuda_init, .fini = cuda_fini, .last_error = cuda_last_error, .device_info = cuda_device_info,           \
    .toolchain_id = kb_cuda_toolchain_id, .load = cuda_load, .unload = cuda_unload, .resources = cuda_resources,    \
    .compiles_for = kb_nvrtc_supports, .build_resources = kb_ptxas_parse, .alloc = cuda_alloc, .free = cuda_free,   \
    .upload = cuda_upload, .download = cuda_download, .fill = cuda_fill, .launch = cuda_launch, .sync = cuda_sync,  \
    .timer_start = cuda_timer_start, .timer_stop = cuda_timer_stop, .telemetry = cuda_telemetry,                    \
    .timing_method = kb_cuda_timing_method, .sample_clock = cuda_sample_clock, .health = cuda_health,               \
    .graph_begin = kb_cuda_graph_begin, .graph_end = kb_cuda_graph_end, .graph_launch = kb_cuda_graph_launch,       \
    .graph_free = kb_cuda_graph_free, .vendor_plan = kb_cuda_vendor_plan, .vendor_run = kb_cuda_vendor_run,         \
    .vendor_free = kb_cuda_vendor_free, .tmap_encode = kb_cuda_tmap_encode

const kb_backend kb_backend_cuda = {
    .name = "cuda",
    .artifact_ext = ".cubin",
    .build = kb_cuda_build,
    CUDA_SLOTS,
};

/* The same backend with PTX as its artefact (cuModuleLoadData JIT-compiles PTX at load):
 * what `kbench compile --emit ptx` builds through, cached apart from the CUBINs. */
const kb_backend kb_backend_cuda_ptx = {
    .name = "cuda-ptx",
    .artifact_ext = ".ptx",
    .build = kb_cuda_build_ptx,
    CUDA_SLOTS,
};
