/* test_tune_cli.c - `kbench tune` and `kbench export` end to end on the emulator: a small
 * GELU space (12 configurations per problem), the tuning database filled and reused on a
 * rerun, Ctrl-C keeping what finished, the exports parsed back (JSON and Kernel Tuner's
 * cache with jansson, the C header compiled into a program that looks a choice up), and
 * emulator choices refused without --allow-cpu. */
#include "check.h"
#include "spawn.h"
#include "tune_v1.h"

#include <jansson.h>
#include <sqlite3.h>

static char dir[] = "/tmp/kb_tune_cli_XXXXXX";
static char suite[256], db[256], out[256], log_path[256];

static const char suite_text[] =
    "suite: tiny_tune\n"
    "defaults:\n"
    "  measure: {min_samples: 3, max_samples: 5, timeout_s: 1, warmup: 1, l2: hot}\n"
    "benchmarks:\n"
    "  - family: gelu\n"
    "    variant: [naive, vec]\n"
    "    dtype: [fp32, bf16]\n"
    "    shape: [{n: 8192}]\n"
    "    params: {BLOCK: [64, 128, 256, 2000], VEC: [2, 4, 8]}\n"
    "    where: \"variant == naive || dtype != fp32 || VEC <= 4\"\n";

static int query_int(const char *sql)
{
    sqlite3 *h;
    sqlite3_stmt *s;
    int v = -1;
    if (sqlite3_open(db, &h) == SQLITE_OK && sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW)
            v = sqlite3_column_int(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_close(h);
    return v;
}

static int tune(const char *strategy, const char *budget)
{
    const char *argv[] = { "kbench", "tune", suite, "--backend", "emu", "--db", db, "--out", out, "--strategy",
                           strategy, "--budget", budget, "--threads", "2", "--max-noise", "1e12", NULL };
    int rc = run_kbench_within(argv, log_path, 120);
    if (rc != 0)
        print_tail(log_path, 3000);
    return rc;
}

/* 2 problems (fp32, bf16); BLOCK=2000 refused by valid(); everything verified and stored. */
static void test_tune_and_resume(void)
{
    CHECK(tune("brute", "100") == 0);
    char *log = slurp(log_path);
    CHECK(log && strstr(log, "2 problems, 21 configurations (7 refused by valid())") && strstr(log, "winner "));
    CHECK(log && strstr(log, "CPU timings"));
    free(log);
    CHECK(query_int("SELECT count(*) FROM tune_entries WHERE status = 'ok' AND cpu_timing = 1 AND clock = 'cpu'") == 21);
    CHECK(query_int("SELECT count(*) FROM tune_choices WHERE stale = 0") == 2);
    /* the emulator's own identity: never the key of sm_90, the GPU it compiles for (issue 24) */
    CHECK(query_int("SELECT count(*) FROM tune_entries WHERE sm = 0 AND sm_count = 0 AND arch = 90 AND "
                    "device = 'kbench emulator (sm_90)'") == 21);
    CHECK(query_int("SELECT count(*) FROM tune_choices WHERE sm = 90 OR sm_count > 0") == 0);
    /* typed configurations: a row per param, never a JSON text (issue 20) */
    CHECK(query_int("SELECT count(*) FROM tune_params p JOIN tune_entries e USING (silicon, driver, toolchain, "
                    "source, case_id) WHERE p.name = 'BLOCK' AND p.value > 0") == 21);
    /* the records are ordinary kbench records */
    char *recs = slurp(out);
    CHECK(recs && strstr(recs, "\"case_id\":\"gelu/vec(form=erf,BLOCK=128,VEC=4,ypad=-1,max_grid=0)/bf16/8192/pad0/eager\""));
    CHECK(recs && strstr(recs, "\"clock\":\"cpu\""));
    free(recs);
    /* a rerun with the same key measures nothing again */
    CHECK(tune("ils", "5") == 0);
    log = slurp(log_path);
    CHECK(log && strstr(log, "0 measured, 10 from the database"));
    free(log);
    /* --confirm re-measures the stored winners and says whether each held */
    const char *confirm[] = { "kbench", "tune", suite, "--backend", "emu", "--db", db, "--out", out, "--strategy",
                              "brute", "--confirm", "--rounds", "1", "--max-noise", "1e12", NULL };
    CHECK(run_kbench_within(confirm, log_path, 120) == 0);
    log = slurp(log_path);
    CHECK(log && strstr(log, "0 measured, 21 from the database"));
    int held = 0;
    for (const char *p = log; p && (p = strstr(p, "the re-measurement ")); p++)
        held++;
    CHECK_MSG(held == 2, "%d problems confirmed", held);
    free(log);
}

static void test_export_json(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/tuned.json", dir);
    const char *refuse[] = { "kbench", "export", "--db", db, "--out", path, NULL };
    CHECK(run_kbench(refuse, log_path) == 2);
    char *log = slurp(log_path);
    CHECK(log && strstr(log, "--allow-cpu"));
    free(log);
    const char *argv[] = { "kbench", "export", "--db", db, "--out", path, "--allow-cpu", NULL };
    CHECK(run_kbench(argv, log_path) == 0);
    json_error_t e;
    json_t *doc = json_load_file(path, 0, &e);
    CHECK(doc != NULL);
    json_t *choices = json_object_get(doc, "choices");
    CHECK(json_array_size(choices) == 2);
    json_t *c = json_array_get(choices, 0);
    CHECK(json_is_true(json_object_get(c, "emulator")) && json_is_true(json_object_get(c, "cpu_timing")));
    CHECK(strcmp(json_string_value(json_object_get(c, "timing")), "cpu") == 0);
    json_t *g = json_object_get(c, "gpu");
    CHECK(json_is_null(json_object_get(g, "sm")) && json_integer_value(json_object_get(g, "arch")) == 90);
    CHECK(!strcmp(json_string_value(json_object_get(g, "name")), "kbench emulator (sm_90)"));
    CHECK(json_integer_value(json_object_get(json_object_get(c, "params"), "BLOCK")) > 0);
    CHECK(json_real_value(json_object_get(c, "median_us")) > 0);
    json_decref(doc);
    /* --gpu-sm/--gpu-sm-count: the emulator's choices are no GPU's, even with --allow-cpu
     * (before: served to an H100 as a nearest-GPU fallback of "sm_90") */
    const char *gpu[] = { "kbench", "export", "--db", db, "--out", path, "--allow-cpu", "--gpu-sm", "sm_90",
                          "--gpu-sm-count", "132", NULL };
    CHECK(run_kbench(gpu, log_path) == 2);
    log = slurp(log_path);
    CHECK_MSG(log && strstr(log, "no current choice for sm_90") && strstr(log, "2 emulator choices"), "%s",
              log ? log : "");
    free(log);
    const char *other[] = { "kbench", "export", "--db", db, "--allow-cpu", "--gpu-sm", "sm_80", "--gpu-sm-count",
                            "108", NULL };
    CHECK(run_kbench(other, log_path) == 2);
}

/* The header compiles into a program that finds the tuned shape and a nearby one. */
static void test_export_header(void)
{
    char hdr[300], src[300], exe[300], cmd[1200];
    snprintf(hdr, sizeof hdr, "%s/kbench_tuned.h", dir);
    snprintf(src, sizeof src, "%s/use.c", dir);
    snprintf(exe, sizeof exe, "%s/use", dir);
    const char *argv[] = { "kbench", "export", "--format", "header", "--db", db, "--out", hdr, "--allow-cpu", NULL };
    CHECK(run_kbench(argv, log_path) == 0);
    FILE *f = fopen(src, "w");
    /* by default an H100 (sm 90, 132 SMs) gets no entry from an emulator tune (before: the
     * emulator's, as the "same sm"); asked for, the emulator's entry is found at its shape and
     * near it, with the distance said, and not beyond the bound */
    fprintf(f, "#include \"kbench_tuned.h\"\n#include <stdio.h>\n#define OP \"gelu(form=erf,ypad=-1)\"\n"
               "int main(void) {\n"
               "  long long n[1] = {8192}, near[1] = {10000}, far[1] = {8192 * 64};\n"
               "  kbench_tuned_match m;\n"
               "  if (kbench_tuned_lookup(OP, \"bf16\", n, 1, 90, 132, 0, &m) || m.shape_distance != -1) return 1;\n"
               "  const kbench_tuned *t = kbench_tuned_lookup(OP, \"bf16\", n, 1, 0, 0, KBENCH_TUNED_ALLOW_CPU, &m);\n"
               "  if (!t || !t->cpu_timing || t->sm != 0 || t->arch != 90 || m.shape_distance != 0) return 2;\n"
               "  const kbench_tuned *u = kbench_tuned_lookup(OP, \"bf16\", near, 1, 80, 108, KBENCH_TUNED_ALLOW_CPU, &m);\n"
               "  if (u != t || m.shape_distance < 0.2 || m.shape_distance > 0.23) return 3;\n"
               "  if (kbench_tuned_lookup(OP, \"bf16\", far, 1, 0, 0, KBENCH_TUNED_ALLOW_CPU, &m) || m.shape_distance != 63)\n"
               "    return 4;\n"
               "  if (kbench_tuned_lookup(\"gelu(form=tanh,ypad=-1)\", \"bf16\", n, 1, 0, 0, KBENCH_TUNED_ALLOW_CPU, &m)) return 5;\n"
               "  if (kbench_tuned_param_value(t, \"BLOCK\", -1) < 64) return 6;\n"
               "  printf(\"%%s %%s\\n\", t->problem, t->variant);\n  return 0;\n}\n");
    fclose(f);
    snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -I%s -o %s %s && %s > %s/use.out", dir, exe, src, exe,
             dir);
    CHECK(system(cmd) == 0);
}

/* A tune.db of schema 1 (before issue 20: params as JSON text, the emulator keyed sm_90):
 * export reads it migrated in memory and leaves the file as it was; its 20 params (schema
 * 1's export refused more than 17 keys, exit 2), its choice param by name and the emulator's
 * identity come out typed. */
static void test_export_schema_v1(void)
{
    char v1[300], hdr[300], path[300];
    snprintf(v1, sizeof v1, "%s/v1.db", dir);
    snprintf(hdr, sizeof hdr, "%s/v1.h", dir);
    snprintf(path, sizeof path, "%s/v1.json", dir);
    CHECK(tune_v1_write(v1, TUNE_V1_PROBLEM) == 0);
    char cmd[1000];
    snprintf(cmd, sizeof cmd, "cp '%s' '%s.orig'", v1, v1);
    CHECK(system(cmd) == 0);
    const char *h[] = { "kbench", "export", "--format", "header", "--db", v1, "--allow-cpu", "--out", hdr, NULL };
    int rc = run_kbench(h, log_path);
    char *log = slurp(log_path);
    CHECK_MSG(rc == 0 && log && strstr(log, "migrated from schema 1") && strstr(log, "the file is unchanged"),
              "exit %d: %s", rc, log ? log : "");
    free(log);
    char *text = slurp(hdr);
    CHECK(text && strstr(text, "20, { { \"algo\", 3LL, NULL }") && strstr(text, "{ \"search\", 1LL, \"enumerate\" }"));
    CHECK(text && strstr(text, "{ \"X15\", 115LL, NULL }") && strstr(text, "0, 0, 90, \"kbench emulator (sm_90)\""));
    free(text);
    const char *j[] = { "kbench", "export", "--db", v1, "--allow-cpu", "--out", path, NULL };
    CHECK(run_kbench(j, log_path) == 0);
    json_t *doc = json_load_file(path, 0, NULL);
    json_t *c = json_array_get(json_object_get(doc, "choices"), 0);
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(c, "params"), "search")), "enumerate"));
    CHECK(json_object_size(json_object_get(c, "params")) == 20 && json_is_null(json_object_get(json_object_get(c, "gpu"), "sm")));
    json_decref(doc);
    snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s.orig'", v1, v1);
    CHECK_MSG(system(cmd) == 0, "export changed %s", v1);   /* an input: read, never written */
}

/* Kernel Tuner's cache of one problem: its fields, entries keyed by the joined values. */
static void test_export_kerneltuner(void)
{
    char path[300];
    snprintf(path, sizeof path, "%s/kt.json", dir);
    const char *two[] = { "kbench", "export", "--format", "kerneltuner", "--db", db, "--allow-cpu", NULL };
    CHECK(run_kbench(two, log_path) == 2);   /* two problems match */
    const char *argv[] = { "kbench", "export", "--format", "kerneltuner", "--db", db, "--allow-cpu", "--problem",
                           "/bf16/", "--out", path, NULL };
    CHECK(run_kbench(argv, log_path) == 0);
    json_error_t e;
    json_t *doc = json_load_file(path, 0, &e);
    CHECK(doc != NULL);
    CHECK(strcmp(json_string_value(json_object_get(doc, "objective")), "time") == 0);
    json_t *keys = json_object_get(doc, "tune_params_keys"), *cache = json_object_get(doc, "cache");
    CHECK(json_array_size(keys) >= 1 && json_object_size(cache) >= 3);
    const char *k;
    json_t *entry;
    json_object_foreach(cache, k, entry) {
        json_t *t = json_object_get(entry, "time");
        CHECK(json_is_real(t) && json_real_value(t) > 0);   /* ms */
        char want[64] = "";
        size_t i;
        json_t *name;
        json_array_foreach(keys, i, name) {
            size_t len = strlen(want);
            snprintf(want + len, sizeof want - len, "%s%lld", i ? "," : "",
                     (long long)json_integer_value(json_object_get(entry, json_string_value(name))));
        }
        CHECK_MSG(strcmp(k, want) == 0, "key %s, values %s", k, want);
    }
    json_decref(doc);
}

/* A leader noisier than --max-noise is no winner: said on the console (exit 1), stored
 * as verdict noise, never exported as a choice. */
static void test_noise_verdict(void)
{
    char db4[300], path[300];
    snprintf(db4, sizeof db4, "%s/noise.db", dir);
    snprintf(path, sizeof path, "%s/noise.json", dir);
    const char *argv[] = { "kbench", "tune", suite, "--backend", "emu", "--db", db4, "--out", out, "--strategy",
                           "random", "--budget", "3", "--rounds", "0", "--max-noise", "1e-9", NULL };
    CHECK(run_kbench_within(argv, log_path, 120) == 1);
    char *log = slurp(log_path);
    CHECK(log && strstr(log, "no winner: noise") && strstr(log, "2 without a winner"));
    free(log);
    char sql[400];
    sqlite3 *h;
    sqlite3_stmt *s;
    int noise = -1;
    snprintf(sql, sizeof sql, "SELECT count(*) FROM tune_choices WHERE verdict = 'noise'");
    if (sqlite3_open(db4, &h) == SQLITE_OK && sqlite3_prepare_v2(h, sql, -1, &s, NULL) == SQLITE_OK) {
        if (sqlite3_step(s) == SQLITE_ROW)
            noise = sqlite3_column_int(s, 0);
        sqlite3_finalize(s);
    }
    sqlite3_close(h);
    CHECK_MSG(noise == 2, "%d choices with verdict noise", noise);
    const char *json[] = { "kbench", "export", "--db", db4, "--out", path, "--allow-cpu", NULL };
    CHECK(run_kbench(json, log_path) == 0);
    json_t *doc = json_load_file(path, 0, NULL), *c = json_array_get(json_object_get(doc, "choices"), 0);
    CHECK(c && strcmp(json_string_value(json_object_get(c, "confidence")), "noise") == 0);
    CHECK(c && json_is_null(json_object_get(c, "variant")) && json_is_string(json_object_get(c, "no_winner")));
    CHECK(c && json_is_null(json_object_get(c, "params")) && json_is_object(json_object_get(c, "leader_params")) &&
          json_is_string(json_object_get(c, "leader_variant")));
    json_decref(doc);
    const char *header[] = { "kbench", "export", "--format", "header", "--db", db4, "--out", path, "--allow-cpu", NULL };
    CHECK(run_kbench(header, log_path) != 0);
}

/* --time: each problem's search stops when its time is spent, and the choice is made
 * among what was evaluated. */
static void test_time_budget(void)
{
    char db3[300];
    snprintf(db3, sizeof db3, "%s/time.db", dir);
    const char *argv[] = { "kbench", "tune", suite, "--backend", "emu", "--db", db3, "--out", out, "--strategy",
                           "brute", "--time", "0.001", "--rounds", "0", "--max-noise", "1e12", NULL };
    CHECK(run_kbench_within(argv, log_path, 120) == 0);
    char *log = slurp(log_path);
    CHECK(log && strstr(log, "s spent: choosing among the 1 evaluated"));
    CHECK(log && strstr(log, "2 problems chosen"));
    free(log);
}

/* Static pruning on the cuda path: NVRTC compiles for sm_90, ptxas reports the spills of
 * an nn tf32 tile whose gathered A fragments do not fit (fp16, then fp8, stopped spilling
 * there with the swizzled tiles and fragment double buffering), and the configuration is
 * recorded pruned
 * before anything runs (against the fake driver: nothing could run for real). */
static void test_prune_on_cuda(void)
{
    const char *fake = getenv("KBENCH_FAKE_LIBCUDA");
    if (!fake || access(fake, R_OK) != 0) {
        printf("     (skipped: KBENCH_FAKE_LIBCUDA names no fake driver; run through ctest)\n");
        return;
    }
    char yaml[300], db4[300], out4[300];
    snprintf(yaml, sizeof yaml, "%s/spill.yaml", dir);
    snprintf(out4, sizeof out4, "%s/spill.jsonl", dir);
    snprintf(db4, sizeof db4, "%s/spill.db", dir);
    FILE *f = fopen(yaml, "w");
    fputs("suite: spill\nbenchmarks:\n  - family: gemm\n    variant: mma\n    dtype: tf32\n"
          "    shape: [{m: 16, n: 64, k: 64}]\n"
          "    params: {layout: nn, BM: 128, BN: 128, BK: 64, WM: 64, WN: 64, STAGES: 2}\n", f);
    fclose(f);
    setenv("KBENCH_LIBCUDA", fake, 1);
    const char *argv[] = { "kbench", "tune", yaml, "--backend", "cuda", "--arch", "sm_90", "--db", db4, "--out", out4,
                           "--rounds", "0", NULL };
    int rc = run_kbench_within(argv, log_path, 300);
    unsetenv("KBENCH_LIBCUDA");
    CHECK_MSG(rc == 1, "exit %d", rc);   /* the one configuration was pruned: no winner */
    char *log = slurp(log_path);
    CHECK(log && strstr(log, "pruned: spills registers"));
    CHECK(log && strstr(log, "1 pruned"));
    free(log);
}

/* SIGINT mid-tune: exit 130, what finished is in the database, a rerun reuses it. */
static void test_interrupt(void)
{
    char db2[300], log2[300];
    snprintf(db2, sizeof db2, "%s/int.db", dir);
    snprintf(log2, sizeof log2, "%s/log2.txt", dir);
    const char *argv[] = { "kbench", "tune", suite, "--backend", "emu", "--db", db2, "--out", out, "--strategy",
                           "brute", "--min-samples", "3000", "--max-samples", "3000", "--timeout", "30", NULL };
    pid_t pid = spawn_kbench(argv, log_path);
    for (int tenth = 0; tenth < 1200; tenth++) {   /* until the first configuration is measured (a loaded machine: not 5 s) */
        char *so_far = slurp(log_path);
        int first = so_far && strstr(so_far, "[  1/");
        free(so_far);
        if (first)
            break;
        usleep(100000);
    }
    kill(pid, SIGINT);
    CHECK(wait_exit(pid) == 130);
    char *log = slurp(log_path);
    CHECK(log && strstr(log, "interrupted"));
    int done = 0;
    const char *sum = log ? strstr(log, "kbench: tune: ") : NULL;
    CHECK(sum && sscanf(sum, "kbench: tune: %d measured", &done) == 1);
    CHECK_MSG(done >= 1 && done < 21, "%d measured before the interrupt", done);
    free(log);
    const char *again[] = { "kbench", "tune", suite, "--backend", "emu", "--db", db2, "--resume", out, "--strategy",
                            "brute", "--max-noise", "1e12", NULL };
    CHECK(run_kbench_within(again, log2, 120) == 0);
    log = slurp(log2);
    char want[64];
    snprintf(want, sizeof want, "%d measured, %d from the database", 21 - done, done);
    CHECK_MSG(log && strstr(log, want), "want '%s'", want);
    free(log);
}

/* The records of the tune replayed: one strategy (the fields) and all of them. */
static void test_replay_records(void)
{
    char res[300];
    snprintf(res, sizeof res, "%s/replay.json", dir);
    const char *one[] = { "kbench", "tune", "--replay", out, "--filter", "bf16", "--strategy", "ils", "--budget", "5",
                          "--format", "json", NULL };
    CHECK(run_kbench(one, res) == 0);
    char *text = slurp(res);
    json_t *j = text && strstr(text, "{") ? json_loads(strstr(text, "{"), JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    CHECK(j != NULL);
    CHECK(json_integer_value(json_object_get(j, "space")) == 12 && json_integer_value(json_object_get(j, "budget")) == 5);
    CHECK(json_integer_value(json_object_get(j, "evaluations")) == 5);
    CHECK(json_real_value(json_object_get(j, "best_time")) >= json_real_value(json_object_get(j, "optimum_time")));
    CHECK(json_integer_value(json_object_get(j, "best_found_at")) >= 1);
    const char *bc = json_string_value(json_object_get(j, "best_config"));
    CHECK(bc && strstr(bc, "variant="));
    json_decref(j);
    free(text);
    const char *all[] = { "kbench", "tune", "--replay", out, "--filter", "fp32", "--strategy", "all", "--repeats", "3",
                          "--format", "json", NULL };
    CHECK(run_kbench(all, res) == 0);
    text = slurp(res);
    j = text && strstr(text, "{") ? json_loads(strstr(text, "{"), JSON_DISABLE_EOF_CHECK, NULL) : NULL;
    json_t *sp = json_array_get(json_object_get(j, "spaces"), 0);
    CHECK(j && json_integer_value(json_object_get(sp, "space")) == 9);
    CHECK(j && json_array_size(json_object_get(j, "strategies")) == 8);
    json_decref(j);
    free(text);
    /* a missing file is bad input (exit 2), as is --out onto a replayed file */
    const char *missing[] = { "kbench", "tune", "--replay", "/nonexistent/kt.json", NULL };
    CHECK(run_kbench(missing, res) == 2);
    const char *onto[] = { "kbench", "tune", "--replay", out, "--strategy", "all", "--out", out, NULL };
    CHECK(run_kbench(onto, res) == 2);
    /* the performance curves as an SVG chart */
    char svg[300];
    snprintf(svg, sizeof svg, "%s/curves.svg", dir);
    const char *chart[] = { "kbench", "tune", "--replay", out, "--filter", "fp32", "--strategy", "all", "--budgets",
                            "20,50", "--repeats", "2", "--format", "svg", "--out", svg, NULL };
    CHECK(run_kbench(chart, res) == 0);
    text = slurp(svg);
    CHECK(text && strstr(text, "<svg") && strstr(text, "polyline") && strstr(text, "</svg>"));
    free(text);
    const char *neither[] = { "kbench", "tune", NULL };
    CHECK(run_kbench(neither, res) == 2);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    snprintf(suite, sizeof suite, "%s/tiny.yaml", dir);
    snprintf(db, sizeof db, "%s/tune.db", dir);
    snprintf(out, sizeof out, "%s/records.jsonl", dir);
    snprintf(log_path, sizeof log_path, "%s/log.txt", dir);
    FILE *f = fopen(suite, "w");
    fputs(suite_text, f);
    fclose(f);
    RUN(test_tune_and_resume);
    RUN(test_replay_records);
    RUN(test_export_json);
    RUN(test_export_header);
    RUN(test_export_kerneltuner);
    RUN(test_export_schema_v1);
    RUN(test_time_budget);
    RUN(test_noise_verdict);
    RUN(test_prune_on_cuda);
    RUN(test_interrupt);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (!check_failed_ && system(cmd) != 0)
        return 1;
    TEST_MAIN_END();
}
