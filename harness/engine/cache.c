/* cache.c - the persistent compile cache (see cache.h for the key and the
 * atomicity rules). */
#include "engine/cache.h"
#include "core/fsutil.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- the 128-bit key: two independent 64-bit hashes over the same stream ----
 * FNV-1a (kb_hash64) and a multiply/xor-shift hash with different constants: a
 * collision in one is unrelated to a collision in the other. */
typedef struct { uint64_t a, b; } key_hash;

static void kh_bytes(key_hash *h, const void *p, size_t n)
{
    const unsigned char *c = p;
    h->a = kb_hash64(p, n, h->a);
    for (size_t i = 0; i < n; i++) {
        h->b = (h->b ^ c[i]) * 0xff51afd7ed558ccdull;
        h->b ^= h->b >> 29;
    }
}

/* Every field is framed (tag, length, bytes) so that no two different field
 * sequences hash the same concatenation ("ab"+"c" vs "a"+"bc"). */
static void kh_field(key_hash *h, char tag, const void *p, size_t n)
{
    uint64_t len = n;
    kh_bytes(h, &tag, 1);
    kh_bytes(h, &len, sizeof len);
    kh_bytes(h, p, n);
}

static void kh_str(key_hash *h, char tag, const char *s)
{
    kh_field(h, tag, s ? s : "", s ? strlen(s) : 0);
}

static uint64_t mix64(uint64_t z)   /* splitmix64 finaliser: spreads every input bit */
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* ---- quoted includes, followed recursively ---- */
typedef struct {
    char **seen;      /* realpath of every file already hashed */
    int n_seen, cap_seen;
    const char *include_dir;
} include_walk;

static int walk_seen(include_walk *w, const char *real)
{
    for (int i = 0; i < w->n_seen; i++)
        if (strcmp(w->seen[i], real) == 0)
            return 1;
    return 0;
}

static kb_status walk_add(include_walk *w, const char *real)
{
    if (w->n_seen == w->cap_seen) {
        int ncap = w->cap_seen ? w->cap_seen * 2 : 16;
        char **ns = realloc(w->seen, (size_t)ncap * sizeof *ns);
        if (!ns)
            return KB_ERR_OOM;
        w->seen = ns;
        w->cap_seen = ncap;
    }
    w->seen[w->n_seen] = strdup(real);
    if (!w->seen[w->n_seen])
        return KB_ERR_OOM;
    w->n_seen++;
    return KB_OK;
}

/* Resolve a quoted include as the compilers do: next to the including file first,
 * then in include_dir. Returns a malloc'ed realpath, or NULL when not found. */
static char *resolve_include(const char *name, const char *includer_dir, const char *include_dir)
{
    kb_sb p;
    kb_sb_init(&p);
    char *real = NULL;
    if (name[0] == '/') {
        real = realpath(name, NULL);
    } else {
        const char *dirs[2] = { includer_dir, include_dir };
        for (int i = 0; i < 2 && !real; i++) {
            if (!dirs[i])
                continue;
            kb_sb_clear(&p);
            kb_sb_printf(&p, "%s/%s", dirs[i], name);
            struct stat st;
            if (stat(p.s, &st) == 0 && S_ISREG(st.st_mode))
                real = realpath(p.s, NULL);
        }
    }
    kb_sb_free(&p);
    return real;
}

/* Hash the text of the file at real (a realpath) and of every quoted include it
 * reaches. depth bounds the recursion even if realpath somehow failed to dedupe. */
static kb_status hash_file_tree(key_hash *h, include_walk *w, const char *real, int depth)
{
    if (depth > 64 || walk_seen(w, real))
        return KB_OK;
    kb_status st = walk_add(w, real);
    if (st != KB_OK)
        return st;
    char *text = NULL, *dir = NULL;
    size_t len = 0;
    if (kb_fs_read_all(real, &text, &len) != KB_OK) {
        kh_str(h, 'U', real);      /* unreadable header: the compiler will say why */
        return KB_OK;
    }
    kh_field(h, 'T', text, len);

    dir = strdup(real);
    if (!dir) { st = KB_ERR_OOM; goto fail; }
    char *slash = strrchr(dir, '/');
    if (slash)
        *(slash == dir ? slash + 1 : slash) = 0;

    /* Scan lines of the form  # include "name"  (spaces allowed around '#'). An
     * include inside a comment or a dead #if branch is hashed too: harmless, the key
     * only becomes a little more sensitive than strictly needed. */
    for (const char *line = text; line < text + len; ) {
        const char *eol = memchr(line, '\n', (size_t)(text + len - line));
        if (!eol)
            eol = text + len;
        const char *c = line;
        while (c < eol && (*c == ' ' || *c == '\t')) c++;
        if (c < eol && *c == '#') {
            c++;
            while (c < eol && (*c == ' ' || *c == '\t')) c++;
            if (eol - c > 7 && strncmp(c, "include", 7) == 0) {
                c += 7;
                while (c < eol && (*c == ' ' || *c == '\t')) c++;
                const char *q = c < eol && *c == '"' ? memchr(c + 1, '"', (size_t)(eol - c - 1)) : NULL;
                if (q) {
                    char *name = strndup(c + 1, (size_t)(q - c - 1));
                    if (!name) { st = KB_ERR_OOM; goto fail; }
                    char *inc = resolve_include(name, dir, w->include_dir);
                    kh_str(h, inc ? 'I' : 'M', name);   /* M: missing, name only */
                    if (inc)
                        st = hash_file_tree(h, w, inc, depth + 1);
                    free(inc);
                    free(name);
                    if (st != KB_OK)
                        goto fail;
                }
            }
        }
        line = eol + 1;
    }
    free(dir);
    free(text);
    return KB_OK;
fail:
    free(dir);
    free(text);
    return st;
}

kb_status kb_cache_key(const kb_backend *be, kb_backend_ctx *bx, const kb_compile_req *req,
                       char key[KB_CACHE_KEY_LEN + 1], kb_sb *err)
{
    key_hash h = { KB_HASH_INIT, 0x6a09e667f3bcc909ull };
    include_walk w = { NULL, 0, 0, req->include_dir };
    kb_status st = KB_OK;
    key[0] = 0;

    kh_str(&h, 'B', be->name);
    kh_str(&h, 'C', kb_be_toolchain_id(be, bx));
    kh_str(&h, 'X', kb_be_artifact_ext(be));
    int64_t sm = req->sm;
    kh_field(&h, 'S', &sm, sizeof sm);
    int64_t nd = req->n_defines;
    kh_field(&h, 'N', &nd, sizeof nd);
    for (int i = 0; i < req->n_defines; i++)
        kh_str(&h, 'D', req->defines[i]);

    char *real = realpath(req->source_path, NULL);
    if (!real) {
        if (err)
            kb_sb_printf(err, "cache: cannot read kernel source %s: %s\n",
                         req->source_path, strerror(errno));
        return KB_ERR_IO;
    }
    /* The source's own path is not part of the key: identical text compiles to the
     * same artefact wherever it lives (its includes are hashed by content). */
    st = hash_file_tree(&h, &w, real, 0);
    free(real);
    for (int i = 0; i < w.n_seen; i++)
        free(w.seen[i]);
    free(w.seen);
    if (st != KB_OK)
        return st;
    snprintf(key, KB_CACHE_KEY_LEN + 1, "%016llx%016llx",
             (unsigned long long)mix64(h.a), (unsigned long long)mix64(h.b));
    return KB_OK;
}

kb_status kb_cache_dir(kb_sb *out)
{
    const char *env = getenv("KBENCH_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    kb_sb_clear(out);
    if (env && *env)
        kb_sb_printf(out, "%s", env);
    else if (xdg && *xdg)
        kb_sb_printf(out, "%s/kbench", xdg);
    else if (home && *home)
        kb_sb_printf(out, "%s/.cache/kbench", home);
    else {
        kb_sb_printf(out, "cache: none of KBENCH_CACHE_DIR, XDG_CACHE_HOME, HOME is set");
        return KB_ERR_SETUP;
    }
    if (kb_fs_mkdir_p(out->s) != KB_OK) {
        int e = errno;
        char *dir = strdup(out->s);
        kb_sb_clear(out);
        kb_sb_printf(out, "cache: cannot create %s: %s", dir ? dir : "?", strerror(e));
        free(dir);
        return KB_ERR_IO;
    }
    return KB_OK;
}

/* Make the data of an already written file durable before it is renamed into place,
 * so that a power loss cannot leave a complete-looking name over empty contents. */
static int fsync_path(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    int rc = fsync(fileno(f));
    fclose(f);
    return rc;
}

/* Write text to final_path through a temporary file in the same directory + rename. The
 * compile cache is kbench's own directory (core/output.h): its entries are named by their
 * key and only kbench makes them, so whatever sits at an entry's name - a damaged file, a
 * FIFO, a symlink - is replaced as a name, never followed or written through; entries are
 * read without blocking and must be regular files (kb_fs_read_all), else rebuilt. */
static kb_status write_atomic(const char *final_path, const char *text, kb_sb *err)
{
    kb_sb tmp;
    kb_sb_init(&tmp);
    kb_sb_printf(&tmp, "%s.tmp.XXXXXX", final_path);
    int fd = mkstemp(tmp.s);
    if (fd < 0)
        goto fail;
    size_t len = strlen(text), done = 0;
    while (done < len) {
        ssize_t w = write(fd, text + done, len - done);
        if (w < 0) {
            if (errno == EINTR) continue;
            close(fd);
            goto fail_unlink;
        }
        done += (size_t)w;
    }
    if (fchmod(fd, 0644) != 0 || fsync(fd) != 0 || close(fd) != 0)
        goto fail_unlink;
    if (rename(tmp.s, final_path) != 0)
        goto fail_unlink;
    kb_sb_free(&tmp);
    return KB_OK;
fail_unlink:
    {
        int e = errno;
        unlink(tmp.s);
        errno = e;
    }
fail:
    kb_sb_printf(err, "cache: cannot write %s: %s\n", final_path, strerror(errno));
    kb_sb_free(&tmp);
    return KB_ERR_IO;
}

/* "<size> <fnv-1a 64 of the bytes, 16 hex digits>" of a file; -1 when unreadable. */
static int file_sum(const char *path, char out[48])
{
    char *data = NULL;
    size_t len = 0;
    if (kb_fs_read_all(path, &data, &len) != KB_OK)
        return -1;
    snprintf(out, 48, "%zu %016llx", len, (unsigned long long)kb_hash64(data, len, KB_HASH_INIT));
    free(data);
    return 0;
}

/* Does the artefact at path still have the size and content its .sum recorded at
 * write? 1 yes; 0 no, with why (one line) filled. */
static int entry_intact(const char *path, const char *sumpath, char *why, size_t n)
{
    char want[64] = "", got[48];
    char *saved = NULL;
    if (kb_fs_read_all(sumpath, &saved, NULL) != KB_OK) {
        snprintf(why, n, "no checksum recorded for it");
        return 0;
    }
    snprintf(want, sizeof want, "%.*s", (int)strcspn(saved, "\n"), saved);
    free(saved);
    if (file_sum(path, got) != 0) {
        snprintf(why, n, "unreadable: %s", strerror(errno));
        return 0;
    }
    if (strcmp(got, want) != 0) {
        snprintf(why, n, "size and checksum %s, recorded %s", got, want);
        return 0;
    }
    return 1;
}

/* A miss: build into "<key>.tmp.XXXXXX<ext>" in the cache directory itself, so that the
 * final rename stays within one file system and is atomic; the log is written first, so
 * whoever sees the artefact can rely on its log being there. */
static kb_status build_entry(const kb_backend *be, kb_backend_ctx *bx, const kb_compile_req *req, const char *dir,
                             const char *key, const char *path, const char *logpath, const char *sumpath, kb_sb *log)
{
    const char *ext = kb_be_artifact_ext(be);
    kb_sb tmp;
    kb_sb_init(&tmp);
    kb_sb_printf(&tmp, "%s/%s.tmp.XXXXXX%s", dir, key, ext);
    kb_status st = KB_OK;
    int fd = mkstemps(tmp.s, (int)strlen(ext));
    if (fd < 0) {
        kb_sb_printf(log, "cache: cannot create a temporary file in %s: %s\n", dir, strerror(errno));
        kb_sb_free(&tmp);
        return KB_ERR_IO;
    }
    close(fd);
    struct stat sb;
    if ((st = be->build(bx, req, tmp.s, log)) != KB_OK)
        goto fail;
    if (stat(tmp.s, &sb) != 0 || sb.st_size == 0) {
        kb_sb_printf(log, "cache: %s build reported success but wrote no artefact\n", be->name);
        st = KB_ERR_INTERNAL;
        goto fail;
    }
    if (chmod(tmp.s, 0644) != 0 || fsync_path(tmp.s) != 0) {
        kb_sb_printf(log, "cache: cannot finish %s: %s\n", tmp.s, strerror(errno));
        st = KB_ERR_IO;
        goto fail;
    }
    char sum[48];
    if (file_sum(tmp.s, sum) != 0) {
        kb_sb_printf(log, "cache: cannot read back %s: %s\n", tmp.s, strerror(errno));
        st = KB_ERR_IO;
        goto fail;
    }
    if ((st = write_atomic(logpath, log->s, log)) != KB_OK || (st = write_atomic(sumpath, sum, log)) != KB_OK)
        goto fail;
    if (rename(tmp.s, path) != 0) {
        kb_sb_printf(log, "cache: cannot rename %s to %s: %s\n", tmp.s, path, strerror(errno));
        st = KB_ERR_IO;
        goto fail;
    }
    kb_sb_free(&tmp);
    return KB_OK;
fail:
    unlink(tmp.s);
    kb_sb_free(&tmp);
    return st;
}

/* The cache directory to use: cache_dir (created) or the default. */
static kb_status cache_root(const char *cache_dir, kb_sb *dir, kb_sb *log)
{
    if (!cache_dir) {
        kb_status st = kb_cache_dir(dir);
        if (st != KB_OK)
            kb_sb_printf(log, "%s\n", dir->s);
        return st;
    }
    kb_sb_printf(dir, "%s", cache_dir);
    if (kb_fs_mkdir_p(dir->s) != KB_OK) {
        kb_sb_printf(log, "cache: cannot create %s: %s\n", dir->s, strerror(errno));
        return KB_ERR_IO;
    }
    return KB_OK;
}

kb_status kb_cache_get(const kb_backend *be, kb_backend_ctx *bx, const kb_compile_req *req,
                       const char *cache_dir, kb_cache_entry *out)
{
    kb_status st;
    kb_sb dir, log, path, logpath, sumpath;
    const char *ext = kb_be_artifact_ext(be);
    memset(out, 0, sizeof *out);
    kb_sb_init(&dir); kb_sb_init(&log); kb_sb_init(&path); kb_sb_init(&logpath); kb_sb_init(&sumpath);

    if ((st = cache_root(cache_dir, &dir, &log)) != KB_OK)
        goto fail;
    if ((st = kb_cache_key(be, bx, req, out->key, &log)) != KB_OK)
        goto fail;
    kb_sb_printf(&path, "%s/%s%s", dir.s, out->key, ext);
    kb_sb_printf(&logpath, "%s/%s.log", dir.s, out->key);
    kb_sb_printf(&sumpath, "%s/%s.sum", dir.s, out->key);
    char why[160];
    if (access(path.s, F_OK) == 0 && !entry_intact(path.s, sumpath.s, why, sizeof why)) {
        /* truncated, emptied, overwritten: never hand it to the loader (a truncated .so
         * dies with SIGBUS inside dlopen); rebuild it */
        snprintf(out->note, sizeof out->note, "cache: %s is damaged (%s); rebuilt", path.s, why);
        unlink(path.s);
    }
    if (access(path.s, R_OK) == 0) {
        char *saved = NULL;
        if (kb_fs_read_all(logpath.s, &saved, NULL) == KB_OK) {
            kb_sb_append(&log, saved, strlen(saved));
            free(saved);
        }
        out->hit = 1;
    } else if ((st = build_entry(be, bx, req, dir.s, out->key, path.s, logpath.s, sumpath.s, &log)) != KB_OK) {
        goto fail;
    }
    out->path = strdup(path.s);
    out->log = strdup(log.s);
    if (!out->path || !out->log) {
        kb_cache_entry_free(out);
        st = KB_ERR_OOM;
    }
fail:
    if (st != KB_OK) {
        free(out->path);
        out->path = NULL;
        out->hit = 0;
        if (!out->log && !(out->log = strdup(log.s)))
            kb_out_of_memory("compile log", log.len + 1);   /* the promise: log never NULL */
    }
    kb_sb_free(&sumpath); kb_sb_free(&logpath); kb_sb_free(&path); kb_sb_free(&log); kb_sb_free(&dir);
    return st;
}

void kb_cache_entry_free(kb_cache_entry *e)
{
    free(e->path);
    free(e->log);
    e->path = NULL;
    e->log = NULL;
}
