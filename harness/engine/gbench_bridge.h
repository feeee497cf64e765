/* gbench.h - a C API over Google Benchmark (harness/gbench_bridge.cpp, the only C++ file).
 *
 * The bridge is a thin adapter (STYLE.md 15): it registers one benchmark whose loop
 * calls a C function per iteration, runs it with manual time (the function returns the
 * backend timer's reading; nothing Google Benchmark measures itself is used), and
 * copies every run and aggregate back into C structs. It makes no decisions: how many
 * iterations and repetitions, and what to do with the answer, belong to the caller
 * (measure.c, which drives it with a fixed iteration count decided by its own
 * stopping rule; see measure.c).
 *
 * Google Benchmark keeps a process-wide registry: calls must not overlap (kbench runs
 * one case at a time on one thread).
 */
#ifndef KB_GBENCH_H
#define KB_GBENCH_H

#include <stdint.h>

#include "core/kb.h"

#ifdef __cplusplus
extern "C" {
#endif

#define KB_GBENCH_MAX_COUNTERS 8
#define KB_GBENCH_NAME_MAX 64

/* One iteration: run one sample and store its time in *elapsed_us (manual time).
 * Return 0 on success; anything else ends the repetition as an error (Google
 * Benchmark's SkipWithError) with msg (NUL-terminated, may be left empty). */
typedef int (*kb_gbench_iter_fn)(void *user, double *elapsed_us, char *msg, size_t msglen);

/* How Google Benchmark finishes a counter (benchmark::Counter flags). */
typedef enum {
    KB_GBENCH_PLAIN = 0,      /* reported as given (e.g. arithmetic intensity) */
    KB_GBENCH_RATE,           /* value / run time (kIsRate) */
    KB_GBENCH_ITER_RATE       /* value x iterations / run time (kIsIterationInvariantRate):
                                 for work per iteration -> work per second */
} kb_gbench_counter_kind;

typedef struct {
    char name[KB_GBENCH_NAME_MAX];
    double value;
    kb_gbench_counter_kind kind;
} kb_gbench_counter;

typedef struct {
    const char *name;            /* benchmark name (Google Benchmark appends /iterations:.. etc.) */
    kb_gbench_iter_fn fn;
    void *user;
    int64_t iterations;          /* per repetition, > 0: fixed (Iterations); 0: Google Benchmark
                                    grows it until min_time_s of manual time is reached */
    int repetitions;             /* >= 1 (Repetitions) */
    double min_time_s;           /* [s] MinTime, used when iterations == 0; <= 0: the library default */
    kb_gbench_counter counters[KB_GBENCH_MAX_COUNTERS];
    int n_counters;
} kb_gbench_case;

/* One run (a repetition) or one aggregate, as Google Benchmark reported it. */
typedef struct {
    int aggregate;               /* 0: a repetition; 1: an aggregate over the repetitions */
    char aggregate_name[16];     /* "mean", "median", "stddev", "cv"; "" for a repetition */
    int percent;                 /* 1: real_time_us holds a fraction (cv), not a time */
    int64_t repetition_index;    /* -1 for aggregates */
    int64_t iterations;          /* iterations of the run; for aggregates, the repetitions counted */
    double real_time_us;         /* [us] manual time per iteration (the statistic for aggregates) */
    double cpu_time_us;          /* [us] Google Benchmark's own CPU time per iteration (host side) */
    int error;                   /* the iteration function failed */
    char error_message[256];
    kb_gbench_counter counters[KB_GBENCH_MAX_COUNTERS]; /* finished values, same order as given */
    int n_counters;
} kb_gbench_run;

typedef struct {
    kb_gbench_run *runs;         /* repetitions in order, then aggregates (owned) */
    int n_runs;
} kb_gbench_result;

/* Run c through Google Benchmark and copy what it reported into out (free with
 * kb_gbench_result_free; zeroed on entry). A failing iteration function is not a
 * failure here: its run has error = 1 and the message. KB_ERR_INPUT when c is
 * malformed (no fn, repetitions < 1, iterations < 0, too many counters), KB_ERR_OOM,
 * KB_ERR_INTERNAL when Google Benchmark throws or reports nothing. */
kb_status kb_gbench_run_case(const kb_gbench_case *c, kb_gbench_result *out);

void kb_gbench_result_free(kb_gbench_result *r);

/* The aggregate called name ("mean", "median", "stddev", "cv") of r, or NULL. */
const kb_gbench_run *kb_gbench_aggregate(const kb_gbench_result *r, const char *name);

/* Fill a counter (name truncated to KB_GBENCH_NAME_MAX - 1). */
void kb_gbench_counter_set(kb_gbench_counter *c, const char *name, double value, kb_gbench_counter_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* KB_GBENCH_H */
