/* test_tune_replay.c - recorded spaces (tune/replay.h) and the strategy comparison over
 * them (tune/report.h): Kernel Tuner caches and kbench records read as their formats
 * say, refused and failed configurations, simulated costs, random sampling's exact
 * baseline, and hostile files refused with the place named, never a hang. */
#include "check.h"
#include "tune/prior.h"
#include "tune/replay.h"
#include "tune/report.h"
#include "tune/report_out.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/kb_tune_replay_XXXXXX";

static const char *write_file(const char *name, const char *text)
{
    static char path[4][512];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 512, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    fputs(text, f);
    fclose(f);
    return p;
}

/* A Kernel Tuner cache (2 x 3 space): one failed entry, one refused (InvalidConfig), one
 * absent (a restriction), the rest timed with their costs; written unterminated, as
 * Kernel Tuner leaves a cache it is appending to. tune_params lists tile 4 before 1. */
static const char kt_cache[] =
    "{\"schema_version\": \"1.0.0\", \"device_name\": \"NVIDIA A100-SXM4-80GB\", \"kernel_name\": \"matmul\",\n"
    " \"problem_size\": [4096, 4096], \"tune_params_keys\": [\"block_size_x\", \"tile\"],\n"
    " \"tune_params\": {\"block_size_x\": [32, 64], \"tile\": [4, 1, 2]}, \"objective\": \"time\",\n"
    " \"cache\": {\n"
    "\"32,1\": {\"block_size_x\": 32, \"tile\": 1, \"time\": 4.0, \"compile_time\": 900, \"benchmark_time\": 100},\n"
    "\"32,2\": {\"block_size_x\": 32, \"tile\": 2, \"time\": 3.0, \"compile_time\": 800, \"times\": [50, 50]},\n"
    "\"32,4\": {\"block_size_x\": 32, \"tile\": 4, \"time\": \"CompilationFailedConfig\", \"compile_time\": 1000},\n"
    "\"64,1\": {\"block_size_x\": 64, \"tile\": 1, \"time\": \"InvalidConfig\", \"compile_time\": 0},\n"
    "\"64,4\": {\"block_size_x\": 64, \"tile\": 4, \"time\": 1.0, \"compile_time\": 700, \"benchmark_time\": 300},\n";

static void test_kerneltuner(void)
{
    kb_tune_replay r;
    kb_sb err;
    kb_sb_init(&err);
    const char *path = write_file("kt.json", kt_cache);
    CHECK_MSG(kb_tune_replay_load(path, NULL, &r, &err) == KB_OK, "%s", err.s);
    CHECK(r.n == 5 && r.n_axes == 2 && r.absent == 1 && r.refused == 1 && r.failed == 1);
    CHECK(strcmp(r.format, "Kernel Tuner cache") == 0 && strcmp(r.device, "NVIDIA A100-SXM4-80GB") == 0);
    CHECK(!r.categorical[0] && !r.categorical[1]);
    int opt = kb_tune_replay_optimum(&r);
    CHECK(opt >= 0 && r.time[opt] == 1.0 && strcmp(r.label[opt], "block_size_x=64,tile=4") == 0);
    /* levels by value: tile 1 < 2 < 4 whatever tune_params' order */
    for (int i = 0; i < r.n; i++)
        if (strstr(r.label[i], "tile=4"))
            CHECK(r.level[i * 2 + 1] == 2);
    /* costs [s]: compile + benchmark (or the sum of times) */
    CHECK(r.cost_s && fabs(r.cost_s[0] - 1.0) < 1e-12 && fabs(r.cost_s[1] - 0.9) < 1e-12);
    /* random sampling over the 4 that are not refused, the failed one as the slowest (4):
     * sorted 1, 3, 4, 4: 1 draw expects 3, 2 draws (5 of 6 pairs hold 1 or 3...) */
    CHECK(fabs(kb_tune_replay_random_expected(&r, 1) - 3.0) < 1e-12);
    CHECK(fabs(kb_tune_replay_random_expected(&r, 2) - (3 * 1.0 + 2 * 3.0 + 1 * 4.0) / 6) < 1e-12);
    CHECK(fabs(kb_tune_replay_random_expected(&r, 4) - 1.0) < 1e-12);
    CHECK(kb_tune_replay_random_quantile(&r, 1, 0.5) == 3.0 && kb_tune_replay_random_quantile(&r, 2, 0.5) == 1.0);
    CHECK(kb_tune_replay_random_quantile(&r, 1, 0.25) == 1.0 && kb_tune_replay_random_quantile(&r, 1, 0.75) == 4.0);
    /* every strategy: the refused one costs nothing, so 4 evaluations cover the space */
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++) {
        kb_tune_view v = kb_tune_replay_view(&r, NULL);
        kb_tune_search_opts o = { .strategy = (kb_tune_strategy)s, .seed = 5 };
        kb_tune_trace t;
        CHECK(kb_tune_search(&o, &v, kb_tune_replay_objective, &r, &t) == KB_OK);
        CHECK_MSG(t.evaluations == 4 && t.refused == 1 && t.best == opt, "%s: %d evaluations, %d refused",
                  kb_tune_strategy_name(s), t.evaluations, t.refused);
        kb_tune_trace_free(&t);
    }
    kb_tune_replay_free(&r);
    kb_sb_free(&err);
}

/* Load text as a file; the status, with err's message. */
static kb_status load_text(const char *text, kb_tune_replay *r, kb_sb *err)
{
    kb_sb_clear(err);
    const char *path = write_file("hostile.json", text);
    kb_status st = kb_tune_replay_load(path, NULL, r, err);
    if (st != KB_OK)
        CHECK_MSG(strstr(err->s, path) != NULL, "the message names the file: %s", err->s);
    return st;
}

#define KT_HEAD(keys, params) \
    "{\"kernel_name\": \"k\", \"tune_params_keys\": " keys ", \"tune_params\": " params ", \"cache\": {"

/* Issue 28's hostile caches: each refused with its reason, or read right; none hangs. */
static void test_hostile_caches(void)
{
    kb_tune_replay r;
    kb_sb err;
    kb_sb_init(&err);
    /* a name of 40 characters (the old reader truncated it at 32 and looped forever) */
    CHECK(load_text(KT_HEAD("[\"a_parameter_name_of_forty_characters_xx\"]", "{\"a_parameter_name_of_forty_characters_xx\": [1, 2]}")
                    "\"1\": {\"a_parameter_name_of_forty_characters_xx\": 1, \"time\": 2.0}}}", &r, &err) == KB_OK);
    CHECK(r.n == 1 && strcmp(r.axis[0], "a_parameter_name_of_forty_characters_xx") == 0);
    kb_tune_replay_free(&r);
    char name[300];
    memset(name, 'n', sizeof name - 1);
    name[sizeof name - 1] = 0;
    kb_sb t;
    kb_sb_init(&t);
    kb_sb_printf(&t, "{\"tune_params_keys\": [\"%s\"], \"tune_params\": {\"%s\": [1]}, \"cache\": {\"1\": {\"%s\": 1, \"time\": 1}}}",
                 name, name, name);
    CHECK(load_text(t.s, &r, &err) == KB_ERR_INPUT && strstr(err.s, "longer than"));
    /* a value of 300 characters is a value like any other */
    kb_sb_clear(&t);
    kb_sb_printf(&t, KT_HEAD("[\"v\"]", "{\"v\": [\"%s\", \"b\"]}") "\"%s\": {\"v\": \"%s\", \"time\": 1.5}, "
                 "\"b\": {\"v\": \"b\", \"time\": 2.5}}}", name, name, name);
    CHECK(load_text(t.s, &r, &err) == KB_OK && r.n == 2 && r.categorical[0]);
    CHECK(kb_tune_replay_optimum(&r) >= 0 && r.time[kb_tune_replay_optimum(&r)] == 1.5);
    kb_tune_replay_free(&r);
    kb_sb_free(&t);
    /* every entry failed, refused, or an empty cache: nothing to replay */
    CHECK(load_text(KT_HEAD("[\"x\"]", "{\"x\": [1, 2]}") "\"1\": {\"x\": 1, \"time\": \"RuntimeFailedConfig\"}, "
                    "\"2\": {\"x\": 2, \"time\": \"InvalidConfig\"}}}", &r, &err) == KB_ERR_INPUT &&
          strstr(err.s, "no configuration has a time"));
    CHECK(load_text(KT_HEAD("[\"x\"]", "{\"x\": [1]}") "}}", &r, &err) == KB_ERR_INPUT);
    /* negative, zero and absurd times; a repeated axis; a value not in tune_params; a
     * missing value; two entries of one configuration */
    CHECK(load_text(KT_HEAD("[\"x\"]", "{\"x\": [1]}") "\"1\": {\"x\": 1, \"time\": -3}}}", &r, &err) == KB_ERR_INPUT &&
          strstr(err.s, "positive"));
    CHECK(load_text(KT_HEAD("[\"x\"]", "{\"x\": [1]}") "\"1\": {\"x\": 1, \"time\": 0}}}", &r, &err) == KB_ERR_INPUT);
    CHECK(load_text(KT_HEAD("[\"x\"]", "{\"x\": [1]}") "\"1\": {\"x\": 1, \"time\": 1e300}}}", &r, &err) == KB_ERR_INPUT);
    CHECK(load_text(KT_HEAD("[\"x\", \"x\"]", "{\"x\": [1]}") "\"1,1\": {\"x\": 1, \"time\": 1}}}", &r, &err) ==
              KB_ERR_INPUT && strstr(err.s, "repeats"));
    CHECK(load_text(KT_HEAD("[\"x\"]", "{\"x\": [1]}") "\"7\": {\"x\": 7, \"time\": 1}}}", &r, &err) == KB_ERR_INPUT &&
          strstr(err.s, "not among"));
    CHECK(load_text(KT_HEAD("[\"x\"]", "{\"x\": [1]}") "\"1\": {\"time\": 1}}}", &r, &err) == KB_ERR_INPUT &&
          strstr(err.s, "missing"));
    CHECK(load_text(KT_HEAD("[\"x\"]", "{\"x\": [1]}") "\"1\": {\"x\": 1, \"time\": 1}, \"01\": {\"x\": 1, \"time\": 2}}}",
                    &r, &err) == KB_ERR_INPUT && strstr(err.s, "twice"));
    /* an entry without a cost: no simulated-time budget, the space still replays */
    CHECK(load_text(KT_HEAD("[\"x\"]", "{\"x\": [1, 2]}") "\"1\": {\"x\": 1, \"time\": 1, \"compile_time\": 5}, "
                    "\"2\": {\"x\": 2, \"time\": 2}}}", &r, &err) == KB_OK && r.cost_s == NULL);
    kb_tune_replay_free(&r);
    kb_sb_free(&err);
}

/* Files that are not regular: a FIFO is refused without blocking, a missing file and a
 * directory cannot be read (KB_ERR_IO). */
static void test_hostile_files(void)
{
    kb_tune_replay r;
    kb_sb err;
    kb_sb_init(&err);
    char fifo[600];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    CHECK(kb_tune_replay_load(fifo, NULL, &r, &err) == KB_ERR_INPUT && strstr(err.s, "not a regular file"));
    kb_sb_clear(&err);
    snprintf(fifo, sizeof fifo, "%s/missing.json", dir);
    CHECK(kb_tune_replay_load(fifo, NULL, &r, &err) == KB_ERR_IO && strstr(err.s, fifo));
    kb_sb_clear(&err);
    CHECK(kb_tune_replay_load(dir, NULL, &r, &err) == KB_ERR_IO);
    kb_sb_clear(&err);
    CHECK(load_text("[1, 2]\n", &r, &err) == KB_ERR_INPUT);
    kb_sb_free(&err);
}

static const char rec_fmt[] =
    "{\"schema_version\":1,\"case_id\":\"gemm/%s(BM=%d)/fp16/64x64x64/pad0/eager\",\"family\":\"gemm\","
    "\"variant\":\"%s\",\"dtype\":\"fp16\",\"dims\":{\"m\":%s,\"n\":64,\"k\":64},\"params\":{\"layout\":\"nt\","
    "\"BM\":%d},\"pad\":0,\"launch\":\"eager\",\"device\":{\"name\":\"kbench emulator\",\"sm\":90},"
    "\"status\":\"%s\",\"timing\":{\"clock\":\"cpu\",\"median_us\":%s},\"wall_ms\":%d}\n";

/* kbench records: the variant is categorical, BM ordinal, skipped refused; wall_ms the
 * cost; dims out of range and a negative median refused. */
static void test_records(void)
{
    kb_sb text, err;
    kb_sb_init(&text);
    kb_sb_init(&err);
    kb_sb_printf(&text, rec_fmt, "mma", 64, "mma", "64", 64, "ok", "12.5", 300);
    kb_sb_printf(&text, rec_fmt, "mma", 32, "mma", "64", 32, "ok", "10.0", 200);
    kb_sb_printf(&text, rec_fmt, "smem", 64, "smem", "64", 64, "skipped", "null", 0);
    kb_sb_printf(&text, rec_fmt, "smem", 128, "smem", "64", 128, "wrong", "9.0", 100);
    kb_tune_replay r;
    CHECK_MSG(load_text(text.s, &r, &err) == KB_OK, "%s", err.s);
    CHECK(r.n == 4 && r.n_axes == 2 && r.categorical[0] && !r.categorical[1] && r.cpu && r.sm == 90);
    CHECK(r.refused == 1 && r.failed == 1 && r.cost_s && fabs(r.cost_s[0] - 0.3) < 1e-12);
    CHECK(r.cases && r.cases[0].family >= 0 && r.cases[0].dims[0] == 64 && r.cases[0].params[0] == 1 &&
          r.cases[0].params[3] == 64);   /* layout nt is choice 1; BM */
    int opt = kb_tune_replay_optimum(&r);
    CHECK(opt == 1 && r.level[1 * 2 + 1] == 0 && r.level[0 * 2 + 1] == 1);   /* BM 32 < 64 */
    kb_tune_replay_free(&r);
    kb_sb_clear(&text);
    kb_sb_printf(&text, rec_fmt, "mma", 64, "mma", "1e300", 64, "ok", "12.5", 300);
    CHECK(load_text(text.s, &r, &err) == KB_ERR_INPUT && strstr(err.s, "dims"));
    kb_sb_clear(&text);
    kb_sb_printf(&text, rec_fmt, "mma", 64, "mma", "64", 64, "ok", "-4", 300);
    CHECK(load_text(text.s, &r, &err) == KB_ERR_INPUT && strstr(err.s, "median_us"));
    kb_sb_free(&text);
    kb_sb_free(&err);
}

/* The comparison: every strategy over a few seeds at two budgets, the curves' fields,
 * random sampling's row, scores in range for the optimum-finding brute force of a space
 * brute force covers, and the text, SVG and HTML renderings. */
static void test_report(void)
{
    const char *path = write_file("kt2.json", kt_cache);
    const char *paths[] = { path, path };
    kb_tune_report_opts o = { .paths = paths, .n_paths = 2, .strategy = -1, .budgets = { 50, 100 }, .n_budgets = 2,
                              .repeats = 3, .seed = 1 };
    kb_sb err;
    kb_sb_init(&err);
    kb_status st;
    json_t *doc = kb_tune_report_run(&o, &err, &st);
    CHECK_MSG(doc && st == KB_OK, "%s", err.s);
    json_t *sp = json_array_get(json_object_get(doc, "spaces"), 0);
    json_t *p100 = json_array_get(json_object_get(sp, "points"), 1);
    CHECK(json_integer_value(json_object_get(p100, "evaluations")) == 4);
    CHECK(json_array_size(json_object_get(p100, "strategies")) == KB_TUNE_STRATEGY_COUNT);
    size_t i;
    json_t *row;
    json_array_foreach(json_object_get(p100, "strategies"), i, row)   /* all 4 evaluated: the optimum */
    {
        json_t *each = json_object_get(row, "run_ratios");   /* every run's best / optimum */
        CHECK(json_real_value(json_object_get(row, "median_ratio")) == 1.0 &&
              json_integer_value(json_object_get(row, "runs_within_5pct")) == 3 && json_array_size(each) == 3 &&
              json_real_value(json_array_get(each, 0)) == 1.0 && json_real_value(json_array_get(each, 2)) == 1.0);
    }
    CHECK(json_real_value(json_object_get(p100, "random_median_ratio")) == 1.0);
    CHECK(json_object_size(json_object_get(doc, "aggregate_score")) == KB_TUNE_STRATEGY_COUNT);
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    CHECK(kb_tune_report_text(doc, m) == 0 && kb_tune_report_svg(doc, m) == 0 && kb_tune_report_html(doc, m) == 0);
    fclose(m);
    CHECK(buf && strstr(buf, "aggregate score over 2 spaces") && strstr(buf, "<svg") && strstr(buf, "</html>"));
    free(buf);
    json_decref(doc);
    /* a time budget on a space without costs, a prior on a Kernel Tuner cache: refused */
    o.budget_s = 1.0;
    o.paths = (const char *[]){ write_file("nocost.json", KT_HEAD("[\"x\"]", "{\"x\": [1]}") "\"1\": {\"x\": 1, \"time\": 1}}}") };
    o.n_paths = 1;
    CHECK(kb_tune_report_run(&o, &err, &st) == NULL && st == KB_ERR_INPUT && strstr(err.s, "simulated time"));
    o.budget_s = 0;
    o.prior = 1;
    kb_sb_clear(&err);
    CHECK(kb_tune_report_run(&o, &err, &st) == NULL && st == KB_ERR_INPUT && strstr(err.s, "estimate"));
    kb_sb_free(&err);
}

/* Every strategy on a real brute-force space (tests/data/kt_convolution_A6000.json: 2,442
 * configurations measured on an RTX A6000, 176 of them failed): the budget in evaluations
 * and in simulated seconds is respected, nothing is evaluated twice, failed ones are never
 * the best, a seed repeats the search. Properties, never a threshold tuned to the file. */
static void test_real_space(void)
{
    kb_tune_replay r;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_tune_replay_load("tests/data/kt_convolution_A6000.json", NULL, &r, &err) == KB_OK, "%s", err.s);
    CHECK(r.n == 2442 && r.cost_s && r.failed > 0);
    kb_tune_view v = kb_tune_replay_view(&r, NULL);
    unsigned char *seen = calloc((size_t)r.n, 1);
    for (int s = 0; seen && s < KB_TUNE_STRATEGY_COUNT; s++) {
        kb_tune_search_opts o = { .strategy = (kb_tune_strategy)s, .budget = 73, .seed = 9 };
        kb_tune_trace a, b;
        CHECK(kb_tune_search(&o, &v, kb_tune_replay_objective, &r, &a) == KB_OK);
        CHECK(kb_tune_search(&o, &v, kb_tune_replay_objective, &r, &b) == KB_OK);
        CHECK_MSG(a.evaluations == 73, "%s: %d", kb_tune_strategy_name(s), a.evaluations);
        CHECK(b.evaluations == a.evaluations && memcmp(a.order, b.order, (size_t)a.evaluations * sizeof(int)) == 0);
        memset(seen, 0, (size_t)r.n);
        int twice = 0;
        for (int k = 0; k < a.evaluations; k++) {
            twice += seen[a.order[k]];
            seen[a.order[k]] = 1;
        }
        CHECK(twice == 0 && a.best >= 0 && isfinite(r.time[a.best]));
        kb_tune_trace_free(&a);
        kb_tune_trace_free(&b);
        o.budget = 0;
        o.budget_s = 60.0;   /* simulated seconds of compile + benchmark + overheads */
        CHECK(kb_tune_search(&o, &v, kb_tune_replay_objective, &r, &a) == KB_OK);
        double last = a.evaluations ? r.cost_s[a.order[a.evaluations - 1]] : 0;
        CHECK_MSG(a.spent_s >= 60.0 && a.spent_s - last < 60.0, "%s: %g s", kb_tune_strategy_name(s), a.spent_s);
        kb_tune_trace_free(&a);
    }
    free(seen);
    kb_tune_replay_free(&r);
    kb_sb_free(&err);
}

/* --prior estimate on kbench records of its own gemm: each configuration estimated for
 * sm_90's reference GPU, and a strategy with the prior starts at the estimate's best. */
static void test_prior_estimate(void)
{
    kb_sb text, err;
    kb_sb_init(&text);
    kb_sb_init(&err);
    const int bm[] = { 16, 32, 64, 128 };
    for (int i = 0; i < 4; i++) {
        char id[16], t[16];
        snprintf(id, sizeof id, "%d", bm[i]);
        snprintf(t, sizeof t, "%d.5", 10 + i);
        kb_sb_printf(&text, rec_fmt, "smem", bm[i], "smem", "2048", bm[i], "ok", t, 100);
    }
    kb_tune_replay r;
    CHECK_MSG(load_text(text.s, &r, &err) == KB_OK, "%s", err.s);
    double est[4];
    kb_sb_clear(&err);
    CHECK_MSG(kb_tune_prior_estimate(r.cases, r.n, r.sm, est, &err) == 4, "%s", err.s);
    int best = 0;
    for (int i = 0; i < 4; i++) {
        CHECK(isfinite(est[i]) && est[i] > 0);
        best = est[i] < est[best] ? i : best;
    }
    kb_tune_view v = kb_tune_replay_view(&r, est);
    kb_tune_search_opts o = { .strategy = KB_TUNE_BAYES, .budget = 2, .seed = 1 };
    kb_tune_trace t;
    CHECK(kb_tune_search(&o, &v, kb_tune_replay_objective, &r, &t) == KB_OK && t.order[0] == best);
    kb_tune_trace_free(&t);
    kb_tune_replay_free(&r);
    kb_sb_free(&text);
    kb_sb_free(&err);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    RUN(test_kerneltuner);
    RUN(test_hostile_caches);
    RUN(test_hostile_files);
    RUN(test_records);
    RUN(test_report);
    RUN(test_real_space);
    RUN(test_prior_estimate);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        return 1;
    TEST_MAIN_END();
}
