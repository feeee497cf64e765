/* est_suite.h - the static model over a whole suite: every case at its full shape,
 * compiled offline with NVRTC for the target architecture (through the compile cache, as
 * `kbench compile`), its ptxas resources handed to the model (estimate.h), one row per
 * case. `kbench estimate` prints the rows (est_report.h); `kbench model --estimate` rolls
 * a model up from them (model/model_estimate.h). Every figure a row holds is an ESTIMATE,
 * never a measurement, and nothing here records anything. */
#ifndef KB_EST_SUITE_H
#define KB_EST_SUITE_H

#include "estimate/estimate.h"
#include "session/cases.h"

/* What became of a case (one name table: kb_est_row_status_name). */
typedef enum {
    KB_EST_ROW_OK = 0,        /* estimated */
    KB_EST_ROW_SKIPPED,       /* not valid for the target, or a vendor library call (no model) */
    KB_EST_ROW_NO_MODEL,      /* the model has no figure for it (block does not fit, no rate) */
    KB_EST_ROW_COMPILE_ERROR, /* NVRTC failed, or no resource report for its entry */
    KB_EST_ROW_STATUS_COUNT
} kb_est_row_status;

const char *kb_est_row_status_name(kb_est_row_status s); /* "ok", "skipped", "no_model", "compile_error" */

typedef struct {
    char *id;  /* the case id (owned) */
    kb_case c; /* the case at its full shape */
    kb_est_row_status status;
    char why[256]; /* the reason when not OK ("" otherwise) */
    int regs;      /* ptxas registers per thread (-1: unknown) */
    kb_estimate e; /* status OK: the estimate */
} kb_est_row;

typedef struct {
    kb_est_row *rows; /* in plan order */
    size_t n, cap;
} kb_est_rows;

typedef struct {
    const char *suite_path;
    const char *const *filters; /* a case is estimated when its id contains any (none: all) */
    int n_filters;
    const char *cache_dir;  /* NULL: the default compile cache */
    int jobs;               /* compile workers (<= 1: none) */
    int sm;                 /* the architecture the kernels are compiled for (x10) */
    const kb_est_target *x; /* the GPU modelled */
} kb_est_suite_opts;

/* Plan o->suite_path at full shapes (an offline session building with NVRTC) and estimate
 * every selected case into *out (zeroed first; free with kb_est_rows_free), *selected (may
 * be NULL) the number of cases the filters selected.
 * KB_OK (a case that does not compile is a row, not an error); KB_ERR_INPUT for a bad
 * suite, KB_ERR_SETUP when the walk cannot run (out of memory), message in err. */
kb_status kb_est_suite(const kb_est_suite_opts *o, kb_est_rows *out, int64_t *selected, kb_sb *err);

/* Rows of status s in r. */
size_t kb_est_rows_count(const kb_est_rows *r, kb_est_row_status s);

void kb_est_rows_free(kb_est_rows *r);

#endif /* KB_EST_SUITE_H */
