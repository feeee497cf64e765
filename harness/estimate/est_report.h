/* est_report.h - `kbench estimate`'s output (issue 26 item 4): the rows of est_suite.h as
 * aligned text or CSV (est_table.h) or JSON, what est_select.h selects, with the summary
 * per family. Every figure is an ESTIMATE and says so: text in its header lines, JSON with
 * "estimate": true at the top and in every row and summary entry, CSV in an `estimate`
 * column on every row. */
#ifndef KB_EST_REPORT_H
#define KB_EST_REPORT_H

#include <jansson.h>
#include <stdio.h>

#include "estimate/est_select.h"

/* One estimated row as the JSON output has it: "estimate": true, case_id, family, variant,
 * dtype, dims {name: n}, params {name: int or choice name}, pad, launch, limit, est_us,
 * pct_roofline, roofline_us, occupancy, waves, sm_pct, registers, roofs {<roof>_us},
 * modelled, tensor_calibrated. A new object (caller decrefs); NULL when out of memory. */
json_t *kb_est_row_json(const kb_est_row *r);

/* Write rows in o->format to out. KB_ERR_IO when the stream fails, KB_ERR_OOM. */
kb_status kb_est_report(const kb_est_rows *rows, const kb_est_report_opts *o, FILE *out);

#endif /* KB_EST_REPORT_H */
