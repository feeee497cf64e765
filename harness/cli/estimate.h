/* estimate.h - `kbench estimate SUITE --gpu NAME [--arch sm_XX]`: the static performance
 * model (harness/estimate, docs/estimate.md) of every case of a suite at its full shape,
 * from each case's own NVRTC/ptxas resources. Every line it prints says "estimate":
 * these are estimates, never measurements, and they are never recorded as results. */
#ifndef KB_CLI_ESTIMATE_H
#define KB_CLI_ESTIMATE_H

#include "cli/run.h"

typedef struct {
    kb_run_opts run;            /* first: the shared KB_ROW_* rows address it */
    const char *gpu;            /* --gpu: a name of kb_est_gpus */
    const char *peaks_path;     /* --peaks FILE; NULL: $KBENCH_PEAKS or data/peaks.json */
    const char *format;         /* --format text|json|csv (NULL: text) */
    const char *sort;           /* --sort plan|time|roof (NULL: plan; with --top: time) */
    int top;                    /* --top N (0: every row) */
    const char *db_path;        /* --db PATH (NULL: $KBENCH_DB, else results/kbench.db) */
} kb_estimate_opts;

/* Estimate every case of o->run.suite_path on o->gpu; a process exit code (1 when a
 * case did not compile, 2 for a bad suite, 3 without a compiler or datasheet). */
int kb_cmd_estimate(const kb_estimate_opts *o);

extern const kb_command kb_command_estimate;

#endif
