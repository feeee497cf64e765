/* store.c - the SQLite results store: schema, and records in (see store.h). Queries
 * out are in store_query.c. */
#include "results/store.h"
#include "results/ceilings.h"
#include "core/fsutil.h"
#include "results/dbfile.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kb_store {
    sqlite3 *db;
    char *path;
    int in_tx;            /* an outer transaction (import) is open: put does not open its own */
    sqlite3_stmt *run, *dev, *dev_id, *del_samples, *sample, *put_case;
};

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS runs ("
    " run_id TEXT PRIMARY KEY, source TEXT, backend TEXT, started TEXT, imported TEXT);"
    "CREATE TABLE IF NOT EXISTS devices ("
    " device_id INTEGER PRIMARY KEY, name TEXT NOT NULL DEFAULT '', uuid TEXT NOT NULL DEFAULT '',"
    " pci_bus_id TEXT NOT NULL DEFAULT '', sm INTEGER, emulator INTEGER,"
    " UNIQUE (name, uuid, pci_bus_id));"
    "CREATE TABLE IF NOT EXISTS cases ("
    " run_id TEXT NOT NULL, case_id TEXT NOT NULL, time TEXT, family TEXT, variant TEXT, dtype TEXT,"
    " dims TEXT, params TEXT, pad INTEGER, launch TEXT, seed INTEGER, check_shape INTEGER,"
    " backend TEXT, device_id INTEGER REFERENCES devices(device_id),"
    " status TEXT, error TEXT, reason TEXT,"
    " n_checked INTEGER, n_bad INTEGER, max_abs_err REAL, max_rel_err REAL, atol REAL, rtol REAL,"
    " registers INTEGER, spill_store_bytes INTEGER, spill_load_bytes INTEGER, static_shmem_bytes INTEGER,"
    " clock TEXT, samples INTEGER, median_us REAL, mean_us REAL, min_us REAL, max_us REAL,"
    " p10_us REAL, p90_us REAL, cv REAL, noise REAL, timed_out INTEGER,"
    " flops REAL, bytes_read REAL, bytes_written REAL, bytes_moved REAL,"
    " tflops REAL, gbps REAL, ai REAL, roof_tflops REAL, pct_roof REAL, bound TEXT,"
    " compile_ms REAL, wall_ms REAL, record TEXT NOT NULL,"
    " PRIMARY KEY (run_id, case_id));"
    "CREATE TABLE IF NOT EXISTS measurements ("
    " run_id TEXT NOT NULL, case_id TEXT NOT NULL, sample INTEGER NOT NULL, time_us REAL,"
    " PRIMARY KEY (run_id, case_id, sample));"
    "CREATE VIEW IF NOT EXISTS results AS"
    " SELECT c.*, d.name AS device, d.uuid AS device_uuid, d.sm AS sm"
    " FROM cases c LEFT JOIN devices d USING (device_id);"
    KB_CEILINGS_VIEW_SQL
    "PRAGMA user_version = 1;";

/* Columns of `cases` taken straight from the record: column, block (NULL: top level), key. */
static const struct { const char *col, *block, *key; } case_cols[] = {
    { "time", NULL, "time" }, { "family", NULL, "family" }, { "variant", NULL, "variant" },
    { "dtype", NULL, "dtype" }, { "dims", NULL, "dims" }, { "params", NULL, "params" },
    { "pad", NULL, "pad" }, { "launch", NULL, "launch" }, { "seed", NULL, "seed" },
    { "check_shape", NULL, "check_shape" }, { "backend", NULL, "backend" },
    { "status", NULL, "status" }, { "error", NULL, "error" }, { "reason", NULL, "reason" },
    { "n_checked", "verify", "n" }, { "n_bad", "verify", "n_bad" },
    { "max_abs_err", "verify", "max_abs_err" }, { "max_rel_err", "verify", "max_rel_err" },
    { "atol", "verify", "atol" }, { "rtol", "verify", "rtol" },
    { "registers", "resources", "registers" }, { "spill_store_bytes", "resources", "spill_store_bytes" },
    { "spill_load_bytes", "resources", "spill_load_bytes" },
    { "static_shmem_bytes", "resources", "static_shmem_bytes" },
    { "clock", "timing", "clock" }, { "samples", "timing", "samples" },
    { "median_us", "timing", "median_us" }, { "mean_us", "timing", "mean_us" },
    { "min_us", "timing", "min_us" }, { "max_us", "timing", "max_us" },
    { "p10_us", "timing", "p10_us" }, { "p90_us", "timing", "p90_us" }, { "cv", "timing", "cv" },
    { "noise", "timing", "noise" }, { "timed_out", "timing", "timed_out" },
    { "flops", "work", "flops" }, { "bytes_read", "work", "bytes_read" },
    { "bytes_written", "work", "bytes_written" }, { "bytes_moved", "work", "bytes_moved" },
    { "compile_ms", NULL, "compile_ms" }, { "wall_ms", NULL, "wall_ms" },
};
#define N_CASE_COLS (sizeof case_cols / sizeof case_cols[0])
/* after them: device_id, tflops, gbps, ai, roof_tflops, pct_roof, bound, record */
#define N_EXTRA_COLS 8

static kb_status db_fail(kb_store *s, kb_sb *err, const char *what)
{
    if (err)
        kb_sb_printf(err, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
    return KB_ERR_IO;
}

/* Bind a JSON value: numbers, booleans as 0/1, strings, objects/arrays as JSON text. */
static int bind_json(sqlite3_stmt *st, int i, json_t *v)
{
    if (json_is_integer(v)) return sqlite3_bind_int64(st, i, json_integer_value(v));
    if (json_is_real(v)) return sqlite3_bind_double(st, i, json_real_value(v));
    if (json_is_boolean(v)) return sqlite3_bind_int(st, i, json_is_true(v));
    if (json_is_string(v)) return sqlite3_bind_text(st, i, json_string_value(v), -1, SQLITE_TRANSIENT);
    if (json_is_object(v) || json_is_array(v)) {
        char *t = json_dumps(v, JSON_COMPACT);
        if (!t) return SQLITE_NOMEM;
        return sqlite3_bind_text(st, i, t, -1, free);
    }
    return sqlite3_bind_null(st, i);
}

static int bind_str(sqlite3_stmt *st, int i, const char *s)
{
    return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

static int bind_opt(sqlite3_stmt *st, int i, int have, double v)
{
    return have ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

/* Run a prepared statement to completion and reset it. */
static int step_reset(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

static kb_status prepare_all(kb_store *s, kb_sb *err)
{
    kb_sb sql;
    kb_sb_init(&sql);
    kb_sb_printf(&sql, "INSERT OR REPLACE INTO cases (run_id, case_id");
    for (size_t i = 0; i < N_CASE_COLS; i++)
        kb_sb_printf(&sql, ", %s", case_cols[i].col);
    kb_sb_printf(&sql, ", device_id, tflops, gbps, ai, roof_tflops, pct_roof, bound, record) VALUES (?, ?");
    for (size_t i = 0; i < N_CASE_COLS + N_EXTRA_COLS; i++)
        kb_sb_printf(&sql, ", ?");
    kb_sb_printf(&sql, ")");
    struct { sqlite3_stmt **st; const char *sql; } q[] = {
        { &s->run, "INSERT INTO runs (run_id, source, backend, started, imported) VALUES (?, ?, ?, ?, ?)"
                   " ON CONFLICT (run_id) DO UPDATE SET source = coalesce(excluded.source, source),"
                   " backend = coalesce(backend, excluded.backend),"
                   " started = coalesce(min(started, excluded.started), started, excluded.started),"
                   " imported = excluded.imported" },
        { &s->dev, "INSERT OR IGNORE INTO devices (name, uuid, pci_bus_id, sm, emulator) VALUES (?, ?, ?, ?, ?)" },
        { &s->dev_id, "SELECT device_id FROM devices WHERE name = ? AND uuid = ? AND pci_bus_id = ?" },
        { &s->del_samples, "DELETE FROM measurements WHERE run_id = ? AND case_id = ?" },
        { &s->sample, "INSERT INTO measurements (run_id, case_id, sample, time_us) VALUES (?, ?, ?, ?)" },
        { &s->put_case, sql.s },
    };
    for (size_t i = 0; i < sizeof q / sizeof q[0]; i++) {
        if (sqlite3_prepare_v2(s->db, q[i].sql, -1, q[i].st, NULL) != SQLITE_OK) {
            kb_sb_free(&sql);
            return db_fail(s, err, "prepare");
        }
    }
    kb_sb_free(&sql);
    return KB_OK;
}

const char *kb_store_default_path(void)
{
    const char *db = getenv("KBENCH_DB");
    return db && *db ? db : KB_STORE_DEFAULT_PATH;
}

kb_status kb_store_open(const char *path, kb_store **out, kb_sb *err)
{
    *out = NULL;
    kb_store *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        return KB_ERR_OOM;
    }
    kb_status st = KB_ERR_IO;
    if (!strcmp(path, KB_STORE_DEFAULT_PATH) && kb_fs_mkdir_parent(path) != KB_OK) {   /* kbench's own place */
        if (err) kb_sb_printf(err, "%s: cannot create its directory", path);
        goto fail;
    }
    /* kbench's own store, an empty file or an earlier kbench's store; busy timeout 30 s:
     * other processes of a sweep append too (results/dbfile.h) */
    kb_sb why;
    kb_sb_init(&why);
    st = kb_db_open_write(path, &kb_db_store_kind, &s->db, &why);
    if (err && st != KB_OK) kb_sb_printf(err, "%s", why.s);
    kb_sb_free(&why);
    if (st != KB_OK)
        goto fail;
    st = KB_ERR_IO;
    char *msg = NULL;
    if (sqlite3_exec(s->db, schema_sql, NULL, NULL, &msg) != SQLITE_OK) {
        if (err) kb_sb_printf(err, "%s: creating the tables: %s", path, msg ? msg : "?");
        sqlite3_free(msg);
        goto fail;
    }
    if ((st = prepare_all(s, err)) != KB_OK)
        goto fail;
    *out = s;
    return KB_OK;
fail:
    kb_store_close(s);
    return st;
}

void kb_store_close(kb_store *s)
{
    if (!s)
        return;
    sqlite3_stmt *all[] = { s->run, s->dev, s->dev_id, s->del_samples, s->sample, s->put_case };
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        sqlite3_finalize(all[i]);
    sqlite3_close(s->db);
    free(s->path);
    free(s);
}

static int exec(kb_store *s, const char *sql) { return sqlite3_exec(s->db, sql, NULL, NULL, NULL); }

/* The device row of the record; *id stays 0 (bound as NULL) without a device block. */
static int put_device(kb_store *s, json_t *dev, sqlite3_int64 *id)
{
    *id = 0;
    if (!json_is_object(dev))
        return SQLITE_OK;
    const char *k[3] = { "name", "uuid", "pci_bus_id" };
    for (int i = 0; i < 3; i++) {
        const char *v = json_string_value(json_object_get(dev, k[i]));
        sqlite3_bind_text(s->dev, i + 1, v ? v : "", -1, SQLITE_TRANSIENT);
        sqlite3_bind_text(s->dev_id, i + 1, v ? v : "", -1, SQLITE_TRANSIENT);
    }
    bind_json(s->dev, 4, json_object_get(dev, "sm"));
    bind_json(s->dev, 5, json_object_get(dev, "emulator"));
    int rc = step_reset(s->dev);
    if (rc != SQLITE_OK)
        return rc;
    rc = sqlite3_step(s->dev_id);
    if (rc == SQLITE_ROW)
        *id = sqlite3_column_int64(s->dev_id, 0);
    sqlite3_reset(s->dev_id);
    sqlite3_clear_bindings(s->dev_id);
    return rc == SQLITE_ROW ? SQLITE_OK : SQLITE_ERROR;
}

static int put_case_row(kb_store *s, json_t *rec, const char *run_id, const char *case_id, sqlite3_int64 dev_id)
{
    sqlite3_stmt *st = s->put_case;
    int i = 1, rc = SQLITE_OK;   /* OR of the bind results: nonzero when any bind failed */
    rc |= bind_str(st, i++, run_id);
    rc |= bind_str(st, i++, case_id);
    for (size_t c = 0; c < N_CASE_COLS; c++) {
        json_t *from = case_cols[c].block ? json_object_get(rec, case_cols[c].block) : rec;
        rc |= bind_json(st, i++, json_object_get(from, case_cols[c].key));
    }
    rc |= dev_id ? sqlite3_bind_int64(st, i, dev_id) : sqlite3_bind_null(st, i);
    i++;
    kb_derived d;
    kb_record_derived(rec, &d);
    rc |= bind_opt(st, i++, d.have_rates, d.tflops);
    rc |= bind_opt(st, i++, d.have_rates, d.gbps);
    rc |= bind_opt(st, i++, d.have_rates, d.ai);
    rc |= bind_opt(st, i++, d.have_roof, d.roof_tflops);
    rc |= bind_opt(st, i++, d.have_roof, d.pct_roof);
    rc |= bind_str(st, i++, kb_bound_name(d.bound));
    char *text = json_dumps(rec, JSON_COMPACT);
    if (!text) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return SQLITE_NOMEM;
    }
    rc |= sqlite3_bind_text(st, i++, text, -1, free);
    if (rc != SQLITE_OK) {
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return rc;
    }
    return step_reset(st);
}

static int put_samples(kb_store *s, json_t *rec, const char *run_id, const char *case_id)
{
    bind_str(s->del_samples, 1, run_id);
    bind_str(s->del_samples, 2, case_id);
    int rc = step_reset(s->del_samples);
    json_t *arr = json_object_get(json_object_get(rec, "timing"), "samples_us");
    size_t i;
    json_t *v;
    json_array_foreach(arr, i, v) {
        if (rc != SQLITE_OK)
            break;
        bind_str(s->sample, 1, run_id);
        bind_str(s->sample, 2, case_id);
        sqlite3_bind_int64(s->sample, 3, (sqlite3_int64)i);
        bind_json(s->sample, 4, v);
        rc = step_reset(s->sample);
    }
    return rc;
}

static void now_utc(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

kb_status kb_store_put(kb_store *s, json_t *rec, const char *source, kb_sb *err)
{
    const char *run_id = json_string_value(json_object_get(rec, "run_id"));
    const char *case_id = json_string_value(json_object_get(rec, "case_id"));
    if (!run_id || !case_id) {
        if (err) kb_sb_printf(err, "a record without run_id or case_id cannot be stored");
        return KB_ERR_INPUT;
    }
    int own_tx = !s->in_tx;
    if (own_tx && exec(s, "BEGIN IMMEDIATE") != SQLITE_OK)
        return db_fail(s, err, "begin");
    char now[32];
    now_utc(now);
    bind_str(s->run, 1, run_id);
    bind_str(s->run, 2, source);
    bind_str(s->run, 3, json_string_value(json_object_get(rec, "backend")));
    bind_str(s->run, 4, json_string_value(json_object_get(rec, "time")));
    bind_str(s->run, 5, now);
    sqlite3_int64 dev_id = 0;
    int rc = step_reset(s->run);
    if (rc == SQLITE_OK) rc = put_device(s, json_object_get(rec, "device"), &dev_id);
    if (rc == SQLITE_OK) rc = put_case_row(s, rec, run_id, case_id, dev_id);
    if (rc == SQLITE_OK) rc = put_samples(s, rec, run_id, case_id);
    if (rc != SQLITE_OK) {
        kb_status st = db_fail(s, err, case_id);
        if (own_tx) exec(s, "ROLLBACK");
        return st;
    }
    if (own_tx && exec(s, "COMMIT") != SQLITE_OK) {
        kb_status st = db_fail(s, err, "commit");
        exec(s, "ROLLBACK");
        return st;
    }
    return KB_OK;
}

kb_status kb_store_import_jsonl(const char *db_path, const char *jsonl_path, size_t *n_imported, kb_sb *err)
{
    json_t **recs = NULL;
    size_t n = 0;
    kb_store *s = NULL;
    if (n_imported) *n_imported = 0;
    kb_status st = kb_record_load(jsonl_path, &recs, &n, err);
    if (st != KB_OK)
        return st;
    if ((st = kb_store_open(db_path, &s, err)) != KB_OK)
        goto fail;
    if (exec(s, "BEGIN IMMEDIATE") != SQLITE_OK) {
        st = db_fail(s, err, "begin");
        goto fail;
    }
    s->in_tx = 1;
    for (size_t i = 0; i < n; i++) {
        if ((st = kb_store_put(s, recs[i], jsonl_path, err)) != KB_OK) {
            if (err) kb_sb_printf(err, " (record %zu of %s)", i + 1, jsonl_path);
            exec(s, "ROLLBACK");
            goto fail;
        }
    }
    s->in_tx = 0;
    if (exec(s, "COMMIT") != SQLITE_OK) {
        st = db_fail(s, err, "commit");
        exec(s, "ROLLBACK");
        goto fail;
    }
    if (n_imported) *n_imported = n;
fail:
    kb_store_close(s);
    kb_record_free_all(recs, n);
    return st;
}
