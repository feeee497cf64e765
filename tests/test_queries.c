/* test_queries.c - every ```sql block of docs/queries.md, run by the kbench binary
 * (`kbench query --json`) against a store built from the fixture runs of tests/data
 * (two GPU runs A and B of the same cases, one emulator run): each exits 0 and returns
 * the expected columns and rows (values checked by hand against the fixture records).
 * Every block is named by its first line "-- query: NAME"; a block the test does not
 * know, or a known name missing from the doc, fails. */
#include "check.h"
#include "spawn.h"
#include "core/fsutil.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC "docs/queries.md"
#define GEMM(v, dt) "gemm/" v "/" dt "/4096x4096x4096/pad0/eager"

static char dir[] = "/tmp/kb_queries_XXXXXX";
static char db[256], out_path[256];

static const char *str(json_t *row, const char *k) { return json_string_value(json_object_get(row, k)); }
static double num(json_t *row, const char *k) { return json_number_value(json_object_get(row, k)); }

/* The first row whose key k is v. */
static json_t *find(json_t *rows, const char *k, const char *v)
{
    for (size_t i = 0; i < json_array_size(rows); i++)
        if (str(json_array_get(rows, i), k) && strcmp(str(json_array_get(rows, i), k), v) == 0)
            return json_array_get(rows, i);
    return NULL;
}

static void check_slowest(json_t *rows)
{
    CHECK(json_array_size(rows) == 5 + 10 + 10);        /* emu: 5 ok cases; A, B: 13 ok each, top 10 */
    json_t *r = find(rows, "run_id", "test-gpu-a-20260102T000000Z-1");   /* A's slowest first */
    CHECK(r && strcmp(str(r, "case_id"), "gemm/naive/fp16/4096x4096x4096/pad0/eager") == 0);
    CHECK(r && num(r, "median_us") == 5193.5621 && strcmp(str(r, "clock"), "gpu") == 0);
    r = find(rows, "run_id", "test-emu-20260101T000000Z-1");
    CHECK(r && strcmp(str(r, "clock"), "cpu") == 0 && json_is_null(json_object_get(r, "pct_roof")));
}

static void check_best(json_t *rows)
{
    CHECK(json_array_size(rows) == 27);
    int seen = 0;
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *r = json_array_get(rows, i);
        if (strcmp(str(r, "run_id"), "test-gpu-b-20260103T000000Z-1") || strcmp(str(r, "family"), "gemm") ||
            strcmp(str(r, "dtype"), "fp16"))
            continue;
        seen++;   /* naive 5206, wmma BN=128 190.9, wmma BN=256 184.3: the last wins */
        CHECK(json_integer_value(json_object_get(r, "tried")) == 3 && num(r, "median_us") == 184.2871);
        CHECK(strcmp(str(r, "params"), "{\"BM\":128,\"BN\":256,\"BK\":32}") == 0);
    }
    CHECK(seen == 1);
}

static void check_precision(json_t *rows)
{
    CHECK(json_array_size(rows) == 15);   /* A: 6 gemm dtypes + gelu bf16; B: 6; emu: 2 */
    for (size_t i = 0; i < json_array_size(rows); i++) {
        json_t *r = json_array_get(rows, i);
        CHECK(fabs(num(r, "speedup_vs_fp32") - num(r, "fp32_us") / num(r, "median_us")) < 1e-3);
        if (strcmp(str(r, "run_id"), "test-gpu-a-20260102T000000Z-1") == 0 && strcmp(str(r, "dtype"), "fp16") == 0)
            CHECK(num(r, "fp32_us") == 2598.3839 && num(r, "speedup_vs_fp32") == 13.612);
    }
}

static void check_before_after(json_t *rows)
{
    CHECK(json_array_size(rows) == 12);   /* the 12 cases ok with timing in both A and B */
    json_t *first = json_array_get(rows, 0), *last = json_array_get(rows, 11);
    CHECK(first && strcmp(str(first, "case_id"), GEMM("wmma(BM=128,BN=128,BK=32)", "bf16")) == 0);
    CHECK(first && num(first, "a_us") == 193.3618 && num(first, "b_us") == 211.8276 && num(first, "ratio") == 1.0955);
    CHECK(last && strcmp(str(last, "case_id"), GEMM("wmma(BM=128,BN=128,BK=32)", "int8")) == 0 &&
          num(last, "change_pct") == -10.35);
}

static void check_failed(json_t *rows)
{
    CHECK(json_array_size(rows) == 3);    /* one wrong case in each run */
    for (size_t i = 0; i < json_array_size(rows); i++)
        CHECK(num(json_array_get(rows, i), "n_bad") > 0);
    json_t *r = find(rows, "run_id", "test-gpu-a-20260102T000000Z-1");
    CHECK(r && json_integer_value(json_object_get(r, "n_bad")) == 37 && strcmp(str(r, "device"), "TEST-GPU") == 0);
}

static void check_not_ok(json_t *rows)
{
    CHECK(json_array_size(rows) == 14);
    json_int_t total = 0;
    for (size_t i = 0; i < json_array_size(rows); i++)
        total += json_integer_value(json_object_get(json_array_get(rows, i), "cases"));
    CHECK(total == 6 + 6 + 2);
}

typedef struct {
    const char *name;
    const char *columns;          /* in order, comma-separated */
    void (*check)(json_t *rows);
    int seen;
} expected;

static expected queries[] = {
    { "slowest", "run_id,case_id,clock,median_us,tflops,gbps,pct_roof", check_slowest, 0 },
    { "best-per-shape", "run_id,device,family,dtype,dims,variant,params,median_us,tflops,tried", check_best, 0 },
    { "precision-speedups", "run_id,family,dims,dtype,clock,fp32_us,median_us,speedup_vs_fp32", check_precision, 0 },
    { "before-after", "case_id,a_status,b_status,a_us,b_us,ratio,change_pct", check_before_after, 0 },
    { "failed-verification", "run_id,case_id,device,n_bad,n_checked,max_abs_err,max_rel_err,atol,rtol,reason",
      check_failed, 0 },
    { "not-ok-by-status", "run_id,status,cases", check_not_ok, 0 },
};
#define N_QUERIES (sizeof queries / sizeof queries[0])

static int build_store(void)
{
    const char *argv[] = { "kbench", "query", "--db", db, "--import", "tests/data/run_gpu.jsonl", "--import",
                           "tests/data/run_gpu_b.jsonl", "--import", "tests/data/run_emu.jsonl", NULL };
    int rc = run_kbench(argv, out_path);
    CHECK_MSG(rc == 0, "kbench query --import exited %d", rc);
    return rc == 0;
}

/* Run one block; its rows as JSON (NULL on failure). */
static json_t *run_query(const char *sql)
{
    const char *argv[] = { "kbench", "query", "--db", db, "--json", "--", sql, NULL };
    int rc = run_kbench(argv, out_path);
    char *text = NULL;
    kb_fs_read_all(out_path, &text, NULL);
    json_error_t e;
    json_t *rows = rc == 0 && text ? json_loads(text, 0, &e) : NULL;
    CHECK_MSG(rows && json_is_array(rows), "exit %d: %s", rc, text ? text : "(no output)");
    free(text);
    return rows;
}

static void check_columns(json_t *rows, const expected *q)
{
    char cols[512] = "";
    const char *key;
    json_t *v;
    json_object_foreach(json_array_get(rows, 0), key, v)
        snprintf(cols + strlen(cols), sizeof cols - strlen(cols), "%s%s", *cols ? "," : "", key);
    CHECK_MSG(strcmp(cols, q->columns) == 0, "%s: columns %s, expected %s", q->name, cols, q->columns);
}

static void run_block(const char *sql)
{
    char name[64] = "";
    if (sscanf(sql, "-- query: %63s", name) != 1) {
        CHECK_MSG(0, "a sql block of " DOC " without '-- query: NAME': %.60s", sql);
        return;
    }
    expected *q = NULL;
    for (size_t i = 0; i < N_QUERIES; i++)
        if (strcmp(queries[i].name, name) == 0) q = &queries[i];
    CHECK_MSG(q != NULL, "query %s of " DOC " has no expectations here", name);
    json_t *rows = run_query(sql);
    if (!q || !rows) { json_decref(rows); return; }
    q->seen++;
    CHECK_MSG(json_array_size(rows) > 0, "%s returned no rows", name);
    check_columns(rows, q);
    q->check(rows);
    printf("ok   query %s: %zu rows\n", name, json_array_size(rows));
    json_decref(rows);
}

static void test_doc_queries(void)
{
    char *doc = NULL;
    CHECK(kb_fs_read_all(DOC, &doc, NULL) == KB_OK);
    if (!doc || !build_store()) { free(doc); return; }
    int blocks = 0;
    for (char *p = strstr(doc, "```sql\n"); p; p = strstr(p, "```sql\n")) {
        p += strlen("```sql\n");
        char *end = strstr(p, "```");
        if (!end) { CHECK_MSG(0, "an unclosed ```sql block in " DOC); break; }
        *end = 0;
        run_block(p);
        blocks++;
        p = end + 3;
    }
    CHECK(blocks == (int)N_QUERIES);
    for (size_t i = 0; i < N_QUERIES; i++)
        CHECK_MSG(queries[i].seen == 1, "query %s: in " DOC " %d times", queries[i].name, queries[i].seen);
    free(doc);
}

/* The checks above can fail: a query against an empty store returns no rows. */
static void test_empty_store_has_no_rows(void)
{
    const char *argv[] = { "kbench", "query", "--db", db, "--write", "--", "DELETE FROM cases", NULL };
    CHECK(run_kbench(argv, out_path) == 0);
    json_t *rows = run_query("SELECT run_id, case_id FROM cases");
    CHECK(rows && json_array_size(rows) == 0);
    json_decref(rows);
}

int main(void)
{
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    snprintf(db, sizeof db, "%s/kbench.db", dir);
    snprintf(out_path, sizeof out_path, "%s/out.txt", dir);
    RUN(test_doc_queries);
    RUN(test_empty_store_has_no_rows);
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) fprintf(stderr, "cannot remove %s\n", dir);
    TEST_MAIN_END();
}
