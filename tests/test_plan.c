/* test_plan.c - expansion of suites into cases: product, zip, where, per-variant
 * param collapsing, dtype dropping, check shapes, seeds, warnings and limits. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "suite/plan.h"
#include "suite_fakes.h"

#define HEAD "suite: t\nbenchmarks:\n"

/* Plan text (as "x.yaml"); on failure print the message and return a non-OK status. */
static kb_status plan(const char *text, int use_check, kb_plan *p)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_plan_text(text, "x.yaml", fake_fams, N_FAKE_FAMS, use_check, p, &err);
    if (st) fprintf(stderr, "  plan failed: %s\n", err.s);
    kb_sb_free(&err);
    return st;
}

/* Plan a file of tests/suites; prints the message on failure. */
static kb_status plan_file(const char *path, int use_check, kb_plan *p)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_plan(path, fake_fams, N_FAKE_FAMS, use_check, p, &err);
    if (st) fprintf(stderr, "  plan failed: %s\n", err.s);
    kb_sb_free(&err);
    return st;
}

static int64_t count_variant(const kb_plan *p, int variant)
{
    int64_t n = 0;
    for (int64_t i = 0; i < p->n_cases; i++) n += p->cases[i].variant == variant;
    return n;
}

static void test_product_counts(void)
{
    kb_plan p;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_plan("tests/suites/good.yaml", fake_fams, N_FAKE_FAMS, 0, &p, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    if (st) return;
    /* gelu: naive 2 dtypes x 3 shapes x 2 pads = 12 (VEC does not apply to naive);
     * vec: 2 x 3 x 3 VEC x 2 = 36. gemm: 2 shapes x 2 BN x 2 launches = 8. */
    CHECK(p.n_cases == 56);
    CHECK(p.n_entries == 2 && p.entries[0].n_cases == 48 && p.entries[1].n_cases == 8);
    int64_t naive = 0, vec = 0;
    for (int64_t i = 0; i < p.n_cases; i++) {
        const kb_case *c = &p.cases[i];
        if (c->entry != 0) continue;
        if (c->variant == 0) { naive++; CHECK(c->params[1] == 4); }  /* VEC default for naive */
        else vec++;
        CHECK(c->family == 0 && c->params[0] == 256 && c->params[2] == 1); /* BLOCK default, form tanh */
        CHECK(c->launch == KB_LAUNCH_EAGER && c->check_shape == 0);
    }
    CHECK(naive == 12 && vec == 36);
    /* Per-entry settings for later stages. */
    CHECK(p.entries[0].line == 18 && p.entries[0].column == 5 && !strcmp(p.entries[0].family, "gelu"));
    CHECK(p.entries[0].measure.min_samples == 20 && p.entries[0].measure.max_noise == 0.01 && p.entries[0].measure.l2 == KB_L2_HOT);
    CHECK(p.entries[1].measure.min_samples == 5 && p.entries[1].measure.timeout_s == 2.5 && p.entries[1].measure.warmup == 1);
    CHECK(!strcmp(p.suite_name, "good") && !strcmp(p.source, "tests/suites/good.yaml"));
    CHECK(p.n_shape_names == 3 && !strcmp(p.shape_names[1], "ffn_up"));
    CHECK(p.n_warnings == 0);
    kb_plan_free(&p);
    CHECK(p.cases == NULL && p.n_cases == 0);
}

static void test_order_and_fields(void)
{
    kb_plan p;
    /* Axis order: variant, dtype, shape, pad, launch, params; the last turns fastest. */
    if (plan(HEAD "  - family: gelu\n    variant: vec\n    dtype: [fp32, bf16]\n    shape: {n: 100}\n"
                  "    pad: [0, 3]\n    params: {VEC: [2, 8], form: [erf, tanh]}\n", 0, &p)) { CHECK(0); return; }
    CHECK(p.n_cases == 16);
    if (p.n_cases == 16) {
        const kb_case *c = p.cases;
        CHECK(c[0].dtype == KB_DT_FP32 && c[0].pad == 0 && c[0].params[1] == 2 && c[0].params[2] == 0);
        CHECK(c[1].params[1] == 2 && c[1].params[2] == 1);   /* form fastest */
        CHECK(c[2].params[1] == 8 && c[2].params[2] == 0);
        CHECK(c[4].pad == 3 && c[4].dtype == KB_DT_FP32);
        CHECK(c[8].dtype == KB_DT_BF16 && c[8].pad == 0);
        CHECK(c[15].dtype == KB_DT_BF16 && c[15].pad == 3 && c[15].params[1] == 8 && c[15].params[2] == 1);
        CHECK(c[0].dims[0] == 100 && c[0].shape_name == -1 && c[0].entry == 0 && c[0].variant == 1);
    }
    kb_plan_free(&p);
}

static void test_zip(void)
{
    kb_plan p;
    if (plan(HEAD "  - family: gelu\n    variant: naive\n    dtype: fp32\n"
                  "    shape: [{n: 10}, {n: 20}, {n: 30}]\n    pad: [1, 2, 3]\n    launch: [eager, graph]\n"
                  "    zip: [[shape, pad]]\n", 0, &p)) { CHECK(0); return; }
    CHECK(p.n_cases == 6);   /* 3 zipped pairs x 2 launches, not 3 x 3 x 2 */
    for (int64_t i = 0; i < p.n_cases; i++)
        CHECK(p.cases[i].pad * 10 == p.cases[i].dims[0]);
    kb_plan_free(&p);

    /* A flat list is one group; zipping a repeated value is allowed. */
    if (plan(HEAD "  - family: gelu\n    variant: naive\n    dtype: fp32\n"
                  "    shape: [{n: 10}, {n: 10}]\n    pad: [0, 1]\n    zip: [shape, pad]\n", 0, &p)) { CHECK(0); return; }
    CHECK(p.n_cases == 2 && p.cases[0].pad == 0 && p.cases[1].pad == 1);
    kb_plan_free(&p);

    /* Zip with the variant: each variant gets its own VEC; naive, which has no VEC,
     * holds the default. */
    if (plan(HEAD "  - family: gelu\n    variant: [naive, vec]\n    dtype: fp32\n    shape: {n: 64}\n"
                  "    params: {VEC: [1, 8]}\n    zip: [[variant, VEC]]\n", 0, &p)) { CHECK(0); return; }
    CHECK(p.n_cases == 2);
    if (p.n_cases == 2) {
        CHECK(p.cases[0].variant == 0 && p.cases[0].params[1] == 4);
        CHECK(p.cases[1].variant == 1 && p.cases[1].params[1] == 8);
    }
    kb_plan_free(&p);
}

static void test_where(void)
{
    kb_plan p;
    /* 2 variants x 2 dtypes x 3 shapes, VEC [2, 4, 8] for vec only: 2*3 + 2*3*3 = 24 before where. */
    const char *base = HEAD "  - family: gelu\n    variant: [naive, vec]\n    dtype: [fp32, bf16]\n"
                            "    shape: [{n: 100}, {n: 1000}, {n: 10000}]\n    params: {VEC: [2, 4, 8]}\n";
    char text[1024];
    snprintf(text, sizeof text, "%s    where: \"VEC <= 4 || dtype == fp32\"\n", base);
    if (plan(text, 0, &p)) { CHECK(0); return; }
    /* naive (VEC reads its default 4): all 6 pass; vec: fp32 all 9, bf16 only VEC 2,4: 6. */
    CHECK(p.n_cases == 21);
    CHECK(count_variant(&p, 0) == 6 && count_variant(&p, 1) == 15);
    for (int64_t i = 0; i < p.n_cases; i++)
        CHECK(p.cases[i].params[1] <= 4 || p.cases[i].dtype == KB_DT_FP32);
    kb_plan_free(&p);

    /* Dims, list of clauses (all must hold), names of variants. */
    snprintf(text, sizeof text, "%s    where: [\"n >= 1000\", \"variant == vec\", \"n / VEC > 200\"]\n", base);
    if (plan(text, 0, &p)) { CHECK(0); return; }
    /* vec, n in {1000, 10000}: n=1000 -> VEC 2,4 (500, 250 > 200), n=10000 -> all 3; x 2 dtypes = 10. */
    CHECK(p.n_cases == 10);
    for (int64_t i = 0; i < p.n_cases; i++)
        CHECK(p.cases[i].variant == 1 && p.cases[i].dims[0] >= 1000);
    kb_plan_free(&p);

    /* Shape preset names, launch and pad in where; division by zero drops the case. */
    if (plan("suite: t\nshapes: {big: {n: 4096}, small: {n: 64}}\nbenchmarks:\n"
             "  - family: gelu\n    variant: naive\n    dtype: fp32\n    shape: [big, small, {n: 7}]\n"
             "    pad: [0, 1]\n    launch: [eager, graph]\n"
             "    where: \"shape != small && (launch == graph || pad == 1) && n / pad >= 0\"\n", 0, &p)) { CHECK(0); return; }
    /* big and inline (small excluded) x (graph, pad 1 only: pad 0 divides by zero). */
    CHECK(p.n_cases == 4);
    for (int64_t i = 0; i < p.n_cases; i++)
        CHECK(p.cases[i].shape_name != 1 && p.cases[i].pad == 1);
    kb_plan_free(&p);
}

static void test_param_collapsing_and_dtype_dropping(void)
{
    kb_plan p;
    /* BM/BN apply to tiled only here; BK to wmma only (not listed). */
    if (plan(HEAD "  - family: gemm\n    variant: [naive, tiled]\n    dtype: [fp32, tf32]\n"
                  "    shape: {m: 64, n: 64, k: 64}\n    params: {BM: [32, 64], BN: [32, 64], BK: [8, 16, 32]}\n",
             0, &p)) { CHECK(0); return; }
    /* naive: fp32 only (tf32 dropped), no params -> 1; tiled: 2 dtypes x 2 BM x 2 BN = 8. */
    CHECK(count_variant(&p, 0) == 1 && count_variant(&p, 1) == 8 && p.n_cases == 9);
    for (int64_t i = 0; i < p.n_cases; i++) {
        const kb_case *c = &p.cases[i];
        CHECK(c->params[2] == 16);                       /* BK applies to neither: default */
        if (c->variant == 0) CHECK(c->dtype == KB_DT_FP32 && c->params[0] == 64 && c->params[1] == 64);
    }
    kb_plan_free(&p);

    /* No dtype listed: each variant runs its own dtypes. */
    if (plan(HEAD "  - family: gemm\n    shape: {m: 8, n: 8, k: 8}\n", 0, &p)) { CHECK(0); return; }
    CHECK(count_variant(&p, 0) == 1 && count_variant(&p, 1) == 2 && count_variant(&p, 2) == 3);
    for (int64_t i = 0; i < p.n_cases; i++)
        CHECK(fake_gemm_variants[p.cases[i].variant].dtypes & KB_DT_BIT(p.cases[i].dtype));
    kb_plan_free(&p);

    /* A dtype no listed variant supports is an input error, not an empty entry. */
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_suite_plan_text(HEAD "  - family: gemm\n    variant: naive\n    dtype: bf16\n    shape: {m: 8, n: 8, k: 8}\n",
                             "x.yaml", fake_fams, N_FAKE_FAMS, 0, &p, &err) == KB_ERR_INPUT);
    CHECK_MSG(!strcmp(err.s, "x.yaml:5:12: dtype 'bf16' is not supported by any listed variant of gemm (naive)"), "%s", err.s);
    CHECK(p.n_cases == 0 && p.cases == NULL);
    kb_sb_free(&err);
}

static void test_check_shapes(void)
{
    kb_plan p;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_plan("tests/suites/good.yaml", fake_fams, N_FAKE_FAMS, 1, &p, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    if (st) return;
    CHECK(p.n_cases == 56);
    int seen[3] = { 0 };
    for (int64_t i = 0; i < p.n_cases; i++) {
        const kb_case *c = &p.cases[i];
        if (c->shape_name == 0) { seen[0]++; CHECK(c->dims[0] == 65537 && c->check_shape == 1); }
        if (c->family == 0 && c->shape_name == -1) {
            /* {n: 1} has no check shape and runs as written; {n: 1000003} runs as 1001. */
            if (c->dims[0] == 1) { seen[1]++; CHECK(c->check_shape == 0); }
            else { seen[2]++; CHECK(c->dims[0] == 1001 && c->check_shape == 1); }
        }
        if (c->shape_name == 1) CHECK(c->dims[0] == 64 && c->dims[1] == 172 && c->dims[2] == 64 && c->check_shape);
        if (c->shape_name == 2) CHECK(c->dims[0] == 512 && c->check_shape == 0);
    }
    CHECK(seen[0] == 16 && seen[1] == 16 && seen[2] == 16);
    kb_plan_free(&p);
}

static void test_seeds(void)
{
    kb_plan p;
    if (plan_file("tests/suites/good.yaml", 0, &p)) { CHECK(0); return; }
    int same_problem_pairs = 0;
    for (int64_t i = 0; i < p.n_cases; i++) {
        const kb_case *a = &p.cases[i];
        const kb_family *f = fake_fams[a->family];
        CHECK(a->seed == kb_plan_seed(a->entry == 0 ? 1234 : 7, f->name, a->dims, f->n_dims, a->pad));
        for (int64_t j = i + 1; j < p.n_cases; j++) {
            const kb_case *b = &p.cases[j];
            int same = a->family == b->family && a->pad == b->pad && !memcmp(a->dims, b->dims, sizeof a->dims);
            if (same) {
                same_problem_pairs++;
                CHECK(a->seed == b->seed);   /* across variants, dtypes, params, launch */
            } else if (a->family == b->family) {
                CHECK(a->seed != b->seed);   /* another shape or pad: other inputs */
            }
        }
    }
    CHECK(same_problem_pairs > 100);
    kb_plan_free(&p);
    /* The seed depends on each of its inputs. */
    int64_t d1[1] = { 1000 }, d2[1] = { 1001 };
    uint32_t s = kb_plan_seed(1, "gelu", d1, 1, 0);
    CHECK(s != kb_plan_seed(2, "gelu", d1, 1, 0));
    CHECK(s != kb_plan_seed(1, "gelux", d1, 1, 0));
    CHECK(s != kb_plan_seed(1, "gelu", d2, 1, 0));
    CHECK(s != kb_plan_seed(1, "gelu", d1, 1, 1));
    CHECK(s == kb_plan_seed(1, "gelu", d1, 1, 0));
}

static void test_warning_when_where_removes_everything(void)
{
    kb_plan p;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_plan("tests/suites/where_empty.yaml", fake_fams, N_FAKE_FAMS, 0, &p, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    if (!st) {
        CHECK(p.n_cases == 1 && p.entries[1].n_cases == 0);
        CHECK(p.n_warnings == 1);
        if (p.n_warnings == 1)
            CHECK_MSG(!strcmp(p.warnings[0], "tests/suites/where_empty.yaml:8:5: entry 2 (gelu): the where filter "
                                             "removes every case"), "%s", p.warnings[0]);
    }
    kb_plan_free(&p);
    /* Loader warnings reach the plan too. */
    if (plan(HEAD "  - family: gelu\n    variant: naive\n    shape: {n: 1}\n    params: {VEC: 2}\n", 0, &p)) { CHECK(0); kb_sb_free(&err); return; }
    CHECK(p.n_warnings == 1 && strstr(p.warnings[0], "applies to none of the listed variants"));
    kb_plan_free(&p);
    kb_sb_free(&err);
}

static void test_limits_and_errors(void)
{
    kb_plan p;
    kb_sb err, text;
    kb_sb_init(&err);
    kb_sb_init(&text);
    /* 1000 pads x 1000 BLOCK x 100 VEC = 10^8 combinations: refused before any work. */
    kb_sb_printf(&text, HEAD "  - family: gelu\n    variant: vec\n    dtype: fp32\n    shape: {n: 1}\n    pad: [");
    for (int i = 0; i < 1000; i++) kb_sb_printf(&text, "%s%d", i ? ", " : "", i);
    kb_sb_printf(&text, "]\n    params:\n      BLOCK: [");
    for (int i = 0; i < 1000; i++) kb_sb_printf(&text, "%s%d", i ? ", " : "", i + 1);
    kb_sb_printf(&text, "]\n      VEC: [");
    for (int i = 0; i < 100; i++) kb_sb_printf(&text, "%s%d", i ? ", " : "", i + 1);
    kb_sb_printf(&text, "]\n");
    CHECK(kb_suite_plan_text(text.s, "x.yaml", fake_fams, N_FAKE_FAMS, 0, &p, &err) == KB_ERR_INPUT);
    CHECK_MSG(strstr(err.s, "x.yaml:3:5: entry 1 (gelu): the suite combines more than 20000000 cases") == err.s,
              "%s", err.s);
    CHECK(p.n_cases == 0 && p.cases == NULL);
    /* The budget is the suite's: 100 entries of 400k combinations each (aliases of one
     * mapping) are refused at the 51st, before any of them is enumerated. */
    kb_sb_clear(&text);
    kb_sb_printf(&text, HEAD "  - &big\n    family: gelu\n    variant: vec\n    dtype: fp32\n    shape: {n: 1}\n"
                 "    pad: [");
    for (int i = 0; i < 400; i++) kb_sb_printf(&text, "%s%d", i ? ", " : "", i);
    kb_sb_printf(&text, "]\n    params:\n      BLOCK: [");
    for (int i = 0; i < 1000; i++) kb_sb_printf(&text, "%s%d", i ? ", " : "", i + 1);
    kb_sb_printf(&text, "]\n    where: \"pad > 1000\"\n");   /* no case survives: only the budget stops it */
    for (int i = 0; i < 99; i++) kb_sb_printf(&text, "  - *big\n");
    CHECK(kb_suite_plan_text(text.s, "x.yaml", fake_fams, N_FAKE_FAMS, 0, &p, &err) == KB_ERR_INPUT);
    CHECK_MSG(strstr(err.s, "entry 51 (gelu): the suite combines more than 20000000 cases") &&
              strstr(err.s, "(20000000 by the entries before this one)"), "%s", err.s);
    /* Errors of the loader pass through unchanged. */
    CHECK(kb_suite_plan("tests/suites/absent.yaml", fake_fams, N_FAKE_FAMS, 0, &p, &err) == KB_ERR_INPUT);
    CHECK(strstr(err.s, "tests/suites/absent.yaml") != NULL);
    CHECK(kb_suite_plan("tests/suites/bad_param.yaml", fake_fams, N_FAKE_FAMS, 0, &p, &err) == KB_ERR_INPUT);
    CHECK(strstr(err.s, "tests/suites/bad_param.yaml:8:7: unknown parameter 'VECS'") == err.s);
    kb_sb_free(&text);
    kb_sb_free(&err);
}

static void test_deterministic(void)
{
    kb_plan a, b;
    if (plan_file("tests/suites/good.yaml", 0, &a)) { CHECK(0); return; }
    if (plan_file("tests/suites/good.yaml", 0, &b)) { CHECK(0); kb_plan_free(&a); return; }
    CHECK(a.n_cases == b.n_cases && !memcmp(a.cases, b.cases, (size_t)a.n_cases * sizeof *a.cases));
    kb_plan_free(&a);
    kb_plan_free(&b);
}

int main(void)
{
    RUN(test_product_counts);
    RUN(test_order_and_fields);
    RUN(test_zip);
    RUN(test_where);
    RUN(test_param_collapsing_and_dtype_dropping);
    RUN(test_check_shapes);
    RUN(test_seeds);
    RUN(test_warning_when_where_removes_everything);
    RUN(test_limits_and_errors);
    RUN(test_deterministic);
    TEST_MAIN_END();
}
