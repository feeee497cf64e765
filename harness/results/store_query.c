/* store_query.c - `kbench query`: SQL over the results store, printed as an aligned
 * table, CSV or JSON (see store_query.h). */
#include "results/store_query.h"

#include "results/dbfile.h"
#include "results/report_csv.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The rows of one statement, as text, for the aligned table (widths need every row). */
typedef struct {
    int ncol;
    char **cells;        /* [rows * ncol], NULL for SQL NULL */
    size_t nrows, cap;
    int *numeric;        /* [ncol] 1 while every non-null value is a number: right-aligned */
} rowset;

static void rowset_free(rowset *r)
{
    for (size_t i = 0; r->cells && i < r->nrows * (size_t)r->ncol; i++)
        free(r->cells[i]);
    free(r->cells);
    free(r->numeric);
}

static json_t *column_json(sqlite3_stmt *st, int c)
{
    switch (sqlite3_column_type(st, c)) {
    case SQLITE_INTEGER: return json_integer(sqlite3_column_int64(st, c));
    case SQLITE_FLOAT: return json_real(sqlite3_column_double(st, c));
    case SQLITE_NULL: return json_null();
    case SQLITE_BLOB: {
        /* blobs do not occur in kbench's tables; show their size rather than bytes */
        char b[48];
        snprintf(b, sizeof b, "<blob %d bytes>", sqlite3_column_bytes(st, c));
        return json_string(b);
    }
    default: return json_stringn((const char *)sqlite3_column_text(st, c), (size_t)sqlite3_column_bytes(st, c));
    }
}

static void print_table(FILE *out, sqlite3_stmt *st, const rowset *r)
{
    size_t *w = calloc((size_t)r->ncol, sizeof *w);
    if (!w && r->ncol)   /* not an empty table */
        kb_out_of_memory("the column widths", (size_t)r->ncol * sizeof *w);
    for (int c = 0; c < r->ncol; c++)
        w[c] = strlen(sqlite3_column_name(st, c));
    for (size_t i = 0; i < r->nrows; i++)
        for (int c = 0; c < r->ncol; c++) {
            const char *v = r->cells[i * r->ncol + c];
            if (v && strlen(v) > w[c]) w[c] = strlen(v);
        }
    for (int c = 0; c < r->ncol; c++)
        fprintf(out, "%s%-*s", c ? "  " : "", c == r->ncol - 1 ? 0 : (int)w[c], sqlite3_column_name(st, c));
    fputc('\n', out);
    for (int c = 0; c < r->ncol; c++) {
        fputs(c ? "  " : "", out);
        for (size_t k = 0; k < w[c]; k++) fputc('-', out);
    }
    fputc('\n', out);
    for (size_t i = 0; i < r->nrows; i++) {
        for (int c = 0; c < r->ncol; c++) {
            const char *v = r->cells[i * r->ncol + c];
            int last = c == r->ncol - 1;
            if (r->numeric[c])
                fprintf(out, "%s%*s", c ? "  " : "", (int)w[c], v ? v : "");
            else
                fprintf(out, "%s%-*s", c ? "  " : "", last ? 0 : (int)w[c], v ? v : "");
        }
        fputc('\n', out);
    }
    fprintf(out, "(%zu row%s)\n", r->nrows, r->nrows == 1 ? "" : "s");
    free(w);
}

/* Step st to the end, printing its rows in fmt. SQLITE_DONE on success. */
static int run_statement(sqlite3_stmt *st, kb_query_format fmt, FILE *out)
{
    int ncol = sqlite3_column_count(st), rc;
    rowset r = { .ncol = ncol };
    json_t *arr = NULL;
    if (ncol > 0 && fmt == KB_QUERY_TABLE) {
        r.numeric = malloc((size_t)ncol * sizeof *r.numeric);
        if (!r.numeric) return SQLITE_NOMEM;
        for (int c = 0; c < ncol; c++) r.numeric[c] = 1;
    }
    if (ncol > 0 && fmt == KB_QUERY_CSV) {
        for (int c = 0; c < ncol; c++) {
            if (c) fputc(',', out);
            kb_csv_field(out, sqlite3_column_name(st, c));
        }
        fputs("\r\n", out);
    }
    if (ncol > 0 && fmt == KB_QUERY_JSON && !(arr = json_array()))
        return SQLITE_NOMEM;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        if (fmt == KB_QUERY_CSV) {
            for (int c = 0; c < ncol; c++) {
                if (c) fputc(',', out);
                kb_csv_field(out, (const char *)sqlite3_column_text(st, c));
            }
            fputs("\r\n", out);
        } else if (fmt == KB_QUERY_JSON) {
            json_t *o = json_object();
            for (int c = 0; o && c < ncol; c++)
                json_object_set_new(o, sqlite3_column_name(st, c), column_json(st, c));
            if (!o || json_array_append_new(arr, o) != 0) { rc = SQLITE_NOMEM; break; }
        } else {
            if (r.nrows == r.cap) {
                size_t ncap = r.cap ? r.cap * 2 : 64;
                char **nc = realloc(r.cells, ncap * (size_t)ncol * sizeof *nc);
                if (!nc) { rc = SQLITE_NOMEM; break; }
                r.cells = nc;
                r.cap = ncap;
            }
            for (int c = 0; c < ncol; c++) {
                int type = sqlite3_column_type(st, c);
                const char *t = (const char *)sqlite3_column_text(st, c);
                r.cells[r.nrows * ncol + c] = t ? strdup(t) : NULL;
                if (t && !r.cells[r.nrows * ncol + c])   /* not a NULL cell */
                    kb_out_of_memory("a query result", strlen(t) + 1);
                if (type == SQLITE_TEXT || type == SQLITE_BLOB) r.numeric[c] = 0;
            }
            r.nrows++;
        }
    }
    if (rc == SQLITE_DONE && ncol > 0) {
        if (fmt == KB_QUERY_TABLE)
            print_table(out, st, &r);
        else if (fmt == KB_QUERY_JSON) {
            json_dumpf(arr, out, JSON_INDENT(2));
            fputc('\n', out);
        }
    }
    json_decref(arr);
    rowset_free(&r);
    return rc;
}

/* Read-only queries may not attach other files (ATTACH can create one) or write; the
 * authorizer denies the first (keeping the file's name for the message), and
 * sqlite3_stmt_readonly catches the second (VACUUM INTO among them, which would write a
 * new file). */
typedef struct {
    char attach[512];    /* the file an ATTACH named, "" when none was refused */
} query_guard;

static int deny_attach(void *user, int action, const char *a, const char *b, const char *c, const char *d)
{
    (void)b; (void)c; (void)d;
    if (action != SQLITE_ATTACH && action != SQLITE_DETACH)
        return SQLITE_OK;
    query_guard *g = user;
    snprintf(g->attach, sizeof g->attach, "%s", action == SQLITE_ATTACH && a ? a : "(detach)");
    return SQLITE_DENY;
}

/* The database for the query: read-only (any SQLite file), or, with --write, kbench's own
 * store or tuning database, or a new or empty one (results/dbfile.h). */
static kb_status open_for_query(const char *db_path, int writable, sqlite3 **db, kb_sb *err)
{
    if (writable) {
        const kb_db_kind *k = kb_db_kind_of(db_path);
        return kb_db_open_write(db_path, k ? k : &kb_db_store_kind, db, err);
    }
    return kb_db_open_read(db_path, NULL, db, NULL, err);
}

kb_status kb_store_query(const char *db_path, const char *sql, kb_query_format fmt, int writable,
                         FILE *out, kb_sb *err)
{
    sqlite3 *db = NULL;
    kb_sb why;
    kb_sb_init(&why);
    kb_status opened = open_for_query(db_path, writable, &db, &why);
    if (opened != KB_OK) {
        if (err) kb_sb_printf(err, "%s", why.s);
        kb_sb_free(&why);
        return opened == KB_ERR_INPUT && access(db_path, F_OK) == 0 ? KB_ERR_INPUT : KB_ERR_IO;
    }
    kb_sb_free(&why);
    query_guard guard = { "" };
    if (!writable)
        sqlite3_set_authorizer(db, deny_attach, &guard);
    kb_status st = KB_OK;
    const char *tail = sql;
    int first = 1;
    while (tail && *tail) {
        sqlite3_stmt *stmt = NULL;
        int prc = sqlite3_prepare_v2(db, tail, -1, &stmt, &tail);
        if (prc != SQLITE_OK && guard.attach[0]) {
            if (err)
                kb_sb_printf(err, "the query is read-only: ATTACH of '%s' refused (kbench query --write allows it)",
                             guard.attach);
            st = KB_ERR_INPUT;
            break;
        }
        if (prc != SQLITE_OK) {
            if (err)
                kb_sb_printf(err, "SQL error: %s", sqlite3_errmsg(db));
            st = KB_ERR_INPUT;
            break;
        }
        if (!stmt)          /* whitespace or a comment */
            continue;
        if (!writable && !sqlite3_stmt_readonly(stmt)) {
            if (err) kb_sb_printf(err, "the query is read-only: '%.60s' would write (kbench query --write allows it)",
                                  sqlite3_sql(stmt));
            sqlite3_finalize(stmt);
            st = KB_ERR_INPUT;
            break;
        }
        if (!first && sqlite3_column_count(stmt) > 0 && fmt == KB_QUERY_TABLE)
            fputc('\n', out);
        int rc = run_statement(stmt, fmt, out);
        if (sqlite3_column_count(stmt) > 0)
            first = 0;
        if (rc != SQLITE_DONE) {
            if (err) kb_sb_printf(err, "SQL error: %s", rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db));
            sqlite3_finalize(stmt);
            st = KB_ERR_INPUT;
            break;
        }
        sqlite3_finalize(stmt);
    }
    sqlite3_close(db);
    return st;
}
