/* report_csv.h - CSV (RFC 4180): one row per case with its axes as columns (family,
 * variant, dtype, shape, dims, a column per dim - m, n, k, rows, ... - and per param - BM,
 * layout, ...: the plain name, or param_<name> where that column is taken - pad, launch),
 * its outcome and figures; or one row per problem with its fastest configuration
 * (report_best.h). */
#ifndef KB_REPORT_CSV_H
#define KB_REPORT_CSV_H

#include "results/report_rows.h"

/* Write run to out: the cases (s KB_SECTION_ALL or _CASES: with the accuracy columns
 * acc_rel_fro, acc_snr_db, acc_max_rel), the fastest configuration of each problem (s
 * KB_SECTION_SUMMARY or _BEST), or the precision comparison (s KB_SECTION_PRECISION: one row
 * per shape, distribution, device, dtype and recipe - family, dims, dist, device and the
 * cells of kb_precision_cols). KB_ERR_IO when the stream fails, KB_ERR_OOM. */
kb_status kb_report_csv(const kb_report_run *run, kb_report_section s, FILE *out);

/* One CSV field per RFC 4180: quoted (with "" for ") only when it holds a comma, quote,
 * CR or LF; NULL writes nothing. Used by the CSV report and `kbench query --csv`. */
void kb_csv_field(FILE *out, const char *s);

#endif
