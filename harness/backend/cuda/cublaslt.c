/* cublaslt.c - cuBLASLt loaded with dlopen, and a kbench matmul's descriptors, types,
 * layouts, alignments and algorithm text (see cublaslt.h). Nothing here needs a GPU. */
#include "backend/cuda/cublaslt.h"

#include "backend/cuda/cuda_api.h"
#include "backend/cuda/vendor_dl.h"
#include "core/precision.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kb_dl_sym syms[] = {
#define E(field) { "cublasLt" #field, offsetof(kb_lt_api, field) }
    E(GetVersion), E(GetCudartVersion), E(GetStatusName), E(GetStatusString), E(Create), E(Destroy),
    E(MatmulDescCreate), E(MatmulDescDestroy), E(MatmulDescSetAttribute), E(MatmulDescGetAttribute),
    E(MatrixLayoutCreate), E(MatrixLayoutDestroy), E(MatrixLayoutGetAttribute),
    E(MatmulPreferenceCreate), E(MatmulPreferenceDestroy), E(MatmulPreferenceSetAttribute),
    E(MatmulPreferenceGetAttribute), E(MatmulAlgoGetHeuristic), E(MatmulAlgoGetIds), E(MatmulAlgoInit),
    E(MatmulAlgoCapGetAttribute), E(MatmulAlgoConfigSetAttribute), E(MatmulAlgoConfigGetAttribute),
    E(MatmulAlgoCheck), E(Matmul),
#undef E
};

kb_status kb_lt_load(kb_lt_api *api, char *err, size_t n)
{
    memset(api, 0, sizeof *api);
    return kb_dl_load(&api->lib, api, syms, sizeof syms / sizeof syms[0], "KBENCH_LIBCUBLASLT", KB_LT_SONAME,
                      "cuBLASLt", err, n);
}

void kb_lt_unload(kb_lt_api *api)
{
    kb_dl_forget(&api->lib, api, sizeof *api);   /* stays loaded: see vendor_dl.h */
}

/* ---- types, layouts, alignment ---- */

int kb_lt_types_of(kb_dtype dt, kb_lt_types *out, char *why, size_t n)
{
    /*                  A/B operands        C and D       compute                        scale */
    static const struct { cudaDataType_t ab, cd; cublasComputeType_t compute; cudaDataType_t scale; } table[] = {
        [KB_DT_FP32] = { CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F },
        [KB_DT_TF32] = { CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F },
        [KB_DT_FP16] = { CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F },
        [KB_DT_BF16] = { CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F },
        [KB_DT_INT8] = { CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I },
        [KB_DT_FP8E4M3] = { CUDA_R_8F_E4M3, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F },
    };
    if (dt == KB_DT_FP8E5M2 || (unsigned)dt >= sizeof table / sizeof table[0]) {
        snprintf(why, n, "cuBLASLt has no %s x %s matmul (its FP8 matmul takes e4m3 x e4m3, e4m3 x e5m2 and "
                 "e5m2 x e4m3)", kb_dtype_name(dt), kb_dtype_name(dt));
        return -1;
    }
    out->a = out->b = table[dt].ab;
    out->c = out->d = table[dt].cd;
    out->compute = table[dt].compute;
    out->scale = table[dt].scale;
    out->fp8 = dt == KB_DT_FP8E4M3;
    out->a_mode = out->b_mode = CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    return 0;
}

/* A kbench operand's scale mode under recipe r (is_b: kbench's B, the weights). */
static int scale_mode_of(int r, int is_b)
{
    switch (r) {
    case KB_RECIPE_CHANNEL: return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case KB_RECIPE_BLOCK1X128: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case KB_RECIPE_BLOCK128X128:
        return is_b ? CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F : CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case KB_RECIPE_MX: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC32_UE8M0;
    case KB_RECIPE_NV: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC16_UE4M3;
    default: return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
    }
}

int kb_lt_scaled_types_of(kb_dtype dt, int recipe, kb_lt_types *out, char *why, size_t n)
{
    static const struct { kb_dtype dt; cudaDataType_t t; } low[] = {
        { KB_DT_FP8E5M2, CUDA_R_8F_E5M2 }, { KB_DT_FP6E2M3, CUDA_R_6F_E2M3 }, { KB_DT_FP6E3M2, CUDA_R_6F_E3M2 },
        { KB_DT_FP4E2M1, CUDA_R_4F_E2M1 },
    };
    if (!kb_recipe_accepts((kb_recipe)recipe, dt, why, n))
        return -1;
    size_t i = 0;
    while (i < sizeof low / sizeof low[0] && low[i].dt != dt)
        i++;
    int narrow = i < sizeof low / sizeof low[0] && !(dt == KB_DT_FP8E5M2 && recipe == KB_RECIPE_TENSOR);
    /* e5m2/fp6/fp4 take fp8 e4m3's row (bf16 C/D, FP32 compute and scales) with their own A/B type */
    if (kb_lt_types_of(narrow ? KB_DT_FP8E4M3 : dt, out, why, n) != 0)
        return -1;
    if (narrow)
        out->a = out->b = low[i].t;
    out->a_mode = scale_mode_of(recipe, 1);   /* cuBLASLt's A is kbench's B */
    out->b_mode = scale_mode_of(recipe, 0);
    return 0;
}

int kb_lt_type_bits(cudaDataType_t t)
{
    if (t == CUDA_R_4F_E2M1)
        return 4;
    return t == CUDA_R_6F_E2M3 || t == CUDA_R_6F_E3M2 ? 8 : 8 * (int)kb_lt_type_size(t);
}

size_t kb_lt_type_size(cudaDataType_t t)
{
    switch (t) {
    case CUDA_R_32F: case CUDA_R_32I: return 4;
    case CUDA_R_16F: case CUDA_R_16BF: return 2;
    case CUDA_R_8I: case CUDA_R_8F_E4M3: case CUDA_R_8F_E5M2: case CUDA_R_6F_E2M3: case CUDA_R_6F_E3M2: return 1;
    default: return 0;
    }
}

void kb_lt_shape_of(const kb_vendor_matmul *mm, kb_lt_shape *o)
{
    memset(o, 0, sizeof *o);
    o->m = (uint64_t)mm->n;
    o->n = (uint64_t)mm->m;
    o->k = (uint64_t)mm->k;
    /* cuBLASLt's A = kbench's B: op(A) must be n x k (= B^T). B stored k x n row-major is
     * n x k column-major; stored n x k row-major it is k x n column-major, transposed. */
    o->transa = mm->b_trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    o->a_rows = mm->b_trans ? o->k : o->m;
    o->a_cols = mm->b_trans ? o->m : o->k;
    o->lda = mm->ldb;
    /* cuBLASLt's B = kbench's A: op(B) must be k x m (= A^T). */
    o->transb = mm->a_trans ? CUBLAS_OP_T : CUBLAS_OP_N;
    o->b_rows = mm->a_trans ? o->n : o->k;
    o->b_cols = mm->a_trans ? o->k : o->n;
    o->ldb = mm->lda;
    o->c_rows = o->m;
    o->c_cols = o->n;
    o->ldc = mm->ldc;
}

uint32_t kb_lt_alignment(uint64_t base, int64_t ld, size_t esz)
{
    uint32_t a = 256;
    uint64_t pitch = (uint64_t)(ld > 0 ? ld : 0) * esz;
    while (a > 1 && ((base % a) != 0 || (pitch % a) != 0))
        a /= 2;
    return a;
}

/* ---- descriptors ---- */

#define LT(call) KB_LT_CHECK(api, err, n, call)

static kb_status set_op(const kb_lt_api *api, kb_lt_desc *d, const kb_vendor_matmul *mm, char *err, size_t n)
{
    kb_status st;
    int32_t ta = d->shape.transa, tb = d->shape.transb;
    if ((st = LT(api->MatmulDescCreate(&d->op, d->types.compute, d->types.scale))) != KB_OK ||
        (st = LT(api->MatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta))) != KB_OK ||
        (st = LT(api->MatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb))) != KB_OK)
        return st;
    if (!d->types.fp8)
        return KB_OK;
    /* kbench's B is cuBLASLt's A: the scales swap with the operands */
    void *sa = (void *)(uintptr_t)mm->scale_b, *sb = (void *)(uintptr_t)mm->scale_a;
    if ((st = LT(api->MatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa))) != KB_OK ||
        (st = LT(api->MatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb))) != KB_OK)
        return st;
    if (d->types.a_mode == CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F && d->types.b_mode == d->types.a_mode)
        return KB_OK;   /* the default mode: not set, as before recipes */
    int32_t am = d->types.a_mode, bm = d->types.b_mode;
    if ((st = LT(api->MatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &am, sizeof am))) != KB_OK)
        return st;
    return LT(api->MatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, &bm, sizeof bm));
}

static kb_status set_layouts(const kb_lt_api *api, kb_lt_desc *d, char *err, size_t n)
{
    const kb_lt_shape *s = &d->shape;
    kb_status st;
    if ((st = LT(api->MatrixLayoutCreate(&d->a, d->types.a, s->a_rows, s->a_cols, s->lda))) != KB_OK ||
        (st = LT(api->MatrixLayoutCreate(&d->b, d->types.b, s->b_rows, s->b_cols, s->ldb))) != KB_OK ||
        (st = LT(api->MatrixLayoutCreate(&d->c, d->types.c, s->c_rows, s->c_cols, s->ldc))) != KB_OK)
        return st;
    return LT(api->MatrixLayoutCreate(&d->d, d->types.d, s->c_rows, s->c_cols, s->ldc));
}

static kb_status set_pref(const kb_lt_api *api, kb_lt_desc *d, const kb_vendor_matmul *mm, char *err, size_t n)
{
    kb_status st;
    uint64_t ws = mm->workspace_bytes;
    /* cuBLASLt's A is kbench's B (ldb), its B kbench's A (lda); packed fp4 rows are ld / 2 bytes */
    int bits_a = kb_lt_type_bits(d->types.a), bits_b = kb_lt_type_bits(d->types.b);
    d->align[0] = bits_a == 4 ? kb_lt_alignment(mm->b, mm->ldb / 2, 1) : kb_lt_alignment(mm->b, mm->ldb, (size_t)bits_a / 8);
    d->align[1] = bits_b == 4 ? kb_lt_alignment(mm->a, mm->lda / 2, 1) : kb_lt_alignment(mm->a, mm->lda, (size_t)bits_b / 8);
    d->align[2] = kb_lt_alignment(mm->c, mm->ldc, kb_lt_type_size(d->types.c));
    d->align[3] = kb_lt_alignment(mm->d, mm->ldc, kb_lt_type_size(d->types.d));
    static const cublasLtMatmulPreferenceAttributes_t attr[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
    };
    if ((st = LT(api->MatmulPreferenceCreate(&d->pref))) != KB_OK ||
        (st = LT(api->MatmulPreferenceSetAttribute(d->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws,
                                                   sizeof ws))) != KB_OK)
        return st;
    for (int i = 0; i < 4; i++)
        if ((st = LT(api->MatmulPreferenceSetAttribute(d->pref, attr[i], &d->align[i], sizeof d->align[i]))) != KB_OK)
            return st;
    return KB_OK;
}

kb_status kb_lt_desc_create(const kb_lt_api *api, const kb_vendor_matmul *mm, kb_lt_desc *out, char *err, size_t n)
{
    memset(out, 0, sizeof *out);
    if (kb_lt_scaled_types_of(mm->dtype, mm->recipe, &out->types, err, n) != 0)
        return KB_ERR_INPUT;
    kb_lt_shape_of(mm, &out->shape);
    kb_status st;
    if ((st = set_op(api, out, mm, err, n)) != KB_OK || (st = set_layouts(api, out, err, n)) != KB_OK ||
        (st = set_pref(api, out, mm, err, n)) != KB_OK)
        kb_lt_desc_destroy(api, out);
    return st;
}

void kb_lt_desc_destroy(const kb_lt_api *api, kb_lt_desc *d)
{
    if (d->pref) api->MatmulPreferenceDestroy(d->pref);
    cublasLtMatrixLayout_t l[4] = { d->a, d->b, d->c, d->d };
    for (int i = 0; i < 4; i++)
        if (l[i]) api->MatrixLayoutDestroy(l[i]);
    if (d->op) api->MatmulDescDestroy(d->op);
    d->pref = NULL;
    d->op = NULL;
    d->a = d->b = d->c = d->d = NULL;
}

/* ---- algorithms as text ---- */

_Static_assert(sizeof(cublasLtMatmulAlgo_t) == 8 * sizeof(uint64_t), "cublasLtMatmulAlgo_t is 8 x uint64");

void kb_lt_algo_save(const cublasLtMatmulAlgo_t *algo, uint64_t words[8])
{
    memcpy(words, algo->data, 8 * sizeof(uint64_t));
}

void kb_lt_algo_load(const uint64_t words[8], cublasLtMatmulAlgo_t *algo)
{
    memcpy(algo->data, words, 8 * sizeof(uint64_t));
}

void kb_lt_algo_format(const uint64_t words[8], char *buf, size_t n)
{
    size_t o = 0;
    if (n)
        buf[0] = 0;
    for (int i = 0; i < 8 && o < n; i++) {
        int w = snprintf(buf + o, n - o, "%s%016llx", i ? ":" : "", (unsigned long long)words[i]);
        o += w > 0 ? (size_t)w : 0;
    }
}

int kb_lt_algo_parse(const char *s, uint64_t words[8])
{
    for (int i = 0; i < 8; i++) {
        uint64_t v = 0;
        int digits = 0;
        for (; digits < 16; digits++, s++) {
            char c = *s;
            int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                  : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
            if (x < 0)
                return -1;
            v = v << 4 | (uint64_t)x;
        }
        words[i] = v;
        if (*s != (i < 7 ? ':' : '\0'))
            return -1;
        s += i < 7;
    }
    return 0;
}

/* One configuration attribute of size bytes (cuBLASLt checks the size), as an int; -1 when
 * it cannot be read. */
static int config_of(const kb_lt_api *api, const cublasLtMatmulAlgo_t *algo, cublasLtMatmulAlgoConfigAttributes_t a,
                     size_t bytes)
{
    uint32_t u32 = 0;
    uint16_t u16 = 0;
    size_t written = 0;
    void *buf = bytes == 2 ? (void *)&u16 : (void *)&u32;
    if (!api || !api->MatmulAlgoConfigGetAttribute ||
        api->MatmulAlgoConfigGetAttribute(algo, a, buf, bytes, &written) != CUBLAS_STATUS_SUCCESS)
        return -1;
    return bytes == 2 ? (int)u16 : (int)(int32_t)u32;
}

void kb_lt_algo_describe(const kb_lt_api *api, const cublasLtMatmulAlgo_t *algo, kb_vendor_info *info)
{
    info->have_algo = 1;
    kb_lt_algo_save(algo, info->algo);
    info->algo_id = config_of(api, algo, CUBLASLT_ALGO_CONFIG_ID, 4);
    info->tile = config_of(api, algo, CUBLASLT_ALGO_CONFIG_TILE_ID, 4);
    info->stages = config_of(api, algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, 4);
    info->splitk = config_of(api, algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, 4);
    info->reduction = config_of(api, algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, 4);
    info->swizzle = config_of(api, algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, 4);
    info->custom = config_of(api, algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, 4);
}

/* ---- errors ---- */

kb_status kb_lt_status(cublasStatus_t s)
{
    switch (s) {
    case CUBLAS_STATUS_SUCCESS: return KB_OK;
    case CUBLAS_STATUS_ALLOC_FAILED: return KB_ERR_OOM;
    case CUBLAS_STATUS_NOT_INITIALIZED:   /* no GPU or no context: cublasLtCreate without a driver */
    case CUBLAS_STATUS_ARCH_MISMATCH:
    case CUBLAS_STATUS_LICENSE_ERROR: return KB_ERR_SETUP;
    case CUBLAS_STATUS_NOT_SUPPORTED: return KB_ERR_INPUT;   /* no algorithm for this problem here */
    case CUBLAS_STATUS_EXECUTION_FAILED: return KB_ERR_FAULT;
    case CUBLAS_STATUS_MAPPING_ERROR: return KB_ERR_LAUNCH;
    case CUBLAS_STATUS_INVALID_VALUE:
    case CUBLAS_STATUS_INTERNAL_ERROR: return KB_ERR_INTERNAL;
    default: return KB_ERR_SETUP;
    }
}

kb_status kb_lt_check(const kb_lt_api *api, cublasStatus_t s, char *err, size_t n, const char *file, int line,
                      const char *func, const char *call)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return KB_OK;
    const char *name = api && api->GetStatusName ? api->GetStatusName(s) : NULL;
    const char *msg = name && api->GetStatusString ? api->GetStatusString(s) : NULL;
    if (name)
        kb_cuda_format_error(err, n, file, line, func, call, (int)s, name, msg);
    else
        snprintf(err, n, "%s:%d %s: %s -> cublasStatus_t %d", file, line, func, call, (int)s);
    return kb_lt_status(s);
}
