/* record.c - the JSON Lines results file: crash-safe appends and loading (see record.h). */
#include "results/record.h"

#include "core/fsutil.h"
#include "core/output.h"
#include "core/report.h"
#include "results/record_check.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct kb_recorder {
    int fd;
    char *path;
};

/* ---- writing ---- */

#define RECORD_START "{\"schema_version\":"   /* how every record the serialiser writes begins */

/* Does the line hold a kbench record of suite (NULL: any)? 0 yes; 1 not a record; 2 a
 * record of another suite (its name in other). */
static int line_kind(const char *line, size_t len, const char *suite, char *other, size_t n)
{
    json_error_t je;
    json_t *o = json_loadb(line, len, 0, &je);
    int kind = 1;
    if (json_is_object(o) && json_is_integer(json_object_get(o, "schema_version")) &&
        json_is_string(json_object_get(o, "case_id"))) {
        kind = 0;
        const char *s = json_string_value(json_object_get(o, "suite"));
        const char *run = json_string_value(json_object_get(o, "run_id"));
        char prefix[16];
        snprintf(prefix, sizeof prefix, "%.12s-", suite ? suite : "");
        if (suite && s && strcmp(s, suite) != 0) {
            snprintf(other, n, "%s", s);
            kind = 2;
        } else if (suite && !s && run && strncmp(run, prefix, strlen(prefix)) != 0) {
            snprintf(other, n, "of run %s", run);   /* older records: the run id's prefix */
            kind = 2;
        }
    }
    json_decref(o);
    return kind;
}

/* Check every line of text[0..len) (see kb_record_inspect). */
static kb_status inspect_text(const char *path, const char *text, size_t len, const char *suite,
                              kb_record_file *out, kb_sb *err)
{
    int lineno = 0;
    char other[160];
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        lineno++;
        size_t b = at;
        while (b < end && (text[b] == ' ' || text[b] == '\t' || text[b] == '\r')) b++;
        int kind = b < end ? line_kind(text + at, end - at, suite, other, sizeof other) : -1;
        if (kind == 0) {
            out->n_records++;
            if (!nl)
                out->tail = KB_TAIL_NO_NEWLINE;
        } else if (kind == 1 && !nl && strncmp(text + b, RECORD_START, strlen(RECORD_START)) == 0) {
            out->tail = KB_TAIL_TRUNCATED;     /* a crash cut the last write short */
            out->tail_bytes = (int64_t)(end - at);
        } else if (kind == 1) {
            kb_sb_printf(err, "%s:%d: not a kbench record (a results file holds one JSON record per line); "
                         "refusing to append to it", path, lineno);
            return KB_ERR_INPUT;
        } else if (kind == 2) {
            kb_sb_printf(err, "%s:%d: holds records of suite %s, not of suite %s; refusing to mix them "
                         "(choose another --out)", path, lineno, other, suite);
            return KB_ERR_INPUT;
        }
        at = end + 1;
    }
    return KB_OK;
}

/* Read all of the regular file open at fd (from offset 0) into a malloc'ed buffer. */
static kb_status read_fd(int fd, char **text, size_t *len)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return KB_ERR_IO;
    size_t n = (size_t)st.st_size;
    char *buf = malloc(n + 1);
    if (!buf)
        return KB_ERR_OOM;
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(fd, buf + got, n - got, (off_t)got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    buf[got] = 0;
    *text = buf;
    *len = got;
    return KB_OK;
}

/* kb_record_inspect of an open file (the caller holds its lock when it will write). */
static kb_status inspect_fd(int fd, const char *path, const char *suite, kb_record_file *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (fstat(fd, &st) != 0) {
        kb_sb_printf(err, "%s: %s", path, strerror(errno));
        return KB_ERR_IO;
    }
    if (S_ISDIR(st.st_mode)) {
        kb_sb_printf(err, "%s: is a directory, not a results file", path);
        return KB_ERR_INPUT;
    }
    if (!S_ISREG(st.st_mode) || st.st_size == 0)
        return KB_OK;
    char *text = NULL;
    size_t len = 0;
    if (read_fd(fd, &text, &len) != KB_OK) {
        kb_sb_printf(err, "%s: %s", path, strerror(errno));
        return KB_ERR_IO;
    }
    out->exists = 1;
    kb_status rc = inspect_text(path, text, len, suite, out, err);
    free(text);
    return rc;
}

kb_status kb_record_inspect(const char *path, const char *suite, kb_record_file *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT)
            return KB_OK;
        kb_sb_printf(err, "%s: %s", path, strerror(errno));
        return KB_ERR_IO;
    }
    kb_status st = inspect_fd(fd, path, suite, out, err);
    close(fd);
    return st;
}

/* Make the end of an inspected file ready for the next record. Called with it locked. */
static kb_status fix_tail(int fd, const char *path, const kb_record_file *f)
{
    if (f->tail == KB_TAIL_NO_NEWLINE) {
        kb_report(KB_REPORT_NOTE, "%s: the last record lacked its newline; added", path);
        return write(fd, "\n", 1) == 1 ? KB_OK : KB_ERR_IO;
    }
    if (f->tail != KB_TAIL_TRUNCATED)
        return KB_OK;
    struct stat st;
    if (fstat(fd, &st) != 0)
        return KB_ERR_IO;
    kb_report(KB_REPORT_WARNING, "%s: cutting a truncated last record (%lld bytes) left by an interrupted run", path,
              (long long)f->tail_bytes);
    return ftruncate(fd, st.st_size - f->tail_bytes) == 0 ? KB_OK : KB_ERR_IO;
}

kb_status kb_record_open(const char *path, const char *suite, kb_recorder **out, kb_sb *err)
{
    *out = NULL;
    kb_record_file f;
    kb_recorder *w = calloc(1, sizeof *w);
    if (!w)
        return KB_ERR_OOM;
    w->fd = -1;
    w->path = strdup(path);
    kb_status st = KB_ERR_OOM;
    if (!w->path)
        goto fail;
    /* opening (even creating) changes nothing in an existing file: inspect, under the
     * lock, before the first byte is written. The output rule (core/output.h) decides how
     * it is opened: a file appended to, a device or FIFO written through, never replaced */
    kb_sb why;
    kb_sb_init(&why);
    w->fd = kb_out_open_append(path, &st, &why);
    if (w->fd < 0) {
        kb_sb_printf(err, "cannot open results file %s", why.s);
        kb_sb_free(&why);
        kb_record_close(w);
        return st;
    }
    kb_sb_free(&why);
    st = KB_ERR_IO;
    if (flock(w->fd, LOCK_EX) != 0 && errno != ENOLCK && errno != EINVAL)
        goto fail;
    st = inspect_fd(w->fd, path, suite, &f, err);
    if (st == KB_OK && (st = fix_tail(w->fd, path, &f)) != KB_OK)
        kb_sb_printf(err, "cannot repair the end of %s: %s", path, strerror(errno));
    flock(w->fd, LOCK_UN);
    if (st != KB_OK) {
        kb_record_close(w);
        return st;
    }
    *out = w;
    return KB_OK;
fail:
    kb_sb_printf(err, "cannot open results file %s: %s", path, strerror(errno));
    if (errno == EISDIR)
        st = KB_ERR_INPUT;       /* a directory named as the file: a bad command line */
    kb_record_close(w);
    return st;
}

kb_status kb_record_write(kb_recorder *w, json_t *rec)
{
    char *text = json_dumps(rec, JSON_COMPACT);
    if (!text)
        return KB_ERR_OOM;
    size_t n = strlen(text);
    char *line = realloc(text, n + 2);
    if (!line) {
        free(text);
        return KB_ERR_OOM;
    }
    line[n] = '\n';
    line[n + 1] = 0;
    n++;

    kb_status st = KB_OK;
    flock(w->fd, LOCK_EX);  /* best effort: some file systems do not lock */
    struct stat before;
    int have_before = fstat(w->fd, &before) == 0 && S_ISREG(before.st_mode);
    size_t done = 0;
    while (done < n) {
        ssize_t k = write(w->fd, line + done, n - done);
        if (k < 0) {
            if (errno == EINTR) continue;
            st = KB_ERR_IO;
            break;
        }
        done += (size_t)k;
    }
    if (st == KB_OK && fsync(w->fd) != 0 && errno != EINVAL) /* EINVAL: a pipe or /dev/... */
        st = KB_ERR_IO;
    int why = errno;
    /* A write that failed part-way (disk full, file size limit) must not leave half a
     * line: the next record would be glued to it, and one malformed line in the middle
     * makes the whole file unreadable (kb_record_load). Cut back to where it started. */
    if (st != KB_OK && done > 0 && have_before)
        (void)ftruncate(w->fd, before.st_size);
    flock(w->fd, LOCK_UN);
    if (st != KB_OK)
        kb_report(KB_REPORT_ERROR, "cannot write to %s: %s", w->path, strerror(why));
    free(line);
    return st;
}

void kb_record_close(kb_recorder *w)
{
    if (!w)
        return;
    if (w->fd >= 0)
        close(w->fd);
    free(w->path);
    free(w);
}

/* ---- reading ---- */

void kb_record_free_all(json_t **objs, size_t n)
{
    for (size_t i = 0; objs && i < n; i++)
        json_decref(objs[i]);
    free(objs);
}

kb_status kb_record_load(const char *path, json_t ***objs, size_t *n, kb_sb *err)
{
    *objs = NULL;
    *n = 0;
    char *text = NULL;
    size_t len = 0, count = 0, cap = 0;
    json_t **arr = NULL;
    kb_status st = KB_OK;
    kb_sb why;
    kb_sb_init(&why);
    /* without blocking, a regular file of at most KB_LIMIT_RECORDS_BYTES (core/fsutil.h) */
    if ((st = kb_fs_read_input(path, KB_LIMIT_RECORDS_BYTES, "records file", &text, &len, &why)) != KB_OK) {
        if (err) kb_sb_printf(err, "%s", why.s);
        kb_sb_free(&why);
        return st == KB_ERR_OOM ? KB_ERR_OOM : st == KB_ERR_INPUT ? KB_ERR_INPUT : KB_ERR_IO;
    }
    int lineno = 0;
    for (size_t at = 0; at < len; ) {
        char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len;
        lineno++;
        size_t b = at;
        while (b < end && (text[b] == ' ' || text[b] == '\t' || text[b] == '\r')) b++;
        if (b < end) {
            json_error_t je;
            json_t *o = json_loadb(text + at, end - at, JSON_REJECT_DUPLICATES, &je);
            if (!o && !nl && strncmp(text + b, RECORD_START, strlen(RECORD_START)) == 0) {
                kb_report(KB_REPORT_WARNING, "%s:%d: skipping a truncated last record (interrupted run)", path, lineno);
                break;
            }
            kb_sb_clear(&why);
            if (!o || !json_is_object(o) || kb_record_check(o, &why) != KB_OK) {
                if (err)
                    kb_sb_printf(err, "%s:%d: %s", path, lineno, !o ? je.text : !json_is_object(o) ? "not a JSON object"
                                                                                                    : why.s);
                json_decref(o);
                st = KB_ERR_INPUT;
                goto fail;
            }
            if (count == cap) {
                size_t ncap = cap ? cap * 2 : 64;
                json_t **na = realloc(arr, ncap * sizeof *na);
                if (!na) { json_decref(o); st = KB_ERR_OOM; goto fail; }
                arr = na;
                cap = ncap;
            }
            arr[count++] = o;
        }
        at = end + 1;
    }
    free(text);
    kb_sb_free(&why);
    *objs = arr;
    *n = count;
    return KB_OK;
fail:
    kb_record_free_all(arr, count);
    free(text);
    kb_sb_free(&why);
    return st;
}

kb_status kb_record_case_ids(json_t *const *objs, size_t n, kb_strset *s)
{
    for (size_t i = 0; i < n; i++) {
        const char *id = json_string_value(json_object_get(objs[i], "case_id"));
        if (id && kb_strset_add(s, id) < 0)
            return KB_ERR_OOM;
    }
    return KB_OK;
}

kb_status kb_record_finished(const char *path, kb_strset *s, kb_sb *err)
{
    json_t **objs;
    size_t n;
    struct stat sb;
    if ((stat(path, &sb) != 0 && errno == ENOENT) || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)))
        return KB_OK;   /* nothing recorded yet, or a device or FIFO the records go through */
    kb_status st = kb_record_load(path, &objs, &n, err);
    if (st != KB_OK)
        return st;
    st = kb_record_case_ids(objs, n, s);
    kb_record_free_all(objs, n);
    return st;
}
