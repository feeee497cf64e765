/* test_suite.c - the YAML suite loader: what a good suite loads into, and the exact
 * file:line:column message of each kind of bad input; out of memory is exit 3. */
#include <stdint.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "suite/suite_load.h"
#include "suite/suite_loader.h"
#include "suite_fakes.h"

/* Load text as "x.yaml"; expect failure with exactly message want. */
static int fails_with(const char *text, const char *want)
{
    kb_suite s;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_load_text(text, "x.yaml", fake_fams, N_FAKE_FAMS, &s, &err);
    int ok = st == KB_ERR_INPUT && strcmp(err.s, want) == 0 && s.n_entries == 0 && s.name == NULL;
    if (!ok) fprintf(stderr, "  got status %d \"%s\"\n  want \"%s\"\n", st, err.s, want);
    kb_sb_free(&err);
    kb_suite_free(&s);
    return ok;
}

/* Two lines that make a suite around the entry text that follows. */
#define HEAD "suite: t\nbenchmarks:\n"

static void test_good_suite_loads(void)
{
    kb_suite s;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_load("tests/suites/good.yaml", fake_fams, N_FAKE_FAMS, &s, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    if (st) { kb_sb_free(&err); return; }
    CHECK(strcmp(s.name, "good") == 0);
    CHECK(strcmp(s.description, "loader and planner test input") == 0);
    CHECK(strcmp(s.source, "tests/suites/good.yaml") == 0);
    CHECK(s.n_shape_names == 3);
    CHECK(s.n_shape_names == 3 && !strcmp(s.shape_names[0], "hidden") && !strcmp(s.shape_names[2], "square"));
    CHECK(s.n_entries == 2);
    CHECK(s.n_warnings == 0);

    const kb_suite_entry *g = &s.entries[0];
    CHECK(g->line == 18 && g->column == 5);
    CHECK(g->family == 0);
    CHECK(g->n_variants == 2 && g->variants[0] == 0 && g->variants[1] == 1);
    CHECK(g->n_dtypes == 2 && g->dtypes[0] == KB_DT_FP32 && g->dtypes[1] == KB_DT_BF16);
    /* Preset by name (with '_' digit separators), inline, inline with check. */
    CHECK(g->n_shapes == 3);
    CHECK(g->shapes[0].name == 0 && g->shapes[0].dims[0] == 8388608);
    CHECK(g->shapes[0].has_check && g->shapes[0].check_dims[0] == 65537);
    CHECK(g->shapes[1].name == -1 && g->shapes[1].dims[0] == 1 && !g->shapes[1].has_check);
    CHECK(g->shapes[2].name == -1 && g->shapes[2].dims[0] == 1000003);
    CHECK(g->shapes[2].has_check && g->shapes[2].check_dims[0] == 1001);
    /* Params: BLOCK unlisted (default), VEC a list, form a choice by name. */
    CHECK(g->n_param_values[0] == 1 && g->param_values[0][0] == 256);
    CHECK(g->n_param_values[1] == 3 && g->param_values[1][0] == 2 && g->param_values[1][2] == 8);
    CHECK(g->n_param_values[2] == 1 && g->param_values[2][0] == 1); /* tanh */
    /* pad overrides the default; launch, seed and measure inherit it. */
    CHECK(g->n_pads == 2 && g->pads[0] == 0 && g->pads[1] == 1);
    CHECK(g->n_launches == 1 && g->launches[0] == KB_LAUNCH_EAGER);
    CHECK(g->seed == 1234);
    CHECK(g->measure.min_samples == 20 && g->measure.max_noise == 0.01 && g->measure.l2 == KB_L2_HOT);
    CHECK(g->measure.timeout_s == 15.0 && g->measure.warmup == 1); /* built-in defaults remain */
    CHECK(g->n_where == 0 && g->n_zip_groups == 0);

    const kb_suite_entry *m = &s.entries[1];
    CHECK(m->line == 26);
    CHECK(m->family == 1);
    CHECK(m->n_variants == 1 && m->variants[0] == 2);
    CHECK(m->n_dtypes == 1 && m->dtypes[0] == KB_DT_FP16);
    CHECK(m->n_shapes == 2 && m->shapes[0].name == 1 && m->shapes[1].name == 2);
    CHECK(m->shapes[0].dims[0] == 2048 && m->shapes[0].dims[1] == 11008 && m->shapes[0].dims[2] == 4096);
    CHECK(m->shapes[0].check_dims[1] == 172 && !m->shapes[1].has_check);
    CHECK(m->n_param_values[0] == 1 && m->param_values[0][0] == 128);            /* scalar */
    CHECK(m->n_param_values[1] == 2 && m->param_values[1][1] == 128);            /* list */
    CHECK(m->n_param_values[2] == 1 && m->param_values[2][0] == 32);
    CHECK(m->n_launches == 2 && m->launches[1] == KB_LAUNCH_GRAPH);
    CHECK(m->seed == 7);
    /* measure merges key by key: own min_samples and timeout, defaults' noise and l2. */
    CHECK(m->measure.min_samples == 5 && m->measure.timeout_s == 2.5);
    CHECK(m->measure.max_noise == 0.01 && m->measure.l2 == KB_L2_HOT && m->measure.warmup == 1);
    kb_suite_free(&s);
    CHECK(s.entries == NULL && s.name == NULL);
    kb_sb_free(&err);
}

static void test_defaults_when_absent(void)
{
    kb_suite s;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_load_text(HEAD "  - family: gemm\n    shape: {m: 1, n: 2, k: 3}\n",
                                      "x.yaml", fake_fams, N_FAKE_FAMS, &s, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    if (st) { kb_sb_free(&err); return; }
    const kb_suite_entry *e = &s.entries[0];
    CHECK(strcmp(s.description, "") == 0 && s.n_shape_names == 0);
    CHECK(e->n_variants == 3);                                 /* every variant */
    CHECK(e->n_dtypes == 5);                                   /* union of the variants' dtypes */
    CHECK(e->dtypes[0] == KB_DT_FP32 && e->dtypes[1] == KB_DT_TF32 && e->dtypes[4] == KB_DT_INT8);
    CHECK(e->n_pads == 1 && e->pads[0] == 0);
    CHECK(e->n_launches == 1 && e->launches[0] == KB_LAUNCH_EAGER);
    CHECK(e->seed == 1);
    CHECK(e->measure.min_samples == 10 && e->measure.max_noise == 0.005 && e->measure.timeout_s == 15.0);
    CHECK(e->measure.warmup == 1 && e->measure.l2 == KB_L2_COLD);
    CHECK(e->n_param_values[2] == 1 && e->param_values[2][0] == 16);
    CHECK(e->requires == 0);                                   /* planned everywhere */
    kb_suite_free(&s);
    st = kb_suite_load_text(HEAD "  - family: gelu\n    shape: {n: 1}\n    requires: [gpu]\n", "x.yaml", fake_fams,
                            N_FAKE_FAMS, &s, &err);
    CHECK_MSG(st == KB_OK && s.entries[0].requires == KB_REQUIRE_GPU, "%s", err.s);
    if (st == KB_OK)
        kb_suite_free(&s);
    kb_sb_free(&err);
}

static void test_errors_from_files(void)
{
    kb_suite s;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_suite_load("tests/suites/bad_param.yaml", fake_fams, N_FAKE_FAMS, &s, &err) == KB_ERR_INPUT);
    CHECK_MSG(!strcmp(err.s, "tests/suites/bad_param.yaml:8:7: unknown parameter 'VECS' for family gelu "
                             "(expected one of: BLOCK, VEC, form)"), "%s", err.s);
    CHECK(kb_suite_load("tests/suites/bad_zip.yaml", fake_fams, N_FAKE_FAMS, &s, &err) == KB_ERR_INPUT);
    CHECK_MSG(!strcmp(err.s, "tests/suites/bad_zip.yaml:8:11: zip group [shape, pad] has lengths 3 and 2"), "%s", err.s);
    /* libyaml's own problem text and position: the flow list opened on line 6 hits line 7. */
    CHECK(kb_suite_load("tests/suites/bad_syntax.yaml", fake_fams, N_FAKE_FAMS, &s, &err) == KB_ERR_INPUT);
    CHECK_MSG(!strncmp(err.s, "tests/suites/bad_syntax.yaml:7:8: YAML: did not find expected ',' or ']'", 69) &&
              strstr(err.s, "while parsing a flow sequence at 6:12"), "%s", err.s);
    /* A missing file is an input error naming the path. */
    CHECK(kb_suite_load("tests/suites/no_such_suite.yaml", fake_fams, N_FAKE_FAMS, &s, &err) == KB_ERR_INPUT);
    CHECK_MSG(strstr(err.s, "tests/suites/no_such_suite.yaml") && strstr(err.s, "No such file"), "%s", err.s);
    CHECK(s.n_entries == 0 && s.name == NULL);
    kb_sb_free(&err);
}

static void test_errors_names(void)
{
    CHECK(fails_with(HEAD "  - family: gelux\n    shape: {n: 1}\n",
                     "x.yaml:3:13: unknown family 'gelux' (known: gelu, gemm)"));
    CHECK(fails_with(HEAD "  - shape: {n: 1}\n", "x.yaml:3:5: entry 1 lacks 'family'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    variant: [naive, fast]\n    shape: {n: 1}\n",
                     "x.yaml:4:22: unknown variant 'fast' for family gelu (expected one of: naive, vec)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    dtype: fp33\n    shape: {n: 1}\n",
                     "x.yaml:4:12: unknown dtype 'fp33' (expected one of: fp32, tf32, fp16, bf16, int8, fp8e4m3, fp8e5m2, fp6e2m3, fp6e3m2, fp4e2m1)"));
    CHECK(fails_with(HEAD "  - family: gemm\n    variant: [naive, tiled]\n    dtype: [fp32, fp16]\n    shape: {m: 1, n: 1, k: 1}\n",
                     "x.yaml:5:19: dtype 'fp16' is not supported by any listed variant of gemm (naive, tiled)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    params: {form: [erf, exact]}\n",
                     "x.yaml:5:26: unknown value 'exact' for parameter 'form' (expected one of: erf, tanh)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    params: {VEC: four}\n",
                     "x.yaml:5:19: expected an integer for 'VEC', got 'four'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    params: {VEC: \"4\"}\n",
                     "x.yaml:5:19: expected an integer for 'VEC'"));   /* quoted: a string, not a number */
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    launch: [eager, lazy]\n",
                     "x.yaml:5:21: unknown launch mode 'lazy' (expected one of: eager, graph)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    dtypes: fp32\n",
                     "x.yaml:5:5: unknown key 'dtypes' in a benchmark entry (expected one of: family, variant, "
                     "dtype, shape, params, pad, launch, zip, where, measure, seed, requires)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    requires: tpu\n",
                     "x.yaml:5:15: requires: expected gpu, got 'tpu'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    requires: {gpu: 1}\n",
                     "x.yaml:5:15: expected gpu or a list of them for 'requires'"));
    CHECK(fails_with("suite: t\nbenchmark:\n  - family: gelu\n",
                     "x.yaml:2:1: unknown key 'benchmark' in the suite (expected one of: suite, description, "
                     "defaults, shapes, benchmarks)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    shape: {n: 2}\n",
                     "x.yaml:5:5: duplicate key 'shape' in a benchmark entry"));
    CHECK(fails_with("suite: t\ndefaults: {pad: [0], seeds: 3}\nbenchmarks: []\n",
                     "x.yaml:2:22: unknown key 'seeds' in 'defaults' (expected one of: seed, pad, launch, measure)"));
}

static void test_errors_values(void)
{
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    dtype: {fp32: 1}\n",
                     "x.yaml:5:12: expected a list or a scalar for 'dtype'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    pad: []\n", "x.yaml:5:10: empty axis 'pad'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    pad: [0, -1]\n",
                     "x.yaml:5:14: 'pad' must be between 0 and 4096, got -1"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    params: {BLOCK: 99999999999999999999}\n",
                     "x.yaml:5:21: value '99999999999999999999' for 'BLOCK' does not fit in a 64-bit integer"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    seed: 1.5\n",
                     "x.yaml:5:11: expected an integer for 'seed', got '1.5'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    pad: [0, 1, 0]\n",
                     "x.yaml:5:17: duplicate value in axis 'pad' (list each value once; zip pairs repeated values)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    measure: {min_samples: 0}\n",
                     "x.yaml:5:28: 'min_samples' must be an integer in [1, 1000000] samples, got 0"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    measure: {l2: warm}\n",
                     "x.yaml:5:19: unknown l2 mode 'warm' (expected one of: cold, hot)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    measure: {max_noise: lots}\n",
                     "x.yaml:5:26: expected a finite number for 'max_noise', got 'lots'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    measure: {timeout_s: 0}\n",
                     "x.yaml:5:26: 'timeout_s' must be a number in (0, 86400] s, got 0"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    measure: {samples: 3}\n",
                     "x.yaml:5:15: unknown key 'samples' in 'measure' (expected one of: warmup, min_samples, "
                     "max_samples, max_noise, timeout_s, l2, warmup_s, throttle_threshold, throttle_recovery_s)"));
    CHECK(fails_with("suite: t\n", "x.yaml:1:1: missing required key 'benchmarks' (the list of entries)"));
    CHECK(fails_with("benchmarks: []\n", "x.yaml:1:1: missing required key 'suite' (the suite's name)"));
    CHECK(fails_with("suite: t\nbenchmarks: []\n", "x.yaml:2:13: 'benchmarks' is empty"));
    CHECK(fails_with("suite: t\nbenchmarks: {family: gelu}\n", "x.yaml:2:13: expected a list of entries for 'benchmarks'"));
    CHECK(fails_with("# nothing\n", "x.yaml:1:1: empty suite (expected a mapping with 'suite' and 'benchmarks')"));
    CHECK(fails_with("- 1\n- 2\n", "x.yaml:1:1: expected a mapping for the suite"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    variant:\n",
                     "x.yaml:5:13: expected a list or a scalar for 'variant'"));
}

static void test_errors_shapes(void)
{
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: [foo]\n", "x.yaml:4:13: shape 'foo' is not defined (the suite has no 'shapes:')"));
    CHECK(fails_with("suite: t\nshapes: {a: {n: 4}}\nbenchmarks:\n  - family: gelu\n    shape: [a, b]\n",
                     "x.yaml:5:16: shape 'b' is not defined"));
    CHECK(fails_with(HEAD "  - family: gemm\n    shape: {m: 64, n: 64}\n",
                     "x.yaml:4:12: shape for family gemm lacks dim 'k'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 64, k: 2}\n",
                     "x.yaml:4:12: shape has dim 'k', which family gelu does not have (dims: n)"));
    CHECK(fails_with(HEAD "  - family: gemm\n    shape: {m: 64, n: 64, k: 8, check: {m: 8, n: 8}}\n",
                     "x.yaml:4:40: check shape for family gemm lacks dim 'k'"));
    CHECK(fails_with("suite: t\nshapes:\n  big: {m: 64, n: 64, k: 8}\nbenchmarks:\n  - family: gelu\n    shape: big\n",
                     "x.yaml:6:12: shape 'big' (defined at line 3) has dim 'm', which family gelu does not have (dims: n)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: -4}\n", "x.yaml:4:16: 'n' must be between 1 and 1099511627776, got -4"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 9223372036854775807}\n",
                     "x.yaml:4:16: 'n' must be between 1 and 1099511627776, got 9223372036854775807"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 100, check: {n: 101}}\n",
                     "x.yaml:4:28: check shape: n = 101 exceeds the shape's n = 100 (a check shape is a smaller "
                     "stand-in for the emulator)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 0}\n", "x.yaml:4:16: 'n' must be between 1 and 1099511627776, got 0"));
    CHECK(fails_with(HEAD "  - family: gemm\n    shape: {m: 4294967296, n: 4294967296, k: 1}\n",
                     "x.yaml:4:31: the dims of this shape multiply past 72057594037927936 (2^56): no device holds that"));
    CHECK(fails_with(HEAD "  - family: gelu\n", "x.yaml:3:5: entry for family gelu lacks 'shape' (dims: n)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: [[1]]\n",
                     "x.yaml:4:13: expected a shape preset name or a map of dims for 'shape'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: []\n", "x.yaml:4:12: empty axis 'shape'"));
}

static void test_errors_zip_and_where(void)
{
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: [{n: 1}, {n: 2}, {n: 3}]\n    pad: [0, 1]\n    zip: [[shape, pad]]\n",
                     "x.yaml:6:11: zip group [shape, pad] has lengths 3 and 2"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    zip: [[shape, pads]]\n",
                     "x.yaml:5:19: unknown axis 'pads' in zip (expected one of: variant, dtype, shape, pad, launch, "
                     "BLOCK, VEC, form)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    zip: [[shape, pad], [pad, launch]]\n",
                     "x.yaml:5:26: axis 'pad' appears twice in zip"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    zip: shape\n",
                     "x.yaml:5:10: expected a list of axis groups for 'zip', e.g. [[shape, pad]]"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    where: \"VECX <= 4\"\n",
                     "x.yaml:5:12: where: unknown name 'VECX' (column 1)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    where: [\"n > 1\", \"(VEC <= 4 || n > 1\"]\n",
                     "x.yaml:5:22: where: syntax error at column 19: expected ')'"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    where: \"dtype == fp33\"\n",
                     "x.yaml:5:12: where: unknown value 'fp33' (column 10) for 'dtype' (expected one of: fp32, tf32, "
                     "fp16, bf16, int8, fp8e4m3, fp8e5m2, fp6e2m3, fp6e3m2, fp4e2m1)"));
    CHECK(fails_with(HEAD "  - family: gelu\n    shape: {n: 1}\n    where: {VEC: 4}\n",
                     "x.yaml:5:12: expected a string or a list of strings for 'where'"));
}

static void test_warnings(void)
{
    kb_suite s;
    kb_sb err;
    kb_sb_init(&err);
    /* VEC applies only to variant vec; listing it for naive alone does nothing. */
    kb_status st = kb_suite_load_text(HEAD "  - family: gelu\n    variant: naive\n    shape: {n: 1}\n    params: {VEC: [2, 4]}\n",
                                      "x.yaml", fake_fams, N_FAKE_FAMS, &s, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    CHECK(s.n_warnings == 1);
    if (s.n_warnings == 1)
        CHECK_MSG(!strcmp(s.warnings[0], "x.yaml:6:14: parameter 'VEC' applies to none of the listed variants of "
                                         "gelu; its values are ignored"), "%s", s.warnings[0]);
    kb_suite_free(&s);
    kb_sb_free(&err);
}

/* Out of memory in the loader (a request no allocator grants) stops kbench with a message
 * and exit 3, not an abort's core dump. Run in a child: it exits. */
static void test_out_of_memory_is_exit_3(void)
{
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
        freopen("/dev/null", "w", stderr);
        kb_suite_xcalloc(SIZE_MAX / 2, 4);
        _exit(99);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK_MSG(WIFEXITED(status) && WEXITSTATUS(status) == KB_EXIT_SETUP, "status 0x%x", status);
}

int main(void)
{
    RUN(test_good_suite_loads);
    RUN(test_defaults_when_absent);
    RUN(test_errors_from_files);
    RUN(test_errors_names);
    RUN(test_errors_values);
    RUN(test_errors_shapes);
    RUN(test_errors_zip_and_where);
    RUN(test_warnings);
    RUN(test_out_of_memory_is_exit_3);
    TEST_MAIN_END();
}
