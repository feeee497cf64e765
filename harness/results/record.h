/* record.h - the results stream: one JSON object per case in a JSON Lines file.
 *
 * Crash safety: each record is one line written with a single write() on an O_APPEND
 * descriptor and made durable (fsync) before kb_record_write returns, so a crash or
 * Ctrl-C loses nothing that finished. A crash in the middle of a write can leave only
 * a truncated last line: kb_record_load skips it with a warning, and kb_record_open
 * cuts it off before appending. Writers serialise on an flock of the file, so several
 * processes may append to the same file.
 *
 * The record format (what a line holds) is results/record_json.h.
 */
#ifndef KB_RECORD_H
#define KB_RECORD_H

#include <jansson.h>

#include "core/kb.h"
#include "core/strset.h"

typedef struct kb_recorder kb_recorder;

/* Open path for appending (created with its parent directories). A truncated last
 * line left by a crash is cut off first, with a warning on stderr. KB_ERR_IO with a
 * message on stderr when the file cannot be opened. */
kb_status kb_record_open(const char *path, kb_recorder **out);

/* Append rec (one record, e.g. from kb_record_json) as one line and fsync it. KB_ERR_IO
 * when the write fails (the file is left as it was), KB_ERR_OOM. */
kb_status kb_record_write(kb_recorder *w, json_t *rec);

/* Close (NULL is fine). */
void kb_record_close(kb_recorder *w);

/* Read every record of a JSON Lines file into *objs (a malloc'ed array of *n owned
 * objects; free with kb_record_free_all). Blank lines are ignored; a malformed last
 * line without its newline (a crash mid-write) is skipped with a warning on stderr.
 * Any other malformed line, or a line that is not an object, is KB_ERR_INPUT with
 * "path:line: message" in err; an unreadable file is KB_ERR_IO. On error nothing is
 * returned (*objs NULL, *n 0). err may be NULL. */
kb_status kb_record_load(const char *path, json_t ***objs, size_t *n, kb_sb *err);
void kb_record_free_all(json_t **objs, size_t n);

/* Add the case_id of every record in objs to s (records without one are ignored).
 * Every recorded case counts as finished, whatever its status: rerunning a wrong or
 * failed case with the same build gives the same answer. KB_ERR_OOM on allocation
 * failure. */
kb_status kb_record_case_ids(json_t *const *objs, size_t n, kb_strset *s);

/* Load path and collect its case ids into s (kb_record_load + kb_record_case_ids).
 * A file that does not exist yet adds nothing and is KB_OK. */
kb_status kb_record_finished(const char *path, kb_strset *s, kb_sb *err);

#endif /* KB_RECORD_H */
