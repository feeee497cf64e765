/* cuda_vendor.c - vendor library calls on the cuda backend's context and stream (see
 * cuda_vendor.h). Written from NVIDIA's documentation; no GPU has run it. */
#include "backend/cuda/cuda_vendor.h"

#include "backend/cuda/cublaslt_plan.h"
#include "backend/cuda/kb_nvrtc_lib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct kb_vendor_plan {
    kb_vendor_op_kind kind;
    kb_lt_plan lt;
    kb_dnn_graph dnn;
    CUdeviceptr ws;          /* the workspace, 0 when none is needed */
};

/* Append one line to the device's vendor note. */
static void note(kb_backend_ctx *x, const char *line)
{
    size_t len = strlen(x->info.vendor_note);
    snprintf(x->info.vendor_note + len, sizeof x->info.vendor_note - len, "%s%s", len ? "\n" : "", line);
}

/* 1 when a library linking the CUDA runtime cudart (statically, as cuBLASLt and cuDNN do)
 * can run on this driver; else 0 with the reason in why. The rule is NVRTC's
 * (kb_nvrtc_fits: minor-version compatibility within a CUDA major, CUDA Compatibility guide). */
static int runtime_fits(const kb_backend_ctx *x, size_t cudart, char *why, size_t n)
{
    int major = (int)(cudart / 1000);
    if (kb_nvrtc_fits(major, x->driver_version))
        return 1;
    int branch = kb_nvrtc_min_branch(major);
    char b[48] = "";
    if (branch)
        snprintf(b, sizeof b, " (driver branch >= %d)", branch);
    snprintf(why, n, "links the CUDA %zu.%zu runtime (%zu), which needs a driver for CUDA >= %d.0%s; the driver "
             "supports CUDA %d.%d (%d): rows skipped (cuda-compat-%d or a newer driver fixes it)",
             cudart / 1000, cudart % 1000 / 10, cudart, major, b, x->driver_version / 1000,
             x->driver_version % 1000 / 10, x->driver_version, major);
    return 0;
}

static void open_lt(kb_backend_ctx *x)
{
    char err[512], why[400], line[1024];
    if (kb_lt_load(&x->lt, err, sizeof err) != KB_OK) {
        x->info.caps &= ~(unsigned)KB_CAP_CUBLASLT;
        snprintf(line, sizeof line, "cuBLASLt: not loaded: %s (set KBENCH_LIBCUBLASLT to its path)", err);
    } else {
        size_t v = x->lt.GetVersion();
        snprintf(line, sizeof line, "cuBLASLt %zu.%zu.%zu (%s)", v / 10000, v / 100 % 100, v % 100, KB_LT_SONAME);
        if (v / 10000 != CUBLAS_VER_MAJOR) {   /* kbench reads cublasLt.h of this major */
            snprintf(line, sizeof line, "cuBLASLt: not used: version %zu.%zu, kbench was built with cuBLASLt %d's "
                     "header (KBENCH_LIBCUBLASLT names a libcublasLt.so.%d)", v / 10000, v / 100 % 100,
                     CUBLAS_VER_MAJOR, CUBLAS_VER_MAJOR);
            kb_lt_unload(&x->lt);
            x->info.caps &= ~(unsigned)KB_CAP_CUBLASLT;
        } else if (!runtime_fits(x, x->lt.GetCudartVersion(), why, sizeof why)) {
            snprintf(line, sizeof line, "cuBLASLt: does not fit this driver: cuBLASLt %zu.%zu %s", v / 10000,
                     v / 100 % 100, why);
            kb_lt_unload(&x->lt);
            x->info.caps &= ~(unsigned)KB_CAP_CUBLASLT;
        }
    }
    note(x, line);
}

static void open_dnn(kb_backend_ctx *x)
{
    char err[512], why[400], line[1024];
    if (kb_dnn_load(&x->dnn, err, sizeof err) != KB_OK) {
        x->info.caps &= ~(unsigned)KB_CAP_CUDNN;
        snprintf(line, sizeof line, "cuDNN: not loaded: %s (set KBENCH_LIBCUDNN to its path)", err);
    } else {
        size_t v = x->dnn.GetVersion();
        snprintf(line, sizeof line, "cuDNN %zu.%zu.%zu (%s)", v / 10000, v / 100 % 100, v % 100, KB_DNN_SONAME);
        if (!runtime_fits(x, x->dnn.GetCudartVersion(), why, sizeof why)) {
            snprintf(line, sizeof line, "cuDNN: does not fit this driver: cuDNN %zu.%zu %s; so does a cuDNN 9 for "
                     "CUDA %d", v / 10000, v / 100 % 100, why, x->driver_version / 1000);
            kb_dnn_unload(&x->dnn);
            x->info.caps &= ~(unsigned)KB_CAP_CUDNN;
        }
    }
    note(x, line);
}

void kb_cuda_vendor_open(kb_backend_ctx *x)
{
    x->info.vendor_note[0] = 0;
    open_lt(x);
    open_dnn(x);
}

void kb_cuda_vendor_close(kb_backend_ctx *x)
{
    if (x->lt_handle)
        x->lt.Destroy(x->lt_handle);
    if (x->dnn_handle)
        x->dnn.Destroy(x->dnn_handle);
    x->lt_handle = NULL;
    x->dnn_handle = NULL;
    kb_lt_unload(&x->lt);
    kb_dnn_unload(&x->dnn);
}

/* A handle that cannot be created says nothing about the case: the library cannot run
 * here (a driver it does not fit, a GPU it does not support). Remembered, and every case
 * of the library is skipped with the reason (KB_ERR_INPUT: kb_run_vendor_plan skips). */
static kb_status unusable(kb_backend_ctx *x, char *keep, size_t n, const char *lib)
{
    if (!keep[0])
        snprintf(keep, n, "%s cannot be used here (its cases are skipped): %.400s", lib, x->err);
    snprintf(x->err, sizeof x->err, "%s", keep);
    return KB_ERR_INPUT;
}

/* The library's handle, created on first use (cuDNN's bound to the backend's stream). */
static kb_status handle_of(kb_backend_ctx *x, kb_vendor_op_kind kind)
{
    if (kind == KB_VOP_MATMUL) {
        if (!x->lt.lib) {
            snprintf(x->err, sizeof x->err, "cuBLASLt is not loaded (kbench devices says why)");
            return KB_ERR_SETUP;
        }
        if (x->lt_handle)
            return KB_OK;
        if (x->lt_unusable[0] || KB_LT_CHECK(&x->lt, x->err, sizeof x->err, x->lt.Create(&x->lt_handle)) != KB_OK)
            return unusable(x, x->lt_unusable, sizeof x->lt_unusable, "cuBLASLt");
        return KB_OK;
    }
    if (!x->dnn.lib) {
        snprintf(x->err, sizeof x->err, "cuDNN is not loaded (kbench devices says why)");
        return KB_ERR_SETUP;
    }
    if (x->dnn_handle)
        return KB_OK;
    if (x->dnn_unusable[0] || KB_DNN_CHECK(&x->dnn, x->err, sizeof x->err, x->dnn.Create(&x->dnn_handle)) != KB_OK) {
        x->dnn_handle = NULL;
        return unusable(x, x->dnn_unusable, sizeof x->dnn_unusable, "cuDNN");
    }
    return KB_DNN_CHECK(&x->dnn, x->err, sizeof x->err, x->dnn.SetStream(x->dnn_handle, (cudaStream_t)x->stream));
}

static kb_status alloc_ws(kb_backend_ctx *x, size_t bytes, CUdeviceptr *ws)
{
    *ws = 0;
    return bytes ? CU(x, x->api.MemAlloc(ws, bytes)) : KB_OK;
}

static kb_status plan_sdpa(kb_backend_ctx *x, const kb_vendor_sdpa *op, kb_vendor_plan *p, kb_vendor_info *info)
{
    kb_status st = kb_dnn_sdpa_ops(&x->dnn, op, &p->dnn, x->err, sizeof x->err);
    if (st == KB_OK)
        st = kb_dnn_sdpa_plan(&x->dnn, x->dnn_handle, &p->dnn, info, x->err, sizeof x->err);
    if (st == KB_OK)
        st = alloc_ws(x, (size_t)p->dnn.workspace_bytes, &p->ws);
    if (st == KB_OK)
        st = kb_dnn_sdpa_bind(&x->dnn, &p->dnn, op, p->ws, x->err, sizeof x->err);
    return st;
}

kb_status kb_cuda_vendor_plan(kb_backend_ctx *x, const kb_vendor_op *op, kb_vendor_plan **out, kb_vendor_info *info)
{
    *out = NULL;
    kb_status st = handle_of(x, op->kind);
    if (st != KB_OK)
        return st;
    kb_vendor_plan *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(x->err, sizeof x->err, "cuda: out of memory");
        return KB_ERR_OOM;
    }
    p->kind = op->kind;
    if (op->kind == KB_VOP_MATMUL) {
        st = kb_lt_plan_create(&x->lt, x->lt_handle, &op->u.mm, &p->lt, info, x->err, sizeof x->err);
        if (st == KB_OK && (st = alloc_ws(x, p->lt.workspace_bytes, &p->ws)) != KB_OK)
            kb_lt_plan_destroy(&x->lt, &p->lt);
    } else {
        st = plan_sdpa(x, &op->u.sdpa, p, info);
        if (st != KB_OK)
            kb_dnn_graph_destroy(&x->dnn, &p->dnn);
    }
    if (st != KB_OK) {
        if (p->ws)
            x->api.MemFree(p->ws);
        free(p);
        return st;
    }
    *out = p;
    return KB_OK;
}

kb_status kb_cuda_vendor_run(kb_backend_ctx *x, kb_vendor_plan *p)
{
    if (p->kind == KB_VOP_MATMUL)
        return kb_lt_plan_run(&x->lt, x->lt_handle, &p->lt, p->ws, (void *)x->stream, x->err, sizeof x->err);
    return kb_dnn_sdpa_run(&x->dnn, x->dnn_handle, &p->dnn, x->err, sizeof x->err);
}

void kb_cuda_vendor_free(kb_backend_ctx *x, kb_vendor_plan *p)
{
    if (!p)
        return;
    if (p->kind == KB_VOP_MATMUL)
        kb_lt_plan_destroy(&x->lt, &p->lt);
    else
        kb_dnn_graph_destroy(&x->dnn, &p->dnn);
    if (p->ws)
        x->api.MemFree(p->ws);
    free(p);
}
