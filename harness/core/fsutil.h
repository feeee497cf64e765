/* fsutil.h - the few file-system helpers the cache, the record stream and the .npy
 * writer share: mkdir -p, creating a file's parent directory, reading a whole file; and
 * the one way kbench opens an input file it was given (issue 28): without blocking, a
 * regular file only, within a size limit per kind of file (the limits below, stated in
 * README "What kbench refuses").
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
 * *len gets its length in bytes (may be NULL). It is opened without blocking and must
 * be a regular file (a FIFO or device: EINVAL). KB_ERR_IO when it cannot be read
 * (errno left set, *out NULL). */
kb_status kb_fs_read_all(const char *path, char **out, size_t *len);

/* The size limits of the input files kbench reads [bytes]. */
#define KB_LIMIT_SUITE_BYTES   (16ll << 20)   /* a suite (YAML) */
#define KB_LIMIT_SPEC_BYTES    (1ll << 20)    /* an acceptance spec (YAML) */
#define KB_LIMIT_MODEL_BYTES   (1ll << 20)    /* a model description (YAML) */
#define KB_LIMIT_PEAKS_BYTES   (4ll << 20)    /* a peaks file (JSON) */
#define KB_LIMIT_RANK_BYTES    (16ll << 20)   /* a fleet rank's verdict file (JSON) */
#define KB_LIMIT_RECORDS_BYTES (2ll << 30)    /* a records file (JSON Lines) */

/* Open path, an input of kind what ("suite", "peaks file"), as kbench opens every input:
 * O_NONBLOCK (a FIFO with no writer cannot hang the open), then fstat: a regular file of
 * at most limit bytes, else refused before a byte is read; the descriptor is made blocking
 * again. Returns it (close-on-exec, caller closes), or -1 with *st and err = "PATH: why":
 * KB_ERR_INPUT for a missing path, a directory, FIFO, device or socket, or a file over
 * limit; KB_ERR_SETUP for a permission refused; KB_ERR_IO otherwise. */
int kb_fs_open_input(const char *path, long long limit, const char *what, kb_status *st, kb_sb *err);

/* kb_fs_open_input, then the whole file into *out (malloc'ed, NUL-terminated, caller
 * frees; *len its length, may be NULL). A file that grows past limit while it is read is
 * refused too. KB_OK, or kb_fs_open_input's statuses (KB_ERR_IO for a failed read,
 * KB_ERR_OOM) with err; *out NULL on error. */
kb_status kb_fs_read_input(const char *path, long long limit, const char *what, char **out, size_t *len,
                           kb_sb *err);

/* kb_fs_read_input for a text file: KB_ERR_INPUT with "path: not a text file (contains a
 * NUL byte)" when the file holds a NUL byte; otherwise as kb_fs_read_input. *out NULL on
 * error, else malloc'ed and NUL-terminated (caller frees). */
kb_status kb_fs_read_text(const char *path, long long limit, const char *what, char **out, kb_sb *err);

/* limit as text: "16 MiB", "2 GiB", "512 bytes" (buf of at least 32 bytes). */
const char *kb_fs_size_text(long long limit, char *buf, size_t n);

#endif /* KB_FSUTIL_H */
