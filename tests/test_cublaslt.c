/* test_cublaslt.c - the cuBLASLt glue without a GPU: the dtype -> cuBLASLt type table,
 * kbench's row-major layouts as cuBLASLt's column-major problem, MIN_ALIGNMENT from base
 * and pitch, status mapping and the check macro's report, algorithm (de)serialisation,
 * the enumeration order, loading (missing library, library without the symbols) and,
 * where libcublasLt.so.13 can be loaded, the operation descriptor, layouts and preference
 * created and read back (cuBLASLt creates them without a driver; cublasLtCreate answers
 * NOT_INITIALIZED, which must map to a setup error). */
#include "check.h"
#include "backend/cuda/cublaslt.h"
#include "core/precision.h"
#include "backend/cuda/cublaslt_plan.h"
#include "results/record_json.h"

#include <stdlib.h>
#include <string.h>

static kb_lt_api lt;        /* loaded once when the library is there */
static int have_lt;

static kb_vendor_matmul mm_of(kb_dtype dt, int a_t, int b_t, int64_t m, int64_t n, int64_t k, int pad)
{
    kb_vendor_matmul mm;
    memset(&mm, 0, sizeof mm);
    mm.dtype = dt;
    mm.m = m, mm.n = n, mm.k = k;
    mm.a_trans = a_t, mm.b_trans = b_t;
    mm.lda = (a_t ? m : k) + pad;
    mm.ldb = (b_t ? k : n) + pad;
    mm.ldc = n + pad;
    mm.a = 0x10000, mm.b = 0x20000, mm.c = mm.d = 0x30000;   /* 256-byte aligned bases, never dereferenced */
    mm.alpha = 1, mm.beta = 0;
    mm.workspace_bytes = 32u << 20;
    return mm;
}

/* ---- pure ---- */

static void test_types_table(void)
{
    kb_lt_types t;
    char why[256] = "";
    CHECK(kb_lt_types_of(KB_DT_FP32, &t, why, sizeof why) == 0 && t.a == CUDA_R_32F && t.d == CUDA_R_32F &&
          t.compute == CUBLAS_COMPUTE_32F && t.scale == CUDA_R_32F && !t.fp8);
    CHECK(kb_lt_types_of(KB_DT_TF32, &t, why, sizeof why) == 0 && t.a == CUDA_R_32F &&
          t.compute == CUBLAS_COMPUTE_32F_FAST_TF32);
    CHECK(kb_lt_types_of(KB_DT_FP16, &t, why, sizeof why) == 0 && t.a == CUDA_R_16F && t.c == CUDA_R_16F &&
          t.compute == CUBLAS_COMPUTE_32F);
    CHECK(kb_lt_types_of(KB_DT_BF16, &t, why, sizeof why) == 0 && t.b == CUDA_R_16BF && t.d == CUDA_R_16BF);
    CHECK(kb_lt_types_of(KB_DT_INT8, &t, why, sizeof why) == 0 && t.a == CUDA_R_8I && t.c == CUDA_R_32I &&
          t.compute == CUBLAS_COMPUTE_32I && t.scale == CUDA_R_32I);
    CHECK(kb_lt_types_of(KB_DT_FP8E4M3, &t, why, sizeof why) == 0 && t.a == CUDA_R_8F_E4M3 &&
          t.d == CUDA_R_16BF && t.fp8 && t.scale == CUDA_R_32F);
    CHECK(kb_lt_types_of(KB_DT_FP8E5M2, &t, why, sizeof why) == -1);
    CHECK_MSG(strstr(why, "e4m3 x e5m2") != NULL, "%s", why);
    CHECK(kb_lt_type_size(CUDA_R_8F_E4M3) == 1 && kb_lt_type_size(CUDA_R_16BF) == 2 &&
          kb_lt_type_size(CUDA_R_32I) == 4 && kb_lt_type_size(CUDA_C_32F) == 0);
}

/* D^T = B^T A^T: cuBLASLt's m, n are kbench's n, m; a stored-transposed operand is OP_T. */
static void test_layout_mapping(void)
{
    static const struct { int a_t, b_t; cublasOperation_t ta, tb; } cases[] = {
        { 0, 0, CUBLAS_OP_N, CUBLAS_OP_N },   /* nn */
        { 0, 1, CUBLAS_OP_T, CUBLAS_OP_N },   /* nt: cuBLASLt's "TN", the form FP8 and IMMA need */
        { 1, 0, CUBLAS_OP_N, CUBLAS_OP_T },   /* tn */
        { 1, 1, CUBLAS_OP_T, CUBLAS_OP_T },   /* tt */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kb_vendor_matmul mm = mm_of(KB_DT_FP16, cases[i].a_t, cases[i].b_t, 48, 96, 64, 1);
        kb_lt_shape s;
        kb_lt_shape_of(&mm, &s);
        CHECK(s.m == 96 && s.n == 48 && s.k == 64);
        CHECK(s.transa == cases[i].ta && s.transb == cases[i].tb);
        /* op(A) is m x k: stored as is it is m x k, transposed k x m, with kbench B's ld */
        CHECK(s.lda == mm.ldb && s.ldb == mm.lda && s.ldc == mm.ldc);
        CHECK(cases[i].b_t ? (s.a_rows == 64 && s.a_cols == 96) : (s.a_rows == 96 && s.a_cols == 64));
        CHECK(cases[i].a_t ? (s.b_rows == 48 && s.b_cols == 64) : (s.b_rows == 64 && s.b_cols == 48));
        CHECK(s.c_rows == 96 && s.c_cols == 48);
        /* the leading dimension covers the stored rows (column-major: ld >= rows) */
        CHECK((uint64_t)s.lda >= s.a_rows && (uint64_t)s.ldb >= s.b_rows && (uint64_t)s.ldc >= s.c_rows);
    }
}

static void test_alignment_from_pad(void)
{
    CHECK(kb_lt_alignment(0x10000, 64, 2) == 128);     /* 128-byte rows */
    CHECK(kb_lt_alignment(0x10000, 4096, 2) == 256);   /* capped at the default 256 */
    CHECK(kb_lt_alignment(0x10000, 65, 2) == 2);       /* pad 1, fp16: every other row odd-aligned */
    CHECK(kb_lt_alignment(0x10000, 65, 1) == 1);       /* pad 1, int8/fp8 */
    CHECK(kb_lt_alignment(0x10000, 97, 4) == 4);       /* pad 1, fp32 */
    CHECK(kb_lt_alignment(0x10008, 64, 2) == 8);       /* a misaligned base decides */
    CHECK(kb_lt_alignment(0, 0, 2) == 256);
}

static void test_status_mapping(void)
{
    CHECK(kb_lt_status(CUBLAS_STATUS_SUCCESS) == KB_OK);
    CHECK(kb_lt_status(CUBLAS_STATUS_NOT_INITIALIZED) == KB_ERR_SETUP);
    CHECK(kb_lt_status(CUBLAS_STATUS_ARCH_MISMATCH) == KB_ERR_SETUP);
    CHECK(kb_lt_status(CUBLAS_STATUS_ALLOC_FAILED) == KB_ERR_OOM);
    CHECK(kb_lt_status(CUBLAS_STATUS_NOT_SUPPORTED) == KB_ERR_INPUT);
    CHECK(kb_lt_status(CUBLAS_STATUS_EXECUTION_FAILED) == KB_ERR_FAULT);
    CHECK(kb_lt_status(CUBLAS_STATUS_MAPPING_ERROR) == KB_ERR_LAUNCH);
    CHECK(kb_lt_status(CUBLAS_STATUS_INVALID_VALUE) == KB_ERR_INTERNAL);
    CHECK(kb_lt_status(CUBLAS_STATUS_INTERNAL_ERROR) == KB_ERR_INTERNAL);
    CHECK(kb_lt_status((cublasStatus_t)12345) == KB_ERR_SETUP);
    char err[256] = "";
    CHECK(KB_LT_CHECK(NULL, err, sizeof err, CUBLAS_STATUS_SUCCESS) == KB_OK && err[0] == 0);
    CHECK(KB_LT_CHECK(NULL, err, sizeof err, CUBLAS_STATUS_EXECUTION_FAILED) == KB_ERR_FAULT);
    CHECK_MSG(strstr(err, "test_cublaslt.c:") && strstr(err, "test_status_mapping: CUBLAS_STATUS_EXECUTION_FAILED "
                                                             "-> cublasStatus_t 13"), "%s", err);
}

static void test_algo_text_roundtrip(void)
{
    cublasLtMatmulAlgo_t a, b;
    uint64_t w[8], back[8];
    for (int i = 0; i < 8; i++)
        a.data[i] = 0x0123456789abcdefull * (uint64_t)(i + 1) ^ (uint64_t)i << 60;
    kb_lt_algo_save(&a, w);
    char text[136];
    kb_lt_algo_format(w, text, sizeof text);
    CHECK_MSG(strlen(text) == 135 && text[16] == ':', "%s", text);
    CHECK(kb_lt_algo_parse(text, back) == 0 && memcmp(w, back, sizeof w) == 0);
    kb_lt_algo_load(back, &b);
    CHECK(memcmp(&a, &b, sizeof a) == 0);
    /* the record's writer (record_json.c) and this one agree on the form */
    char upper[136];
    for (size_t i = 0; i <= strlen(text); i++)
        upper[i] = (char)(text[i] >= 'a' && text[i] <= 'f' ? text[i] - 32 : text[i]);
    CHECK(kb_lt_algo_parse(upper, back) == 0 && memcmp(w, back, sizeof w) == 0);
    CHECK(kb_lt_algo_parse("", back) == -1);
    CHECK(kb_lt_algo_parse("0123", back) == -1);
    text[134] = 'g';
    CHECK(kb_lt_algo_parse(text, back) == -1);
    char longer[140];
    kb_lt_algo_format(w, longer, sizeof longer);
    strcat(longer, ":");   /* a ninth separator */
    CHECK(kb_lt_algo_parse(longer, back) == -1);
}

/* The record keeps the algorithm in the text this module parses: replayable from a record. */
static void test_record_keeps_a_replayable_algo(void)
{
    kb_case_result r;
    memset(&r, 0, sizeof r);
    r.vendor.done = 1;
    snprintf(r.vendor.info.library, sizeof r.vendor.info.library, "cuBLASLt");
    r.vendor.info.version = 130100;
    r.vendor.info.have_algo = 1;
    for (int i = 0; i < 8; i++)
        r.vendor.info.algo[i] = 0xfedcba9876543210ull >> (4 * i);
    r.vendor.info.tile = 21, r.vendor.info.splitk = 4, r.vendor.info.stages = -1, r.vendor.info.waves = 1.25f;
    kb_record_ctx ctx = { .run_id = "run", .time = "2026-01-01T00:00:00Z", .backend = "cuda" };
    json_t *rec = kb_record_json(&ctx, &r);
    json_t *v = json_object_get(rec, "vendor");
    uint64_t back[8];
    const char *text = json_string_value(json_object_get(v, "algo"));
    CHECK_MSG(text && kb_lt_algo_parse(text, back) == 0 && memcmp(back, r.vendor.info.algo, sizeof back) == 0, "%s",
              text ? text : "(none)");
    CHECK(json_integer_value(json_object_get(v, "version")) == 130100 &&
          json_integer_value(json_object_get(v, "tile")) == 21 && json_is_null(json_object_get(v, "stages")) &&
          json_real_value(json_object_get(v, "waves")) == 1.25);
    json_decref(rec);
}

static void test_enumeration_order(void)
{
    kb_lt_caps c;
    memset(&c, 0, sizeof c);
    kb_lt_config cfg;
    /* nothing supported: one configuration, undefined tile and stages, no split */
    CHECK(kb_lt_enum_count(&c) == 1);
    CHECK(kb_lt_enum_config(&c, 0, &cfg) == 0 && cfg.tile == 0 && cfg.stages == 0 && cfg.splitk == 1 &&
          cfg.reduction == CUBLASLT_REDUCTION_SCHEME_NONE && cfg.swizzle == 0 && cfg.custom == 0);
    CHECK(kb_lt_enum_config(&c, 1, &cfg) == -1 && kb_lt_enum_config(&c, -1, &cfg) == -1);
    /* 2 tiles x 3 stages x 2 custom x 2 swizzle x (1 + 9 splits x 2 schemes) */
    uint32_t tiles[2] = { 11, 22 }, stages[3] = { 5, 6, 7 };
    c.n_tiles = 2, c.tiles = tiles;
    c.n_stages = 3, c.stages = stages;
    c.custom_max = 1, c.swizzle = 1, c.splitk = 1;
    c.reduction_mask = CUBLASLT_REDUCTION_SCHEME_INPLACE | CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE;
    long n = kb_lt_enum_count(&c);
    CHECK(n == 2L * 3 * 2 * 2 * 19);
    CHECK(kb_lt_enum_config(&c, 1, &cfg) == 0 && cfg.splitk == 2 && cfg.reduction == CUBLASLT_REDUCTION_SCHEME_INPLACE);
    CHECK(kb_lt_enum_config(&c, 2, &cfg) == 0 && cfg.splitk == 2 &&
          cfg.reduction == CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE);
    CHECK(kb_lt_enum_config(&c, 18, &cfg) == 0 && cfg.splitk == 32 && cfg.swizzle == 0 && cfg.tile == 11);
    CHECK(kb_lt_enum_config(&c, 19, &cfg) == 0 && cfg.splitk == 1 && cfg.swizzle == 1);
    CHECK(kb_lt_enum_config(&c, n - 1, &cfg) == 0 && cfg.tile == 22 && cfg.stages == 7 && cfg.custom == 1 &&
          cfg.swizzle == 1 && cfg.splitk == 32);
    CHECK(kb_lt_enum_config(&c, n, &cfg) == -1);
    /* every configuration is distinct */
    int distinct = 1;
    kb_lt_config prev;
    memset(&prev, 0, sizeof prev);
    for (long i = 0; i < n && distinct; i++) {
        kb_lt_enum_config(&c, i, &cfg);
        distinct = i == 0 || memcmp(&cfg, &prev, sizeof cfg) != 0;
        prev = cfg;
    }
    CHECK(distinct);
}

/* ---- capabilities: a double of cublasLtMatmulAlgoCapGetAttribute's contract ----
 * (cublasLt.h: with sizeInBytes 0 it writes the bytes needed to sizeWritten; a buffer that does
 * not match the attribute's storage is CUBLAS_STATUS_INVALID_VALUE.) An algorithm of cuBLASLt 13
 * may list every tile id there is: 635 of them. */
#define N_TILE_IDS 635
static cublasStatus_t cap_double(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoCapAttributes_t a, void *buf,
                                 size_t bytes, size_t *written)
{
    (void)algo;
    uint32_t v[N_TILE_IDS];
    size_t need = 4;
    int n = 1;
    if (a == CUBLASLT_ALGO_CAP_TILE_IDS)
        n = N_TILE_IDS;
    else if (a == CUBLASLT_ALGO_CAP_STAGES_IDS)
        n = 3;
    for (int i = 0; i < n; i++)
        v[i] = (uint32_t)(a == CUBLASLT_ALGO_CAP_TILE_IDS ? i + 1 : a == CUBLASLT_ALGO_CAP_STAGES_IDS ? 20 + i : 1);
    need = (size_t)n * sizeof v[0];
    if (bytes == 0) {
        if (!written)
            return CUBLAS_STATUS_INVALID_VALUE;
        *written = need;
        return CUBLAS_STATUS_SUCCESS;
    }
    if (!buf || bytes < need)
        return CUBLAS_STATUS_INVALID_VALUE;
    memcpy(buf, v, need);
    if (written)
        *written = need;
    return CUBLAS_STATUS_SUCCESS;
}

/* Every tile id an algorithm lists is read (a fixed 64-entry buffer made the query fail and
 * left the enumeration with the undefined tile alone). */
static void test_caps_read_every_tile(void)
{
    kb_lt_api api;
    memset(&api, 0, sizeof api);
    api.MatmulAlgoCapGetAttribute = cap_double;
    cublasLtMatmulAlgo_t algo;
    memset(&algo, 0, sizeof algo);
    kb_lt_caps caps;
    kb_lt_read_caps(&api, &algo, &caps);
    CHECK_MSG(caps.n_tiles == N_TILE_IDS, "%d tiles read", caps.n_tiles);
    if (caps.n_tiles == N_TILE_IDS)
        for (int i = 0; i < caps.n_tiles; i++)
            CHECK(caps.tiles[i] == (uint32_t)i + 1);
    CHECK(caps.n_stages == 3 && caps.stages[2] == 22);
    CHECK(kb_lt_enum_count(&caps) >= N_TILE_IDS * 3);
    kb_lt_caps_free(&caps);
}

/* ---- loading ---- */

static void test_load_errors(void)
{
    kb_lt_api api;
    char err[512] = "";
    setenv("KBENCH_LIBCUBLASLT", "/nonexistent/libcublasLt.so.13", 1);
    CHECK(kb_lt_load(&api, err, sizeof err) == KB_ERR_SETUP && api.lib == NULL);
    CHECK_MSG(strncmp(err, "cuBLASLt not found (libcublasLt.so.13: ", 39) == 0 && strstr(err, "/nonexistent"),
              "%s", err);
    setenv("KBENCH_LIBCUBLASLT", "libm.so.6", 1);
    CHECK(kb_lt_load(&api, err, sizeof err) == KB_ERR_SETUP && api.lib == NULL);
    CHECK_MSG(strstr(err, "has no cublasLtGetVersion"), "%s", err);
    unsetenv("KBENCH_LIBCUBLASLT");
    kb_lt_unload(&api);   /* harmless on a table never loaded */
}

static void test_load(void)
{
    char err[512] = "";
    have_lt = kb_lt_load(&lt, err, sizeof err) == KB_OK;
    if (!have_lt) {
        printf("     SKIP the descriptor tests: cuBLASLt cannot be loaded here (%s)\n", err);
        return;
    }
    size_t v = lt.GetVersion();
    printf("     cuBLASLt %zu loaded\n", v);
    CHECK(v >= 130000 && v < 140000);   /* the soname's major version */
}

/* ---- descriptors (need the library, not a GPU) ---- */

static int32_t desc_i32(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a)
{
    int32_t v = -1;
    size_t w = 0;
    CHECK(lt.MatmulDescGetAttribute(d, a, &v, sizeof v, &w) == CUBLAS_STATUS_SUCCESS && w == sizeof v);
    return v;
}

static void check_layout(cublasLtMatrixLayout_t l, cudaDataType_t type, uint64_t rows, uint64_t cols, int64_t ld)
{
    uint32_t t = 0;
    uint64_t r = 0, c = 0;
    int64_t got_ld = 0;
    size_t w;
    CHECK(lt.MatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_TYPE, &t, sizeof t, &w) == 0 && t == (uint32_t)type);
    CHECK(lt.MatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_ROWS, &r, sizeof r, &w) == 0 && r == rows);
    CHECK(lt.MatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_COLS, &c, sizeof c, &w) == 0 && c == cols);
    CHECK(lt.MatrixLayoutGetAttribute(l, CUBLASLT_MATRIX_LAYOUT_LD, &got_ld, sizeof got_ld, &w) == 0 && got_ld == ld);
}

static void test_descriptors_every_dtype_and_layout(void)
{
    if (!have_lt)
        return;
    static const kb_dtype dts[] = { KB_DT_FP32, KB_DT_TF32, KB_DT_FP16, KB_DT_BF16, KB_DT_INT8, KB_DT_FP8E4M3 };
    for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++)
        for (int l = 0; l < 4; l++)
            for (int pad = 0; pad < 2; pad++) {
                kb_vendor_matmul mm = mm_of(dts[i], l >> 1, l & 1, 48, 96, 64, pad);
                kb_lt_desc d;
                char err[512] = "";
                kb_status st = kb_lt_desc_create(&lt, &mm, &d, err, sizeof err);
                CHECK_MSG(st == KB_OK, "%s layout %d pad %d: %s", kb_dtype_name(dts[i]), l, pad, err);
                if (st != KB_OK)
                    continue;
                CHECK(desc_i32(d.op, CUBLASLT_MATMUL_DESC_TRANSA) == (int32_t)d.shape.transa);
                CHECK(desc_i32(d.op, CUBLASLT_MATMUL_DESC_TRANSB) == (int32_t)d.shape.transb);
                CHECK(desc_i32(d.op, CUBLASLT_MATMUL_DESC_COMPUTE_TYPE) == (int32_t)d.types.compute);
                CHECK(desc_i32(d.op, CUBLASLT_MATMUL_DESC_SCALE_TYPE) == (int32_t)d.types.scale);
                check_layout(d.a, d.types.a, d.shape.a_rows, d.shape.a_cols, d.shape.lda);
                check_layout(d.b, d.types.b, d.shape.b_rows, d.shape.b_cols, d.shape.ldb);
                check_layout(d.c, d.types.c, d.shape.c_rows, d.shape.c_cols, d.shape.ldc);
                check_layout(d.d, d.types.d, d.shape.c_rows, d.shape.c_cols, d.shape.ldc);
                kb_lt_desc_destroy(&lt, &d);
                CHECK(d.op == NULL && d.pref == NULL);
            }
}

/* The preference carries the workspace limit and alignments that exclude algorithms the
 * padded (misaligned) rows cannot feed. */
static void test_preference_alignment(void)
{
    if (!have_lt)
        return;
    kb_vendor_matmul mm = mm_of(KB_DT_FP16, 0, 1, 48, 96, 64, 1);   /* nt, pad 1: lda 65, ldb 65, ldc 97 */
    kb_lt_desc d;
    char err[512] = "";
    CHECK_MSG(kb_lt_desc_create(&lt, &mm, &d, err, sizeof err) == KB_OK, "%s", err);
    if (!d.pref)
        return;
    static const cublasLtMatmulPreferenceAttributes_t attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
    };
    for (int i = 0; i < 4; i++) {
        uint32_t v = 0;
        size_t w;
        CHECK(lt.MatmulPreferenceGetAttribute(d.pref, attr[i], &v, sizeof v, &w) == 0);
        CHECK_MSG(v == 2 && v == d.align[i], "alignment %d: %u", i, v);   /* 65 or 97 fp16 elements a row */
    }
    uint64_t ws = 0;
    size_t w;
    CHECK(lt.MatmulPreferenceGetAttribute(d.pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws, &w) == 0);
    CHECK(ws == 32u << 20);
    kb_lt_desc_destroy(&lt, &d);

    mm = mm_of(KB_DT_FP16, 0, 1, 48, 96, 64, 0);   /* pad 0: 128-, 128-, 192-byte rows */
    CHECK(kb_lt_desc_create(&lt, &mm, &d, err, sizeof err) == KB_OK);
    CHECK(d.align[0] == 128 && d.align[1] == 128 && d.align[2] == 64 && d.align[3] == 64);
    kb_lt_desc_destroy(&lt, &d);
}

/* fp8: kbench's scale_a / scale_b become cuBLASLt's B / A scale pointers (operands swap). */
static void test_fp8_scale_pointers(void)
{
    if (!have_lt)
        return;
    kb_vendor_matmul mm = mm_of(KB_DT_FP8E4M3, 0, 1, 48, 96, 64, 0);
    mm.scale_a = 0xa000, mm.scale_b = 0xb000;
    kb_lt_desc d;
    char err[512] = "";
    CHECK_MSG(kb_lt_desc_create(&lt, &mm, &d, err, sizeof err) == KB_OK, "%s", err);
    if (!d.op)
        return;
    void *pa = NULL, *pb = NULL;
    size_t w;
    CHECK(lt.MatmulDescGetAttribute(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &pa, sizeof pa, &w) == 0);
    CHECK(lt.MatmulDescGetAttribute(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &pb, sizeof pb, &w) == 0);
    CHECK(pa == (void *)0xb000 && pb == (void *)0xa000);
    kb_lt_desc_destroy(&lt, &d);
    mm.dtype = KB_DT_FP8E5M2;
    CHECK(kb_lt_desc_create(&lt, &mm, &d, err, sizeof err) == KB_ERR_INPUT);
    CHECK_MSG(strstr(err, "no fp8e5m2 x fp8e5m2 matmul"), "%s", err);
}

/* Recipes: the fp6 / fp4 types and the scale mode of each operand, swapped onto cuBLASLt's
 * A (kbench's B, the weights) and B (kbench's A, the activations). */
static void test_scaled_types_table(void)
{
    static const struct { kb_dtype dt; int recipe; cudaDataType_t ab; int a_mode, b_mode; } cs[] = {
        { KB_DT_FP8E4M3, KB_RECIPE_TENSOR, CUDA_R_8F_E4M3, CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F,
          CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F },
        { KB_DT_FP8E4M3, KB_RECIPE_CHANNEL, CUDA_R_8F_E4M3, CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F,
          CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F },
        { KB_DT_FP8E5M2, KB_RECIPE_BLOCK1X128, CUDA_R_8F_E5M2, CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
          CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F },
        { KB_DT_FP8E4M3, KB_RECIPE_BLOCK128X128, CUDA_R_8F_E4M3, CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F,
          CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F },
        { KB_DT_FP6E2M3, KB_RECIPE_MX, CUDA_R_6F_E2M3, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0,
          CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 },
        { KB_DT_FP6E3M2, KB_RECIPE_MX, CUDA_R_6F_E3M2, CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0,
          CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0 },
        { KB_DT_FP4E2M1, KB_RECIPE_NV, CUDA_R_4F_E2M1, CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3,
          CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3 },
    };
    char why[256] = "";
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kb_lt_types t;
        CHECK_MSG(kb_lt_scaled_types_of(cs[i].dt, cs[i].recipe, &t, why, sizeof why) == 0, "%s", why);
        CHECK(t.a == cs[i].ab && t.b == cs[i].ab && t.c == CUDA_R_16BF && t.d == CUDA_R_16BF && t.fp8);
        CHECK(t.compute == CUBLAS_COMPUTE_32F && t.scale == CUDA_R_32F);
        CHECK_MSG(t.a_mode == cs[i].a_mode && t.b_mode == cs[i].b_mode, "case %zu: modes %d %d", i, t.a_mode, t.b_mode);
    }
    kb_lt_types t;
    CHECK(kb_lt_scaled_types_of(KB_DT_FP8E5M2, KB_RECIPE_TENSOR, &t, why, sizeof why) == -1 && strstr(why, "e5m2"));
    CHECK(kb_lt_scaled_types_of(KB_DT_FP4E2M1, KB_RECIPE_TENSOR, &t, why, sizeof why) == -1 &&
          strstr(why, "block scales only"));
    CHECK(kb_lt_scaled_types_of(KB_DT_BF16, KB_RECIPE_TENSOR, &t, why, sizeof why) == 0 && !t.fp8 &&
          t.a == CUDA_R_16BF && t.a_mode == CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
    CHECK(kb_lt_type_bits(CUDA_R_4F_E2M1) == 4 && kb_lt_type_bits(CUDA_R_6F_E2M3) == 8 &&
          kb_lt_type_bits(CUDA_R_16BF) == 16 && kb_lt_type_size(CUDA_R_6F_E3M2) == 1);
}

/* The descriptors cuBLASLt itself creates for recipes, read back: the scale modes on its A
 * and B, the operand types of the layouts, and packed fp4's alignment from half the pitch. */
static void test_scaled_descriptors_by_the_library(void)
{
    if (!have_lt)
        return;
    kb_vendor_matmul mm = mm_of(KB_DT_FP8E4M3, 0, 1, 48, 96, 256, 0);
    mm.scale_a = 0xa000, mm.scale_b = 0xb000, mm.recipe = KB_RECIPE_BLOCK128X128;
    kb_lt_desc d;
    char err[512] = "";
    CHECK_MSG(kb_lt_desc_create(&lt, &mm, &d, err, sizeof err) == KB_OK, "%s", err);
    if (!d.op)
        return;
    int32_t am = -1, bm = -1;
    size_t w;
    CHECK(lt.MatmulDescGetAttribute(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &am, sizeof am, &w) == 0);
    CHECK(lt.MatmulDescGetAttribute(d.op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &bm, sizeof bm, &w) == 0);
    CHECK_MSG(am == CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F && bm == CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F,
              "modes %d %d", am, bm);
    kb_lt_desc_destroy(&lt, &d);
    mm = mm_of(KB_DT_FP4E2M1, 0, 1, 48, 96, 256, 2);   /* ld 258: 129-byte packed rows */
    mm.scale_a = 0xa000, mm.scale_b = 0xb000, mm.recipe = KB_RECIPE_NV;
    CHECK_MSG(kb_lt_desc_create(&lt, &mm, &d, err, sizeof err) == KB_OK, "%s", err);
    if (!d.op)
        return;
    int32_t type = -1;
    CHECK(lt.MatrixLayoutGetAttribute(d.a, CUBLASLT_MATRIX_LAYOUT_TYPE, &type, sizeof type, &w) == 0 &&
          type == CUDA_R_4F_E2M1);
    CHECK(lt.MatmulDescGetAttribute(d.op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &am, sizeof am, &w) == 0 &&
          am == CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3);
    CHECK_MSG(d.align[0] == 1 && d.align[1] == 1 && d.align[2] == 4, "alignments %u %u %u", d.align[0], d.align[1],
              d.align[2]);
    kb_lt_desc_destroy(&lt, &d);
    mm.recipe = KB_RECIPE_TENSOR;   /* fp4 has no per-tensor recipe: refused before cuBLASLt is asked */
    CHECK(kb_lt_desc_create(&lt, &mm, &d, err, sizeof err) == KB_ERR_INPUT && strstr(err, "block scales only"));
}

/* Without a GPU, cublasLtCreate fails: a setup error, reported in the macro's words. */
static void test_create_without_gpu_is_setup_error(void)
{
    if (!have_lt)
        return;
    cublasLtHandle_t h = NULL;
    char err[512] = "";
    kb_status st = KB_LT_CHECK(&lt, err, sizeof err, lt.Create(&h));
    if (st == KB_OK) {
        printf("     (cublasLtCreate succeeded: a GPU is present; nothing to check here)\n");
        lt.Destroy(h);
        return;
    }
    CHECK(st == KB_ERR_SETUP);
    CHECK_MSG(strstr(err, "lt.Create(&h) -> CUBLAS_STATUS_NOT_INITIALIZED: "), "%s", err);
}

/* A zeroed algorithm describes itself without a GPU (its configuration reads back). */
static void test_algo_describe(void)
{
    if (!have_lt)
        return;
    cublasLtMatmulAlgo_t a;
    memset(&a, 0, sizeof a);
    a.data[7] = 42;
    kb_vendor_info info;
    memset(&info, 0, sizeof info);
    kb_lt_algo_describe(&lt, &a, &info);
    CHECK(info.have_algo && info.algo[7] == 42 && info.algo[0] == 0);
    CHECK(info.splitk >= -1 && info.tile >= -1);   /* read, or -1 where cuBLASLt declines */
}

int main(void)
{
    RUN(test_types_table);
    RUN(test_layout_mapping);
    RUN(test_alignment_from_pad);
    RUN(test_status_mapping);
    RUN(test_algo_text_roundtrip);
    RUN(test_record_keeps_a_replayable_algo);
    RUN(test_enumeration_order);
    RUN(test_caps_read_every_tile);
    RUN(test_load_errors);
    RUN(test_load);
    RUN(test_descriptors_every_dtype_and_layout);
    RUN(test_preference_alignment);
    RUN(test_fp8_scale_pointers);
    RUN(test_scaled_types_table);
    RUN(test_scaled_descriptors_by_the_library);
    RUN(test_create_without_gpu_is_setup_error);
    RUN(test_algo_describe);
    if (have_lt)
        kb_lt_unload(&lt);
    TEST_MAIN_END();
}
