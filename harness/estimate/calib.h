/* calib.h - the estimator's calibration (issue 24): per-architecture efficiency of each
 * tensor instruction path, the special-function-unit rate, the achievable fraction of the
 * datasheet DRAM bandwidth, the cost of a launch and the one clock every on-chip roof runs
 * at. Every parameter is a row of one table (kb_est_params) with its source, or labelled
 * ASSUMPTION; docs/estimate.md prints it and tests/test_estimate_calibration.c checks the
 * rows marked calibrated against published measurements. */
#ifndef KB_EST_CALIB_H
#define KB_EST_CALIB_H

#include "core/kb.h"
#include "engine/traffic.h"

/* One parameter of the model. */
typedef struct {
    const char *name;           /* "mma.sync efficiency", "sfu rate", ... */
    int sm;                     /* compute capability x10 it applies to; 0: every architecture */
    double value;               /* in unit */
    const char *unit;
    const char *source;         /* the publication it comes from, or "ASSUMPTION: why" */
    int calibrated;             /* 1: an estimate that uses it is checked against a published
                                 * measurement (tests/test_estimate_calibration.c) */
} kb_est_param;

/* The table, in the order docs/estimate.md prints it. */
extern const kb_est_param kb_est_params[];
extern const int kb_est_n_params;

/* "mma.sync", "wgmma"; "?" out of range. */
const char *kb_est_tensor_path_name(kb_tensor_path p);

/* The efficiency of tensor path p on architecture sm (x10; sm_86 reads sm_89's row):
 * the fraction of the dense datasheet tensor peak a mainloop of that instruction
 * sustains when nothing else the model counts limits it. It stands for what the model
 * does not count inside the SM: the ldmatrix -> mma dependency, the issue slots of the
 * mainloop's other instructions, barriers. A wgmma GEMM model multiplies its tensor work's
 * datasheet time by 1/efficiency exactly as the mma.sync models do.
 * Returns 1 with *eff set and *row (may be NULL) its table row; 0 when the table has no
 * row for sm ("uncalibrated": *eff = 1, the datasheet rate, which flatters, and the caller
 * says so); -1 when the path does not exist on sm (wgmma below sm_90), *eff = 0. */
int kb_est_tensor_efficiency(int sm, kb_tensor_path p, double *eff, const kb_est_param **row);

/* The efficiency of tensor path p on sm for products that alternate with a softmax in
 * every warp (attention: kb_traffic.serial_pipes): the table's "<path> attention
 * efficiency" row, else kb_est_tensor_efficiency's. Same returns as kb_est_tensor_efficiency. */
int kb_est_attention_efficiency(int sm, kb_tensor_path p, double *eff, const kb_est_param **row);

/* The same for products in element type dt: fp8 (e4m3, e5m2) first takes the table's "<path>
 * fp8 attention efficiency" row where it has one (FA3's fp8 forward reaches a lower fraction of
 * its doubled peak than its bf16 forward does of bf16's), else kb_est_attention_efficiency's
 * answer. Same returns. */
int kb_est_attention_efficiency_dt(int sm, kb_tensor_path p, kb_dtype dt, double *eff, const kb_est_param **row);

/* Special-function-unit (MUFU) operations per clock per SM of sm: 16 (CUDA C++ Programming
 * Guide, arithmetic instruction throughput, compute capability 8.x and 9.0). Returns 1 for
 * an architecture the guide's figure covers; 0 with the same 16 assumed otherwise
 * ("uncalibrated"). */
int kb_est_sfu_per_clk(int sm, double *per_clk);

/* Type conversions (fp32 -> 16-bit: cvt.rn.bf16x2.f32) per clock per SM: 16 (the Guide's "all
 * other type conversions", cc 7.x-9.0). Returns as kb_est_sfu_per_clk. */
int kb_est_cvt_per_clk(int sm, double *per_clk);

/* The achievable fraction of the datasheet DRAM bandwidth when no measured ceiling is
 * known (2.90 / 3.35: the best published copy on H100 SXM), and the launch cost [us] per
 * kernel launch in mode graph (0: eager, 1: CUDA graph) when no measured launch ceiling is
 * known. */
double kb_est_dram_fraction(void);
double kb_est_launch_us(int graph);

#endif /* KB_EST_CALIB_H */
