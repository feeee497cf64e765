/* report_precision.c - the cells of a precision-comparison row (report_precision.h). */
#include "results/report_precision.h"

#include "core/precision.h"

#include <math.h>
#include <stdio.h>

const char *const kb_precision_cols[KB_PRECISION_COLS] = {
    "dtype", "recipe", "case", "median_us (clock)", "TFLOPS", "speed-up vs bf16", "rel. Frobenius err", "SNR dB",
    "max rel err", "vendor median_us (clock)", "kbench vs vendor",
};

/* The vendor cells: its median with the clock and variant, and kbench's speed relative to it. */
static void vendor_cells(const kb_report_run *run, const kb_report_row *r, int v, char *vendor, char *ratio)
{
    char b[64];
    snprintf(ratio, 256, "n/a");
    if (v < 0) {
        snprintf(vendor, 256, "n/a");
        return;
    }
    const kb_report_row *vr = &run->rows[v];
    if (!vr->ok || !vr->have_timing) {
        snprintf(vendor, 256, "%s %s: %s", vr->variant, vr->status, vr->reason);
        return;
    }
    kb_report_num(b, sizeof b, vr->median_us);
    snprintf(vendor, 256, "%s (%s) %s", b, vr->clock, vr->variant);
    kb_report_num(b, sizeof b, vr->median_us / r->median_us);
    snprintf(ratio, 256, "%sx", b);
}

/* The accuracy cells of row r: relative Frobenius, SNR, max relative error; "" where absent. */
static void accuracy_cells(const kb_report_row *r, char *fro, char *snr, char *maxrel)
{
    fro[0] = snr[0] = maxrel[0] = 0;
    if (!r->have_acc)
        return;
    snprintf(fro, 256, isfinite(r->acc_rel_fro) ? "%.3g" : "", r->acc_rel_fro);
    snprintf(maxrel, 256, isfinite(r->acc_max_rel) ? "%.3g" : "", r->acc_max_rel);
    if (isinf(r->acc_snr_db) && r->acc_snr_db > 0)
        snprintf(snr, 256, "inf");
    else if (isfinite(r->acc_snr_db))
        snprintf(snr, 256, "%.1f", r->acc_snr_db);
}

void kb_report_precision_cells(const kb_report_run *run, const kb_precision_group *g, int dtype, int recipe,
                               char cells[KB_PRECISION_COLS][256])
{
    const kb_report_row *r = &run->rows[g->rows[dtype][recipe]];
    int ref = g->rows[KB_DT_BF16][KB_RECIPE_TENSOR];
    char b[64];
    snprintf(cells[0], 256, "%s", kb_dtype_name((kb_dtype)dtype));
    snprintf(cells[1], 256, "%s", kb_recipe_name((kb_recipe)recipe));
    snprintf(cells[2], 256, "%s", r->case_id);
    kb_report_num(b, sizeof b, r->median_us);
    snprintf(cells[3], 256, "%s (%s)", b, r->clock);
    cells[4][0] = 0;
    if (r->d.have_rates)
        kb_report_num(cells[4], 256, r->d.tflops);
    if (ref >= 0) {
        kb_report_num(b, sizeof b, run->rows[ref].median_us / r->median_us);
        snprintf(cells[5], 256, "%sx", b);
    } else {
        snprintf(cells[5], 256, "n/a");
    }
    accuracy_cells(r, cells[6], cells[7], cells[8]);
    vendor_cells(run, r, g->vendor[dtype][recipe], cells[9], cells[10]);
}
