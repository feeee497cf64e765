/* tunedb_migrate.h - tuning databases of schema 1 (kbench before issue 20), read row by
 * row into the typed rows of schema 2 (tune/tunedb_types.h), for tunedb.c to store.
 *
 * Schema 1 kept the problem as its key string ("gemm(layout=nt,alpha=1,beta=0)/fp16/
 * 64x64x64/pad0/eager"), the configuration as a JSON text ({"variant":"mma","BM":64,...}:
 * choice params as their index) and keyed emulator rows as the GPU the emulator compiled
 * for (sm 90). Here, once: the key string is split, the JSON read (a choice param's name
 * looked up in the family registry when the family is known), and an emulator row re-keyed
 * with the emulator's identity (tune/tunedb_key.h). A row that does not parse stops the
 * migration with its table, row and text: nothing is guessed.
 */
#ifndef KB_TUNEDB_MIGRATE_H
#define KB_TUNEDB_MIGRATE_H

#include <sqlite3.h>

#include "tune/tunedb_types.h"

/* Where the converted rows go (tunedb.c: its inserts). Each returns KB_OK, or a status
 * with err filled to stop. */
typedef struct {
    void *user;
    kb_status (*entry)(void *user, const kb_tune_key *k, const char *source, const kb_tune_entry *e, kb_sb *err);
    kb_status (*choice)(void *user, const kb_tune_key *k, const char *source, const kb_tune_choice_row *c,
                        int stale, kb_sb *err);
} kb_tunedb_v1_sink;

/* 1 when h holds a schema-1 tuning database (tune_entries with a `params` column), 0
 * when not (schema 2, or no tables yet), -1 when h cannot be read (not a database). */
int kb_tunedb_is_v1(sqlite3 *h);

/* Every row of the schema-1 tables tune_entries_v1 and tune_choices_v1 of h (renamed so by
 * the caller), converted, to sink; the counts into *n_entries, *n_choices. KB_OK, or
 * KB_ERR_INPUT naming the first row that does not convert, or the sink's status. */
kb_status kb_tunedb_v1_read(sqlite3 *h, const kb_tunedb_v1_sink *sink, int *n_entries, int *n_choices, kb_sb *err);

/* 1 when h holds schema 2's tables and columns (tune/tunedb.h), else 0. */
int kb_tunedb_is_v2(sqlite3 *h);

/* Migrate h's schema-1 tables to schema 2 in one transaction: rename them, create schema
 * (the SQL of schema 2's tables), convert every row into sink, drop them, commit - or roll
 * back, leaving the file as it was. Says what it did through kb_report (path, where: "in
 * place"). KB_OK; KB_ERR_INPUT with "path: ... left as it was: <the row>" in err. */
kb_status kb_tunedb_v1_migrate(sqlite3 *h, const char *schema, const kb_tunedb_v1_sink *sink, const char *path,
                               const char *where, kb_sb *err);

/* Split a schema-1 problem key into out. 0, or -1 when it is not one. */
int kb_tunedb_v1_problem(const char *key, kb_tune_problem_desc *out);

/* Read a schema-1 params text of a configuration of family (may be unknown) into out.
 * 0, or -1 when it is not a JSON object of a string variant and integer params, or holds
 * more params than KB_MAX_PARAMS. */
int kb_tunedb_v1_params(const char *json, const char *family, kb_tune_config_desc *out);

#endif /* KB_TUNEDB_MIGRATE_H */
