/* test_record.c - JSON Lines records: field values of each kind of record, valid
 * JSON for non-finite errors and binary logs, appends across opens, crash tolerance,
 * the finished-case set used by --resume. */
#include "check.h"
#include "core/fsutil.h"
#include "results/record.h"
#include "results/record_json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- a toy family: two variants, one dim, an integer param for variant 1 only and a
 * choice param for all ---- */
static const kb_variant toy_variants[] = {
    { "naive", "toy_naive", KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_BF16), "one per thread" },
    { "vec", "toy_vec", KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_BF16), "vector loads" },
};
static const char *const toy_dims[] = { "n" };
static const char *const toy_forms[] = { "erf", "tanh", NULL };
static const kb_param toy_params[] = {
    { "VEC", 4, NULL, 1u << 1, "elements per access", 0, 0, 0 },
    { "form", 0, toy_forms, 0, "formula", 0, 0, 0 },
};
static const kb_family toy = {
    .name = "toy", .source = "toy.cu", .about = "test family",
    .variants = toy_variants, .n_variants = KB_COUNT(toy_variants),
    .dims = toy_dims, .n_dims = KB_COUNT(toy_dims),
    .params = toy_params, .n_params = KB_COUNT(toy_params),
};

static kb_device_info emu_dev(void)
{
    kb_device_info d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "kbench emulator (sm_90)");
    strcpy(d.uuid, "emu");
    d.sm = 90;
    d.caps = 0;       /* no KB_CAP_GPU_TIMER: the emulator */
    return d;
}

static kb_case toy_case(int variant, int64_t n)
{
    kb_case c;
    memset(&c, 0, sizeof c);
    c.variant = variant;
    c.dtype = KB_DT_BF16;
    c.dims[0] = n;
    c.params[0] = 8;
    c.params[1] = 1;       /* tanh */
    c.pad = 1;
    c.launch = KB_LAUNCH_GRAPH;
    c.seed = 1234;
    return c;
}

static char dir[128];

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* Load path with the module's reader and expect `want` records. */
static json_t **load_n(const char *path, size_t want)
{
    json_t **objs = NULL;
    size_t n = 0;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_record_load(path, &objs, &n, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    CHECK_MSG(n == want, "%zu records, want %zu", n, want);
    kb_sb_free(&err);
    if (st != KB_OK || n != want) { kb_record_free_all(objs, n); return NULL; }
    return objs;
}

/* kb_record_open for any suite; the reason on stderr. */
static kb_status open_rec(const char *path, kb_recorder **w)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_record_open(path, NULL, w, &err);
    if (st != KB_OK)
        fprintf(stderr, "%s\n", err.s);
    kb_sb_free(&err);
    return st;
}

/* Serialise r (with ctx, or a default one) and append it. */
static kb_status put_rec(kb_recorder *w, const kb_record_ctx *ctx, const kb_case_result *r)
{
    static const kb_record_ctx none = { .run_id = "run-x", .time = "2026-01-01T00:00:00Z", .backend = NULL, .dev = NULL };
    json_t *o = kb_record_json(ctx ? ctx : &none, r);
    if (!o)
        return KB_ERR_OOM;
    kb_status st = kb_record_write(w, o);
    json_decref(o);
    return st;
}

static double num(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }
static const char *str(json_t *o, const char *k) { return json_string_value(json_object_get(o, k)); }
static int streq(const char *a, const char *b) { return a && b && strcmp(a, b) == 0; }

static void test_ok_record_fields(void)
{
    char path[256];
    path_in(path, sizeof path, "new/dir/ok.jsonl");       /* its directory must exist (core/output.h) */
    kb_recorder *none = NULL;
    CHECK(open_rec(path, &none) == KB_ERR_SETUP && none == NULL);
    char parent[600];
    path_in(parent, sizeof parent, "new/dir");
    CHECK(kb_fs_mkdir_p(parent) == KB_OK);
    kb_device_info dev = emu_dev();
    kb_case c = toy_case(1, 65537);
    double samples[3] = { 10.5, 11.0, 12.25 };
    kb_case_result r;
    memset(&r, 0, sizeof r);
    kb_record_ctx ctx = { .run_id = "run-20260101T000000Z-42", .time = "2026-01-01T00:00:00Z", .backend = "emu", .dev = &dev };
    r.family = &toy; r.c = &c; r.case_id = "toy/vec(VEC=8,form=tanh)/bf16/65537/pad1/graph";
    r.check_shape = 1;
    r.status = KB_CASE_OK;
    r.verify.done = 1;
    r.verify.v = (kb_verify){ .n = 65537, .n_bad = 0, .first_bad = -1, .max_abs_err = 0.001,
                              .max_rel_err = 0.002, .atol = 0.0078125, .rtol = 0.015625,
                              .acc_n = 65537, .acc_rel_fro = 0.03125, .acc_max_rel = 0.0625, .acc_snr_db = 30.25 };
    r.compile.have_resources = 1;
    r.compile.res = (kb_resources){ .registers = 32, .spill_store_bytes = 0, .spill_load_bytes = 0,
                                    .stack_bytes = -1, .static_shmem_bytes = 1024, .max_threads = -1 };
    r.measure.done = 1; r.measure.clock = "cpu";
    kb_measurement *m = &r.measure.m;
    m->n = 3; m->samples_us = samples;
    m->st = (kb_stats){ .n = 3, .median = 11.0, .mean = 11.25, .min = 10.5, .max = 12.25, .p10 = 10.6, .p90 = 12.0,
                        .cv = 0.05 };
    m->noise = 0.01;
    r.work = (kb_work){ .flops = 8 * 65537.0, .bytes_read = 2 * 65537.0, .bytes_written = 2 * 65537.0 };
    r.compile.compile_ms = 12.5; r.wall_ms = 30.0;
    r.stage_ms[KB_STAGE_VERIFY] = 2.5;

    kb_recorder *w;
    CHECK(open_rec(path, &w) == KB_OK);
    if (!w) return;
    CHECK(put_rec(w, &ctx, &r) == KB_OK);
    kb_record_close(w);

    /* read back with jansson directly: one line, one object */
    char *text = NULL;
    size_t len = 0;
    CHECK(kb_fs_read_all(path, &text, &len) == KB_OK);
    CHECK(len > 0 && text[len - 1] == '\n' && memchr(text, '\n', len) == text + len - 1);
    json_error_t je;
    json_t *o = json_loads(text, 0, &je);
    free(text);
    CHECK_MSG(o != NULL, "%s", je.text);
    if (!o) return;
    CHECK(json_integer_value(json_object_get(o, "schema_version")) == 1);
    CHECK(streq(str(o, "run_id"), "run-20260101T000000Z-42"));
    CHECK(streq(str(o, "case_id"), r.case_id));
    CHECK(streq(str(o, "family"), "toy") && streq(str(o, "variant"), "vec"));
    CHECK(streq(str(o, "dtype"), "bf16") && streq(str(o, "launch"), "graph"));
    CHECK(num(o, "pad") == 1 && num(o, "seed") == 1234);
    CHECK(json_is_true(json_object_get(o, "check_shape")));
    json_t *dims = json_object_get(o, "dims"), *params = json_object_get(o, "params");
    CHECK(json_object_size(dims) == 1 && num(dims, "n") == 65537);
    CHECK(json_object_size(params) == 2 && num(params, "VEC") == 8 && streq(str(params, "form"), "tanh"));
    CHECK(streq(str(o, "backend"), "emu"));
    json_t *d = json_object_get(o, "device");
    CHECK(streq(str(d, "uuid"), "emu") && num(d, "sm") == 90);
    CHECK(json_is_true(json_object_get(d, "emulator")));
    CHECK(streq(str(o, "status"), "ok") && streq(str(o, "error"), "ok"));
    CHECK(streq(str(o, "reason"), ""));
    json_t *v = json_object_get(o, "verify");
    CHECK(num(v, "n") == 65537 && num(v, "n_bad") == 0 && num(v, "first_bad") == -1);
    CHECK(num(v, "max_abs_err") == 0.001 && num(v, "atol") == 0.0078125 && num(v, "rtol") == 0.015625);
    CHECK(json_is_null(json_object_get(v, "got_at_bad")));
    json_t *acc = json_object_get(o, "accuracy");   /* beside verify: a reported number */
    CHECK(num(acc, "n") == 65537 && num(acc, "rel_fro_err") == 0.03125 && num(acc, "max_rel_err") == 0.0625);
    CHECK(num(acc, "snr_db") == 30.25 && strstr(str(acc, "reference"), "unquantised") != NULL);
    json_t *res = json_object_get(o, "resources");
    CHECK(num(res, "registers") == 32 && num(res, "static_shmem_bytes") == 1024);
    CHECK(json_is_integer(json_object_get(res, "spill_store_bytes")));
    CHECK(json_is_null(json_object_get(res, "stack_bytes")));   /* -1: unknown */
    json_t *t = json_object_get(o, "timing");
    CHECK(streq(str(t, "clock"), "cpu") && num(t, "samples") == 3);
    CHECK(num(t, "median_us") == 11.0 && num(t, "p90_us") == 12.0 && num(t, "cv") == 0.05);
    CHECK(json_is_false(json_object_get(t, "timed_out")));
    json_t *s = json_object_get(t, "samples_us");
    CHECK(json_array_size(s) == 3 && json_number_value(json_array_get(s, 2)) == 12.25);
    json_t *wk = json_object_get(o, "work");
    CHECK(num(wk, "flops") == 8 * 65537.0 && num(wk, "bytes_written") == 2 * 65537.0);
    CHECK(num(wk, "bytes_moved") == 4 * 65537.0);
    CHECK(num(o, "compile_ms") == 12.5 && num(o, "wall_ms") == 30.0);
    CHECK(json_is_null(json_object_get(o, "compile_log")));
    json_t *sm = json_object_get(o, "stage_ms");
    CHECK(json_object_size(sm) == 1 && num(sm, "verify") == 2.5);   /* only the stages that ran */
    /* time: what the context says (the serialiser reads no clock) */
    CHECK(streq(str(o, "time"), "2026-01-01T00:00:00Z"));
    char now[32];
    kb_record_time_now(now);
    CHECK(strlen(now) == 20 && now[4] == '-' && now[10] == 'T' && now[19] == 'Z');
    json_decref(o);
}

static void test_wrong_with_nan_stays_valid_json(void)
{
    char path[256];
    path_in(path, sizeof path, "wrong.jsonl");
    kb_case c = toy_case(0, 100);
    kb_case_result r;
    memset(&r, 0, sizeof r);
    r.family = &toy; r.c = &c; r.case_id = "toy/naive(form=tanh)/bf16/100/pad1/graph";
    r.status = KB_CASE_WRONG;   /* ran fine, but the output is wrong */
    r.verify.done = 1;
    r.verify.v = (kb_verify){ .n = 100, .n_bad = 3, .first_bad = 7, .got_at_bad = NAN,
                              .want_at_bad = -INFINITY, .max_abs_err = INFINITY,
                              .max_rel_err = NAN, .atol = 1e-2, .rtol = 1e-2 };
    r.measure.done = 1; r.measure.clock = "gpu"; r.measure.m.st.median = NAN; r.measure.m.st.cv = INFINITY;
    double samples[2] = { 1.0, NAN };
    r.measure.m.samples_us = samples; r.measure.m.n = 2;
    r.work = (kb_work){ .flops = NAN, .bytes_read = 1, .bytes_written = 1 };
    r.wall_ms = NAN;

    kb_recorder *w;
    CHECK(open_rec(path, &w) == KB_OK);
    if (!w) return;
    CHECK(put_rec(w, NULL, &r) == KB_OK);
    kb_record_close(w);

    json_t **objs = load_n(path, 1);
    if (!objs) return;
    json_t *o = objs[0];
    CHECK(streq(str(o, "status"), "wrong"));
    CHECK(json_is_null(json_object_get(o, "device")));   /* no device given */
    json_t *params = json_object_get(o, "params");
    CHECK(json_object_get(params, "VEC") == NULL);       /* applies to "vec" only */
    CHECK(streq(str(params, "form"), "tanh"));
    json_t *v = json_object_get(o, "verify");
    CHECK(num(v, "n_bad") == 3 && num(v, "first_bad") == 7);
    CHECK(streq(str(v, "got_at_bad"), "nan") && streq(str(v, "want_at_bad"), "-inf"));
    CHECK(json_is_null(json_object_get(v, "max_abs_err")) && json_is_null(json_object_get(v, "max_rel_err")));
    CHECK(json_is_null(json_object_get(o, "accuracy")));   /* not measured: acc_n 0 */
    json_t *t = json_object_get(o, "timing");
    CHECK(json_is_null(json_object_get(t, "median_us")) && json_is_null(json_object_get(t, "cv")));
    CHECK(json_is_null(json_array_get(json_object_get(t, "samples_us"), 1)));
    CHECK(json_is_null(json_object_get(o, "wall_ms")));
    CHECK(json_is_null(json_object_get(o, "resources")));
    CHECK(json_is_null(json_object_get(json_object_get(o, "work"), "flops")));
    kb_record_free_all(objs, 1);
}

static void test_status_names(void)
{
    /* the one table: every status has a name that parses back to it */
    for (int i = 0; i < KB_CASE_STATUS_COUNT; i++) {
        kb_case_status back;
        CHECK(kb_case_status_parse(kb_case_status_name((kb_case_status)i), &back) == 0 && (int)back == i);
    }
    kb_case_status st;
    CHECK(kb_case_status_parse("exploded", &st) == -1);
    CHECK(!kb_case_status_failed(KB_CASE_OK) && !kb_case_status_failed(KB_CASE_SKIPPED));
    CHECK(kb_case_status_failed(KB_CASE_WRONG) && kb_case_status_failed(KB_CASE_TIMEOUT));
    /* what an error code means for a case that ended with it */
    struct { kb_status s; const char *want; } map[] = {
        { KB_OK, "ok" }, { KB_ERR_COMPILE, "compile_error" }, { KB_ERR_LAUNCH, "launch_error" },
        { KB_ERR_OOM, "launch_error" }, { KB_ERR_SETUP, "launch_error" }, { KB_ERR_FAULT, "fault" },
        { KB_ERR_TIMEOUT, "timeout" }, { KB_ERR_INPUT, "input_error" },
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
        CHECK_MSG(streq(kb_case_status_name(kb_case_status_of(map[i].s)), map[i].want), "%s", map[i].want);
}

static void test_compile_error_and_skipped(void)
{
    char path[256];
    path_in(path, sizeof path, "mixed.jsonl");
    /* a 100 KiB log with bytes that are not UTF-8 and a multi-byte character, then a
     * final summary line that should survive the cut */
    size_t big = 100 * 1024;
    char *log = malloc(big + 64);
    if (!log) return;
    for (size_t i = 0; i < big; i++)
        log[i] = (char)(i % 61 == 0 ? '\n' : i % 97 == 0 ? 0xff : 'a' + (int)(i % 26));
    static const char head[] = "k.cu(3): error: \xc3\xa9 expected\n";
    memcpy(log, head, sizeof head - 1);
    strcpy(log + big, "\n1 error detected in k.cu\n");

    kb_case c = toy_case(1, 10);
    kb_case_result rc, rs;
    memset(&rc, 0, sizeof rc);
    rc.family = &toy; rc.c = &c; rc.case_id = "compile-case";
    rc.status = KB_CASE_COMPILE_ERROR; rc.error = KB_ERR_COMPILE;
    snprintf(rc.reason, sizeof rc.reason, "NVRTC compile failed");
    rc.compile.done = 1; rc.compile.log = log;
    memset(&rs, 0, sizeof rs);
    rs.family = &toy; rs.c = &c; rs.case_id = "skipped-case";
    rs.status = KB_CASE_SKIPPED;
    snprintf(rs.reason, sizeof rs.reason, "VEC=8 needs n %% 8 == 0 for \"aligned\" loads\tand\n a newline");

    kb_recorder *w;
    CHECK(open_rec(path, &w) == KB_OK);
    if (!w) { free(log); return; }
    CHECK(put_rec(w, NULL, &rc) == KB_OK);
    CHECK(put_rec(w, NULL, &rs) == KB_OK);
    kb_record_close(w);
    free(log);

    json_t **objs = load_n(path, 2);
    if (!objs) return;
    CHECK(streq(str(objs[0], "status"), "compile_error"));
    CHECK(streq(str(objs[0], "error"), "compile_error"));
    const char *cl = str(objs[0], "compile_log");
    CHECK(cl && strlen(cl) < KB_RECORD_LOG_MAX + 64);
    CHECK(cl && strncmp(cl, "k.cu(3): error: \xc3\xa9 expected", 27) == 0); /* valid UTF-8 kept */
    CHECK(cl && strstr(cl, "bytes cut") && strstr(cl, "1 error detected in k.cu"));
    CHECK(cl && strchr(cl, '\xff') == NULL && strchr(cl, '?'));
    CHECK(streq(str(objs[1], "status"), "skipped"));
    CHECK(streq(str(objs[1], "reason"), rs.reason));
    CHECK(json_is_null(json_object_get(objs[1], "verify")));
    kb_record_free_all(objs, 2);
}

static void write_n(const char *path, int n, const char *id_prefix)
{
    kb_case c = toy_case(0, 1);
    kb_recorder *w;
    CHECK(open_rec(path, &w) == KB_OK);
    if (!w) return;
    for (int i = 0; i < n; i++) {
        char id[64];
        snprintf(id, sizeof id, "%s%d", id_prefix, i);
        kb_case_result r;
        memset(&r, 0, sizeof r);
        r.family = &toy; r.c = &c; r.case_id = id;
        CHECK(put_rec(w, NULL, &r) == KB_OK);
    }
    kb_record_close(w);
}

static void test_append_across_opens(void)
{
    char path[256];
    path_in(path, sizeof path, "append.jsonl");
    write_n(path, 2, "first-");
    write_n(path, 1, "second-");
    json_t **objs = load_n(path, 3);
    if (!objs) return;
    CHECK(streq(str(objs[0], "case_id"), "first-0") && streq(str(objs[2], "case_id"), "second-0"));
    kb_record_free_all(objs, 3);
}

static void put_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

/* The bytes of path, for byte-identical checks (caller frees). */
static char *slurp(const char *path, size_t *len)
{
    char *text = NULL;
    if (kb_fs_read_all(path, &text, len) != KB_OK)
        return NULL;
    return text;
}

/* Opening path for suite must be refused (KB_ERR_INPUT, err containing want) and leave
 * the file byte-identical. */
static void refused_untouched(const char *path, const char *suite, const char *want)
{
    size_t n0 = 0, n1 = 0;
    char *before = slurp(path, &n0);
    kb_recorder *w = NULL;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_record_open(path, suite, &w, &err) == KB_ERR_INPUT && w == NULL);
    CHECK_MSG(strstr(err.s, want) != NULL, "%s", err.s);
    char *after = slurp(path, &n1);
    CHECK(before && after && n0 == n1 && memcmp(before, after, n0) == 0);
    free(before);
    free(after);
    kb_sb_free(&err);
}

static void test_only_records_of_the_suite_are_appended_to(void)
{
    char path[256];
    /* a file that is not records: text, YAML, binary, a JSON document */
    path_in(path, sizeof path, "notes.txt");
    put_file(path, "my notes\nsecond line without newline");
    refused_untouched(path, "llm", "notes.txt:1: not a kbench record");
    put_file(path, "suite: llm\nbenchmarks: []\n");
    refused_untouched(path, "llm", "not a kbench record");
    put_file(path, "\x7f" "ELF\x01\x02garbage");
    refused_untouched(path, "llm", "not a kbench record");
    put_file(path, "{\"case_id\": \"x\"}\n");           /* JSON, but not a record */
    refused_untouched(path, "llm", "not a kbench record");
    /* another suite's records (named, or only by the run id of older records) */
    path_in(path, sizeof path, "other.jsonl");
    put_file(path, "{\"schema_version\":1,\"run_id\":\"smoke-x\",\"suite\":\"smoke\",\"case_id\":\"a\"}\n");
    refused_untouched(path, "llm", "holds records of suite smoke, not of suite llm");
    put_file(path, "{\"schema_version\":1,\"run_id\":\"smoke-20260101T000000Z-1\",\"case_id\":\"a\"}\n");
    refused_untouched(path, "llm", "of run smoke-20260101T000000Z-1");
    /* the same suite: appended to */
    kb_recorder *w = NULL;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_record_open(path, "smoke", &w, &err) == KB_OK, "%s", err.s);
    kb_record_close(w);
    /* a directory is refused too */
    path_in(path, sizeof path, "");
    CHECK(kb_record_open(path, "llm", &w, &err) == KB_ERR_INPUT);
    kb_sb_free(&err);
}

/* A complete last record that only lacks its newline is a finished case: --resume counts
 * it, and the next append keeps it (it was cut before). */
static void test_last_record_without_newline_is_kept(void)
{
    char path[256];
    path_in(path, sizeof path, "nonl.jsonl");
    put_file(path, "{\"schema_version\":1,\"run_id\":\"s-1\",\"case_id\":\"a\"}\n"
                   "{\"schema_version\":1,\"run_id\":\"s-1\",\"case_id\":\"b\"}");
    kb_strset done;
    kb_strset_init(&done);
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_record_finished(path, &done, &err) == KB_OK && kb_strset_has(&done, "b") && done.n == 2);
    kb_record_file f;
    CHECK(kb_record_inspect(path, "s", &f, &err) == KB_OK && f.n_records == 2 && f.tail == KB_TAIL_NO_NEWLINE);
    write_n(path, 1, "c-");
    json_t **objs = load_n(path, 3);
    if (objs) {
        CHECK(streq(str(objs[1], "case_id"), "b") && streq(str(objs[2], "case_id"), "c-0"));
        kb_record_free_all(objs, 3);
    }
    kb_strset_free(&done);
    kb_sb_free(&err);
}

static void test_truncated_and_malformed(void)
{
    char path[256];
    path_in(path, sizeof path, "crash.jsonl");
    put_file(path, "{\"schema_version\":1,\"case_id\":\"a\"}\n\n{\"schema_version\":1,\"case_id\":\"b\"}\n"
                   "{\"schema_version\":1,\"case_");
    json_t **objs = load_n(path, 2);       /* the partial last line is skipped */
    kb_record_free_all(objs, objs ? 2 : 0);

    /* appending after the crash cuts the partial line: the file stays loadable */
    write_n(path, 1, "after-");
    objs = load_n(path, 3);
    if (objs) {
        CHECK(streq(str(objs[2], "case_id"), "after-0"));
        kb_record_free_all(objs, 3);
    }

    /* a malformed line in the middle is an error naming path:line */
    put_file(path, "{\"case_id\":\"a\"}\n{\"case_id\": oops}\n{\"case_id\":\"c\"}\n");
    kb_sb err;
    kb_sb_init(&err);
    size_t n = 99;
    CHECK(kb_record_load(path, &objs, &n, &err) == KB_ERR_INPUT);
    CHECK(objs == NULL && n == 0);
    char want[300];
    snprintf(want, sizeof want, "%s:2:", path);
    CHECK_MSG(strstr(err.s, want) != NULL, "%s", err.s);

    /* so is a last line that is complete (newline) but malformed, and a non-object */
    put_file(path, "{\"case_id\":\"a\"}\n{\"case_id\":\n");
    CHECK(kb_record_load(path, &objs, &n, NULL) == KB_ERR_INPUT);
    put_file(path, "[1,2]\n");
    kb_sb_clear(&err);
    CHECK(kb_record_load(path, &objs, &n, &err) == KB_ERR_INPUT && strstr(err.s, ":1:"));

    path_in(path, sizeof path, "does-not-exist.jsonl");
    CHECK(kb_record_load(path, &objs, &n, &err) == KB_ERR_INPUT && strstr(err.s, "does-not-exist.jsonl"));
    kb_sb_free(&err);
}

/* A process that dies right after kb_record_write (no close, no exit handlers)
 * loses nothing. */
static void test_record_survives_abrupt_exit(void)
{
    char path[256];
    path_in(path, sizeof path, "abrupt.jsonl");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        kb_recorder *w;
        kb_case c = toy_case(0, 1);
        kb_case_result r;
        memset(&r, 0, sizeof r);
        r.family = &toy; r.c = &c; r.case_id = "done-before-crash";
        if (open_rec(path, &w) != KB_OK || put_rec(w, NULL, &r) != KB_OK)
            _exit(1);
        _exit(0);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    json_t **objs = load_n(path, 1);
    if (objs) {
        CHECK(streq(str(objs[0], "case_id"), "done-before-crash"));
        kb_record_free_all(objs, 1);
    }
}

static void test_strset_and_finished(void)
{
    kb_strset s;
    kb_strset_init(&s);
    CHECK(!kb_strset_has(&s, "x"));
    char key[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "case/%d", i);
        CHECK(kb_strset_add(&s, key) == 1);
    }
    CHECK(kb_strset_add(&s, "case/17") == 0 && s.n == 1000);
    CHECK(s.cap >= 2000);                                    /* load stays <= 1/2 */
    int found = 0;
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "case/%d", i);
        found += kb_strset_has(&s, key);
    }
    CHECK(found == 1000);
    CHECK(!kb_strset_has(&s, "case/1000") && !kb_strset_has(&s, "case/") && !kb_strset_has(&s, ""));
    kb_strset_free(&s);
    CHECK(s.n == 0 && !kb_strset_has(&s, "case/1"));

    char path[256];
    path_in(path, sizeof path, "resume.jsonl");
    write_n(path, 3, "r-");
    kb_strset_init(&s);
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_record_finished(path, &s, &err) == KB_OK);
    CHECK(s.n == 3 && kb_strset_has(&s, "r-0") && kb_strset_has(&s, "r-2") && !kb_strset_has(&s, "r-3"));
    path_in(path, sizeof path, "no-such-file.jsonl");
    CHECK(kb_record_finished(path, &s, &err) == KB_OK && s.n == 3);
    kb_strset_free(&s);
    kb_sb_free(&err);
}

/* A write that fails part-way (here: the file size limit, as a full disk would) leaves
 * no half line behind, so the records before it and the ones written after it stay
 * loadable (a half line in the middle would make the whole file unreadable). */
static void test_failed_write_leaves_no_partial_line(void)
{
    char path[256];
    path_in(path, sizeof path, "partial.jsonl");
    write_n(path, 2, "before-");
    struct stat sb;
    CHECK(stat(path, &sb) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGXFSZ, SIG_IGN);   /* write() returns EFBIG instead of killing */
        struct rlimit rl = { (rlim_t)sb.st_size + 40, (rlim_t)sb.st_size + 40 };
        kb_recorder *w;
        kb_case c = toy_case(0, 1);
        kb_case_result r;
        memset(&r, 0, sizeof r);
        r.family = &toy; r.c = &c; r.case_id = "too-big-for-the-disk";
        if (open_rec(path, &w) != KB_OK || setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(2);
        _exit(put_rec(w, NULL, &r) == KB_ERR_IO ? 0 : 1);
    }
    int status = -1;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    struct stat sa;
    CHECK(stat(path, &sa) == 0 && sa.st_size == sb.st_size);
    write_n(path, 1, "after-");
    json_t **objs = load_n(path, 3);
    if (objs) {
        CHECK(streq(str(objs[2], "case_id"), "after-0"));
        kb_record_free_all(objs, 3);
    }
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb_test_record.XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    RUN(test_ok_record_fields);
    RUN(test_wrong_with_nan_stays_valid_json);
    RUN(test_status_names);
    RUN(test_compile_error_and_skipped);
    RUN(test_append_across_opens);
    RUN(test_truncated_and_malformed);
    RUN(test_only_records_of_the_suite_are_appended_to);
    RUN(test_last_record_without_newline_is_kept);
    RUN(test_record_survives_abrupt_exit);
    RUN(test_failed_write_leaves_no_partial_line);
    RUN(test_strset_and_finished);
    char cmd[200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "note: could not remove %s\n", dir);
    TEST_MAIN_END();
}
