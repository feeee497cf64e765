/* test_store.c - the SQLite store: import a recorded run and read it back (cases,
 * samples, devices, derived columns), idempotent re-import, results of the run stage,
 * and `kbench query` output as table, CSV and JSON, read-only by default. */
#include "check.h"

#include <sys/stat.h>
#include "results/record.h"
#include "results/store.h"
#include "results/store_query.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_GPU "tests/data/run_gpu.jsonl"
#define RUN_EMU "tests/data/run_emu.jsonl"
#define GEMM_BF16 "gemm/wmma(BM=128,BN=128,BK=32)/bf16/4096x4096x4096/pad0/eager"

static char dir[64];
static char db_path[128];

/* One integer from SQL on the store, -1 on error. */
static long long sql_int(const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    long long v = -1;
    if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int64(st, 0);
    else
        fprintf(stderr, "sql_int(%s): %s\n", sql, sqlite3_errmsg(db));
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* The record of case_id in a JSON Lines file (caller decrefs). */
static json_t *find_record(const char *path, const char *case_id)
{
    json_t **objs;
    size_t n;
    json_t *hit = NULL;
    if (kb_record_load(path, &objs, &n, NULL) != KB_OK)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(json_string_value(json_object_get(objs[i], "case_id")), case_id) == 0)
            hit = json_incref(objs[i]);
    kb_record_free_all(objs, n);
    return hit;
}

/* Run a query, capturing its output. Returns the status; *text malloc'ed. */
static kb_status query(const char *sql, kb_query_format fmt, int writable, char **text, kb_sb *err)
{
    size_t len;
    FILE *f = open_memstream(text, &len);
    kb_status st = kb_store_query(db_path, sql, fmt, writable, f, err);
    fclose(f);
    return st;
}

static void test_import_round_trip(void)
{
    size_t n = 0;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_store_import_jsonl(db_path, RUN_GPU, &n, &err) == KB_OK, "%s", err.s);
    CHECK(n == 19);
    CHECK(sql_int("SELECT count(*) FROM cases") == 19);
    CHECK(sql_int("SELECT count(*) FROM runs") == 1);
    CHECK(sql_int("SELECT count(*) FROM devices WHERE name = 'TEST-GPU' AND sm = 90 AND emulator = 0") == 1);
    CHECK(sql_int("SELECT count(*) FROM cases WHERE status = 'ok'") == 13);
    CHECK(sql_int("SELECT count(*) FROM cases WHERE status = 'skipped' AND reason LIKE 'm must be%'") == 1);
    CHECK(sql_int("PRAGMA user_version") == KB_STORE_SCHEMA_VERSION);

    /* values match the record exactly */
    json_t *rec = find_record(RUN_GPU, GEMM_BF16);
    CHECK(rec != NULL);
    if (!rec) { kb_sb_free(&err); return; }
    json_t *t = json_object_get(rec, "timing"), *d = json_object_get(rec, "derived");
    char sql[512];
    snprintf(sql, sizeof sql, "SELECT median_us = %.17g AND tflops = %.17g AND pct_roof = %.17g AND bound = 'compute'"
             " AND n_checked = 16777216 AND clock = 'gpu' AND json_extract(dims, '$.k') = 4096"
             " FROM cases WHERE case_id = '%s'",
             json_number_value(json_object_get(t, "median_us")), json_number_value(json_object_get(d, "tflops")),
             json_number_value(json_object_get(d, "pct_roof")), GEMM_BF16);
    CHECK(sql_int(sql) == 1);
    /* one measurements row per sample, in order */
    json_t *samples = json_object_get(t, "samples_us");
    snprintf(sql, sizeof sql, "SELECT count(*) FROM measurements WHERE case_id = '%s'", GEMM_BF16);
    CHECK(sql_int(sql) == (long long)json_array_size(samples));
    snprintf(sql, sizeof sql, "SELECT time_us = %.17g FROM measurements WHERE case_id = '%s' AND sample = 3",
             json_number_value(json_array_get(samples, 3)), GEMM_BF16);
    CHECK(sql_int(sql) == 1);
    /* the whole record is kept: json_extract reaches fields without a column */
    snprintf(sql, sizeof sql, "SELECT json_extract(record, '$.resources.max_threads') FROM cases WHERE case_id = '%s'",
             GEMM_BF16);
    CHECK(sql_int(sql) == 256);
    /* the view joins the device */
    CHECK(sql_int("SELECT count(*) FROM results WHERE device = 'TEST-GPU'") == 19);
    json_decref(rec);

    /* idempotent: importing again changes nothing */
    CHECK(kb_store_import_jsonl(db_path, RUN_GPU, &n, &err) == KB_OK);
    CHECK(sql_int("SELECT count(*) FROM cases") == 19);
    CHECK(sql_int("SELECT count(*) FROM devices") == 1);
    snprintf(sql, sizeof sql, "SELECT count(*) FROM measurements WHERE case_id = '%s'", GEMM_BF16);
    CHECK(sql_int(sql) == 25);

    /* a second run on the emulator: records without a derived block get their rates here */
    CHECK(kb_store_import_jsonl(db_path, RUN_EMU, &n, &err) == KB_OK && n == 7);
    CHECK(sql_int("SELECT count(*) FROM runs") == 2 && sql_int("SELECT count(*) FROM devices") == 2);
    CHECK(sql_int("SELECT count(*) FROM cases WHERE backend = 'emu' AND clock = 'cpu' AND tflops > 0"
                  " AND gbps > 0 AND roof_tflops IS NULL AND pct_roof IS NULL") == 5);
    CHECK(sql_int("SELECT count(*) FROM cases WHERE status = 'wrong' AND max_abs_err IS NULL") == 1);
    kb_sb_free(&err);
}

static void test_put_result(void)
{
    kb_store *s;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_store_open(db_path, &s, &err) == KB_OK, "%s", err.s);
    if (!s) { kb_sb_free(&err); return; }
    kb_device_info dev;
    memset(&dev, 0, sizeof dev);
    strcpy(dev.name, "TEST-GPU");
    strcpy(dev.uuid, "GPU-00000000-test-0000-0000-000000000000");
    strcpy(dev.pci_bus_id, "00000000:01:00.0");
    dev.sm = 90;
    double samples[3] = { 10.0, 11.0, 12.0 };
    dev.caps = KB_CAP_GPU_TIMER;
    kb_case_result r;
    memset(&r, 0, sizeof r);
    kb_record_ctx ctx = { .run_id = "run-put", .time = "2026-01-01T00:00:00Z", .backend = "cuda", .dev = &dev };
    r.case_id = "gelu/naive(form=erf)/fp32/1024/pad0/eager";
    r.status = KB_CASE_OK;
    r.measure.done = 1; r.measure.clock = "gpu";
    r.measure.m.n = 3; r.measure.m.st.median = 11.0; r.measure.m.samples_us = samples;
    r.work = (kb_work){ .flops = 8192, .bytes_read = 4096, .bytes_written = 4096 };
    kb_derive(&r.work, 11.0, NULL, KB_DT_FP32, &r.derived.d);
    r.derived.done = 1;
    json_t *rec = kb_record_json(&ctx, &r);   /* the one object the run writes to both */
    CHECK_MSG(kb_store_put(s, rec, "test", &err) == KB_OK, "%s", err.s);
    CHECK(kb_store_put(s, rec, "test", &err) == KB_OK);      /* again: replaced, not added */
    json_decref(rec);
    /* a record that cannot be keyed is refused */
    json_t *bad = json_pack("{s:s}", "run_id", "x");
    CHECK(kb_store_put(s, bad, NULL, &err) == KB_ERR_INPUT);
    json_decref(bad);
    kb_store_close(s);
    CHECK(sql_int("SELECT count(*) FROM cases WHERE run_id = 'run-put'") == 1);
    CHECK(sql_int("SELECT count(*) FROM measurements WHERE run_id = 'run-put'") == 3);
    CHECK(sql_int("SELECT abs(gbps - 8192.0 / 11.0 / 1000.0) < 1e-12 FROM cases WHERE run_id = 'run-put'") == 1);
    /* same device as the imported run: one row */
    CHECK(sql_int("SELECT count(*) FROM devices WHERE name = 'TEST-GPU'") == 1);
    kb_sb_free(&err);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++) n += *s == '\n';
    return n;
}

static void test_query_formats(void)
{
    char *out = NULL;
    kb_sb err;
    kb_sb_init(&err);
    const char *sql = "SELECT case_id, dtype, median_us, reason FROM cases WHERE run_id LIKE 'test-gpu-a%'"
                      " AND family = 'gemm' ORDER BY case_id";
    long long n = sql_int("SELECT count(*) FROM cases WHERE run_id LIKE 'test-gpu-a%' AND family = 'gemm'");
    CHECK(n == 12);

    /* table: header, rule, rows, count; columns aligned (the rule's gaps line up with the header's) */
    CHECK_MSG(query(sql, KB_QUERY_TABLE, 0, &out, &err) == KB_OK, "%s", err.s);
    CHECK(strncmp(out, "case_id ", 8) == 0);
    CHECK(count_lines(out) == 3 + n);
    char want[32];
    snprintf(want, sizeof want, "(%lld rows)\n", n);
    CHECK(strstr(out, want) != NULL);
    const char *rule = strchr(out, '\n') + 1;
    const char *dtype_at = strstr(out, "dtype");
    CHECK(rule[dtype_at - out - 1] == ' ' && rule[dtype_at - out - 2] == ' ' && rule[dtype_at - out] == '-');
    free(out);

    /* CSV: header + one line per row, CRLF, a comma inside an id quoted */
    CHECK(query(sql, KB_QUERY_CSV, 0, &out, &err) == KB_OK);
    CHECK(strncmp(out, "case_id,dtype,median_us,reason\r\n", 32) == 0);
    CHECK(count_lines(out) == 1 + n);
    CHECK(strstr(out, "\r\n\"gemm/wmma(BM=128,BN=128,BK=32)/bf16/4096x4096x4096/pad0/eager\",bf16,") != NULL);
    free(out);

    /* JSON: an array of objects with typed values */
    CHECK(query(sql, KB_QUERY_JSON, 0, &out, &err) == KB_OK);
    json_error_t je;
    json_t *arr = json_loads(out, 0, &je);
    CHECK_MSG(json_is_array(arr) && (long long)json_array_size(arr) == n, "%s", je.text);
    json_t *first = json_array_get(arr, 0);
    CHECK(json_is_string(json_object_get(first, "case_id")));
    json_t *row = NULL;
    size_t i;
    json_array_foreach(arr, i, row)
        if (strcmp(json_string_value(json_object_get(row, "case_id")), GEMM_BF16) == 0) break;
    CHECK(row && json_is_real(json_object_get(row, "median_us")) && json_is_null(json_object_get(row, "reason")));
    json_decref(arr);
    free(out);
    kb_sb_free(&err);
}

static void test_query_read_only(void)
{
    char *out = NULL;
    kb_sb err;
    kb_sb_init(&err);
    long long before = sql_int("SELECT count(*) FROM cases");
    CHECK(query("DELETE FROM cases", KB_QUERY_TABLE, 0, &out, &err) == KB_ERR_INPUT);
    CHECK(strstr(err.s, "read-only") != NULL);
    free(out);
    CHECK(sql_int("SELECT count(*) FROM cases") == before);
    /* nothing a read-only query does creates a file: VACUUM INTO, ATTACH */
    char made[64];
    snprintf(made, sizeof made, "/tmp/kb_test_store_made.%d.db", (int)getpid());
    char sql[160];
    snprintf(sql, sizeof sql, "VACUUM INTO '%s'", made);
    kb_sb_clear(&err);
    CHECK(query(sql, KB_QUERY_TABLE, 0, &out, &err) == KB_ERR_INPUT && strstr(err.s, "read-only"));
    free(out);
    snprintf(sql, sizeof sql, "ATTACH '%s' AS other", made);
    kb_sb_clear(&err);
    CHECK(query(sql, KB_QUERY_TABLE, 0, &out, &err) == KB_ERR_INPUT);
    free(out);
    CHECK(access(made, F_OK) != 0);
    /* a file that is not a database: named in the message */
    snprintf(made, sizeof made, "/tmp/kb_test_store_text.%d", (int)getpid());
    FILE *t = fopen(made, "w");
    if (t) {
        fputs("this is not a database, it is a text file that is long enough to have a header\n", t);
        fclose(t);
        kb_sb_clear(&err);
        CHECK(kb_store_query(made, "SELECT 1", KB_QUERY_TABLE, 0, stderr, &err) == KB_ERR_INPUT);
        CHECK_MSG(strstr(err.s, made) && strstr(err.s, "not an SQLite database"), "%s", err.s);
        unlink(made);
    }
    /* several statements, the writing one allowed with writable */
    kb_sb_clear(&err);
    CHECK_MSG(query("DELETE FROM cases WHERE run_id = 'run-put'; SELECT count(*) AS n FROM cases;",
                    KB_QUERY_TABLE, 1, &out, &err) == KB_OK, "%s", err.s);
    char want[64];
    snprintf(want, sizeof want, "n\n--\n%2lld\n(1 row)\n", before - 1);
    CHECK_MSG(strcmp(out, want) == 0, "got [%s] want [%s]", out, want);
    free(out);
    /* errors */
    kb_sb_clear(&err);
    CHECK(query("SELEC nothing", KB_QUERY_TABLE, 0, &out, &err) == KB_ERR_INPUT);
    CHECK(strstr(err.s, "SQL error") != NULL);
    free(out);
    size_t len;
    FILE *f = open_memstream(&out, &len);
    CHECK(kb_store_query("/nonexistent/kbench.db", "SELECT 1", KB_QUERY_TABLE, 0, f, &err) == KB_ERR_IO);
    fclose(f);
    free(out);
    kb_sb_free(&err);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb_test_store.XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    snprintf(db_path, sizeof db_path, "%s/sub/kbench.db", dir);
    /* the parent of a store other than results/kbench.db must exist (core/output.h) */
    kb_store *none = NULL;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_store_open(db_path, &none, &err) == KB_ERR_SETUP && none == NULL && strstr(err.s, "does not exist"));
    kb_sb_free(&err);
    char sub[200];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    CHECK(mkdir(sub, 0755) == 0);
    RUN(test_import_round_trip);
    RUN(test_put_result);
    RUN(test_query_formats);
    RUN(test_query_read_only);
    char cmd[160];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
