/* test_attention_decode.c - attention/decode's host side (kernels/attention_decode.c) and its
 * model (attention_decode_model.c), what the kernels_attention_decode suite cannot show: ids,
 * the work model, the block geometry and the auto split, valid() with its reasons, the
 * defines, the launches, the traffic model; and the verification path against an independent
 * decode attention written here (grouped-query heads, the bottom-right causal mask): the
 * right answer passes, one element off by 3x the tolerance fails, and so do the answers of
 * the bugs the adversarial rows exist for (the top-left mask, O not rescaled when the running
 * max moves, splits averaged without their log-sum-exp). Driven through the family descriptor
 * with a host-memory fake backend and no kernel. */
#include "check.h"
#include "engine/exec.h"
#include "engine/verify.h"
#include "attention_decode.h"
#include "attention_decode_model.h"
#include "attention_fa3.h"
#include "kernels/families.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const kb_family kb_family_attention;
static const kb_family *F = &kb_family_attention;

/* ---- a fake backend: device memory is host memory, launches are recorded ---- */
#define MAX_LAUNCH 4
static struct {
    int n;
    char entry[MAX_LAUNCH][64];
    kb_geom g[MAX_LAUNCH];
    kb_arg args[MAX_LAUNCH][12];
    int nargs[MAX_LAUNCH];
} launches;

static kb_status fake_alloc(kb_backend_ctx *x, size_t bytes, kb_dptr *out)
{
    void *p = malloc(bytes);
    if (!p)
        return KB_ERR_OOM;
    memset(p, 0xff, bytes);   /* NaN in every float dtype, like the emulator's poison */
    *out = (kb_dptr)(uintptr_t)p;
    return KB_OK;
}
static void fake_free(kb_backend_ctx *x, kb_dptr p) { free((void *)(uintptr_t)p); }
static kb_status fake_copy_in(kb_backend_ctx *x, kb_dptr dst, const void *src, size_t n)
{
    memcpy((void *)(uintptr_t)dst, src, n);
    return KB_OK;
}
static kb_status fake_copy_out(kb_backend_ctx *x, void *dst, kb_dptr src, size_t n)
{
    memcpy(dst, (const void *)(uintptr_t)src, n);
    return KB_OK;
}
static kb_status fake_launch(kb_backend_ctx *x, kb_module *m, const char *entry, const kb_geom *g,
                             const kb_arg *args, int nargs)
{
    if (launches.n == MAX_LAUNCH || nargs > 12)
        return KB_ERR_LAUNCH;
    int i = launches.n++;
    snprintf(launches.entry[i], sizeof launches.entry[i], "%s", entry);
    launches.g[i] = *g;
    memcpy(launches.args[i], args, (size_t)nargs * sizeof *args);
    launches.nargs[i] = nargs;
    return KB_OK;
}
static const char *fake_last_error(kb_backend_ctx *x) { return "fake"; }

static const kb_backend fake = {
    .name = "fake",
    .last_error = fake_last_error,
    .alloc = fake_alloc,
    .free = fake_free,
    .upload = fake_copy_in,
    .download = fake_copy_out,
    .launch = fake_launch,
};

static const kb_target sm89 = { 89, 0, 99 * 1024 }, sm90 = { 90, 0, 227 * 1024 };

/* A decode case: b sequences, h query heads in groups of `group` per KV head, s keys, head dim d. */
static kb_case make(kb_dtype dt, int64_t b, int64_t h, int64_t s, int64_t d, int causal, int64_t q_len,
                    int64_t group)
{
    kb_case c;
    memset(&c, 0, sizeof c);
    c.family = kb_family_find("attention");
    c.variant = kb_family_variant_find(F, "decode");
    c.dtype = dt;
    c.dims[D_B] = b, c.dims[D_H] = h, c.dims[D_S] = s, c.dims[D_D] = d;
    for (int p = 0; p < F->n_params; p++)
        c.params[p] = F->params[p].def;
    c.params[P_CAUSAL] = causal;
    c.params[P_QLEN] = q_len;
    c.params[P_GROUP] = group;
    c.seed = 42;
    c.shape_name = -1;
    return c;
}

static int valid_says(const kb_case *c, const kb_target *t, const char *needle)
{
    char why[256] = "";
    int ok = F->valid(c, t, why, sizeof why);
    if (!needle)
        return ok;
    if (ok || !strstr(why, needle)) {
        fprintf(stderr, "  valid: %d, reason '%s', expected '%s'\n", ok, why, needle);
        return 0;
    }
    return 1;
}

static void run_init(kb_run *r, const kb_case *c)
{
    memset(r, 0, sizeof *r);
    r->be = &fake;
    r->f = F;
    r->c = c;
    r->target = sm90;
    launches.n = 0;
}

static void test_registered_and_ids(void)
{
    CHECK(V_DECODE == kb_family_variant_find(F, "decode") && !strcmp(F->variants[V_DECODE].entry, "attn_decode"));
    CHECK(F->variants[V_DECODE].dtypes == (KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16)));
    static const char *const names[] = { "q_len", "group", "CHUNK", "WARPS", "STAGES" };
    for (int i = 0; i < 5; i++) {
        int p = kb_family_param_find(F, names[i]);
        CHECK_MSG(p == P_QLEN + i, "%s at %d", names[i], p);
        for (int v = 0; v < F->n_variants; v++)   /* decode's and decode_tma's (STAGES fa3's too): other ids unchanged */
            CHECK(kb_param_applies(F, p, v) == (KB_DEC_VARIANT(v) || (p == P_STAGES && v == V_FA3)));
    }
    CHECK(kb_param_applies(F, P_CAUSAL, V_DECODE) && !kb_param_applies(F, P_BQ, V_DECODE) &&
          !kb_param_applies(F, P_BKV, V_DECODE));
    kb_case c = make(KB_DT_BF16, 16, 64, 4096, 128, 1, 1, 8);
    kb_sb b;
    kb_sb_init(&b);
    kb_case_id(&c, &b);
    CHECK_MSG(!strcmp(b.s, "attention/decode(causal=yes,q_len=1,group=8,CHUNK=0,WARPS=4,STAGES=2)/bf16/"
                           "16x64x4096x128/pad0/eager"), "%s", b.s);
    c.variant = kb_family_variant_find(F, "mma");
    kb_case_id(&c, &b);
    CHECK_MSG(!strcmp(b.s, "attention/mma(causal=yes,BQ=32,BKV=32)/bf16/16x64x4096x128/pad0/eager"), "%s", b.s);
    kb_sb_free(&b);
    kb_path path;
    c.variant = V_DECODE;
    CHECK(F->path(&c, 90, &path) && !strcmp(path.kind, "mma/bf16"));
}

/* FLOPs 4 d per kept score, b h q_len s of them (causal: q_len (q_len - 1) / 2 fewer per head);
 * K and V once per KV head; the fp32 partials as bytes moved when there are several splits. */
static void test_work_model(void)
{
    kb_case c = make(KB_DT_BF16, 2, 8, 1000, 64, 0, 4, 4);
    c.params[P_CHUNK] = 256;   /* 4 splits */
    kb_work w = F->work(&c);
    CHECK(w.flops == 4.0 * 2 * 8 * 4 * 1000 * 64);
    CHECK(w.bytes_read == (2.0 * 8 * 4 * 64 + 2.0 * 2 * 2 * 1000 * 64) * 2);   /* Q + K + V of 2 KV heads */
    CHECK(w.bytes_written == 2.0 * 8 * 4 * 64 * 2);
    CHECK(w.bytes_moved == w.bytes_read + w.bytes_written + 2.0 * 4 * (2 * 8 * 4) * 65 * 4);
    c.params[P_CAUSAL] = 1;
    CHECK(F->work(&c).flops == 4.0 * 2 * 8 * 64 * (4 * 1000 - 6));
    c.params[P_CHUNK] = 1024;  /* one split: nothing beyond the compulsory bytes */
    CHECK(F->work(&c).bytes_moved == 0);
    kb_case mha = make(KB_DT_FP16, 2, 8, 1000, 64, 0, 4, 1);
    CHECK(F->work(&mha).bytes_read == (2.0 * 8 * 4 * 64 + 2.0 * 2 * 8 * 1000 * 64) * 2);
}

static void geom(int64_t b, int64_t h, int64_t s, int64_t d, int64_t q_len, int64_t group, int64_t warps,
                 int64_t chunk, kb_dec_geom *g)
{
    kb_case c = make(KB_DT_BF16, b, h, s, d, 1, q_len, group);
    c.params[P_WARPS] = warps;
    c.params[P_CHUNK] = chunk;
    kb_dec_geom_of(&c, g);
}

static void test_geometry_and_auto_split(void)
{
    kb_dec_geom g;
    /* Llama-70B-like decode: 8 rows per KV head in one m16 tile, 4 key warps, 64-key tiles; 128
     * KV heads want 3 splits for 264 blocks; 4096 / 3 -> 1366 -> 1408 keys (22 tiles) */
    geom(16, 64, 4096, 128, 1, 8, 4, 0, &g);
    CHECK(g.h_kv == 8 && g.heads_kv == 128 && g.r == 8 && g.mt == 1 && g.rg == 1 && g.kg == 4 && g.rows == 16);
    CHECK(g.nrb == 1 && g.bkv == 64 && g.chunk == 1408 && g.splits == 3 && g.rows_total == 1024 && g.threads == 128);
    CHECK(g.shmem == 16 * 136 * 2 + 2 * 2 * 64 * 136 * 2);   /* Q tile + 2 stages of K and V */
    /* Llama-7B-like decode: 512 heads fill the GPU, no split */
    geom(16, 32, 2048, 128, 1, 1, 4, 0, &g);
    CHECK(g.splits == 1 && g.chunk == 2048);
    /* one sequence, 8 KV heads, 128k keys: 33 splits of 4032 keys */
    geom(1, 64, 131072, 128, 1, 8, 4, 0, &g);
    CHECK(g.splits == 33 && g.chunk == 4032);
    /* at most one split per 256 keys: 4096 keys of 8 heads -> 16 splits, not 33 */
    geom(1, 64, 4096, 128, 1, 8, 4, 0, &g);
    CHECK(g.splits == 16 && g.chunk == 256);
    /* GQA 8 x 16 tokens = 128 rows at d = 128: 2 row tiles per warp, all 4 warps on rows */
    geom(1, 64, 4096, 128, 16, 8, 4, 512, &g);
    CHECK(g.r == 128 && g.mt == 2 && g.rg == 4 && g.kg == 1 && g.rows == 128 && g.nrb == 1 && g.bkv == 16);
    CHECK(g.splits == 8);
    /* d = 256 keeps one row tile per warp: 64 rows on 2 warps -> 2 row blocks */
    geom(1, 4, 50, 256, 16, 4, 2, 32, &g);
    CHECK(g.mt == 1 && g.rg == 2 && g.kg == 1 && g.rows == 32 && g.nrb == 2 && g.splits == 2);
    /* 8 key warps (128-key tiles): 300 keys in 2 splits of 256 and 44 */
    geom(1, 1, 300, 64, 8, 1, 8, 0, &g);
    CHECK(g.kg == 8 && g.bkv == 128 && g.splits == 2 && g.chunk == 256);
    /* the merge area (key warp 1's O, m, l) and the output staging outgrow the Q tile and K/V ring */
    geom(1, 64, 4096, 128, 16, 4, 4, 0, &g);
    CHECK(g.mt == 2 && g.rg == 2 && g.kg == 2 && g.rows == 64 && g.bkv == 32);
    CHECK(g.merge_bytes == (64 * 132 + 2 * 64 + 64 * 132) * 4 && g.shmem == g.merge_bytes);   /* Q's too */
}

static void test_valid_reasons(void)
{
    kb_case c = make(KB_DT_FP16, 16, 64, 4096, 128, 1, 1, 8);
    CHECK(valid_says(&c, &sm89, NULL) && valid_says(&c, &sm90, NULL));
    c.params[P_GROUP] = 5;
    CHECK(valid_says(&c, &sm90, "group=5 does not divide h=64"));
    c.params[P_GROUP] = 8;
    c.params[P_CHUNK] = 100;
    CHECK(valid_says(&c, &sm90, "CHUNK=100 is not a multiple of the tile's 64 keys"));
    c.params[P_CHUNK] = 64 * 4;
    c.dims[D_S] = 64 * 4 * 1025;
    CHECK(valid_says(&c, &sm90, "1025 splits"));
    c.dims[D_S] = 10;
    c.params[P_CHUNK] = 0;
    c.params[P_QLEN] = 16;
    CHECK(valid_says(&c, &sm90, "s=10 < q_len=16"));
    c.params[P_CAUSAL] = 0;                /* without the mask fewer keys than rows are fine */
    CHECK(valid_says(&c, &sm90, NULL));
    c.params[P_QLEN] = 1;
    c.dims[D_S] = 4096;
    c.params[P_WARPS] = 3;
    CHECK(valid_says(&c, &sm90, "WARPS=3"));
    c.params[P_WARPS] = 4;
    c.dims[D_D] = 40;
    CHECK(valid_says(&c, &sm90, "d=40"));
    c.dims[D_D] = 256;                     /* 4 key warps x 16 keys x 264 x 2 x 2 stages: 143616 B */
    CHECK(valid_says(&c, &sm90, NULL) && valid_says(&c, &sm89, "143616 bytes of shared memory"));
    c.params[P_WARPS] = 2;
    CHECK(valid_says(&c, &sm89, NULL));
    c.dims[D_D] = 128;
    c.params[P_QLEN] = 16;                 /* 128 rows on 4 row warps x 2 key warps: 136192 B to merge */
    c.params[P_WARPS] = 8;
    CHECK(valid_says(&c, &sm90, NULL));
    CHECK(valid_says(&c, &sm89, "136192 bytes of shared memory (the key warps' merge"));
    c.params[P_QLEN] = 1;
    c.params[P_WARPS] = 4;
    c.dims[D_B] = 8192 + 1;                /* 65544 KV heads in grid.y */
    CHECK(valid_says(&c, &sm90, "65535"));
    c.dims[D_B] = 1;
    c.pad = 1;
    CHECK(valid_says(&c, &sm90, "pad=1"));
}

static void test_defines(void)
{
    kb_sb sb;
    kb_sb_init(&sb);
    kb_case c = make(KB_DT_FP16, 1, 64, 4096, 128, 1, 16, 4);
    F->defines(&c, &sb);
    CHECK_MSG(!strcmp(sb.s, "ATTN_DECODE=1\nHEAD_D=128\nDEC_MT=2\nDEC_RG=2\n"), "%s", sb.s);
    kb_sb_free(&sb);
}

/* The inputs the family uploaded, read back as float; the output buffer and the geometry. */
typedef struct {
    float *q, *k, *v;
    kb_dptr o;
    kb_dec_geom g;
} inputs;

static void read_inputs(const kb_case *c, inputs *in)
{
    kb_dec_geom_of(c, &in->g);
    int64_t nq = in->g.rows_total * c->dims[D_D], nk = in->g.heads_kv * c->dims[D_S] * c->dims[D_D];
    in->q = malloc((size_t)nq * sizeof(float));
    in->k = malloc((size_t)nk * sizeof(float));
    in->v = malloc((size_t)nk * sizeof(float));
    kb_host_to_f32(c->dtype, (const void *)(uintptr_t)launches.args[0][0].v.ptr, in->q, nq);
    kb_host_to_f32(c->dtype, (const void *)(uintptr_t)launches.args[0][1].v.ptr, in->k, nk);
    kb_host_to_f32(c->dtype, (const void *)(uintptr_t)launches.args[0][2].v.ptr, in->v, nk);
    in->o = launches.args[0][3].v.ptr;
}

static void free_inputs(inputs *in)
{
    free(in->q);
    free(in->k);
    free(in->v);
}

/* How the answer is formed: right, or as one of the bugs would. */
enum { RIGHT, TOP_LEFT, NO_RESCALE, PLAIN_AVERAGE };

/* Scores of keys [j0, j1) for q (scaled, natural log units). */
static void scores(const float *q, const float *k, int64_t j0, int64_t j1, int64_t d, double *p)
{
    for (int64_t j = j0; j < j1; j++) {
        double dot = 0;
        for (int64_t e = 0; e < d; e++)
            dot += (double)q[e] * k[j * d + e];
        p[j] = dot / sqrt((double)d);
    }
}

/* Softmax(p[j0..j1)) V into out (normalised); returns the log-sum-exp, -inf when empty. With
 * NO_RESCALE, tiles of `tile` keys in order, l rescaled as the max grows but the sum of p v not. */
static double softmax_v(const double *p, const float *v, int64_t j0, int64_t j1, int64_t d, int how, int64_t tile,
                        double *out)
{
    double m = -INFINITY, l = 0;
    for (int64_t e = 0; e < d; e++)
        out[e] = 0;
    for (int64_t t0 = j0; t0 < j1; t0 += tile) {
        int64_t t1 = t0 + tile < j1 ? t0 + tile : j1;
        double mt = m;
        for (int64_t j = t0; j < t1; j++)
            mt = p[j] > mt ? p[j] : mt;
        double alpha = exp(m - mt);
        l *= alpha;
        for (int64_t e = 0; how != NO_RESCALE && e < d; e++)
            out[e] *= alpha;
        for (int64_t j = t0; j < t1; j++) {
            double w = exp(p[j] - mt);
            l += w;
            for (int64_t e = 0; e < d; e++)
                out[e] += w * v[j * d + e];
        }
        m = mt;
    }
    for (int64_t e = 0; l > 0 && e < d; e++)
        out[e] /= l;
    return l > 0 ? m + log(l) : -INFINITY;
}

/* Every output row, written to the fake device in the dtype: row (b h + hq) q_len + i reads KV
 * head b h_kv + hq / group, keys [0, lim) with lim = s - q_len + i + 1 (bottom-right causal),
 * i + 1 (TOP_LEFT), or s; PLAIN_AVERAGE averages the splits' normalised outputs. */
static void answer(const kb_case *c, const inputs *in, int how)
{
    int64_t h = c->dims[D_H], s = c->dims[D_S], d = c->dims[D_D], ql = c->params[P_QLEN];
    int64_t rows = in->g.rows_total, chunk = in->g.chunk;
    double *p = malloc((size_t)s * sizeof *p), *acc = malloc((size_t)d * sizeof *acc);
    double *part = malloc((size_t)d * sizeof *part);
    float *o = malloc((size_t)(rows * d) * sizeof *o);
    for (int64_t row = 0; row < rows; row++) {
        int64_t head = row / ql, i = row % ql, kvh = head / h * in->g.h_kv + head % h / c->params[P_GROUP];
        const float *k = in->k + kvh * s * d, *v = in->v + kvh * s * d;
        int64_t lim = c->params[P_CAUSAL] ? (how == TOP_LEFT ? i + 1 : s - ql + i + 1) : s;
        scores(in->q + row * d, k, 0, lim, d, p);
        if (how != PLAIN_AVERAGE) {
            softmax_v(p, v, 0, lim, d, how, in->g.bkv, acc);
        } else {
            int n = 0;
            for (int64_t e = 0; e < d; e++)
                acc[e] = 0;
            for (int64_t j0 = 0; j0 < lim; j0 += chunk, n++) {
                softmax_v(p, v, j0, j0 + chunk < lim ? j0 + chunk : lim, d, RIGHT, chunk, part);
                for (int64_t e = 0; e < d; e++)
                    acc[e] += part[e];
            }
            for (int64_t e = 0; e < d; e++)
                acc[e] /= n;
        }
        for (int64_t e = 0; e < d; e++)
            o[row * d + e] = (float)acc[e];
    }
    kb_host_from_f32(c->dtype, o, (void *)(uintptr_t)in->o, rows * d);
    free(o);
    free(part);
    free(acc);
    free(p);
}

/* The largest span of one adversarial row's scores (every third row: channel 0 of q is 64). */
static double adversarial_span(const kb_case *c, const inputs *in)
{
    int64_t s = c->dims[D_S], d = c->dims[D_D];
    double *p = malloc((size_t)s * sizeof *p), lo = INFINITY, hi = -INFINITY;
    scores(in->q, in->k, 0, s, d, p);   /* row 0, KV head 0 */
    for (int64_t j = 0; j < s; j++) {
        lo = p[j] < lo ? p[j] : lo;
        hi = p[j] > hi ? p[j] : hi;
    }
    free(p);
    return hi - lo;
}

static void test_launches(void)
{
    kb_case c = make(KB_DT_BF16, 2, 8, 300, 64, 1, 4, 4);   /* 4 KV heads, 16 rows each */
    c.params[P_CHUNK] = 128;                                /* splits of 128, 128, 44 */
    kb_run r;
    run_init(&r, &c);
    void *st = NULL;
    CHECK(F->setup(&r, &st) == KB_OK && F->enqueue(&r, st) == KB_OK);
    CHECK(launches.n == 2 && !strcmp(launches.entry[0], "attn_decode") &&
          !strcmp(launches.entry[1], "attn_decode_combine"));
    CHECK(launches.g[0].grid[0] == 3 && launches.g[0].grid[1] == 4 && launches.g[0].block[0] == 128);
    CHECK(launches.g[0].shmem_bytes == 16 * 72 * 2 + 2 * 2 * 64 * 72 * 2);
    CHECK(launches.nargs[0] == 10 && launches.args[0][6].v.i32 == 300 && launches.args[0][7].v.i32 == 128 &&
          launches.args[0][8].v.i64 == 64 && fabsf(launches.args[0][9].v.f32 - 0.125f) < 1e-7f);
    /* the partials and lse written by the first launch are the second's inputs; O is the output of both */
    CHECK(launches.args[0][4].v.ptr && launches.args[1][0].v.ptr == launches.args[0][4].v.ptr &&
          launches.args[1][1].v.ptr == launches.args[0][5].v.ptr &&
          launches.args[1][2].v.ptr == launches.args[0][3].v.ptr);
    CHECK(launches.g[1].grid[0] == (64 * 8 + 127) / 128 && launches.g[1].block[0] == 128 &&
          launches.args[1][3].v.i64 == 64 && launches.args[1][4].v.i32 == 3);
    F->teardown(&r, st);
    kb_run_free_all(&r);

    c.params[P_CHUNK] = 0;                                  /* auto: s <= 256 keys, one split */
    c.dims[D_S] = 200;
    run_init(&r, &c);
    CHECK(F->setup(&r, &st) == KB_OK && F->enqueue(&r, st) == KB_OK);
    CHECK(launches.n == 1 && launches.g[0].grid[0] == 1 && launches.args[0][4].v.ptr == 0);
    F->teardown(&r, st);
    kb_run_free_all(&r);
}

/* One case: inputs made and checked by the family, the answers formed here. */
static void check_case(kb_case *c)
{
    kb_run r;
    run_init(&r, c);
    void *st = NULL;
    CHECK(F->setup(&r, &st) == KB_OK && F->enqueue(&r, st) == KB_OK);
    inputs in;
    read_inputs(c, &in);
    int64_t n = in.g.rows_total * c->dims[D_D];
    CHECK_MSG(adversarial_span(c, &in) > 80, "row 0's scores span %g", adversarial_span(c, &in));
    kb_verify v;
    CHECK(F->check(&r, st, &v) == KB_OK && v.n == n && v.n_bad == n);   /* still poison */
    answer(c, &in, RIGHT);
    CHECK(F->check(&r, st, &v) == KB_OK);
    CHECK_MSG(v.n == n && v.n_bad == 0, "right answer: %lld bad, worst %g of the tolerance", (long long)v.n_bad,
              v.max_err_ratio);
    float *o = (float *)malloc((size_t)n * sizeof(float));
    kb_host_to_f32(c->dtype, (const void *)(uintptr_t)in.o, o, n);
    o[n - 3] += (float)(3 * (v.atol + v.rtol * fabs(o[n - 3])));   /* one element 3x off */
    kb_host_from_f32(c->dtype, o, (void *)(uintptr_t)in.o, n);
    CHECK(F->check(&r, st, &v) == KB_OK && v.n_bad == 1 && v.first_bad == n - 3);
    free(o);
    /* the bugs' answers fail on many elements: the adversarial rows at least (a third) */
    static const int bugs[] = { TOP_LEFT, NO_RESCALE, PLAIN_AVERAGE };
    for (int b = 0; b < 3; b++) {
        if (bugs[b] == TOP_LEFT && !c->params[P_CAUSAL])
            continue;
        answer(c, &in, bugs[b]);
        CHECK(F->check(&r, st, &v) == KB_OK);
        CHECK_MSG(v.n_bad > n / 4, "bug %d: %lld of %lld elements bad", bugs[b], (long long)v.n_bad, (long long)n);
    }
    free_inputs(&in);
    F->teardown(&r, st);
    kb_run_free_all(&r);
}

static void test_check_against_independent_decode(void)
{
    kb_case c = make(KB_DT_BF16, 2, 8, 300, 64, 1, 4, 4);   /* GQA 4, 4 tokens, causal; 3 splits */
    c.params[P_CHUNK] = 128;
    check_case(&c);
    c = make(KB_DT_FP16, 1, 4, 257, 128, 0, 1, 4);          /* MQA, one token, not causal; 2 splits */
    c.params[P_CHUNK] = 192;
    check_case(&c);
    c = make(KB_DT_FP16, 1, 2, 200, 256, 1, 16, 1);         /* MHA, 16 tokens at d = 256 */
    c.params[P_CHUNK] = 64;
    check_case(&c);
}

/* The mma variant's tolerance: O's rounding (2u), P rounded to the dtype (u), the fp32 sums over
 * max(s, d) terms (2^-23 sqrt(n), at least 1e-5). */
static void test_tolerance(void)
{
    double u16 = ldexp(1.0, -11), ubf = ldexp(1.0, -8), atol, rtol;
    kb_case c = make(KB_DT_FP16, 1, 8, 300, 64, 1, 1, 8);
    kb_attn_decode_tolerance(&c, &atol, &rtol);
    CHECK(fabs(atol - (3 * u16 + 1e-5)) < 1e-12 && fabs(rtol - (4 * u16 + 4 * ldexp(1.0, -24))) < 1e-12);
    c.dtype = KB_DT_BF16;
    c.dims[D_S] = 131072;
    kb_attn_decode_tolerance(&c, &atol, &rtol);
    CHECK(fabs(atol - (3 * ubf + 2 * ldexp(1.0, -24) * sqrt(131072.0))) < 1e-12);
}

/* The traffic hook: K and V once from DRAM plus Q, O and the partials; tiles over every split;
 * one ex2 per score on the special-function unit, the softmax in series with the products. */
static void test_traffic(void)
{
    kb_case c = make(KB_DT_BF16, 16, 64, 4096, 128, 1, 1, 8);  /* 3 splits of 1408 keys: 22 + 22 + 20 tiles */
    kb_traffic t;
    kb_traffic_gpu gpu = { 90, 0, 50e6, 132 };
    CHECK(F->traffic(&c, &gpu, &t) == 1);
    double kv = 2.0 * 128 * 4096 * 128 * 2, qo = 1024.0 * 128 * 2, part = 3.0 * 1024 * 129 * 4;
    CHECK(t.blocks == 3 * 128 && t.threads == 128 && t.launches == 2);
    CHECK(t.dram_bytes == kv + 2 * qo + 2 * part && t.write_bytes == qo + part);
    double tiles = 64.0 * 128;
    CHECK(t.mma_flops == tiles * 4 * 16 * 64 * 128);
    CHECK(t.l2_bytes == tiles * 2 * 64 * 128 * 2 + 3 * qo + qo + 2 * part);
    CHECK(t.simt_flops >= tiles * 16 * 64 * 3 && t.sfu_ops >= tiles * 16 * 64 && t.serial_pipes == 1 && t.inflight_bytes == 2.0 * 64 * 128 * 2 / 128);
    c.params[P_GROUP] = 1;                                   /* MHA: 8x the K/V */
    CHECK(F->traffic(&c, &gpu, &t) == 1 && t.dram_bytes > 8 * kv && t.launches == 1);
}

/* decode_tma: decode's params and geometry plus the producer warp, dense tiles with 1024
 * bytes of alignment slack and the mbarriers; refused off sm_90a and at head dims that are not
 * whole 128-byte boxes; DEC_TMA in its defines; its model: the same bytes, a ring of STAGES
 * tiles in flight over 160 threads. */
static void test_decode_tma(void)
{
    static const kb_target sm90a = { 90 + KB_ARCH_SPECIFIC, 0, 227 * 1024 };
    kb_case c = make(KB_DT_BF16, 16, 64, 4096, 128, 1, 1, 8), d0 = c;
    c.variant = V_DECODE_TMA;
    CHECK(V_DECODE_TMA == kb_family_variant_find(F, "decode_tma") &&
          !strcmp(F->variants[V_DECODE_TMA].entry, "attn_decode_tma"));
    CHECK(valid_says(&c, &sm90a, NULL) && valid_says(&c, &sm90, "sm_90a") && valid_says(&c, &sm89, "sm_90a"));
    kb_dec_geom g;
    kb_dec_geom_of(&c, &g);
    CHECK(g.tma == 1 && g.threads == 160 && g.bkv == 64 && g.splits == 3);
    CHECK(g.shmem == 1024 + 16 * 128 * 2 + 2 * 2 * 64 * 128 * 2 + 8 * (1 + 2 * 2));
    c.dims[D_D] = 96;
    CHECK(valid_says(&c, &sm90a, "d=96"));
    c.dims[D_D] = 256;
    CHECK(valid_says(&c, &sm90a, NULL));
    c.params[P_GROUP] = 5;                 /* decode's own rules first */
    CHECK(valid_says(&c, &sm90a, "group=5 does not divide h=64"));
    c.params[P_GROUP] = 8;
    c.dims[D_D] = 128;
    kb_sb sb;
    kb_sb_init(&sb);
    F->defines(&c, &sb);
    CHECK_MSG(strstr(sb.s, "DEC_RG=1\nDEC_TMA=1\n") != NULL, "%s", sb.s);
    kb_sb_free(&sb);
    kb_traffic t, t0;
    kb_traffic_gpu gpu = { 90, 0, 50e6, 132 };
    CHECK(F->traffic(&c, &gpu, &t) == 1 && F->traffic(&d0, &gpu, &t0) == 1);
    CHECK(t.threads == 160 && t0.threads == 128 && t.dram_bytes == t0.dram_bytes && t.mma_flops == t0.mma_flops);
    CHECK(t.inflight_bytes == 2.0 * 2 * 64 * 128 * 2 / 160 && t0.inflight_bytes == 2.0 * 64 * 128 * 2 / 128);
}

/* Past the reference budget the check covers a sample of rows, the first and last included. */
static void test_large_shape_samples_rows(void)
{
    kb_case c = make(KB_DT_BF16, 1, 8, 32768, 128, 1, 16, 8);    /* 128 rows x 32768 keys x 128: 512M */
    kb_run r;
    run_init(&r, &c);
    void *st = NULL;
    CHECK(F->setup(&r, &st) == KB_OK && F->enqueue(&r, st) == KB_OK);
    kb_verify v;
    CHECK(F->check(&r, st, &v) == KB_OK && v.n % 128 == 0 && v.n == v.n_bad);
    int64_t sampled = v.n / 128;
    CHECK(sampled >= 128 / 4 && sampled <= 128 / 2);
    /* the first and the last row are among them: right there, poison elsewhere */
    inputs in;
    read_inputs(&c, &in);
    answer(&c, &in, RIGHT);
    uint16_t *o = (uint16_t *)(uintptr_t)in.o;
    memset(o + 128, 0xff, (size_t)(128 - 2) * 128 * sizeof *o);
    CHECK(F->check(&r, st, &v) == KB_OK && v.n_bad == v.n - 2 * 128);
    free_inputs(&in);
    F->teardown(&r, st);
    kb_run_free_all(&r);
}

int main(void)
{
    RUN(test_registered_and_ids);
    RUN(test_work_model);
    RUN(test_geometry_and_auto_split);
    RUN(test_valid_reasons);
    RUN(test_defines);
    RUN(test_launches);
    RUN(test_check_against_independent_decode);
    RUN(test_tolerance);
    RUN(test_traffic);
    RUN(test_large_shape_samples_rows);
    RUN(test_decode_tma);
    TEST_MAIN_END();
}
