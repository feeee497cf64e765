/* report_cases.h - the full case table of the HTML report: one row per case, its axes as
 * columns (family, variant, the params that vary in its family, dtype, shape, pad, launch;
 * the case id in the row's tooltip), its outcome and figures. The header stays on screen
 * (sticky), numbers never wrap, a column no row fills is left out (the emulator's %roof,
 * %meas, %path and bound), and the table sorts by any column and filters by text
 * (report_charts.h's script). */
#ifndef KB_REPORT_CASES_H
#define KB_REPORT_CASES_H

#include "results/report_best.h"

/* The table of the rows of device dev (-1: every row), id "cases-<dev + 1>", with its filter
 * box. */
void kb_report_cases_table(const kb_report_run *run, const kb_report_axes *ax, int dev, FILE *out);

#endif /* KB_REPORT_CASES_H */
