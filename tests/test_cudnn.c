/* test_cudnn.c - the cuDNN glue without a GPU: status mapping and the check macro's
 * report, the dtype table, loading (missing library, library without the symbols) and,
 * where libcudnn.so.9 can be loaded, kbench's SDPA operation graph built through the
 * backend API as far as it goes without a handle: every tensor, pointwise, reduction and
 * matmul descriptor and every operation finalised, causal and not, fp16 and bf16, the
 * tensors read back; then the operation graph, which needs a handle, refused cleanly;
 * cudnnCreate without a GPU maps to a setup error. */
#include "check.h"
#include "backend/cuda/cudnn_sdpa.h"

#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static kb_dnn_api dnn;
static int have_dnn;

static kb_vendor_sdpa sdpa_of(kb_dtype dt, int causal)
{
    kb_vendor_sdpa op;
    memset(&op, 0, sizeof op);
    op.dtype = dt;
    op.b = 1, op.h = 2, op.s = 67, op.d = 128;
    op.causal = causal;
    op.scale = 0.08838834764831845f;
    op.q = 0x100000, op.k = 0x200000, op.v = 0x300000, op.o = 0x400000;
    return op;
}

static void test_status_mapping(void)
{
    CHECK(kb_dnn_status(CUDNN_STATUS_SUCCESS) == KB_OK);
    CHECK(kb_dnn_status(CUDNN_STATUS_NOT_INITIALIZED) == KB_ERR_SETUP);
    CHECK(kb_dnn_status(CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED) == KB_ERR_SETUP);
    CHECK(kb_dnn_status(CUDNN_STATUS_BAD_PARAM) == KB_ERR_INTERNAL);
    CHECK(kb_dnn_status(CUDNN_STATUS_BAD_PARAM_NOT_FINALIZED) == KB_ERR_INTERNAL);
    CHECK(kb_dnn_status(CUDNN_STATUS_NOT_SUPPORTED) == KB_ERR_INPUT);
    CHECK(kb_dnn_status(CUDNN_STATUS_NOT_SUPPORTED_GRAPH_PATTERN) == KB_ERR_INPUT);
    CHECK(kb_dnn_status(CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH) == KB_ERR_INPUT);
    CHECK(kb_dnn_status(CUDNN_STATUS_NOT_SUPPORTED_INCOMPATIBLE_CUDA_DRIVER) == KB_ERR_SETUP);
    CHECK(kb_dnn_status(CUDNN_STATUS_NOT_SUPPORTED_SUBLIBRARY_UNAVAILABLE) == KB_ERR_SETUP);
    CHECK(kb_dnn_status(CUDNN_STATUS_INTERNAL_ERROR) == KB_ERR_INTERNAL);
    CHECK(kb_dnn_status(CUDNN_STATUS_INTERNAL_ERROR_DEVICE_ALLOCATION_FAILED) == KB_ERR_OOM);
    CHECK(kb_dnn_status(CUDNN_STATUS_EXECUTION_FAILED_CUDART) == KB_ERR_FAULT);
    CHECK(kb_dnn_status((cudnnStatus_t)77) == KB_ERR_SETUP);
    char err[256] = "";
    CHECK(KB_DNN_CHECK(NULL, err, sizeof err, CUDNN_STATUS_EXECUTION_FAILED) == KB_ERR_FAULT);
    CHECK_MSG(strstr(err, "test_status_mapping: CUDNN_STATUS_EXECUTION_FAILED -> cudnnStatus_t 5000"), "%s", err);
}

static void test_data_types(void)
{
    cudnnDataType_t t;
    CHECK(kb_dnn_data_type(KB_DT_FP16, &t) == 0 && t == CUDNN_DATA_HALF);
    CHECK(kb_dnn_data_type(KB_DT_BF16, &t) == 0 && t == CUDNN_DATA_BFLOAT16);
    CHECK(kb_dnn_data_type(KB_DT_FP32, &t) == 0 && t == CUDNN_DATA_FLOAT);
    CHECK(kb_dnn_data_type(KB_DT_INT8, &t) == -1 && kb_dnn_data_type(KB_DT_FP8E4M3, &t) == -1);
}

static void test_load_errors(void)
{
    kb_dnn_api api;
    char err[512] = "";
    setenv("KBENCH_LIBCUDNN", "/nonexistent/libcudnn.so.9", 1);
    CHECK(kb_dnn_load(&api, err, sizeof err) == KB_ERR_SETUP && api.lib == NULL);
    CHECK_MSG(strncmp(err, "cuDNN not found (libcudnn.so.9: ", 32) == 0, "%s", err);
    setenv("KBENCH_LIBCUDNN", "libm.so.6", 1);
    CHECK(kb_dnn_load(&api, err, sizeof err) == KB_ERR_SETUP);
    CHECK_MSG(strstr(err, "has no cudnnGetVersion"), "%s", err);
    unsetenv("KBENCH_LIBCUDNN");
}

static void test_load(void)
{
    char err[512] = "";
    have_dnn = kb_dnn_load(&dnn, err, sizeof err) == KB_OK;
    if (!have_dnn) {
        printf("     SKIP the graph tests: cuDNN cannot be loaded here (%s)\n", err);
        return;
    }
    size_t v = dnn.GetVersion();
    printf("     cuDNN %zu loaded\n", v);
    CHECK(v >= 90000 && v < 100000);
}

/* The real tensors of a built graph, found among its descriptors by unique id. */
static void check_tensor(const kb_dnn_graph *g, int64_t uid, const int64_t dims[4], const int64_t strides[4])
{
    for (int i = 0; i < g->n_all; i++) {
        int64_t got = -1, count = 0, d[4], s[4];
        if (dnn.BackendGetAttribute(g->all[i], CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &count, &got) != 0 ||
            got != uid)
            continue;
        CHECK(dnn.BackendGetAttribute(g->all[i], CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, &count, d) == 0 &&
              count == 4 && memcmp(d, dims, sizeof d) == 0);
        CHECK(dnn.BackendGetAttribute(g->all[i], CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, &count, s) == 0 &&
              memcmp(s, strides, sizeof s) == 0);
        return;
    }
    CHECK_MSG(0, "no tensor with unique id %lld", (long long)uid);
}

static void test_sdpa_operations_finalise(void)
{
    if (!have_dnn)
        return;
    static const kb_dtype dts[] = { KB_DT_FP16, KB_DT_BF16 };
    for (int i = 0; i < 2; i++)
        for (int causal = 0; causal < 2; causal++) {
            kb_vendor_sdpa op = sdpa_of(dts[i], causal);
            kb_dnn_graph g;
            char err[1024] = "";
            kb_status st = kb_dnn_sdpa_ops(&dnn, &op, &g, err, sizeof err);
            CHECK_MSG(st == KB_OK, "%s causal %d: %s", kb_dtype_name(dts[i]), causal, err);
            if (st != KB_OK)
                continue;
            /* matmul, scale, [4 mask ops], max, sub, exp, sum, log, add, div, matmul: the stats
             * branch (log of the row sum plus the row max, into a virtual fp32 [b,h,s,1]) is
             * what cudnn-frontend's SDPA node always builds, inference too */
            CHECK_MSG(g.n_ops == (causal ? 14 : 10), "%d operations", g.n_ops);
            const int64_t sdim[4] = { 1, 2, 67, 1 }, sstr[4] = { 2 * 67, 67, 1, 1 };
            check_tensor(&g, KB_DNN_STATS_UID, sdim, sstr);
            const int64_t qdim[4] = { 1, 2, 67, 128 }, qstr[4] = { 2 * 67 * 128, 67 * 128, 128, 1 };
            const int64_t ktdim[4] = { 1, 2, 128, 67 }, ktstr[4] = { 2 * 67 * 128, 67 * 128, 1, 128 };
            check_tensor(&g, KB_DNN_Q, qdim, qstr);
            check_tensor(&g, KB_DNN_K, ktdim, ktstr);   /* K^T as a strided view of K */
            check_tensor(&g, KB_DNN_V, qdim, qstr);
            check_tensor(&g, KB_DNN_O, qdim, qstr);
            CHECK(g.scale == op.scale);
            /* the variant pack needs no handle either */
            CHECK_MSG(kb_dnn_sdpa_bind(&dnn, &g, &op, 0, err, sizeof err) == KB_OK, "%s", err);
            kb_dnn_graph_destroy(&dnn, &g);
            CHECK(g.n_all == 0 && g.n_ops == 0);
        }
    kb_vendor_sdpa op = sdpa_of(KB_DT_FP32, 0);
    kb_dnn_graph g;
    char err[256] = "";
    CHECK(kb_dnn_sdpa_ops(&dnn, &op, &g, err, sizeof err) == KB_ERR_INPUT);
    CHECK_MSG(strstr(err, "fp16 or bf16"), "%s", err);
}

/* The causal mask's value: -FLT_MAX below cuDNN 9.10, -inf from 9.10 (cudnn-frontend's
 * get_negative_inf_value: older versions give NaN for fully masked tiles with -inf). */
static size_t v908(void) { return 90800; }
static size_t v910(void) { return 91000; }
static void test_mask_value_by_version(void)
{
    if (!have_dnn)
        return;
    kb_dnn_api old = dnn, cur = dnn;
    old.GetVersion = v908;
    cur.GetVersion = v910;
    kb_vendor_sdpa op = sdpa_of(KB_DT_FP16, 1);
    kb_dnn_graph g;
    char err[1024] = "";
    CHECK_MSG(kb_dnn_sdpa_ops(&old, &op, &g, err, sizeof err) == KB_OK, "%s", err);
    CHECK_MSG(g.neg_inf == -FLT_MAX, "cuDNN 9.8: mask value %g", (double)g.neg_inf);
    kb_dnn_graph_destroy(&old, &g);
    CHECK_MSG(kb_dnn_sdpa_ops(&cur, &op, &g, err, sizeof err) == KB_OK, "%s", err);
    CHECK_MSG(isinf(g.neg_inf) && g.neg_inf < 0, "cuDNN 9.10: mask value %g", (double)g.neg_inf);
    kb_dnn_graph_destroy(&cur, &g);
}

/* The operation graph needs a handle: without one (no GPU) it does not finalise, and the
 * failure is reported, not crashed on. */
static void test_graph_needs_a_handle(void)
{
    if (!have_dnn)
        return;
    kb_vendor_sdpa op = sdpa_of(KB_DT_FP16, 1);
    kb_dnn_graph g;
    char err[1024] = "";
    if (kb_dnn_sdpa_ops(&dnn, &op, &g, err, sizeof err) != KB_OK)
        return;
    kb_vendor_info info;
    memset(&info, 0, sizeof info);
    kb_status st = kb_dnn_sdpa_plan(&dnn, NULL, &g, &info, err, sizeof err);
    CHECK(st != KB_OK);
    CHECK_MSG(strstr(err, "cudnn_sdpa.c:") && strstr(err, "CUDNN_STATUS_"), "%s", err);
    CHECK(!strcmp(info.library, "cuDNN") && info.version > 0);
    kb_dnn_graph_destroy(&dnn, &g);
}

static void test_create_without_gpu_is_setup_error(void)
{
    if (!have_dnn)
        return;
    cudnnHandle_t h = NULL;
    char err[1024] = "";
    kb_status st = KB_DNN_CHECK(&dnn, err, sizeof err, dnn.Create(&h));
    if (st == KB_OK) {
        printf("     (cudnnCreate succeeded: a GPU is present; nothing to check here)\n");
        dnn.Destroy(h);
        return;
    }
    CHECK(st == KB_ERR_SETUP);
    CHECK_MSG(strstr(err, "dnn.Create(&h) -> CUDNN_STATUS_NOT_INITIALIZED"), "%s", err);
}

int main(void)
{
    RUN(test_status_mapping);
    RUN(test_data_types);
    RUN(test_load_errors);
    RUN(test_load);
    RUN(test_sdpa_operations_finalise);
    RUN(test_mask_value_by_version);
    RUN(test_graph_needs_a_handle);
    RUN(test_create_without_gpu_is_setup_error);
    if (have_dnn)
        kb_dnn_unload(&dnn);
    TEST_MAIN_END();
}
