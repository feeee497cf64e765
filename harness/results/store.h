/* store.h - the SQLite results store (results/kbench.db by default), filled from the
 * same JSON Lines records the reports read, and queried with plain SQL.
 *
 * Identity: PRAGMA application_id 0x6b627273 ("kbrs"), user_version the schema version
 * (results/dbfile.h); kbench writes no other database.
 * Tables (schema version 1, PRAGMA user_version):
 *   runs(run_id PK, source, backend, started, imported)
 *   devices(device_id PK, name, uuid, pci_bus_id, sm, emulator; UNIQUE(name, uuid, pci_bus_id))
 *   cases(run_id, case_id, PK(run_id, case_id), time, family, variant, dtype, dims (JSON
 *         text), params (JSON text), pad, launch, seed, check_shape, backend, device_id,
 *         status, error, reason, n_checked, n_bad, max_abs_err, max_rel_err, atol, rtol,
 *         registers, spill_store_bytes, spill_load_bytes, static_shmem_bytes, clock,
 *         samples, median_us, mean_us, min_us, max_us, p10_us, p90_us, cv, noise, timed_out,
 *         flops, bytes_read, bytes_written, bytes_moved, tflops, gbps, ai, roof_tflops,
 *         pct_roof, bound, compile_ms, wall_ms, record (the whole JSON record: json_extract
 *         reaches any field))
 *   measurements(run_id, case_id, sample, time_us; PK(run_id, case_id, sample)): one row
 *         per timing sample kept in the record, in the order taken
 *   view results: cases joined with devices (device name and uuid), the usual starting point.
 * Importing is idempotent per (run_id, case_id): a case imported again replaces its rows.
 * Several processes may write one store: writes wait for the lock (busy timeout).
 */
#ifndef KB_STORE_H
#define KB_STORE_H

#include <jansson.h>
#include <stdio.h>

#include "results/record.h"
#include "results/record_json.h"

#define KB_STORE_DEFAULT_PATH "results/kbench.db"
#define KB_STORE_SCHEMA_VERSION 1

/* The one place the results store is, unless a command's --db says otherwise: $KBENCH_DB
 * when set and not empty, else KB_STORE_DEFAULT_PATH (relative to the working directory).
 * run and tune write it wherever their records go; query, model, estimate and devices
 * read it. Never NULL. */
const char *kb_store_default_path(void);

typedef struct kb_store kb_store;

/* Open (creating it and its tables) the store at path for writing: kbench's own store,
 * an empty database or an earlier kbench's store (results/dbfile.h: identified by its
 * application_id, adopted by its tables); the parent directory is created only for
 * KB_STORE_DEFAULT_PATH. "path: message" in err (may be NULL) on failure: KB_ERR_INPUT
 * (another database, not a file), KB_ERR_SETUP (read-only, locked), KB_ERR_IO. */
kb_status kb_store_open(const char *path, kb_store **out, kb_sb *err);

/* Close (NULL is fine). */
void kb_store_close(kb_store *s);

/* Insert or replace one record (one case and its samples) in one transaction. source
 * names where it came from (the JSON Lines path; may be NULL). KB_ERR_INPUT for a
 * record without run_id or case_id, KB_ERR_IO for a database error, message in err. */
kb_status kb_store_put(kb_store *s, json_t *rec, const char *source, kb_sb *err);

/* Import every record of a JSON Lines file into the store at db_path (opened and closed
 * here), all in one transaction. *n_imported (may be NULL) gets the number of records.
 * Errors as kb_record_load and kb_store_put. */
kb_status kb_store_import_jsonl(const char *db_path, const char *jsonl_path, size_t *n_imported, kb_sb *err);

#endif /* KB_STORE_H */
