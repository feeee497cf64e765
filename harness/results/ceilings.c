/* ceilings.c - a device's measured ceilings from the results store (see ceilings.h). */
#include "results/ceilings.h"

#include "results/dbfile.h"

#include <sqlite3.h>
#include <string.h>

/* The rows of the ceilings view for device d (and timing clock, when not NULL), best per
 * kind; NULL when the store cannot be read or has no such view. */
static sqlite3_stmt *select_rows(const char *db_path, const kb_device_info *d, const char *clock, sqlite3 **db)
{
    sqlite3_stmt *st = NULL;
    *db = NULL;
    kb_sb why;   /* read-only, a regular file, the results store (results/dbfile.h): else none */
    kb_sb_init(&why);
    kb_status opened = kb_db_open_read(db_path, &kb_db_store_kind, db, NULL, &why);
    kb_sb_free(&why);
    if (opened != KB_OK)
        goto fail;
    const char *sql = "SELECT kind, unit, value, clock, sm_clock_mhz, run_id, time FROM ceilings"
                      " WHERE device = ?1 AND device_uuid = ?2 AND (?3 IS NULL OR clock = ?3)"
                      " ORDER BY unit, kind";
    if (sqlite3_prepare_v2(*db, sql, -1, &st, NULL) != SQLITE_OK)
        goto fail;
    sqlite3_bind_text(st, 1, d->name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 2, d->uuid, -1, SQLITE_TRANSIENT);
    if (clock)
        sqlite3_bind_text(st, 3, clock, -1, SQLITE_STATIC);
    return st;
fail:
    sqlite3_close(*db);
    *db = NULL;
    return NULL;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

int kb_ceilings_load(const char *db_path, const kb_device_info *d, kb_peaks *p)
{
    sqlite3 *db;
    sqlite3_stmt *st = select_rows(db_path, d, "gpu", &db);
    int n = 0;
    char latest[40] = "", run[64] = "";
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        kb_peaks_add_measured(p, col_text(st, 0), sqlite3_column_double(st, 2));
        if (strcmp(col_text(st, 6), latest) > 0) {
            snprintf(latest, sizeof latest, "%s", col_text(st, 6));
            snprintf(run, sizeof run, "%s", col_text(st, 5));
        }
        n++;
    }
    if (n)
        snprintf(p->measured_note, sizeof p->measured_note, "%d measured ceilings from %s (latest run %s, %s)", n,
                 db_path, run, latest);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}

int kb_ceilings_print(const char *db_path, const kb_device_info *d, FILE *out)
{
    sqlite3 *db;
    sqlite3_stmt *st = select_rows(db_path, d, NULL, &db);
    int n = 0, cpu = 0;
    while (st && sqlite3_step(st) == SQLITE_ROW) {
        const char *kind = col_text(st, 0), *unit = col_text(st, 1), *clock = col_text(st, 3);
        double v = sqlite3_column_double(st, 2);
        cpu |= strcmp(clock, "gpu") != 0;
        if (!n++)
            fprintf(out, "\n  measured ceilings (best ok result per kind in %s; suites/ceilings.yaml):\n", db_path);
        if (!strcmp(unit, "launches/s"))   /* shown as the time of one launch */
            fprintf(out, "    %-22s %12.4g %-8s %s timing", kind, 1e6 / v, "us", clock);
        else
            fprintf(out, "    %-22s %12.4g %-8s %s timing", kind, v, unit, clock);
        if (sqlite3_column_type(st, 4) != SQLITE_NULL)
            fprintf(out, ", SM clock %d MHz", sqlite3_column_int(st, 4));
        fprintf(out, "  (run %s, %s)\n", col_text(st, 5), col_text(st, 6));
    }
    if (cpu)
        fprintf(out, "    cpu timing: CPU figures of the emulator running the kernels, never GPU ceilings\n");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return n;
}
