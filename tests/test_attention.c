/* test_attention.c - what the kernels_attention suite cannot show: the work model,
 * valid() against different targets, the launch geometry of each variant, and the
 * verification path (reference, tolerance, causal mask, row sampling of large shapes),
 * driven through the family descriptor with a host-memory fake backend and no kernel. */
#include "check.h"
#include "engine/exec.h"
#include "engine/verify.h"
#include "attention_fa3.h"
#include "kernels/families.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

extern const kb_family kb_family_attention;
static const kb_family *F = &kb_family_attention;

/* the family's param and variant order: attention_model.h, attention_decode_model.h,
 * attention_fa3.h (test_registered checks names against them) */

/* ---- a fake backend: device memory is host memory, launches are recorded ---- */
#define MAX_LAUNCH 4
static struct {
    int n;
    char entry[MAX_LAUNCH][64];
    kb_geom g[MAX_LAUNCH];
    kb_arg args[MAX_LAUNCH][8];
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
    if (launches.n == MAX_LAUNCH || nargs > 8)
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

static kb_case make_case(const char *variant, kb_dtype dt, int64_t b, int64_t h, int64_t s, int64_t d, int causal)
{
    kb_case c;
    memset(&c, 0, sizeof c);
    c.family = kb_family_find("attention");
    c.variant = kb_family_variant_find(F, variant);
    c.dtype = dt;
    c.dims[0] = b;
    c.dims[1] = h;
    c.dims[2] = s;
    c.dims[3] = d;
    for (int p = 0; p < F->n_params; p++)
        c.params[p] = F->params[p].def;
    c.params[P_CAUSAL] = causal;
    c.seed = 42;
    c.shape_name = -1;
    return c;
}

static const kb_target sm89 = { 89, 0, 99 * 1024 }, sm90 = { 90, 0, 227 * 1024 };

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

static void test_registered(void)
{
    CHECK(kb_family_find("attention") >= 0);
    CHECK(F->n_variants == 8 && !strcmp(F->variants[0].name, "naive") && !strcmp(F->variants[1].name, "fused") &&
          !strcmp(F->variants[2].name, "mma") && !strcmp(F->variants[3].name, "cudnn") &&
          !strcmp(F->variants[4].name, "fa2") && !strcmp(F->variants[5].name, "decode") &&
          !strcmp(F->variants[6].name, "fa3") && !strcmp(F->variants[7].name, "decode_tma"));
    /* decode's host side has its own test: tests/test_attention_decode.c */
    /* fa2 is attn_mma at 32 rows per warp: same kernel, same dtypes, same params */
    CHECK(!strcmp(F->variants[4].entry, "attn_mma") && F->variants[4].dtypes == F->variants[2].dtypes);
    CHECK(kb_param_applies(F, P_BQ, 4) && kb_param_applies(F, P_BKV, 4) && !kb_param_applies(F, P_RQ, 4));
    CHECK(F->variants[3].entry == NULL && F->variants[3].dtypes == F->variants[2].dtypes);
    CHECK(kb_param_applies(F, P_CAUSAL, 3) && !kb_param_applies(F, P_BQ, 3));
    /* the tensor-core variant has fp16/bf16 operands only */
    CHECK(F->variants[2].dtypes == (KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16)));
    CHECK(kb_param_applies(F, P_BQ, 2) && kb_param_applies(F, P_BKV, 2) && !kb_param_applies(F, P_TPR, 2));
    CHECK(F->n_dims == 4 && !strcmp(F->dims[2], "s") && !strcmp(F->dims[3], "d"));
    CHECK(kb_family_param_find(F, "KC") == P_KC && kb_family_param_find(F, "causal") == P_CAUSAL);
    CHECK(kb_family_param_find(F, "BQ") == P_BQ && kb_family_param_find(F, "RQ") == P_RQ &&
          kb_family_param_find(F, "STAGES") == P_STAGES && kb_family_param_find(F, "lse") == P_LSE);
}

/* fa3 (sm_90a): its own entry, fp16/bf16 (and fp8: test_attention_fa3_fp8.c), BKV, STAGES and lse apply (BQ does not: 128 rows
 * per block); refused off sm_90a and outside its head dims, tile rule and register budget with
 * the reason; its defines, smem, launch and traffic model. */
static void test_fa3_host(void)
{
    const kb_target h100a = { 1090, 0, 227 * 1024 };
    CHECK(V_FA3 == kb_family_variant_find(F, "fa3") && !strcmp(F->variants[V_FA3].entry, "attn_fa3"));
    CHECK(F->variants[V_FA3].dtypes == (F->variants[V_MMA].dtypes | KB_DT_BIT(KB_DT_FP8E4M3)));   /* fp8: its own test */
    CHECK(kb_param_applies(F, P_BKV, V_FA3) && kb_param_applies(F, P_STAGES, V_FA3) && kb_param_applies(F, P_LSE, V_FA3));
    CHECK(!kb_param_applies(F, P_BQ, V_FA3) && !kb_param_applies(F, P_LSE, V_FA2) && kb_param_applies(F, P_CAUSAL, V_FA3));
    kb_case c = make_case("fa3", KB_DT_BF16, 1, 32, 2048, 128, CAUSAL_YES);
    c.params[P_BKV] = 128, c.params[P_STAGES] = 2;
    char why[512];
    CHECK(F->valid(&c, &h100a, why, sizeof why) == 1);
    CHECK(valid_says(&c, &sm90, "use --arch sm_90a"));
    CHECK(kb_attn_fa3_smem(&c) == 1024 + 128 * 128 * 2 + 2 * 2 * 128 * 128 * 2 + 8 * 12 + 16);
    CHECK(c.params[P_SCHED] == SCHED_PERSISTENT);   /* the default: what the estimate prefers */
    kb_geom g = kb_attn_fa3_geom(&c, 132);         /* persistent: an SM each, 16 x 32 = 512 tiles */
    CHECK(g.grid[0] == 132 && g.grid[1] == 1 && g.block[0] == 384 && g.shmem_bytes == (size_t)kb_attn_fa3_smem(&c));
    g = kb_attn_fa3_geom(&c, 1000);                /* never more blocks than tiles */
    CHECK(g.grid[0] == 512 && g.grid[1] == 1);
    c.params[P_SCHED] = SCHED_GRID;
    g = kb_attn_fa3_geom(&c, 132);
    CHECK(g.grid[0] == 16 && g.grid[1] == 32 && g.block[0] == 384);
    c.params[P_SCHED] = SCHED_PERSISTENT;
    /* L2 sections: K and V of a head at s 2048, d 128, bf16 = 1 MiB: 32 heads in 32 MiB; at
     * s 16k, 4 heads; a head over 32 MiB alone */
    CHECK(kb_attn_fa3_section(&c) == 32);
    c.dims[2] = 16384;
    CHECK(kb_attn_fa3_section(&c) == 4);
    c.dims[2] = 100000;
    CHECK(kb_attn_fa3_section(&c) == 1);
    c.dims[2] = 2048;
    kb_sb b;
    kb_sb_init(&b);
    F->defines(&c, &b);
    CHECK(strstr(b.s, "ATTN_FA3=1") && strstr(b.s, "HEAD_D=128") && !strstr(b.s, "ATTN_MMA"));
    kb_sb_free(&b);
    c.dims[3] = 96;
    CHECK(valid_says(&c, &h100a, "head dims 64, 128 and 256"));
    c.dims[3] = 256;   /* 128 + 64 + 32 fragment words: over the consumer's budget */
    CHECK(valid_says(&c, &h100a, "fragment words per consumer thread"));
    c.params[P_BKV] = 64;   /* d 256 on the persistent schedule: its tile loop over the registers */
    CHECK(valid_says(&c, &h100a, "sched=persistent at d=256"));
    c.params[P_SCHED] = SCHED_GRID;
    CHECK(F->valid(&c, &h100a, why, sizeof why) == 1);
    c.params[P_SCHED] = SCHED_PERSISTENT;
    c.dims[3] = 128, c.params[P_BKV] = 40;
    CHECK(valid_says(&c, &h100a, "multiple of 16"));
    c.params[P_BKV] = 128, c.params[P_STAGES] = 4;   /* 1024 + 32768 + 262144 bytes */
    CHECK(valid_says(&c, &h100a, "bytes of shared memory"));
    /* the model: whole tiles on the wgmma path, the softmax overlapped, an ex2 per score */
    c.params[P_STAGES] = 2;
    kb_traffic tr;
    kb_traffic_gpu gpu = { 90, 0, 50e6, 132 };
    CHECK(F->traffic(&c, &gpu, &tr) == 1);
    double tiles = 32.0 * (16.0 * 17.0 / 2.0);   /* causal, BQ = BKV = 128: 1 + 2 + ... + 16 per head */
    CHECK(tr.tensor_path == KB_TENSOR_WGMMA && tr.serial_pipes == 0 && tr.blocks == 16 * 32 && tr.threads == 384);
    CHECK(fabs(tr.mma_flops - tiles * 4.0 * 128 * 128 * 128) < 1.0);
    CHECK(fabs(tr.sfu_ops - tiles * 128.0 * 129.0) < 1.0);
    /* persistent, longest-first: the short tiles come last and the imbalance goes; the hardware's
     * block order (grid) leaves the heaviest blocks for last */
    CHECK(fabs(tr.imbalance - 1.0) < 1e-9);
    c.params[P_SCHED] = SCHED_GRID;
    kb_traffic tg;
    CHECK(F->traffic(&c, &gpu, &tg) == 1);
    CHECK(tg.imbalance > 1.02 && tg.blocks == tr.blocks && tg.mma_flops == tr.mma_flops);
    /* a tile per SM at most: the heaviest tile over the mean, whichever the order */
    c.params[P_SCHED] = SCHED_PERSISTENT, c.dims[1] = 4;   /* 64 tiles on 132 SMs */
    CHECK(F->traffic(&c, &gpu, &tr) == 1);
    CHECK(fabs(tr.imbalance - 16.0 / 8.5) < 1e-9);
}

static void test_work_model(void)
{
    kb_case c = make_case("fused", KB_DT_BF16, 2, 3, 100, 64, 0);
    kb_work w = F->work(&c);
    CHECK(w.flops == 4.0 * 2 * 3 * 100 * 100 * 64);
    CHECK(w.bytes_read == 3.0 * 2 * 3 * 100 * 64 * 2 && w.bytes_written == 2.0 * 3 * 100 * 64 * 2);
    CHECK(w.bytes_moved == 0);      /* fused: what it moves is the compulsory traffic */
    kb_case m = make_case("mma", KB_DT_BF16, 2, 3, 100, 64, 0);
    CHECK(F->work(&m).flops == w.flops && F->work(&m).bytes_moved == 0);

    c.params[P_CAUSAL] = 1;
    CHECK(F->work(&c).flops == w.flops / 2);

    /* naive: + 6 fp32 accesses per kept score (1 write, 3 reads + 1 write in softmax, 1 read) */
    kb_case n = make_case("naive", KB_DT_FP16, 2, 3, 100, 64, 0);
    kb_work wn = F->work(&n);
    CHECK(wn.flops == w.flops && wn.bytes_read == w.bytes_read);
    CHECK(wn.bytes_moved == wn.bytes_read + wn.bytes_written + 24.0 * 6 * 100 * 100);
    n.params[P_CAUSAL] = 1;
    wn = F->work(&n);
    CHECK(wn.bytes_moved == wn.bytes_read + wn.bytes_written + 24.0 * 6 * 100 * 101 / 2);
}

static void test_valid_reasons(void)
{
    kb_case c = make_case("fused", KB_DT_FP16, 1, 32, 2048, 128, 1);
    CHECK(valid_says(&c, &sm89, NULL));
    c.params[P_TPR] = 3;
    CHECK(valid_says(&c, &sm90, "TPR=3"));
    c.params[P_TPR] = 4;
    c.params[P_RQ] = 3;
    CHECK(valid_says(&c, &sm90, "not a multiple of RQ=3"));
    c.params[P_RQ] = 1;
    c.params[P_KC] = 12;
    CHECK(valid_says(&c, &sm90, "not a multiple of KC=12"));
    c.params[P_KC] = 8;
    c.params[P_BQ] = 4;                 /* 4 rows x 4 lanes = 16 threads: half a warp */
    CHECK(valid_says(&c, &sm90, "16 threads"));
    c.params[P_BQ] = 32;
    c.params[P_TPR] = 1;                /* 2*128 + 8 floats per thread */
    CHECK(valid_says(&c, &sm90, "264 floats"));
    c.params[P_TPR] = 4;
    /* 2 x 128 keys x 128 x 4 bytes = 128 KiB of K/V tiles: fits sm_90, not sm_89 */
    c.params[P_BKV] = 128;
    CHECK(valid_says(&c, &sm90, NULL));
    CHECK(valid_says(&c, &sm89, "131072 bytes"));
    c.params[P_BKV] = 32;
    c.dims[3] = 36;                     /* 72 bytes: no 16-byte loads */
    CHECK(valid_says(&c, &sm90, "d=36"));
    c.dims[3] = 264;
    CHECK(valid_says(&c, &sm90, "up to 256"));
    c.dims[3] = 128;
    c.pad = 1;
    CHECK(valid_says(&c, &sm90, "pad=1"));
    c.pad = 0;
    c.dims[1] = 70000;
    CHECK(valid_says(&c, &sm90, "65535"));

    kb_case n = make_case("naive", KB_DT_BF16, 1, 1, 37, 36, 0);
    CHECK(valid_says(&n, &sm89, NULL));     /* the naive kernels take any head dim */
    n.params[P_BLOCK] = 48;
    CHECK(valid_says(&n, &sm89, "BLOCK=48"));

    kb_case m = make_case("mma", KB_DT_FP16, 1, 32, 2048, 128, 1);
    CHECK(valid_says(&m, &sm89, NULL));
    m.params[P_BQ] = 24;
    CHECK(valid_says(&m, &sm90, "BQ=24"));
    m.params[P_BQ] = 64;
    m.params[P_BKV] = 40;
    CHECK(valid_says(&m, &sm90, "BKV=40"));
    m.params[P_BKV] = 32;
    m.params[P_TPR] = 3;                /* fused-only params do not concern mma */
    CHECK(valid_says(&m, &sm90, NULL));
    m.dims[3] = 40;
    CHECK(valid_says(&m, &sm90, "multiples of 16"));
    m.dims[3] = 256;
    m.params[P_BKV] = 144;              /* 64 + 128 + 72 words */
    CHECK(valid_says(&m, &sm90, "264 fragment words"));
    m.dims[3] = 128;
    m.params[P_BQ] = 128;
    m.params[P_BKV] = 128;              /* (128 + 512) x 136 x 2 = 174080 bytes */
    CHECK(valid_says(&m, &sm90, NULL));
    CHECK(valid_says(&m, &sm89, "174080 bytes"));

    /* fa2: 32 rows per warp, so BQ is a multiple of 32; O and S doubled, one k-step of Q */
    kb_case f = make_case("fa2", KB_DT_BF16, 1, 32, 2048, 128, 1);
    f.params[P_BQ] = 128;
    f.params[P_BKV] = 64;                /* 128 + 64 + 8 words; (128 + 256) x 136 x 2 = 104448 bytes */
    CHECK(valid_says(&f, &sm90, NULL));
    CHECK(valid_says(&f, &sm89, "104448 bytes"));
    f.params[P_BKV] = 32;
    CHECK(valid_says(&f, &sm89, NULL));
    f.params[P_BQ] = 48;
    CHECK(valid_says(&f, &sm90, "BQ=48: must be a multiple of 32"));
    f.params[P_BQ] = 64;
    f.params[P_BKV] = 128;               /* 128 + 128 + 8 = 264 words */
    CHECK(valid_says(&f, &sm90, "d + BKV + 8 = 264 fragment words"));
}

static void test_defines_per_variant(void)
{
    kb_sb sb;
    kb_sb_init(&sb);
    kb_case c = make_case("fused", KB_DT_FP16, 1, 1, 8, 96, 0);
    F->defines(&c, &sb);
    CHECK(strstr(sb.s, "HEAD_D=96") != NULL && strstr(sb.s, "ATTN_FUSED=1") != NULL && !strstr(sb.s, "ATTN_MMA"));
    kb_sb_clear(&sb);
    c = make_case("mma", KB_DT_FP16, 1, 1, 8, 96, 0);
    F->defines(&c, &sb);
    CHECK(strstr(sb.s, "HEAD_D=96") != NULL && strstr(sb.s, "ATTN_MMA=1") != NULL && !strstr(sb.s, "ATTN_FUSED"));
    kb_sb_clear(&sb);
    CHECK(!strstr(sb.s, "RW="));        /* mma: the kernel's default, 16 rows per warp */
    kb_sb_clear(&sb);
    c = make_case("fa2", KB_DT_FP16, 1, 1, 8, 96, 0);
    F->defines(&c, &sb);
    CHECK(strstr(sb.s, "ATTN_MMA=1") != NULL && strstr(sb.s, "RW=32") != NULL);
    kb_sb_clear(&sb);
    c = make_case("naive", KB_DT_FP16, 1, 1, 8, 96, 0);
    F->defines(&c, &sb);
    CHECK(sb.len == 0);   /* naive modules do not depend on d */
    kb_sb_free(&sb);
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

static void test_launch_geometry(void)
{
    kb_case c = make_case("naive", KB_DT_FP16, 2, 3, 37, 40, 1);
    c.params[P_BLOCK] = 64;
    kb_run r;
    run_init(&r, &c);
    void *st = NULL;
    CHECK(F->setup(&r, &st) == KB_OK);
    CHECK(F->enqueue(&r, st) == KB_OK);
    CHECK(launches.n == 3);
    CHECK(!strcmp(launches.entry[0], "attn_naive_scores") && !strcmp(launches.entry[1], "attn_naive_softmax") &&
          !strcmp(launches.entry[2], "attn_naive_pv"));
    CHECK(launches.g[0].grid[0] == (37 * 37 + 63) / 64 && launches.g[0].grid[1] == 6 && launches.g[0].block[0] == 64);
    CHECK(launches.g[1].grid[0] == 1 && launches.g[1].grid[1] == 6);
    CHECK(launches.g[2].grid[0] == (37 * 40 + 63) / 64 && launches.g[2].grid[1] == 6);
    /* the score buffer is the softmax's input and the PV's P */
    CHECK(launches.args[0][2].v.ptr == launches.args[1][0].v.ptr && launches.args[1][0].v.ptr == launches.args[2][0].v.ptr);
    CHECK(fabsf(launches.args[0][5].v.f32 - 1.0f / sqrtf(40.0f)) < 1e-7f);
    F->teardown(&r, st);
    kb_run_free_all(&r);

    c = make_case("fused", KB_DT_BF16, 2, 3, 37, 64, 0);
    c.params[P_BQ] = 64;
    c.params[P_RQ] = 2;
    c.params[P_TPR] = 8;
    c.params[P_BKV] = 16;
    run_init(&r, &c);
    CHECK(F->setup(&r, &st) == KB_OK);
    CHECK(F->enqueue(&r, st) == KB_OK);
    CHECK(launches.n == 1 && !strcmp(launches.entry[0], "attn_fused"));
    CHECK(launches.g[0].grid[0] == 1 && launches.g[0].grid[1] == 6);
    CHECK(launches.g[0].block[0] == 64 / 2 * 8);
    CHECK(launches.g[0].shmem_bytes == 2 * 16 * 64 * 4);
    CHECK(launches.args[0][4].v.i32 == 37 && fabsf(launches.args[0][5].v.f32 - 0.125f) < 1e-7f);
    F->teardown(&r, st);
    kb_run_free_all(&r);

    c = make_case("mma", KB_DT_FP16, 1, 2, 100, 64, 1);
    c.params[P_BQ] = 48;
    c.params[P_BKV] = 16;
    run_init(&r, &c);
    CHECK(F->setup(&r, &st) == KB_OK);
    CHECK(F->enqueue(&r, st) == KB_OK);
    CHECK(launches.n == 1 && !strcmp(launches.entry[0], "attn_mma"));
    CHECK(launches.g[0].grid[0] == 3 && launches.g[0].grid[1] == 2 && launches.g[0].block[0] == 3 * 32);
    CHECK(launches.g[0].shmem_bytes == (48 + 4 * 16) * (64 + 8) * 2);   /* Q + 2 stages of K, V */
    F->teardown(&r, st);
    kb_run_free_all(&r);

    c = make_case("fa2", KB_DT_BF16, 1, 2, 300, 128, 1);
    c.params[P_BQ] = 128;
    c.params[P_BKV] = 32;
    run_init(&r, &c);
    CHECK(F->setup(&r, &st) == KB_OK);
    CHECK(F->enqueue(&r, st) == KB_OK);
    CHECK(launches.n == 1 && !strcmp(launches.entry[0], "attn_mma"));
    CHECK(launches.g[0].grid[0] == 3 && launches.g[0].grid[1] == 2 && launches.g[0].block[0] == 4 * 32);
    CHECK(launches.g[0].shmem_bytes == (128 + 4 * 32) * (128 + 8) * 2);
    F->teardown(&r, st);
    kb_run_free_all(&r);
}

/* Attention in double for row i of head bh, computed here independently of the family. */
static void attention_row(const float *q, const float *k, const float *v, int64_t s, int64_t d, int64_t bh,
                          int64_t i, int causal, float *out)
{
    const float *qi = q + (bh * s + i) * d, *kh = k + bh * s * d, *vh = v + bh * s * d;
    int64_t nk = causal ? i + 1 : s;
    double *p = malloc((size_t)s * sizeof *p), mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < nk; j++) {
        double dot = 0;
        for (int64_t c = 0; c < d; c++)
            dot += (double)qi[c] * kh[j * d + c];
        p[j] = dot / sqrt((double)d);
        mx = p[j] > mx ? p[j] : mx;
    }
    for (int64_t j = 0; j < nk; j++)
        sum += (p[j] = exp(p[j] - mx));
    for (int64_t c = 0; c < d; c++) {
        double acc = 0;
        for (int64_t j = 0; j < nk; j++)
            acc += p[j] * vh[j * d + c];
        out[c] = (float)(acc / sum);
    }
    free(p);
}

/* The fused launch's arguments are q, k, v, o: the test reads the inputs the family
 * uploaded and writes the "kernel output" itself. fp32 storage, so no decoding. */
/* ---- the cudnn variant: valid() and the vendor call it plans, on fake vendor slots ---- */
static struct {
    kb_vendor_op op;
    int plans, runs, frees;
    kb_status answer;            /* what vendor_plan returns */
} vendor;
static char fake_plan_storage;

static kb_status fake_vendor_plan(kb_backend_ctx *x, const kb_vendor_op *op, kb_vendor_plan **out,
                                  kb_vendor_info *info)
{
    vendor.op = *op;
    vendor.plans++;
    snprintf(info->library, sizeof info->library, "cuDNN");
    *out = vendor.answer == KB_OK ? (kb_vendor_plan *)&fake_plan_storage : NULL;
    return vendor.answer;
}
static kb_status fake_vendor_run(kb_backend_ctx *x, kb_vendor_plan *p)
{
    vendor.runs += p == (kb_vendor_plan *)&fake_plan_storage;
    return KB_OK;
}
static void fake_vendor_free(kb_backend_ctx *x, kb_vendor_plan *p) { vendor.frees++; }

static const kb_backend fake_with_vendor = {
    .name = "fake",
    .caps = KB_CAP_VENDOR_LIBS,
    .last_error = fake_last_error,
    .alloc = fake_alloc,
    .free = fake_free,
    .upload = fake_copy_in,
    .download = fake_copy_out,
    .launch = fake_launch,
    .vendor_plan = fake_vendor_plan,
    .vendor_run = fake_vendor_run,
    .vendor_free = fake_vendor_free,
};

static void test_cudnn_variant(void)
{
    kb_target gpu = { 90, KB_CAP_VENDOR_LIBS | KB_CAP_CUBLASLT | KB_CAP_CUDNN, 227 * 1024 };
    kb_target nolib = gpu;
    nolib.caps &= ~(unsigned)KB_CAP_CUDNN;
    kb_case c = make_case("cudnn", KB_DT_BF16, 1, 2, 67, 128, 1);
    CHECK(valid_says(&c, &sm90, "cuDNN needs a GPU"));
    CHECK(valid_says(&c, &nolib, "KBENCH_LIBCUDNN"));
    CHECK(valid_says(&c, &gpu, NULL));
    kb_sb b;
    kb_sb_init(&b);
    kb_case_id(&c, &b);
    CHECK_MSG(!strcmp(b.s, "attention/cudnn(causal=yes)/bf16/1x2x67x128/pad0/eager"), "%s", b.s);
    kb_sb_free(&b);
    kb_work w = F->work(&c), wm = F->work((c.variant = 2, &c));
    CHECK(w.flops == wm.flops && w.bytes_read == wm.bytes_read && w.bytes_moved == 0);
    c.variant = 3;

    memset(&vendor, 0, sizeof vendor);
    kb_run r;
    run_init(&r, &c);
    r.be = &fake_with_vendor;
    void *st = NULL;
    CHECK(F->setup(&r, &st) == KB_OK && vendor.plans == 1 && r.have_vendor);
    const kb_vendor_sdpa *op = &vendor.op.u.sdpa;
    CHECK(vendor.op.kind == KB_VOP_SDPA && op->dtype == KB_DT_BF16 && op->b == 1 && op->h == 2 && op->s == 67 &&
          op->d == 128 && op->causal == 1);
    CHECK(fabsf(op->scale - 1.0f / sqrtf(128.0f)) < 1e-7f);
    CHECK(op->q && op->k && op->v && op->o && op->q != op->o);
    CHECK(F->enqueue(&r, st) == KB_OK && vendor.runs == 1 && launches.n == 0);
    F->teardown(&r, st);
    kb_run_free_all(&r);
    CHECK(vendor.frees == 1);

    /* no engine for the problem: the case is skipped with the library's reason */
    vendor.answer = KB_ERR_INPUT;
    run_init(&r, &c);
    r.be = &fake_with_vendor;
    st = NULL;
    CHECK(F->setup(&r, &st) != KB_OK && r.skipped && !strcmp(r.err, "fake"));
    kb_run_free_all(&r);
}

static void test_check_against_independent_attention(void)
{
    const int64_t b = 1, h = 2, s = 9, d = 8, n = b * h * s * d;
    for (int causal = 0; causal < 2; causal++) {
        kb_case c = make_case("fused", KB_DT_FP32, b, h, s, d, causal);
        kb_run r;
        run_init(&r, &c);
        void *st = NULL;
        CHECK(F->setup(&r, &st) == KB_OK);
        CHECK(F->enqueue(&r, st) == KB_OK);
        const float *q = (const float *)(uintptr_t)launches.args[0][0].v.ptr;
        const float *k = (const float *)(uintptr_t)launches.args[0][1].v.ptr;
        const float *v = (const float *)(uintptr_t)launches.args[0][2].v.ptr;
        float *o = (float *)(uintptr_t)launches.args[0][3].v.ptr;
        /* the inputs are spread: Q in [-2, 2] (every fourth row + 4), K in [0, 4], V in [-1, 1] */
        float qmax = 0, q4min = INFINITY, kmin = INFINITY, vmax = 0;
        for (int64_t e = 0; e < n; e++) {
            if (e / d % 4 == 3)
                q4min = fminf(q4min, q[e]);
            else
                qmax = fmaxf(qmax, fabsf(q[e]));
            kmin = fminf(kmin, k[e]);
            vmax = fmaxf(vmax, fabsf(v[e]));
        }
        CHECK(qmax > 1.5f && qmax <= 2.0f && q4min >= 2.0f && kmin >= 0.0f && vmax > 0.75f && vmax <= 1.0f);

        kb_verify vr;
        CHECK(F->check(&r, st, &vr) == KB_OK);
        CHECK(vr.n == n && vr.n_bad == n);      /* still poison: every element is bad */

        for (int64_t row = 0; row < b * h * s; row++)
            attention_row(q, k, v, s, d, row / s, row % s, causal, o + row * d);
        CHECK(F->check(&r, st, &vr) == KB_OK);
        CHECK(vr.n == n && vr.n_bad == 0 && vr.max_abs_err < 1e-6);
        CHECK(vr.atol > 1e-5 && vr.atol < 1e-4);   /* fp32: the 1e-5 floor, twice */

        o[5 * d + 3] += (float)(3 * vr.atol);      /* one element off by 3x the tolerance */
        CHECK(F->check(&r, st, &vr) == KB_OK);
        CHECK(vr.n_bad == 1 && vr.first_bad == 5 * d + 3);

        /* the other mask's answer must fail: rows differ wherever a key was masked */
        for (int64_t row = 0; row < b * h * s; row++)
            attention_row(q, k, v, s, d, row / s, row % s, !causal, o + row * d);
        CHECK(F->check(&r, st, &vr) == KB_OK);
        CHECK(vr.n_bad > n / 2);
        F->teardown(&r, st);
        kb_run_free_all(&r);
    }
}

/* The tolerance a case is verified with (from a check of the poisoned output). */
static double atol_of(const char *variant, kb_dtype dt)
{
    kb_case c = make_case(variant, dt, 1, 1, 9, 16, 0);
    kb_run r;
    run_init(&r, &c);
    if (!strcmp(variant, "cudnn")) {
        r.be = &fake_with_vendor;
        vendor.answer = KB_OK;
    }
    void *st = NULL;
    kb_verify v = { 0 };
    if (F->setup(&r, &st) != KB_OK || F->check(&r, st, &v) != KB_OK)
        v.atol = -1;
    F->teardown(&r, st);
    kb_run_free_all(&r);
    return v.atol;
}

static void test_tolerance_per_dtype_and_variant(void)
{
    double u16 = ldexp(1.0, -11), ubf = ldexp(1.0, -8);
    /* output rounding (2u) plus the fp32 floor (1e-5): about docs/references.md's 1e-3..1e-2 */
    CHECK(fabs(atol_of("fused", KB_DT_FP16) - (2 * u16 + 1e-5)) < 1e-12);
    CHECK(fabs(atol_of("fused", KB_DT_BF16) - (2 * ubf + 1e-5)) < 1e-12);
    CHECK(atol_of("naive", KB_DT_BF16) == atol_of("fused", KB_DT_BF16));
    CHECK(atol_of("fused", KB_DT_FP16) > 9e-4 && atol_of("fused", KB_DT_BF16) < 1e-2);
    /* mma rounds P to the dtype: one more u */
    CHECK(fabs(atol_of("mma", KB_DT_FP16) - atol_of("fused", KB_DT_FP16) - u16) < 1e-12);
    CHECK(fabs(atol_of("mma", KB_DT_BF16) - atol_of("fused", KB_DT_BF16) - ubf) < 1e-12);
    CHECK(atol_of("cudnn", KB_DT_BF16) == atol_of("mma", KB_DT_BF16));
    CHECK(atol_of("fa2", KB_DT_FP16) == atol_of("mma", KB_DT_FP16));     /* the same kernel and rounding */   /* cuDNN rounds P the same way */
}

/* Past the reference budget (256M multiply-adds) the check covers a sample of rows that
 * includes the first and the last. 4 x 4096 x 4096 x 64 = 4.3G: about 1/16 of the rows. */
static void test_large_shape_samples_rows(void)
{
    const int64_t b = 1, h = 4, s = 4096, d = 64, rows = b * h * s;
    kb_case c = make_case("fused", KB_DT_FP32, b, h, s, d, 1);
    kb_run r;
    run_init(&r, &c);
    void *st = NULL;
    CHECK(F->setup(&r, &st) == KB_OK);
    CHECK(F->enqueue(&r, st) == KB_OK);
    const float *q = (const float *)(uintptr_t)launches.args[0][0].v.ptr;
    const float *k = (const float *)(uintptr_t)launches.args[0][1].v.ptr;
    const float *v = (const float *)(uintptr_t)launches.args[0][2].v.ptr;
    float *o = (float *)(uintptr_t)launches.args[0][3].v.ptr;

    kb_verify vr;
    CHECK(F->check(&r, st, &vr) == KB_OK);     /* poison everywhere */
    CHECK(vr.n % d == 0 && vr.n == vr.n_bad);
    int64_t sampled = vr.n / d;
    CHECK(sampled >= rows / 32 && sampled <= rows / 8);

    attention_row(q, k, v, s, d, 0, 0, 1, o);
    attention_row(q, k, v, s, d, h - 1, s - 1, 1, o + (rows - 1) * d);
    CHECK(F->check(&r, st, &vr) == KB_OK);
    CHECK(vr.n_bad == vr.n - 2 * d);           /* both rows were among the sampled ones */
    F->teardown(&r, st);
    kb_run_free_all(&r);
}

int main(void)
{
    RUN(test_registered);
    RUN(test_fa3_host);
    RUN(test_work_model);
    RUN(test_valid_reasons);
    RUN(test_defines_per_variant);
    RUN(test_launch_geometry);
    RUN(test_cudnn_variant);
    RUN(test_check_against_independent_attention);
    RUN(test_tolerance_per_dtype_and_variant);
    RUN(test_large_shape_samples_rows);
    TEST_MAIN_END();
}
