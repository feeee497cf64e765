/* tune_run.h - one tuning run of `kbench tune` (cli/tune.c opens it): the search of one
 * problem, its evaluations as cases of the session (session/session.h), its choice.
 * Prints progress. */
#ifndef KB_CLI_TUNE_RUN_H
#define KB_CLI_TUNE_RUN_H

#include "cli/run.h"
#include "tune/space.h"
#include "tune/strategy.h"
#include "tune/tunedb_sink.h"

#define KB_TUNE_MAX_POS 64         /* positional arguments: SUITE, or more replay files */

/* `kbench tune`'s options (cli/tune.c parses them). */
typedef struct {
    kb_run_opts run;               /* first: the shared option rows (KB_ROW_*) address it */
    const char *strategy;          /* a kb_tune_strategy name, or "all" (--replay) */
    int budget;                    /* evaluations per problem; 0: all */
    double time_s;                 /* [s] search time per problem (--time, --budget-time live); 0: no limit */
    const char *prior;             /* "none" or "estimate" */
    int seed;
    const char *db_path;           /* NULL: results/tune.db */
    int no_prune;                  /* measure what spills too */
    int rounds;                    /* interleaved re-measurement rounds of a tie (0: none) */
    int confirm;                   /* re-measure every winner too (at least one round) */
    double max_noise;              /* a winner's relative standard error at most (winner.h's bound) */
    const char **replay_paths;     /* --replay: records or Kernel Tuner caches (and the positionals after) */
    int n_replay;
    const char *pos[KB_TUNE_MAX_POS]; /* positional arguments: the suite, or more replay files */
    const char *budgets;           /* --replay: "1,3,10": percentages of brute force */
    const char *budget_unit;       /* --replay: what --budgets are percentages of: evaluations or time */
    double budget_time_s;          /* [s] --budget-time: simulated seconds (--replay), else the real clock */
    int repeats;                   /* --replay: seeds per strategy for --strategy all */
    const char *format;            /* --replay: text, json, svg or html */
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
