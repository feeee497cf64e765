/* report_trace.h - a recorded run as Chrome trace-event JSON (chrome://tracing, Perfetto,
 * https://ui.perfetto.dev): one track per case; on it the case as a slice named by its id
 * (the name of its NVTX range), its stages (valid, compile, setup, verify, measure, derive,
 * overhead, telemetry) as nested slices from the record's stage_ms, and each timed sample
 * as a slice inside measure at the time its timer started (samples_start_us; records
 * written before that field have no sample slices). A case with more than
 * KB_TRACE_MAX_SAMPLE_SLICES samples gets that many slices instead, each covering
 * consecutive samples (named "samples I-J", with their count, min, max and mean time), so
 * a trace grows with the cases, not with their samples. Cases are laid end to end in record
 * order by their wall time: the gaps between cases are not recorded. Emulator runs are
 * named CPU timings in the trace's process name and metadata. */
#ifndef KB_REPORT_TRACE_H
#define KB_REPORT_TRACE_H

#include "core/output.h"
#include "results/report_rows.h"

#include <stdio.h>

/* At most this many sample slices per case (more samples are grouped, see above). */
#define KB_TRACE_MAX_SAMPLE_SLICES 1000

/* The trace events of one record (its track tid) starting at *t_us [us]; *t_us advances
 * past the case. Appended to events. Used by the trace report and by kb_trace_stream. */
void kb_trace_case_events(json_t *rec, int tid, double *t_us, json_t *events);

/* Write run as one trace JSON object {"traceEvents": [...], ...}, streamed: one case's
 * events in memory at a time. KB_ERR_IO when the stream fails, KB_ERR_OOM when out of
 * memory. */
kb_status kb_report_trace(const kb_report_run *run, FILE *out);

/* A trace written as a run goes (`kbench run --trace FILE`): the JSON Array Format, one
 * event per line, flushed after every case, by the output rule (core/output.h): into a
 * temporary file beside FILE renamed onto it at close (a device or FIFO written through).
 * The closing ']' comes at close; a run killed before it leaves the temporary file, which
 * chrome://tracing still opens (the bracket is optional). */
typedef struct {
    kb_out out;
    FILE *f;          /* out.f while open, NULL otherwise */
    int n_events;
    int tid;          /* the last case's track */
    double t_us;      /* where the next case starts */
} kb_trace_stream;

/* Open path by the output rule and write the process name (title). KB_OK, or
 * core/output.h's statuses (KB_ERR_INPUT, KB_ERR_SETUP, KB_ERR_OOM) or KB_ERR_IO with err
 * naming path. */
kb_status kb_trace_stream_open(const char *path, const char *title, kb_trace_stream *s, kb_sb *err);
/* Append the events of one record. KB_ERR_IO when the file fails (KB_OK when not open). */
kb_status kb_trace_stream_case(kb_trace_stream *s, json_t *rec);
/* Close the array and commit the file (kb_out_commit). KB_OK, or KB_ERR_SETUP with err. */
kb_status kb_trace_stream_close(kb_trace_stream *s, kb_sb *err);

#endif
