/* tune_run.h - one tuning run of `kbench tune` (cli/tune.c opens it): the search of one
 * problem, its evaluations as cases of the session (session/session.h), its choice.
 * Prints progress. */
#ifndef KB_CLI_TUNE_RUN_H
#define KB_CLI_TUNE_RUN_H

#include "cli/run.h"
#include "tune/space.h"
#include "tune/strategy.h"
#include "tune/tunedb_sink.h"

/* `kbench tune`'s options (cli/tune.c parses them). */
typedef struct {
    kb_run_opts run;               /* first: the shared option rows (KB_ROW_*) address it */
    const char *strategy;          /* brute, random, ils, anneal */
    int budget;                    /* evaluations per problem; 0: all */
    double time_s;                 /* [s] search time per problem; 0: no limit */
    int seed;
    const char *db_path;           /* NULL: results/tune.db */
    int no_prune;                  /* measure what spills too */
    int rounds;                    /* interleaved re-measurement rounds of a tie (0: none) */
    int confirm;                   /* re-measure every winner too (at least one round) */
    const char *replay_path;       /* --replay: records or a Kernel Tuner cache */
    int repeats;                   /* --replay: seeds per strategy for --strategy all */
    const char *format;            /* --replay: text or json */
} kb_tune_opts;

typedef struct {
    const kb_tune_opts *o;
    kb_session *s;                 /* the backend, the plan's one walk, the pipeline, the records */
    kb_tunedb_sink *db;            /* the tuning database, a sink of s (s owns it) */
    kb_sb out_path;
    kb_tune_space space;
    kb_tune_strategy strategy;
    /* counts over the run */
    int evaluated, reused, failed, pruned, skipped, chosen, ties, unchosen, remeasured;
} kb_tune_session;

/* Search problem p of the session's space and record its choice. 0, or -1 when the
 * run must stop (interrupted, a record could not be written, the device is lost, out of
 * memory). */
int kb_tune_session_problem(kb_tune_session *x, const kb_tune_problem *p);

#endif /* KB_CLI_TUNE_RUN_H */
