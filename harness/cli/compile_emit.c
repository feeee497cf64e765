/* compile_emit.c - each module's PTX or CUBIN written into a directory (see compile_emit.h). */
#include "cli/compile_emit.h"

#include "core/fsutil.h"
#include "core/kb.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NAME_MAX_BYTES 160

typedef struct {
    char *module;       /* identity text */
    char *first_case;   /* the id of the first case that uses it */
    int cases;          /* how many cases use it */
    char *file;         /* its file name in dir, after kb_emit_check */
    int written;
} emit_module;

struct kb_emit {
    char *dir;
    const char *ext;    /* ".ptx", ".cubin" */
    emit_module *m;
    int n, cap, n_written;
};

char *kb_emit_safe_name(const char *id, char *out, size_t n)
{
    size_t o = 0, limit = n - 1 < NAME_MAX_BYTES ? n - 1 : NAME_MAX_BYTES;
    for (const char *p = id; *p && o < limit; p++) {
        char c = *p;
        int keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                   c == '_' || (c == '.' && o > 0);
        if (keep)
            out[o++] = c;
        else if (o > 0 && out[o - 1] != '_')
            out[o++] = '_';
    }
    while (o > 0 && out[o - 1] == '_')
        o--;
    out[o] = 0;
    if (strlen(id) > limit && limit > 9) {   /* cut: keep the ids apart by their hash */
        char tail[10];
        snprintf(tail, sizeof tail, "_%08x", (unsigned)kb_hash64(id, strlen(id), KB_HASH_INIT));
        size_t keep = o < limit - 9 ? o : limit - 9;
        memcpy(out + keep, tail, 10);
    }
    if (!out[0])
        snprintf(out, n, "case");
    return out;
}

int kb_emit_open(const char *dir, const char *kind, kb_emit **out)
{
    struct stat st;
    *out = NULL;
    if (stat(dir, &st) == 0 && !S_ISDIR(st.st_mode)) {
        fprintf(stderr, "kbench compile: --out: %s exists and is not a directory\n", dir);
        return KB_EXIT_INPUT;
    }
    if (kb_fs_mkdir_p(dir) != KB_OK || access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "kbench compile: --out: cannot make or write the directory %s: %s\n", dir, strerror(errno));
        return KB_EXIT_SETUP;
    }
    kb_emit *e = calloc(1, sizeof *e);
    if (!e || !(e->dir = strdup(dir))) {
        free(e);
        fprintf(stderr, "kbench compile: out of memory\n");
        return KB_EXIT_SETUP;
    }
    e->ext = strcmp(kind, "ptx") == 0 ? ".ptx" : ".cubin";
    *out = e;
    return -1;
}

static emit_module *find(kb_emit *e, const char *module)
{
    for (int i = 0; i < e->n; i++)
        if (!strcmp(e->m[i].module, module))
            return &e->m[i];
    return NULL;
}

int kb_emit_plan(kb_emit *e, const char *case_id, const char *module)
{
    emit_module *m = find(e, module);
    if (m) {
        m->cases++;
        return 0;
    }
    if (e->n == e->cap) {
        int cap = e->cap ? 2 * e->cap : 64;
        emit_module *g = realloc(e->m, (size_t)cap * sizeof *g);
        if (!g)
            return -1;
        e->m = g;
        e->cap = cap;
    }
    m = &e->m[e->n];
    memset(m, 0, sizeof *m);
    m->module = strdup(module);
    m->first_case = strdup(case_id);
    m->cases = 1;
    if (!m->module || !m->first_case) {
        free(m->module);
        free(m->first_case);
        return -1;
    }
    e->n++;
    return 0;
}

/* The file name of module i: with its hash when shared or when the plain name collides. */
static int name_module(kb_emit *e, int i, int with_hash)
{
    emit_module *m = &e->m[i];
    char safe[NAME_MAX_BYTES + 1], name[NAME_MAX_BYTES + 32];
    kb_emit_safe_name(m->first_case, safe, sizeof safe);
    if (with_hash)
        snprintf(name, sizeof name, "%s.%08x%s", safe,
                 (unsigned)kb_hash64(m->module, strlen(m->module), KB_HASH_INIT), e->ext);
    else
        snprintf(name, sizeof name, "%s%s", safe, e->ext);
    free(m->file);
    m->file = strdup(name);
    return m->file ? 0 : -1;
}

int kb_emit_check(kb_emit *e)
{
    for (int i = 0; i < e->n; i++)
        if (name_module(e, i, e->m[i].cases > 1) != 0)
            goto oom;
    for (int i = 0; i < e->n; i++)   /* two modules, one plain name: both get their hash */
        for (int j = i + 1; j < e->n; j++)
            if (!strcmp(e->m[i].file, e->m[j].file) &&
                (name_module(e, i, 1) != 0 || name_module(e, j, 1) != 0))
                goto oom;
    for (int i = 0; i < e->n; i++) {
        kb_sb path;
        kb_sb_init(&path);
        kb_sb_printf(&path, "%s/%s", e->dir, e->m[i].file);
        int there = access(path.s, F_OK) == 0;
        if (there)
            fprintf(stderr, "kbench compile: --out: %s already exists; kbench never overwrites a file it did not "
                    "write in this run: use a new or empty directory\n", path.s);
        kb_sb_free(&path);
        if (there)
            return KB_EXIT_INPUT;
    }
    return -1;
oom:
    fprintf(stderr, "kbench compile: out of memory\n");
    return KB_EXIT_SETUP;
}

/* Copy src to dst, which must not exist. 0, or -1 with why filled. */
static int copy_new(const char *src, const char *dst, char *why, size_t n)
{
    char *bytes = NULL;
    size_t len = 0;
    if (kb_fs_read_all(src, &bytes, &len) != KB_OK) {
        snprintf(why, n, "cannot read %s: %s", src, strerror(errno));
        return -1;
    }
    int fd = open(dst, O_WRONLY | O_CREAT | O_EXCL, 0644);
    size_t done = 0;
    while (fd >= 0 && done < len) {
        ssize_t w = write(fd, bytes + done, len - done);
        if (w <= 0)
            break;
        done += (size_t)w;
    }
    int ok = fd >= 0 && done == len;
    if (!ok)
        snprintf(why, n, "cannot write %s: %s", dst, strerror(errno));
    if (fd >= 0 && close(fd) != 0 && ok) {
        snprintf(why, n, "cannot write %s: %s", dst, strerror(errno));
        ok = 0;
    }
    free(bytes);
    return ok ? 0 : -1;
}

const char *kb_emit_write(kb_emit *e, const char *module, const char *artifact, char *why, size_t n)
{
    emit_module *m = find(e, module);
    if (!m || !m->file) {
        snprintf(why, n, "a module no case announced");
        return NULL;
    }
    if (m->written)
        return m->file;
    kb_sb path;
    kb_sb_init(&path);
    kb_sb_printf(&path, "%s/%s", e->dir, m->file);
    int rc = artifact ? copy_new(artifact, path.s, why, n) : -1;
    if (!artifact)
        snprintf(why, n, "the build left no artefact");
    kb_sb_free(&path);
    if (rc != 0)
        return NULL;
    m->written = 1;
    e->n_written++;
    return m->file;
}

int kb_emit_count(const kb_emit *e) { return e->n_written; }

void kb_emit_free(kb_emit *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->n; i++) {
        free(e->m[i].module);
        free(e->m[i].first_case);
        free(e->m[i].file);
    }
    free(e->m);
    free(e->dir);
    free(e);
}
