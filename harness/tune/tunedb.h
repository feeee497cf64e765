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
 * Tables: tune_entries (one row per evaluated configuration), tune_choices (one row per
 * problem and key: the winner, its 95% interval, tie or clear, the tied runners-up).
 * Emulator rows carry emulator = 1 and clock "cpu": CPU timings, never GPU winners.
 */
#ifndef KB_TUNEDB_H
#define KB_TUNEDB_H

#include "backend/backend.h"

#define KB_TUNEDB_DEFAULT_PATH "results/tune.db"

typedef struct {
    char silicon[320];
    char device[128];
    int sm, sm_count;
    char driver[32];
    char toolchain[160];
    int emulator;                  /* the timings are CPU time */
} kb_tune_key;

/* The key of device d with the backend's toolchain id. */
void kb_tune_key_make(const kb_device_info *d, const char *toolchain, kb_tune_key *out);

/* One evaluated configuration. */
typedef struct {
    char case_id[512];
    char problem[384];
    char config[256];
    char params[512];              /* JSON object of the config params, the variant first {"variant":"mma","BM":64} */
    char family[32];
    char status[24];               /* a kb_case_status name */
    char reason[1200];
    double median_us;              /* [us], NAN when not measured */
    double noise;                  /* relative standard error of the median, NAN unknown */
    int samples;
    int registers, shmem_bytes;    /* -1 unknown */
    char clock[8];                 /* "gpu", "cpu", "" */
} kb_tune_entry;

/* A problem's choice. */
typedef struct {
    char problem[384];
    char family[32];
    char case_id[512];
    char config[256];
    char params[512];              /* as kb_tune_entry.params, of the winner */
    double median_us, lo_us, hi_us; /* [us] */
    int tie;
    int n_tied;                    /* configurations within the winner's noise */
    char tied[1024];               /* the runners-up within noise: "config (median us)", "; "-joined */
    char strategy[16];
    int evaluations, space;        /* evaluated / configurations in the problem's space */
    char time[32];                 /* ISO-8601 UTC */
    char lookup[192];              /* "" for an exact hit; how a nearest-GPU fallback was chosen (export) */
    kb_tune_key key;               /* filled by the readers */
    char source[40];               /* filled by the readers */
} kb_tune_choice_row;

typedef struct kb_tunedb kb_tunedb;

/* Open the database at path for writing (created, with its tables; results/ made for the
 * default path): kbench's own tuning database, an empty one, or an earlier kbench's
 * (results/dbfile.h: application_id 0x6b627464 "kbtd", adopted by its tables). "path:
 * message" in err on failure: KB_ERR_INPUT (another database, a directory or device),
 * KB_ERR_SETUP (read-only, locked, no permission), KB_ERR_IO, KB_ERR_OOM. */
kb_status kb_tunedb_open(const char *path, kb_tunedb **out, kb_sb *err);

/* Open an existing tuning database read-only (export): nothing is created or changed.
 * KB_ERR_INPUT when path is missing, empty, not SQLite or not a tuning database;
 * KB_ERR_SETUP when it cannot be read (locked, no permission); "path: message" in err. */
kb_status kb_tunedb_open_read(const char *path, kb_tunedb **out, kb_sb *err);
void kb_tunedb_close(kb_tunedb *db);

/* The entry of case_id under (key, source): 1 with *out filled, 0 when absent, -1 on a
 * database error. */
int kb_tunedb_lookup(kb_tunedb *db, const kb_tune_key *key, const char *source, const char *case_id,
                     kb_tune_entry *out);
/* Insert or replace an entry. KB_OK or KB_ERR_IO (message in err). */
kb_status kb_tunedb_put(kb_tunedb *db, const kb_tune_key *key, const char *source, const kb_tune_entry *e,
                        kb_sb *err);
/* Insert or replace a choice (its time set here), marking the same problem's choices on
 * the same device under another key stale. KB_OK or KB_ERR_IO. */
kb_status kb_tunedb_put_choice(kb_tunedb *db, const kb_tune_key *key, const char *source,
                               const kb_tune_choice_row *c, kb_sb *err);

/* Call fn for every current (not stale) choice, ordered by device and problem; fn returns
 * nonzero to stop. Returns the number visited, or -1 on a database error. */
int kb_tunedb_each_choice(kb_tunedb *db, int (*fn)(void *user, const kb_tune_choice_row *c), void *user);
/* Call fn for every entry of problem under the key and source of choice c. As above. */
int kb_tunedb_each_entry(kb_tunedb *db, const kb_tune_choice_row *c,
                         int (*fn)(void *user, const kb_tune_entry *e), void *user);

#endif /* KB_TUNEDB_H */
