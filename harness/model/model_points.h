/* model_points.h - the decode step at other points (a description's decode_points,
 * docs/model-format.md): the description evaluated again with each point's params (the cross
 * product of decode_points' axes, applied after --set), and each of those models rolled up
 * from the same run, or estimated, like the model itself. Nothing is scaled or substituted:
 * at each point an op takes a row of exactly its dims there, or is missing with the reason.
 */
#ifndef KB_MODEL_POINTS_H
#define KB_MODEL_POINTS_H

#include "model/model_estimate.h"
#include "model/model_rollup.h"

typedef struct kb_model_points {
    int n;                                   /* the points (the model's n_points) */
    char label[KB_MODEL_MAX_POINTS][160];    /* "decode_batch=1 seq=4096 new_tokens=8" */
    kb_model *models;                        /* n: the description evaluated at each point */
    kb_model_rollup *rollups[KB_MODEL_MAX_POINTS];   /* each point's roll-up (NULL until rolled) */
    kb_model_est *ests[KB_MODEL_MAX_POINTS];         /* --estimate: the estimates behind them */
} kb_model_points;

/* Evaluate m (loaded with sets[0..n_sets)) at each of its decode_points. KB_OK with out->n = 0
 * when m has none. KB_ERR_INPUT when the description fails at a point: "decode_points at
 * LABEL: file:line:col: ..." in err. *out is filled (free with kb_model_points_free) either way. */
kb_status kb_model_points_load(const kb_model *m, const char *const *sets, int n_sets, kb_model_points *out,
                               kb_sb *err);

/* Roll every point up from run at dtype (-1: the model's), as kb_model_rollup_run, and attach
 * the points to r (r->points) so the writers show them. KB_ERR_OOM without memory. */
kb_status kb_model_points_roll(kb_model_points *p, const kb_report_run *run, int dtype, kb_model_rollup *r);

/* Estimate every point as kb_model_estimate (run may be NULL) and attach them to r.
 * KB_ERR_INPUT / KB_ERR_SETUP as kb_model_estimate, message in err. */
kb_status kb_model_points_estimate(kb_model_points *p, const kb_report_run *run, const kb_model_est_opts *o,
                                   int dtype, kb_model_rollup *r, kb_sb *err);

void kb_model_points_free(kb_model_points *p);

#endif /* KB_MODEL_POINTS_H */
