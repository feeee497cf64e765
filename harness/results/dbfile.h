/* dbfile.h - kbench's own SQLite databases identify themselves (issue 28), and are opened
 * through here: the results store (results/kbench.db) and the tuning database
 * (results/tune.db).
 *
 * Identity: PRAGMA application_id holds a fixed kbench value, one per kind (below), and
 * PRAGMA user_version the kind's schema version. A database is written only when it is
 * of the kind asked for, or empty (a new path, a 0-byte file, or an SQLite file with no
 * table: claimed - the ids are set before any table is created); anything else is refused
 * before a byte changes:
 *   - another application's database (application_id not 0 and not kbench's),
 *   - kbench's other kind (a tuning database given as a results store, and vice versa),
 *   - a database without ids holding tables that are not the kind's,
 *   - a database of a newer schema than this kbench knows,
 *   - not an SQLite file at all, or not a regular file (a device, a FIFO).
 * Databases made by kbench before the ids existed (application_id 0) are recognised by
 * their tables - the results store by `runs` and `cases`, the tuning database by
 * `tune_entries` and `tune_choices` - and adopted: opened for writing, their
 * application_id is set (and user_version, when 0, to the schema version their tables
 * are); opened for reading, they are read as they are.
 * What kbench only reads it opens read-only (SQLITE_OPEN_READONLY): nothing is created,
 * not even a journal. A database that is read-only (chmod a-w, a read-only directory or
 * file system) or locked by another process beyond the busy timeout is a setup error
 * (KB_ERR_SETUP, exit 3) naming the path, found before any work. */
#ifndef KB_DBFILE_H
#define KB_DBFILE_H

#include <sqlite3.h>
#include <stdint.h>

#include "core/kb.h"

#define KB_DB_APP_ID_STORE 0x6b627273   /* "kbrs": the results store */
#define KB_DB_APP_ID_TUNE 0x6b627464    /* "kbtd": the tuning database */

/* A kind of kbench database. */
typedef struct {
    const char *name;            /* "results store", "tuning database" */
    int32_t app_id;              /* its PRAGMA application_id */
    int schema_version;          /* the PRAGMA user_version this kbench writes */
    const char *markers[3];      /* tables every such database has (NULL-terminated) */
    int busy_ms;                 /* how long a locked database is waited for [ms] */
} kb_db_kind;

extern const kb_db_kind kb_db_store_kind;   /* results/kbench.db: schema 1, runs + cases */
extern const kb_db_kind kb_db_tune_kind;    /* results/tune.db: schema 2, tune_entries + tune_choices */

/* Open path for writing as a database of kind k (created when the path is new): the
 * refusals above, then the ids set on an empty or adopted database. *out is ready for the
 * kind's CREATE TABLE IF NOT EXISTS. KB_OK; KB_ERR_INPUT (not a database of kind k, a
 * device, a directory, a newer schema), KB_ERR_SETUP (read-only, locked, no permission,
 * its directory missing) or KB_ERR_OOM, with err = "PATH: why"; *out NULL on error. */
kb_status kb_db_open_write(const char *path, const kb_db_kind *k, sqlite3 **out, kb_sb *err);

/* As kb_db_open_write, but the ids are left as they are, for the kind's owner to set with
 * kb_db_claim once its tables are at k's schema (a migration that fails must leave the
 * file as it was). *empty is set when the database holds no table (a new path, a 0-byte
 * file). Statuses as kb_db_open_write. */
kb_status kb_db_open_owner(const char *path, const kb_db_kind *k, sqlite3 **out, int *empty, kb_sb *err);

/* Set db's application_id to k's and its user_version to k->schema_version, where they
 * differ: the caller's tables are now of that schema. KB_OK, or KB_ERR_SETUP/_INPUT with
 * "path: why" in err. */
kb_status kb_db_claim(sqlite3 *db, const char *path, const kb_db_kind *k, kb_sb *err);

/* Open an existing path read-only as a database of kind k (NULL: any SQLite database).
 * *empty (may be NULL) is set when it holds no table at all (a 0-byte file). KB_OK;
 * KB_ERR_INPUT (missing, not SQLite, another kind, a newer schema), KB_ERR_SETUP (no
 * permission, locked) or KB_ERR_OOM, with err = "PATH: why"; *out NULL on error. */
kb_status kb_db_open_read(const char *path, const kb_db_kind *k, sqlite3 **out, int *empty, kb_sb *err);

/* The kind of kbench database path is (by its application_id, else by its tables); NULL
 * when it is none, empty, missing or unreadable. Opens it read-only for the look. */
const kb_db_kind *kb_db_kind_of(const char *path);

/* KB_ERR_SETUP for a status of SQLite that means the environment (read-only, locked,
 * busy, I/O, full disk, cannot open), else KB_ERR_INPUT. */
kb_status kb_db_status(int sqlite_rc);

#endif /* KB_DBFILE_H */
