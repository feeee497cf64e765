/* sink_files.h - the record sinks that write files: the JSON Lines records file
 * (results/record.h), the SQLite store (results/store.h) and the Chrome trace written as
 * the run goes (results/report_trace.h). See sink.h for the interface. */
#ifndef KB_SESSION_SINK_FILES_H
#define KB_SESSION_SINK_FILES_H

#include "session/sink.h"

/* The records file at path, appended to (kb_record_open: a file that is not a records
 * file of suite is refused and left as it was). KB_SINK_REQUIRED. KB_OK with *out set,
 * or kb_record_open's status with err filled. */
kb_status kb_sink_jsonl_open(const char *path, const char *suite, kb_sink *out, kb_sb *err);

/* The store at db_path; each record is put with source (the records file's path) as its
 * origin. A failed put is reported and the run goes on (KB_SINK_MIRROR). KB_OK with *out
 * set, or kb_store_open's status with err filled. */
kb_status kb_sink_store_open(const char *db_path, const char *source, kb_sink *out, kb_sb *err);

/* The trace at path by the output rule (core/output.h; title: the trace's process name),
 * committed when the run ends; a write that fails is reported and the trace given up
 * (KB_SINK_MIRROR). KB_OK, or core/output.h's statuses with err naming path. */
kb_status kb_sink_trace_open(const char *path, const char *title, kb_sink *out, kb_sb *err);

#endif /* KB_SESSION_SINK_FILES_H */
