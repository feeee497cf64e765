/* model_rollup.h - a model description (model_desc.h) rolled up from one recorded run:
 * each op matched to the run's best verified case of its shape, per-op time, share,
 * FLOPs, bytes, AI, bound and % of the three roofs; per layer and per model step at
 * prefill and decode: time per token, tokens/s, MFU, bandwidth utilisation; a precision
 * what-if; the op to optimise first. Pure: reads the run's rows, prints nothing.
 *
 * Formulas (docs/model-format.md):
 *   step time      = layers x sum(per-layer op time x count) + sum(per-model op time x count)
 *   time per token = step time / tokens;  tokens/s = tokens / step time
 *   N              = sum over ops of weights x (layers for per-layer ops)
 *   MFU            = the FLOPs of the weight matmuls the step executes (every op with
 *                    weights > 0: its case's FLOPs x count x layers) / (peak[dtype] x step
 *                    time) - the matmuls executed, so an LM head run for the last position
 *                    of each sequence counts once per sequence, not once per token
 *   training       = 6 N FLOPs per token, an estimate (backward ~ 2x forward), never measured
 *   bandwidth util = sum(op bytes x count ...) / step time / peak bandwidth
 *   focus score    = op's step time x (1 - % of roof / 100), the measured roof where recorded,
 *                    else the datasheet roof; by time alone where no roof applies (emulator)
 * Missing ops are listed with the reason and left out of every sum; the phase's times are
 * then lower bounds (bounds_only) and no rate is given - no tokens/s, MFU, GB/s or
 * bandwidth utilisation - since a rate from part of a step says nothing of the whole; nothing
 * is extrapolated. A row faster than its roofline (% of the datasheet roof > 100: peaks known,
 * never on the emulator) is used and flagged (faster_than_roof): its work model or timing is
 * wrong. The what-if's error is the worst err/tol (verify.max_err_ratio: 1 = at the
 * tolerance), which reads what it says where max_rel_err does not (near-zero outputs).
 *
 * With estimates (kbench model --estimate, model_estimate.h): a second run of ESTIMATE
 * records, one per case of a suite at its full shape on the GPU modelled; an op takes the
 * measured run's row where that run is usable (GPU-timed, the same GPU model) and has one,
 * else the estimate's, and says which (kb_model_opres.estimated). Emulator (CPU-timed)
 * rows are never used beside estimates.
 */
#ifndef KB_MODEL_ROLLUP_H
#define KB_MODEL_ROLLUP_H

#include "model/model_desc.h"
#include "results/report_rows.h"

typedef struct {
    int modelled;              /* the op runs in this phase (its phases list) */
    int row;                   /* index into run->rows of the case used, -1: missing */
    int named;                 /* the row was named by the op's `case` */
    int estimated;             /* 1: the row is an ESTIMATE (of R->est); 0: a record of R->run */
    char why[256];             /* why missing ("" when found) */
    double time_us;            /* [us] median of one execution */
    double step_us;            /* [us] its part of one model step: time x count (x layers) */
    double share;              /* [%] of the layer (per-layer ops) or of the step (per-model ops) */
    double flops, bytes;       /* one execution's work (the record's work model) */
    int have_roof, have_measured, have_path;
    double pct_roof, pct_measured, pct_path;   /* [%] */
    double score;              /* [us] step_us x distance from the roof */
    int faster_than_roof;      /* pct_roof > 100: faster than the hardware allows (a GPU row with peaks) */
    /* The ranking the row won (same source, shape and dtype): the fastest ok row of any variant
     * that computes the op's operation (kbench's and the vendor libraries') is used; beside it,
     * the vendor baseline and kbench's own best. */
    int n_ranked;              /* ok rows of the op's shape and dtype that competed */
    int kbench_row;            /* the fastest of them with a kbench kernel, -1: none */
    int vendor_row;            /* the fastest vendor-library row (cuDNN, cuBLASLt), -1: none */
} kb_model_opres;

typedef struct {
    kb_model_opres ops[KB_MODEL_MAX_OPS];
    double tokens;             /* tokens processed in one step */
    double layer_us;           /* [us] one layer, found ops only */
    double step_us;            /* [us] one model step, found ops only */
    double flops, bytes;       /* work of one step, found ops only */
    int n_modelled, n_missing;
    int bounds_only;           /* ops are missing: the times are lower bounds, no rate is given */
    int n_faster_than_roof;    /* ops whose row is faster than its roofline */
    double us_per_token;       /* [us] (a lower bound when bounds_only) */
    int have_rates;            /* tokens_per_s and gbps apply: every op found, a step time */
    double tokens_per_s;
    double mm_flops;           /* FLOPs of the weight matmuls executed in one step (ops with weights) */
    int have_mfu;
    double mfu;                /* [%] mm_flops / (peak x step) */
    int have_bw;
    double bw_util;            /* [%] step bytes / step time / peak bandwidth */
    double gbps;               /* [GB/s] step bytes / step time (CPU on the emulator) */
    int focus;                 /* op to optimise first, -1 when none was found */
} kb_model_phase_res;

/* One precision of the what-if: the ops that ran in that dtype use its best case, the
 * others keep the model dtype's. */
typedef struct {
    int dtype;
    int n_at;                  /* ops found in this dtype */
    int n_vendor;              /* of them, vendor library rows */
    double step_us[KB_PHASE_COUNT];
    int n_missing[KB_PHASE_COUNT];
    double worst_rel_err;      /* largest max_rel_err among the ops found in this dtype (JSON only: over
                                * elements with |want| > atol, so a near-zero output reads 1 within tolerance) */
    int have_err_tol;
    double worst_err_tol;      /* largest verify.max_err_ratio (error / tolerance; < 1 passes) among them */
} kb_model_whatif;

struct kb_model_points;   /* model_points.h */

typedef struct {
    const kb_model *m;
    const kb_report_run *run;
    int dtype;                 /* the precision rolled up (the model's unless asked) */
    int dev;                   /* the run's device the rows come from (-1: none) */
    int emulator;              /* CPU timings: figures labelled, no MFU, no roof */
    double n_params;           /* N */
    double peak_tflops;        /* [TFLOPS] the device's peak for dtype (0: none recorded) */
    double peak_gbps;          /* [GB/s] (0: none recorded) */
    const kb_report_run *est;  /* ESTIMATE records (--estimate), or NULL */
    int est_dev;               /* their device (-1: none) */
    int use_run;               /* 1: rows of run are used (0 in an estimate roll-up whose run is absent,
                                * CPU-timed or of another GPU model) */
    char run_note[256];        /* why the run's rows are not used ("" when they are, or no estimate) */
    kb_model_phase_res ph[KB_PHASE_COUNT];
    int n_whatif;
    kb_model_whatif whatif[KB_DT_COUNT];
    const struct kb_model_points *points;   /* the decode step at the model's decode_points (NULL: none) */
} kb_model_rollup;

/* Roll model m up from run at dtype (-1: the model's). Always succeeds: what the run
 * lacks is reported as missing. */
void kb_model_rollup_run(const kb_model *m, const kb_report_run *run, int dtype, kb_model_rollup *out);

/* Roll model m up from the ESTIMATE records est (model_estimate.h), with the measured rows
 * of run (may be NULL) where use_run says they apply (run_note, may be NULL, says why
 * not); peaks: the modelled GPU's ceilings for MFU and bandwidth. Always succeeds. */
void kb_model_rollup_est(const kb_model *m, const kb_report_run *run, int use_run, const char *run_note,
                         const kb_report_run *est, const kb_peaks *peaks, int dtype, kb_model_rollup *out);

/* The row op result o was taken from (of r->run or r->est), NULL when missing. */
const kb_report_row *kb_model_op_row(const kb_model_rollup *r, const kb_model_opres *o);

/* The row of op result o's kbench best (vendor 0) or vendor baseline (vendor 1), NULL when none. */
const kb_report_row *kb_model_rank_row(const kb_model_rollup *r, const kb_model_opres *o, int vendor);

/* The vendor-library variants of family ("cudnn", "cublaslt": variants with no kernel of kbench's)
 * joined with '/' into buf (n bytes); "" when the family has none. Returns buf. */
const char *kb_model_vendor_names(const char *family, char *buf, size_t n);

/* The label every figure of a roll-up carries: "GPU", "emulator (CPU timing)", "ESTIMATE
 * (static model, not measured)" or "GPU-measured + ESTIMATE" (some ops each way). */
const char *kb_model_timing_label(const kb_model_rollup *r);

#endif /* KB_MODEL_ROLLUP_H */
