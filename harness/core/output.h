/* output.h - the one rule by which kbench writes a file it was asked to write (issue 28).
 *
 * A path given as an output is resolved first: a symlink is followed to its target (the
 * rules below apply to the target; the link itself is never replaced). Then:
 *   - a regular file, or a path that does not exist yet: written into a temporary file
 *     beside it ("NAME.tmp.XXXXXX", created O_EXCL, so nothing planted there is followed)
 *     and renamed onto it once complete - a reader sees the old file or the new one, never
 *     half of one; the old file's mode is kept; its directory must exist (a missing one
 *     is a setup error: kbench creates the directories named as output directories, and
 *     its own default locations such as results/, not the directory of an output file);
 *   - an existing character device or FIFO: opened (without blocking: a FIFO with no
 *     reader is refused) and written through - never renamed over, never truncated;
 *   - a directory, a socket or a block device: refused as an argument error;
 *   - a regular file without any write permission bit (chmod a-w), or one the user may not
 *     write: refused as a setup error, even as root - kbench never replaces a file marked
 *     read-only.
 * An output that is the same file as one of the command's inputs (device and inode, after
 * following symlinks) is refused before any work: kb_out_not_input.
 *
 * Status convention: KB_ERR_INPUT is the command line's fault (exit 2: a directory, a
 * socket, an output onto an input), KB_ERR_SETUP the environment's (exit 3: read-only, no
 * permission, a FIFO nobody reads, a write that failed such as ENOSPC on /dev/full),
 * KB_ERR_OOM out of memory (exit 3). Every message names the path. kb_out_exit maps them.
 *
 * The compile cache (engine/cache.c) and the rendezvous directory are kbench's own
 * directories: their entries are content- or rank-named files kbench alone makes, built
 * beside their name and renamed onto it; nothing in them is written through or followed.
 */
#ifndef KB_OUTPUT_H
#define KB_OUTPUT_H

#include "core/kb.h"

#include <stdio.h>

/* An output being written; fill it with kb_out_open, finish with kb_out_commit or
 * kb_out_abort (either releases everything it holds). */
typedef struct {
    FILE *f;          /* write the contents here */
    char *shown;      /* the path as given, for messages */
    char *target;     /* the path written: the given one after its symlinks */
    char *tmp;        /* the temporary file renamed onto target; NULL when written through */
} kb_out;

/* Check that path can be written by the rule, touching nothing. KB_OK, or KB_ERR_INPUT / KB_ERR_SETUP / KB_ERR_OOM
 * with err = "PATH: why". */
kb_status kb_out_check(const char *path, kb_sb *err);

/* Check path as an SQLite database kbench will write: an existing regular file (symlinks
 * followed) or a new path, by kb_out_check's rules; a device or FIFO is KB_ERR_INPUT ("a
 * database is a regular file"). Touches nothing. */
kb_status kb_out_db_check(const char *path, kb_sb *err);

/* Open path for writing by the rule: o->f is ready. KB_OK, or a status as kb_out_check's
 * with err = "PATH: why"; on error o holds nothing. */
kb_status kb_out_open(kb_out *o, const char *path, kb_sb *err);

/* Flush and close o; a regular target is synced and the temporary file renamed onto it.
 * KB_OK, or KB_ERR_SETUP with err = "cannot write PATH: why" (the temporary file removed,
 * an existing target left as it was). o holds nothing afterwards. */
kb_status kb_out_commit(kb_out *o, kb_sb *err);

/* Give o up: close it and remove the temporary file (a written-through target keeps what
 * reached it). o holds nothing afterwards; safe on a zeroed or released kb_out. */
void kb_out_abort(kb_out *o);

/* Write all of path by the rule through fn(user, f) (fn returns KB_OK, or a status it
 * explains in err). KB_OK, or the first failure's status with err filled. */
kb_status kb_out_write_with(const char *path, kb_status (*fn)(void *user, FILE *f, kb_sb *err), void *user,
                            kb_sb *err);

/* Open path as an append stream (the records file: one record at a time, each kept as
 * it is written): a regular file or a new path is opened O_RDWR |
 * O_APPEND | O_CREAT; a character device or FIFO is opened O_WRONLY without blocking
 * (a FIFO nobody reads is refused), then made blocking. The same refusals as kb_out_check.
 * Returns the descriptor (close-on-exec; caller closes), or -1 with *st and err set. */
int kb_out_open_append(const char *path, kb_status *st, kb_sb *err);

/* Refuse out when it is the same file as in (device and inode, symlinks followed; a
 * character device such as /dev/null or a terminal may be both). what names the input
 * ("the suite", "run A"). KB_OK when they differ, either does not exist or is NULL;
 * KB_ERR_INPUT with err = "OUT is the same file as WHAT (IN): kbench does not write over
 * its own input" (the caller names the option). */
kb_status kb_out_not_input(const char *out, const char *in, const char *what, kb_sb *err);

/* Check dir as an output directory: an existing directory (symlinks followed) kbench may
 * write into, or a path whose nearest existing ancestor is one (kb_out_dir_make creates
 * it and its missing parents).
 * KB_OK, or KB_ERR_INPUT (dir itself is not a directory) / KB_ERR_SETUP (read-only, no
 * permission, a file in the way of a directory to make) with err = "DIR: why". */
kb_status kb_out_dir_check(const char *dir, kb_sb *err);

/* kb_out_dir_check, then create dir and its missing parents. Same statuses. */
kb_status kb_out_dir_make(const char *dir, kb_sb *err);

/* The process exit code for a status of this module: 0, 2 (KB_ERR_INPUT) or 3. */
int kb_out_exit(kb_status st);

#endif /* KB_OUTPUT_H */
