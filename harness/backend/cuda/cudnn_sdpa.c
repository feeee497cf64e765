/* cudnn_sdpa.c - cuDNN loaded with dlopen, and the SDPA operation graph through the
 * backend API (see cudnn_sdpa.h). */
#include "backend/cuda/cudnn_sdpa.h"

#include "backend/cuda/cuda_api.h"
#include "backend/cuda/vendor_dl.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static const kb_dl_sym syms[] = {
#define E(field) { "cudnn" #field, offsetof(kb_dnn_api, field) }
    E(GetVersion), E(GetCudartVersion), E(GetErrorString), E(GetLastErrorString), E(Create), E(Destroy), E(SetStream),
    E(BackendCreateDescriptor), E(BackendDestroyDescriptor), E(BackendFinalize), E(BackendSetAttribute),
    E(BackendGetAttribute), E(BackendExecute),
#undef E
};

kb_status kb_dnn_load(kb_dnn_api *api, char *err, size_t n)
{
    memset(api, 0, sizeof *api);
    return kb_dl_load(&api->lib, api, syms, sizeof syms / sizeof syms[0], "KBENCH_LIBCUDNN", KB_DNN_SONAME, "cuDNN",
                      err, n);
}

void kb_dnn_unload(kb_dnn_api *api)
{
    kb_dl_forget(&api->lib, api, sizeof *api);   /* stays loaded: see vendor_dl.h */
}

int kb_dnn_data_type(kb_dtype dt, cudnnDataType_t *out)
{
    switch (dt) {
    case KB_DT_FP16: *out = CUDNN_DATA_HALF; return 0;
    case KB_DT_BF16: *out = CUDNN_DATA_BFLOAT16; return 0;
    case KB_DT_FP32: *out = CUDNN_DATA_FLOAT; return 0;
    default: return -1;
    }
}

/* ---- a builder with a sticky error: after the first failure every step does nothing ---- */

typedef struct {
    const kb_dnn_api *api;
    kb_dnn_graph *g;
    char *err;
    size_t n;
    kb_status st;
} bld;

#define DNN(b, call) ((b)->st = KB_DNN_CHECK((b)->api, (b)->err, (b)->n, call))

static cudnnBackendDescriptor_t make(bld *b, cudnnBackendDescriptorType_t type)
{
    cudnnBackendDescriptor_t d = NULL;
    if (b->st != KB_OK)
        return NULL;
    if (b->g->n_all == KB_DNN_MAX_DESC) {
        snprintf(b->err, b->n, "cuDNN graph: more than %d descriptors", KB_DNN_MAX_DESC);
        b->st = KB_ERR_INTERNAL;
        return NULL;
    }
    if (DNN(b, b->api->BackendCreateDescriptor(type, &d)) != KB_OK)
        return NULL;
    b->g->all[b->g->n_all++] = d;
    return d;
}

static void set(bld *b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t count, const void *values)
{
    if (b->st != KB_OK)
        return;
    if (DNN(b, b->api->BackendSetAttribute(d, name, type, count, values)) != KB_OK) {
        size_t len = strlen(b->err);
        snprintf(b->err + len, b->n - len, " (attribute %d)", (int)name);
    }
}

static void set_desc(bld *b, cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t v)
{
    set(b, d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
}

static cudnnBackendDescriptor_t fin(bld *b, cudnnBackendDescriptor_t d)
{
    if (b->st == KB_OK)
        DNN(b, b->api->BackendFinalize(d));
    return b->st == KB_OK ? d : NULL;
}

/* Add a finalised operation to the graph's list (bounded: a graph built wrongly fails, it
 * does not write past the list). */
static void push_op(bld *b, cudnnBackendDescriptor_t op)
{
    if (!op || b->st != KB_OK)
        return;
    if (b->g->n_ops == KB_DNN_MAX_OPS) {
        snprintf(b->err, b->n, "cuDNN graph: more than %d operations", KB_DNN_MAX_OPS);
        b->st = KB_ERR_INTERNAL;
        return;
    }
    b->g->ops[b->g->n_ops++] = op;
}

/* A [n0, n1, n2, n3] tensor, packed row-major unless strides are given. */
static cudnnBackendDescriptor_t tensor(bld *b, int64_t uid, cudnnDataType_t dt, const int64_t dims[4],
                                       const int64_t *strides, bool is_virtual, bool by_value)
{
    int64_t packed[4] = { dims[1] * dims[2] * dims[3], dims[2] * dims[3], dims[3], 1 }, align = 16;
    cudnnBackendDescriptor_t t = make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    set(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &dt);
    set(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    set(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides ? strides : packed);
    set(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    set(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &is_virtual);
    if (by_value)
        set(b, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &by_value);
    return fin(b, t);
}

/* y = mode(x [, bb [, t]]) with math in prec; axis >= 0 for GEN_INDEX. */
static void pointwise(bld *b, cudnnPointwiseMode_t mode, cudnnDataType_t prec, int64_t axis,
                      cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t bb, cudnnBackendDescriptor_t t,
                      cudnnBackendDescriptor_t y)
{
    cudnnBackendDescriptor_t pw = make(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    set(b, pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set(b, pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &prec);
    if (axis >= 0)
        set(b, pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    fin(b, pw);
    cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
    set_desc(b, op, CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw);
    set_desc(b, op, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x);
    if (bb)
        set_desc(b, op, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, bb);
    if (t)
        set_desc(b, op, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t);
    set_desc(b, op, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y);
    push_op(b, fin(b, op));
}

static void reduction(bld *b, cudnnReduceTensorOp_t how, cudnnBackendDescriptor_t x, cudnnBackendDescriptor_t y)
{
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t r = make(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    set(b, r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &how);
    set(b, r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    fin(b, r);
    cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
    set_desc(b, op, CUDNN_ATTR_OPERATION_REDUCTION_DESC, r);
    set_desc(b, op, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x);
    set_desc(b, op, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y);
    push_op(b, fin(b, op));
}

static void matmul(bld *b, cudnnBackendDescriptor_t a, cudnnBackendDescriptor_t bb, cudnnBackendDescriptor_t c)
{
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mm = make(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    set(b, mm, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    fin(b, mm);
    cudnnBackendDescriptor_t op = make(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
    set_desc(b, op, CUDNN_ATTR_OPERATION_MATMUL_ADESC, a);
    set_desc(b, op, CUDNN_ATTR_OPERATION_MATMUL_BDESC, bb);
    set_desc(b, op, CUDNN_ATTR_OPERATION_MATMUL_CDESC, c);
    set_desc(b, op, CUDNN_ATTR_OPERATION_MATMUL_DESC, mm);
    push_op(b, fin(b, op));
}

/* ---- the SDPA graph ---- */

/* The causal mask: keep S where the query row >= the key column, else -inf. */
static cudnnBackendDescriptor_t causal(bld *b, const int64_t sdim[4], cudnnBackendDescriptor_t s)
{
    const int64_t one[4] = { 1, 1, 1, 1 };
    cudnnBackendDescriptor_t neg = tensor(b, KB_DNN_NEG_INF, CUDNN_DATA_FLOAT, one, one, false, true);
    cudnnBackendDescriptor_t row = tensor(b, 102, CUDNN_DATA_INT32, sdim, NULL, true, false);
    cudnnBackendDescriptor_t col = tensor(b, 103, CUDNN_DATA_INT32, sdim, NULL, true, false);
    cudnnBackendDescriptor_t keep = tensor(b, 104, CUDNN_DATA_BOOLEAN, sdim, NULL, true, false);
    cudnnBackendDescriptor_t out = tensor(b, 105, CUDNN_DATA_FLOAT, sdim, NULL, true, false);
    pointwise(b, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, 2, s, NULL, NULL, row);
    pointwise(b, CUDNN_POINTWISE_GEN_INDEX, CUDNN_DATA_INT32, 3, s, NULL, NULL, col);
    pointwise(b, CUDNN_POINTWISE_CMP_GE, CUDNN_DATA_BOOLEAN, -1, row, col, NULL, keep);
    pointwise(b, CUDNN_POINTWISE_BINARY_SELECT, CUDNN_DATA_FLOAT, -1, s, neg, keep, out);
    return out;
}

/* P = softmax over the last axis of s, in the I/O type io. */
static cudnnBackendDescriptor_t softmax(bld *b, const int64_t sdim[4], cudnnBackendDescriptor_t s, cudnnDataType_t io)
{
    const int64_t rdim[4] = { sdim[0], sdim[1], sdim[2], 1 };
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t mx = tensor(b, 106, f32, rdim, NULL, true, false);
    cudnnBackendDescriptor_t sub = tensor(b, 107, f32, sdim, NULL, true, false);
    cudnnBackendDescriptor_t ex = tensor(b, 108, f32, sdim, NULL, true, false);
    cudnnBackendDescriptor_t sum = tensor(b, 109, f32, rdim, NULL, true, false);
    cudnnBackendDescriptor_t p = tensor(b, 110, io, sdim, NULL, true, false);
    reduction(b, CUDNN_REDUCE_TENSOR_MAX, s, mx);
    pointwise(b, CUDNN_POINTWISE_SUB, f32, -1, s, mx, NULL, sub);
    pointwise(b, CUDNN_POINTWISE_EXP, f32, -1, sub, NULL, NULL, ex);
    reduction(b, CUDNN_REDUCE_TENSOR_ADD, ex, sum);
    /* the stats branch cudnn-frontend's composite softmax always builds (node/softmax.h: with no
     * stats asked for, a virtual one): stats = max + log(sum), which the fused engines match */
    cudnnBackendDescriptor_t lg = tensor(b, 112, f32, rdim, NULL, true, false);
    cudnnBackendDescriptor_t stats = tensor(b, KB_DNN_STATS_UID, f32, rdim, NULL, true, false);
    pointwise(b, CUDNN_POINTWISE_LOG, f32, -1, sum, NULL, NULL, lg);
    pointwise(b, CUDNN_POINTWISE_ADD, f32, -1, mx, lg, NULL, stats);
    pointwise(b, CUDNN_POINTWISE_DIV, f32, -1, ex, sum, NULL, p);
    return p;
}

float kb_dnn_mask_value(size_t version)
{
    return version < 91000 ? -FLT_MAX : -INFINITY;
}

kb_status kb_dnn_sdpa_ops(const kb_dnn_api *api, const kb_vendor_sdpa *op, kb_dnn_graph *g, char *err, size_t n)
{
    memset(g, 0, sizeof *g);
    bld b = { api, g, err, n, KB_OK };
    cudnnDataType_t io;
    if (kb_dnn_data_type(op->dtype, &io) != 0 || op->dtype == KB_DT_FP32) {
        snprintf(err, n, "cuDNN SDPA takes fp16 or bf16, not %s", kb_dtype_name(op->dtype));
        return KB_ERR_INPUT;
    }
    g->scale = op->scale;
    g->neg_inf = kb_dnn_mask_value(api->GetVersion());
    const int64_t qdim[4] = { op->b, op->h, op->s, op->d }, sdim[4] = { op->b, op->h, op->s, op->s };
    const int64_t ktdim[4] = { op->b, op->h, op->d, op->s };
    const int64_t ktstride[4] = { op->h * op->s * op->d, op->s * op->d, 1, op->d }, one[4] = { 1, 1, 1, 1 };
    cudnnBackendDescriptor_t q = tensor(&b, KB_DNN_Q, io, qdim, NULL, false, false);
    cudnnBackendDescriptor_t kt = tensor(&b, KB_DNN_K, io, ktdim, ktstride, false, false);
    cudnnBackendDescriptor_t v = tensor(&b, KB_DNN_V, io, qdim, NULL, false, false);
    cudnnBackendDescriptor_t o = tensor(&b, KB_DNN_O, io, qdim, NULL, false, false);
    cudnnBackendDescriptor_t scale = tensor(&b, KB_DNN_SCALE, CUDNN_DATA_FLOAT, one, one, false, true);
    cudnnBackendDescriptor_t s0 = tensor(&b, 100, CUDNN_DATA_FLOAT, sdim, NULL, true, false);
    cudnnBackendDescriptor_t s1 = tensor(&b, 101, CUDNN_DATA_FLOAT, sdim, NULL, true, false);
    matmul(&b, q, kt, s0);
    pointwise(&b, CUDNN_POINTWISE_MUL, CUDNN_DATA_FLOAT, -1, s0, scale, NULL, s1);
    cudnnBackendDescriptor_t masked = op->causal ? causal(&b, sdim, s1) : s1;
    cudnnBackendDescriptor_t p = softmax(&b, sdim, masked, io);
    matmul(&b, p, v, o);
    if (b.st != KB_OK)
        kb_dnn_graph_destroy(api, g);
    return b.st;
}

/* ---- plan (a handle, i.e. a GPU) ---- */

/* The global index of the engine of configuration cfg, -1 when it cannot be read. */
static int64_t engine_index(bld *b, cudnnBackendDescriptor_t cfg)
{
    cudnnBackendDescriptor_t eng = make(b, CUDNN_BACKEND_ENGINE_DESCRIPTOR);
    int64_t count = 0, idx = -1;
    if (!eng || b->api->BackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                            &count, &eng) != CUDNN_STATUS_SUCCESS ||
        b->api->BackendGetAttribute(eng, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &count, &idx) !=
            CUDNN_STATUS_SUCCESS)
        return -1;
    return idx;
}

/* The first of the heuristic's configurations whose execution plan finalises. */
static void first_plan(bld *b, cudnnHandle_t h, cudnnBackendDescriptor_t *cfgs, int64_t n_cfgs, kb_vendor_info *info)
{
    kb_dnn_graph *g = b->g;
    for (int64_t i = 0; i < n_cfgs && b->st == KB_OK; i++) {
        cudnnBackendDescriptor_t plan = make(b, CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        set(b, plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
        set_desc(b, plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, cfgs[i]);
        if (b->st != KB_OK || b->api->BackendFinalize(plan) != CUDNN_STATUS_SUCCESS)
            continue;   /* this engine declines the graph: try the next */
        int64_t count = 0;
        DNN(b, b->api->BackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1,
                                           &count, &g->workspace_bytes));
        g->plan = plan;
        snprintf(info->engine, sizeof info->engine, "engine %lld (heuristic choice %lld of %lld)",
                 (long long)engine_index(b, cfgs[i]), (long long)i, (long long)n_cfgs);
        return;
    }
    if (b->st == KB_OK) {
        snprintf(b->err, b->n, "cuDNN: none of the heuristic's %lld engine configurations finalises for this graph",
                 (long long)n_cfgs);
        b->st = KB_ERR_INPUT;
    }
}

kb_status kb_dnn_sdpa_plan(const kb_dnn_api *api, cudnnHandle_t h, kb_dnn_graph *g, kb_vendor_info *info,
                           char *err, size_t n)
{
    bld b = { api, g, err, n, KB_OK };
    snprintf(info->library, sizeof info->library, "cuDNN");
    info->version = (long)api->GetVersion();
    g->graph = make(&b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(&b, g->graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, g->n_ops, g->ops);
    set(&b, g->graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h);
    fin(&b, g->graph);
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    cudnnBackendDescriptor_t heur = make(&b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    set_desc(&b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, g->graph);
    set(&b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    fin(&b, heur);
    cudnnBackendDescriptor_t cfgs[8];
    int64_t n_cfgs = 0;
    for (int i = 0; i < 8; i++)
        cfgs[i] = make(&b, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    if (b.st == KB_OK)
        DNN(&b, api->BackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 8,
                                         &n_cfgs, cfgs));
    info->candidates = (int)n_cfgs;
    first_plan(&b, h, cfgs, n_cfgs < 8 ? n_cfgs : 8, info);
    info->workspace_bytes = (size_t)g->workspace_bytes;
    return b.st;
}

kb_status kb_dnn_sdpa_bind(const kb_dnn_api *api, kb_dnn_graph *g, const kb_vendor_sdpa *op, uint64_t ws, char *err,
                           size_t n)
{
    bld b = { api, g, err, n, KB_OK };
    int64_t uids[6] = { KB_DNN_Q, KB_DNN_K, KB_DNN_V, KB_DNN_O, KB_DNN_SCALE, KB_DNN_NEG_INF };
    void *ptrs[6] = { (void *)(uintptr_t)op->q, (void *)(uintptr_t)op->k, (void *)(uintptr_t)op->v,
                      (void *)(uintptr_t)op->o, &g->scale, &g->neg_inf };
    void *w = (void *)(uintptr_t)ws;
    int64_t count = op->causal ? 6 : 5;   /* -inf is only in the causal graph */
    g->pack = make(&b, CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    set(&b, g->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, count, uids);
    set(&b, g->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, count, ptrs);
    set(&b, g->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &w);
    fin(&b, g->pack);
    return b.st;
}

kb_status kb_dnn_sdpa_run(const kb_dnn_api *api, cudnnHandle_t h, kb_dnn_graph *g, char *err, size_t n)
{
    return KB_DNN_CHECK(api, err, n, api->BackendExecute(h, g->plan, g->pack));
}

void kb_dnn_graph_destroy(const kb_dnn_api *api, kb_dnn_graph *g)
{
    while (g->n_all > 0)
        api->BackendDestroyDescriptor(g->all[--g->n_all]);
    memset(g, 0, sizeof *g);
}

/* ---- errors ---- */

kb_status kb_dnn_status(cudnnStatus_t s)
{
    if (s == CUDNN_STATUS_SUCCESS)
        return KB_OK;
    switch (s) {
    case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER:
    case CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDART:
    case CUDNN_STATUS_NOT_SUPPORTED_RUNTIME_PREREQUISITE_MISSING:
    case CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE: return KB_ERR_SETUP;
    case CUDNN_STATUS_INTERNAL_ERROR_HOST_ALLOCATION_FAILED:
    case CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED: return KB_ERR_OOM;
    default: break;
    }
    switch ((int)s / 1000) {
    case 1: return KB_ERR_SETUP;
    case 2: return KB_ERR_INTERNAL;
    case 3: return KB_ERR_INPUT;
    case 4: return KB_ERR_INTERNAL;
    case 5: return KB_ERR_FAULT;
    default: return KB_ERR_SETUP;
    }
}

kb_status kb_dnn_check(const kb_dnn_api *api, cudnnStatus_t s, char *err, size_t n, const char *file, int line,
                       const char *func, const char *call)
{
    if (s == CUDNN_STATUS_SUCCESS)
        return KB_OK;
    const char *name = api && api->GetErrorString ? api->GetErrorString(s) : NULL;
    char msg[512] = "";
    if (name && api->GetLastErrorString)
        api->GetLastErrorString(msg, sizeof msg);
    if (name)
        kb_cuda_format_error(err, n, file, line, func, call, (int)s, name, msg[0] ? msg : NULL);
    else
        snprintf(err, n, "%s:%d %s: %s -> cudnnStatus_t %d", file, line, func, call, (int)s);
    return kb_dnn_status(s);
}
