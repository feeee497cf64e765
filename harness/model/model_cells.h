/* model_cells.h - the per-op table of a model roll-up as text cells, shared by the
 * markdown and HTML writers so both show the same figures. */
#ifndef KB_MODEL_CELLS_H
#define KB_MODEL_CELLS_H

#include "model/model_points.h"
#include "model/model_rollup.h"

/* op, scope x count, case (or "missing"), vendor baseline, time_us (clock), step_us, share,
 * GFLOP, MB, AI, bound, %roof, %meas, %path, focus_us. Roofline cells are empty on the
 * emulator. The first KB_MODEL_TEXT_COLS are text (left-aligned), the others figures. */
#define KB_MODEL_COLS 15
#define KB_MODEL_TEXT_COLS 4
extern const char *const kb_model_cols[KB_MODEL_COLS];

/* The cells of op k in phase ph ("" where a figure does not apply). */
void kb_model_op_cells(const kb_model_rollup *r, int ph, int k, char cells[KB_MODEL_COLS][160]);

/* The vendor baseline beside op k's row in phase ph, into b (n bytes): "cudnn 120 us (1.25x
 * kbench's time)"; when the vendor row won, "cudnn fastest; kbench best fa3 150 us (1.25x cudnn's
 * time)"; "no cudnn row" when the ranking had none; "" for a missing op or a family with no
 * vendor variant. */
void kb_model_vendor_cell(const kb_model_rollup *r, int ph, int k, char *b, size_t n);

/* The what-if row of w against base (the model dtype's; may be NULL), each cell n bytes:
 * prefill and decode step [ms] (">= x" when ops are missing: a lower bound; "n/a" when
 * none was found), and the speed-ups over base ("n/a" where either step misses ops). */
void kb_model_whatif_cells(const kb_model_whatif *w, const kb_model_whatif *base, char *pre, char *dec,
                           char *up_pre, char *up_dec, size_t n);

/* The decode_points table: point, tokens, decode step ms (">= x" when ops are missing, "n/a"
 * when none was found), us per token, tokens/s ("n/a" when ops are missing), the missing ops
 * ("0", or "2: qkv, lm_head"), and the op with the largest part of the step with its case. */
#define KB_MODEL_POINT_COLS 7
extern const char *const kb_model_point_cols[KB_MODEL_POINT_COLS];

/* The cells of point i of p. */
void kb_model_point_cells(const kb_model_points *p, int i, char cells[KB_MODEL_POINT_COLS][160]);

#endif /* KB_MODEL_CELLS_H */
