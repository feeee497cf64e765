/* test_model_cli.c - `kbench model` end to end: tests/suites/model_tiny.yaml run on the
 * emulator, then rolled up with tests/data/model_tiny.yaml as markdown, JSON (read back
 * with jansson) and HTML: the ops the run has are found with their CPU times, labelled
 * "emulator (CPU timing)", without MFU; the others listed as missing; bad command lines
 * and a broken model description exit 2 naming the option or file:line:col, and --out
 * leaves no file behind on error; --estimate --gpu: the static model's what-if on a suite
 * (llama-7b-like complete from suites/llm.yaml), labelled ESTIMATE, an emulator run's CPU
 * times never used beside it; a toy decoder's decode step and decode_points with no op missing
 * (tests/suites/model_decode_tiny.yaml). */
#include "check.h"
#include "spawn.h"

#include <jansson.h>
#include <math.h>

static char dir[64];
static char run_path[128], out_path[128], log_path[128], trace_path[128];

static int kb(const char *const *argv) { return run_kbench_within(argv, log_path, 300); }

static void test_run_then_model_json(void)
{
    char store[160];
    snprintf(store, sizeof store, "%s/kbench.db", dir);
    const char *run[] = { "kbench", "run", "tests/suites/model_tiny.yaml", "--backend", "emu", "--out", run_path,
                          "--db", store, "--trace", trace_path, NULL };
    int rc = kb(run);
    CHECK_MSG(rc == 0, "kbench run exit %d", rc);
    if (rc != 0) { print_tail(log_path, 2000); return; }
    /* the console table: time, TFLOPS, GB/s and AI beside verification, within 160 columns;
     * no %roof on the emulator, which has no GPU roofline */
    char *con = slurp(log_path);
    CHECK(con && strstr(con, "cpu_TFLOPS") && strstr(con, "cpu_GB/s") && strstr(con, " AI ") && !strstr(con, "%roof"));
    for (char *line = con; line && *line;) {
        char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        CHECK_MSG(len <= 160, "%zu columns: %.*s", len, (int)len, line);
        line = end ? end + 1 : NULL;
    }
    free(con);
    const char *model[] = { "kbench", "model", run_path, "--model", "tests/data/model_tiny.yaml", "--format", "json",
                            "--out", out_path, NULL };
    CHECK((rc = kb(model)) == 0);
    json_error_t e;
    json_t *j = json_load_file(out_path, 0, &e);
    CHECK_MSG(j != NULL, "%s", e.text);
    if (!j) return;
    CHECK(json_is_true(json_object_get(j, "emulator")));
    CHECK(!strcmp(json_string_value(json_object_get(j, "timing")), "emulator (CPU timing)"));
    json_t *pre = json_object_get(json_object_get(j, "phases"), "prefill");
    CHECK(json_is_null(json_object_get(pre, "mfu_pct")));
    CHECK(json_integer_value(json_object_get(pre, "n_missing")) == 3);
    json_t *ops = json_object_get(pre, "ops");
    double sum = 0;
    for (size_t i = 0; i < json_array_size(ops); i++) {
        json_t *op = json_array_get(ops, i);
        const char *name = json_string_value(json_object_get(op, "op"));
        int found = json_is_string(json_object_get(op, "case_id"));
        CHECK_MSG(found == (!strcmp(name, "norm") || !strcmp(name, "qkv")), "%s", name);
        if (found) {
            CHECK(!strcmp(json_string_value(json_object_get(op, "clock")), "cpu"));
            CHECK(json_number_value(json_object_get(op, "time_us")) > 0);
            sum += json_number_value(json_object_get(op, "step_us"));
        } else {
            CHECK(strstr(json_string_value(json_object_get(op, "missing")), "in the run") != NULL);
        }
    }
    /* the step is the found ops' parts: 2 layers x (norm + qkv), no per-model op found */
    double step = json_number_value(json_object_get(pre, "step_us"));
    CHECK(fabs(step - sum) < 1e-9 * sum);
    /* the same run by its id from the results store it was added to (no .jsonl to find it in) */
    char run_id[128], db[160], none[160];
    snprintf(run_id, sizeof run_id, "%s", json_string_value(json_object_get(j, "run_id")));
    snprintf(db, sizeof db, "%s/kbench.db", dir);
    snprintf(none, sizeof none, "%s/no-results", dir);
    json_decref(j);
    const char *by_id[] = { "kbench", "model", run_id, "-m", "tests/data/model_tiny.yaml", "-f", "json", "--results",
                            none, "--db", db, "-o", out_path, NULL };
    CHECK(kb(by_id) == 0);
    j = json_load_file(out_path, 0, &e);
    pre = json_object_get(json_object_get(j, "phases"), "prefill");
    CHECK(j && fabs(json_number_value(json_object_get(pre, "step_us")) - step) < 1e-9 * step);
    json_decref(j);
    const char *unknown[] = { "kbench", "model", "no-such-run-id", "-m", "tests/data/model_tiny.yaml", "--results",
                              none, "--db", db, NULL };
    CHECK(kb(unknown) == 2);
}

static void test_model_md_html(void)
{
    const char *md[] = { "kbench", "model", run_path, "-m", "tests/data/model_tiny.yaml", NULL };
    CHECK(kb(md) == 0);
    char *s = slurp(log_path);
    CHECK(s && strstr(s, "emulator (CPU timing)") && strstr(s, "missing **lm_head**: no gemm case of m=1 n=100 k=64"));
    free(s);
    const char *html[] = { "kbench", "model", run_path, "-m", "tests/data/model_tiny.yaml", "-f", "html", "-o",
                           out_path, NULL };
    CHECK(kb(html) == 0);
    s = slurp(out_path);
    CHECK(s && strstr(s, "<svg") && strstr(s, "</html>"));
    free(s);
    /* --with-report: the run's report page with the roll-up as its last section */
    const char *both[] = { "kbench", "model", run_path, "-m", "tests/data/model_tiny.yaml", "-f", "html",
                           "--with-report", "-o", out_path, NULL };
    CHECK(kb(both) == 0);
    s = slurp(out_path);
    char *model = s ? strstr(s, "<h1 id=\"model\">") : NULL;
    CHECK(model && strstr(s, "data-chart=\"margin\"") < model && strstr(model, "data-chart=\"model-prefill\""));
    CHECK(s && strstr(s, "kbench report: ") < model && strstr(model, "</body>"));
    free(s);
    const char *md_both[] = { "kbench", "model", run_path, "-m", "tests/data/model_tiny.yaml", "--with-report", NULL };
    CHECK(kb(md_both) == 2);
}

/* Named events of phase ph ("X" or "i") in a trace's event array. */
static int count(json_t *events, const char *ph, const char *name)
{
    size_t i;
    json_t *e;
    int n = 0;
    json_array_foreach(events, i, e)
        n += !strcmp(json_string_value(json_object_get(e, "ph")), ph) &&
             !strncmp(json_string_value(json_object_get(e, "name")), name, strlen(name));
    return n;
}

static void test_traces(void)
{
    json_error_t e;
    json_t *t = json_load_file(trace_path, 0, &e);   /* run --trace: the JSON Array Format */
    CHECK_MSG(json_is_array(t), "%s", e.text);
    CHECK(count(t, "X", "gemm/naive(layout=nt") == 1 && count(t, "X", "layernorm/block(") == 1);
    CHECK(count(t, "X", "measure") == 2 && count(t, "X", "sample ") >= 2);
    json_decref(t);
    const char *rep[] = { "kbench", "report", run_path, "--format", "trace", "--out", out_path, NULL };
    CHECK(kb(rep) == 0);
    t = json_load_file(out_path, 0, &e);
    CHECK_MSG(t != NULL, "%s", e.text);
    CHECK(count(json_object_get(t, "traceEvents"), "X", "compile") == 2);
    json_decref(t);
    const char *mod[] = { "kbench", "model", run_path, "-m", "tests/data/model_tiny.yaml", "-f", "trace", "-o",
                          out_path, NULL };
    CHECK(kb(mod) == 0);
    t = json_load_file(out_path, 0, &e);
    json_t *ev = json_object_get(t, "traceEvents");
    /* prefill: 2 layers of norm + qkv found; attention and ffn_up missing in each, lm_head once */
    CHECK(count(ev, "X", "layer ") == 4 && count(ev, "X", "qkv") == 2 && count(ev, "X", "norm") == 2);
    CHECK(count(ev, "i", "missing: ") == 2 * 2 + 1 + 2 * 3 + 1);
    json_decref(t);
}

/* JSON of a model roll-up written to out_path, NULL when it does not parse. */
static json_t *load_out(void)
{
    json_error_t e;
    json_t *j = json_load_file(out_path, 0, &e);
    CHECK_MSG(j != NULL, "%s", e.text);
    return j;
}

/* --estimate on the tiny suite: the two ops it has a case of estimated on h100-sxm (the
 * others missing, never extrapolated), every figure labelled ESTIMATE; the emulator run's
 * CPU times never used beside estimates, even when the run is given. */
static void test_estimate_tiny(void)
{
    const char *suite[] = { "kbench", "model", "tests/suites/model_tiny.yaml", "--estimate", "--gpu", "h100-sxm",
                            "-m", "tests/data/model_tiny.yaml", "-f", "json", "-o", out_path, NULL };
    CHECK(kb(suite) == 0);
    json_t *j = load_out(), *pre = json_object_get(json_object_get(j, "phases"), "prefill");
    CHECK(json_is_true(json_object_get(j, "estimate")) &&
          !strcmp(json_string_value(json_object_get(j, "timing")), "ESTIMATE (static model, not measured)"));
    CHECK(json_integer_value(json_object_get(pre, "n_missing")) == 3 &&
          json_number_value(json_object_get(j, "peak_tflops")) > 989);
    size_t i;
    json_t *op;
    json_array_foreach(json_object_get(pre, "ops"), i, op) {
        const char *src = json_string_value(json_object_get(op, "source"));
        CHECK(src ? !strcmp(src, "estimate") && !strcmp(json_string_value(json_object_get(op, "clock")), "estimate")
                  : strstr(json_string_value(json_object_get(op, "missing")), "among the suite's estimates") != NULL);
    }
    json_decref(j);
    /* the emulator run: its suite named, its CPU times not used */
    const char *emu[] = { "kbench", "model", run_path, "--estimate", "--gpu", "a100-sxm", "--suite",
                          "tests/suites/model_tiny.yaml", "-m", "tests/data/model_tiny.yaml", "-f", "json", "-o",
                          out_path, NULL };
    CHECK(kb(emu) == 0);
    j = load_out();
    CHECK(j && json_is_false(json_object_get(j, "emulator")) &&
          strstr(json_string_value(json_object_get(j, "run_not_used")), "CPU timings") &&
          !strcmp(json_string_value(json_object_get(j, "timing")), "ESTIMATE (static model, not measured)"));
    json_decref(j);
    const char *md[] = { "kbench", "model", "tests/suites/model_tiny.yaml", "--estimate", "--gpu", "h100-sxm", "-m",
                         "tests/data/model_tiny.yaml", NULL };
    CHECK(kb(md) == 0);
    char *s = slurp(log_path);
    CHECK(s && strstr(s, "# Model roll-up: tiny (ESTIMATE)") && strstr(s, "(estimate)") && !strstr(s, "(gpu)"));
    free(s);
    /* the run names suite model_tiny, which is no suites/model_tiny.yaml: --suite is asked for */
    const char *nosuite[] = { "kbench", "model", run_path, "--estimate", "--gpu", "h100-sxm", "-m",
                              "tests/data/model_tiny.yaml", NULL };
    CHECK(kb(nosuite) == 2);
    s = slurp(log_path);
    CHECK(s && strstr(s, "--suite FILE"));
    free(s);
}

/* The README's what-if: kbench model suites/llm.yaml --estimate --gpu h100-sxm --model
 * llama-7b-like - a complete roll-up: every op estimated at both phases (decode attention on
 * attention/decode), tokens/s and MFU given. Compiles the sm_90 modules of
 * the llama shapes into the test cache on its first run (minutes on 2 cores). */
static void test_estimate_llama(void)
{
    const char *argv[] = { "kbench", "model", "suites/llm.yaml", "--estimate", "--gpu", "h100-sxm", "--model",
                           "llama-7b-like", "-f", "json", "-o", out_path, NULL };
    int rc = run_kbench_within(argv, log_path, 1800);
    CHECK_MSG(rc == 0, "exit %d", rc);
    json_t *j = load_out();
    for (int ph = 0; j && ph < 2; ph++) {
        json_t *P = json_object_get(json_object_get(j, "phases"), ph ? "decode" : "prefill"), *op;
        size_t i;
        CHECK(json_integer_value(json_object_get(P, "n_missing")) == 0);
        CHECK(json_number_value(json_object_get(P, "tokens_per_s")) > 0 &&
              json_number_value(json_object_get(P, "mfu_pct")) > 0);
        CHECK(json_is_string(json_object_get(P, "optimise_first")));
        json_array_foreach(json_object_get(P, "ops"), i, op) CHECK(json_is_true(json_object_get(op, "estimate")));
        /* 12 ops each phase: prefill's square attention, decode's decode_attention; the
         * other one is "not modelled" in each phase (it does not run there) */
        CHECK(json_array_size(json_object_get(P, "ops")) == 12u);
        CHECK(json_array_size(json_object_get(P, "not_modelled")) == 1u);
    }
    json_decref(j);
}

/* The number of times needle occurs in hay. */
static int occurrences(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *at = hay; at && (at = strstr(at, needle)); at += strlen(needle)) n++;
    return n;
}

/* Issue 22's "kbench model on a run with these rows lists no missing op at decode": an emulator
 * run of a toy decoder's every decode row (tests/suites/model_decode_tiny.yaml: 12 cases at the
 * sizes of tests/data/model_decode_tiny.yaml), rolled up at decode and at each of its 4
 * decode_points (24 and 40 cached keys x 1 and 8 new rows per sequence): no op missing, every
 * point's missing column 0, the decode attention on the decode variant with "no cudnn row"
 * beside it; JSON agrees; a decode_points typo exits 2 naming file:line:col. */
static void test_decode_points(void)
{
    char run[160], store[160];
    snprintf(run, sizeof run, "%s/decode.jsonl", dir);
    snprintf(store, sizeof store, "%s/kbench.db", dir);
    const char *r[] = { "kbench", "run", "tests/suites/model_decode_tiny.yaml", "--backend", "emu", "--out", run,
                        "--db", store, "-q", NULL };
    int rc = kb(r);
    CHECK_MSG(rc == 0, "kbench run exit %d", rc);
    if (rc != 0) { print_tail(log_path, 2000); return; }
    const char *md[] = { "kbench", "model", run, "-m", "tests/data/model_decode_tiny.yaml", NULL };
    CHECK(kb(md) == 0);
    char *s = slurp(log_path);
    char *dec = s ? strstr(s, "## decode: 2 tokens per step") : NULL, *pts = dec ? strstr(dec, "## decode at ") : NULL;
    char *end = pts ? strstr(pts, "## Precision what-if") : NULL;
    CHECK_MSG(dec && pts && end, "%s", s ? s : "");
    if (dec && pts && end) {
        *pts = *end = 0;
        CHECK_MSG(!strstr(dec, "missing") && !strstr(dec, "Lower bounds") && strstr(dec, " tokens/s;"), "%s", dec);
        CHECK(strstr(dec, "| attention/decode(causal=yes,q_len=1,group=2,") && strstr(dec, "| no cudnn row |"));
        CHECK_MSG(occurrences(pts + 1, " | 0 | ") == 4 && !strstr(pts + 1, "missing **") &&
                  !strstr(pts + 1, ">= "), "%s", pts + 1);
        CHECK(strstr(pts + 1, "| seq=40 new_tokens=8 | 16.00 |"));
    }
    free(s);
    const char *js[] = { "kbench", "model", run, "-m", "tests/data/model_decode_tiny.yaml", "-f", "json", "-o",
                         out_path, NULL };
    CHECK(kb(js) == 0);
    json_t *j = load_out(), *p;
    size_t i;
    CHECK(j && json_integer_value(json_object_get(json_object_get(json_object_get(j, "phases"), "decode"),
                                                  "n_missing")) == 0);
    CHECK(json_array_size(json_object_get(j, "decode_points")) == 4);
    json_array_foreach(json_object_get(j, "decode_points"), i, p)
        CHECK(json_integer_value(json_object_get(json_object_get(p, "decode"), "n_missing")) == 0);
    json_decref(j);
    char bad[160];
    snprintf(bad, sizeof bad, "%s/bad_points.yaml", dir);
    FILE *f = fopen(bad, "w");
    fputs("model: x\nparams: {layers: 1, seq: 4}\nphases: {prefill: {tokens: 1, seqs: 1, q_len: 1, kv_len: 1},\n"
          "  decode: {tokens: 1, seqs: 1, q_len: 1, kv_len: seq}}\ndecode_points: {sq: [1, 2]}\n"
          "ops:\n  - {op: a, family: gelu, dims: {n: 4}}\n", f);
    fclose(f);
    const char *b[] = { "kbench", "model", run, "-m", bad, NULL };
    CHECK(kb(b) == 2);
    s = slurp(log_path);
    CHECK_MSG(s && strstr(s, "bad_points.yaml:5:17: decode_points: 'sq' is not a param"), "%s", s ? s : "");
    free(s);
}

static void test_errors(void)
{
    char bad[160];
    snprintf(bad, sizeof bad, "%s/bad.yaml", dir);
    FILE *f = fopen(bad, "w");
    fputs("model: x\nparams: {layers: 1}\nphases: {prefill: {tokens: 1, seqs: 1, q_len: 1, kv_len: 1},\n"
          "  decode: {tokens: 1, seqs: 1, q_len: 1, kv_len: 1}}\nops:\n  - {op: a, family: gemm, dims: {m: 1}}\n", f);
    fclose(f);
    unlink(out_path);
    const char *a[] = { "kbench", "model", run_path, "--model", bad, "--out", out_path, NULL };
    CHECK(kb(a) == 2);
    char *s = slurp(log_path);
    CHECK_MSG(s && strstr(s, "bad.yaml:6:33: dims lack 'n'"), "%s", s ? s : "");
    free(s);
    CHECK(access(out_path, F_OK) != 0);
    const char *b[] = { "kbench", "model", run_path, NULL };
    CHECK(kb(b) == 2);
    const char *c[] = { "kbench", "model", run_path, "--model", "no-such-model", NULL };
    CHECK(kb(c) == 2);
    const char *d[] = { "kbench", "model", "no-such-run", "--model", "llama-7b-like", NULL };
    CHECK(kb(d) == 2);
    const char *e[] = { "kbench", "model", run_path, "--model", "llama-7b-like", "--set", "hiden=3", NULL };
    CHECK(kb(e) == 2);
    const char *g[] = { "kbench", "model", run_path, "--model", "llama-7b-like", "--format", "pdf", NULL };
    CHECK(kb(g) == 2);
    const char *h[] = { "kbench", "model", run_path, "--model", "llama-7b-like", "--estimate", NULL };   /* no --gpu */
    CHECK(kb(h) == 2);
    const char *i[] = { "kbench", "model", run_path, "--model", "llama-7b-like", "--gpu", "h100-sxm", NULL };
    CHECK(kb(i) == 2);   /* --gpu without --estimate */
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb-model-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(run_path, sizeof run_path, "%s/run.jsonl", dir);
    snprintf(out_path, sizeof out_path, "%s/out", dir);
    snprintf(log_path, sizeof log_path, "%s/log", dir);
    snprintf(trace_path, sizeof trace_path, "%s/trace.json", dir);
    RUN(test_run_then_model_json);
    RUN(test_model_md_html);
    RUN(test_traces);
    RUN(test_estimate_tiny);
    RUN(test_estimate_llama);
    RUN(test_decode_points);
    RUN(test_errors);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
