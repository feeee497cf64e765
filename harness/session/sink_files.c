/* sink_files.c - the records file, the store and the trace as record sinks (see sink_files.h). */
#include "session/sink_files.h"

#include "core/output.h"
#include "core/report.h"
#include "results/record.h"
#include "results/report_trace.h"
#include "results/store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- the JSON Lines records file ---- */

static kb_status jsonl_record(void *self, const kb_sink_case *c)
{
    return kb_record_write(self, c->rec);   /* kb_record_write reports why it failed */
}

static void jsonl_free(void *self) { kb_record_close(self); }

static const kb_sink_ops jsonl_ops = { "jsonl", KB_SINK_REQUIRED, NULL, NULL, jsonl_record, NULL, jsonl_free };

kb_status kb_sink_jsonl_open(const char *path, const char *suite, kb_sink *out, kb_sb *err)
{
    kb_recorder *w;
    memset(out, 0, sizeof *out);
    kb_status st = kb_record_open(path, suite, &w, err);
    if (st == KB_OK)
        *out = (kb_sink){ &jsonl_ops, w };
    return st;
}

/* ---- the SQLite store ---- */

typedef struct {
    kb_store *store;
    char *source;
} store_sink;

static kb_status store_record(void *self, const kb_sink_case *c)
{
    store_sink *s = self;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_store_put(s->store, c->rec, s->source, &err);
    if (st != KB_OK)
        kb_report(KB_REPORT_ERROR, "results store: %s (the JSON Lines record is written)", err.s);
    kb_sb_free(&err);
    return st;
}

static void store_free(void *self)
{
    store_sink *s = self;
    kb_store_close(s->store);
    free(s->source);
    free(s);
}

static const kb_sink_ops store_ops = { "store", KB_SINK_MIRROR, NULL, NULL, store_record, NULL, store_free };

kb_status kb_sink_store_open(const char *db_path, const char *source, kb_sink *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    store_sink *s = calloc(1, sizeof *s);
    if (!s || !(s->source = strdup(source ? source : ""))) {
        free(s);
        kb_sb_printf(err, "out of memory");
        return KB_ERR_OOM;
    }
    kb_status st = kb_store_open(db_path, &s->store, err);
    if (st != KB_OK) {
        store_free(s);
        return st;
    }
    *out = (kb_sink){ &store_ops, s };
    return KB_OK;
}

/* ---- the trace, written as the run goes ---- */

typedef struct {
    kb_trace_stream t;
    char *path;
} trace_sink;

/* Commit the trace (or give it up when failed), reporting a failure. */
static void trace_end(trace_sink *s, int failed)
{
    if (!s->t.f)
        return;
    kb_sb err;
    kb_sb_init(&err);
    if (failed) {
        kb_out_abort(&s->t.out);
        s->t.f = NULL;
    } else if (kb_trace_stream_close(&s->t, &err) != KB_OK) {
        kb_report(KB_REPORT_ERROR, "--trace: %s", err.s);
    }
    kb_sb_free(&err);
}

static kb_status trace_record(void *self, const kb_sink_case *c)
{
    trace_sink *s = self;
    kb_status st = kb_trace_stream_case(&s->t, c->rec);
    if (st != KB_OK) {
        kb_report(KB_REPORT_ERROR, "--trace: cannot write %s: %s; no trace (the records go on)", s->path,
                  strerror(errno));
        trace_end(s, 1);
    }
    return st;
}

static void trace_close(void *self) { trace_end(self, 0); }

static void trace_free(void *self)
{
    trace_sink *s = self;
    trace_end(s, 0);
    free(s->path);
    free(s);
}

static const kb_sink_ops trace_ops = { "trace", KB_SINK_MIRROR, NULL, NULL, trace_record, trace_close, trace_free };

kb_status kb_sink_trace_open(const char *path, const char *title, kb_sink *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    trace_sink *s = calloc(1, sizeof *s);
    if (!s || !(s->path = strdup(path))) {
        free(s);
        kb_sb_printf(err, "out of memory");
        return KB_ERR_OOM;
    }
    kb_status st = kb_trace_stream_open(path, title, &s->t, err);
    if (st != KB_OK) {
        free(s->path);
        free(s);
        return st;
    }
    *out = (kb_sink){ &trace_ops, s };
    return KB_OK;
}
