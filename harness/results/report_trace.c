/* report_trace.c - a recorded run as Chrome trace-event JSON (see report_trace.h).
 * Events are complete slices ("ph": "X", ts and dur in microseconds) and metadata ("M")
 * naming the process and one thread (track) per case. */
#include "results/report_trace.h"

#include "core/output.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void slice(json_t *events, const char *name, const char *cat, int tid, double ts, double dur, json_t *args)
{
    json_t *e = json_pack("{s:s, s:s, s:s, s:i, s:i, s:f, s:f}", "name", name, "cat", cat, "ph", "X", "pid", 1,
                          "tid", tid, "ts", ts, "dur", dur > 0 ? dur : 0.0);
    if (e && args) json_object_set_new(e, "args", args);
    else json_decref(args);
    if (e) json_array_append_new(events, e);
}

static void meta(json_t *events, const char *what, int tid, json_t *args)
{
    json_t *e = json_pack("{s:s, s:s, s:i, s:i, s:o}", "name", what, "ph", "M", "pid", 1, "tid", tid, "args", args);
    if (e) json_array_append_new(events, e);
}

static double num(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : 0;
}

/* The samples of the measure stage that began at t_us. */
static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* Samples [a, b) as one slice: from the first one's start to the last one's end, with
 * their count, smallest, largest and mean time. */
static void sample_group(json_t *us, json_t *start, size_t a, size_t b, int tid, double t_us, const char *clock,
                         json_t *events)
{
    double lo = INFINITY, hi = -INFINITY, sum = 0, end = 0;
    for (size_t k = a; k < b; k++) {
        double d = json_number_value(json_array_get(us, k));
        lo = fmin(lo, d);
        hi = fmax(hi, d);
        sum += d;
        end = fmax(end, json_number_value(json_array_get(start, k)) + d);
    }
    double t0 = json_number_value(json_array_get(start, a));
    char name[64];
    snprintf(name, sizeof name, "samples %zu-%zu", a, b - 1);
    slice(events, name, "sample", tid, t_us + t0, end - t0,
          json_pack("{s:I, s:f, s:f, s:f, s:s}", "n", (json_int_t)(b - a), "min_us", lo, "max_us", hi, "mean_us",
                    sum / (double)(b - a), "clock", clock));
}

/* The samples of the measure stage that began at t_us: a slice each, or, past
 * KB_TRACE_MAX_SAMPLE_SLICES, that many slices of consecutive samples each. */
static void sample_events(json_t *rec, int tid, double t_us, json_t *events)
{
    json_t *timing = json_object_get(rec, "timing");
    json_t *us = json_object_get(timing, "samples_us"), *start = json_object_get(timing, "samples_start_us");
    size_t n = json_array_size(start) < json_array_size(us) ? json_array_size(start) : json_array_size(us);
    if (n > KB_TRACE_MAX_SAMPLE_SLICES) {
        for (size_t g = 0; g < KB_TRACE_MAX_SAMPLE_SLICES; g++)
            sample_group(us, start, g * n / KB_TRACE_MAX_SAMPLE_SLICES, (g + 1) * n / KB_TRACE_MAX_SAMPLE_SLICES, tid,
                         t_us, str(timing, "clock"), events);
        return;
    }
    for (size_t k = 0; k < n; k++) {
        char name[32];
        double d = json_number_value(json_array_get(us, k));
        snprintf(name, sizeof name, "sample %zu", k);
        slice(events, name, "sample", tid, t_us + json_number_value(json_array_get(start, k)), d,
              json_pack("{s:f, s:s}", "us", d, "clock", str(timing, "clock")));
    }
}

void kb_trace_case_events(json_t *rec, int tid, double *t_us, json_t *events)
{
    json_t *stages = json_object_get(rec, "stage_ms"), *timing = json_object_get(rec, "timing");
    double sum = 0, wall_ms = num(rec, "wall_ms");
    for (int s = 0; s < KB_STAGE_COUNT; s++) sum += num(stages, kb_stage_name((kb_stage)s)) * 1000;
    double dur = wall_ms > 0 ? fmax(wall_ms * 1000, sum) : sum;
    meta(events, "thread_name", tid, json_pack("{s:s}", "name", str(rec, "case_id")));
    meta(events, "thread_sort_index", tid, json_pack("{s:i}", "sort_index", tid));
    json_t *args = json_pack("{s:s, s:s}", "status", str(rec, "status"), "reason", str(rec, "reason"));
    if (json_is_number(json_object_get(timing, "median_us"))) {
        json_object_set_new(args, "median_us", json_real(num(timing, "median_us")));
        json_object_set_new(args, "clock", json_string(str(timing, "clock")));
    }
    slice(events, str(rec, "case_id"), "case", tid, *t_us, dur, args);
    double t = *t_us;
    for (int s = 0; s < KB_STAGE_COUNT; s++) {
        double ms = num(stages, kb_stage_name((kb_stage)s));
        if (ms <= 0) continue;
        slice(events, kb_stage_name((kb_stage)s), "stage", tid, t, ms * 1000, NULL);
        if (s == KB_STAGE_MEASURE) sample_events(rec, tid, t, events);
        t += ms * 1000;
    }
    *t_us += dur;
}

/* Write the events of events to out, each after a comma but the very first (*n counts
 * them), and empty the array. */
static kb_status dump_events(json_t *events, size_t *n, FILE *out)
{
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e) {
        if ((*n)++ && fputc(',', out) == EOF)
            return KB_ERR_IO;
        if (json_dumpf(e, out, JSON_COMPACT) != 0)
            return KB_ERR_IO;
    }
    json_array_clear(events);
    return KB_OK;
}

/* The document's closing part: its metadata (the run, the source, the layout). */
static kb_status trace_tail(const kb_report_run *run, FILE *out)
{
    json_t *other = json_pack("{s:s, s:s, s:s}", "run_id", run->run_id, "source", run->source, "layout",
                              "cases end to end in record order by wall time; gaps between cases are not recorded");
    if (!other)
        return KB_ERR_OOM;
    fputs("],\"displayTimeUnit\":\"ms\",\"otherData\":", out);
    int rc = json_dumpf(other, out, JSON_COMPACT);
    json_decref(other);
    fputs("}\n", out);
    return rc == 0 && !ferror(out) ? KB_OK : KB_ERR_IO;
}

kb_status kb_report_trace(const kb_report_run *run, FILE *out)
{
    json_t *events = json_array();
    if (!events)
        return KB_ERR_OOM;
    int emu = 0;
    for (int d = 0; d < run->n_devs; d++) emu |= run->devs[d].emulator;
    char pname[256];
    snprintf(pname, sizeof pname, "kbench run %s%s", run->run_id, emu ? " (emulator: CPU timings)" : "");
    meta(events, "process_name", 0, json_pack("{s:s}", "name", pname));
    fputs("{\"traceEvents\":[", out);
    size_t n = 0;
    double t = 0;
    kb_status st = dump_events(events, &n, out);
    /* one case's events at a time: memory holds a case, never the whole trace */
    for (size_t i = 0; i < run->n && st == KB_OK; i++) {
        kb_trace_case_events(run->recs[i], (int)i + 1, &t, events);
        st = dump_events(events, &n, out);
    }
    json_decref(events);
    return st == KB_OK ? trace_tail(run, out) : st;
}

/* ---- written as the run goes ---- */

/* Append every event of events to the stream, one per line. */
static kb_status put_events(kb_trace_stream *s, json_t *events)
{
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e) {
        char *text = json_dumps(e, JSON_COMPACT);
        if (!text) return KB_ERR_OOM;
        fprintf(s->f, "%s%s", s->n_events++ ? ",\n" : "[\n", text);
        free(text);
    }
    return fflush(s->f) == 0 && !ferror(s->f) ? KB_OK : KB_ERR_IO;
}

kb_status kb_trace_stream_open(const char *path, const char *title, kb_trace_stream *s, kb_sb *err)
{
    memset(s, 0, sizeof *s);
    kb_status st = kb_out_open(&s->out, path, err);
    if (st != KB_OK) return st;
    s->f = s->out.f;
    json_t *events = json_array();
    meta(events, "process_name", 0, json_pack("{s:s}", "name", title));
    st = put_events(s, events);
    json_decref(events);
    if (st != KB_OK) {
        kb_sb_printf(err, "cannot write %s", path);
        kb_out_abort(&s->out);
        s->f = NULL;
    }
    return st;
}

kb_status kb_trace_stream_case(kb_trace_stream *s, json_t *rec)
{
    if (!s->f) return KB_OK;
    json_t *events = json_array();
    kb_trace_case_events(rec, ++s->tid, &s->t_us, events);
    kb_status st = put_events(s, events);
    json_decref(events);
    return st;
}

kb_status kb_trace_stream_close(kb_trace_stream *s, kb_sb *err)
{
    if (!s->f) return KB_OK;
    fputs(s->n_events ? "\n]\n" : "[]\n", s->f);
    s->f = NULL;
    return kb_out_commit(&s->out, err);
}
