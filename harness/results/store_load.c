/* store_load.c - a run's records from the SQLite store (see store_load.h). */
#include "results/store_load.h"

#include "results/dbfile.h"
#include "results/record_check.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

kb_status kb_store_load_run(const char *db_path, const char *run_id, kb_report_run *out, kb_sb *err)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    json_t **recs = NULL;
    size_t n = 0, cap = 0;
    kb_status rc = KB_ERR_INPUT;
    memset(out, 0, sizeof *out);
    kb_sb why;
    kb_sb_init(&why);
    /* read-only, and only kbench's own store (results/dbfile.h) */
    if ((rc = kb_db_open_read(db_path, &kb_db_store_kind, &db, NULL, &why)) != KB_OK) {
        kb_sb_printf(err, "%s", why.s);
        goto done;
    }
    rc = KB_ERR_INPUT;
    if (sqlite3_prepare_v2(db, "SELECT record FROM cases WHERE run_id = ? ORDER BY rowid", -1, &st, NULL) !=
        SQLITE_OK) {
        kb_sb_printf(err, "%s: no results store with a cases table", db_path);
        goto done;
    }
    sqlite3_bind_text(st, 1, run_id, -1, SQLITE_STATIC);
    int step;
    while ((step = sqlite3_step(st)) == SQLITE_ROW) {
        json_t *rec = json_loads((const char *)sqlite3_column_text(st, 0), JSON_REJECT_DUPLICATES, NULL);
        if (!json_is_object(rec)) {
            json_decref(rec);
            continue;
        }
        kb_sb_clear(&why);
        if (kb_record_check(rec, &why) != KB_OK) {   /* the numbers, as a records file's */
            kb_sb_printf(err, "%s: a record of run %s: %s", db_path, run_id, why.s);
            json_decref(rec);
            goto done;
        }
        if (n == cap) {
            json_t **grown = realloc(recs, (cap = cap ? 2 * cap : 64) * sizeof *grown);
            if (!grown) {
                json_decref(rec);
                rc = KB_ERR_OOM;
                goto done;
            }
            recs = grown;
        }
        recs[n++] = rec;
    }
    if (step != SQLITE_DONE || n == 0) {
        kb_sb_printf(err, "%s: no record of run %s in the store", db_path, run_id);
        goto done;
    }
    rc = kb_report_run_from(recs, n, run_id, out);
    recs = NULL;
    n = 0;
done:
    for (size_t i = 0; i < n; i++) json_decref(recs[i]);
    free(recs);
    sqlite3_finalize(st);
    sqlite3_close(db);
    kb_sb_free(&why);
    return rc;
}
