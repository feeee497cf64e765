/* gemm_wgmma.c - host side of gemm/wgmma: tensor maps and the persistent grid. */
#include "gemm_wgmma.h"

#include <stdio.h>

static kb_tmap_dtype map_dtype(kb_dtype d, int output)
{
    if (output)   /* C and D: int32 for int8, bf16 for fp8, else the operand type */
        return d == KB_DT_INT8 ? KB_TMAP_I32 : d == KB_DT_FP16 ? KB_TMAP_F16 : KB_TMAP_BF16;
    return d == KB_DT_FP16 ? KB_TMAP_F16 : d == KB_DT_BF16 ? KB_TMAP_BF16 : KB_TMAP_U8;
}

static kb_tmap_swizzle span_swizzle(unsigned span)
{
    return span == 128 ? KB_TMAP_SWIZZLE_128B : span == 64 ? KB_TMAP_SWIZZLE_64B : KB_TMAP_SWIZZLE_32B;
}

/* One rank-2 map: dims {inner, outer} elements, row stride ld * esz bytes, box {bi, bo}. */
static kb_status one_map(kb_run *r, kb_tmap_dtype dt, kb_dptr base, int64_t inner, int64_t outer, int64_t ld_bytes,
                         uint32_t bi, uint32_t bo, kb_tmap_swizzle sw, const char *what, kb_arg *out)
{
    kb_tmap_desc d = { .dtype = dt, .rank = 2, .base = base, .dims = { (uint64_t)inner, (uint64_t)outer },
                       .strides = { (uint64_t)ld_bytes }, .box = { bi, bo }, .swizzle = sw };
    char err[512];
    kb_status st = kb_backend_tmap_encode(r->be, r->bx, &d, out, err, sizeof err);
    return st == KB_OK ? KB_OK : kb_run_fail(r, st, "gemm/wgmma: the tensor map of %s: %s", what, err);
}

kb_status kb_gemm_wgmma_maps(kb_run *r, const kb_gemm_geo *g, kb_dptr a, kb_dptr b, kb_dptr c, kb_dptr d,
                             kb_arg out[4])
{
    const kb_case *cs = r->c;
    const int64_t *p = cs->params;
    unsigned span = p[P_BK] * (int64_t)g->esz >= 128 ? 128u : (unsigned)(p[P_BK] * (int64_t)g->esz);
    uint32_t box_k = span / (unsigned)g->esz, bm = (uint32_t)p[P_BM], bn = (uint32_t)p[P_BN];
    kb_tmap_dtype in = map_dtype(cs->dtype, 0), o = map_dtype(cs->dtype, 1);
    kb_status st;
    if ((st = one_map(r, in, a, g->k, g->m, g->lda * (int64_t)g->esz, box_k, bm, span_swizzle(span), "A", &out[0])) ||
        (st = one_map(r, in, b, g->k, g->n, g->ldb * (int64_t)g->esz, box_k, bn, span_swizzle(span), "B", &out[1])) ||
        (st = one_map(r, o, c, g->n, g->m, g->ldc * (int64_t)g->osz, bn, bm, KB_TMAP_SWIZZLE_NONE, "C", &out[2])) ||
        (st = one_map(r, o, d, g->n, g->m, g->ldc * (int64_t)g->osz, bn, bm, KB_TMAP_SWIZZLE_NONE, "D", &out[3])))
        return st;
    return KB_OK;
}

kb_geom kb_gemm_wgmma_geom(kb_run *r)
{
    kb_geom geom = kb_gemm_geom(r->c);
    kb_device_info di = { 0 };
    int sms = r->be->device_info && r->be->device_info(r->bx, &di) == KB_OK && di.sm_count > 0 ? di.sm_count : 1;
    unsigned cl = geom.cluster[0] ? geom.cluster[0] : 1, most = (unsigned)sms / cl * cl;
    if (geom.grid[0] > (most ? most : cl))   /* whole clusters: at least one even on a 1-SM device */
        geom.grid[0] = most ? most : cl;
    return geom;
}
