/* record.c - JSON Lines results: building a record, crash-safe appends, loading,
 * and the string set used by --resume (see record.h for the schema). */
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

/* ---- JSON value helpers: never NULL for a representable value, never invalid JSON ---- */

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when invalid. Rejects
 * overlong forms, surrogates and code points above U+10FFFF, as jansson does. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned cp;
    if (c < 0x80) return 1;
    if (c >= 0xc2 && c <= 0xdf) { len = 2; cp = c & 0x1f; }
    else if (c >= 0xe0 && c <= 0xef) { len = 3; cp = c & 0x0f; }
    else if (c >= 0xf0 && c <= 0xf4) { len = 4; cp = c & 0x07; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
        (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

/* A JSON string of the n bytes at s, invalid UTF-8 bytes replaced by '?'. */
static json_t *jstrn(const char *s, size_t n)
{
    char *copy = malloc(n + 1);
    if (!copy) return NULL;
    size_t o = 0;
    for (size_t i = 0; i < n; ) {
        size_t k = s[i] ? utf8_seq((const unsigned char *)s + i, n - i) : 0;
        if (k == 0) { copy[o++] = '?'; i++; continue; }  /* NUL too: C strings end there */
        memcpy(copy + o, s + i, k);
        o += k;
        i += k;
    }
    json_t *j = json_stringn(copy, o);
    free(copy);
    return j;
}

static json_t *jstr(const char *s) { return s ? jstrn(s, strlen(s)) : json_null(); }
static json_t *jnum(double d) { return isfinite(d) ? json_real(d) : json_null(); }
static json_t *jint(long long v) { return json_integer(v); }
static json_t *jint_known(long long v) { return v < 0 ? json_null() : json_integer(v); }

/* A number that may be non-finite, kept as "nan" / "inf" / "-inf". */
static json_t *jnum_or_word(double d)
{
    if (isfinite(d)) return json_real(d);
    return json_string(isnan(d) ? "nan" : d > 0 ? "inf" : "-inf");
}

/* Set obj[key] = v, remembering an allocation failure in *bad (v NULL). */
static void put(json_t *obj, const char *key, json_t *v, int *bad)
{
    if (!v || json_object_set_new(obj, key, v) != 0)
        *bad = 1;
}

static json_t *compile_log_json(const char *log)
{
    size_t n = strlen(log);
    if (n <= KB_RECORD_LOG_MAX)
        return jstrn(log, n);
    size_t head = KB_RECORD_LOG_MAX * 3 / 4, tail = KB_RECORD_LOG_MAX - head;
    kb_sb b;
    kb_sb_init(&b);
    kb_sb_append(&b, log, head);
    kb_sb_printf(&b, "\n[... %zu bytes cut ...]\n", n - head - tail);
    kb_sb_append(&b, log + n - tail, tail);
    /* a multi-byte character cut at either edge becomes '?' in jstrn */
    json_t *j = jstrn(b.s, b.len);
    kb_sb_free(&b);
    return j;
}

const char *kb_result_status(const kb_result *r)
{
    if (r->status_name_override)
        return r->status_name_override;
    switch (r->status) {
    case KB_OK: return r->verified && r->verify.n_bad > 0 ? "wrong" : "ok";
    case KB_ERR_COMPILE: return "compile_error";
    case KB_ERR_FAULT: return "fault";
    case KB_ERR_TIMEOUT: return "timeout";
    case KB_ERR_INPUT: return "input_error";
    default: return "launch_error";
    }
}

static void iso_time_utc(char out[32])
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static json_t *case_fields(json_t *o, const kb_result *r, int *bad)
{
    const kb_family *f = r->family;
    const kb_case *c = r->c;
    int v_ok = f && c && c->variant >= 0 && c->variant < f->n_variants;
    put(o, "family", jstr(f ? f->name : NULL), bad);
    put(o, "variant", jstr(v_ok ? f->variants[c->variant].name : NULL), bad);
    put(o, "dtype", c ? jstr(kb_dtype_name(c->dtype)) : json_null(), bad);
    if (f && c) {
        json_t *dims = json_object(), *params = json_object();
        if (!dims || !params) { *bad = 1; json_decref(dims); json_decref(params); return o; }
        for (int i = 0; i < f->n_dims && i < KB_MAX_DIMS; i++)
            put(dims, f->dims[i], jint(c->dims[i]), bad);
        for (int i = 0; i < f->n_params && i < KB_MAX_PARAMS; i++) {
            const kb_param *p = &f->params[i];
            if (!kb_param_applies(f, i, c->variant))
                continue;
            int64_t val = c->params[i], n_choices = 0;
            if (p->choices)
                while (p->choices[n_choices]) n_choices++;
            if (p->choices && val >= 0 && val < n_choices)
                put(params, p->name, jstr(p->choices[val]), bad);
            else
                put(params, p->name, jint(val), bad);
        }
        put(o, "dims", dims, bad);
        put(o, "params", params, bad);
    } else {
        put(o, "dims", json_null(), bad);
        put(o, "params", json_null(), bad);
    }
    put(o, "pad", c ? jint(c->pad) : json_null(), bad);
    put(o, "launch", c ? jstr(kb_launch_name(c->launch)) : json_null(), bad);
    put(o, "seed", c ? jint(c->seed) : json_null(), bad);
    put(o, "check_shape", json_boolean(r->check_shape), bad);
    return o;
}

json_t *kb_record_json(const kb_result *r)
{
    int bad = 0;
    char when[32];
    json_t *o = json_object();
    if (!o)
        return NULL;
    iso_time_utc(when);
    put(o, "schema_version", jint(KB_RECORD_SCHEMA_VERSION), &bad);
    put(o, "run_id", jstr(r->run_id), &bad);
    put(o, "time", jstr(when), &bad);
    put(o, "case_id", jstr(r->case_id), &bad);
    case_fields(o, r, &bad);
    put(o, "backend", jstr(r->backend), &bad);

    if (r->dev) {
        json_t *d = json_object();
        if (d) {
            put(d, "name", jstr(r->dev->name), &bad);
            put(d, "uuid", jstr(r->dev->uuid), &bad);
            put(d, "pci_bus_id", jstr(r->dev->pci_bus_id), &bad);
            put(d, "sm", jint(r->dev->sm), &bad);
            put(d, "emulator", json_boolean(r->dev->is_emulator), &bad);
        }
        put(o, "device", d, &bad);
    } else {
        put(o, "device", json_null(), &bad);
    }

    put(o, "status", jstr(kb_result_status(r)), &bad);
    put(o, "error", jstr(kb_status_name(r->status)), &bad);
    put(o, "reason", jstr(r->reason), &bad);

    if (r->verified) {
        const kb_verify *v = &r->verify;
        json_t *j = json_object();
        if (j) {
            put(j, "n", jint(v->n), &bad);
            put(j, "n_bad", jint(v->n_bad), &bad);
            put(j, "first_bad", jint(v->first_bad), &bad);
            put(j, "max_abs_err", jnum(v->max_abs_err), &bad);
            put(j, "max_rel_err", jnum(v->max_rel_err), &bad);
            put(j, "max_err_ratio", jnum(v->max_err_ratio), &bad);
            put(j, "atol", jnum(v->atol), &bad);
            put(j, "rtol", jnum(v->rtol), &bad);
            put(j, "got_at_bad", v->n_bad ? jnum_or_word(v->got_at_bad) : json_null(), &bad);
            put(j, "want_at_bad", v->n_bad ? jnum_or_word(v->want_at_bad) : json_null(), &bad);
        }
        put(o, "verify", j, &bad);
    } else {
        put(o, "verify", json_null(), &bad);
    }

    if (r->have_resources) {
        json_t *j = json_object();
        if (j) {
            put(j, "registers", jint_known(r->res.registers), &bad);
            put(j, "spill_store_bytes", jint_known(r->res.spill_store_bytes), &bad);
            put(j, "spill_load_bytes", jint_known(r->res.spill_load_bytes), &bad);
            put(j, "stack_bytes", jint_known(r->res.stack_bytes), &bad);
            put(j, "static_shmem_bytes", jint_known(r->res.static_shmem_bytes), &bad);
            put(j, "max_threads", jint_known(r->res.max_threads), &bad);
        }
        put(o, "resources", j, &bad);
    } else {
        put(o, "resources", json_null(), &bad);
    }

    if (r->have_timing) {
        json_t *j = json_object(), *s = json_array();
        if (j && s) {
            put(j, "clock", jstr(r->clock), &bad);
            put(j, "samples", jint(r->n_samples), &bad);
            put(j, "median_us", jnum(r->median_us), &bad);
            put(j, "mean_us", jnum(r->mean_us), &bad);
            put(j, "min_us", jnum(r->min_us), &bad);
            put(j, "max_us", jnum(r->max_us), &bad);
            put(j, "p10_us", jnum(r->p10_us), &bad);
            put(j, "p90_us", jnum(r->p90_us), &bad);
            put(j, "cv", jnum(r->cv), &bad);
            put(j, "noise", jnum(r->noise), &bad);
            put(j, "timed_out", json_boolean(r->timed_out), &bad);
            if (r->l2_mode)
                put(j, "l2", jstr(r->l2_mode), &bad);
            if (r->l2_mode)
                put(j, "flush_bytes", jnum(r->flush_bytes), &bad);
            if (r->stop_reason)
                put(j, "stop", jstr(r->stop_reason), &bad);
            for (int i = 0; r->samples_us && i < r->n_samples_kept; i++) {
                json_t *x = jnum(r->samples_us[i]);
                if (!x || json_array_append_new(s, x) != 0)
                    bad = 1;
            }
            put(j, "samples_us", s, &bad);
            s = NULL;
        } else {
            bad = 1;
        }
        json_decref(s);
        put(o, "timing", j, &bad);
    } else {
        put(o, "timing", json_null(), &bad);
    }

    if (r->have_work) {
        json_t *j = json_object();
        if (j) {
            put(j, "flops", jnum(r->work.flops), &bad);
            put(j, "bytes_read", jnum(r->work.bytes_read), &bad);
            put(j, "bytes_written", jnum(r->work.bytes_written), &bad);
            put(j, "bytes_moved", jnum(r->work.bytes_moved > 0 ? r->work.bytes_moved
                                       : r->work.bytes_read + r->work.bytes_written), &bad);
        }
        put(o, "work", j, &bad);
    } else {
        put(o, "work", json_null(), &bad);
    }

    put(o, "derived", r->have_derived ? kb_derived_json(&r->derived, r->clock) : json_null(), &bad);
    put(o, "launch_overhead", r->launch_overhead ? json_incref(r->launch_overhead) : json_null(), &bad);
    put(o, "telemetry", r->telemetry ? json_incref(r->telemetry) : json_null(), &bad);
    put(o, "compile_ms", jnum(r->compile_ms), &bad);
    put(o, "wall_ms", jnum(r->wall_ms), &bad);
    put(o, "compile_log", r->compile_log ? compile_log_json(r->compile_log) : json_null(), &bad);

    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

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

kb_status kb_record_write(kb_recorder *w, const kb_result *r)
{
    json_t *o = kb_record_json(r);
    if (!o)
        return KB_ERR_OOM;
    char *text = json_dumps(o, JSON_COMPACT);
    json_decref(o);
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

/* ---- string set ---- */

void kb_strset_init(kb_strset *s) { s->slots = NULL; s->cap = 0; s->n = 0; }

void kb_strset_free(kb_strset *s)
{
    for (size_t i = 0; i < s->cap; i++)
        free(s->slots[i]);
    free(s->slots);
    kb_strset_init(s);
}

static size_t strset_slot(char *const *slots, size_t cap, const char *str)
{
    size_t i = (size_t)kb_hash64(str, strlen(str), KB_HASH_INIT) & (cap - 1);
    while (slots[i] && strcmp(slots[i], str) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

int kb_strset_has(const kb_strset *s, const char *str)
{
    return s->cap && s->slots[strset_slot(s->slots, s->cap, str)] != NULL;
}

int kb_strset_add(kb_strset *s, const char *str)
{
    if ((s->n + 1) * 2 > s->cap) {   /* keep the load under one half: short probes */
        size_t ncap = s->cap ? s->cap * 2 : 64;
        char **ns = calloc(ncap, sizeof *ns);
        if (!ns) return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->slots[i])
                ns[strset_slot(ns, ncap, s->slots[i])] = s->slots[i];
        free(s->slots);
        s->slots = ns;
        s->cap = ncap;
    }
    size_t i = strset_slot(s->slots, s->cap, str);
    if (s->slots[i])
        return 0;
    s->slots[i] = strdup(str);
    if (!s->slots[i]) return -1;
    s->n++;
    return 1;
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
