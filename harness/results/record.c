/* record.c - the JSON Lines results file: crash-safe appends and loading (see record.h). */
#include "results/record.h"
#include "core/fsutil.h"

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

/* Cut a last line that has no newline (a write interrupted by a crash), so that the
 * next record starts on a line of its own. Called with the file locked. */
static kb_status cut_partial_tail(int fd, const char *path)
{
    struct stat st;
    if (fstat(fd, &st) != 0)
        return KB_ERR_IO;
    off_t end = st.st_size, pos = end;
    char buf[4096];
    while (pos > 0) {
        size_t chunk = pos < (off_t)sizeof buf ? (size_t)pos : sizeof buf;
        if (pread(fd, buf, chunk, pos - (off_t)chunk) != (ssize_t)chunk)
            return KB_ERR_IO;
        size_t i = chunk;
        while (i > 0 && buf[i - 1] != '\n') i--;
        if (i > 0) { pos = pos - (off_t)chunk + (off_t)i; break; }
        pos -= (off_t)chunk;
    }
    if (pos == end)
        return KB_OK;
    fprintf(stderr, "kbench: warning: %s: cutting a truncated last record (%lld bytes) left by an interrupted run\n",
            path, (long long)(end - pos));
    return ftruncate(fd, pos) == 0 ? KB_OK : KB_ERR_IO;
}

kb_status kb_record_open(const char *path, kb_recorder **out)
{
    *out = NULL;
    kb_recorder *w = calloc(1, sizeof *w);
    if (!w)
        return KB_ERR_OOM;
    w->fd = -1;
    w->path = strdup(path);
    if (!w->path)
        goto fail;
    if (kb_fs_mkdir_parent(path) != KB_OK)
        goto fail;
    w->fd = open(path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (w->fd < 0)
        goto fail;
    if (flock(w->fd, LOCK_EX) != 0)
        goto fail;
    kb_status st = cut_partial_tail(w->fd, path);
    flock(w->fd, LOCK_UN);
    if (st != KB_OK)
        goto fail;
    *out = w;
    return KB_OK;
fail:
    fprintf(stderr, "kbench: cannot open results file %s: %s\n", path, strerror(errno));
    kb_record_close(w);
    return KB_ERR_IO;
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
        fprintf(stderr, "kbench: cannot write to %s: %s\n", w->path, strerror(why));
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
    if (kb_fs_read_all(path, &text, &len) != KB_OK) {
        if (err) kb_sb_printf(err, "%s: %s", path, strerror(errno));
        return KB_ERR_IO;
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
            json_t *o = json_loadb(text + at, end - at, 0, &je);
            if (!o && !nl) {
                fprintf(stderr, "kbench: warning: %s:%d: skipping a truncated last record (interrupted run)\n",
                        path, lineno);
                break;
            }
            if (!o || !json_is_object(o)) {
                if (err)
                    kb_sb_printf(err, "%s:%d: %s", path, lineno, o ? "not a JSON object" : je.text);
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
    *objs = arr;
    *n = count;
    return KB_OK;
fail:
    kb_record_free_all(arr, count);
    free(text);
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
    if (access(path, F_OK) != 0 && errno == ENOENT)
        return KB_OK;
    kb_status st = kb_record_load(path, &objs, &n, err);
    if (st != KB_OK)
        return st;
    st = kb_record_case_ids(objs, n, s);
    kb_record_free_all(objs, n);
    return st;
}
