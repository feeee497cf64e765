/* tunedb.c - the tuning database in SQLite (tunedb.h). */
#include "tune/tunedb.h"

#include "core/fsutil.h"
#include "results/dbfile.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kb_tunedb {
    sqlite3 *db;
};

#define KEY_COLS "silicon TEXT NOT NULL, driver TEXT NOT NULL, toolchain TEXT NOT NULL, source TEXT NOT NULL, "
#define KEY_PK "silicon, driver, toolchain, source"

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS tune_entries(" KEY_COLS
    "case_id TEXT NOT NULL, problem TEXT, config TEXT, params TEXT, family TEXT, status TEXT, reason TEXT, "
    "median_us REAL, noise REAL, samples INTEGER, registers INTEGER, shmem_bytes INTEGER, clock TEXT, "
    "device TEXT, sm INTEGER, sm_count INTEGER, emulator INTEGER, time TEXT, "
    "PRIMARY KEY(" KEY_PK ", case_id));"
    "CREATE TABLE IF NOT EXISTS tune_choices(" KEY_COLS
    "problem TEXT NOT NULL, family TEXT, case_id TEXT, config TEXT, params TEXT, median_us REAL, lo_us REAL, "
    "hi_us REAL, verdict TEXT, tied TEXT, strategy TEXT, evaluations INTEGER, space INTEGER, device TEXT, "
    "sm INTEGER, sm_count INTEGER, emulator INTEGER, time TEXT, n_tied INTEGER, stale INTEGER NOT NULL DEFAULT 0, "
    "PRIMARY KEY(" KEY_PK ", problem));";

void kb_tune_key_make(const kb_device_info *d, const char *toolchain, kb_tune_key *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->device, sizeof out->device, "%s", d->name);
    out->sm = d->sm;
    out->sm_count = d->sm_count;
    out->emulator = !(d->caps & KB_CAP_GPU_TIMER);
    snprintf(out->silicon, sizeof out->silicon, "%s|sm_%d|%d SMs|%llu MiB|L2 %d KiB|%d MHz", d->name, d->sm,
             d->sm_count, (unsigned long long)(d->total_mem_bytes >> 20), d->l2_bytes >> 10, d->clock_khz / 1000);
    if (d->driver_version > 0)
        snprintf(out->driver, sizeof out->driver, "%d.%d", d->driver_version / 1000, d->driver_version % 1000 / 10);
    else
        snprintf(out->driver, sizeof out->driver, "none");
    snprintf(out->toolchain, sizeof out->toolchain, "%s", toolchain ? toolchain : "");
}

static kb_status db_error(kb_tunedb *t, const char *what, kb_sb *err)
{
    if (err)
        kb_sb_printf(err, "%s: %s", what, sqlite3_errmsg(t->db));
    return KB_ERR_IO;
}

kb_status kb_tunedb_open(const char *path, kb_tunedb **out, kb_sb *err)
{
    *out = NULL;
    if (!strcmp(path, KB_TUNEDB_DEFAULT_PATH))   /* kbench's own place: results/ made */
        kb_fs_mkdir_parent(path);
    kb_tunedb *t = calloc(1, sizeof *t);
    if (!t)
        return KB_ERR_OOM;
    /* kbench's own tuning database, an empty one or an earlier kbench's (results/dbfile.h) */
    kb_status st = kb_db_open_write(path, &kb_db_tune_kind, &t->db, err);
    if (st == KB_OK && sqlite3_exec(t->db, schema, NULL, NULL, NULL) != SQLITE_OK)
        st = db_error(t, path, err);
    if (st != KB_OK) {
        kb_tunedb_close(t);
        return st;
    }
    *out = t;
    return KB_OK;
}

kb_status kb_tunedb_open_read(const char *path, kb_tunedb **out, kb_sb *err)
{
    *out = NULL;
    kb_tunedb *t = calloc(1, sizeof *t);
    if (!t)
        return KB_ERR_OOM;
    int empty = 0;
    kb_status st = kb_db_open_read(path, &kb_db_tune_kind, &t->db, &empty, err);
    if (st == KB_OK && empty) {
        kb_sb_printf(err, "%s: an empty database: no tuning database there (kbench tune fills one)", path);
        st = KB_ERR_INPUT;
    }
    if (st != KB_OK) {
        kb_tunedb_close(t);
        return st;
    }
    *out = t;
    return KB_OK;
}

void kb_tunedb_close(kb_tunedb *db)
{
    if (!db)
        return;
    sqlite3_close(db->db);
    free(db);
}

static void bind_key(sqlite3_stmt *s, const kb_tune_key *k, const char *source)
{
    sqlite3_bind_text(s, 1, k->silicon, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 2, k->driver, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 3, k->toolchain, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 4, source, -1, SQLITE_TRANSIENT);
}

static void bind_real(sqlite3_stmt *s, int i, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(s, i, v);
    else
        sqlite3_bind_null(s, i);
}

static void col_text(sqlite3_stmt *s, int i, char *out, size_t n)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    snprintf(out, n, "%s", t ? (const char *)t : "");
}

static double col_real(sqlite3_stmt *s, int i)
{
    return sqlite3_column_type(s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(s, i);
}

static void now_iso(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

#define ENTRY_COLS "case_id, problem, config, params, family, status, reason, median_us, noise, samples, " \
                   "registers, shmem_bytes, clock"

static void read_entry(sqlite3_stmt *s, int c, kb_tune_entry *e)
{
    memset(e, 0, sizeof *e);
    col_text(s, c++, e->case_id, sizeof e->case_id);
    col_text(s, c++, e->problem, sizeof e->problem);
    col_text(s, c++, e->config, sizeof e->config);
    col_text(s, c++, e->params, sizeof e->params);
    col_text(s, c++, e->family, sizeof e->family);
    col_text(s, c++, e->status, sizeof e->status);
    col_text(s, c++, e->reason, sizeof e->reason);
    e->median_us = col_real(s, c++);
    e->noise = col_real(s, c++);
    e->samples = sqlite3_column_int(s, c++);
    e->registers = sqlite3_column_type(s, c) == SQLITE_NULL ? -1 : sqlite3_column_int(s, c);
    c++;
    e->shmem_bytes = sqlite3_column_type(s, c) == SQLITE_NULL ? -1 : sqlite3_column_int(s, c);
    c++;
    col_text(s, c, e->clock, sizeof e->clock);
}

int kb_tunedb_lookup(kb_tunedb *db, const kb_tune_key *key, const char *source, const char *case_id,
                     kb_tune_entry *out)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->db,
                           "SELECT " ENTRY_COLS " FROM tune_entries WHERE silicon=?1 AND driver=?2 AND "
                           "toolchain=?3 AND source=?4 AND case_id=?5",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    bind_key(s, key, source);
    sqlite3_bind_text(s, 5, case_id, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s);
    if (rc == SQLITE_ROW)
        read_entry(s, 0, out);
    sqlite3_finalize(s);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

kb_status kb_tunedb_put(kb_tunedb *db, const kb_tune_key *key, const char *source, const kb_tune_entry *e,
                        kb_sb *err)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->db,
                           "INSERT OR REPLACE INTO tune_entries(" KEY_PK ", " ENTRY_COLS
                           ", device, sm, sm_count, emulator, time) VALUES "
                           "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22)",
                           -1, &s, NULL) != SQLITE_OK)
        return db_error(db, "tune_entries", err);
    char when[32];
    now_iso(when);
    bind_key(s, key, source);
    const char *texts[] = { e->case_id, e->problem, e->config, e->params, e->family, e->status, e->reason };
    for (int i = 0; i < 7; i++)
        sqlite3_bind_text(s, 5 + i, texts[i], -1, SQLITE_TRANSIENT);
    bind_real(s, 12, e->median_us);
    bind_real(s, 13, e->noise);
    sqlite3_bind_int(s, 14, e->samples);
    if (e->registers >= 0)
        sqlite3_bind_int(s, 15, e->registers);
    if (e->shmem_bytes >= 0)
        sqlite3_bind_int(s, 16, e->shmem_bytes);
    sqlite3_bind_text(s, 17, e->clock, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 18, key->device, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 19, key->sm);
    sqlite3_bind_int(s, 20, key->sm_count);
    sqlite3_bind_int(s, 21, key->emulator);
    sqlite3_bind_text(s, 22, when, -1, SQLITE_TRANSIENT);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? KB_OK : db_error(db, "tune_entries", err);
}

/* Older choices of the same problem on the same device under another key: stale. */
static kb_status mark_stale(kb_tunedb *db, const kb_tune_key *key, const char *source, const char *problem,
                            kb_sb *err)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->db,
                           "UPDATE tune_choices SET stale=1 WHERE problem=?5 AND device=?6 AND sm=?7 AND "
                           "NOT (silicon=?1 AND driver=?2 AND toolchain=?3 AND source=?4)",
                           -1, &s, NULL) != SQLITE_OK)
        return db_error(db, "tune_choices", err);
    bind_key(s, key, source);
    sqlite3_bind_text(s, 5, problem, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 6, key->device, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 7, key->sm);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? KB_OK : db_error(db, "tune_choices", err);
}

#define CHOICE_COLS "problem, family, case_id, config, params, median_us, lo_us, hi_us, verdict, tied, strategy, " \
                    "evaluations, space, time"

kb_status kb_tunedb_put_choice(kb_tunedb *db, const kb_tune_key *key, const char *source,
                               const kb_tune_choice_row *c, kb_sb *err)
{
    if (mark_stale(db, key, source, c->problem, err) != KB_OK)
        return KB_ERR_IO;
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->db,
                           "INSERT OR REPLACE INTO tune_choices(" KEY_PK ", " CHOICE_COLS
                           ", device, sm, sm_count, emulator, n_tied, stale) VALUES "
                           "(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21,?22,?23,0)",
                           -1, &s, NULL) != SQLITE_OK)
        return db_error(db, "tune_choices", err);
    char when[32];
    now_iso(when);
    bind_key(s, key, source);
    const char *texts[] = { c->problem, c->family, c->case_id, c->config, c->params };
    for (int i = 0; i < 5; i++)
        sqlite3_bind_text(s, 5 + i, texts[i], -1, SQLITE_TRANSIENT);
    bind_real(s, 10, c->median_us);
    bind_real(s, 11, c->lo_us);
    bind_real(s, 12, c->hi_us);
    sqlite3_bind_text(s, 13, c->tie ? "tie" : "clear", -1, SQLITE_STATIC);
    sqlite3_bind_text(s, 14, c->tied, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 15, c->strategy, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 16, c->evaluations);
    sqlite3_bind_int(s, 17, c->space);
    sqlite3_bind_text(s, 18, when, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(s, 19, key->device, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(s, 20, key->sm);
    sqlite3_bind_int(s, 21, key->sm_count);
    sqlite3_bind_int(s, 22, key->emulator);
    sqlite3_bind_int(s, 23, c->n_tied);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? KB_OK : db_error(db, "tune_choices", err);
}

static void read_choice(sqlite3_stmt *s, kb_tune_choice_row *c)
{
    memset(c, 0, sizeof *c);
    col_text(s, 0, c->key.silicon, sizeof c->key.silicon);
    col_text(s, 1, c->key.driver, sizeof c->key.driver);
    col_text(s, 2, c->key.toolchain, sizeof c->key.toolchain);
    col_text(s, 3, c->source, sizeof c->source);
    col_text(s, 4, c->problem, sizeof c->problem);
    col_text(s, 5, c->family, sizeof c->family);
    col_text(s, 6, c->case_id, sizeof c->case_id);
    col_text(s, 7, c->config, sizeof c->config);
    col_text(s, 8, c->params, sizeof c->params);
    c->median_us = col_real(s, 9);
    c->lo_us = col_real(s, 10);
    c->hi_us = col_real(s, 11);
    const unsigned char *v = sqlite3_column_text(s, 12);
    c->tie = v && strcmp((const char *)v, "tie") == 0;
    col_text(s, 13, c->tied, sizeof c->tied);
    col_text(s, 14, c->strategy, sizeof c->strategy);
    c->evaluations = sqlite3_column_int(s, 15);
    c->space = sqlite3_column_int(s, 16);
    col_text(s, 17, c->time, sizeof c->time);
    col_text(s, 18, c->key.device, sizeof c->key.device);
    c->key.sm = sqlite3_column_int(s, 19);
    c->key.sm_count = sqlite3_column_int(s, 20);
    c->key.emulator = sqlite3_column_int(s, 21);
    c->n_tied = sqlite3_column_int(s, 22);
}

int kb_tunedb_each_choice(kb_tunedb *db, int (*fn)(void *user, const kb_tune_choice_row *c), void *user)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->db,
                           "SELECT " KEY_PK ", " CHOICE_COLS ", device, sm, sm_count, emulator, n_tied FROM tune_choices "
                           "WHERE stale=0 ORDER BY sm, sm_count, device, problem",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int n = 0;
    kb_tune_choice_row *c = malloc(sizeof *c);
    while (c && sqlite3_step(s) == SQLITE_ROW) {
        read_choice(s, c);
        n++;
        if (fn(user, c))
            break;
    }
    free(c);
    sqlite3_finalize(s);
    return c ? n : -1;
}

int kb_tunedb_each_entry(kb_tunedb *db, const kb_tune_choice_row *c,
                         int (*fn)(void *user, const kb_tune_entry *e), void *user)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->db,
                           "SELECT " ENTRY_COLS " FROM tune_entries WHERE silicon=?1 AND driver=?2 AND "
                           "toolchain=?3 AND source=?4 AND problem=?5 ORDER BY case_id",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    bind_key(s, &c->key, c->source);
    sqlite3_bind_text(s, 5, c->problem, -1, SQLITE_TRANSIENT);
    int n = 0;
    kb_tune_entry *e = malloc(sizeof *e);
    while (e && sqlite3_step(s) == SQLITE_ROW) {
        read_entry(s, 0, e);
        n++;
        if (fn(user, e))
            break;
    }
    free(e);
    sqlite3_finalize(s);
    return e ? n : -1;
}
