/* model_cells.h - the per-op table of a model roll-up as text cells, shared by the
 * markdown and HTML writers so both show the same figures. */
#ifndef KB_MODEL_CELLS_H
#define KB_MODEL_CELLS_H

#include "model/model_rollup.h"

/* op, scope x count, case (or "missing"), time_us (clock), step_us, share, GFLOP, MB, AI,
 * bound, %roof, %meas, %path, focus_us. Roofline cells are empty on the emulator. */
#define KB_MODEL_COLS 14
extern const char *const kb_model_cols[KB_MODEL_COLS];

/* The cells of op k in phase ph ("" where a figure does not apply). */
void kb_model_op_cells(const kb_model_rollup *r, int ph, int k, char cells[KB_MODEL_COLS][160]);

/* The what-if row of w against base (the model dtype's; may be NULL), each cell n bytes:
 * prefill and decode step [ms] (">= x" when ops are missing: a lower bound; "n/a" when
 * none was found), and the speed-ups over base ("n/a" where either step misses ops). */
void kb_model_whatif_cells(const kb_model_whatif *w, const kb_model_whatif *base, char *pre, char *dec,
                           char *up_pre, char *up_dec, size_t n);

#endif /* KB_MODEL_CELLS_H */
