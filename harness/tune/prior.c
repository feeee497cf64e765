/* prior.c - the static estimate of each configuration as a tuning prior (prior.h). */
#include "tune/prior.h"

#include "estimate/est_cmd.h"
#include "kernels/families.h"

#include <math.h>
#include <stdlib.h>

int kb_tune_prior_estimate(const kb_case *cases, int n, int sm, double *out, kb_sb *err)
{
    const kb_est_gpu *g = kb_est_gpu_reference(sm);
    if (!g || !kb_est_arch_find(g->sm)) {
        kb_sb_printf(err, "the estimate models no GPU of sm_%d", sm);
        return -1;
    }
    kb_est_setup setup;   /* the datasheet peaks, no store: a reference GPU, not a device */
    if (kb_est_setup_target(g->name, NULL, NULL, &setup, err) != KB_OK)
        return -1;
    kb_resources unknown = { -1, -1, -1, -1, 0, -1 };   /* not compiled: registers unknown */
    int done = 0;
    for (int i = 0; i < n; i++) {
        kb_estimate e;
        char why[256];
        const kb_case *c = &cases[i];
        out[i] = INFINITY;
        if (c->family < 0 || c->family >= kb_n_families || !kb_families[c->family]->variants[c->variant].entry)
            continue;
        if (kb_estimate_built(kb_families[c->family], c, g->sm, &unknown, &setup.x, &e, why, sizeof why) == 0 &&
            isfinite(e.est_us) && e.est_us > 0) {
            out[i] = e.est_us;
            done++;
        }
    }
    if (done == 0)
        kb_sb_printf(err, "the estimate models none of these %d configurations (%s)", n, g->name);
    return done ? done : -1;
}

double *kb_tune_prior_of_problem(const kb_session *s, const kb_tune_problem *p, kb_sb *err)
{
    double *est = malloc((size_t)p->n * sizeof *est);
    kb_case *cases = malloc((size_t)p->n * sizeof *cases);
    const kb_cases *l = kb_session_cases(s);
    for (int i = 0; est && cases && i < p->n; i++) {
        const kb_cases_item *it = kb_cases_find(l, p->configs[i].case_index);
        if (it) {   /* the plan's family index -> the registry's, as kb_tune_prior_estimate reads it */
            cases[i] = *it->it.c;
            cases[i].family = kb_family_find(it->f->name);
        } else {
            cases[i] = (kb_case){ .family = -1 };
        }
    }
    if (!est || !cases)
        kb_sb_printf(err, "out of memory");
    int sm = kb_session_device(s)->sm > 0 ? kb_session_device(s)->sm : kb_session_target_sm(s);   /* offline: --arch */
    if (!est || !cases || kb_tune_prior_estimate(cases, p->n, sm, est, err) < 0) {
        free(est);
        est = NULL;
    }
    free(cases);
    return est;
}
