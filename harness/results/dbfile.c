/* dbfile.c - kbench's databases identify themselves (see dbfile.h). */
#include "results/dbfile.h"

#include "core/output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const kb_db_kind kb_db_store_kind = { "results store", KB_DB_APP_ID_STORE, 1, { "runs", "cases", NULL }, 30000 };
const kb_db_kind kb_db_tune_kind = { "tuning database", KB_DB_APP_ID_TUNE, 2, { "tune_entries", "tune_choices", NULL },
                                     10000 };

static const kb_db_kind *const kinds[] = { &kb_db_store_kind, &kb_db_tune_kind };
#define N_KINDS ((int)(sizeof kinds / sizeof kinds[0]))

/* What a database is, as far as kbench is concerned. */
typedef enum { DB_MINE, DB_EMPTY, DB_ADOPT } db_state;

kb_status kb_db_status(int rc)
{
    switch (rc & 0xff) {
    case SQLITE_READONLY: case SQLITE_BUSY: case SQLITE_LOCKED: case SQLITE_IOERR: case SQLITE_FULL:
    case SQLITE_CANTOPEN: case SQLITE_PERM: case SQLITE_AUTH:
        return KB_ERR_SETUP;
    case SQLITE_NOMEM:
        return KB_ERR_OOM;
    default:
        return KB_ERR_INPUT;
    }
}

/* The message for an SQLite failure rc on path, and its status. */
static kb_status fail(sqlite3 *db, int rc, const char *path, const char *doing, kb_sb *err)
{
    int code = rc & 0xff;
    const char *why = code == SQLITE_BUSY || code == SQLITE_LOCKED ? "locked by another process (still, after the "
                                                                     "busy timeout)"
                    : code == SQLITE_READONLY ? "read-only (kbench cannot write it)"
                    : code == SQLITE_NOTADB ? "not an SQLite database"
                    : db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    kb_sb_printf(err, "%s: %s%s%s", path, doing ? doing : "", doing ? ": " : "", why);
    return kb_db_status(rc);
}

/* One integer PRAGMA (application_id, user_version). An SQLite status. */
static int pragma_int(sqlite3 *db, const char *sql, long long *v)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        *v = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The tables of db: their names ("a, b, c", the first few) and, per kind, whether all its
 * markers are there. *n gets the count. An SQLite status. */
static int list_tables(sqlite3 *db, int *n, int has_markers[N_KINDS], kb_sb *names)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
                                    "ORDER BY name", -1, &st, NULL);
    int found[N_KINDS][3] = { { 0 } };
    *n = 0;
    while (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        if (!name)
            continue;
        if ((*n)++ < 6)
            kb_sb_printf(names, "%s%s", *n > 1 ? ", " : "", *n == 6 ? "..." : name);
        for (int k = 0; k < N_KINDS; k++)
            for (int m = 0; kinds[k]->markers[m]; m++)
                found[k][m] |= !strcmp(name, kinds[k]->markers[m]);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_finalize(st);
    else
        sqlite3_finalize(st);
    for (int k = 0; k < N_KINDS; k++) {
        has_markers[k] = 1;
        for (int m = 0; kinds[k]->markers[m]; m++)
            has_markers[k] &= found[k][m];
    }
    return rc;
}

static const kb_db_kind *kind_of_id(long long id)
{
    for (int k = 0; k < N_KINDS; k++)
        if (kinds[k]->app_id == id)
            return kinds[k];
    return NULL;
}

/* Decide what db (at path) is for kind k (NULL: any). KB_OK with *state, or a refusal. */
static kb_status identify(sqlite3 *db, const char *path, const kb_db_kind *k, db_state *state, kb_sb *err)
{
    long long id = 0, version = 0;
    int rc = pragma_int(db, "PRAGMA application_id", &id);
    if (rc == SQLITE_OK)
        rc = pragma_int(db, "PRAGMA user_version", &version);
    int n = 0, markers[N_KINDS];
    kb_sb names;
    kb_sb_init(&names);
    if (rc == SQLITE_OK)
        rc = list_tables(db, &n, markers, &names);
    kb_status st = KB_OK;
    const kb_db_kind *other = kind_of_id(id);
    if (rc != SQLITE_OK) {
        st = fail(db, rc, path, NULL, err);
    } else if (!k) {
        *state = n == 0 ? DB_EMPTY : DB_MINE;
    } else if (id == k->app_id) {
        *state = DB_MINE;
        if (version > k->schema_version) {
            kb_sb_printf(err, "%s: a %s of schema version %lld, made by a newer kbench (this one knows up to %d)",
                         path, k->name, version, k->schema_version);
            st = KB_ERR_INPUT;
        }
    } else if (other || id != 0) {
        if (other)
            kb_sb_printf(err, "%s: kbench's %s, not a %s", path, other->name, k->name);
        else
            kb_sb_printf(err, "%s: another application's SQLite database (application_id 0x%08llx), not a kbench %s",
                         path, (unsigned long long)(id & 0xffffffffll), k->name);
        st = KB_ERR_INPUT;
    } else if (n == 0) {
        *state = DB_EMPTY;
    } else {
        int want = k == &kb_db_store_kind ? 0 : 1;
        if (markers[want]) {
            *state = DB_ADOPT;   /* made by a kbench before the ids: recognised by its tables */
        } else {
            if (markers[1 - want])
                kb_sb_printf(err, "%s: kbench's %s (made by an earlier kbench), not a %s", path, kinds[1 - want]->name,
                             k->name);
            else
                kb_sb_printf(err, "%s: not a kbench %s (it holds the tables %s): kbench does not write into another "
                             "database", path, k->name, names.s);
            st = KB_ERR_INPUT;
        }
    }
    kb_sb_free(&names);
    return st;
}

/* Set the ids of an empty or adopted database of kind k, under a write lock. */
static kb_status claim(sqlite3 *db, const char *path, const kb_db_kind *k, db_state state, kb_sb *err)
{
    char sql[160];
    long long version = 0;
    int rc = pragma_int(db, "PRAGMA user_version", &version);
    snprintf(sql, sizeof sql, "PRAGMA application_id = %d", (int)k->app_id);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    if (rc == SQLITE_OK && (state == DB_EMPTY || version == 0)) {
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", k->schema_version);
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    return rc == SQLITE_OK ? KB_OK : fail(db, rc, path, state == DB_EMPTY ? "claiming it" : "adopting it", err);
}

/* A write lock taken and given back: a read-only or locked database is found now, before
 * any work, not at the first record. */
static kb_status check_writable(sqlite3 *db, const char *path, kb_sb *err)
{
    if (sqlite3_db_readonly(db, "main") == 1)
        return fail(db, SQLITE_READONLY, path, NULL, err);
    int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        return fail(db, rc, path, NULL, err);
    rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    return rc == SQLITE_OK ? KB_OK : fail(db, rc, path, NULL, err);
}

/* Open path for writing as kind k: identified, the write lock tried; *state filled. */
static kb_status open_write(const char *path, const kb_db_kind *k, sqlite3 **out, db_state *state, kb_sb *err)
{
    *out = NULL;
    kb_status st = kb_out_db_check(path, err);   /* a regular file or a new path, writable */
    if (st != KB_OK)
        return st;
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        st = fail(db, rc, path, "cannot open", err);
        sqlite3_close(db);
        return st;
    }
    sqlite3_busy_timeout(db, k->busy_ms);
    if ((st = identify(db, path, k, state, err)) == KB_OK)
        st = check_writable(db, path, err);
    if (st != KB_OK) {
        sqlite3_close(db);
        return st;
    }
    *out = db;
    return KB_OK;
}

kb_status kb_db_open_write(const char *path, const kb_db_kind *k, sqlite3 **out, kb_sb *err)
{
    db_state state;
    kb_status st = open_write(path, k, out, &state, err);
    if (st == KB_OK && state != DB_MINE)
        st = claim(*out, path, k, state, err);
    if (st != KB_OK && *out) {
        sqlite3_close(*out);
        *out = NULL;
    }
    return st;
}

kb_status kb_db_open_owner(const char *path, const kb_db_kind *k, sqlite3 **out, int *empty, kb_sb *err)
{
    db_state state = DB_MINE;
    kb_status st = open_write(path, k, out, &state, err);
    *empty = st == KB_OK && state == DB_EMPTY;
    return st;
}

kb_status kb_db_claim(sqlite3 *db, const char *path, const kb_db_kind *k, kb_sb *err)
{
    long long id = 0, version = 0;
    int rc = pragma_int(db, "PRAGMA application_id", &id);
    if (rc == SQLITE_OK)
        rc = pragma_int(db, "PRAGMA user_version", &version);
    char sql[80];
    if (rc == SQLITE_OK && id != k->app_id) {
        snprintf(sql, sizeof sql, "PRAGMA application_id = %d", (int)k->app_id);
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK && version != k->schema_version) {
        snprintf(sql, sizeof sql, "PRAGMA user_version = %d", k->schema_version);
        rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
    }
    return rc == SQLITE_OK ? KB_OK : fail(db, rc, path, "setting its identity", err);
}

kb_status kb_db_open_read(const char *path, const kb_db_kind *k, sqlite3 **out, int *empty, kb_sb *err)
{
    *out = NULL;
    if (empty)
        *empty = 0;
    struct stat sb;
    if (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        kb_sb_printf(err, "%s: %s", path, stat(path, &sb) != 0 ? "no such database" : "not a regular file");
        return KB_ERR_INPUT;
    }
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    kb_status st = KB_OK;
    if (rc != SQLITE_OK)
        st = fail(db, rc, path, "cannot open", err);
    db_state state = DB_MINE;
    if (st == KB_OK) {
        sqlite3_busy_timeout(db, k ? k->busy_ms : 10000);
        st = identify(db, path, k, &state, err);
    }
    if (st != KB_OK) {
        sqlite3_close(db);
        return st;
    }
    if (empty)
        *empty = state == DB_EMPTY;
    *out = db;
    return KB_OK;
}

const kb_db_kind *kb_db_kind_of(const char *path)
{
    sqlite3 *db = NULL;
    const kb_db_kind *found = NULL;
    long long id = 0;
    int n = 0, markers[N_KINDS];
    kb_sb names;
    kb_sb_init(&names);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        pragma_int(db, "PRAGMA application_id", &id) == SQLITE_OK &&
        list_tables(db, &n, markers, &names) == SQLITE_OK) {
        found = kind_of_id(id);
        for (int k = 0; k < N_KINDS && !found && id == 0; k++)
            if (markers[k])
                found = kinds[k];
    }
    sqlite3_close(db);
    kb_sb_free(&names);
    return found;
}
