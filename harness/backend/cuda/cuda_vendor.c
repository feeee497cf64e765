/* cuda_vendor.c - vendor library calls on the cuda backend's context and stream (see
 * cuda_vendor.h). Written from NVIDIA's documentation; no GPU has run it. */
#include "backend/cuda/cuda_vendor.h"

#include "backend/cuda/cublaslt_plan.h"

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

void kb_cuda_vendor_open(kb_backend_ctx *x)
{
    char err[512], line[640];
    x->info.vendor_note[0] = 0;
    if (kb_lt_load(&x->lt, err, sizeof err) == KB_OK) {
        size_t v = x->lt.GetVersion();
        snprintf(line, sizeof line, "cuBLASLt %zu.%zu.%zu (%s)", v / 10000, v / 100 % 100, v % 100, KB_LT_SONAME);
    } else {
        x->info.caps &= ~(unsigned)KB_CAP_CUBLASLT;
        snprintf(line, sizeof line, "cuBLASLt: not loaded: %s (set KBENCH_LIBCUBLASLT to its path)", err);
    }
    note(x, line);
    if (kb_dnn_load(&x->dnn, err, sizeof err) == KB_OK) {
        size_t v = x->dnn.GetVersion();
        snprintf(line, sizeof line, "cuDNN %zu.%zu.%zu (%s)", v / 10000, v / 100 % 100, v % 100, KB_DNN_SONAME);
    } else {
        x->info.caps &= ~(unsigned)KB_CAP_CUDNN;
        snprintf(line, sizeof line, "cuDNN: not loaded: %s (set KBENCH_LIBCUDNN to its path)", err);
    }
    note(x, line);
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

/* The library's handle, created on first use (cuDNN's bound to the backend's stream). */
static kb_status handle_of(kb_backend_ctx *x, kb_vendor_op_kind kind)
{
    if (kind == KB_VOP_MATMUL) {
        if (!x->lt.lib) {
            snprintf(x->err, sizeof x->err, "cuBLASLt is not loaded (kbench devices says why)");
            return KB_ERR_SETUP;
        }
        return x->lt_handle ? KB_OK : KB_LT_CHECK(&x->lt, x->err, sizeof x->err, x->lt.Create(&x->lt_handle));
    }
    if (!x->dnn.lib) {
        snprintf(x->err, sizeof x->err, "cuDNN is not loaded (kbench devices says why)");
        return KB_ERR_SETUP;
    }
    if (x->dnn_handle)
        return KB_OK;
    kb_status st = KB_DNN_CHECK(&x->dnn, x->err, sizeof x->err, x->dnn.Create(&x->dnn_handle));
    if (st != KB_OK)
        return st;
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
