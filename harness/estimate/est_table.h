/* est_table.h - `kbench estimate` as aligned text and as CSV (est_report.h dispatches).
 *
 * Text: ESTIMATE header lines (the GPU, the model clock, where the DRAM bandwidth and the
 * launch cost come from, the mma.sync efficiency, the assumptions), one table of the
 * selected rows whose column widths come from the data and which shows a roof column only
 * where some row has a figure in it, the cases not estimated folded by reason with a count,
 * and the per-family summary table.
 * CSV (RFC 4180 quoting): a header line, then one line per selected row; the first column,
 * `estimate`, reads ESTIMATE on every row. */
#ifndef KB_EST_TABLE_H
#define KB_EST_TABLE_H

#include <stdio.h>

#include "estimate/est_select.h"

/* Write rows as text / CSV. KB_OK, KB_ERR_OOM (the stream's errors are the caller's to check). */
kb_status kb_est_write_text(const kb_est_rows *rows, const kb_est_report_opts *o, FILE *out);
kb_status kb_est_write_csv(const kb_est_rows *rows, const kb_est_report_opts *o, FILE *out);

#endif /* KB_EST_TABLE_H */
