/* report_trace.h - a recorded run as Chrome trace-event JSON (chrome://tracing, Perfetto,
 * https://ui.perfetto.dev): one track per case; on it the case as a slice named by its id
 * (the name of its NVTX range), its stages (valid, compile, setup, verify, measure, derive,
 * overhead, telemetry) as nested slices from the record's stage_ms, and each timed sample
 * as a slice inside measure at the time its timer started (samples_start_us; records
 * written before that field have no sample slices). Cases are laid end to end in record
 * order by their wall time: the gaps between cases are not recorded. Emulator runs are
 * named CPU timings in the trace's process name and metadata. */
#ifndef KB_REPORT_TRACE_H
#define KB_REPORT_TRACE_H

#include "results/report_rows.h"

/* The trace events of one record (its track tid) starting at *t_us [us]; *t_us advances
 * past the case. Appended to events. Used by the trace report and by kb_trace_stream. */
void kb_trace_case_events(json_t *rec, int tid, double *t_us, json_t *events);

/* Write run as one trace JSON object {"traceEvents": [...], ...}. KB_ERR_IO when the
 * stream fails, KB_ERR_OOM when out of memory. */
kb_status kb_report_trace(const kb_report_run *run, FILE *out);

/* A trace written as a run goes (`kbench run --trace FILE`): the JSON Array Format, one
 * event per line, flushed after every case; the closing ']' comes at close, and a run that
 * dies before it leaves a trace chrome://tracing still opens (the bracket is optional). */
typedef struct {
    FILE *f;
    int n_events;
    int tid;          /* the last case's track */
    double t_us;      /* where the next case starts */
} kb_trace_stream;

/* Create path and write the process name (title). KB_ERR_IO when it cannot be written. */
kb_status kb_trace_stream_open(const char *path, const char *title, kb_trace_stream *s);
/* Append the events of one record. KB_ERR_IO when the file fails (KB_OK when not open). */
kb_status kb_trace_stream_case(kb_trace_stream *s, json_t *rec);
/* Close the array and the file. */
kb_status kb_trace_stream_close(kb_trace_stream *s);

#endif
