/* model_points.c - the decode step at a description's decode_points (see model_points.h). */
#include "model/model_points.h"

#include <stdlib.h>
#include <string.h>

/* Point i's value of every axis ("name=value" into sets[0..n_axes), and the label). The first
 * axis varies slowest, as the file lists them. */
static void point_sets(const kb_model *m, int i, char sets[KB_MODEL_MAX_AXES][80], char *label, size_t n)
{
    int stride = m->n_points;
    size_t at = 0;
    label[0] = 0;
    for (int a = 0; a < m->n_axes; a++) {
        const kb_model_axis *x = &m->axes[a];
        stride /= x->n;
        snprintf(sets[a], sizeof sets[a], "%s=%lld", m->param_names[x->param],
                 (long long)x->vals[(i / stride) % x->n]);
        if (at < n) at += (size_t)snprintf(label + at, n - at, "%s%s", a ? " " : "", sets[a]);
    }
}

kb_status kb_model_points_load(const kb_model *m, const char *const *sets, int n_sets, kb_model_points *out,
                               kb_sb *err)
{
    memset(out, 0, sizeof *out);
    if (m->n_points == 0) return KB_OK;
    const char **all = calloc((size_t)n_sets + KB_MODEL_MAX_AXES, sizeof *all);
    out->models = calloc((size_t)m->n_points, sizeof *out->models);
    if (!all || !out->models) {
        free(all);
        kb_sb_printf(err, "out of memory");
        return KB_ERR_OOM;
    }
    for (int s = 0; s < n_sets; s++) all[s] = sets[s];
    kb_status st = KB_OK;
    kb_sb msg;
    kb_sb_init(&msg);
    for (int i = 0; i < m->n_points && st == KB_OK; i++) {
        char ps[KB_MODEL_MAX_AXES][80];
        point_sets(m, i, ps, out->label[i], sizeof out->label[i]);
        for (int a = 0; a < m->n_axes; a++) all[n_sets + a] = ps[a];   /* after --set: the point wins */
        st = kb_model_load_text(m->text, m->file, all, n_sets + m->n_axes, &out->models[i], &msg);
        if (st != KB_OK)
            kb_sb_printf(err, "decode_points at %s: %s", out->label[i], msg.s);
        else
            out->n = i + 1;
    }
    kb_sb_free(&msg);
    free(all);
    return st;
}

kb_status kb_model_points_roll(kb_model_points *p, const kb_report_run *run, int dtype, kb_model_rollup *r)
{
    for (int i = 0; i < p->n; i++) {
        if (!(p->rollups[i] = malloc(sizeof *p->rollups[i]))) return KB_ERR_OOM;
        kb_model_rollup_run(&p->models[i], run, dtype, p->rollups[i]);
    }
    r->points = p->n ? p : NULL;
    return KB_OK;
}

kb_status kb_model_points_estimate(kb_model_points *p, const kb_report_run *run, const kb_model_est_opts *o,
                                   int dtype, kb_model_rollup *r, kb_sb *err)
{
    for (int i = 0; i < p->n; i++) {
        if (!(p->ests[i] = calloc(1, sizeof *p->ests[i]))) {
            kb_sb_printf(err, "out of memory");
            return KB_ERR_SETUP;
        }
        kb_status st = kb_model_estimate(&p->models[i], run, o, dtype, p->ests[i], err);
        if (st != KB_OK) return st;
        p->rollups[i] = &p->ests[i]->rollup;
    }
    r->points = p->n ? p : NULL;
    return KB_OK;
}

void kb_model_points_free(kb_model_points *p)
{
    for (int i = 0; i < KB_MODEL_MAX_POINTS; i++) {
        if (p->ests[i]) {
            kb_model_est_free(p->ests[i]);
            free(p->ests[i]);
        } else {
            free(p->rollups[i]);
        }
    }
    for (int i = 0; i < p->n; i++) kb_model_free(&p->models[i]);
    free(p->models);
    memset(p, 0, sizeof *p);
}
