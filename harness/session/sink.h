/* sink.h - where a session's finished cases go: a list of record sinks behind one
 * interface (nvbench's printer_base and its multiplex, google/benchmark's reporters).
 *
 * A sink is a small object with open / record / close behaviour: the JSON Lines file and
 * the SQLite store (session/sink_files.h), the trace, the tuning database's entry
 * (tune/tune_sink.h), the console (cli/console.h). A command chooses its sinks and adds
 * them to its session (kb_session_add_sink); the session serialises each finished case
 * once (results/record_json.h) and hands the same record to every sink, in three passes:
 *
 *   1. KB_SINK_REQUIRED sinks (the records file): a failure stops the run;
 *   2. KB_SINK_MIRROR sinks (store, trace, tuning database), skipped for a case whose
 *      record a required sink could not keep - a mirror never holds what the file lacks;
 *   3. the others (the console), which only show the case.
 *
 * Within a pass, sinks are called in the order they were added. No sink knows another,
 * and the session knows none of them: a new output is a new sink, not a change here.
 */
#ifndef KB_SESSION_SINK_H
#define KB_SESSION_SINK_H

#include "engine/case.h"
#include "session/cases.h"

#include <jansson.h>

/* What a run tells its sinks before the first case (kb_session_begin). */
typedef struct {
    const char *run_id;
    const char *suite;            /* the plan's suite name */
    const char *backend;          /* "cuda", "emu" */
    const kb_device_info *dev;
    int target_sm;                /* what the kernels are compiled for (--arch, else dev->sm) */
    int64_t n_cases;              /* planned cases (the console's "[i/n]") */
    const kb_cases *cases;        /* the selected cases: todo, resumed, counts.repeats, id_width */
    int check_shapes;             /* the emulator runs the suite's check shapes */
    const kb_plan *plan;          /* the plan the cases index (its shape names), NULL when none */
} kb_sink_run;

/* One finished case. */
typedef struct {
    const kb_cases_item *item;
    const kb_case_result *r;
    const char *status;           /* r's status word ("ok", "skipped", ...: kb_case_status_name) */
    json_t *rec;                  /* its record (kb_record_json), NULL when it could not be built */
    const char *dump_err;         /* "" or why its --dump failed */
} kb_sink_case;

enum {
    KB_SINK_REQUIRED = 1u << 0,   /* keeps the record: its failure stops the run */
    KB_SINK_MIRROR   = 1u << 1    /* copies the record: skipped when a required sink failed */
};

/* A sink's behaviour. Only record is required; self is the sink's own state. */
typedef struct {
    const char *name;             /* "jsonl", "store", "trace", "console", "tunedb" */
    unsigned flags;               /* KB_SINK_* */
    void (*open)(void *self, const kb_sink_run *run);          /* OPTIONAL: the run begins */
    void (*case_start)(void *self, const kb_cases_item *item); /* OPTIONAL: a case is about to run */
    kb_status (*record)(void *self, const kb_sink_case *c);    /* KB_OK, or the failure (said through kb_report) */
    void (*close)(void *self);                                 /* OPTIONAL: the run ended (stopped or not) */
    void (*free)(void *self);                                  /* OPTIONAL: release self */
} kb_sink_ops;

typedef struct {
    const kb_sink_ops *ops;       /* NULL: no sink (a constructor that failed) */
    void *self;
} kb_sink;

/* The multiplex: the sinks of one session, in the order added. */
typedef struct {
    kb_sink *v;
    int n, cap;
} kb_sinks;

/* Add k (the list owns it from here; it is freed at once when out of memory). KB_OK or
 * KB_ERR_OOM. A sink without ops is ignored. */
kb_status kb_sinks_add(kb_sinks *l, kb_sink k);

void kb_sinks_open(const kb_sinks *l, const kb_sink_run *run);
void kb_sinks_case_start(const kb_sinks *l, const kb_cases_item *item);

/* The three passes above. Returns 0, or -1 when a required sink failed (c->rec NULL
 * counts as that: no required sink can keep it). */
int kb_sinks_record(const kb_sinks *l, const kb_sink_case *c);

void kb_sinks_close(const kb_sinks *l);

/* Free every sink and the list. */
void kb_sinks_free(kb_sinks *l);

#endif /* KB_SESSION_SINK_H */
