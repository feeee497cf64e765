/* est_cmd.h - `kbench estimate SUITE --gpu NAME` as one call (the cli's option table fills
 * kb_est_cmd): the GPU's datasheet peaks, the results store's measured ceilings of that
 * SKU when it has any (est_store.h), every case of the suite estimated (est_suite.h) and
 * written in the asked format (est_report.h). Nothing is recorded. */
#ifndef KB_EST_CMD_H
#define KB_EST_CMD_H

#include "estimate/estimate.h"

#include <stdio.h>

/* The GPU modelled, with where its ceilings come from. x points into this struct
 * (x.peaks = &peaks): use it where kb_est_setup_target filled it, never a copy. */
typedef struct {
    kb_peaks peaks;
    kb_est_target x;
    char ceilings_note[512]; /* "measured on <device> <uuid>: ..." or "" (datasheet x fraction, assumed) */
} kb_est_setup;

/* Fill *s for --gpu gpu: the datasheet peaks from peaks_path (NULL: the default), the
 * GPU-timed ceilings of the store at db_path (NULL: none) of a device of the same SKU
 * (est_store.h), the target (kb_est_target_init). KB_ERR_INPUT for an unknown GPU or one
 * whose SM count is unpublished (gpu.h: sms 0; the model needs it), KB_ERR_SETUP when the
 * peaks file has no entry for it; a store that is there but cannot be read as one
 * (kb_est_store_check) is its status; message in err. */
kb_status kb_est_setup_target(const char *gpu, const char *peaks_path, const char *db_path, kb_est_setup *s,
                              kb_sb *err);

typedef struct {
    const char *suite_path;
    const char *gpu;            /* --gpu: a name of kb_est_gpus (required) */
    int sm_override;            /* --arch; 0: the GPU's architecture */
    const char *const *filters; /* --filter */
    int n_filters;
    const char *cache_dir;  /* NULL: the default compile cache */
    int jobs;               /* compile workers */
    const char *peaks_path; /* NULL: $KBENCH_PEAKS, else data/peaks.json */
    const char *db_path;    /* the results store whose measured ceilings are looked up; NULL: $KBENCH_DB,
                                 * else results/kbench.db (an absent store: none) */
    const char *format;     /* "text" (NULL), "json", "csv" */
    const char *sort;       /* "plan" (NULL), "time", "roof" */
    int top;                /* > 0: only the top N rows */
    int quiet;              /* text: header and summary only */
} kb_est_cmd;

/* What a run of the command estimated, for the caller's summary line. */
typedef struct {
    int sm;                /* the architecture estimated for (core/arch.h code) */
    size_t estimated;      /* cases the model estimated */
    size_t compile_errors; /* cases whose module did not compile */
    size_t not_estimated;  /* skipped (valid() refused) or not modelled */
} kb_est_summary;

/* Run the command: the report in o->format on out, *sum filled. Returns a process exit
 * code: KB_EXIT_OK, KB_EXIT_WRONG (1) when a case failed to compile, KB_EXIT_INPUT for a
 * bad suite, option or filter that matches nothing, a GPU without an SM count, an --arch
 * whose CUBIN would not load on the GPU (core/arch.h), KB_EXIT_SETUP without a compiler,
 * datasheet or writable output. The reason of a non-zero code is in err; nothing is printed
 * but the report (the caller, cli/, prints err and the summary). */
int kb_est_command(const kb_est_cmd *o, FILE *out, kb_est_summary *sum, kb_sb *err);

#endif /* KB_EST_CMD_H */
