/* est_store.c - a store's measured ceilings for a modelled SKU (est_store.h). */
#include "estimate/est_store.h"

#include "results/ceilings.h"
#include "results/dbfile.h"

#include <sqlite3.h>
#include <string.h>
#include <sys/stat.h>

static const char *col_text(sqlite3_stmt *st, int i)
{
    const unsigned char *t = sqlite3_column_text(st, i);
    return t ? (const char *)t : "";
}

/* 1 when data/peaks.json matches device name to the SKU of p. */
static int same_sku(const char *name, int sm, const char *peaks_path, const kb_peaks *p)
{
    kb_device_info d;
    kb_peaks q;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.sm = sm;
    d.caps = KB_CAP_ROOFLINE;
    return kb_peaks_for_device(&d, peaks_path, &q, NULL) == KB_OK && q.have_sheet && p->have_sheet &&
           strcmp(q.sku, p->sku) == 0;
}

/* The device (name, uuid) of the store's GPU ceilings whose SKU is p's, measured last:
 * 1 with *d filled, else 0. */
static int find_device(const char *db_path, const char *peaks_path, const kb_peaks *p, kb_device_info *d)
{
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int found = 0;
    const char *sql = "SELECT c.device, c.device_uuid, max(c.time) AS t, max(d.sm) FROM ceilings c"
                      " JOIN devices d USING (device_id) WHERE c.clock = 'gpu'"
                      " GROUP BY c.device, c.device_uuid ORDER BY t DESC";
    kb_sb why;
    kb_sb_init(&why);
    if (kb_db_open_read(db_path, &kb_db_store_kind, &db, NULL, &why) == KB_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        while (!found && sqlite3_step(st) == SQLITE_ROW) {
            if (!same_sku(col_text(st, 0), sqlite3_column_int(st, 3), peaks_path, p))
                continue;
            memset(d, 0, sizeof *d);
            snprintf(d->name, sizeof d->name, "%s", col_text(st, 0));
            snprintf(d->uuid, sizeof d->uuid, "%s", col_text(st, 1));
            found = 1;
        }
    }
    sqlite3_finalize(st);
    sqlite3_close(db);
    kb_sb_free(&why);
    return found;
}

kb_status kb_est_store_check(const char *db_path, kb_sb *err)
{
    struct stat sb;
    if (!db_path || lstat(db_path, &sb) != 0)
        return KB_OK;   /* no store (yet): the datasheet and the assumed fractions */
    sqlite3 *db = NULL;
    kb_status st = kb_db_open_read(db_path, &kb_db_store_kind, &db, NULL, err);
    sqlite3_close(db);
    return st;
}

int kb_est_store_ceilings(const char *db_path, const char *peaks_path, kb_peaks *p, char *note, size_t n)
{
    kb_device_info d;
    if (n)
        note[0] = 0;
    if (!db_path || !find_device(db_path, peaks_path, p, &d))
        return 0;
    int got = kb_ceilings_load(db_path, &d, p);
    if (got > 0)
        snprintf(note, n, "measured on %s %s: %s", d.name, d.uuid, p->measured_note);
    return got;
}
