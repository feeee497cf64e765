/* tunedb_sink.h - the tuning database as a record sink of a `kbench tune` session
 * (session/sink.h): every configuration a case evaluates becomes an entry of the tuning
 * database (tune/tunedb.h) under the session's key - silicon, driver, toolchain and the
 * family's source hash - as its record is written. The tuner reads and writes the same
 * database through the state it keeps here (lookups, choices, pooled re-measurements).
 */
#ifndef KB_TUNEDB_SINK_H
#define KB_TUNEDB_SINK_H

#include "session/session.h"
#include "tune/tunedb.h"

#define KB_TUNE_MAX_FAMILIES 64

typedef struct {
    kb_session *s;                 /* whose backend and device key the entries */
    kb_tunedb *db;
    kb_tune_key key;
    char source[KB_TUNE_MAX_FAMILIES][40]; /* per family: its kernel source's hash ("" not yet) */
    int hold;                      /* 1: records are not entered (re-measurements, pooled later) */
    int failed;                    /* writes the database refused (locked, full): the run exits 3 */
} kb_tunedb_sink;

/* Open the database at path for session s (its key from s's device and toolchain).
 * KB_OK with *out set; the caller hands it to kb_session_add_sink(s, kb_tunedb_sink_of(*out)),
 * after which the session owns it (it stays valid until kb_session_close). Otherwise
 * kb_tunedb_open's status with err filled, *out NULL. */
kb_status kb_tunedb_sink_open(kb_session *s, const char *path, kb_tunedb_sink **out, kb_sb *err);

/* t as a sink (KB_SINK_MIRROR: entered once its record is written). */
kb_sink kb_tunedb_sink_of(kb_tunedb_sink *t);

/* The hash of family f's kernel source with its headers for the session's device and
 * toolchain: the compile cache's key with no defines. "" when it cannot be read. */
const char *kb_tunedb_sink_source(kb_tunedb_sink *t, int family, const kb_family *f);

/* The entry of one evaluated case (item, its result r) into *e. */
void kb_tunedb_entry_of(const kb_cases_item *item, const kb_case_result *r, kb_tune_entry *e);

/* Replace e's timing with the statistics of n pooled samples (or, when failed, a
 * kb_case_status, or nothing pooled, mark it failed) and enter it under source. The
 * database's failure is reported; returns nothing. */
void kb_tunedb_sink_pool(kb_tunedb_sink *t, const char *source, kb_tune_entry *e, const double *pool, int n,
                         int failed);

#endif /* KB_TUNEDB_SINK_H */
