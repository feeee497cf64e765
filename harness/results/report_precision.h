/* report_precision.h - the cells of the precision comparison (report_precision.c): per
 * shape and input distribution (kb_precision_group, report_rows.h), one row per dtype and
 * scaling recipe with its time, speed-up, accuracy and vendor row, as the markdown, HTML and
 * CSV reports render them. */
#ifndef KB_REPORT_PRECISION_H
#define KB_REPORT_PRECISION_H

#include "results/report_rows.h"

/* The cells of one precision-comparison row as text, in the order of kb_precision_cols:
 * dtype, recipe, the best kbench case, median (clock), TFLOPS, speed-up over the group's bf16
 * row ("n/a" without one), the accuracy against the fp64 result of the unquantised inputs
 * (relative Frobenius error, SNR in dB, max relative error; "" where not measured, "inf" dB
 * when exact), the vendor row (its median and clock; "skipped: <reason>" when it did not
 * run; "n/a" without one) and kbench's speed relative to it (vendor median / kbench median;
 * "n/a" unless both ran). The markdown and HTML reports render the same cells. */
#define KB_PRECISION_COLS 11
extern const char *const kb_precision_cols[KB_PRECISION_COLS];
void kb_report_precision_cells(const kb_report_run *run, const kb_precision_group *g, int dtype, int recipe,
                               char cells[KB_PRECISION_COLS][256]);

/* What the precision tables hold, in a sentence for the reports. */
#define KB_PRECISION_NOTE \
    "Per shape and input distribution, the fastest ok kbench case of each dtype and scaling recipe; speed-up " \
    "over bf16; accuracy against the fp64 product of the unquantised real-valued inputs (relative Frobenius " \
    "error, SNR, max error relative to the largest output - what the precision costs, never a pass/fail: " \
    "every row here was verified against the reference of its dequantised inputs); the vendor library's row " \
    "of the same shape, dtype and recipe (cuBLASLt, cuDNN) and kbench's speed relative to it."

#endif /* KB_REPORT_PRECISION_H */
