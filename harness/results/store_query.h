/* store_query.h - SQL over the results store, printed for people or tools. */
#ifndef KB_STORE_QUERY_H
#define KB_STORE_QUERY_H

#include <stdio.h>

#include "core/kb.h"

typedef enum { KB_QUERY_TABLE = 0, KB_QUERY_CSV, KB_QUERY_JSON } kb_query_format;

/* Run the SQL text (one or more statements) on the store at db_path and print the rows
 * of every statement that returns some to out: an aligned table with a header (NULL
 * printed empty), CSV with a header (RFC 4180), or a JSON array of objects per
 * statement. Read-only unless writable: the database is opened read-only (any SQLite
 * file) and a writing statement, or an ATTACH (named in the message), fails; writable, it
 * must be kbench's store or tuning database, or new or empty (results/dbfile.h).
 * KB_ERR_IO when the store cannot be opened (missing, read-only or locked for a write),
 * KB_ERR_INPUT for an SQL error or a file that is not such a database, with the message
 * in err. */
kb_status kb_store_query(const char *db_path, const char *sql, kb_query_format fmt, int writable,
                         FILE *out, kb_sb *err);

#endif /* KB_STORE_QUERY_H */
