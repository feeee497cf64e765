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

/* How an existing results file ends. */
typedef enum {
    KB_TAIL_CLEAN = 0,       /* empty, or the last record ends with its newline */
    KB_TAIL_NO_NEWLINE,      /* the last record is complete but lacks its newline */
    KB_TAIL_TRUNCATED        /* the last line is a record cut short (a crash mid-write) */
} kb_record_tail;

/* A results file as found before anything is appended to it. */
typedef struct {
    int exists;              /* a regular file with content */
    int64_t n_records;       /* complete records */
    kb_record_tail tail;
    int64_t tail_bytes;      /* [bytes] of the truncated last line */
} kb_record_file;

/* Inspect path without changing it. KB_OK when it does not exist, is empty, is not a
 * regular file (a pipe: nothing to check), or holds only kbench records (JSON objects
 * with schema_version and case_id, one per line) of suite (NULL: any) - a truncated
 * last record allowed. Otherwise KB_ERR_INPUT with the reason in err ("path:line: not a
 * kbench record", "path holds records of suite 'x', not 'y'"), KB_ERR_IO when it cannot
 * be read. A record names its suite in "suite"; older ones only in run_id's prefix. */
kb_status kb_record_inspect(const char *path, const char *suite, kb_record_file *out, kb_sb *err);

/* Open path for appending by the output rule's append form (core/output.h's
 * kb_out_open_append: a file created or appended to, its directory must exist; a device
 * or FIFO written through; a directory or socket refused), after kb_record_inspect (suite
 * as there): anything that is not a records file of that suite is refused with
 * KB_ERR_INPUT and left byte-identical. A complete last record without its newline gets
 * one; a truncated last line left by a crash is cut off, with a warning on stderr.
 * KB_ERR_INPUT / KB_ERR_SETUP (kb_out_open_append's) or KB_ERR_IO when the file cannot be
 * opened; the reason in err. */
kb_status kb_record_open(const char *path, const char *suite, kb_recorder **out, kb_sb *err);

/* Append rec (one record, e.g. from kb_record_json) as one line and fsync it. KB_ERR_IO
 * when the write fails (the file is left as it was), KB_ERR_OOM. */
kb_status kb_record_write(kb_recorder *w, json_t *rec);

/* Close (NULL is fine). */
void kb_record_close(kb_recorder *w);

/* Read every record of a JSON Lines file into *objs (a malloc'ed array of *n owned
 * objects; free with kb_record_free_all). Blank lines are ignored; a record cut short
 * at the end (a crash mid-write: a last line without its newline that starts as every
 * record does) is skipped with a warning on stderr.
 * The file is opened as every input is (core/fsutil.h: without blocking, a regular file
 * of at most KB_LIMIT_RECORDS_BYTES). Any other malformed line, a line that is not an
 * object, an object with a key twice, or one whose numbers are out of range
 * (results/record_check.h) is KB_ERR_INPUT with "path:line: message" in err, as is a
 * missing path, a FIFO, a device or a file over the limit; an unreadable file is
 * KB_ERR_IO. On error nothing is returned (*objs NULL, *n 0). err may be NULL. */
kb_status kb_record_load(const char *path, json_t ***objs, size_t *n, kb_sb *err);
void kb_record_free_all(json_t **objs, size_t n);

/* Add the case_id of every record in objs to s (records without one are ignored).
 * Every recorded case counts as finished, whatever its status: rerunning a wrong or
 * failed case with the same build gives the same answer. KB_ERR_OOM on allocation
 * failure. */
kb_status kb_record_case_ids(json_t *const *objs, size_t n, kb_strset *s);

/* Load path and collect its case ids into s (kb_record_load + kb_record_case_ids).
 * A file that does not exist yet, or a device or FIFO (records written through it cannot
 * be read back), adds nothing and is KB_OK. Every complete record
 * counts, a last one without its newline included (kb_record_open keeps it). */
kb_status kb_record_finished(const char *path, kb_strset *s, kb_sb *err);

#endif /* KB_RECORD_H */
