/* cublaslt_plan.c - the algorithm list of a matmul (heuristic or enumeration), the
 * chosen rank, and the call (see cublaslt_plan.h). Written from the cuBLASLt
 * documentation; the enumeration order is unit-tested, the rest needs a GPU. */
#include "backend/cuda/cublaslt_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LT(call) KB_LT_CHECK(api, err, n, call)

/* ---- the enumeration order ---- */

static const int32_t splits[] = { 2, 3, 4, 5, 6, 8, 12, 16, 32 };
#define N_SPLITS ((int)(sizeof splits / sizeof splits[0]))
static const uint32_t schemes[] = { CUBLASLT_REDUCTION_SCHEME_INPLACE, CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE,
                                    CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE };

static int n_schemes(const kb_lt_caps *c)
{
    int k = 0;
    for (int i = 0; i < 3; i++)
        k += (c->reduction_mask & schemes[i]) != 0;
    return k;
}

/* Split-K choices: 1 (no reduction), then each split with each supported scheme. */
static long n_split_choices(const kb_lt_caps *c)
{
    return 1 + (c->splitk ? (long)N_SPLITS * n_schemes(c) : 0);
}

long kb_lt_enum_count(const kb_lt_caps *c)
{
    long tiles = c->n_tiles > 0 ? c->n_tiles : 1, stages = c->n_stages > 0 ? c->n_stages : 1;
    long custom = c->custom_max >= 0 ? c->custom_max + 1 : 1, swz = c->swizzle ? 2 : 1;
    return tiles * stages * custom * swz * n_split_choices(c);
}

int kb_lt_enum_config(const kb_lt_caps *c, long i, kb_lt_config *out)
{
    if (i < 0 || i >= kb_lt_enum_count(c))
        return -1;
    long nsplit = n_split_choices(c), swz = c->swizzle ? 2 : 1;
    long custom = c->custom_max >= 0 ? c->custom_max + 1 : 1, stages = c->n_stages > 0 ? c->n_stages : 1;
    long s = i % nsplit;
    i /= nsplit;
    out->swizzle = (uint32_t)(i % swz);
    i /= swz;
    out->custom = (uint32_t)(i % custom);
    i /= custom;
    long st = i % stages;
    i /= stages;
    out->stages = c->n_stages > 0 ? c->stages[st] : CUBLASLT_MATMUL_STAGES_UNDEFINED;
    out->tile = c->n_tiles > 0 ? c->tiles[i] : CUBLASLT_MATMUL_TILE_UNDEFINED;
    if (s == 0) {
        out->splitk = 1;
        out->reduction = CUBLASLT_REDUCTION_SCHEME_NONE;
        return 0;
    }
    s--;
    int ns = n_schemes(c), k = (int)(s % ns), seen = -1;
    out->splitk = splits[s / ns];
    for (int j = 0; j < 3; j++)
        if ((c->reduction_mask & schemes[j]) && ++seen == k)
            out->reduction = schemes[j];
    return 0;
}

/* ---- the heuristic ---- */

static kb_status by_heuristic(const kb_lt_api *api, cublasLtHandle_t h, kb_lt_plan *p, kb_vendor_info *info,
                              char *err, size_t n)
{
    int want = p->mm.algo + 1 > 8 ? p->mm.algo + 1 : 8, got = 0;
    cublasLtMatmulHeuristicResult_t *res = calloc((size_t)want, sizeof *res);
    if (!res)
        return KB_ERR_OOM;
    kb_lt_desc *d = &p->desc;
    kb_status st = LT(api->MatmulAlgoGetHeuristic(h, d->op, d->a, d->b, d->c, d->d, d->pref, want, res, &got));
    if (st == KB_OK) {
        info->candidates = got;
        if (p->mm.algo >= got) {
            snprintf(err, n, "cuBLASLt's heuristic offered %d algorithm%s for this problem; rank %d does not exist",
                     got, got == 1 ? "" : "s", p->mm.algo);
            st = KB_ERR_INPUT;
        } else {
            p->algo = res[p->mm.algo].algo;
            p->workspace_bytes = res[p->mm.algo].workspaceSize;
            info->waves = res[p->mm.algo].wavesCount;
        }
    }
    free(res);
    return st;
}

/* ---- the enumeration ---- */

/* An array attribute of uint32_t: its length asked first (sizeInBytes 0), then read. */
static int cap_list(const kb_lt_api *api, const cublasLtMatmulAlgo_t *a, cublasLtMatmulAlgoCapAttributes_t attr,
                    uint32_t **out)
{
    size_t need = 0, w = 0;
    *out = NULL;
    if (api->MatmulAlgoCapGetAttribute(a, attr, NULL, 0, &need) != CUBLAS_STATUS_SUCCESS || need < sizeof **out)
        return 0;
    uint32_t *v = malloc(need);
    if (!v || api->MatmulAlgoCapGetAttribute(a, attr, v, need, &w) != CUBLAS_STATUS_SUCCESS || w > need) {
        free(v);
        return 0;
    }
    *out = v;
    return (int)(w / sizeof *v);
}

void kb_lt_read_caps(const kb_lt_api *api, const cublasLtMatmulAlgo_t *a, kb_lt_caps *c)
{
    size_t w = 0;
    memset(c, 0, sizeof *c);
    c->n_tiles = cap_list(api, a, CUBLASLT_ALGO_CAP_TILE_IDS, &c->tiles);
    c->n_stages = cap_list(api, a, CUBLASLT_ALGO_CAP_STAGES_IDS, &c->stages);
    int32_t splitk = 0, custom = 0;
    uint32_t swz = 0;
    api->MatmulAlgoCapGetAttribute(a, CUBLASLT_ALGO_CAP_SPLITK_SUPPORT, &splitk, sizeof splitk, &w);
    api->MatmulAlgoCapGetAttribute(a, CUBLASLT_ALGO_CAP_REDUCTION_SCHEME_MASK, &c->reduction_mask,
                                   sizeof c->reduction_mask, &w);
    api->MatmulAlgoCapGetAttribute(a, CUBLASLT_ALGO_CAP_CTA_SWIZZLING_SUPPORT, &swz, sizeof swz, &w);
    api->MatmulAlgoCapGetAttribute(a, CUBLASLT_ALGO_CAP_CUSTOM_OPTION_MAX, &custom, sizeof custom, &w);
    c->splitk = splitk != 0;
    c->swizzle = swz != 0;
    c->custom_max = custom;
}

void kb_lt_caps_free(kb_lt_caps *c)
{
    free(c->tiles);
    free(c->stages);
    c->tiles = c->stages = NULL;
    c->n_tiles = c->n_stages = 0;
}

/* Configure a from cfg and ask AlgoCheck; 1 when it runs within the workspace limit. */
static int try_config(const kb_lt_api *api, cublasLtHandle_t h, kb_lt_plan *p, cublasLtMatmulAlgo_t *a,
                      const kb_lt_config *cfg, cublasLtMatmulHeuristicResult_t *res)
{
    const kb_lt_desc *d = &p->desc;
    api->MatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_TILE_ID, &cfg->tile, sizeof cfg->tile);
    api->MatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_STAGES_ID, &cfg->stages, sizeof cfg->stages);
    api->MatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &cfg->custom, sizeof cfg->custom);
    api->MatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &cfg->swizzle, sizeof cfg->swizzle);
    api->MatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &cfg->splitk, sizeof cfg->splitk);
    api->MatmulAlgoConfigSetAttribute(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &cfg->reduction,
                                      sizeof cfg->reduction);
    memset(res, 0, sizeof *res);
    return api->MatmulAlgoCheck(h, d->op, d->a, d->b, d->c, d->d, a, res) == CUBLAS_STATUS_SUCCESS &&
           res->workspaceSize <= p->mm.workspace_bytes;
}

static kb_status by_enumeration(const kb_lt_api *api, cublasLtHandle_t h, kb_lt_plan *p, kb_vendor_info *info,
                                char *err, size_t n)
{
    const kb_lt_types *t = &p->desc.types;
    int ids[256], n_ids = 0, found = 0, budget = p->mm.search;
    kb_status st = LT(api->MatmulAlgoGetIds(h, t->compute, t->scale, t->a, t->b, t->c, t->d, 256, ids, &n_ids));
    kb_lt_caps *caps = malloc(sizeof *caps);
    if (st != KB_OK || !caps) {
        free(caps);
        return st != KB_OK ? st : KB_ERR_OOM;
    }
    for (int i = 0; i < n_ids && found < budget; i++) {
        cublasLtMatmulAlgo_t a;
        if (api->MatmulAlgoInit(h, t->compute, t->scale, t->a, t->b, t->c, t->d, ids[i], &a) != 0)
            continue;
        kb_lt_read_caps(api, &a, caps);
        kb_lt_config cfg;
        for (long k = 0; found < budget && kb_lt_enum_config(caps, k, &cfg) == 0; k++) {
            cublasLtMatmulHeuristicResult_t res;
            if (!try_config(api, h, p, &a, &cfg, &res))
                continue;
            if (found++ == p->mm.algo) {
                p->algo = a;
                p->workspace_bytes = res.workspaceSize;
                info->waves = res.wavesCount;
            }
        }
        kb_lt_caps_free(caps);
    }
    free(caps);
    info->candidates = found;
    if (p->mm.algo >= found) {
        snprintf(err, n, "cuBLASLt's enumeration found %d runnable configuration%s (budget %d); rank %d does not "
                 "exist", found, found == 1 ? "" : "s", budget, p->mm.algo);
        return KB_ERR_INPUT;
    }
    return KB_OK;
}

kb_status kb_lt_plan_create(const kb_lt_api *api, cublasLtHandle_t h, const kb_vendor_matmul *mm, kb_lt_plan *p,
                            kb_vendor_info *info, char *err, size_t n)
{
    memset(p, 0, sizeof *p);
    p->mm = *mm;
    kb_status st = kb_lt_desc_create(api, mm, &p->desc, err, n);
    if (st != KB_OK)
        return st;
    snprintf(info->library, sizeof info->library, "cuBLASLt");
    info->version = (long)api->GetVersion();
    st = mm->search > 0 ? by_enumeration(api, h, p, info, err, n) : by_heuristic(api, h, p, info, err, n);
    if (st != KB_OK) {
        kb_lt_desc_destroy(api, &p->desc);
        return st;
    }
    info->workspace_bytes = p->workspace_bytes;
    kb_lt_algo_describe(api, &p->algo, info);
    if (p->desc.types.scale == CUDA_R_32I) {
        p->alpha.i = (int32_t)mm->alpha;
        p->beta.i = (int32_t)mm->beta;
    } else {
        p->alpha.f = mm->alpha;
        p->beta.f = mm->beta;
    }
    return KB_OK;
}

void kb_lt_plan_destroy(const kb_lt_api *api, kb_lt_plan *p)
{
    kb_lt_desc_destroy(api, &p->desc);
}

kb_status kb_lt_plan_run(const kb_lt_api *api, cublasLtHandle_t h, const kb_lt_plan *p, uint64_t ws, void *stream,
                         char *err, size_t n)
{
    const kb_lt_desc *d = &p->desc;
    const kb_vendor_matmul *mm = &p->mm;
    /* cuBLASLt's A is kbench's B, its B kbench's A (kb_lt_shape_of) */
    const void *a = (const void *)(uintptr_t)mm->b, *b = (const void *)(uintptr_t)mm->a;
    const void *c = (const void *)(uintptr_t)mm->c;
    void *dd = (void *)(uintptr_t)mm->d;
    return LT(api->Matmul(h, d->op, &p->alpha, a, d->a, b, d->b, &p->beta, c, d->c, dd, d->d, &p->algo,
                          (void *)(uintptr_t)ws, p->workspace_bytes, (cudaStream_t)stream));
}
