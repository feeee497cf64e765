/* test_gemm_inputs.c - the GEMM family's scaling recipes (kernels/gemm_inputs.c and their
 * legality, work model and kernels): the scale and dist params against the registry, what
 * valid() refuses and why, packed bytes in the work model, every recipe through the
 * dequantising mma kernel and the block-scaled mma.sync of sm_120a on the emulator (a wrong
 * scale selector caught), accuracy ordered as the formats' precision orders it, and the
 * scale tensors and operands the cuBLASLt variant hands over. */
#include "family_fixture.h"

#include "core/precision.h"
#include "gemm_inputs.h"
#include "kernels/abi/kb_convert.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static kb_case make_case(int variant, kb_dtype dt, int layout, int64_t m, int64_t n, int64_t k, int recipe)
{
    kb_case c = family_case(variant, dt, 0, 11);
    c.dims[0] = m, c.dims[1] = n, c.dims[2] = k;
    c.params[P_LAYOUT] = layout;
    c.params[P_SCALE] = recipe;
    return c;
}

/* A small mma tile that keeps a 128-K block's partial sums in registers. */
static void small_tiles(kb_case *c, int bk)
{
    c->params[P_BM] = 32, c->params[P_BN] = 32, c->params[P_BK] = bk, c->params[P_WM] = 16, c->params[P_WN] = 16;
    c->params[P_STAGES] = 3;
}

static int refused(const kb_case *c, const kb_target *t, const char *needle)
{
    char why[512] = "";
    int ok = fam->valid(c, t, why, sizeof why);
    if (ok || !strstr(why, needle))
        fprintf(stderr, "valid=%d, reason '%s' lacks '%s'\n", ok, why, needle);
    return !ok && strstr(why, needle) != NULL;
}

static void test_params_follow_the_registry(void)
{
    const kb_param *ps = &fam->params[P_SCALE], *pd = &fam->params[P_DIST];
    CHECK(!strcmp(ps->name, "scale") && !strcmp(pd->name, "dist"));
    for (int r = 0; r < KB_RECIPE_COUNT; r++) CHECK(!strcmp(ps->choices[r], kb_recipe_name((kb_recipe)r)));
    for (int d = 0; d < KB_DIST_COUNT; d++) CHECK(!strcmp(pd->choices[d], kb_dist_name((kb_dist)d)));
    CHECK(ps->choices[KB_RECIPE_COUNT] == NULL && pd->choices[KB_DIST_COUNT] == NULL);
    CHECK(!kb_param_applies(fam, P_SCALE, V_SMEM) && kb_param_applies(fam, P_SCALE, V_CUBLASLT));
    kb_case c = make_case(V_MMA, KB_DT_FP8E4M3, L_NT, 48, 96, 256, KB_RECIPE_MX);
    c.params[P_DIST] = KB_DIST_OUTLIERS;
    kb_sb b;
    kb_sb_init(&b);
    kb_case_id(&c, &b);
    CHECK_MSG(strstr(b.s, "STAGES=3,scale=mx,dist=outliers)/fp8e4m3/") != NULL, "%s", b.s);
    /* the distribution shapes the inputs only: no define, one module for every value */
    kb_case_defines(fam, &c, &b);
    CHECK(strstr(b.s, "SCALE=4\n") && strstr(b.s, "SCALE_NV=5") && !strstr(b.s, "DIST"));
    kb_sb_free(&b);
}

static void test_valid_recipes(void)
{
    kb_target sm90 = { 90, 0, 227 * 1024 }, sm120a = { 1120, 0, 99 * 1024 };
    kb_target gpu = { 90, KB_CAP_VENDOR_LIBS | KB_CAP_CUBLASLT, 227 * 1024 }, bw = gpu;
    bw.sm = 100;
    char why[512];
    kb_case c = make_case(V_MMA, KB_DT_FP4E2M1, L_NT, 48, 96, 256, KB_RECIPE_TENSOR);
    CHECK(refused(&c, &sm90, "block scales only"));
    c.params[P_SCALE] = KB_RECIPE_NV;
    CHECK(fam->valid(&c, &sm90, why, sizeof why));   /* BK 32: fine for the kernel widening to f16... */
    CHECK(refused(&c, &sm120a, "multiple of 64"));   /* ...not for the m16n8k64 block-scaled one */
    c.params[P_BK] = 64;
    CHECK(fam->valid(&c, &sm120a, why, sizeof why));
    c = make_case(V_NAIVE, KB_DT_BF16, L_NT, 48, 96, 256, KB_RECIPE_CHANNEL);
    CHECK(refused(&c, &sm90, "bf16 is not scaled"));
    c = make_case(V_SMEM, KB_DT_BF16, L_NT, 48, 96, 256, KB_RECIPE_CHANNEL);   /* smem has no scale axis */
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c = make_case(V_MMA, KB_DT_FP8E4M3, L_NT, 48, 96, 256, KB_RECIPE_BLOCK128X128);   /* 64x64 warp tile */
    CHECK(refused(&c, &sm90, "2 x 128 registers"));
    small_tiles(&c, 32);
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c = make_case(V_CUBLASLT, KB_DT_FP8E4M3, L_NT, 48, 96, 256, KB_RECIPE_MX);
    CHECK(refused(&c, &gpu, "Blackwell"));
    CHECK(fam->valid(&c, &bw, why, sizeof why));
    c.dtype = KB_DT_FP8E5M2;   /* MX e5m2: for cuBLASLt's heuristic to answer, not refused here */
    CHECK(fam->valid(&c, &bw, why, sizeof why));
    c.params[P_LAYOUT] = L_NN;
    CHECK(refused(&c, &bw, "TN form"));
    c = make_case(V_CUBLASLT, KB_DT_FP4E2M1, L_NT, 48, 96, 255, KB_RECIPE_NV);
    CHECK(refused(&c, &bw, "must be even"));
    c = make_case(V_CUBLASLT, KB_DT_FP8E4M3, L_NT, 48, 96, 256, KB_RECIPE_BLOCK1X128);
    gpu.sm = 89;
    CHECK(refused(&c, &gpu, "cuBLAS 12.9"));
}

/* Compulsory bytes count packed elements and their scales; kbench's kernels move one byte
 * per fp6/fp4 element. */
static void test_work_counts_packed_bits(void)
{
    kb_case c = make_case(V_MMA, KB_DT_FP4E2M1, L_NT, 64, 32, 256, KB_RECIPE_NV);
    kb_work w = fam->work(&c);
    double scales = (64 + 32) * (256 / 16) + 2 * 4;   /* UE4M3 per 16, an FP32 per tensor each */
    CHECK(w.bytes_read == (64 * 256 + 256 * 32) / 2.0 + scales && w.bytes_written == 64 * 32 * 2);
    CHECK(w.bytes_moved == (64 * 256 + 256 * 32) + scales + w.bytes_written);
    c.dtype = KB_DT_FP8E4M3, c.params[P_SCALE] = KB_RECIPE_BLOCK128X128;
    w = fam->work(&c);
    CHECK(w.bytes_read == (64 * 256 + 256 * 32) + (64 * 2 + 1 * 2) * 4.0 && w.bytes_moved == 0);
}

/* The estimate's traffic model charges each recipe for its scales (gemm_model.c): promotes on
 * the FP32 pipe (2 FP32 operations per accumulator: 256 per warp and mma tile) once per 32 K
 * for mx and every 128 K for the 128-K blocks below sm_120a, none on the block-scaled
 * mma.sync; fp6/fp4's widening in instructions; the scale tensors in DRAM. */
static void test_model_charges_recipes(void)
{
    kb_traffic_gpu gpu = { 90, 0, 50e6, 132 };
    kb_traffic t0, t;
    kb_case c = make_case(V_MMA, KB_DT_FP8E4M3, L_NT, 1024, 1024, 1024, KB_RECIPE_TENSOR);
    CHECK(fam->traffic(&c, &gpu, &t0) && t0.simt_flops == 0);
    /* default tiles: 128 x 128 blocks of 4 warps with 64 x 64 warp tiles (32 mma tiles), K 32 a step */
    const double warp_steps = 64.0 * 4 * (1024 / 32), per_step = 32 * 256.0;
    c.params[P_SCALE] = KB_RECIPE_MX;
    CHECK(fam->traffic(&c, &gpu, &t));
    CHECK_MSG(t.simt_flops == warp_steps * per_step, "%g", t.simt_flops);
    CHECK(t.mma_flops == t0.mma_flops && t.warp_insts > t0.warp_insts);
    /* a UE8M0 code per 32 of A and of B, where the tensor recipe had one FP32 each */
    CHECK_MSG(t.dram_bytes == t0.dram_bytes + 2 * 1024 * (1024 / 32) - 2 * 4, "%g", t.dram_bytes - t0.dram_bytes);
    c.params[P_SCALE] = KB_RECIPE_BLOCK1X128;
    CHECK(fam->traffic(&c, &gpu, &t) && t.simt_flops == warp_steps * per_step / 4);
    c.params[P_SCALE] = KB_RECIPE_CHANNEL;   /* once per accumulator, in the epilogue */
    CHECK(fam->traffic(&c, &gpu, &t) && t.simt_flops == 64.0 * 4 * per_step);
    c.params[P_SCALE] = KB_RECIPE_MX;
    CHECK(fam->traffic(&c, &gpu, &t));
    double fp8_insts = t.warp_insts;
    c.dtype = KB_DT_FP6E2M3;   /* 8 A and 4 B conversions per mma row/column tile and step, 58 each */
    CHECK(fam->traffic(&c, &gpu, &t));
    CHECK_MSG(t.warp_insts - fp8_insts == warp_steps * (4 * 8 + 8 * 4) * 57.0, "%g", t.warp_insts - fp8_insts);
    gpu.sm = 1120;   /* sm_120a: the scales in the tensor core, nv 64 K a step */
    c.dtype = KB_DT_FP4E2M1, c.params[P_SCALE] = KB_RECIPE_NV, c.params[P_BK] = 64;
    CHECK(fam->traffic(&c, &gpu, &t) && t.simt_flops == 0 && t.mma_flops == t0.mma_flops);
    gpu.sm = 90;
    kb_traffic tw;
    CHECK(fam->traffic(&c, &gpu, &tw) && tw.simt_flops == warp_steps * per_step * 2);
    CHECK(tw.warp_insts > 4 * t.warp_insts);
}

/* One case on the emulator; *acc the accuracy, when wanted. */
static int runs_ok(const kb_case *c, int sm, const char *extra, kb_verify *v)
{
    kb_status st;
    run_family_on_emu(c, sm, extra, 1, sm == 90 ? FAM_CHECK_VALID : 0, v, &st);
    return st == KB_OK && v->n > 0 && v->n_bad == 0;
}

/* Every recipe through the mma kernel's dequantising path (sm_90: fp8 and fp6/fp4 widened to
 * f16), K = 300 (partial 128-, 32- and 16-K blocks), blocks 2^-40..2^40 apart, layouts with
 * and without the gathered fragments, split-K with a slice edge inside a 128-K block. */
static void test_recipes_on_mma(void)
{
    static const struct { kb_dtype dt; int recipe, layout, splitk; } cs[] = {
        { KB_DT_FP8E4M3, KB_RECIPE_CHANNEL, L_NT, 2 },     { KB_DT_FP8E5M2, KB_RECIPE_BLOCK1X128, L_NN, 1 },
        { KB_DT_FP8E4M3, KB_RECIPE_BLOCK128X128, L_NT, 3 }, { KB_DT_FP8E4M3, KB_RECIPE_MX, L_TT, 1 },
        { KB_DT_FP6E2M3, KB_RECIPE_MX, L_NT, 1 },          { KB_DT_FP6E3M2, KB_RECIPE_MX, L_TN, 2 },
        { KB_DT_FP4E2M1, KB_RECIPE_MX, L_NT, 1 },          { KB_DT_FP4E2M1, KB_RECIPE_NV, L_NN, 1 },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kb_case c = make_case(V_MMA, cs[i].dt, cs[i].layout, 37, 45, 300, cs[i].recipe);
        small_tiles(&c, 32);
        c.params[P_SPLITK] = cs[i].splitk;
        c.params[P_DIST] = KB_DIST_RANGES;
        c.params[P_BETA] = 1;
        kb_verify v;
        CHECK_MSG(runs_ok(&c, 90, NULL, &v), "%s %s: %lld bad of %lld (got %g want %g)", kb_dtype_name(cs[i].dt),
                  kb_recipe_name(cs[i].recipe), (long long)v.n_bad, (long long)v.n, v.got_at_bad, v.want_at_bad);
        CHECK(v.acc_n > 0 && v.acc_rel_fro > 0 && v.acc_rel_fro < 0.5);
    }
}

/* sm_120a (arch code 1120: KB_ARCH 120, KB_ARCH_SPECIFIC 1 from the table): mx and nv
 * through the block-scaled mma.sync, K = 200 (partial blocks), K-contiguous tiles and
 * gathered ones; a wrong thread-id-a in the selector (A's scales then come from lanes that
 * hold none) makes the case wrong. */
static void test_block_scaled_mma_sm120a(void)
{
    static const struct { kb_dtype dt; int recipe, layout; } cs[] = {
        { KB_DT_FP8E4M3, KB_RECIPE_MX, L_NT }, { KB_DT_FP6E2M3, KB_RECIPE_MX, L_NN },
        { KB_DT_FP4E2M1, KB_RECIPE_MX, L_NT }, { KB_DT_FP4E2M1, KB_RECIPE_NV, L_NT },
        { KB_DT_FP4E2M1, KB_RECIPE_NV, L_TT },
    };
    for (size_t i = 0; i < sizeof cs / sizeof cs[0]; i++) {
        kb_case c = make_case(V_MMA, cs[i].dt, cs[i].layout, 37, 45, 200, cs[i].recipe);
        small_tiles(&c, 64);
        c.params[P_DIST] = KB_DIST_RANGES;
        kb_verify v;
        CHECK_MSG(runs_ok(&c, 120 + KB_ARCH_SPECIFIC, NULL, &v), "sm_120a %s %s: %lld bad of %lld",
                  kb_dtype_name(cs[i].dt), kb_recipe_name(cs[i].recipe), (long long)v.n_bad, (long long)v.n);
        if (i == 0 || i == 3) {
            char extra[64];
            snprintf(extra, sizeof extra, "BS_SEL=0,1,0,0");
            CHECK_MSG(!runs_ok(&c, 120 + KB_ARCH_SPECIFIC, extra, &v) && v.n_bad > v.n / 2,
                      "a wrong selector escaped: %lld bad", (long long)v.n_bad);
        }
    }
}

/* Same real inputs (the seed hangs on the dims, not the dtype): the error grows as the
 * format narrows, and int8's per-tensor scale loses most to activation outliers. */
static void test_accuracy_orders_precisions(void)
{
    static const struct { kb_dtype dt; int recipe; } ps[] = {
        { KB_DT_BF16, KB_RECIPE_TENSOR }, { KB_DT_FP8E4M3, KB_RECIPE_TENSOR }, { KB_DT_FP6E2M3, KB_RECIPE_MX },
        { KB_DT_FP4E2M1, KB_RECIPE_NV },
    };
    double prev = 0;
    for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
        kb_case c = make_case(V_NAIVE, ps[i].dt, L_NT, 16, 24, 256, ps[i].recipe);
        c.params[P_DIST] = KB_DIST_NORMAL;
        kb_verify v;
        CHECK(runs_ok(&c, 90, NULL, &v) && v.acc_n == 16 * 24);
        CHECK_MSG(v.acc_rel_fro > prev && v.acc_snr_db > 0, "%s: rel_fro %g after %g", kb_dtype_name(ps[i].dt),
                  v.acc_rel_fro, prev);
        prev = v.acc_rel_fro;
    }
    /* activation outliers (100x channels): int8's one scale per tensor, fixed point, leaves the
     * ordinary channels a few levels; fp8's exponent keeps their relative precision */
    double err[2][2];   /* [int8, fp8][normal, outliers] */
    for (int f = 0; f < 2; f++)
        for (int d = 0; d < 2; d++) {
            kb_case c = make_case(V_NAIVE, f ? KB_DT_FP8E4M3 : KB_DT_INT8, L_NT, 16, 24, 256, KB_RECIPE_TENSOR);
            c.params[P_DIST] = d ? KB_DIST_OUTLIERS : KB_DIST_NORMAL;
            kb_verify v;
            CHECK(runs_ok(&c, 90, NULL, &v));
            err[f][d] = v.acc_rel_fro;
        }
    CHECK_MSG(err[0][1] > 3 * err[0][0] && err[1][1] < 1.5 * err[1][0], "int8 %g -> %g, fp8 %g -> %g", err[0][0],
              err[0][1], err[1][0], err[1][1]);
}

/* ---- what the cuBLASLt variant hands over, on a host-memory backend with fake vendor slots ---- */
static kb_vendor_op planned;
static char plan_token;

static kb_status host_alloc(kb_backend_ctx *x, size_t n, kb_dptr *out)
{
    void *p = malloc(n);
    *out = (kb_dptr)(uintptr_t)p;
    return p ? KB_OK : KB_ERR_OOM;
}
static void host_free(kb_backend_ctx *x, kb_dptr p) { free((void *)(uintptr_t)p); }
static kb_status host_in(kb_backend_ctx *x, kb_dptr d, const void *s, size_t n)
{
    memcpy((void *)(uintptr_t)d, s, n);
    return KB_OK;
}
static kb_status plan_it(kb_backend_ctx *x, const kb_vendor_op *op, kb_vendor_plan **out, kb_vendor_info *info)
{
    planned = *op;
    *out = (kb_vendor_plan *)&plan_token;
    return KB_OK;
}
static void free_it(kb_backend_ctx *x, kb_vendor_plan *p) {}
static const char *no_error(kb_backend_ctx *x) { return "no error"; }
static const kb_backend host = { .name = "host", .caps = KB_CAP_VENDOR_LIBS, .alloc = host_alloc, .free = host_free,
                                 .upload = host_in, .last_error = no_error, .vendor_plan = plan_it,
                                 .vendor_free = free_it };

/* Set up case c on the host backend: the planned matmul in `planned`, the state in *st. */
static int plan_case(kb_case *c, kb_run *r, void **st)
{
    memset(r, 0, sizeof *r);
    r->be = &host, r->f = fam, r->c = c;
    *st = NULL;
    return fam->setup(r, st) == KB_OK;
}

/* block128x128: A's FP32 scales K-block-major (VEC128), B's per 128 x 128 block (BLK128): each
 * the power of two its block's dequantised values were scaled by. */
static void test_cublaslt_block_scales(void)
{
    kb_case c = make_case(V_CUBLASLT, KB_DT_FP8E4M3, L_NT, 37, 200, 300, KB_RECIPE_BLOCK128X128);
    c.params[P_DIST] = KB_DIST_RANGES;
    kb_run r;
    void *st;
    CHECK(plan_case(&c, &r, &st));
    const gemm_state *s = st;
    const float *sa = (const float *)(uintptr_t)planned.u.mm.scale_a, *sb = (const float *)(uintptr_t)planned.u.mm.scale_b;
    CHECK(planned.u.mm.recipe == KB_RECIPE_BLOCK128X128 && sa && sb);
    int bad = 0;
    for (int m = 0; m < 37; m++)
        for (int kb = 0; kb < 3; kb++) {   /* A row m, K block kb: amax / scale in (224, 448] */
            double amax = 0, scale = sa[kb_lt_scale_offset(KB_LT_SCALE_VEC128, 37, 3, m, kb)];
            for (int k = 128 * kb; k < 300 && k < 128 * (kb + 1); k++) amax = fmax(amax, fabs(s->a[m * 300 + k]));
            bad += !(amax / scale <= 448 && (amax == 0 || amax / scale > 224));
        }
    for (int nb = 0; nb < 2; nb++)
        for (int kb = 0; kb < 3; kb++) {
            double amax = 0, scale = sb[kb_lt_scale_offset(KB_LT_SCALE_BLK128, 200, 3, nb, kb)];
            for (int k = 128 * kb; k < 300 && k < 128 * (kb + 1); k++)
                for (int n = 128 * nb; n < 200 && n < 128 * (nb + 1); n++) amax = fmax(amax, fabs(s->b[k * 200 + n]));
            bad += !(amax / scale <= 448 && (amax == 0 || amax / scale > 224));
        }
    CHECK_MSG(bad == 0, "%d scales are not their blocks'", bad);
    fam->teardown(&r, st);
    kb_run_free_all(&r);
}

/* nv: UE4M3 codes in the 128 x 4 tiles, fp4 packed two per byte, the tensor scales in alpha. */
static void test_cublaslt_nvfp4(void)
{
    kb_case c = make_case(V_CUBLASLT, KB_DT_FP4E2M1, L_NT, 37, 20, 64, KB_RECIPE_NV);
    c.params[P_ALPHA] = 2;
    kb_run r;
    void *st;
    CHECK(plan_case(&c, &r, &st));
    const gemm_state *s = st;
    const kb_vendor_matmul *mm = &planned.u.mm;
    CHECK(mm->alpha != 2.0f && mm->alpha == 2.0f * s->scale_a * s->scale_b && s->scale_a < 1.0f);
    const unsigned char *a = (const unsigned char *)(uintptr_t)mm->a, *codes = (const unsigned char *)(uintptr_t)mm->scale_a;
    const unsigned char *mine = (const unsigned char *)(uintptr_t)s->d_a;   /* kbench's: one code per byte */
    int bad = 0;
    for (int i = 0; i < 37 * 64 / 2; i++)
        bad += a[i] != ((mine[2 * i] & 15) | (mine[2 * i + 1] & 15) << 4);
    for (int m = 0; m < 37; m++)
        for (int kb = 0; kb < 4; kb++) {   /* the block's scale x tensor scale x 6 covers its amax */
            double amax = 0, scale = kb_ue4m3_to_f32(codes[kb_lt_scale_offset(KB_LT_SCALE_TILED, 37, 4, m, kb)]);
            for (int k = 16 * kb; k < 16 * kb + 16; k++) amax = fmax(amax, fabs(s->a[m * 64 + k]));
            bad += !(amax <= 6 * scale * s->scale_a * (1 + 1e-6));
        }
    CHECK_MSG(bad == 0, "%d packed bytes or scales wrong", bad);
    fam->teardown(&r, st);
    kb_run_free_all(&r);
}

int main(void)
{
    if (!family_begin("gemm"))
        TEST_MAIN_END();
    RUN(test_params_follow_the_registry);
    RUN(test_valid_recipes);
    RUN(test_work_counts_packed_bits);
    RUN(test_model_charges_recipes);
    RUN(test_cublaslt_block_scales);
    RUN(test_cublaslt_nvfp4);
    RUN(test_accuracy_orders_precisions);
    RUN(test_recipes_on_mma);
    RUN(test_block_scaled_mma_sm120a);
    TEST_MAIN_END();
}
