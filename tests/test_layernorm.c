/* test_layernorm.c - what the layernorm family's suite (tests/suites/kernels_layernorm.yaml)
 * cannot show: the work model's numbers, valid()'s reasons and their dependence on the
 * target, and that check() fails a kernel that did not write its outputs (the suite
 * only ever sees passing kernels). */
#include "family_fixture.h"

#include <stdlib.h>
#include <string.h>

enum { V_BLOCK, V_WARP, V_VEC, V_REG };   /* variant order in layernorm.c */
enum { P_KIND, P_BLOCK, P_VEC, P_NVEC, P_SPLIT }; /* param order */
enum { KIND_LAYERNORM, KIND_RMSNORM };

static kb_case make_case(int variant, kb_dtype dt, int kind, int64_t rows, int64_t cols, int pad)
{
    kb_case c = family_case(variant, dt, pad, 7);
    c.dims[0] = rows;
    c.dims[1] = cols;
    c.params[P_KIND] = kind;
    c.params[P_BLOCK] = 256;
    c.params[P_VEC] = 4;
    c.params[P_NVEC] = 4;
    c.params[P_SPLIT] = 1;
    return c;
}

static void test_descriptor(void)
{
    CHECK(fam->n_variants == 4 && fam->n_dims == 2 && fam->n_params == 5);
    CHECK(!strcmp(fam->variants[V_REG].name, "reg") && !strcmp(fam->params[P_NVEC].name, "NVEC") &&
          !strcmp(fam->params[P_SPLIT].name, "SPLIT") && fam->params[P_SPLIT].def == 1);
    CHECK(kb_param_applies(fam, P_SPLIT, V_REG) && !kb_param_applies(fam, P_SPLIT, V_VEC) &&
          !kb_param_applies(fam, P_NVEC, V_WARP));
    CHECK(!strcmp(fam->variants[V_BLOCK].name, "block") && !strcmp(fam->variants[V_WARP].name, "warp") &&
          !strcmp(fam->variants[V_VEC].name, "vec"));
    CHECK(!strcmp(fam->params[P_KIND].name, "kind") && !strcmp(fam->params[P_BLOCK].name, "BLOCK") &&
          !strcmp(fam->params[P_VEC].name, "VEC"));
    CHECK(kb_param_applies(fam, P_VEC, V_VEC) && !kb_param_applies(fam, P_VEC, V_BLOCK));
    kb_case c = make_case(V_WARP, KB_DT_BF16, KIND_RMSNORM, 5, 1000, 1);
    kb_sb b;
    kb_sb_init(&b);
    kb_case_id(&c, &b);
    CHECK_MSG(!strcmp(b.s, "layernorm/warp(kind=rmsnorm,BLOCK=256)/bf16/5x1000/pad1/eager"), "%s", b.s);
    kb_case_defines(fam, &c, &b);
    CHECK_MSG(strstr(b.s, "KIND=1\n") && strstr(b.s, "KIND_RMSNORM=1") && strstr(b.s, "KB_T=kb_bf16"), "%s", b.s);
    kb_sb_free(&b);
}

/* fp16, 4 rows of 10: x 80 bytes, y 80 bytes, gamma/beta 20 bytes each, fp32 stats 16 bytes each. */
static void test_work_model(void)
{
    kb_case c = make_case(V_BLOCK, KB_DT_FP16, KIND_LAYERNORM, 4, 10, 3);
    kb_work w = fam->work(&c);
    CHECK(w.flops == 8.0 * 40);
    CHECK(w.bytes_read == 80 + 2 * 20);       /* pad is not compulsory traffic */
    CHECK(w.bytes_written == 80 + 2 * 16);    /* mean and rstd count as written */
    CHECK(w.bytes_moved == 120 + 2 * 80 + 112); /* block reads x three times */

    c.params[P_KIND] = KIND_RMSNORM;
    w = fam->work(&c);
    CHECK(w.flops == 4.0 * 40);
    CHECK(w.bytes_read == 80 + 20);            /* no beta */
    CHECK(w.bytes_written == 80 + 16);         /* rstd only */
    CHECK(w.bytes_moved == 100 + 80 + 96);     /* rmsnorm's block reads x twice */

    c.variant = V_WARP;
    CHECK(fam->work(&c).bytes_moved == 100 + 80 + 96);
    c.variant = V_VEC;
    CHECK(fam->work(&c).bytes_moved == 0);     /* x read once: what it moves is the compulsory traffic */
    c.variant = V_REG;
    CHECK(fam->work(&c).bytes_moved == 0);     /* SPLIT 1: x read once into registers */
    c.params[P_SPLIT] = 2;
    CHECK(fam->work(&c).bytes_moved == 100 + 80 + 96); /* statistics kernel, then the normalising one */
}

static void test_valid_reasons(void)
{
    kb_target sm90 = { 90, 0, 227 * 1024 }, sm89 = { 89, 0, 99 * 1024 };
    char why[512];

    kb_case c = make_case(V_BLOCK, KB_DT_FP32, KIND_LAYERNORM, 3, 4099, 1);
    CHECK(fam->valid(&c, &sm89, why, sizeof why));
    c.params[P_BLOCK] = 48;
    why[0] = 0;
    CHECK(!fam->valid(&c, &sm90, why, sizeof why) && strstr(why, "BLOCK=48") && strstr(why, "multiple of 32"));

    /* VEC applies to vec only: an illegal VEC leaves the other variants valid */
    c = make_case(V_WARP, KB_DT_FP32, KIND_LAYERNORM, 3, 4099, 1);
    c.params[P_VEC] = 8;
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c.variant = V_VEC;
    why[0] = 0;
    CHECK(!fam->valid(&c, &sm90, why, sizeof why) && strstr(why, "32 bytes") && strstr(why, "128-bit"));
    c.params[P_VEC] = 3;
    why[0] = 0;
    CHECK(!fam->valid(&c, &sm90, why, sizeof why) && strstr(why, "VEC=3"));

    /* vec caches BLOCK/32 rows in shared memory: 8 x 4104 fp32 = 131328 bytes fits
     * sm_90's 227 KiB but not sm_89's 99 KiB; BLOCK=128 halves it and fits both */
    c = make_case(V_VEC, KB_DT_FP32, KIND_RMSNORM, 3, 4099, 0);
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    why[0] = 0;
    CHECK_MSG(!fam->valid(&c, &sm89, why, sizeof why) && strstr(why, "131328 bytes") && strstr(why, "sm_89") &&
                  strstr(why, "lower BLOCK"), "%s", why);
    c.params[P_BLOCK] = 128;
    CHECK(fam->valid(&c, &sm89, why, sizeof why));

    /* reg: a block holds BLOCK x NVEC x 16/esz elements. bf16 256 x 4 x 8 = 8192 columns;
     * 8193 needs SPLIT 2 (parts of 4104) or NVEC 5; fp32 holds half as many */
    c = make_case(V_REG, KB_DT_BF16, KIND_LAYERNORM, 3, 8192, 1);
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c.dims[1] = 8193;
    why[0] = 0;
    CHECK_MSG(!fam->valid(&c, &sm90, why, sizeof why) && strstr(why, "8192 bf16") && strstr(why, "needs 8200") &&
                  strstr(why, "raise NVEC, BLOCK or SPLIT"), "%s", why);
    c.params[P_SPLIT] = 2;
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c = make_case(V_REG, KB_DT_FP32, KIND_RMSNORM, 3, 4097, 0);
    why[0] = 0;
    CHECK_MSG(!fam->valid(&c, &sm90, why, sizeof why) && strstr(why, "4096 fp32"), "%s", why);
    c.params[P_NVEC] = 5;
    CHECK(fam->valid(&c, &sm90, why, sizeof why));

    c = make_case(V_WARP, KB_DT_BF16, KIND_LAYERNORM, 3, (1LL << 30) + 1, 0);
    why[0] = 0;
    CHECK(!fam->valid(&c, &sm90, why, sizeof why) && strstr(why, "2^30"));
}

/* Run one case of the family on the emulator (sm_90): setup, optionally the kernel (its
 * module built with the extra defines, when given), check; every step must succeed. */
static void run_on_emu_with(const kb_case *c, const char *extra, int launch, kb_verify *v, kb_status *st_out)
{
    run_family_on_emu(c, 90, extra, launch, FAM_CHECK_RUN_OK, v, st_out);
}

static void run_on_emu(const kb_case *c, int launch, kb_verify *v, kb_status *st_out)
{
    run_on_emu_with(c, NULL, launch, v, st_out);
}

/* A real run passes and compares y with its padding, mean and rstd: rows x ld + 2 rows. */
static void test_check_passes_a_real_run(void)
{
    kb_case c = make_case(V_VEC, KB_DT_BF16, KIND_LAYERNORM, 5, 37, 1);
    kb_verify v;
    kb_status st;
    memset(&v, 0, sizeof v);
    run_on_emu(&c, 1, &v, &st);
    if (st != KB_OK)
        return;
    CHECK_MSG(v.n_bad == 0, "%lld bad, first %lld: got %g want %g", (long long)v.n_bad, (long long)v.first_bad,
              v.got_at_bad, v.want_at_bad);
    CHECK(v.n == 5 * 38 + 2 * 5);
    CHECK(v.max_err_ratio <= 1.0 && v.atol > 0 && v.rtol > 0);
}

/* reg with SPLIT 3 over 37 columns (parts of 16, 16, 5) and an uneven pad: the two-kernel
 * path writes every y and statistic within tolerance. */
static void test_reg_split_run(void)
{
    kb_case c = make_case(V_REG, KB_DT_FP16, KIND_LAYERNORM, 5, 37, 1);
    c.params[P_SPLIT] = 3;
    c.params[P_BLOCK] = 32;
    c.params[P_NVEC] = 1;
    kb_verify v;
    kb_status st;
    memset(&v, 0, sizeof v);
    run_on_emu(&c, 1, &v, &st);
    if (st != KB_OK)
        return;
    CHECK_MSG(v.n_bad == 0, "%lld bad, first %lld: got %g want %g", (long long)v.n_bad, (long long)v.first_bad,
              v.got_at_bad, v.want_at_bad);
    CHECK(v.n == 5 * 38 + 2 * 5);
}

/* No kernel: y still holds the sentinel and the statistics their NaN poison. Every y
 * element and every statistic must fail, the padding (sentinel expected) must not. */
static void test_check_fails_unwritten_outputs(void)
{
    kb_case c = make_case(V_WARP, KB_DT_FP32, KIND_LAYERNORM, 3, 31, 2);
    kb_verify v;
    kb_status st;
    memset(&v, 0, sizeof v);
    run_on_emu(&c, 0, &v, &st);
    if (st != KB_OK)
        return;
    CHECK(v.n == 3 * 33 + 2 * 3);
    CHECK_MSG(v.n_bad == 3 * 31 + 2 * 3, "%lld bad", (long long)v.n_bad);
    CHECK(v.first_bad == 0 && v.got_at_bad == 1000.0);

    c.params[P_KIND] = KIND_RMSNORM;           /* rstd only: rows x ld + rows compared */
    memset(&v, 0, sizeof v);
    run_on_emu(&c, 0, &v, &st);
    if (st != KB_OK)
        return;
    CHECK(v.n == 3 * 33 + 3);
    CHECK_MSG(v.n_bad == 3 * 31 + 3, "%lld bad", (long long)v.n_bad);
}

/* y's tolerance is its rounding to the dtype plus the fp32 statistics' error; it does
 * not grow like the dtype's u * sqrt(cols). At cols = 4096 a bf16 kernel whose every
 * output is 3% too large must fail (with kb_tolerance(bf16, 4096), atol 0.5, it passed). */
static void test_y_tolerance_catches_a_few_percent(void)
{
    kb_case c = make_case(V_WARP, KB_DT_BF16, KIND_LAYERNORM, 2, 4096, 0);
    kb_verify v;
    kb_status st;
    memset(&v, 0, sizeof v);
    run_on_emu(&c, 1, &v, &st);
    if (st != KB_OK)
        return;
    CHECK_MSG(v.n_bad == 0, "%lld bad, first %lld: got %g want %g", (long long)v.n_bad, (long long)v.first_bad,
              v.got_at_bad, v.want_at_bad);
    CHECK_MSG(v.atol < 0.01 && v.rtol < 0.02, "atol %g rtol %g", v.atol, v.rtol);

    memset(&v, 0, sizeof v);
    run_on_emu_with(&c, "BROKEN_Y_SCALE=1.03f", 1, &v, &st);
    if (st != KB_OK)
        return;
    CHECK_MSG(v.n_bad > 2 * 4096 / 4, "y 3%% too large: only %lld of %lld elements bad", (long long)v.n_bad,
              (long long)v.n);
    printf("     y 3%% too large: %lld of %lld elements wrong\n", (long long)v.n_bad, (long long)v.n);
}

int main(void)
{
    if (!family_begin("layernorm"))
        TEST_MAIN_END();
    RUN(test_descriptor);
    RUN(test_work_model);
    RUN(test_valid_reasons);
    RUN(test_check_passes_a_real_run);
    RUN(test_reg_split_run);
    RUN(test_check_fails_unwritten_outputs);
    RUN(test_y_tolerance_catches_a_few_percent);
    TEST_MAIN_END();
}
