/* cublaslt.h - cuBLASLt, loaded at run time with dlopen("libcublasLt.so.13"), and the
 * parts of a kbench matmul that need no GPU.
 *
 * kbench never links cuBLASLt: the binary starts, and `kbench list` works, on a machine
 * without it (readelf -d build/kbench names no libcublasLt). cublasLt.h is included for
 * its types only; the table's fields drop the "cublasLt" prefix (api->MatmulDescCreate).
 *
 * What works without a driver, and is unit-tested (tests/test_cublaslt.c): loading the
 * library, the dtype -> (A/B/C/D type, compute type, scale type) table, kbench's row-major
 * layouts mapped onto cuBLASLt's column-major descriptors, the MIN_ALIGNMENT preferences
 * derived from base address and leading dimension, creating the operation descriptor,
 * the four matrix layouts and the preference (cuBLASLt creates them without a GPU),
 * algorithm (de)serialisation, and status -> kb_status with the one check-macro shape of
 * the project (KB_LT_CHECK, as KB_CU_CHECK). cublasLtCreate, the heuristic, AlgoInit and
 * cublasLtMatmul need a GPU: cublaslt_plan.h.
 */
#ifndef KB_CUBLASLT_H
#define KB_CUBLASLT_H

/* cublasLt.h declares one function without a prototype (cublasLtLoggerForceDisable()) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <cublasLt.h>
#pragma GCC diagnostic pop

#include "backend/backend.h"

#define KB_LT_SONAME "libcublasLt.so.13"

typedef struct {
    void *lib;  /* dlopen handle; NULL when not loaded */
    size_t (*GetVersion)(void);
    size_t (*GetCudartVersion)(void);   /* the CUDA runtime it links (statically): 13000 = 13.0 */
    const char *(*GetStatusName)(cublasStatus_t s);
    const char *(*GetStatusString)(cublasStatus_t s);
    cublasStatus_t (*Create)(cublasLtHandle_t *h);
    cublasStatus_t (*Destroy)(cublasLtHandle_t h);
    cublasStatus_t (*MatmulDescCreate)(cublasLtMatmulDesc_t *d, cublasComputeType_t compute, cudaDataType_t scale);
    cublasStatus_t (*MatmulDescDestroy)(cublasLtMatmulDesc_t d);
    cublasStatus_t (*MatmulDescSetAttribute)(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a,
                                             const void *buf, size_t bytes);
    cublasStatus_t (*MatmulDescGetAttribute)(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t a, void *buf,
                                             size_t bytes, size_t *written);
    cublasStatus_t (*MatrixLayoutCreate)(cublasLtMatrixLayout_t *l, cudaDataType type, uint64_t rows, uint64_t cols,
                                         int64_t ld);
    cublasStatus_t (*MatrixLayoutDestroy)(cublasLtMatrixLayout_t l);
    cublasStatus_t (*MatrixLayoutGetAttribute)(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t a, void *buf,
                                               size_t bytes, size_t *written);
    cublasStatus_t (*MatmulPreferenceCreate)(cublasLtMatmulPreference_t *p);
    cublasStatus_t (*MatmulPreferenceDestroy)(cublasLtMatmulPreference_t p);
    cublasStatus_t (*MatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a,
                                                   const void *buf, size_t bytes);
    cublasStatus_t (*MatmulPreferenceGetAttribute)(cublasLtMatmulPreference_t p, cublasLtMatmulPreferenceAttributes_t a,
                                                   void *buf, size_t bytes, size_t *written);
    cublasStatus_t (*MatmulAlgoGetHeuristic)(cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
                                             cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c,
                                             cublasLtMatrixLayout_t d, cublasLtMatmulPreference_t pref, int requested,
                                             cublasLtMatmulHeuristicResult_t results[], int *returned);
    cublasStatus_t (*MatmulAlgoGetIds)(cublasLtHandle_t h, cublasComputeType_t compute, cudaDataType_t scale,
                                       cudaDataType_t at, cudaDataType_t bt, cudaDataType_t ct, cudaDataType_t dt,
                                       int requested, int ids[], int *returned);
    cublasStatus_t (*MatmulAlgoInit)(cublasLtHandle_t h, cublasComputeType_t compute, cudaDataType_t scale,
                                     cudaDataType_t at, cudaDataType_t bt, cudaDataType_t ct, cudaDataType_t dt,
                                     int id, cublasLtMatmulAlgo_t *algo);
    cublasStatus_t (*MatmulAlgoCapGetAttribute)(const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoCapAttributes_t a,
                                                void *buf, size_t bytes, size_t *written);
    cublasStatus_t (*MatmulAlgoConfigSetAttribute)(cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t a,
                                                   const void *buf, size_t bytes);
    cublasStatus_t (*MatmulAlgoConfigGetAttribute)(const cublasLtMatmulAlgo_t *algo,
                                                   cublasLtMatmulAlgoConfigAttributes_t a, void *buf, size_t bytes,
                                                   size_t *written);
    cublasStatus_t (*MatmulAlgoCheck)(cublasLtHandle_t h, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t a,
                                      cublasLtMatrixLayout_t b, cublasLtMatrixLayout_t c, cublasLtMatrixLayout_t d,
                                      const cublasLtMatmulAlgo_t *algo, cublasLtMatmulHeuristicResult_t *result);
    cublasStatus_t (*Matmul)(cublasLtHandle_t h, cublasLtMatmulDesc_t op, const void *alpha, const void *a,
                             cublasLtMatrixLayout_t al, const void *b, cublasLtMatrixLayout_t bl, const void *beta,
                             const void *c, cublasLtMatrixLayout_t cl, void *d, cublasLtMatrixLayout_t dl,
                             const cublasLtMatmulAlgo_t *algo, void *ws, size_t ws_bytes, cudaStream_t stream);
} kb_lt_api;

/* Open cuBLASLt and resolve every entry of the table: $KBENCH_LIBCUBLASLT when set, else
 * "libcublasLt.so.13" on the loader's path, else the one beside the CUDA toolkit kbench was
 * built with (<toolkit>/lib64, where the toolkit installs it outside the loader's path).
 * KB_OK, or KB_ERR_SETUP with "cuBLASLt not found (libcublasLt.so.13: <dlerror>)" or the
 * missing symbol in err (the library is closed again). Release with kb_lt_unload. */
kb_status kb_lt_load(kb_lt_api *api, char *err, size_t n);
/* Clear the table (the library stays loaded: vendor_dl.h). */
void kb_lt_unload(kb_lt_api *api);

/* ---- pure: types, layouts, alignment ---- */

/* The cuBLASLt types of a kbench dtype (the same operand and output types kbench's own
 * kernels use: fp32 C/D for tf32, int32 for int8, bf16 for fp8). */
typedef struct {
    cudaDataType_t a, b, c, d;   /* c == d */
    cublasComputeType_t compute;
    cudaDataType_t scale;        /* of alpha and beta (CUDA_R_32I for int8, else CUDA_R_32F) */
    int fp8;                     /* A/B scale pointers are set (fp8, fp6, fp4) */
    int a_mode, b_mode;          /* cublasLtMatmulMatrixScale_t of cuBLASLt's A (kbench's B) and B
                                  * (kbench's A); SCALAR_32F unless a recipe says otherwise */
} kb_lt_types;

/* 0 and *out for a dtype cuBLASLt can multiply; -1 with the reason in why otherwise
 * (fp8 e5m2 x e5m2: cuBLASLt's FP8 matmul takes e4m3 x e4m3, e4m3 x e5m2, e5m2 x e4m3). */
int kb_lt_types_of(kb_dtype dt, kb_lt_types *out, char *why, size_t n);

/* The same under scaling recipe (kb_recipe, core/precision.h): the fp6 / fp4 types
 * (CUDA_R_6F_E2M3, CUDA_R_6F_E3M2, CUDA_R_4F_E2M1), and the scale modes per operand:
 * tensor SCALAR_32F, channel OUTER_VEC_32F, block1x128 VEC128_32F, block128x128 VEC128_32F for
 * the activations (kbench's A) and BLK128x128_32F for the weights (kbench's B), mx
 * VEC32_UE8M0, nv VEC16_UE4M3, swapped onto cuBLASLt's A and B as the operands are.
 * e5m2 x e5m2 is refused for the per-tensor recipe only (what cuBLASLt does with MX e5m2 is
 * its heuristic's answer). -1 and the reason for a dtype the recipe does not define. */
int kb_lt_scaled_types_of(kb_dtype dt, int recipe, kb_lt_types *out, char *why, size_t n);

/* Bits of one element of a cudaDataType_t kbench uses (CUDA_R_4F_E2M1: 4, two per byte;
 * CUDA_R_6F_*: 8, one code per byte as cuda_fp6.h stores it - an assumption, unverified on a
 * GPU); 0 for others. */
int kb_lt_type_bits(cudaDataType_t t);

/* kbench's row-major D[m x n] = A[m x k] B[k x n] as cuBLASLt's column-major problem:
 * D^T = B^T A^T, i.e. cuBLASLt's A is kbench's B, its B kbench's A, its m x n = n x m. A
 * row-major matrix of ld is the transposed column-major matrix of the same ld, so a
 * kbench operand stored as is ('n') needs no transpose, one stored transposed ('t') needs
 * CUBLAS_OP_T. Rows/cols are of the matrices as stored (before op). */
typedef struct {
    uint64_t m, n, k;            /* cuBLASLt's: kbench's n, m, k */
    cublasOperation_t transa, transb;
    uint64_t a_rows, a_cols; int64_t lda;  /* cuBLASLt's A = kbench's B */
    uint64_t b_rows, b_cols; int64_t ldb;  /* cuBLASLt's B = kbench's A */
    uint64_t c_rows, c_cols; int64_t ldc;  /* C and D */
} kb_lt_shape;
void kb_lt_shape_of(const kb_vendor_matmul *mm, kb_lt_shape *out);

/* The MIN_ALIGNMENT_*_BYTES a matrix allows: the largest power of two, at most 256 (the
 * preference's default), dividing its base address and its row pitch ld * esz, so that
 * every row the algorithm starts at is as aligned as it assumes. A base address of 0
 * (unknown) counts as 256-byte aligned. */
uint32_t kb_lt_alignment(uint64_t base, int64_t ld, size_t esz);

/* Storage bytes of one element of a cudaDataType_t kbench uses; 0 for others. */
size_t kb_lt_type_size(cudaDataType_t t);

/* ---- descriptors (no GPU needed) ---- */

typedef struct {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c, d;   /* cuBLASLt's A, B (kb_lt_shape), C, D */
    cublasLtMatmulPreference_t pref;
    kb_lt_types types;
    kb_lt_shape shape;
    uint32_t align[4];                   /* MIN_ALIGNMENT_{A,B,C,D}_BYTES set in pref */
} kb_lt_desc;

/* The operation descriptor (compute and scale type, transposes, scale pointers and, for a
 * recipe other than per tensor, CUBLASLT_MATMUL_DESC_A/B_SCALE_MODE), the four layouts and the
 * preference (workspace limit, alignments) of mm. On failure everything created is destroyed
 * and err holds the KB_LT_CHECK report. */
kb_status kb_lt_desc_create(const kb_lt_api *api, const kb_vendor_matmul *mm, kb_lt_desc *out, char *err, size_t n);
void kb_lt_desc_destroy(const kb_lt_api *api, kb_lt_desc *d);

/* ---- algorithms as text: 8 words, as the record keeps them ---- */

void kb_lt_algo_save(const cublasLtMatmulAlgo_t *algo, uint64_t words[8]);
void kb_lt_algo_load(const uint64_t words[8], cublasLtMatmulAlgo_t *algo);
/* "w0:w1:...:w7", 16 lower-case hex digits each (135 characters + NUL; n >= 136). */
void kb_lt_algo_format(const uint64_t words[8], char *buf, size_t n);
/* Parse the text kb_lt_algo_format writes; 0, or -1 when it is not 8 hex words. */
int kb_lt_algo_parse(const char *s, uint64_t words[8]);
/* The configuration of algo (CUBLASLT_ALGO_CONFIG_*) into info's algo_id, tile, stages,
 * splitk, reduction, swizzle, custom (-1 where cuBLASLt does not say), and its words. */
void kb_lt_algo_describe(const kb_lt_api *api, const cublasLtMatmulAlgo_t *algo, kb_vendor_info *info);

/* ---- errors: the check macro of the project, for cublasStatus_t ---- */

/* Map a cuBLASLt status (pure): success -> KB_OK; alloc failed -> KB_ERR_OOM; not
 * initialized (no GPU, no context), arch mismatch, license -> KB_ERR_SETUP; not supported
 * (no algorithm or kernel for the problem) -> KB_ERR_INPUT; execution failed -> KB_ERR_FAULT;
 * mapping error -> KB_ERR_LAUNCH; invalid value (kbench used the API wrongly), internal
 * error -> KB_ERR_INTERNAL; anything else -> KB_ERR_SETUP. */
kb_status kb_lt_status(cublasStatus_t s);

/* The check behind KB_LT_CHECK: KB_OK on success; otherwise the one-line report
 * "file:line function: call -> NAME: message" (cublasLtGetStatusName/String when api is
 * loaded) into err and kb_lt_status(s). api may be NULL. */
kb_status kb_lt_check(const kb_lt_api *api, cublasStatus_t s, char *err, size_t n, const char *file, int line,
                      const char *func, const char *call);

#define KB_LT_CHECK(api, err, n, call) kb_lt_check((api), (call), (err), (n), __FILE__, __LINE__, __func__, #call)

#endif /* KB_CUBLASLT_H */
