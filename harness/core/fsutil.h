/* fsutil.h - the few file-system helpers the cache, the record stream and the .npy
 * writer share: mkdir -p, creating a file's parent directory, reading a whole file.
 */
#ifndef KB_FSUTIL_H
#define KB_FSUTIL_H

#include "core/kb.h"

/* Create dir and every missing parent (like mkdir -p, mode 0755 before umask).
 * KB_OK when it exists afterwards (also when it already existed); KB_ERR_IO otherwise,
 * with errno left set. */
kb_status kb_fs_mkdir_p(const char *dir);

/* Create the directory that will hold the file path (nothing to do for a bare name). */
kb_status kb_fs_mkdir_parent(const char *path);

/* Read the whole file into a malloc'ed, NUL-terminated buffer (*out, caller frees);
 * *len gets its length in bytes (may be NULL). KB_ERR_IO when it cannot be read
 * (errno left set, *out NULL). */
kb_status kb_fs_read_all(const char *path, char **out, size_t *len);

#endif /* KB_FSUTIL_H */
