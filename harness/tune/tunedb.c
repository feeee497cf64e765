/* tunedb.c - the tuning database in SQLite (tunedb.h): schema 2, typed rows. */
#include "tune/tunedb.h"

#include "core/fsutil.h"
#include "core/report.h"
#include "results/dbfile.h"
#include "tune/tunedb_migrate.h"
#include "tune/tunedb_sql.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct kb_tunedb {
    sqlite3 *db;
};

_Static_assert(KB_MAX_DIMS == 4, "tune_entries and tune_choices hold one column per dim: dim0..dim3");

#define KEY_COLS "silicon TEXT NOT NULL, driver TEXT NOT NULL, toolchain TEXT NOT NULL, source TEXT NOT NULL, "
#define KEY_PK "silicon, driver, toolchain, source"
#define PROBLEM_DDL "op TEXT, family TEXT, dtype TEXT, n_dims INTEGER, dim0 INTEGER, dim1 INTEGER, dim2 INTEGER, " \
                    "dim3 INTEGER, pad INTEGER, launch TEXT, "
#define WHERE_DDL "device TEXT, sm INTEGER, sm_count INTEGER, arch INTEGER, cpu_timing INTEGER, time TEXT, "

static const char schema[] =
    "CREATE TABLE IF NOT EXISTS tune_entries(" KEY_COLS "case_id TEXT NOT NULL, problem TEXT, " PROBLEM_DDL
    "config TEXT, variant TEXT, status TEXT, reason TEXT, median_us REAL, noise REAL, samples INTEGER, "
    "registers INTEGER, shmem_bytes INTEGER, clock TEXT, " WHERE_DDL "PRIMARY KEY(" KEY_PK ", case_id));"
    "CREATE TABLE IF NOT EXISTS tune_params(" KEY_COLS "case_id TEXT NOT NULL, idx INTEGER NOT NULL, "
    "name TEXT NOT NULL, value INTEGER NOT NULL, choice TEXT, PRIMARY KEY(" KEY_PK ", case_id, name));"
    "CREATE TABLE IF NOT EXISTS tune_choices(" KEY_COLS "problem TEXT NOT NULL, " PROBLEM_DDL
    "case_id TEXT, config TEXT, variant TEXT, median_us REAL, lo_us REAL, hi_us REAL, verdict TEXT, tied TEXT, "
    "strategy TEXT, evaluations INTEGER, space INTEGER, n_tied INTEGER, stale INTEGER NOT NULL DEFAULT 0, "
    WHERE_DDL "PRIMARY KEY(" KEY_PK ", problem));";

/* The columns the statements below bind and read, in order. */
#define PROBLEM_COLS "op, family, dtype, n_dims, dim0, dim1, dim2, dim3, pad, launch"
#define WHERE_COLS "device, sm, sm_count, arch, cpu_timing, time"
#define ENTRY_COLS "case_id, problem, config, variant, status, reason, median_us, noise, samples, registers, " \
                   "shmem_bytes, clock"
#define CHOICE_COLS "problem, case_id, config, variant, median_us, lo_us, hi_us, verdict, tied, strategy, " \
                    "evaluations, space, n_tied"
#define KEY_MATCH "silicon=?1 AND driver=?2 AND toolchain=?3 AND source=?4"

static kb_status db_error(kb_tunedb *t, const char *what, kb_sb *err)
{
    if (err)
        kb_sb_printf(err, "%s: %s", what, sqlite3_errmsg(t->db));
    return KB_ERR_IO;
}

static void bind_key(kb_tsql *c, const kb_tune_key *k, const char *source)
{
    kb_tsql_text(c, k->silicon);
    kb_tsql_text(c, k->driver);
    kb_tsql_text(c, k->toolchain);
    kb_tsql_text(c, source);
}

static void bind_problem(kb_tsql *c, const kb_tune_problem_desc *p)
{
    kb_tsql_text(c, p->op);
    kb_tsql_text(c, p->family);
    kb_tsql_text(c, p->dtype);
    kb_tsql_int(c, p->n_dims);
    for (int d = 0; d < KB_MAX_DIMS; d++) {
        if (d < p->n_dims)
            kb_tsql_int(c, p->dims[d]);
        else
            kb_tsql_null(c);
    }
    kb_tsql_int(c, p->pad);
    kb_tsql_text(c, p->launch);
}

static void read_problem(kb_tsql *c, kb_tune_problem_desc *p)
{
    kb_tsql_get_text(c, p->op, sizeof p->op);
    kb_tsql_get_text(c, p->family, sizeof p->family);
    kb_tsql_get_text(c, p->dtype, sizeof p->dtype);
    p->n_dims = (int)kb_tsql_get_int(c);
    if (p->n_dims < 0 || p->n_dims > KB_MAX_DIMS)
        p->n_dims = 0;
    for (int d = 0; d < KB_MAX_DIMS; d++)
        p->dims[d] = kb_tsql_get_int(c);
    p->pad = (int)kb_tsql_get_int(c);
    kb_tsql_get_text(c, p->launch, sizeof p->launch);
}

static void now_iso(char out[32])
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static void bind_where(kb_tsql *c, const kb_tune_key *k, const char *when)
{
    char now[32];
    now_iso(now);
    kb_tsql_text(c, k->device);
    kb_tsql_int(c, k->sm);
    kb_tsql_int(c, k->sm_count);
    kb_tsql_int(c, k->arch);
    kb_tsql_int(c, k->emulator);
    kb_tsql_text(c, when && *when ? when : now);
}

static void read_where(kb_tsql *c, kb_tune_key *k, char *when, size_t n)
{
    kb_tsql_get_text(c, k->device, sizeof k->device);
    k->sm = (int)kb_tsql_get_int(c);
    k->sm_count = (int)kb_tsql_get_int(c);
    k->arch = (int)kb_tsql_get_int(c);
    k->emulator = (int)kb_tsql_get_int(c);
    kb_tsql_get_text(c, when, n);
}

/* ---- params ---- */

static kb_status put_params(kb_tunedb *t, const kb_tune_key *key, const char *source, const char *case_id,
                            const kb_tune_config_desc *cfg, kb_sb *err)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(t->db, "DELETE FROM tune_params WHERE " KEY_MATCH " AND case_id=?5", -1, &s, NULL) !=
        SQLITE_OK)
        return db_error(t, "tune_params", err);
    kb_tsql c = { s, 0 };
    bind_key(&c, key, source);
    kb_tsql_text(&c, case_id);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE ||
        kb_tsql_prepare_insert(t->db, "tune_params", KEY_PK ", case_id, idx, name, value, choice", &s) != SQLITE_OK)
        return db_error(t, "tune_params", err);
    for (int i = 0; i < cfg->n_params && rc == SQLITE_DONE; i++) {
        const kb_tune_param *p = &cfg->params[i];
        sqlite3_reset(s);
        c = (kb_tsql){ s, 0 };
        bind_key(&c, key, source);
        kb_tsql_text(&c, case_id);
        kb_tsql_int(&c, i);
        kb_tsql_text(&c, p->name);
        kb_tsql_int(&c, p->value);
        if (p->choice[0])
            kb_tsql_text(&c, p->choice);
        else
            kb_tsql_null(&c);
        rc = sqlite3_step(s);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? KB_OK : db_error(t, "tune_params", err);
}

/* The params of case_id under (key, source), in the family's order, into cfg (its variant
 * kept). 0, or -1 on a database error or more rows than a configuration can hold. */
static int read_params(kb_tunedb *t, const kb_tune_key *key, const char *source, const char *case_id,
                       kb_tune_config_desc *cfg)
{
    sqlite3_stmt *s;
    cfg->n_params = 0;
    if (sqlite3_prepare_v2(t->db, "SELECT name, value, choice FROM tune_params WHERE " KEY_MATCH
                           " AND case_id=?5 ORDER BY idx", -1, &s, NULL) != SQLITE_OK)
        return -1;
    kb_tsql c = { s, 0 };
    bind_key(&c, key, source);
    kb_tsql_text(&c, case_id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW && cfg->n_params < KB_MAX_PARAMS) {
        kb_tune_param *p = &cfg->params[cfg->n_params++];
        c = (kb_tsql){ s, 0 };
        kb_tsql_get_text(&c, p->name, sizeof p->name);
        p->value = kb_tsql_get_int(&c);
        kb_tsql_get_text(&c, p->choice, sizeof p->choice);
    }
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : -1;
}

/* ---- entries ---- */

static void read_entry(sqlite3_stmt *s, kb_tune_entry *e)
{
    memset(e, 0, sizeof *e);
    kb_tsql c = { s, 0 };
    kb_tsql_get_text(&c, e->case_id, sizeof e->case_id);
    kb_tsql_get_text(&c, e->problem, sizeof e->problem);
    kb_tsql_get_text(&c, e->config, sizeof e->config);
    kb_tsql_get_text(&c, e->cfg.variant, sizeof e->cfg.variant);
    kb_tsql_get_text(&c, e->status, sizeof e->status);
    kb_tsql_get_text(&c, e->reason, sizeof e->reason);
    e->median_us = kb_tsql_get_real(&c);
    e->noise = kb_tsql_get_real(&c);
    e->samples = (int)kb_tsql_get_int(&c);
    e->registers = kb_tsql_get_int_or(&c, -1);
    e->shmem_bytes = kb_tsql_get_int_or(&c, -1);
    kb_tsql_get_text(&c, e->clock, sizeof e->clock);
    read_problem(&c, &e->prob);
    kb_tsql_get_text(&c, e->time, sizeof e->time);
    snprintf(e->family, sizeof e->family, "%s", e->prob.family);
}

/* Every entry matching where (after the key: ?5 bound to arg), ordered by case id, to fn. */
static int each_entry(kb_tunedb *db, const kb_tune_key *key, const char *source, const char *where, const char *arg,
                      int (*fn)(void *user, const kb_tune_entry *e), void *user)
{
    kb_sb sql;
    kb_sb_init(&sql);
    kb_sb_printf(&sql, "SELECT " ENTRY_COLS ", " PROBLEM_COLS ", time FROM tune_entries WHERE " KEY_MATCH
                 " AND %s=?5 ORDER BY case_id", where);
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(db->db, sql.s, -1, &s, NULL);
    kb_sb_free(&sql);
    if (rc != SQLITE_OK)
        return -1;
    kb_tsql c = { s, 0 };
    bind_key(&c, key, source);
    kb_tsql_text(&c, arg);
    int n = 0, bad = 0;
    kb_tune_entry *e = malloc(sizeof *e);
    while (e && !bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        read_entry(s, e);
        bad = read_params(db, key, source, e->case_id, &e->cfg) != 0;
        n++;
        if (!bad && fn(user, e))
            break;
    }
    free(e);
    sqlite3_finalize(s);
    return e && !bad && (rc == SQLITE_DONE || rc == SQLITE_ROW) ? n : -1;
}

typedef struct {
    kb_tune_entry *out;
    int found;
} lookup_ctx;

static int take_entry(void *user, const kb_tune_entry *e)
{
    lookup_ctx *l = user;
    *l->out = *e;
    l->found = 1;
    return 1;
}

int kb_tunedb_lookup(kb_tunedb *db, const kb_tune_key *key, const char *source, const char *case_id,
                     kb_tune_entry *out)
{
    lookup_ctx l = { out, 0 };
    return each_entry(db, key, source, "case_id", case_id, take_entry, &l) < 0 ? -1 : l.found;
}

int kb_tunedb_each_entry(kb_tunedb *db, const kb_tune_choice_row *c,
                         int (*fn)(void *user, const kb_tune_entry *e), void *user)
{
    return each_entry(db, &c->key, c->source, "problem", c->problem, fn, user);
}

/* The whole of a put in one savepoint: the row and its params, or nothing. */
static kb_status savepoint(kb_tunedb *t, const char *sql, kb_sb *err)
{
    return sqlite3_exec(t->db, sql, NULL, NULL, NULL) == SQLITE_OK ? KB_OK : db_error(t, sql, err);
}

static kb_status finish(kb_tunedb *t, kb_status st, kb_sb *err)
{
    if (st == KB_OK)
        return savepoint(t, "RELEASE put", err);
    sqlite3_exec(t->db, "ROLLBACK TO put; RELEASE put", NULL, NULL, NULL);
    return st;
}

kb_status kb_tunedb_put(kb_tunedb *db, const kb_tune_key *key, const char *source, const kb_tune_entry *e,
                        kb_sb *err)
{
    sqlite3_stmt *s;
    if (savepoint(db, "SAVEPOINT put", err) != KB_OK)
        return KB_ERR_IO;
    if (kb_tsql_prepare_insert(db->db, "tune_entries", KEY_PK ", " ENTRY_COLS ", " PROBLEM_COLS ", " WHERE_COLS, &s) !=
        SQLITE_OK)
        return finish(db, db_error(db, "tune_entries", err), err);
    kb_tsql c = { s, 0 };
    bind_key(&c, key, source);
    const char *texts[] = { e->case_id, e->problem, e->config, e->cfg.variant, e->status, e->reason };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        kb_tsql_text(&c, texts[i]);
    kb_tsql_real(&c, e->median_us);
    kb_tsql_real(&c, e->noise);
    kb_tsql_int(&c, e->samples);
    kb_tsql_int_or_null(&c, e->registers, e->registers >= 0);
    kb_tsql_int_or_null(&c, e->shmem_bytes, e->shmem_bytes >= 0);
    kb_tsql_text(&c, e->clock);
    bind_problem(&c, &e->prob);
    bind_where(&c, key, e->time);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    kb_status st = rc == SQLITE_DONE ? put_params(db, key, source, e->case_id, &e->cfg, err)
                                     : db_error(db, "tune_entries", err);
    return finish(db, st, err);
}

/* ---- choices ---- */

/* Older choices of the same problem on the same device under another key: stale. */
static kb_status mark_stale(kb_tunedb *db, const kb_tune_key *key, const char *source, const char *problem,
                            kb_sb *err)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->db,
                           "UPDATE tune_choices SET stale=1 WHERE problem=?5 AND device=?6 AND sm=?7 AND "
                           "NOT (" KEY_MATCH ")",
                           -1, &s, NULL) != SQLITE_OK)
        return db_error(db, "tune_choices", err);
    kb_tsql c = { s, 0 };
    bind_key(&c, key, source);
    kb_tsql_text(&c, problem);
    kb_tsql_text(&c, key->device);
    kb_tsql_int(&c, key->sm);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? KB_OK : db_error(db, "tune_choices", err);
}

/* Insert or replace choice c with its stale flag, and its winner's params. */
static kb_status insert_choice(kb_tunedb *db, const kb_tune_key *key, const char *source,
                               const kb_tune_choice_row *ch, int stale, kb_sb *err)
{
    sqlite3_stmt *s;
    if (kb_tsql_prepare_insert(db->db, "tune_choices", KEY_PK ", " CHOICE_COLS ", " PROBLEM_COLS ", " WHERE_COLS ", stale", &s) !=
        SQLITE_OK)
        return db_error(db, "tune_choices", err);
    kb_tsql c = { s, 0 };
    bind_key(&c, key, source);
    const char *texts[] = { ch->problem, ch->case_id, ch->config, ch->cfg.variant };
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++)
        kb_tsql_text(&c, texts[i]);
    kb_tsql_real(&c, ch->median_us);
    kb_tsql_real(&c, ch->lo_us);
    kb_tsql_real(&c, ch->hi_us);
    kb_tsql_text(&c, ch->noisy ? "noise" : ch->tie ? "tie" : "clear");
    kb_tsql_text(&c, ch->tied);
    kb_tsql_text(&c, ch->strategy);
    kb_tsql_int(&c, ch->evaluations);
    kb_tsql_int(&c, ch->space);
    kb_tsql_int(&c, ch->n_tied);
    bind_problem(&c, &ch->prob);
    bind_where(&c, key, ch->time);
    kb_tsql_int(&c, stale);
    int rc = sqlite3_step(s);
    sqlite3_finalize(s);
    if (rc != SQLITE_DONE)
        return db_error(db, "tune_choices", err);
    return put_params(db, key, source, ch->case_id, &ch->cfg, err);
}

kb_status kb_tunedb_put_choice(kb_tunedb *db, const kb_tune_key *key, const char *source,
                               const kb_tune_choice_row *c, kb_sb *err)
{
    if (savepoint(db, "SAVEPOINT put", err) != KB_OK)
        return KB_ERR_IO;
    kb_status st = mark_stale(db, key, source, c->problem, err);
    if (st == KB_OK)
        st = insert_choice(db, key, source, c, 0, err);
    return finish(db, st, err);
}

static void read_choice(sqlite3_stmt *s, kb_tune_choice_row *ch)
{
    memset(ch, 0, sizeof *ch);
    kb_tsql c = { s, 0 };
    kb_tsql_get_text(&c, ch->key.silicon, sizeof ch->key.silicon);
    kb_tsql_get_text(&c, ch->key.driver, sizeof ch->key.driver);
    kb_tsql_get_text(&c, ch->key.toolchain, sizeof ch->key.toolchain);
    kb_tsql_get_text(&c, ch->source, sizeof ch->source);
    kb_tsql_get_text(&c, ch->problem, sizeof ch->problem);
    kb_tsql_get_text(&c, ch->case_id, sizeof ch->case_id);
    kb_tsql_get_text(&c, ch->config, sizeof ch->config);
    kb_tsql_get_text(&c, ch->cfg.variant, sizeof ch->cfg.variant);
    ch->median_us = kb_tsql_get_real(&c);
    ch->lo_us = kb_tsql_get_real(&c);
    ch->hi_us = kb_tsql_get_real(&c);
    char verdict[16];
    kb_tsql_get_text(&c, verdict, sizeof verdict);
    ch->tie = strcmp(verdict, "tie") == 0;
    ch->noisy = strcmp(verdict, "noise") == 0;
    kb_tsql_get_text(&c, ch->tied, sizeof ch->tied);
    kb_tsql_get_text(&c, ch->strategy, sizeof ch->strategy);
    ch->evaluations = (int)kb_tsql_get_int(&c);
    ch->space = (int)kb_tsql_get_int(&c);
    ch->n_tied = (int)kb_tsql_get_int(&c);
    read_problem(&c, &ch->prob);
    read_where(&c, &ch->key, ch->time, sizeof ch->time);
    snprintf(ch->family, sizeof ch->family, "%s", ch->prob.family);
}

int kb_tunedb_each_choice(kb_tunedb *db, int (*fn)(void *user, const kb_tune_choice_row *c), void *user)
{
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db->db,
                           "SELECT " KEY_PK ", " CHOICE_COLS ", " PROBLEM_COLS ", " WHERE_COLS " FROM tune_choices "
                           "WHERE stale=0 ORDER BY cpu_timing, sm, sm_count, device, problem",
                           -1, &s, NULL) != SQLITE_OK)
        return -1;
    int n = 0, bad = 0, rc = SQLITE_DONE;
    kb_tune_choice_row *c = malloc(sizeof *c);
    while (c && !bad && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        read_choice(s, c);
        bad = read_params(db, &c->key, c->source, c->case_id, &c->cfg) != 0;
        n++;
        if (!bad && fn(user, c))
            break;
    }
    free(c);
    sqlite3_finalize(s);
    return c && !bad && (rc == SQLITE_DONE || rc == SQLITE_ROW) ? n : -1;
}

void kb_tune_choice_from_entry(const kb_tune_entry *e, kb_tune_choice_row *c)
{
    snprintf(c->problem, sizeof c->problem, "%s", e->problem);
    snprintf(c->family, sizeof c->family, "%s", e->family);
    snprintf(c->case_id, sizeof c->case_id, "%s", e->case_id);
    snprintf(c->config, sizeof c->config, "%s", e->config);
    c->prob = e->prob;
    c->cfg = e->cfg;
}

/* ---- opening: schema 2, or schema 1 migrated ---- */

static kb_status v1_entry(void *user, const kb_tune_key *k, const char *source, const kb_tune_entry *e, kb_sb *err)
{
    return kb_tunedb_put(user, k, source, e, err);
}

static kb_status v1_choice(void *user, const kb_tune_key *k, const char *source, const kb_tune_choice_row *c,
                           int stale, kb_sb *err)
{
    return insert_choice(user, k, source, c, stale, err);
}

/* Bring t to schema 2: create the tables (empty: a new database), migrate schema 1, or
 * refuse anything else (the file unchanged). */
static kb_status ready(kb_tunedb *t, const char *path, int empty, const char *where, kb_sb *err)
{
    int v1 = kb_tunedb_is_v1(t->db);
    if (v1 < 0) {
        kb_sb_printf(err, "%s: not a tuning database: %s", path, sqlite3_errmsg(t->db));
        return KB_ERR_INPUT;
    }
    if (v1) {
        kb_tunedb_v1_sink sink = { t, v1_entry, v1_choice };
        return kb_tunedb_v1_migrate(t->db, schema, &sink, path, where, err);
    }
    if (empty && sqlite3_exec(t->db, schema, NULL, NULL, NULL) != SQLITE_OK)
        return db_error(t, path, err);
    if (!kb_tunedb_is_v2(t->db)) {
        kb_sb_printf(err, "%s: not a tuning database of a schema this kbench knows (schema 2: tune_entries, "
                     "tune_params, tune_choices; docs/tuning.md)", path);
        return KB_ERR_INPUT;
    }
    return KB_OK;
}

/* Bring the database opened for writing at path to schema 2 (a new or empty one created,
 * schema 1 migrated), then set its ids (results/dbfile.h): a refusal changes nothing. */
static kb_status ready_to_write(kb_tunedb *t, const char *path, int empty, kb_sb *err)
{
    kb_status st = ready(t, path, empty, "in place", err);
    return st == KB_OK ? kb_db_claim(t->db, path, &kb_db_tune_kind, err) : st;
}

kb_status kb_tunedb_open(const char *path, kb_tunedb **out, kb_sb *err)
{
    *out = NULL;
    if (!strcmp(path, KB_TUNEDB_DEFAULT_PATH))   /* kbench's own place: results/ made */
        kb_fs_mkdir_parent(path);
    kb_tunedb *t = calloc(1, sizeof *t);
    if (!t) {
        kb_sb_printf(err, "%s: out of memory", path);
        return KB_ERR_OOM;
    }
    /* kbench's own tuning database, an empty one or an earlier kbench's (results/dbfile.h) */
    int empty = 0;
    kb_status st = kb_db_open_owner(path, &kb_db_tune_kind, &t->db, &empty, err);
    if (st == KB_OK)
        st = ready_to_write(t, path, empty, err);
    if (st != KB_OK) {
        kb_tunedb_close(t);
        return st;
    }
    *out = t;
    return KB_OK;
}

/* A schema-1 file read only: copied into a database in memory, which is migrated. */
static kb_status into_memory(kb_tunedb *t, const char *path, kb_sb *err)
{
    sqlite3 *mem;
    if (sqlite3_open(":memory:", &mem) != SQLITE_OK) {
        sqlite3_close(mem);
        kb_sb_printf(err, "%s: out of memory", path);
        return KB_ERR_OOM;
    }
    sqlite3_backup *b = sqlite3_backup_init(mem, "main", t->db, "main");
    int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_ERROR;
    sqlite3_backup_finish(b);
    sqlite3_close(t->db);
    t->db = mem;
    if (rc != SQLITE_DONE)
        return db_error(t, path, err);
    return ready(t, path, 0, "in memory for this read (the file is unchanged; kbench tune --db migrates it in "
                 "place)", err);
}

kb_status kb_tunedb_open_readonly(const char *path, kb_tunedb **out, kb_sb *err)
{
    *out = NULL;
    kb_tunedb *t = calloc(1, sizeof *t);
    if (!t) {
        kb_sb_printf(err, "%s: out of memory", path);
        return KB_ERR_OOM;
    }
    int empty = 0;
    kb_status st = kb_db_open_read(path, &kb_db_tune_kind, &t->db, &empty, err);
    if (st == KB_OK && empty) {
        kb_sb_printf(err, "%s: an empty file, not a tuning database (kbench tune fills one)", path);
        st = KB_ERR_INPUT;
    }
    int v1 = st == KB_OK ? kb_tunedb_is_v1(t->db) : 0;
    if (st == KB_OK)
        st = v1 > 0 ? into_memory(t, path, err) : ready(t, path, 0, "", err);
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
