/* attention_fa3.c - host side of attention/fa3 (see attention_fa3.h). */
#include "attention_fa3.h"

#include "engine/verify.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Consumer registers: O (d/2), S (BKV/2) and P (BKV/4) fragment words per thread, within the
 * 240 registers setmaxnreg gives a consumer, leaving 40 for addresses, the softmax state and
 * loop counters. Same bound as the kernel's static_assert. */
#define FA3_MAX_FRAG_WORDS 200

/* The reason a case is refused, for `return refuse(...)`. */
static int refuse(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return 0;
}

int kb_attn_fa3_is_fp8(const kb_case *c) { return c->variant == V_FA3 && c->dtype == KB_DT_FP8E4M3; }

int64_t kb_attn_fa3_vt_len(const kb_case *c) { return (c->dims[D_S] + 31) / 32 * 32; }

int64_t kb_attn_fa3_smem(const kb_case *c)
{
    int64_t d = c->dims[D_D], bkv = c->params[P_BKV], st = c->params[P_STAGES], esz = (int64_t)kb_dtype_size(c->dtype);
    int64_t o_stage = kb_attn_fa3_is_fp8(c) ? KB_FA3_BM * d * 2 : 0;   /* fp8: bf16 O, its own tile */
    return 1024 + KB_FA3_BM * d * esz + 2 * st * bkv * d * esz + o_stage + 8 * (6 + 3 * st) + 16;
}

/* Consumer fragment words per thread: O d/2, S BKV/2, P BKV/4 (16-bit) or BKV/8 (fp8). */
static int64_t frag_words(const kb_case *c)
{
    int64_t d = c->dims[D_D], bkv = c->params[P_BKV];
    return d / 2 + bkv / 2 + bkv / (kb_attn_fa3_is_fp8(c) ? 8 : 4);
}

/* FA3 budgets 32 MiB of the L2 for K and V (hopper/tile_scheduler.hpp, DynamicPersistentTileScheduler). */
#define FA3_L2_KV_BYTES (32.0 * 1024 * 1024)

int kb_attn_fa3_section(const kb_case *c)
{
    double head = 2.0 * (double)c->dims[D_S] * (double)c->dims[D_D] * (double)kb_dtype_size(c->dtype);
    int sect = 1;
    while (sect < (1 << 20) && 2.0 * sect * head <= FA3_L2_KV_BYTES)
        sect *= 2;
    return sect;
}

int kb_attn_fa3_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t d = c->dims[D_D], bkv = c->params[P_BKV], st = c->params[P_STAGES];
    int64_t bh = c->dims[D_B] * c->dims[D_H], s = c->dims[D_S];
    if (!kb_arch_has(t->sm, KB_PATH_WGMMA)) {
        snprintf(why, n, "attention/fa3 is built on wgmma.mma_async and setmaxnreg, which only sm_90a has (PTX ISA "
                 "9.7.15); the target is %s: use --arch sm_90a", kb_arch_name(t->sm));
        return 0;
    }
    if (d != 64 && d != 128 && d != 256)
        return refuse(why, n, "d=%lld: fa3 takes head dims 64, 128 and 256 (whole 128-byte TMA boxes of the head "
                      "dim, and the wgmma N of P V)", (long long)d);
    if (bkv < 16 || bkv > 256 || bkv % 16)
        return refuse(why, n, "BKV=%lld: the keys per tile are the wgmma N of Q K^T and 16-key k-steps of P V: a "
                      "multiple of 16 in [16, 256]", (long long)bkv);
    if (st < 2 || st > 4)
        return refuse(why, n, "STAGES=%lld: the K/V ring holds 2 to 4 tiles", (long long)st);
    if (kb_attn_fa3_is_fp8(c) && bkv % 64)
        return refuse(why, n, "BKV=%lld: fp8 key tiles are whole 64-key (64-byte) boxes of the transposed V, which "
                      "the k32 wgmma of P V reads K-major: a multiple of 64", (long long)bkv);
    if (frag_words(c) > FA3_MAX_FRAG_WORDS)
        return refuse(why, n, "d/2 + BKV/2 + BKV/%d = %lld fragment words per consumer thread (O, S, P) exceed %d of "
                      "the 240 registers setmaxnreg gives a consumer warpgroup: lower BKV",
                      kb_attn_fa3_is_fp8(c) ? 8 : 4, (long long)frag_words(c), FA3_MAX_FRAG_WORDS);
    if (d == 256 && c->params[P_SCHED] == SCHED_PERSISTENT)
        return refuse(why, n, "sched=persistent at d=256: the work-tile loop's state does not fit beside O's 128 "
                      "fragment words and Q's 16 wgmma descriptors in a consumer's 240 registers (ptxas spills at "
                      "every BKV): use sched: grid");
    if (kb_attn_fa3_smem(c) > t->max_shmem_per_block) {
        snprintf(why, n, "the Q tile and %lld K/V stages need %lld bytes of shared memory, over the %d-byte limit of %s",
                 (long long)st, (long long)kb_attn_fa3_smem(c), t->max_shmem_per_block, kb_arch_name(t->sm));
        return 0;
    }
    if (bh > 65535 || s > 2147483647LL)
        return refuse(why, n, "b*h=%lld, s=%lld: one (batch, head) per grid.y (at most 65535), s a 32-bit int",
                      (long long)bh, (long long)s);
    if ((s + KB_FA3_BM - 1) / KB_FA3_BM * bh > 2147483647LL - 65536)
        return refuse(why, n, "%lld work tiles of 128 rows: the tile counter and indices are 32-bit ints",
                      (long long)((s + KB_FA3_BM - 1) / KB_FA3_BM * bh));
    return 1;
}

void kb_attn_fa3_defines(const kb_case *c, kb_sb *out)
{
    kb_sb_printf(out, "ATTN_FA3=1\nHEAD_D=%lld\n", (long long)c->dims[D_D]);   /* BKV, STAGES, LSE: params */
}

/* The log-sum-exp's own tolerance, both dtype paths (docs/architecture.md, attention/fa3, "The
 * log-sum-exp's tolerance"; fp8 adds its per-row S error, docs/precision.md): unlike O it
 * is fp32 computed from fp32 scores and never rounded to the dtype, so neither the dtype's u
 * nor P's rounding enters. lse = m scale + ln l is a smooth max of
 * the scores:  |d lse| <= max_j |d s_j| + |d l| / l + the output's rounding.
 * Scores: the fp32 dot product over d (gamma_d) plus the roundings on the way to the exponent
 * and back - sl2 = scale log2(e), the FFMA (s sl2 - m sl2), m sl2, m scale, the rescale
 * arguments (telescoping over the tiles to |m_last - m_first| scale <= 2 max|s|) - each
 * <= 2u max|s|, together gamma_{d+8} max_j sum_c |q_c k_jc| scale with gamma_n = n u, u = 2^-24:
 * per row from the inputs in the reference (lse_extra, the per-element extra). l: an fp32 sum
 * of s terms (kb_tolerance(fp32, max(s, d))'s atol, as O's sums) whose terms each pass through
 * one exp2 for p and at most ceil(s / BKV) - 1 more for the tiles' rescales: ex2.approx.f32 is
 * within 2^-22 relative (PTX ISA, ex2; CUDA's exp2f likewise 2 ulp), so ceil(s / BKV) 2^-22
 * relative, that much absolute on ln l. rtol 4u: the output's fp32 rounding and logf's. */
void kb_attn_fa3_lse_tolerance(const kb_case *c, double *atol, double *rtol)
{
    int64_t s = c->dims[D_S], d = c->dims[D_D], bkv = c->params[P_BKV];
    double a2;
    kb_tolerance(KB_DT_FP32, s > d ? s : d, &a2, rtol);
    *atol = a2 + (double)((s + bkv - 1) / bkv) * ldexp(1.0, -22);
}

/* A rank-3 map {d, s, b*h} of dtype dt (fp8: bytes with the 64-byte swizzle, rows of 64). */
static kb_status one_map(kb_run *r, kb_dptr base, kb_dtype dt, uint32_t rows, const char *what, kb_arg *out)
{
    const kb_case *c = r->c;
    uint64_t d = (uint64_t)c->dims[D_D], s = (uint64_t)c->dims[D_S], bh = (uint64_t)(c->dims[D_B] * c->dims[D_H]);
    uint64_t esz = kb_dtype_size(dt);
    kb_tmap_desc m = { .dtype = dt == KB_DT_FP16 ? KB_TMAP_F16 : dt == KB_DT_BF16 ? KB_TMAP_BF16 : KB_TMAP_U8,
                       .rank = 3, .base = base, .dims = { d, s, bh }, .strides = { d * esz, s * d * esz },
                       .box = { 64, rows, 1 }, .swizzle = esz == 1 ? KB_TMAP_SWIZZLE_64B : KB_TMAP_SWIZZLE_128B };
    if (!strcmp(what, "Vt")) {   /* fp8's transposed V: {sp, d, b*h}, boxes of 64 keys x d rows */
        uint64_t sp = (uint64_t)kb_attn_fa3_vt_len(c);
        m.dims[0] = sp, m.dims[1] = d;
        m.strides[0] = sp, m.strides[1] = sp * d;
        m.box[1] = (uint32_t)d;
    }
    char err[512];
    kb_status st = kb_backend_tmap_encode(r->be, r->bx, &m, out, err, sizeof err);
    return st == KB_OK ? KB_OK : kb_run_fail(r, st, "attention/fa3: the tensor map of %s: %s", what, err);
}

kb_status kb_attn_fa3_maps(kb_run *r, kb_dptr q, kb_dptr k, kb_dptr v, kb_dptr o, kb_arg out[4])
{
    uint32_t bkv = (uint32_t)r->c->params[P_BKV];
    kb_dtype dt = r->c->dtype, ot = kb_attn_fa3_is_fp8(r->c) ? KB_DT_BF16 : dt;
    kb_status st;
    if ((st = one_map(r, q, dt, KB_FA3_BM, "Q", &out[0])) || (st = one_map(r, k, dt, bkv, "K", &out[1])) ||
        (st = one_map(r, v, dt, bkv, kb_attn_fa3_is_fp8(r->c) ? "Vt" : "V", &out[2])) ||
        (st = one_map(r, o, ot, KB_FA3_BM / 2, "O", &out[3])))
        return st;
    return KB_OK;
}

kb_geom kb_attn_fa3_geom(const kb_case *c, int sms)
{
    int64_t nmb = (c->dims[D_S] + KB_FA3_BM - 1) / KB_FA3_BM, bh = c->dims[D_B] * c->dims[D_H];
    kb_geom g = { { (unsigned)nmb, (unsigned)bh, 1 }, { KB_FA3_THREADS, 1, 1 }, (size_t)kb_attn_fa3_smem(c), { 1, 1, 1 } };
    if (c->params[P_SCHED] == SCHED_PERSISTENT) {
        int64_t tiles = nmb * bh, n = sms > 0 && sms < tiles ? sms : tiles;
        g.grid[0] = (unsigned)(n > 0 ? n : 1), g.grid[1] = 1;
    }
    return g;
}

kb_status kb_attn_fa3_counter(kb_run *r, kb_dptr *out)
{
    const int32_t zero = 0;
    kb_status st = kb_run_alloc(r, sizeof zero, out);
    return st != KB_OK ? st : kb_run_upload(r, *out, &zero, sizeof zero);
}

kb_status kb_attn_fa3_launch(kb_run *r, const kb_arg maps[4], kb_dptr lse, kb_dptr ctr, const float *descale)
{
    const kb_case *c = r->c;
    kb_device_info di = { 0 };
    int sms = r->be->device_info && r->be->device_info(r->bx, &di) == KB_OK && di.sm_count > 0 ? di.sm_count : 1;
    kb_geom g = kb_attn_fa3_geom(c, sms);
    float scale = (float)(1.0 / sqrt((double)c->dims[D_D])) * (descale ? descale[0] * descale[1] : 1.0f);
    kb_arg args[] = { maps[0], maps[1], maps[2], maps[3], kb_arg_ptr(lse), kb_arg_ptr(ctr),
                      kb_arg_i32((int32_t)c->dims[D_S]), kb_arg_i32((int32_t)(c->dims[D_B] * c->dims[D_H])),
                      kb_arg_i32(kb_attn_fa3_section(c)), kb_arg_f32(scale), kb_arg_f32(descale ? descale[2] : 1.0f) };
    return kb_run_launch(r, r->f->variants[V_FA3].entry, &g, args, descale ? 11 : 10);
}

kb_status kb_attn_fa3_check_counter(kb_run *r, kb_dptr ctr, kb_verify *v)
{
    int32_t n = -1;
    kb_status st = kb_run_download(r, &n, ctr, sizeof n);
    if (st != KB_OK)
        return st;
    const float got = (float)n, want = 0.0f;
    kb_verify_f32(v, &got, &want, 1);
    return KB_OK;
}

/* K/V tiles of work tile (row block) mb: causal, up to the one holding the block's last key. */
static double kv_tiles_of(const kb_case *c, int64_t mb)
{
    int64_t s = c->dims[D_S], bkv = c->params[P_BKV], end = (mb + 1) * KB_FA3_BM;
    if (c->params[P_CAUSAL] == CAUSAL_YES && end < s)
        s = end;
    return (double)((s + bkv - 1) / bkv);
}

/* The busiest SM's work over equal tiles' (kb_traffic.imbalance) under the persistent
 * schedule: an SM takes the next tile (the kernel's order: L2 sections of heads, row blocks
 * last to first, heads fastest) when it frees up. T <= S tiles: the heaviest alone over the
 * mean. Otherwise attention_model.c's fluid estimate: the SMs stay busy until the last tile is
 * dispatched, each then runs one of the last S tiles about half done, and the last one runs to
 * the end: T = total/S - (sum of the last S tiles)/(2 S) + w_last, against equal tiles' total/S
 * + mean/2 (SM use charges their own quantisation). Longest-first puts the short tiles last,
 * so this is 1 but for few tiles per SM. */
static double persistent_imbalance(const kb_case *c, int64_t bh, int sms)
{
    int64_t nmb = (c->dims[D_S] + KB_FA3_BM - 1) / KB_FA3_BM, tiles = nmb * bh, sect = kb_attn_fa3_section(c);
    if (c->params[P_CAUSAL] != CAUSAL_YES || sms <= 0 || nmb < 2)
        return 1.0;
    double head = 0.0;
    for (int64_t mb = 0; mb < nmb; mb++)
        head += kv_tiles_of(c, mb);
    double mean = head / (double)nmb, total = head * (double)bh, last = 0.0, w_last = 0.0;
    if (tiles <= sms)
        return kv_tiles_of(c, nmb - 1) / mean;
    for (int64_t i = tiles - 1; i >= tiles - sms; i--) {   /* the kernel's fa_tile_coords, backwards */
        int64_t per = sect * nmb, sec = i / per, r = i - sec * per, rows = bh - sec * sect < sect ? bh - sec * sect : sect;
        double w = kv_tiles_of(c, nmb - 1 - r / rows);
        last += w;
        if (i == tiles - 1)
            w_last = w;
    }
    double t = total / sms - last / (2.0 * sms) + w_last, even = total / sms + mean / 2.0;
    return t > even ? t / even : 1.0;
}

/* fp8 on top of the 16-bit count (tiles: over all heads): the pre-pass reads V and writes Vt
 * [b, h, d, s] before the kernel starts (a second launch, its bytes serial_dram_bytes; the
 * kernel then reads Vt instead of V), O leaves in bf16 (a second byte per element), and the
 * k32 wgmmas issue half as often. */
static void fp8_traffic(const kb_case *c, double tiles, kb_traffic *t)
{
    double n = (double)(c->dims[D_B] * c->dims[D_H]) * (double)c->dims[D_S] * (double)c->dims[D_D];
    double d = (double)c->dims[D_D], bkv = (double)c->params[P_BKV];
    t->launches = 2;
    t->serial_dram_bytes = 2.0 * n;
    t->dram_bytes += n;
    t->write_bytes += n;
    t->warp_insts -= tiles * 8.0 * 3.0 * (d / 32.0 + bkv / 32.0);
}

/* fa3 (attention_fa3.cu), counted as attn_mma's tiles at BQ = 128: per K/V tile and block the
 * TMA writes K and V to shared memory once, and each of the two consumer warpgroups reads its
 * 64 Q rows and K for S, V for P V (wgmma operands from shared memory; P from registers);
 * both products on the wgmma path over whole tiles; per score an FFMA and ex2, the max and
 * the row sum, the rescale of O (d/BKV FMULs per score), compare/select on masked tiles; P
 * converted to 16-bit. serial_pipes 0: the two consumer warpgroups' ping-pong and each one's
 * softmax of tile j under its P V of tile j-1 overlap the softmax with the products (FA3
 * 3.1-3.2), so the limit is the slowest pipe, and the products run at the wgmma attention
 * efficiency (estimate/calib.c: FlashAttention-3's own measured fraction of the peak, below a
 * GEMM's: kbench's fa3 has a subset of FA3's overlap). Instructions per tile and consumer warp
 * (8): 3 per wgmma (descriptor and issue),
 * per thread-score max, FFMA, ex2, FADD, half a pack (x 4.5), the rescale d/2, 40 of waits,
 * barriers and loop; the producer warp 2 d/64 TMA copies + 8. STAGES tiles in flight per
 * block. Causal: sched grid, blocks uneven as attn_mma's (the hardware's order); persistent,
 * the work tiles as blocks (SM use charges their quantisation over the SMs) and
 * persistent_imbalance. Not charged in either schedule: a work tile's start - under grid a new
 * block's first loads, under persistent the Q load, issued once the previous tile's store has
 * read the Q buffer (its K/V loads are already in flight), about one DRAM latency per tile of
 * some 17k clocks (d = 128, causal 2k: 8.5 K/V tiles of ~2k clocks) - nor the persistent
 * schedule's atomic and hand-off per tile (tens of clocks). fp8: fp8_traffic's additions. */
int kb_attn_fa3_traffic(const kb_case *c0, const kb_traffic_gpu *g, kb_traffic *t)
{
    kb_case cc = *c0;
    const kb_case *c = &cc;
    cc.params[P_BQ] = KB_FA3_BM;
    double bh = (double)(c->dims[D_B] * c->dims[D_H]), s = (double)c->dims[D_S], d = (double)c->dims[D_D];
    double bkv = (double)c->params[P_BKV], esz = (double)kb_dtype_size(c->dtype), bm = KB_FA3_BM;
    double tiles, masked, kv_bytes = 2.0 * bkv * d * esz;
    kb_attn_tile_counts(c, &tiles, &masked);
    double masked_frac = tiles > 0 ? masked / tiles : 0.0;
    tiles *= bh;
    memset(t, 0, sizeof *t);
    t->blocks = (int64_t)(bh * ceil(s / bm));
    t->threads = KB_FA3_THREADS;
    t->dyn_smem_bytes = kb_attn_fa3_smem(c);
    t->launches = 1;
    t->tensor_path = KB_TENSOR_WGMMA;
    t->serial_pipes = 0;
    t->attention_products = 1;                                        /* FA3's measured fraction, not a GEMM's */
    t->imbalance = c->params[P_SCHED] == SCHED_PERSISTENT ? persistent_imbalance(c, (int64_t)bh, g ? g->sms : 0)
                                                          : kb_attn_causal_imbalance(c, bh, g ? g->sms : 0);
    t->mma_flops = tiles * 2.0 * (2.0 * bm * bkv * d);
    t->sfu_ops = tiles * bm * (bkv + 1.0);                             /* ex2 per score, + the row's rescale */
    t->simt_flops = tiles * bm * bkv * kb_attn_softmax_per_score(c, masked_frac, g);
    t->cvt_ops = tiles * bm * bkv / 2.0 + bh * s * d / 2.0;           /* P packed to 16-bit; O once */
    t->smem_bytes = tiles * (kv_bytes + 2.0 * (bm / 2.0 * d * esz + kv_bytes)) + 2.0 * bh * s * d * esz;
    double wgmmas = d / 16.0 + bkv / 16.0, per_thread_scores = bkv / 2.0;
    t->warp_insts = tiles * (8.0 * (3.0 * wgmmas + 4.5 * per_thread_scores + d / 2.0 + 40.0) + 2.0 * d / 64.0 + 8.0);
    t->l2_bytes = tiles * kv_bytes + 2.0 * bh * s * d * esz;
    t->dram_bytes = 4.0 * bh * s * d * esz;                            /* K and V of a head stay in L2 */
    t->write_bytes = bh * s * d * esz;
    t->inflight_bytes = (double)c->params[P_STAGES] * kv_bytes / t->threads;
    if (kb_attn_fa3_is_fp8(c))
        fp8_traffic(c, tiles, t);
    return 1;
}
