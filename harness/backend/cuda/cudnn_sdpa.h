/* cudnn_sdpa.h - cuDNN 9, loaded at run time with dlopen("libcudnn.so.9"), and kbench's
 * forward attention as a cuDNN operation graph built through the backend API from C
 * (cudnn_graph.h): the graph cudnn-frontend lowers its SDPA node to for inference,
 *
 *     S  = Q K^T                 matmul, fp32 out (K given as its transposed [b,h,d,s] view)
 *     S  = S * scale             pointwise MUL with a by-value fp32 scalar
 *     [causal: row = index(axis 2), col = index(axis 3), keep = row >= col,
 *              S = keep ? S : mask  (GEN_INDEX, CMP_GE, BINARY_SELECT; mask -FLT_MAX below
 *              cuDNN 9.10, -inf from 9.10, as cudnn-frontend's get_negative_inf_value)]
 *     P  = exp(S - max_j S) / sum_j exp(S - max_j S)   (reduction MAX, SUB, EXP, reduction ADD, DIV;
 *                                                       P in the I/O type, as the flash engines take it)
 *     stats = max_j S + log(sum_j exp(S - max_j S))    (LOG, ADD into a virtual fp32 [b,h,s,1]: the
 *                                                       branch cudnn-frontend's softmax always builds)
 *     O  = P V                   matmul
 *
 * which the fused flash-attention engines recognise. Q, K, V, O are [b, h, s, d] contiguous.
 *
 * Without a GPU, the tensors, the pointwise/reduction/matmul descriptors and the operations
 * are created and finalised (tests/test_cudnn.c); the operation graph needs a handle, and
 * cudnnCreate fails without a GPU (CUDNN_STATUS_NOT_INITIALIZED -> a setup error). Nothing
 * here has run on a GPU: written from the cuDNN backend documentation and cudnn-frontend.
 */
#ifndef KB_CUDNN_SDPA_H
#define KB_CUDNN_SDPA_H

#include <cudnn_graph.h>

#include "backend/backend.h"

#define KB_DNN_SONAME "libcudnn.so.9"

typedef struct {
    void *lib;
    size_t (*GetVersion)(void);
    size_t (*GetCudartVersion)(void);   /* the CUDA runtime it was built with (linked statically) */
    const char *(*GetErrorString)(cudnnStatus_t s);
    void (*GetLastErrorString)(char *message, size_t max);
    cudnnStatus_t (*Create)(cudnnHandle_t *h);
    cudnnStatus_t (*Destroy)(cudnnHandle_t h);
    cudnnStatus_t (*SetStream)(cudnnHandle_t h, cudaStream_t s);
    cudnnStatus_t (*BackendCreateDescriptor)(cudnnBackendDescriptorType_t t, cudnnBackendDescriptor_t *d);
    cudnnStatus_t (*BackendDestroyDescriptor)(cudnnBackendDescriptor_t d);
    cudnnStatus_t (*BackendFinalize)(cudnnBackendDescriptor_t d);
    cudnnStatus_t (*BackendSetAttribute)(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                                         cudnnBackendAttributeType_t type, int64_t count, const void *values);
    cudnnStatus_t (*BackendGetAttribute)(cudnnBackendDescriptor_t const d, cudnnBackendAttributeName_t name,
                                         cudnnBackendAttributeType_t type, int64_t requested, int64_t *count,
                                         void *values);
    cudnnStatus_t (*BackendExecute)(cudnnHandle_t h, cudnnBackendDescriptor_t plan, cudnnBackendDescriptor_t pack);
} kb_dnn_api;

/* Open cuDNN: $KBENCH_LIBCUDNN, else "libcudnn.so.9" on the loader's path, else beside the
 * toolkit kbench was built with. As kb_lt_load (cublaslt.h). */
kb_status kb_dnn_load(kb_dnn_api *api, char *err, size_t n);
/* Clear the table (the library stays loaded: vendor_dl.h). */
void kb_dnn_unload(kb_dnn_api *api);

/* Unique ids of the graph's real tensors (the variant pack's keys). */
enum { KB_DNN_Q = 1, KB_DNN_K, KB_DNN_V, KB_DNN_O, KB_DNN_SCALE, KB_DNN_NEG_INF };
#define KB_DNN_STATS_UID 111   /* the softmax stats (virtual): LOG(row sum) + row max, fp32 [b,h,s,1] */

#define KB_DNN_MAX_DESC 96
#define KB_DNN_MAX_OPS 16   /* the causal graph has 14 */

/* Every descriptor of one graph, destroyed together. */
typedef struct {
    cudnnBackendDescriptor_t all[KB_DNN_MAX_DESC];
    int n_all;
    cudnnBackendDescriptor_t ops[KB_DNN_MAX_OPS];  /* the operations, in graph order */
    int n_ops;
    cudnnBackendDescriptor_t graph, plan;          /* need a handle: kb_dnn_sdpa_plan */
    cudnnBackendDescriptor_t pack;                 /* the variant pack: kb_dnn_sdpa_bind */
    int64_t workspace_bytes;
    float scale, neg_inf;                          /* the by-value scalars, kept for the variant pack */
} kb_dnn_graph;

/* The causal mask's value for cuDNN version (cudnnGetVersion): -FLT_MAX below 9.10 (91000),
 * where -inf gives NaN for fully masked tiles, else -inf (cudnn-frontend's choice). */
float kb_dnn_mask_value(size_t version);

/* cuDNN's data type of a kbench dtype (fp16 -> HALF, bf16 -> BFLOAT16, fp32 -> FLOAT);
 * -1 for the others. */
int kb_dnn_data_type(kb_dtype dt, cudnnDataType_t *out);

/* Build and finalise the tensors and operations of the SDPA graph of op (no handle
 * needed). On failure everything made is destroyed and err holds the KB_DNN_CHECK report. */
kb_status kb_dnn_sdpa_ops(const kb_dnn_api *api, const kb_vendor_sdpa *op, kb_dnn_graph *g, char *err, size_t n);

/* The operation graph, the heuristic's engine configurations and the first execution plan
 * that finalises (needs a handle, i.e. a GPU). info gets the version, the number of
 * configurations, the engine and the workspace. KB_ERR_INPUT when no engine supports the
 * graph (the statuses say so). */
kb_status kb_dnn_sdpa_plan(const kb_dnn_api *api, cudnnHandle_t h, kb_dnn_graph *g, kb_vendor_info *info,
                           char *err, size_t n);

/* The variant pack: Q, K, V, O of op, the by-value scalars and the workspace ws (of
 * workspace_bytes). Needs no handle. */
kb_status kb_dnn_sdpa_bind(const kb_dnn_api *api, kb_dnn_graph *g, const kb_vendor_sdpa *op, uint64_t ws, char *err,
                           size_t n);

/* Execute the bound plan on the handle's stream. */
kb_status kb_dnn_sdpa_run(const kb_dnn_api *api, cudnnHandle_t h, kb_dnn_graph *g, char *err, size_t n);

void kb_dnn_graph_destroy(const kb_dnn_api *api, kb_dnn_graph *g);

/* ---- errors ---- */

/* Map a cuDNN status (pure), by its family: success -> KB_OK; 1xxx (not initialised,
 * sublibrary or license problems) -> KB_ERR_SETUP; 2xxx bad parameter -> KB_ERR_INTERNAL
 * (kbench built the graph wrongly); 3xxx not supported -> KB_ERR_INPUT (no engine for the
 * problem), except an incompatible driver or runtime, a missing prerequisite or sublibrary
 * -> KB_ERR_SETUP; 4xxx internal -> KB_ERR_INTERNAL, its allocation failures -> KB_ERR_OOM;
 * 5xxx execution failed -> KB_ERR_FAULT. */
kb_status kb_dnn_status(cudnnStatus_t s);

/* The check behind KB_DNN_CHECK: "file:line function: call -> NAME: message", the name
 * from cudnnGetErrorString and the message from cudnnGetLastErrorString (api may be NULL). */
kb_status kb_dnn_check(const kb_dnn_api *api, cudnnStatus_t s, char *err, size_t n, const char *file, int line,
                       const char *func, const char *call);

#define KB_DNN_CHECK(api, err, n, call) kb_dnn_check((api), (call), (err), (n), __FILE__, __LINE__, __func__, #call)

#endif /* KB_CUDNN_SDPA_H */
