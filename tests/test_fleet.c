/* test_fleet.c - fleet aggregation: the median/MAD statistics against values worked by
 * hand, outliers in synthetic fleets (a slow GPU that passes its own floor is flagged
 * across the fleet, a slow GPU within a node, nothing flagged in a uniform fleet), the
 * merge of rank files (missing, duplicate and corrupt files reported), exit codes, and
 * `kbench fleet` end to end on a directory of rank files. */
#include "accept/fleet.h"
#include "accept/fleet_md.h"
#include "accept/fleet_stats.h"
#include "accept/verdict_io.h"
#include "core/fsutil.h"
#include "check.h"
#include "spawn.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void test_median_and_mad(void)
{
    double a[] = { 5, 1, 3 }, b[] = { 4, 1, 3, 2 };
    CHECK(kb_fleet_median(a, 3) == 3 && kb_fleet_median(b, 4) == 2.5 && isnan(kb_fleet_median(a, 0)));
    CHECK(a[0] == 5);                                           /* not sorted in place */
    kb_fleet_dist d;
    /* 10, 11, 12, 13, 30: median 12, |dev| 2,1,0,1,18 -> MAD 1, scale 1.4826 (floor 0.24) */
    double x[] = { 10, 11, 12, 13, 30 };
    CHECK(kb_fleet_dist_of(x, 5, 3, 0.02, &d) == 1);
    CHECK(d.median == 12 && d.mad == 1 && fabs(d.scale - 1.4826) < 1e-12 && fabs(d.low - (12 - 4.4478)) < 1e-9);
    CHECK(kb_fleet_is_outlier(&d, 30, 1) && !kb_fleet_is_outlier(&d, 30, 0) && kb_fleet_is_outlier(&d, 7, 0));
    /* MAD 0: the relative floor sets the scale (2% of 100 = 2; bound 94) */
    double y[] = { 100, 100, 100, 50 };
    CHECK(kb_fleet_dist_of(y, 4, 3, 0.02, &d) == 1 && d.mad == 0 && d.scale == 2 && d.low == 94);
    CHECK(kb_fleet_is_outlier(&d, 50, 0) && !kb_fleet_is_outlier(&d, 95, 0));
    CHECK(kb_fleet_dist_of(y, 2, 3, 0.02, &d) == 0 && !kb_fleet_is_outlier(&d, 0, 0));  /* too few GPUs */
}

/* ---- synthetic fleets: verdict files as ranks write them ---- */

typedef struct {
    const char *host;
    int rank, world;
    double gbps, fp16, launch_us;
    int wrong;
    int cpu;                    /* emulator: CPU timings, SKIP on its own */
    int no_peak;                /* a GPU timing SKIP on its own (no peak known for a generic GPU) */
} fake_gpu;

static json_t *verdict_of(const fake_gpu *g, const kb_acc_spec *spec)
{
    kb_acc_identity id;
    memset(&id, 0, sizeof id);
    snprintf(id.launcher, sizeof id.launcher, "slurm");
    id.rank = g->rank;
    id.world_size = g->world;
    id.node_id = -1;
    snprintf(id.job_id, sizeof id.job_id, "4242");
    snprintf(id.step_id, sizeof id.step_id, "0");
    snprintf(id.host, sizeof id.host, "%s", g->host);
    kb_device_info dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "NVIDIA H100 80GB HBM3");
    snprintf(dev.uuid, sizeof dev.uuid, "GPU-%04d", g->rank);
    dev.caps = KB_CAP_GPU_TIMER;
    kb_acc_verdict v;
    memset(&v, 0, sizeof v);
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++)
        v.r[t].status = KB_ACC_SKIP;
    v.r[KB_ACC_CORRECTNESS].status = g->wrong ? KB_ACC_FAIL : KB_ACC_PASS;
    double vals[] = { [KB_ACC_MEM_BW] = g->gbps, [KB_ACC_GEMM_FP16] = g->fp16, [KB_ACC_LAUNCH] = g->launch_us };
    kb_acc_test which[] = { KB_ACC_MEM_BW, KB_ACC_GEMM_FP16, KB_ACC_LAUNCH };
    for (int i = 0; i < 3; i++) {
        kb_acc_result *r = &v.r[which[i]];
        r->status = g->cpu || g->no_peak ? KB_ACC_SKIP : KB_ACC_PASS;
        r->have_value = 1;
        r->value = vals[which[i]];
        snprintf(r->clock, sizeof r->clock, g->cpu ? "cpu" : "gpu");
        snprintf(r->reason, sizeof r->reason, g->no_peak ? "no peak is known for the SKU" : "meets");
    }
    v.gpu_thresholds = 1;
    v.worst = g->wrong ? KB_ACC_FAIL : KB_ACC_PASS;
    kb_acc_context c = { &id, &dev, "cuda", spec, "name", "records.jsonl", "2026-01-01T00:00:00Z", NULL, 0, NULL };
    return kb_acc_verdict_json(&c, &v);
}

static void write_fleet(const char *dir, const fake_gpu *g, int n)
{
    kb_acc_spec spec;
    memset(&spec, 0, sizeof spec);
    snprintf(spec.name, sizeof spec.name, "h100-sxm");
    snprintf(spec.sku, sizeof spec.sku, "H100 SXM");
    kb_sb err;
    kb_sb_init(&err);
    for (int i = 0; i < n; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/r%05d-%s.verdict.json", dir, g[i].rank, g[i].host);
        json_t *v = verdict_of(&g[i], &spec);
        CHECK(kb_acc_write_json(path, v, &err) == KB_OK);
        json_decref(v);
    }
    kb_sb_free(&err);
}

static json_t *gpu_test(const kb_fleet *f, int rank, const char *test)
{
    for (int i = 0; i < f->n; i++) {
        json_t *v = f->gpus[i].v;
        if (json_integer_value(json_object_get(json_object_get(v, "identity"), "rank")) != rank)
            continue;
        size_t j;
        json_t *t;
        json_array_foreach(json_object_get(v, "tests"), j, t)
            if (!strcmp(json_string_value(json_object_get(t, "name")), test))
                return t;
    }
    return NULL;
}

static const char *status_of(const kb_fleet *f, int rank, const char *test)
{
    return json_string_value(json_object_get(gpu_test(f, rank, test), "status"));
}

static void rm_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void test_one_slow_gpu_is_flagged(void)
{
    char dir[] = "/tmp/kb_test_fleet_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    /* 2 nodes x 4 GPUs; rank 6's bandwidth passes its floor (1905) but is far below the fleet */
    fake_gpu g[8];
    for (int i = 0; i < 8; i++)
        g[i] = (fake_gpu){ i < 4 ? "n1" : "n2", i, 8, 2600 + 5 * i, 700 - i, 4.0 + 0.01 * i, 0, 0, 0 };
    g[6].gbps = 2000;
    g[2].launch_us = 9.0;                                        /* slow launches on rank 2 */
    write_fleet(dir, g, 8);
    kb_fleet f;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_fleet_load(dir, &f, &err) == KB_OK && f.n == 8 && json_array_size(f.problems) == 0);
    kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR);
    for (int r = 0; r < 8; r++) {
        CHECK_MSG(!strcmp(status_of(&f, r, "memory_bandwidth"), r == 6 ? "FAIL" : "PASS"), "rank %d", r);
        CHECK_MSG(!strcmp(status_of(&f, r, "launch_latency"), r == 2 ? "FAIL" : "PASS"), "rank %d", r);
        CHECK_MSG(!strcmp(status_of(&f, r, "gemm_fp16"), "PASS"), "rank %d", r);
    }
    const char *why = json_string_value(json_object_get(gpu_test(&f, 6, "memory_bandwidth"), "reason"));
    CHECK_MSG(why && strstr(why, "fleet outlier: 2000 GB/s below"), "%s", why ? why : "");
    CHECK(json_is_true(json_object_get(gpu_test(&f, 6, "memory_bandwidth"), "node_outlier")));
    CHECK(kb_fleet_exit_code(&f) == KB_EXIT_SLOW);
    json_t *fj = kb_fleet_json(&f);
    CHECK(!strcmp(json_string_value(json_object_get(fj, "verdict")), "FAIL"));
    CHECK(json_integer_value(json_object_get(json_object_get(fj, "counts"), "fail")) == 2);
    char md[600];
    snprintf(md, sizeof md, "%s/fleet.md", dir);
    FILE *out = fopen(md, "w");
    CHECK(out && kb_fleet_markdown(fj, out) == KB_OK);
    if (out)
        fclose(out);
    json_decref(fj);
    kb_fleet_free(&f);

    /* a uniform fleet: nothing flagged, exit 0 */
    g[6].gbps = 2610;
    g[2].launch_us = 4.02;
    write_fleet(dir, g, 8);
    CHECK(kb_fleet_load(dir, &f, &err) == KB_OK);
    kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR);
    CHECK(kb_fleet_exit_code(&f) == KB_EXIT_OK);
    kb_fleet_free(&f);
    kb_sb_free(&err);
    rm_dir(dir);
}

static void test_wrong_gpu_wins_over_slow(void)
{
    char dir[] = "/tmp/kb_test_fleet_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    fake_gpu g[4];
    for (int i = 0; i < 4; i++)
        g[i] = (fake_gpu){ "n1", i, 4, 2600, 700, 4.0, i == 1, 0, 0 };
    g[3].fp16 = 400;                                            /* slow */
    write_fleet(dir, g, 4);
    kb_fleet f;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_fleet_load(dir, &f, &err) == KB_OK);
    kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR);
    CHECK(!strcmp(status_of(&f, 3, "gemm_fp16"), "FAIL") && !strcmp(status_of(&f, 1, "correctness"), "FAIL"));
    CHECK(kb_fleet_exit_code(&f) == KB_EXIT_INCORRECT);
    kb_fleet_free(&f);
    kb_sb_free(&err);
    rm_dir(dir);
}

/* Emulator ranks: CPU timings count only by a factor of KB_FLEET_CPU_FACTOR from the
 * median, so CPU noise of 8x is not flagged and an injected 1000x slowdown is. */
static void test_cpu_timings_by_factor(void)
{
    char dir[] = "/tmp/kb_test_fleet_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    fake_gpu g[4];
    double bw[] = { 2.5, 2.0, 0.3, 0.0025 };
    for (int i = 0; i < 4; i++)
        g[i] = (fake_gpu){ "emu", i, 4, bw[i], 1e-4, 1.4, 0, 1, 0 };
    write_fleet(dir, g, 4);
    kb_fleet f;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_fleet_load(dir, &f, &err) == KB_OK);
    kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR);
    for (int r = 0; r < 4; r++)
        CHECK_MSG(!strcmp(status_of(&f, r, "memory_bandwidth"), r == 3 ? "FAIL" : "SKIP"), "rank %d", r);
    const char *why = json_string_value(json_object_get(gpu_test(&f, 3, "memory_bandwidth"), "reason"));
    CHECK_MSG(why && strstr(why, "CPU timings, relative only"), "%s", why ? why : "");
    CHECK(kb_fleet_exit_code(&f) == KB_EXIT_SLOW);
    kb_fleet_free(&f);
    kb_sb_free(&err);
    rm_dir(dir);
}

static int has_problem(const kb_fleet *f, const char *a, const char *b)
{
    size_t i;
    json_t *p;
    json_array_foreach(f->problems, i, p)
        if (strstr(json_string_value(p), a) && (!b || strstr(json_string_value(p), b)))
            return 1;
    return 0;
}

static void test_missing_duplicate_corrupt(void)
{
    char dir[] = "/tmp/kb_test_fleet_XXXXXX", path[600];
    CHECK(mkdtemp(dir) != NULL);
    fake_gpu g[4];
    for (int i = 0; i < 4; i++)
        g[i] = (fake_gpu){ "n1", i, 5, 2600, 700, 4.0, 0, 0, 0 };        /* world 5: rank 4 never wrote */
    write_fleet(dir, g, 4);
    g[0].host = "n9";                                            /* rank 0 again, from another file */
    write_fleet(dir, g, 1);
    snprintf(path, sizeof path, "%s/r00007-n3.verdict.json", dir);
    FILE *f1 = fopen(path, "w");
    fputs("{\"schema\": \"kbench-accept\", \"tests\": [", f1);      /* cut mid-write */
    fclose(f1);
    snprintf(path, sizeof path, "%s/r00008-n3.verdict.json", dir);
    f1 = fopen(path, "w");
    fputs("{\"schema\": \"something-else\"}\n", f1);
    fclose(f1);
    kb_fleet f;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_fleet_load(dir, &f, &err) == KB_OK && f.n == 5);
    CHECK(has_problem(&f, "missing: rank 4 of 5", "4242"));
    CHECK(has_problem(&f, "duplicate:", "same rank"));
    CHECK(has_problem(&f, "corrupt:", "r00007-n3.verdict.json:1:"));
    CHECK(has_problem(&f, "corrupt:", "r00008-n3.verdict.json: not a kbench-accept verdict"));
    CHECK(json_array_size(f.problems) == 4);
    kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR);
    CHECK(kb_fleet_exit_code(&f) == KB_EXIT_SETUP);              /* all pass, but a rank is unaccounted for */
    kb_fleet_free(&f);
    CHECK(kb_fleet_load("/nonexistent/kb_fleet", &f, &err) == KB_ERR_INPUT);
    kb_sb_free(&err);
    rm_dir(dir);
}

/* A verdict file as text, from a fake GPU's, with one edit: key (inside block, NULL: the
 * verdict itself; "tests0": the first timed test) set to the JSON value text. */
static void write_edited(const char *dir, const fake_gpu *g, const char *block, const char *key, const char *text)
{
    kb_acc_spec spec;
    memset(&spec, 0, sizeof spec);
    snprintf(spec.name, sizeof spec.name, "h100-sxm");
    json_t *v = verdict_of(g, &spec);
    json_t *where = !block ? v : !strcmp(block, "tests0") ? json_array_get(json_object_get(v, "tests"), 1)
                                                          : json_object_get(v, block);
    json_error_t e;
    json_object_set_new(where, key, json_loads(text, JSON_DECODE_ANY, &e));
    char path[600];
    snprintf(path, sizeof path, "%s/r%05d-%s.verdict.json", dir, g->rank, g->host);
    CHECK(json_dump_file(v, path, 0) == 0);
    json_decref(v);
}

/* Absurd numbers in rank files are "corrupt" problems naming the file and the field; a
 * world size of 2^30 with 4 ranks present is one line of missing ranges, not a billion;
 * a FIFO among the rank files is refused without blocking; an oversized file too. */
static void test_hostile_rank_files(void)
{
    char dir[] = "/tmp/kb_test_fleet_XXXXXX", path[600];
    CHECK(mkdtemp(dir) != NULL);
    fake_gpu g[4];
    for (int i = 0; i < 4; i++)
        g[i] = (fake_gpu){ "n1", i + 2, 1 << 30, 2600, 700, 4.0, 0, 0, 0 };   /* ranks 2..5 of 2^30 */
    write_fleet(dir, g, 4);
    const struct { const char *block, *key, *value, *says; } bad[] = {
        { "tests0", "value", "1e308", "tests[1].value: not a number in [0, 1e+12]" },
        { "tests0", "value", "-5", "tests[1].value" },
        { "identity", "rank", "7", "identity.rank: 7 is not below its world_size 4" },
        { "identity", "world_size", "1e300", "identity.world_size: not an integer" },
        { "identity", "host", "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"", "identity.host: longer than" },
        { "tests0", "status", "\"GREAT\"", "tests[1].status: not PASS" },
        { NULL, "exit_code", "1000", "verdict.exit_code" },
    };
    int n_bad = (int)(sizeof bad / sizeof bad[0]);
    for (int i = 0; i < n_bad; i++) {
        fake_gpu b = { "n8", 100 + i, i == 2 ? 4 : 1 << 30, 2600, 700, 4.0, 0, 0, 0 };
        write_edited(dir, &b, bad[i].block, bad[i].key, bad[i].value);
    }
    snprintf(path, sizeof path, "%s/r09999-fifo.verdict.json", dir);
    CHECK(mkfifo(path, 0644) == 0);
    snprintf(path, sizeof path, "%s/r09998-big.verdict.json", dir);
    FILE *f1 = fopen(path, "w");
    CHECK(f1 && ftruncate(fileno(f1), KB_LIMIT_RANK_BYTES + 1) == 0);
    fclose(f1);
    kb_fleet f;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_fleet_load(dir, &f, &err) == KB_OK && f.n == 4);
    for (int i = 0; i < n_bad; i++) {
        char file[64];
        snprintf(file, sizeof file, "r%05d-n8.verdict.json", 100 + i);
        CHECK_MSG(has_problem(&f, file, bad[i].says), "no problem '%s' for %s", bad[i].says, file);
    }
    CHECK(has_problem(&f, "r09999-fifo.verdict.json", "not a regular file (a FIFO)"));
    CHECK(has_problem(&f, "r09998-big.verdict.json", "a rank file may have at most 16 MiB"));
    /* the missing ranks: 0-1 and 6-(2^30 - 1), one line, with the count */
    CHECK(has_problem(&f, "missing: ranks 0-1, 6-1073741823 of 1073741824 of job 4242 step 0", "(1073741820 ranks)"));
    CHECK(json_array_size(f.problems) == (size_t)n_bad + 3);
    CHECK(kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR) == KB_OK);
    json_t *fj = kb_fleet_json(&f);
    char *text = json_dumps(fj, 0);
    CHECK(text && strlen(text) < 200000);
    free(text);
    json_decref(fj);
    kb_fleet_free(&f);
    kb_sb_free(&err);
    rm_dir(dir);
}

/* Medians near DBL_MAX do not overflow into null. */
static void test_huge_values_stay_finite(void)
{
    double x[] = { 1e308, 1e308, 1.7e308, 1.7e308 };
    CHECK(kb_fleet_median(x, 4) == 0.5 * 1e308 + 0.5 * 1.7e308 && isfinite(kb_fleet_median(x, 4)));
}

/* Every test marked an outlier is FAIL; every GPU's verdict is the worst of its tests and
 * its exit code follows; the fleet's verdict word agrees with its exit code and counts, and
 * the counts add up to the GPUs. The checks of test_findings_agree. */
static void check_consistent(json_t *fj)
{
    int rc = (int)json_integer_value(json_object_get(fj, "exit_code")), sum = 0;
    const char *fv = json_string_value(json_object_get(fj, "verdict"));
    json_t *c = json_object_get(fj, "counts");
    const char *words[] = { "pass", "warn", "fail", "not_checked" };
    for (int i = 0; i < 4; i++)
        sum += (int)json_integer_value(json_object_get(c, words[i]));
    CHECK_MSG(sum == (int)json_integer_value(json_object_get(c, "gpus")), "counts add up to %d", sum);
    CHECK_MSG(fv && (rc == KB_EXIT_OK ? !strcmp(fv, "PASS") || !strcmp(fv, "WARN")
                     : rc == KB_EXIT_SETUP ? !strcmp(fv, "NOT CHECKED") : !strcmp(fv, "FAIL")),
              "fleet verdict %s with exit %d", fv ? fv : "(none)", rc);
    CHECK_MSG(rc != KB_EXIT_SETUP || json_string_value(json_object_get(fj, "not_checked")),
              "a NOT CHECKED fleet says why");
    size_t i, j;
    json_t *v, *t;
    json_array_foreach(json_object_get(fj, "gpus"), i, v) {
        int fail = 0, ran = 0;
        json_array_foreach(json_object_get(v, "tests"), j, t) {
            const char *st = json_string_value(json_object_get(t, "status"));
            int flagged = json_is_true(json_object_get(t, "fleet_outlier")) ||
                          json_is_true(json_object_get(t, "node_outlier"));
            CHECK_MSG(!flagged || !strcmp(st, "FAIL"), "an outlier with status %s: %s", st,
                      json_string_value(json_object_get(t, "reason")));
            fail |= !strcmp(st, "FAIL");
            ran |= strcmp(st, "SKIP") != 0;
        }
        const char *gv = json_string_value(json_object_get(v, "verdict"));
        CHECK_MSG(gv && (fail ? !strcmp(gv, "FAIL") : !ran ? !strcmp(gv, "NOT CHECKED") : strcmp(gv, "FAIL") != 0),
                  "GPU verdict %s", gv ? gv : "(none)");
    }
}

/* Fleet findings never contradict themselves (issue 24):
 *  - a GPU-timed value that was SKIP on its own (a generic GPU whose peak kbench does not
 *    know) and is far below its fleet was marked `fleet_outlier` with an outlier reason yet
 *    stayed SKIP, its GPU PASS, the fleet exit 0: flagged and passed at once;
 *  - a fleet of passing GPUs with a rank missing said verdict "SKIP" (with 0 skipped GPUs)
 *    for its exit 3;
 *  - CPU-timed groups are bounded by a factor from the median, yet their outlier reason
 *    and the page's rule named the MAD. */
static void test_findings_agree(void)
{
    char dir[] = "/tmp/kb_test_fleet_XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    fake_gpu g[4];
    for (int i = 0; i < 4; i++)
        g[i] = (fake_gpu){ "n1", i, 4, 2600, 700, 4.0, 0, 0, 1 };
    g[3].gbps = 900;                                            /* far below its peers */
    write_fleet(dir, g, 4);
    kb_fleet f;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_fleet_load(dir, &f, &err) == KB_OK);
    kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR);
    CHECK_MSG(!strcmp(status_of(&f, 3, "memory_bandwidth"), "FAIL"), "%s", status_of(&f, 3, "memory_bandwidth"));
    CHECK(kb_fleet_exit_code(&f) == KB_EXIT_SLOW);
    json_t *fj = kb_fleet_json(&f);
    check_consistent(fj);
    json_decref(fj);
    kb_fleet_free(&f);
    rm_dir(dir);

    /* passing GPUs, rank 4 of 5 missing: NOT CHECKED (exit 3), not "SKIP" */
    CHECK(mkdtemp(strcpy(dir, "/tmp/kb_test_fleet_XXXXXX")) != NULL);
    for (int i = 0; i < 4; i++)
        g[i] = (fake_gpu){ "n1", i, 5, 2600, 700, 4.0, 0, 0, 0 };
    write_fleet(dir, g, 4);
    CHECK(kb_fleet_load(dir, &f, &err) == KB_OK);
    kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR);
    fj = kb_fleet_json(&f);
    CHECK_MSG(!strcmp(json_string_value(json_object_get(fj, "verdict")), "NOT CHECKED"), "%s",
              json_string_value(json_object_get(fj, "verdict")));
    const char *why = json_string_value(json_object_get(fj, "not_checked"));
    CHECK_MSG(why && strstr(why, "1 problem"), "%s", why ? why : "(none)");
    check_consistent(fj);
    json_decref(fj);
    kb_fleet_free(&f);
    rm_dir(dir);

    /* CPU timings: the reason names the factor that bounds them */
    CHECK(mkdtemp(strcpy(dir, "/tmp/kb_test_fleet_XXXXXX")) != NULL);
    double bw[] = { 2.5, 2.0, 2.2, 0.0025 };
    for (int i = 0; i < 4; i++)
        g[i] = (fake_gpu){ "emu", i, 4, bw[i], 1e-4, 1.4, 0, 1, 0 };
    write_fleet(dir, g, 4);
    CHECK(kb_fleet_load(dir, &f, &err) == KB_OK);
    kb_fleet_judge(&f, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR);
    why = json_string_value(json_object_get(gpu_test(&f, 3, "memory_bandwidth"), "reason"));
    CHECK_MSG(why && strstr(why, "median / 100") && !strstr(why, "MAD"), "%s", why ? why : "");
    fj = kb_fleet_json(&f);
    check_consistent(fj);
    char md[600];
    snprintf(md, sizeof md, "%s/fleet.md", dir);
    FILE *out = fopen(md, "w");
    CHECK(out && kb_fleet_markdown(fj, out) == KB_OK);
    if (out)
        fclose(out);
    char *text = slurp(md);
    CHECK_MSG(text && strstr(text, "CPU timings (emulator): beyond a factor of 100"), "%s", text ? text : "");
    free(text);
    json_decref(fj);
    kb_fleet_free(&f);
    kb_sb_free(&err);
    rm_dir(dir);
}

/* --out-dir naming a directory that does not exist: made before anything is printed (it
 * printed PASS, then failed to write, exit 3); one that cannot be made is refused, exit 3,
 * before the verdict is printed. */
static void test_out_dir_made_or_refused(void)
{
    char dir[] = "/tmp/kb_test_fleet_XXXXXX", log[600], out[700], path[800];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(log, sizeof log, "%s/log", dir);
    fake_gpu g[4];
    for (int i = 0; i < 4; i++)
        g[i] = (fake_gpu){ "n1", i, 4, 2600, 700, 4.0, 0, 0, 0 };
    write_fleet(dir, g, 4);
    snprintf(out, sizeof out, "%s/new/sub", dir);
    const char *a[] = { "kbench", "fleet", dir, "--out-dir", out, NULL };
    int rc = run_kbench(a, log);
    char *text = slurp(log);
    CHECK_MSG(rc == KB_EXIT_OK, "exit %d: %s", rc, text ? text : "");
    free(text);
    snprintf(path, sizeof path, "%s/fleet.json", out);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/file", dir);
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    snprintf(out, sizeof out, "%s/file/sub", dir);
    const char *b[] = { "kbench", "fleet", dir, "--out-dir", out, NULL };
    rc = run_kbench(b, log);
    text = slurp(log);
    CHECK_MSG(rc == KB_EXIT_SETUP && text && strstr(text, "--out-dir") && !strstr(text, "Verdict"), "exit %d: %s",
              rc, text ? text : "");
    free(text);
    rm_dir(dir);
}

static void test_cli_fleet(void)
{
    char dir[] = "/tmp/kb_test_fleet_XXXXXX", log[600], path[600];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(log, sizeof log, "%s/log", dir);
    fake_gpu g[4];
    for (int i = 0; i < 4; i++)
        g[i] = (fake_gpu){ "n1", i, 4, 2600, 700, 4.0, 0, 0, 0 };
    g[2].gbps = 1500;                                            /* below the H100 floor too */
    write_fleet(dir, g, 4);
    const char *a[] = { "kbench", "fleet", dir, "--quiet", NULL };
    CHECK(run_kbench(a, log) == KB_EXIT_SLOW);
    snprintf(path, sizeof path, "%s/fleet.json", dir);
    json_t *fj = json_load_file(path, 0, NULL);
    CHECK(fj && json_integer_value(json_object_get(fj, "exit_code")) == KB_EXIT_SLOW);
    json_decref(fj);
    snprintf(path, sizeof path, "%s/fleet.junit.xml", dir);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/fleet.md", dir);
    CHECK(access(path, R_OK) == 0);
    snprintf(path, sizeof path, "%s/fleet.html", dir);
    char *html = slurp(path);
    /* a chart per test; the slow GPU's dot red, with its rank in the hover text */
    CHECK(html && strstr(html, "<h3>memory_bandwidth: h100-sxm</h3>") && strstr(html, "fill=\"#d00\"") &&
          strstr(html, "n1 rank 2 GPU-0002: 1500 GB/s FAIL"));
    free(html);
    const char *bad[] = { "kbench", "fleet", "/nonexistent/kb_fleet", NULL };
    CHECK(run_kbench(bad, log) == KB_EXIT_INPUT);
    const char *badk[] = { "kbench", "fleet", dir, "--k", "-1", NULL };
    CHECK(run_kbench(badk, log) == KB_EXIT_INPUT);
    rm_dir(dir);
}

int main(void)
{
    RUN(test_median_and_mad);
    RUN(test_one_slow_gpu_is_flagged);
    RUN(test_wrong_gpu_wins_over_slow);
    RUN(test_cpu_timings_by_factor);
    RUN(test_missing_duplicate_corrupt);
    RUN(test_hostile_rank_files);
    RUN(test_huge_values_stay_finite);
    RUN(test_findings_agree);
    RUN(test_out_dir_made_or_refused);
    RUN(test_cli_fleet);
    TEST_MAIN_END();
}
