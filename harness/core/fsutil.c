/* fsutil.c - mkdir -p and whole-file reads (see fsutil.h). */
#include "core/fsutil.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

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

kb_status kb_fs_read_all(const char *path, char **out, size_t *len)
{
    *out = NULL;
    if (len)
        *len = 0;
    char *buf = NULL;
    size_t used = 0, cap = 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return KB_ERR_IO;
    for (;;) {
        if (cap - used < 4096) {
            size_t ncap = cap ? cap * 2 : 8192;
            char *nb = realloc(buf, ncap);
            if (!nb)
                goto fail;
            buf = nb;
            cap = ncap;
        }
        size_t got = fread(buf + used, 1, cap - used - 1, f);
        used += got;
        if (got == 0)
            break;
    }
    if (ferror(f))
        goto fail;
    fclose(f);
    buf[used] = 0;
    *out = buf;
    if (len)
        *len = used;
    return KB_OK;
fail:
    {
        int e = errno;
        free(buf);
        fclose(f);
        errno = e ? e : EIO;
    }
    return KB_ERR_IO;
}
