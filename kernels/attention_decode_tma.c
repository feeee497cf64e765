/* attention_decode_tma.c - host side of attention/decode_tma (see attention_decode_tma.h). */
#include "attention_decode_tma.h"
#include "attention_decode_model.h"

#include <stdio.h>

int kb_attn_decode_tma_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t d = c->dims[D_D], s = c->dims[D_S];
    kb_dec_geom g;
    if (!kb_arch_has(t->sm, KB_PATH_WGMMA)) {
        snprintf(why, n, "attention/decode_tma is kbench's sm_90a decode path (TMA K/V ring on mbarriers; built, "
                 "emulated and modelled for sm_90a, as fa3 and gemm/wgmma); the target is %s: use --arch sm_90a, "
                 "or variant decode (cp.async, sm_80+)", kb_arch_name(t->sm));
        return 0;
    }
    if (d != 64 && d != 128 && d != 256) {
        snprintf(why, n, "d=%lld: decode_tma takes head dims 64, 128 and 256 (whole 128-byte TMA boxes of the head "
                 "dim with the 128B swizzle); variant decode takes any multiple of 16", (long long)d);
        return 0;
    }
    kb_dec_geom_of(c, &g);
    if (g.rows > 256 || g.bkv > 256) {
        snprintf(why, n, "%lld query rows per block, %lld keys per tile: a TMA box spans at most 256 rows",
                 (long long)g.rows, (long long)g.bkv);
        return 0;
    }
    if (s > 0xffffffffLL || g.r > 0xffffffffLL || g.heads_kv > 0xffffffffLL) {
        snprintf(why, n, "s=%lld: a tensor map dimension holds at most 2^32 elements", (long long)s);
        return 0;
    }
    return 1;   /* strides: d x 2 bytes with d a multiple of 64 is a multiple of 16, as the TMA needs */
}

static kb_status one_map(kb_run *r, kb_dptr base, uint64_t rows, uint32_t box_rows, const char *what, kb_arg *out)
{
    const kb_case *c = r->c;
    kb_dec_geom g;
    kb_dec_geom_of(c, &g);
    uint64_t d = (uint64_t)c->dims[D_D], heads = (uint64_t)g.heads_kv;
    kb_tmap_desc m = { .dtype = c->dtype == KB_DT_FP16 ? KB_TMAP_F16 : KB_TMAP_BF16, .rank = 3, .base = base,
                       .dims = { d, rows, heads }, .strides = { d * 2, rows * d * 2 }, .box = { 64, box_rows, 1 },
                       .swizzle = KB_TMAP_SWIZZLE_128B };
    char err[512];
    kb_status st = kb_backend_tmap_encode(r->be, r->bx, &m, out, err, sizeof err);
    return st == KB_OK ? KB_OK : kb_run_fail(r, st, "attention/decode_tma: the tensor map of %s: %s", what, err);
}

kb_status kb_attn_decode_tma_maps(kb_run *r, kb_dptr q, kb_dptr k, kb_dptr v, kb_arg out[3])
{
    kb_dec_geom g;
    kb_dec_geom_of(r->c, &g);
    uint64_t s = (uint64_t)r->c->dims[D_S];
    kb_status st;
    if ((st = one_map(r, q, (uint64_t)g.r, (uint32_t)g.rows, "Q", &out[0])) ||
        (st = one_map(r, k, s, (uint32_t)g.bkv, "K", &out[1])) || (st = one_map(r, v, s, (uint32_t)g.bkv, "V", &out[2])))
        return st;
    return KB_OK;
}
