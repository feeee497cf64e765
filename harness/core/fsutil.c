/* fsutil.c - mkdir -p and whole-file reads (see fsutil.h). */
#include "core/fsutil.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

kb_status kb_fs_mkdir_p(const char *dir)
{
    size_t n = strlen(dir);
    if (n == 0)
        return KB_OK;
    char *p = malloc(n + 1);
    if (!p)
        return KB_ERR_OOM;
    memcpy(p, dir, n + 1);
    /* Walk the components left to right; EEXIST on the way is fine (another process
     * may be creating the same tree at the same time). */
    for (char *c = p + 1; ; c++) {
        if (*c == '/' || *c == 0) {
            char saved = *c;
            *c = 0;
            if (mkdir(p, 0755) != 0 && errno != EEXIST) {
                int e = errno;
                free(p);
                errno = e;
                return KB_ERR_IO;
            }
            *c = saved;
            if (saved == 0)
                break;
        }
    }
    free(p);
    struct stat st;
    if (stat(dir, &st) != 0)
        return KB_ERR_IO;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return KB_ERR_IO;
    }
    return KB_OK;
}

kb_status kb_fs_mkdir_parent(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash || slash == path)
        return KB_OK; /* bare name, or a file in "/" */
    size_t n = (size_t)(slash - path);
    char *dir = malloc(n + 1);
    if (!dir)
        return KB_ERR_OOM;
    memcpy(dir, path, n);
    dir[n] = 0;
    kb_status st = kb_fs_mkdir_p(dir);
    int e = errno;
    free(dir);
    errno = e;
    return st;
}

/* Read all of fd into a malloc'ed, NUL-terminated buffer, at most limit bytes (-1: no
 * limit). KB_OK, KB_ERR_INPUT (grew past limit), KB_ERR_IO (errno set), KB_ERR_OOM. */
static kb_status read_fd(int fd, long long limit, char **out, size_t *len)
{
    char *buf = NULL;
    size_t used = 0, cap = 0;
    for (;;) {
        if (cap - used < 4096) {
            size_t ncap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, ncap);
            if (!nb) {
                free(buf);
                return KB_ERR_OOM;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t got = read(fd, buf + used, cap - used - 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            errno = e;
            return KB_ERR_IO;
        }
        if (got == 0)
            break;
        used += (size_t)got;
        if (limit >= 0 && (long long)used > limit) {
            free(buf);
            return KB_ERR_INPUT;
        }
    }
    buf[used] = 0;
    *out = buf;
    if (len)
        *len = used;
    return KB_OK;
}

/* Open path without blocking and check it is a regular file; its size in *size. */
static int open_regular(const char *path, off_t *size)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        errno = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    *size = st.st_size;
    return fd;
}

kb_status kb_fs_read_all(const char *path, char **out, size_t *len)
{
    *out = NULL;
    if (len)
        *len = 0;
    off_t size;
    int fd = open_regular(path, &size);
    if (fd < 0)
        return KB_ERR_IO;
    kb_status st = read_fd(fd, -1, out, len);
    int e = errno;
    close(fd);
    errno = e;
    return st == KB_OK ? KB_OK : st == KB_ERR_OOM ? KB_ERR_OOM : KB_ERR_IO;
}

const char *kb_fs_size_text(long long limit, char *buf, size_t n)
{
    if (limit >= (1ll << 30) && limit % (1ll << 30) == 0)
        snprintf(buf, n, "%lld GiB", limit >> 30);
    else if (limit >= (1ll << 20) && limit % (1ll << 20) == 0)
        snprintf(buf, n, "%lld MiB", limit >> 20);
    else if (limit >= (1ll << 10) && limit % (1ll << 10) == 0)
        snprintf(buf, n, "%lld KiB", limit >> 10);
    else
        snprintf(buf, n, "%lld bytes", limit);
    return buf;
}

/* What path is, in words, when it is not a regular file. */
static const char *kind_of(const struct stat *st)
{
    return S_ISDIR(st->st_mode) ? "a directory" : S_ISFIFO(st->st_mode) ? "a FIFO" : S_ISCHR(st->st_mode)
         ? "a character device" : S_ISBLK(st->st_mode) ? "a block device" : S_ISSOCK(st->st_mode) ? "a socket"
         : "not a file";
}

/* The line and column (1-based) of byte offset limit of the open file fd: where a text
 * file passes its size limit. 0 when it cannot be told cheaply (limits over 64 MiB). */
static int place_of(int fd, long long limit, long *line, long *col)
{
    if (limit > (64ll << 20))
        return 0;
    char buf[65536];
    long long seen = 0;
    *line = 1;
    *col = 1;
    while (seen < limit) {
        size_t want = limit - seen < (long long)sizeof buf ? (size_t)(limit - seen) : sizeof buf;
        ssize_t got = read(fd, buf, want);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        for (ssize_t i = 0; i < got; i++) {
            if (buf[i] == '\n') {
                ++*line;
                *col = 1;
            } else {
                ++*col;
            }
        }
        seen += got;
    }
    return 1;
}

int kb_fs_open_input(const char *path, long long limit, const char *what, kb_status *st, kb_sb *err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat sb;
    if (fd < 0) {
        int e = errno;
        kb_sb_printf(err, "%s: cannot open the %s: %s", path, what, strerror(e));
        *st = e == EACCES || e == EPERM ? KB_ERR_SETUP : e == EIO || e == ENOMEM ? KB_ERR_IO : KB_ERR_INPUT;
        return -1;
    }
    char lim[32];
    *st = KB_ERR_INPUT;
    if (fstat(fd, &sb) != 0) {
        kb_sb_printf(err, "%s: %s", path, strerror(errno));
        *st = KB_ERR_IO;
    } else if (!S_ISREG(sb.st_mode)) {
        kb_sb_printf(err, "%s: not a regular file (%s): kbench reads a %s from a file", path, kind_of(&sb), what);
    } else if ((long long)sb.st_size > limit) {
        long line, col;
        if (place_of(fd, limit, &line, &col))
            kb_sb_printf(err, "%s:%ld:%ld: a %s may have at most %s; this byte is past it (the file has %lld)", path,
                         line, col, what, kb_fs_size_text(limit, lim, sizeof lim), (long long)sb.st_size);
        else
            kb_sb_printf(err, "%s: %lld bytes; a %s may have at most %s", path, (long long)sb.st_size, what,
                         kb_fs_size_text(limit, lim, sizeof lim));
    } else {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
            fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        *st = KB_OK;
        return fd;
    }
    close(fd);
    return -1;
}

kb_status kb_fs_read_input(const char *path, long long limit, const char *what, char **out, size_t *len,
                           kb_sb *err)
{
    *out = NULL;
    if (len)
        *len = 0;
    kb_status st;
    int fd = kb_fs_open_input(path, limit, what, &st, err);
    if (fd < 0)
        return st;
    st = read_fd(fd, limit, out, len);
    char lim[32];
    if (st == KB_ERR_INPUT)
        kb_sb_printf(err, "%s: more than %s; a %s may have at most that", path,
                     kb_fs_size_text(limit, lim, sizeof lim), what);
    else if (st == KB_ERR_IO)
        kb_sb_printf(err, "%s: cannot read the %s: %s", path, what, strerror(errno));
    else if (st == KB_ERR_OOM)
        kb_sb_printf(err, "%s: out of memory reading the %s", path, what);
    close(fd);
    return st;
}

kb_status kb_fs_read_text(const char *path, long long limit, const char *what, char **out, kb_sb *err)
{
    size_t len = 0;
    kb_status st = kb_fs_read_input(path, limit, what, out, &len, err);
    if (st == KB_OK && strlen(*out) != len) {
        kb_sb_printf(err, "%s: not a text file (contains a NUL byte)", path);
        free(*out);
        *out = NULL;
        st = KB_ERR_INPUT;
    }
    return st;
}
