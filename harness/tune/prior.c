/* prior.c - the static estimate of each configuration as a tuning prior (prior.h). */
#include "tune/prior.h"

#include "estimate/estimate.h"

#include <math.h>

int kb_tune_prior_estimate(const kb_case *cases, int n, int sm, double *out, kb_sb *err)
{
    const kb_est_gpu *g = kb_est_gpu_reference(sm);
    kb_peaks peaks;
    kb_est_target x = { g, g ? kb_est_arch_find(g->sm) : NULL, &peaks };
    if (!g || !x.arch) {
        kb_sb_printf(err, "the estimate models no GPU of sm_%d", sm);
        return -1;
    }
    if (kb_est_gpu_peaks(g, NULL, &peaks, err) != KB_OK)
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
        if (kb_estimate_built(kb_families[c->family], c, g->sm, &unknown, &x, &e, why, sizeof why) == 0 &&
            isfinite(e.est_us) && e.est_us > 0) {
            out[i] = e.est_us;
            done++;
        }
    }
    if (done == 0)
        kb_sb_printf(err, "the estimate models none of these %d configurations (%s)", n, g->name);
    return done ? done : -1;
}
