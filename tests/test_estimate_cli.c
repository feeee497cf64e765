/* test_estimate_cli.c - `kbench estimate` end to end: text with ESTIMATE header lines and
 * aligned columns, one row per selected case with its limiting roof, pad 1's GEMM within
 * 0.8x of pad 0's; --format json that parses, csv; --top and --sort; the measured ceilings
 * of a store's device of the same SKU (--db); its command-line errors (exit 2); `kbench
 * compile`'s estimate columns agree with it and say what they are. Needs NVRTC, no GPU. */
#include "check.h"
#include "spawn.h"

#include <jansson.h>
#include <math.h>

/* s begins with lit */
static int starts(const char *s, const char *lit) { return strncmp(s, lit, strlen(lit)) == 0; }

#define LOG "build/test_estimate_cli.log"
#define GEMM_128 "gemm/mma(layout=nt,alpha=1,beta=0,BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=3)/bf16/2048x12288x4096/"

/* The estimate of the row whose id contains key, -1 when none. */
static double est_of(const char *out, const char *key, char *limit)
{
    const char *p = strstr(out, key);
    if (!p)
        return -1;
    char id[256];
    double us = -1;
    if (sscanf(p, "%255s %31s %lf", id, limit, &us) != 3)
        return -1;
    return us;
}

/* Text: ESTIMATE header lines, one table whose lines are all one width (columns aligned,
 * widths from the data), a row per selected case, the per-family summary; every line of
 * the output that is not a table line says ESTIMATE or estimate. */
static void test_rows(void)
{
    const char *argv[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h100-sxm", "--filter", GEMM_128, NULL };
    CHECK(run_kbench(argv, LOG) == 0);
    char *out = slurp(LOG);
    CHECK(out != NULL && starts(out, "ESTIMATE: static model, NOT a measurement"));
    if (!out)
        return;
    int rows = 0, in_table = 0;
    size_t width = 0;
    for (char *l = out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        char *end = strchr(l, '\n');
        size_t w = end ? (size_t)(end - l) : strlen(l);
        in_table = starts(l, "case ") || (in_table && starts(l, "gemm/"));
        if (in_table) {
            CHECK_MSG(!width || w == width, "table line %.60s... is %zu wide, the header %zu", l, w, width);
            width = width ? width : w;
            rows += starts(l, "gemm/");
        } else if (w > 0 && !starts(l, "family ") && !starts(l, "gemm ")) {
            CHECK_MSG(strstr(l, "ESTIMATE") || strstr(l, "estimate"), "a line without 'estimate': %.*s", (int)w, l);
        }
    }
    CHECK(rows == 2);   /* pad 0 and pad 1 */
    CHECK(strstr(out, "ESTIMATE per family") && strstr(out, "dominant limit"));
    char lim0[32] = "", lim1[32] = "";
    double us0 = est_of(out, GEMM_128 "pad0/eager", lim0), us1 = est_of(out, GEMM_128 "pad1/eager", lim1);
    /* pad 1's register-staged mainloop: within 0.8x of pad 0 (it was 54x slower) */
    CHECK(us0 > 0 && us1 > 0 && us0 / us1 >= 0.8);
    CHECK(strcmp(lim0, "l2") == 0 && lim1[0] != 0);
    free(out);
}

/* --format json parses (jansson), says "estimate": true at the top, in every row and every
 * summary entry, and gives the text's figures; --format csv: ESTIMATE on every row. */
static void test_json_csv(void)
{
    const char *argv[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h100-sxm", "--filter", GEMM_128,
                           "--format", "json", NULL };
    CHECK(run_kbench(argv, LOG) == 0);
    char *out = slurp(LOG);
    json_error_t e;
    /* stdout's one JSON document, then stderr's summary line (the log holds both) */
    json_t *j = out ? json_loads(out, JSON_DISABLE_EOF_CHECK, &e) : NULL;
    CHECK_MSG(j != NULL, "%s", out ? e.text : "no output");
    CHECK_MSG(out && j && starts(out + e.position, "\nkbench estimate: h100-sxm"), "after the JSON: %.40s",
              out ? out + e.position : "");
    CHECK(json_is_true(json_object_get(j, "estimate")) && json_array_size(json_object_get(j, "rows")) == 2);
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(j, "rows"), i, v) {
        CHECK(json_is_true(json_object_get(v, "estimate")) && json_number_value(json_object_get(v, "est_us")) > 0);
        CHECK(json_integer_value(json_object_get(json_object_get(v, "dims"), "m")) == 2048);
    }
    json_array_foreach(json_object_get(j, "summary"), i, v) CHECK(json_is_true(json_object_get(v, "estimate")));
    json_decref(j);
    free(out);
    const char *csv[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "a100-sxm", "--filter", GEMM_128,
                          "--format", "csv", NULL };
    CHECK(run_kbench(csv, LOG) == 0);
    out = slurp(LOG);
    CHECK(out && starts(out, "estimate,gpu,case_id"));
    char *row = out ? strchr(out, '\n') + 1 : NULL;
    CHECK(row && starts(row, "ESTIMATE,a100-sxm,\"gemm/mma(layout=nt,alpha=1,"));
    free(out);
}

/* --top N: the N slowest estimated cases, slowest first; --sort roof: lowest %roof first. */
static void test_top(void)
{
    const char *argv[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h100-sxm", "--filter", "gemm/mma(",
                           "--filter", "2048x12288x4096/pad0", "--top", "3", "--format", "json", NULL };
    CHECK(run_kbench(argv, LOG) == 0);
    char *out = slurp(LOG);
    json_error_t e;
    json_t *j = out ? json_loads(out, JSON_DISABLE_EOF_CHECK, &e) : NULL, *list = json_object_get(j, "rows");
    CHECK(json_array_size(list) == 3 && !strcmp(json_string_value(json_object_get(j, "sort")), "plan"));
    double a = json_number_value(json_object_get(json_array_get(list, 0), "est_us"));
    double b = json_number_value(json_object_get(json_array_get(list, 1), "est_us"));
    double c = json_number_value(json_object_get(json_array_get(list, 2), "est_us"));
    CHECK(a >= b && b >= c && c > 0);
    json_decref(j);
    free(out);
    const char *roof[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h100-sxm", "--filter", "gemm/mma(",
                           "--top", "2", "--sort", "roof", NULL };
    CHECK(run_kbench(roof, LOG) == 0);
    out = slurp(LOG);
    CHECK(out && strstr(out, "ESTIMATE: the 2 furthest from their roofline"));
    free(out);
}

/* kbench compile --arch sm_90: the same estimate as kbench estimate --gpu h100-sxm (the
 * arch's reference GPU), under a header that says ESTIMATE; sm_86 has no reference GPU. */
static void test_compile_columns(void)
{
    const char *est[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h100-sxm", "--filter", GEMM_128 "pad0", NULL };
    CHECK(run_kbench(est, LOG) == 0);
    char *out = slurp(LOG), lim[32] = "";
    double want = out ? est_of(out, GEMM_128 "pad0/eager", lim) : -1;
    free(out);
    const char *cmp[] = { "kbench", "compile", "suites/llm.yaml", "--arch", "sm_90", "--filter", GEMM_128 "pad0", NULL };
    CHECK(run_kbench(cmp, LOG) == 0);
    out = slurp(LOG);
    CHECK(out && strstr(out, "ESTIMATE on h100-sxm") && strstr(out, "estimate_us"));
    const char *row = out ? strstr(out, GEMM_128 "pad0/eager") : NULL;
    char id[256], status[32], climit[32] = "";
    int regs, st, ld, stack, smem;
    double got = -1;
    CHECK(row && sscanf(row, "%255s %31s %d %d %d %d %d %lf %31s", id, status, &regs, &st, &ld, &stack, &smem, &got,
                        climit) == 9);
    CHECK_MSG(want > 0 && fabs(got - want) < 0.01 && strcmp(lim, climit) == 0, "compile %.2f %s, estimate %.2f %s",
              got, climit, want, lim);
    free(out);
    const char *sm86[] = { "kbench", "compile", "suites/llm.yaml", "--arch", "sm_86", "--filter", GEMM_128 "pad0", NULL };
    CHECK(run_kbench(sm86, LOG) == 0);
    out = slurp(LOG);
    CHECK(out && strstr(out, "no reference GPU") && !strstr(out, "ESTIMATE on"));
    free(out);
}

/* --db: a store holding a ceilings run of an "NVIDIA H100 80GB HBM3" (an H100 SXM5 by
 * data/peaks.json) gives h100-sxm its measured copy bandwidth and launch cost, and the
 * header says which device and when; without one the header says assumed. The record is a
 * synthetic test input imported with `kbench query --import`, not a measurement. */
static void test_store_ceilings(void)
{
    char dir[] = "/tmp/kb_test_estimate_cli_XXXXXX", jl[128], db[128];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(jl, sizeof jl, "%s/ceil.jsonl", dir);
    snprintf(db, sizeof db, "%s/kbench.db", dir);
    FILE *f = fopen(jl, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("{\"schema_version\":1,\"run_id\":\"ceil-1\",\"time\":\"2026-02-01T00:00:00Z\","
          "\"case_id\":\"ceiling/copy()/fp32/x\",\"family\":\"ceiling\",\"variant\":\"copy\",\"dtype\":\"fp32\","
          "\"params\":{},\"device\":{\"name\":"
          "\"NVIDIA H100 80GB HBM3\",\"uuid\":\"GPU-test\",\"pci_bus_id\":\"\",\"sm\":90,\"emulator\":false},\"status\""
          ":\"ok\",\"timing\":{\"clock\":\"gpu\",\"median_us\":100},\"derived\":{\"tflops\":0,\"gbps\":2800,\"ai\":0,"
          "\"pct_roof\":0}}\n", f);
    fclose(f);
    const char *imp[] = { "kbench", "query", "--import", jl, "--db", db, "SELECT count(*) FROM ceilings", NULL };
    CHECK(run_kbench(imp, LOG) == 0);
    const char *argv[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h100-sxm", "--filter", GEMM_128,
                           "--db", db, NULL };
    CHECK(run_kbench(argv, LOG) == 0);
    char *out = slurp(LOG);
    CHECK_MSG(out && strstr(out, "DRAM 2800 GB/s achievable (measured ceiling") &&
              strstr(out, "ESTIMATE: ceilings measured on NVIDIA H100 80GB HBM3 GPU-test") && strstr(out, "ceil-1"),
              "%.600s", out ? out : "");
    free(out);
    const char *other[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "a100-sxm", "--filter", GEMM_128,
                            "--db", db, NULL };
    CHECK(run_kbench(other, LOG) == 0);
    out = slurp(LOG);
    CHECK(out && strstr(out, "(datasheet x 0.866 (assumed)") && !strstr(out, "ceilings measured"));
    free(out);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

static void test_errors(void)
{
    const char *no_gpu[] = { "kbench", "estimate", "suites/llm.yaml", NULL };
    CHECK(run_kbench(no_gpu, LOG) == 2);
    char *out = slurp(LOG);
    CHECK(out && strstr(out, "--gpu") != NULL);
    free(out);
    const char *bad_gpu[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h900", NULL };
    CHECK(run_kbench(bad_gpu, LOG) == 2);
    const char *bad_filter[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "a100-sxm", "--filter", "zzz", NULL };
    CHECK(run_kbench(bad_filter, LOG) == 2);
    const char *no_suite[] = { "kbench", "estimate", "no/such.yaml", "--gpu", "a100-sxm", NULL };
    CHECK(run_kbench(no_suite, LOG) == 2);
}

int main(void)
{
    RUN(test_rows);
    RUN(test_json_csv);
    RUN(test_top);
    RUN(test_store_ceilings);
    RUN(test_compile_columns);
    RUN(test_errors);
    TEST_MAIN_END();
}
