/* output.c - the one output rule (see output.h). */
#include "core/output.h"

#include "core/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_LINKS 40        /* as the kernel's own limit on a path's symlinks */

static char *dupn(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* The directory holding path ("." for a bare name, "/" for a name in the root);
 * trailing slashes of path ignored. Caller frees; NULL when out of memory. */
static char *parent_of(const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    while (n > 0 && path[n - 1] != '/')
        n--;
    if (n == 0)
        return dupn(".", 1);
    while (n > 1 && path[n - 1] == '/')
        n--;
    return dupn(path, n);
}

/* Write permission as kbench grants it: the user may write, and some write bit is set
 * (a file marked read-only is refused even to root, who could write it anyway). */
static int may_write(const char *path, const struct stat *st, int mode)
{
    return (st->st_mode & 0222) != 0 && access(path, mode) == 0;
}

/* The path a write of path reaches: path with the symlinks of its last component
 * followed (a dangling link gives its missing target). KB_OK with *out (caller frees). */
static kb_status resolve(const char *path, char **out, kb_sb *err)
{
    char *cur = strdup(path);
    char link[PATH_MAX];
    for (int hop = 0; cur && hop < MAX_LINKS; hop++) {
        ssize_t n = readlink(cur, link, sizeof link - 1);
        if (n < 0 && (errno == EINVAL || errno == ENOENT || errno == ENOTDIR)) {
            *out = cur;   /* not a link, absent, or under a non-directory (found by the caller) */
            return KB_OK;
        }
        if (n < 0 || n >= (ssize_t)sizeof link - 1) {
            kb_sb_printf(err, "%s: %s", path, n < 0 ? strerror(errno) : "symbolic link target too long");
            free(cur);
            return n < 0 && errno == EACCES ? KB_ERR_SETUP : KB_ERR_INPUT;
        }
        link[n] = 0;
        char *dir = link[0] == '/' ? NULL : parent_of(cur);
        kb_sb next;
        kb_sb_init(&next);
        kb_sb_printf(&next, "%s%s%s", dir ? dir : "", dir ? "/" : "", link);
        free(dir);
        free(cur);
        cur = next.s;
    }
    if (!cur)
        return KB_ERR_OOM;
    kb_sb_printf(err, "%s: too many levels of symbolic links", path);
    free(cur);
    return KB_ERR_INPUT;
}

/* The directory that will hold a file (must_exist) or will be created (!must_exist):
 * it, or else its nearest existing ancestor, must be a directory kbench may write into. */
static kb_status ancestor_ok(const char *shown, const char *dir, int must_exist, kb_sb *err)
{
    char *p = strdup(dir);
    kb_status st = KB_OK;
    struct stat sb;
    int missing = 0;
    while (p && stat(p, &sb) != 0) {
        if (errno != ENOENT && errno != ENOTDIR) {
            kb_sb_printf(err, "%s: cannot reach %s: %s", shown, p, strerror(errno));
            st = KB_ERR_SETUP;
            break;
        }
        missing = 1;
        char *up = parent_of(p);
        free(p);
        p = up;
    }
    if (!p) {
        kb_sb_printf(err, "%s: out of memory", shown);
        return KB_ERR_OOM;
    }
    if (st == KB_OK && !S_ISDIR(sb.st_mode)) {   /* named (2), or in the way of one to make (3) */
        kb_sb_printf(err, "%s: %s is not a directory%s", shown, p, missing ? ": the directory cannot be made" : "");
        st = missing ? KB_ERR_SETUP : KB_ERR_INPUT;
    } else if (st == KB_OK && missing && must_exist) {
        kb_sb_printf(err, "%s: directory %s does not exist (kbench creates output directories, not the "
                     "directory of an output file)", shown, dir);
        st = KB_ERR_SETUP;
    } else if (st == KB_OK && !may_write(p, &sb, W_OK | X_OK)) {
        kb_sb_printf(err, "%s: cannot create a file in %s: %s", shown, p,
                     (sb.st_mode & 0222) ? strerror(EACCES) : "the directory is read-only");
        st = KB_ERR_SETUP;
    }
    free(p);
    return st;
}

/* What an existing target is, as the rule sees it. KB_OK for a regular file, a character
 * device or a FIFO kbench may write; a refusal otherwise. */
static kb_status judge_existing(const char *shown, const char *target, const struct stat *sb, kb_sb *err)
{
    const char *what = S_ISDIR(sb->st_mode) ? "is a directory, not a file"
                     : S_ISSOCK(sb->st_mode) ? "is a socket: kbench writes files, devices and FIFOs only"
                     : S_ISBLK(sb->st_mode) ? "is a block device: kbench does not write onto disks"
                     : NULL;
    if (what) {
        kb_sb_printf(err, "%s: %s", shown, what);
        return KB_ERR_INPUT;
    }
    if (S_ISREG(sb->st_mode) && !may_write(target, sb, W_OK)) {
        kb_sb_printf(err, "%s: %s", shown, (sb->st_mode & 0222) ? strerror(EACCES)
                                            : "is read-only: kbench does not write it (chmod u+w allows it)");
        return KB_ERR_SETUP;
    }
    if (S_ISREG(sb->st_mode) || S_ISCHR(sb->st_mode) || S_ISFIFO(sb->st_mode))
        return KB_OK;
    kb_sb_printf(err, "%s: not a file kbench can write", shown);
    return KB_ERR_INPUT;
}

/* Resolve path and judge what it reaches. KB_OK with *target (caller frees) and *exists
 * (and *sb when it exists). */
static kb_status examine(const char *path, char **target, int *exists, struct stat *sb, kb_sb *err)
{
    *target = NULL;
    if (!*path) {
        kb_sb_printf(err, "an empty path");
        return KB_ERR_INPUT;
    }
    kb_status st = resolve(path, target, err);
    if (st != KB_OK)
        return st;
    *exists = stat(*target, sb) == 0;
    if (*exists)
        st = judge_existing(path, *target, sb, err);
    else if (errno != ENOENT && errno != ENOTDIR) {
        kb_sb_printf(err, "%s: %s", path, strerror(errno));
        st = KB_ERR_SETUP;
    }
    char *dir = st == KB_OK ? parent_of(*target) : NULL;
    if (st == KB_OK && !dir)
        st = KB_ERR_OOM;
    if (st == KB_OK && (!*exists || S_ISREG(sb->st_mode)))
        st = ancestor_ok(path, dir, 1, err);    /* the temporary file goes there */
    free(dir);
    if (st != KB_OK) {
        free(*target);
        *target = NULL;
    }
    return st;
}

kb_status kb_out_check(const char *path, kb_sb *err)
{
    char *target;
    int exists = 0;
    struct stat sb;
    kb_status st = examine(path, &target, &exists, &sb, err);
    free(target);
    return st;
}

kb_status kb_out_db_check(const char *path, kb_sb *err)
{
    char *target;
    int exists = 0;
    struct stat sb;
    kb_status st = examine(path, &target, &exists, &sb, err);
    free(target);
    if (st == KB_OK && exists && !S_ISREG(sb.st_mode)) {
        kb_sb_printf(err, "%s: a %s, not a database (a database is a regular file)", path,
                     S_ISFIFO(sb.st_mode) ? "FIFO" : "device");
        st = KB_ERR_INPUT;
    }
    return st;
}

/* Open an existing device or FIFO for writing without blocking (a FIFO with no reader
 * gives ENXIO), then make the descriptor blocking for the writes. -1 with err set. */
static int open_through(const char *shown, const char *target, kb_status *st, kb_sb *err)
{
    int fd = open(target, O_WRONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        kb_sb_printf(err, "%s: %s", shown, errno == ENXIO ? "a FIFO that nobody reads" : strerror(errno));
        *st = KB_ERR_SETUP;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* The permission bits a new file gets: 0666 less the umask (read from /proc, so no
 * thread sees the umask changed); 0644 when it cannot be read. */
static mode_t new_file_mode(void)
{
    mode_t mask = 022;
    FILE *f = fopen("/proc/self/status", "r");
    char line[128];
    unsigned m;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "Umask: %o", &m) == 1)
            mask = (mode_t)m;
    if (f)
        fclose(f);
    return 0666 & ~mask;
}

/* Create the temporary file beside target (its name cut so the suffix always fits),
 * with mode. -1 with err set. */
static int open_temp(const char *shown, const char *target, mode_t mode, char **tmp, kb_sb *err)
{
    const char *base = strrchr(target, '/');
    size_t dir_len = base ? (size_t)(base - target) + 1 : 0;
    size_t base_len = strlen(target) - dir_len;
    kb_sb t;
    kb_sb_init(&t);
    kb_sb_printf(&t, "%.*s%.*s.tmp.XXXXXX", (int)dir_len, target, (int)(base_len > 200 ? 200 : base_len),
                 target + dir_len);
    int fd = mkstemp(t.s);
    if (fd < 0 || fchmod(fd, mode) != 0) {
        kb_sb_printf(err, "%s: cannot create a temporary file beside it: %s", shown, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(t.s);
        }
        kb_sb_free(&t);
        return -1;
    }
    *tmp = t.s;
    return fd;
}

static void out_release(kb_out *o)
{
    free(o->shown);
    free(o->target);
    free(o->tmp);
    memset(o, 0, sizeof *o);
}

/* The descriptor o writes to: the target itself (device, FIFO) or a temporary file. */
static int out_fd(kb_out *o, int exists, const struct stat *sb, kb_status *st, kb_sb *err)
{
    if (exists && !S_ISREG(sb->st_mode))
        return open_through(o->shown, o->target, st, err);
    int fd = open_temp(o->shown, o->target, exists ? (sb->st_mode & 07777) : new_file_mode(), &o->tmp, err);
    if (fd < 0)
        *st = KB_ERR_SETUP;
    return fd;
}

kb_status kb_out_open(kb_out *o, const char *path, kb_sb *err)
{
    memset(o, 0, sizeof *o);
    int exists = 0;
    struct stat sb;
    kb_status st = examine(path, &o->target, &exists, &sb, err);
    if (st != KB_OK)
        return st;
    if (!(o->shown = strdup(path))) {
        out_release(o);
        return KB_ERR_OOM;
    }
    int fd = out_fd(o, exists, &sb, &st, err);
    if (fd >= 0 && !(o->f = fdopen(fd, "w"))) {
        close(fd);
        st = KB_ERR_OOM;
    }
    if (!o->f) {
        if (o->tmp)
            unlink(o->tmp);
        out_release(o);
        return st == KB_OK ? KB_ERR_SETUP : st;
    }
    return KB_OK;
}

/* Make the rename itself durable: sync the directory (best effort). */
static void sync_dir_of(const char *path)
{
    char *dir = parent_of(path);
    int fd = dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(dir);
}

kb_status kb_out_commit(kb_out *o, kb_sb *err)
{
    if (!o->f)
        return KB_ERR_INTERNAL;
    int ok = fflush(o->f) == 0 && !ferror(o->f);
    if (ok && o->tmp && fsync(fileno(o->f)) != 0)
        ok = 0;
    int e = errno;
    if (fclose(o->f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    o->f = NULL;
    if (ok && o->tmp && rename(o->tmp, o->target) != 0) {
        ok = 0;
        e = errno;
    }
    if (ok && o->tmp)
        sync_dir_of(o->target);
    if (!ok) {
        kb_sb_printf(err, "cannot write %s: %s", o->shown, strerror(e ? e : EIO));
        if (o->tmp)
            unlink(o->tmp);
    }
    out_release(o);
    return ok ? KB_OK : KB_ERR_SETUP;
}

void kb_out_abort(kb_out *o)
{
    if (o->f)
        fclose(o->f);
    if (o->tmp)
        unlink(o->tmp);
    out_release(o);
}

kb_status kb_out_write_with(const char *path, kb_status (*fn)(void *user, FILE *f, kb_sb *err), void *user,
                            kb_sb *err)
{
    kb_out o;
    kb_status st = kb_out_open(&o, path, err);
    if (st != KB_OK)
        return st;
    if ((st = fn(user, o.f, err)) != KB_OK) {
        if (!err->len)
            kb_sb_printf(err, "cannot write %s", path);
        kb_out_abort(&o);
        return st;
    }
    return kb_out_commit(&o, err);
}

int kb_out_open_append(const char *path, kb_status *st, kb_sb *err)
{
    char *target;
    int exists = 0;
    struct stat sb;
    if ((*st = examine(path, &target, &exists, &sb, err)) != KB_OK)
        return -1;
    int fd = -1;
    if (exists && !S_ISREG(sb.st_mode)) {
        fd = open_through(path, target, st, err);
    } else {
        if ((fd = open(target, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0666)) < 0) {
            kb_sb_printf(err, "%s: %s", path, strerror(errno));
            *st = errno == EISDIR ? KB_ERR_INPUT : KB_ERR_SETUP;
        }
    }
    free(target);
    return fd;
}

kb_status kb_out_not_input(const char *out, const char *in, const char *what, kb_sb *err)
{
    struct stat so, si;
    if (!out || !in || stat(out, &so) != 0 || stat(in, &si) != 0)
        return KB_OK;
    if (so.st_dev != si.st_dev || so.st_ino != si.st_ino || S_ISCHR(so.st_mode))
        return KB_OK;   /* a terminal or /dev/null may be read and written: nothing in it is lost */
    if (strcmp(out, in) == 0)
        kb_sb_printf(err, "%s is %s: kbench does not write over its own input", out, what);
    else
        kb_sb_printf(err, "%s is the same file as %s (%s): kbench does not write over its own input", out, what, in);
    return KB_ERR_INPUT;
}

kb_status kb_out_dir_check(const char *dir, kb_sb *err)
{
    struct stat sb;
    if (!*dir) {
        kb_sb_printf(err, "an empty directory name");
        return KB_ERR_INPUT;
    }
    if (stat(dir, &sb) != 0)
        return ancestor_ok(dir, dir, 0, err);
    if (!S_ISDIR(sb.st_mode)) {
        kb_sb_printf(err, "%s: not a directory", dir);
        return KB_ERR_INPUT;
    }
    if (!may_write(dir, &sb, W_OK | X_OK)) {
        kb_sb_printf(err, "%s: %s", dir, (sb.st_mode & 0222) ? strerror(EACCES) : "the directory is read-only");
        return KB_ERR_SETUP;
    }
    return KB_OK;
}

kb_status kb_out_dir_make(const char *dir, kb_sb *err)
{
    kb_status st = kb_out_dir_check(dir, err);
    if (st == KB_OK && kb_fs_mkdir_p(dir) != KB_OK) {
        kb_sb_printf(err, "%s: cannot create it: %s", dir, strerror(errno));
        st = KB_ERR_SETUP;
    }
    return st;
}

int kb_out_exit(kb_status st)
{
    return st == KB_OK ? KB_EXIT_OK : st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
}
