/* report_csv.h - CSV: one row per case (RFC 4180). */
#ifndef KB_REPORT_CSV_H
#define KB_REPORT_CSV_H

#include "results/report_rows.h"

/* Write run to out. KB_ERR_IO when the stream fails. */
kb_status kb_report_csv(const kb_report_run *run, FILE *out);

/* Only the precision comparison: one row per shape, distribution, device, dtype and recipe:
 * family, dims, dist, device and the cells of kb_precision_cols. KB_ERR_IO, KB_ERR_OOM. */
kb_status kb_report_csv_precision(const kb_report_run *run, FILE *out);

/* One CSV field per RFC 4180: quoted (with "" for ") only when it holds a comma, quote,
 * CR or LF; NULL writes nothing. Used by the CSV report and `kbench query --csv`. */
void kb_csv_field(FILE *out, const char *s);

#endif
