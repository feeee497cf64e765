/* test_dbfile.c - kbench's databases identify themselves (results/dbfile.h): new and
 * empty files are claimed (application_id, user_version), kbench's own are opened,
 * earlier kbench databases are adopted by their tables, and everything else - another
 * application's database, kbench's other kind, a foreign table, a newer schema, a text
 * file, a device, a directory - is refused byte-identical; read-only and locked databases
 * are setup errors; what is only read is opened read-only and stays byte-identical. */
#include "check.h"
#include "results/dbfile.h"
#include "results/store.h"
#include "tune/tunedb.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[128];

static const char *at(const char *name)
{
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

/* Run sql on a new database at path (outside dbfile). */
static void make_db(const char *path, const char *sql)
{
    sqlite3 *db;
    CHECK(sqlite3_open(path, &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
}

static long long pragma(const char *path, const char *what)
{
    sqlite3 *db;
    sqlite3_stmt *st;
    long long v = -1;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA %s", what);
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
    }
    sqlite3_close(db);
    return v;
}

/* The bytes of path (caller frees), for identity checks. */
static char *bytes(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    char *b = calloc(1, 1 << 20);
    *n = f ? fread(b, 1, 1 << 20, f) : 0;
    if (f)
        fclose(f);
    return b;
}

static int unchanged(const char *path, char *before, size_t n_before)
{
    size_t n;
    char *now = bytes(path, &n);
    int same = n == n_before && memcmp(now, before, n) == 0;
    free(now);
    free(before);
    return same;
}

static kb_status open_w(const char *path, const kb_db_kind *k, kb_sb *err)
{
    sqlite3 *db = NULL;
    kb_sb_clear(err);
    kb_status st = kb_db_open_write(path, k, &db, err);
    CHECK((st == KB_OK) == (db != NULL));
    sqlite3_close(db);
    return st;
}

static void test_claim_and_adopt(void)
{
    kb_sb err;
    kb_sb_init(&err);
    CHECK(open_w(at("new.db"), &kb_db_store_kind, &err) == KB_OK);
    CHECK(pragma(at("new.db"), "application_id") == KB_DB_APP_ID_STORE && pragma(at("new.db"), "user_version") == 1);
    close(open(at("zero.db"), O_CREAT | O_WRONLY, 0644));                     /* a 0-byte file: empty */
    CHECK(open_w(at("zero.db"), &kb_db_tune_kind, &err) == KB_OK);
    CHECK(pragma(at("zero.db"), "application_id") == KB_DB_APP_ID_TUNE);
    /* made by an earlier kbench: no ids, recognised by its tables and adopted */
    make_db(at("old_store.db"), "CREATE TABLE runs(run_id); CREATE TABLE cases(run_id, case_id); "
                                "CREATE TABLE devices(x); PRAGMA user_version = 1;");
    CHECK(kb_db_kind_of(at("old_store.db")) == &kb_db_store_kind);
    CHECK(open_w(at("old_store.db"), &kb_db_store_kind, &err) == KB_OK);
    CHECK(pragma(at("old_store.db"), "application_id") == KB_DB_APP_ID_STORE);
    make_db(at("old_tune.db"), "CREATE TABLE tune_entries(x); CREATE TABLE tune_choices(y);");
    CHECK(open_w(at("old_tune.db"), &kb_db_tune_kind, &err) == KB_OK);
    CHECK(pragma(at("old_tune.db"), "application_id") == KB_DB_APP_ID_TUNE);
    CHECK(pragma(at("old_tune.db"), "user_version") == kb_db_tune_kind.schema_version);
    kb_sb_free(&err);
}

/* Each refusal leaves the file byte-identical. */
static void refused(const char *path, const kb_db_kind *k, kb_status want, const char *needle)
{
    kb_sb err;
    kb_sb_init(&err);
    size_t n;
    char *before = bytes(path, &n);
    kb_status st = open_w(path, k, &err);
    CHECK_MSG(st == want && strstr(err.s, needle) && strstr(err.s, path), "%s: %d %s", path, st, err.s);
    CHECK_MSG(unchanged(path, before, n), "%s changed", path);
    kb_sb_free(&err);
}

static void test_refusals(void)
{
    make_db(at("foreign.db"), "CREATE TABLE notes(text);");
    refused(at("foreign.db"), &kb_db_store_kind, KB_ERR_INPUT, "holds the tables notes");
    refused(at("foreign.db"), &kb_db_tune_kind, KB_ERR_INPUT, "does not write into another database");
    make_db(at("other_app.db"), "PRAGMA application_id = 1234;");
    refused(at("other_app.db"), &kb_db_tune_kind, KB_ERR_INPUT, "another application");
    refused(at("new.db"), &kb_db_tune_kind, KB_ERR_INPUT, "kbench's results store, not a tuning database");
    refused(at("old_tune.db"), &kb_db_store_kind, KB_ERR_INPUT, "kbench's tuning database");
    make_db(at("old_tune2.db"), "CREATE TABLE tune_entries(x); CREATE TABLE tune_choices(y);");
    refused(at("old_tune2.db"), &kb_db_store_kind, KB_ERR_INPUT, "made by an earlier kbench");
    make_db(at("newer.db"), "PRAGMA application_id = 1801613939; PRAGMA user_version = 99;");   /* "kbrs" */
    refused(at("newer.db"), &kb_db_store_kind, KB_ERR_INPUT, "newer kbench");
    FILE *f = fopen(at("text.db"), "w");
    fputs("a text file that is long enough to have a header, and is not a database at all\n", f);
    fclose(f);
    refused(at("text.db"), &kb_db_store_kind, KB_ERR_INPUT, "not an SQLite database");
    kb_sb err;
    kb_sb_init(&err);
    CHECK(open_w("/dev/null", &kb_db_store_kind, &err) == KB_ERR_INPUT && strstr(err.s, "not a database"));
    mkdir(at("adir"), 0755);
    CHECK(open_w(at("adir"), &kb_db_tune_kind, &err) == KB_ERR_INPUT);
    kb_sb_free(&err);
}

static void test_read_only_and_locked(void)
{
    make_db(at("ro.db"), "");
    kb_sb err;
    kb_sb_init(&err);
    CHECK(open_w(at("ro.db"), &kb_db_tune_kind, &err) == KB_OK);
    chmod(at("ro.db"), 0444);
    refused(at("ro.db"), &kb_db_tune_kind, KB_ERR_SETUP, "read-only");   /* even as root */
    chmod(at("ro.db"), 0644);
    /* locked by another connection for longer than the busy timeout (here 100 ms) */
    kb_db_kind quick = kb_db_tune_kind;
    quick.busy_ms = 100;
    sqlite3 *holder;
    CHECK(sqlite3_open(at("ro.db"), &holder) == SQLITE_OK);
    CHECK(sqlite3_exec(holder, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK);
    refused(at("ro.db"), &quick, KB_ERR_SETUP, "locked");
    sqlite3_exec(holder, "COMMIT", NULL, NULL, NULL);
    sqlite3_close(holder);
    /* through the tuning database's own open: the same */
    kb_tunedb *t = NULL;
    chmod(at("ro.db"), 0444);
    CHECK(kb_tunedb_open(at("ro.db"), &t, &err) == KB_ERR_SETUP && t == NULL);
    chmod(at("ro.db"), 0644);
    kb_sb_free(&err);
}

static void test_read(void)
{
    kb_sb err;
    kb_sb_init(&err);
    close(open(at("empty_read.db"), O_CREAT | O_WRONLY, 0644));
    sqlite3 *db = NULL;
    int empty = 0;
    CHECK(kb_db_open_read(at("empty_read.db"), &kb_db_tune_kind, &db, &empty, &err) == KB_OK && empty);
    sqlite3_close(db);
    struct stat sb;
    CHECK(stat(at("empty_read.db"), &sb) == 0 && sb.st_size == 0);          /* read-only: not made a database */
    kb_tunedb *t = NULL;
    CHECK(kb_tunedb_open_readonly(at("empty_read.db"), &t, &err) == KB_ERR_INPUT && strstr(err.s, "empty"));
    CHECK(stat(at("empty_read.db"), &sb) == 0 && sb.st_size == 0);
    kb_sb_clear(&err);
    CHECK(kb_db_open_read(at("missing.db"), NULL, &db, NULL, &err) == KB_ERR_INPUT && access(at("missing.db"), F_OK));
    kb_sb_clear(&err);
    CHECK(kb_db_open_read(at("foreign.db"), &kb_db_store_kind, &db, NULL, &err) == KB_ERR_INPUT);
    CHECK(kb_db_open_read(at("foreign.db"), NULL, &db, NULL, &err) == KB_OK);   /* any SQLite file, for query */
    sqlite3_close(db);
    /* the store's writer refuses a tuning database */
    kb_store *s = NULL;
    kb_sb_clear(&err);
    CHECK(kb_store_open(at("zero.db"), &s, &err) == KB_ERR_INPUT && s == NULL && strstr(err.s, "tuning database"));
    kb_sb_free(&err);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb_test_dbfile.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    RUN(test_claim_and_adopt);
    RUN(test_refusals);
    RUN(test_read_only_and_locked);
    RUN(test_read);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
    TEST_MAIN_END();
}
