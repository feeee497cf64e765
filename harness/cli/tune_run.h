/* tune_run.h - one tuning session of `kbench tune` (cli/tune.c opens it): the search of
 * one problem, its evaluations through the case pipeline, its choice. Prints progress. */
#ifndef KB_CLI_TUNE_RUN_H
#define KB_CLI_TUNE_RUN_H

#include "cli/run.h"
#include "engine/case.h"
#include "results/record.h"
#include "results/store.h"
#include "tune/space.h"
#include "tune/strategy.h"
#include "tune/tunedb.h"

#define KB_TUNE_MAX_FAMILIES 64
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
    kb_plan plan;
    const kb_backend *be;
    kb_backend_ctx *bx;
    kb_device_info dev;
    kb_peaks peaks;
    kb_l2_flush flush;
    int have_flush;
    kb_measure_overrides overrides;
    kb_pipeline pipe;
    kb_recorder *rec;
    kb_store *store;               /* NULL: records only */
    kb_tunedb *db;
    kb_sb out_path;
    char run_id[64];
    kb_tune_key key;
    char source[KB_TUNE_MAX_FAMILIES][40]; /* per family: its kernel source's hash ("" not yet) */
    kb_tune_space space;
    kb_tune_strategy strategy;
    /* counts over the session */
    int evaluated, reused, failed, pruned, skipped, chosen, ties, unchosen, remeasured;
    int record_failed;
} kb_tune_session;

/* Search problem p of the session's space and record its choice. 0, or -1 when the
 * session must stop (interrupted, a record could not be written, out of memory). */
int kb_tune_session_problem(kb_tune_session *x, const kb_tune_problem *p);

#endif /* KB_CLI_TUNE_RUN_H */
