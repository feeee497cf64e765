/* test_tunedb.c - the tuning database's typed rows (issue 20) and the emulator's identity
 * (issue 24): the emulator never takes its target GPU's key; a configuration of
 * KB_MAX_PARAMS params, a choice param among them, goes in and out typed; a schema-1 file
 * is migrated in place (its emulator rows re-keyed, a rerun still finding them) or, read
 * only, in memory with the file unchanged; a schema-1 row that does not parse refuses the
 * migration and leaves the file as it was; and the exported C header, compiled with
 * -Wall -Wextra -Werror, returns no emulator entry to a GPU lookup and no entry beyond its
 * shape-distance bound; the noise verdict (no winner) stored, migrated from schema 1, and
 * kept out of the header. */
#include "check.h"
#include "tune/export.h"
#include "results/dbfile.h"
#include "tune/tunedb.h"
#include "tune/tunedb_migrate.h"
#include "tune_v1.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/kb_tunedb_XXXXXX";

static void path_in(char *out, size_t n, const char *name) { snprintf(out, n, "%s/%s", dir, name); }

/* The device kbench's emulator reports (backend/emu): a CPU, target sm_90, 2 workers. */
static kb_device_info emulator_device(void)
{
    kb_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "kbench CPU emulator (Test CPU)");
    snprintf(d.uuid, sizeof d.uuid, "emu");
    d.sm = 90;
    d.sm_count = 2;
    d.total_mem_bytes = 1024ull << 20;
    return d;
}

/* The emulator has its own identity: never sm_90's key (before: sm 90, device the CPU's name). */
static void test_emulator_key(void)
{
    kb_device_info d = emulator_device();
    kb_tune_key k;
    kb_tune_key_make(&d, "c++ 12", &k);
    CHECK(k.emulator && k.sm == 0 && k.sm_count == 0 && k.arch == 90);
    CHECK_MSG(!strcmp(k.device, "kbench emulator (sm_90)"), "%s", k.device);
    const char *want = "kbench emulator (sm_90)|kbench CPU emulator (Test CPU)|sm_90|2 SMs";
    CHECK_MSG(!strncmp(k.silicon, want, strlen(want)), "%s", k.silicon);
    d.caps = KB_CAP_GPU_TIMER;
    snprintf(d.name, sizeof d.name, "NVIDIA H100 80GB HBM3");
    d.sm_count = 132;
    kb_tune_key_make(&d, "nvrtc 13.0", &k);
    CHECK(!k.emulator && k.sm == 90 && k.sm_count == 132 && k.arch == 90 && !strcmp(k.device, d.name));
}

/* A configuration of KB_MAX_PARAMS params, the first a choice param. */
static void full_config(kb_tune_config_desc *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    snprintf(cfg->variant, sizeof cfg->variant, "cublaslt");
    cfg->n_params = KB_MAX_PARAMS;
    for (int i = 0; i < KB_MAX_PARAMS; i++) {
        snprintf(cfg->params[i].name, sizeof cfg->params[i].name, "P%d", i);
        cfg->params[i].value = 1000 + i;
    }
    snprintf(cfg->params[0].name, sizeof cfg->params[0].name, "search");
    cfg->params[0].value = 1;
    snprintf(cfg->params[0].choice, sizeof cfg->params[0].choice, "enumerate");
}

static void gemm_problem(kb_tune_problem_desc *p, long long m, long long n, long long k)
{
    memset(p, 0, sizeof *p);
    snprintf(p->op, sizeof p->op, "gemm(layout=nt,alpha=1,beta=0)");
    snprintf(p->family, sizeof p->family, "gemm");
    snprintf(p->dtype, sizeof p->dtype, "bf16");
    p->n_dims = 3;
    p->dims[0] = m, p->dims[1] = n, p->dims[2] = k;
    snprintf(p->launch, sizeof p->launch, "eager");
}

static int keep_choice(void *user, const kb_tune_choice_row *c)
{
    *(kb_tune_choice_row *)user = *c;
    return 0;
}

/* Typed in, typed out: problem columns, KB_MAX_PARAMS params in order, a choice's name. */
static void test_typed_roundtrip(void)
{
    char path[300];
    path_in(path, sizeof path, "typed.db");
    kb_tunedb *db;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_tunedb_open(path, &db, &err) == KB_OK);
    kb_device_info d = emulator_device();
    kb_tune_key k;
    kb_tune_key_make(&d, "c++ 12", &k);
    kb_tune_entry *e = calloc(1, sizeof *e), *got = calloc(1, sizeof *got);
    snprintf(e->case_id, sizeof e->case_id, "gemm/x/bf16/64x64x64/pad0/eager");
    snprintf(e->problem, sizeof e->problem, "gemm(layout=nt,alpha=1,beta=0)/bf16/64x64x64/pad0/eager");
    snprintf(e->status, sizeof e->status, "ok");
    e->median_us = 10;
    e->registers = e->shmem_bytes = -1;
    gemm_problem(&e->prob, 64, 64, 64);
    full_config(&e->cfg);
    CHECK(kb_tunedb_put(db, &k, "src", e, &err) == KB_OK);
    CHECK(kb_tunedb_lookup(db, &k, "src", e->case_id, got) == 1);
    CHECK(got->cfg.n_params == KB_MAX_PARAMS && !strcmp(got->cfg.variant, "cublaslt"));
    CHECK(!strcmp(got->cfg.params[0].choice, "enumerate") && got->cfg.params[0].value == 1);
    CHECK(!strcmp(got->cfg.params[KB_MAX_PARAMS - 1].name, "P23") && got->cfg.params[KB_MAX_PARAMS - 1].value == 1023);
    CHECK(!got->cfg.params[1].choice[0] && got->prob.n_dims == 3 && got->prob.dims[2] == 64);
    CHECK(!strcmp(got->prob.op, "gemm(layout=nt,alpha=1,beta=0)") && !strcmp(got->family, "gemm"));
    kb_tune_choice_row *c = calloc(1, sizeof *c), *back = calloc(1, sizeof *back);
    kb_tune_choice_from_entry(e, c);
    c->median_us = 10;
    CHECK(kb_tunedb_put_choice(db, &k, "src", c, &err) == KB_OK);
    CHECK(kb_tunedb_each_choice(db, keep_choice, back) == 1);
    CHECK(back->cfg.n_params == KB_MAX_PARAMS && back->key.emulator && back->key.sm == 0 && back->key.arch == 90);
    kb_tunedb_close(db);
    free(e), free(got), free(c), free(back);
    kb_sb_free(&err);
}

/* Schema 1's strings, read once by the migration. */
static void test_v1_parsers(void)
{
    kb_tune_problem_desc p;
    CHECK(kb_tunedb_v1_problem("gemm(layout=nt,alpha=1,beta=0)/fp16/2048x4096x64/pad1/graph", &p) == 0);
    CHECK(!strcmp(p.op, "gemm(layout=nt,alpha=1,beta=0)") && !strcmp(p.family, "gemm"));
    CHECK(!strcmp(p.dtype, "fp16") && p.n_dims == 3 && p.dims[0] == 2048 && p.dims[2] == 64);
    CHECK(p.pad == 1 && !strcmp(p.launch, "graph"));
    CHECK(kb_tunedb_v1_problem("gelu/fp32/100/pad0/eager", &p) == 0 && p.n_dims == 1 && p.dims[0] == 100);
    CHECK(kb_tunedb_v1_problem("gelu/fp32/100", &p) == -1);
    CHECK(kb_tunedb_v1_problem("gelu/fp32/x/pad0/eager", &p) == -1);
    CHECK(kb_tunedb_v1_problem("gelu/fp32/1x2x3x4x5/pad0/eager", &p) == -1);
    char params[1024];
    tune_v1_params(params, sizeof params);
    kb_tune_config_desc cfg;
    CHECK(kb_tunedb_v1_params(params, "gemm", &cfg) == 0 && cfg.n_params == 20 && !strcmp(cfg.variant, "cublaslt"));
    /* the family's order, the choice named from the registry, unknown names after */
    CHECK(!strcmp(cfg.params[0].name, "algo") && !strcmp(cfg.params[2].name, "search"));
    CHECK(!strcmp(cfg.params[2].choice, "enumerate") && cfg.params[2].value == 1 && !cfg.params[0].choice[0]);
    CHECK(!strcmp(cfg.params[19].name, "X15") && cfg.params[19].value == 115);
    CHECK(kb_tunedb_v1_params("{\"BM\": 64}", "gemm", &cfg) == -1);                 /* no variant */
    CHECK(kb_tunedb_v1_params("{\"variant\": \"mma\", \"BM\": \"x\"}", "gemm", &cfg) == -1);
}

static int schema_of(const char *path)
{
    sqlite3 *h;
    int v = -2;
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
        v = kb_tunedb_is_v1(h);
    sqlite3_close(h);
    return v;
}

/* The database's PRAGMA application_id and user_version (results/dbfile.h), as id * 100 + version. */
static long long ids_of(const char *path)
{
    sqlite3 *h;
    long long v[2] = { -1, -1 };
    const char *q[2] = { "PRAGMA application_id", "PRAGMA user_version" };
    if (sqlite3_open_v2(path, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
        for (int i = 0; i < 2; i++) {
            sqlite3_stmt *s;
            if (sqlite3_prepare_v2(h, q[i], -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
                v[i] = sqlite3_column_int64(s, 0);
            sqlite3_finalize(s);
        }
    sqlite3_close(h);
    return v[0] * 100 + v[1];
}

static char *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b = f ? malloc(1 << 20) : NULL;
    *n = b ? fread(b, 1, 1 << 20, f) : 0;
    if (f)
        fclose(f);
    return b;
}

/* A schema-1 file opened to write is migrated in place: typed rows, the emulator re-keyed,
 * the time kept; a rerun on the same emulator finds the migrated measurement. */
static void test_migrate_in_place(void)
{
    char path[300];
    path_in(path, sizeof path, "v1.db");
    CHECK(tune_v1_write(path, TUNE_V1_PROBLEM) == 0 && schema_of(path) == 1);
    kb_tunedb *db;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_tunedb_open(path, &db, &err) == KB_OK, "%s", err.s);
    kb_tune_choice_row *c = calloc(1, sizeof *c);
    CHECK(db && kb_tunedb_each_choice(db, keep_choice, c) == 1);
    CHECK(c->key.emulator && c->key.sm == 0 && c->key.sm_count == 0 && c->key.arch == 90);
    CHECK_MSG(!strcmp(c->key.device, "kbench emulator (sm_90)"), "%s", c->key.device);
    CHECK(c->cfg.n_params == 20 && !strcmp(c->cfg.params[2].choice, "enumerate"));
    CHECK(c->prob.n_dims == 3 && c->prob.dims[1] == 64 && !strcmp(c->prob.dtype, "fp16"));
    CHECK(!strcmp(c->time, "2026-11-01T00:00:00Z") && c->median_us == 21.5);
    kb_device_info d = emulator_device();
    kb_tune_key k;
    kb_tune_key_make(&d, "c++ 12", &k);
    kb_tune_entry *e = calloc(1, sizeof *e);
    CHECK_MSG(db && kb_tunedb_lookup(db, &k, "srcv1", TUNE_V1_CASE, e) == 1, "key %s", k.silicon);
    CHECK(e->cfg.n_params == 20);
    kb_tunedb_close(db);
    CHECK(schema_of(path) == 0);
    CHECK_MSG(ids_of(path) == KB_DB_APP_ID_TUNE * 100LL + 2, "ids %lld", ids_of(path));   /* claimed once migrated */
    free(c), free(e);
    /* schema 1 already carrying kbench's ids (user_version 1): migrated the same, version 2 */
    path_in(path, sizeof path, "v1ids.db");
    sqlite3 *h;
    CHECK(tune_v1_write(path, TUNE_V1_PROBLEM) == 0 && sqlite3_open(path, &h) == SQLITE_OK);
    CHECK(sqlite3_exec(h, "PRAGMA application_id = 0x6b627464; PRAGMA user_version = 1", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(h);
    CHECK_MSG(kb_tunedb_open(path, &db, &err) == KB_OK, "%s", err.s);
    kb_tunedb_close(db);
    CHECK(schema_of(path) == 0 && ids_of(path) == KB_DB_APP_ID_TUNE * 100LL + 2);
    kb_sb_free(&err);
}

/* A schema-1 row that does not parse: refused, naming the row, the file left as it was. */
static void test_migrate_refused(void)
{
    char path[300];
    path_in(path, sizeof path, "v1bad.db");
    CHECK(tune_v1_write(path, "not-a-problem-key") == 0);
    size_t n0, n1;
    char *before = read_file(path, &n0);
    kb_tunedb *db;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_tunedb_open(path, &db, &err) == KB_ERR_INPUT && !db);
    CHECK_MSG(strstr(err.s, "tune_choices row 1") && strstr(err.s, "not-a-problem-key") &&
              strstr(err.s, "left as it was"), "%s", err.s);
    char *after = read_file(path, &n1);
    CHECK(schema_of(path) == 1 && before && after && n0 == n1 && !memcmp(before, after, n0));
    CHECK(ids_of(path) == 0);   /* not claimed: the migration did not happen */
    free(before), free(after);
    kb_sb_free(&err);
}

/* Read only (export): migrated in memory, the file byte for byte unchanged. */
static void test_migrate_readonly(void)
{
    char path[300];
    path_in(path, sizeof path, "v1ro.db");
    CHECK(tune_v1_write(path, TUNE_V1_PROBLEM) == 0);
    size_t n0, n1;
    char *before = read_file(path, &n0);
    kb_tunedb *db;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_tunedb_open_readonly(path, &db, &err) == KB_OK, "%s", err.s);
    kb_tune_choice_row *c = calloc(1, sizeof *c);
    CHECK(db && kb_tunedb_each_choice(db, keep_choice, c) == 1 && c->cfg.n_params == 20 && c->key.sm == 0);
    kb_tunedb_close(db);
    char *after = read_file(path, &n1);
    CHECK(schema_of(path) == 1 && n0 == n1 && before && after && !memcmp(before, after, n0));
    path_in(path, sizeof path, "empty.db");
    FILE *f = fopen(path, "w");
    if (f)
        fclose(f);
    CHECK(kb_tunedb_open_readonly(path, &db, &err) == KB_ERR_INPUT && strstr(err.s, "not a tuning database"));
    free(before), free(after), free(c);
    kb_sb_free(&err);
}

/* The noise verdict (issue 24) in schema 2: a choice without a winner is stored as verdict
 * "noise" with its unknown interval NULL and read back so; a schema-1 file whose choice had
 * verdict "noise" (the tuner branch wrote it there) keeps it through the migration, in place
 * and read only. */
static void test_noise_verdict(void)
{
    char path[300];
    path_in(path, sizeof path, "noise.db");
    kb_tunedb *db;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_tunedb_open(path, &db, &err) == KB_OK);
    kb_device_info d = emulator_device();
    kb_tune_key k;
    kb_tune_key_make(&d, "c++ 12", &k);
    kb_tune_choice_row *c = calloc(1, sizeof *c), *back = calloc(1, sizeof *back);
    snprintf(c->problem, sizeof c->problem, "gemm(layout=nt,alpha=1,beta=0)/bf16/64x64x64/pad0/eager");
    snprintf(c->case_id, sizeof c->case_id, "gemm/mma(BM=32)/bf16/64x64x64/pad0/eager");
    gemm_problem(&c->prob, 64, 64, 64);
    snprintf(c->cfg.variant, sizeof c->cfg.variant, "mma");
    c->median_us = 10;
    c->lo_us = c->hi_us = NAN;   /* the leader's noise unknown: no interval */
    c->noisy = 1;
    c->tie = 1;                  /* unknown noise is within everyone's: a tie too, but the verdict is noise */
    CHECK(db && kb_tunedb_put_choice(db, &k, "src", c, &err) == KB_OK);
    CHECK(db && kb_tunedb_each_choice(db, keep_choice, back) == 1);
    CHECK(back->noisy && !back->tie && isnan(back->lo_us) && isnan(back->hi_us) && back->median_us == 10);
    c->noisy = 0;
    c->lo_us = 9, c->hi_us = 11;
    CHECK(db && kb_tunedb_put_choice(db, &k, "src", c, &err) == KB_OK);   /* re-chosen: a tie now */
    CHECK(db && kb_tunedb_each_choice(db, keep_choice, back) == 1 && !back->noisy && back->tie && back->lo_us == 9);
    kb_tunedb_close(db);
    for (int readonly = 0; readonly <= 1; readonly++) {
        path_in(path, sizeof path, readonly ? "v1noise_ro.db" : "v1noise.db");
        CHECK(tune_v1_write(path, TUNE_V1_PROBLEM) == 0);
        sqlite3 *h;
        CHECK(sqlite3_open(path, &h) == SQLITE_OK &&
              sqlite3_exec(h, "UPDATE tune_choices SET verdict = 'noise', lo_us = NULL, hi_us = NULL", NULL, NULL,
                           NULL) == SQLITE_OK);
        sqlite3_close(h);
        memset(back, 0, sizeof *back);
        kb_status st = readonly ? kb_tunedb_open_readonly(path, &db, &err) : kb_tunedb_open(path, &db, &err);
        CHECK_MSG(st == KB_OK, "%s", err.s);
        CHECK(db && kb_tunedb_each_choice(db, keep_choice, back) == 1);
        CHECK_MSG(back->noisy && !back->tie && isnan(back->lo_us) && back->median_us == 21.5, "readonly %d", readonly);
        kb_tunedb_close(db);
        CHECK(schema_of(path) == (readonly ? 1 : 0));
    }
    free(c), free(back);
    kb_sb_free(&err);
}

/* A header of choices of which one has no winner: that one is a comment, never an entry,
 * and the next entry still opens its device's group; a header of nothing but such choices
 * is refused; no choice at all is an empty table. */
static void test_header_noise(void)
{
    kb_tune_choice_row *rows = calloc(2, sizeof *rows);
    kb_device_info d = emulator_device();
    for (int i = 0; i < 2; i++) {
        kb_tune_key_make(&d, "c++ 12", &rows[i].key);
        gemm_problem(&rows[i].prob, 64 << i, 64, 64);
        snprintf(rows[i].problem, sizeof rows[i].problem, "gemm/bf16/%dx64x64/*noisy*/", 64 << i);
        snprintf(rows[i].cfg.variant, sizeof rows[i].cfg.variant, "mma");
    }
    rows[0].noisy = 1;
    char *text = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&text, &n);
    kb_sb err;
    kb_sb_init(&err);
    CHECK(f && kb_tune_export_header(rows, 2, f, &err) == KB_OK);
    if (f)
        fclose(f);
    CHECK_MSG(text && strstr(text, "/* no winner (noise): gemm_bf16_64x64x64__noisy__ */") &&
              strstr(text, "1 entries") && strstr(text, "1 problem without a winner"), "%s", text);
    CHECK(text && strstr(text, "CPU emulator timings") && !strstr(text, "\"gemm/bf16/64x64x64") &&
          strstr(text, "\"gemm/bf16/128x64x64"));
    free(text);
    rows[1].noisy = 1;
    text = NULL;
    f = open_memstream(&text, &n);
    CHECK(f && kb_tune_export_header(rows, 2, f, &err) == KB_ERR_INPUT && strstr(err.s, "no winner"));
    kb_sb_clear(&err);
    CHECK(f && kb_tune_export_header(rows, 0, f, &err) == KB_OK);
    if (f)
        fclose(f);
    CHECK(text && strstr(text, "an empty table is not C11"));
    free(text);
    free(rows);
    kb_sb_free(&err);
}

/* A GPU choice at 2048x4096x4096 with KB_MAX_PARAMS params (H100: sm 90, 132 SMs) and an
 * emulator choice at 64x64x64, as the header. */
static void write_header(const char *path, int with_gpu)
{
    kb_tune_choice_row *rows = calloc(2, sizeof *rows);
    kb_device_info d = emulator_device();
    kb_tune_key_make(&d, "c++ 12", &rows[0].key);
    gemm_problem(&rows[0].prob, 64, 64, 64);
    snprintf(rows[0].cfg.variant, sizeof rows[0].cfg.variant, "mma");
    rows[0].cfg.n_params = 1;
    snprintf(rows[0].cfg.params[0].name, sizeof rows[0].cfg.params[0].name, "BM");
    rows[0].cfg.params[0].value = 32;
    d.caps = KB_CAP_GPU_TIMER;
    snprintf(d.name, sizeof d.name, "NVIDIA H100 80GB HBM3");
    d.sm_count = 132;
    kb_tune_key_make(&d, "nvrtc 13.0", &rows[1].key);
    gemm_problem(&rows[1].prob, 2048, 4096, 4096);
    full_config(&rows[1].cfg);
    FILE *f = fopen(path, "w");
    kb_sb err;
    kb_sb_init(&err);
    CHECK(f && kb_tune_export_header(rows, with_gpu ? 2 : 1, f, &err) == KB_OK);
    if (f)
        fclose(f);
    kb_sb_free(&err);
    free(rows);
}

static const char lookup_program[] =
    "#include \"kbench_tuned.h\"\n#include <stdio.h>\n"
    "#define OP \"gemm(layout=nt,alpha=1,beta=0)\"\n"
    "int main(void)\n{\n"
    "    long long big[3] = { 2048, 4096, 4096 }, small[3] = { 64, 64, 64 };\n"
    "    kbench_tuned_match m;\n"
    "    const kbench_tuned *t = kbench_tuned_lookup(OP, \"bf16\", small, 3, 90, 132, 0, &m);\n"
    "#if WITH_GPU\n"
    "    if (t || m.shape_distance != 157) return 10;   /* the GPU entry is 157 away: refused */\n"
    "    t = kbench_tuned_lookup(OP, \"bf16\", big, 3, 90, 132, 0, &m);\n"
    "    if (!t || t->cpu_timing || m.shape_distance != 0 || !m.same_sm || t->n_params != KBENCH_TUNED_MAX_PARAMS)\n"
    "        return 11;\n"
    "    if (kbench_tuned_param_value(t, \"P23\", -1) != 1023 || !t->params[0].choice) return 12;\n"
    "    t = kbench_tuned_lookup(OP, \"bf16\", big, 3, 90, 132, KBENCH_TUNED_ALLOW_CPU, &m);\n"
    "    if (!t || t->cpu_timing) return 13;            /* the GPU's own, not the emulator's */\n"
    "    long long near[3] = { 2048, 4096, 6144 };       /* 0.5 away */\n"
    "    t = kbench_tuned_lookup(OP, \"bf16\", near, 3, 90, 114, 0, &m);\n"
    "    if (!t || m.shape_distance != 0.5 || m.sm_count_delta != 18) return 14;\n"
    "#else\n"
    "    if (t || m.shape_distance != -1) return 20;     /* no GPU entry: no entry, by default */\n"
    "    t = kbench_tuned_lookup(OP, \"bf16\", big, 3, 90, 132, KBENCH_TUNED_ALLOW_CPU, &m);\n"
    "    if (t || m.shape_distance != 157) return 21;    /* asked for, but 64^3 is no fallback for it */\n"
    "#endif\n"
    "    t = kbench_tuned_lookup(OP, \"bf16\", small, 3, 0, 0, KBENCH_TUNED_ALLOW_CPU, &m);\n"
    "    if (!t || !t->cpu_timing || t->sm != 0 || t->arch != 90 || m.shape_distance != 0) return 30;\n"
    "    return 0;\n}\n";

/* The header compiles under -Wall -Wextra -Werror, and its lookup refuses emulator entries
 * by default and shapes beyond its bound. Before: an H100 lookup at 2048x4096x4096 returned
 * the emulator's 64^3 entry. */
static void test_header_lookup(void)
{
    char hdr[300], src[300], exe[300], cmd[1500];
    path_in(hdr, sizeof hdr, "kbench_tuned.h");
    path_in(src, sizeof src, "use.c");
    path_in(exe, sizeof exe, "use");
    FILE *f = fopen(src, "w");
    if (f) {
        fputs(lookup_program, f);
        fclose(f);
    }
    for (int gpu = 1; gpu >= 0; gpu--) {
        write_header(hdr, gpu);
        snprintf(cmd, sizeof cmd, "cc -std=c11 -Wall -Wextra -Werror -DWITH_GPU=%d -I%s -o %s %s && %s", gpu, dir,
                 exe, src, exe);
        int rc = system(cmd);
        CHECK_MSG(rc == 0, "with_gpu %d: %s exited %d", gpu, cmd, WIFEXITED(rc) ? WEXITSTATUS(rc) : rc);
    }
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_emulator_key);
    RUN(test_typed_roundtrip);
    RUN(test_v1_parsers);
    RUN(test_migrate_in_place);
    RUN(test_migrate_refused);
    RUN(test_migrate_readonly);
    RUN(test_header_lookup);
    RUN(test_noise_verdict);
    RUN(test_header_noise);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
