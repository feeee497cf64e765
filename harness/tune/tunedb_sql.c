/* tunedb_sql.c - a statement's columns in order (see tunedb_sql.h). */
#include "tune/tunedb_sql.h"

#include "core/kb.h"

#include <math.h>
#include <stdio.h>

void kb_tsql_text(kb_tsql *c, const char *v) { sqlite3_bind_text(c->s, ++c->i, v, -1, SQLITE_TRANSIENT); }
void kb_tsql_int(kb_tsql *c, long long v) { sqlite3_bind_int64(c->s, ++c->i, v); }
void kb_tsql_null(kb_tsql *c) { sqlite3_bind_null(c->s, ++c->i); }

void kb_tsql_real(kb_tsql *c, double v)
{
    if (isfinite(v))
        sqlite3_bind_double(c->s, ++c->i, v);
    else
        kb_tsql_null(c);
}

void kb_tsql_int_or_null(kb_tsql *c, long long v, int known)
{
    if (known)
        kb_tsql_int(c, v);
    else
        kb_tsql_null(c);
}

void kb_tsql_get_text(kb_tsql *c, char *out, size_t n)
{
    const unsigned char *t = sqlite3_column_text(c->s, c->i++);
    snprintf(out, n, "%s", t ? (const char *)t : "");
}

long long kb_tsql_get_int(kb_tsql *c) { return sqlite3_column_int64(c->s, c->i++); }

double kb_tsql_get_real(kb_tsql *c)
{
    int i = c->i++;
    return sqlite3_column_type(c->s, i) == SQLITE_NULL ? NAN : sqlite3_column_double(c->s, i);
}

int kb_tsql_get_int_or(kb_tsql *c, int def)
{
    int i = c->i++;
    return sqlite3_column_type(c->s, i) == SQLITE_NULL ? def : sqlite3_column_int(c->s, i);
}

int kb_tsql_prepare_insert(sqlite3 *h, const char *table, const char *cols, sqlite3_stmt **s)
{
    kb_sb sql;
    kb_sb_init(&sql);
    kb_sb_printf(&sql, "INSERT OR REPLACE INTO %s(%s) VALUES (?", table, cols);
    for (const char *p = cols; *p; p++)
        if (*p == ',')
            kb_sb_printf(&sql, ",?");
    kb_sb_printf(&sql, ")");
    int rc = sql.s ? sqlite3_prepare_v2(h, sql.s, -1, s, NULL) : SQLITE_NOMEM;
    kb_sb_free(&sql);
    return rc;
}
