/* tunedb_sql.h - binding and reading a statement's columns in order, for the tuning
 * database's statements (tune/tunedb.c, tune/tunedb_migrate.c): each call takes the next
 * column, so a statement's bindings read as its column list does.
 */
#ifndef KB_TUNEDB_SQL_H
#define KB_TUNEDB_SQL_H

#include <sqlite3.h>
#include <stddef.h>

typedef struct {
    sqlite3_stmt *s;
    int i;                         /* columns bound (binding is 1-based) or read so far (0-based) */
} kb_tsql;

/* Bind the next parameter: text, an integer, a real (NULL when not finite), NULL, or an
 * integer when known else NULL. */
void kb_tsql_text(kb_tsql *c, const char *v);
void kb_tsql_int(kb_tsql *c, long long v);
void kb_tsql_real(kb_tsql *c, double v);
void kb_tsql_null(kb_tsql *c);
void kb_tsql_int_or_null(kb_tsql *c, long long v, int known);

/* Read the next column: text into out (n bytes; "" for NULL), an integer (0 for NULL), a real
 * (NAN for NULL), an integer or def for NULL. */
void kb_tsql_get_text(kb_tsql *c, char *out, size_t n);
long long kb_tsql_get_int(kb_tsql *c);
double kb_tsql_get_real(kb_tsql *c);
int kb_tsql_get_int_or(kb_tsql *c, int def);

/* Prepare "INSERT OR REPLACE INTO table(cols) VALUES (?, ...)" with a parameter per column
 * of cols (comma-separated). sqlite3_prepare_v2's result code. */
int kb_tsql_prepare_insert(sqlite3 *h, const char *table, const char *cols, sqlite3_stmt **s);

#endif /* KB_TUNEDB_SQL_H */
