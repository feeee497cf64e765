/* tunedb.h - the tuning database (SQLite; results/tune.db by default).
 *
 * Every evaluated configuration and every problem's choice are keyed by
 *   silicon     device name, compute capability, SM count, memory, L2 and SM clock
 *               ("NVIDIA H100 80GB HBM3|sm_90|132 SMs|81559 MiB|L2 51200 KiB|1980 MHz")
 *   driver      the CUDA driver version ("13.0"; "none" on the emulator)
 *   toolchain   the backend's toolchain id (NVRTC's version; the emulator's C++ compiler)
 *   source      a hash of the family's kernel source with every header it includes (the
 *               compile cache's key without defines: the same text, compiler and arch)
 * plus the case id (configuration) or the problem key (choice). A rerun with the same key
 * reuses what was measured (resume); a changed driver, toolchain, source or GPU misses, so
 * the configuration is measured again. Adding a configuration to a suite adds a row and
 * invalidates nothing. A newer choice for the same problem on the same device under a
 * different key marks the older ones stale (kept, never exported).
 *
 * Tables (schema 2, issue 20: typed, so nothing downstream parses an id):
 *   tune_entries  one row per evaluated configuration: the problem as typed columns (op,
 *                 family, dtype, n_dims, dim0..dim3, pad, launch), the configuration's
 *                 variant, status, timing, resources, where it ran
 *   tune_params   the configuration params of each entry, one row per param (name, value,
 *                 choice: the choice's name for a choice param, NULL for an integer), in the
 *                 family's order (idx); a choice's params are its winner entry's
 *   tune_choices  one row per problem and key: the winner, its 95% interval (tune/winner.h:
 *                 in log space; NULL when its noise is unknown), the verdict - clear, tie, or
 *                 noise when there is no winner because the leader's noise is above winner.h's
 *                 bound (the row keeps the leader, never exported) - the tied runners-up,
 *                 the problem's typed columns again
 * The emulator has its own device identity: device "kbench emulator (sm_XX)", sm 0 and SM
 * count 0 (no GPU's compute capability), arch XX (what its kernels were compiled for) and
 * cpu_timing 1 - never the key of the GPU it compiles for. A database of schema 1 (params as
 * JSON text, problems as id strings, the emulator keyed as sm_90) is migrated when opened
 * (tune/tunedb_migrate.h).
 */
#ifndef KB_TUNEDB_H
#define KB_TUNEDB_H

#define KB_TUNEDB_DEFAULT_PATH "results/tune.db"

#include "tune/tunedb_key.h"
#include "tune/tunedb_types.h"

typedef struct kb_tunedb kb_tunedb;

/* Open the database at path to read and write (created, with its tables; results/ made
 * for the default path): kbench's own tuning database, an empty one, or an earlier
 * kbench's (results/dbfile.h: application_id 0x6b627464 "kbtd", adopted by its tables);
 * one of schema 1 is migrated in place in one transaction (tune/tunedb_migrate.h; said
 * through kb_report), and only then are its ids set. "path: message" in err on failure:
 * KB_ERR_INPUT (another database, a directory or device, a schema this kbench does not
 * know, a schema-1 row that cannot be migrated: the file left as it was, the row named),
 * KB_ERR_SETUP (read-only, locked, no permission), KB_ERR_IO, KB_ERR_OOM. */
kb_status kb_tunedb_open(const char *path, kb_tunedb **out, kb_sb *err);

/* Open an existing tuning database at path to read only: the file is never written, not
 * even a journal. One of schema 1 is copied into memory and migrated there (said through
 * kb_report). KB_ERR_INPUT when path is missing, empty, not SQLite or not a tuning
 * database; KB_ERR_SETUP when it cannot be read (locked, no permission); "path: message"
 * in err. */
kb_status kb_tunedb_open_readonly(const char *path, kb_tunedb **out, kb_sb *err);
void kb_tunedb_close(kb_tunedb *db);

/* Copy the problem and configuration of entry e into choice c (its winner). */
void kb_tune_choice_from_entry(const kb_tune_entry *e, kb_tune_choice_row *c);

/* The entry of case_id under (key, source): 1 with *out filled, 0 when absent, -1 on a
 * database error. */
int kb_tunedb_lookup(kb_tunedb *db, const kb_tune_key *key, const char *source, const char *case_id,
                     kb_tune_entry *out);
/* Insert or replace an entry and its params (its time now unless e->time is set). KB_OK or
 * KB_ERR_IO (message in err). */
kb_status kb_tunedb_put(kb_tunedb *db, const kb_tune_key *key, const char *source, const kb_tune_entry *e,
                        kb_sb *err);
/* Insert or replace a choice (its time now unless c->time is set), marking the same
 * problem's choices on the same device under another key stale. KB_OK or KB_ERR_IO. */
kb_status kb_tunedb_put_choice(kb_tunedb *db, const kb_tune_key *key, const char *source,
                               const kb_tune_choice_row *c, kb_sb *err);

/* Call fn for every current (not stale) choice, ordered by device and problem; fn returns
 * nonzero to stop. Returns the number visited, or -1 on a database error. */
int kb_tunedb_each_choice(kb_tunedb *db, int (*fn)(void *user, const kb_tune_choice_row *c), void *user);
/* Call fn for every entry of problem under the key and source of choice c. As above. */
int kb_tunedb_each_entry(kb_tunedb *db, const kb_tune_choice_row *c,
                         int (*fn)(void *user, const kb_tune_entry *e), void *user);

#endif /* KB_TUNEDB_H */
