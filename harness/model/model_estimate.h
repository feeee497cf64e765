/* model_estimate.h - `kbench model RUN|SUITE --estimate --gpu NAME` (issue 26 item 5): a
 * what-if for a GPU the user has not got. Every case of a suite whose shape is one of the
 * model's ops' (at prefill or decode) is estimated on --gpu at its full shape by `kbench
 * estimate`'s static model (harness/estimate), and the estimates become a run of ESTIMATE
 * records (timing clock "estimate", device "<SKU> (ESTIMATE)") that the roll-up takes ops
 * from (model_rollup.h kb_model_rollup_est): per-op time, tokens/s, MFU against the
 * modelled GPU's datasheet peak, the op to optimise first - every figure labelled ESTIMATE.
 * With a run, its GPU-timed records of the same GPU model are used where present and the
 * estimates fill the rest; emulator (CPU-timed) records never are. An op no suite case
 * matches is missing, never extrapolated. */
#ifndef KB_MODEL_ESTIMATE_H
#define KB_MODEL_ESTIMATE_H

#include "estimate/est_cmd.h"
#include "model/model_rollup.h"

typedef struct {
    const char *suite_path;     /* the suite whose cases are estimated */
    const char *gpu;            /* --gpu: a name of kb_est_gpus */
    int sm_override;            /* --arch; 0: the GPU's */
    const char *cache_dir;      /* NULL: the default compile cache */
    int jobs;                   /* compile workers; 0: the cores (at most 8) */
    const char *peaks_path;     /* NULL: $KBENCH_PEAKS, else data/peaks.json */
    const char *db_path;        /* results store of measured ceilings (est_store.h); NULL: none */
} kb_model_est_opts;

/* What an estimate roll-up holds (large: allocate it). */
typedef struct {
    kb_est_setup setup;         /* the GPU modelled */
    kb_report_run est;          /* the ESTIMATE records */
    size_t n_estimated;         /* cases estimated */
    kb_model_rollup rollup;
} kb_model_est;

/* The suite a run was recorded from: o_suite when given, else <data root>/suites/<the
 * records' suite name>.yaml. Written into out. KB_ERR_INPUT with the reason in err when the
 * run names no suite or the file does not exist. */
kb_status kb_model_run_suite(const kb_report_run *run, const char *o_suite, kb_sb *out, kb_sb *err);

/* 1 when run's device is a GPU that peaks_path matches to the SKU of s (its GPU-timed
 * records may stand beside estimates); else 0 with the reason in note (n bytes). */
int kb_model_run_matches(const kb_report_run *run, const kb_est_setup *s, const char *peaks_path, char *note,
                         size_t n);

/* Estimate o->suite_path's cases at m's ops' shapes on o->gpu and roll m up at dtype (-1:
 * the model's) from them and run's usable records (run may be NULL). *out is filled
 * (free with kb_model_est_free). KB_ERR_INPUT for a bad GPU name or suite, KB_ERR_SETUP
 * without a datasheet entry, compiler or memory; message in err. */
kb_status kb_model_estimate(const kb_model *m, const kb_report_run *run, const kb_model_est_opts *o, int dtype,
                            kb_model_est *out, kb_sb *err);

void kb_model_est_free(kb_model_est *e);

#endif /* KB_MODEL_ESTIMATE_H */
