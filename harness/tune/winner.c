/* winner.c - the fastest configuration beyond the noise, or a tie said so (winner.h). */
#include "tune/winner.h"

#include <math.h>
#include <string.h>

void kb_tune_interval(const kb_tune_result *r, double *lo, double *hi)
{
    if (!(isfinite(r->noise) && r->noise >= 0)) {
        *lo = *hi = NAN;
        return;
    }
    double f = exp(KB_TUNE_Z95 * r->noise);   /* log(median) +- 1.96 x its standard error */
    *lo = r->median_us / f;
    *hi = r->median_us * f;
}

/* Tie-break order: -1 when a goes first. Unknown resources (-1) compare equal. */
static int before(const kb_tune_result *a, const kb_tune_result *b)
{
    if (a->registers >= 0 && b->registers >= 0 && a->registers != b->registers)
        return a->registers < b->registers ? -1 : 1;
    if (a->shmem_bytes >= 0 && b->shmem_bytes >= 0 && a->shmem_bytes != b->shmem_bytes)
        return a->shmem_bytes < b->shmem_bytes ? -1 : 1;
    if (a->median_us != b->median_us)
        return a->median_us < b->median_us ? -1 : 1;
    return strcmp(a->id ? a->id : "", b->id ? b->id : "") < 0 ? -1 : 1;
}

int kb_tune_choose(const kb_tune_result *r, int n, double max_noise, kb_tune_choice *out)
{
    memset(out, 0, sizeof *out);
    out->winner = -1;
    int lead = -1;
    for (int i = 0; i < n; i++)
        if (r[i].ok && isfinite(r[i].median_us) && (lead < 0 || r[i].median_us < r[lead].median_us))
            lead = i;
    if (lead < 0)
        return -1;
    double lo, hi;
    kb_tune_interval(&r[lead], &lo, &hi);
    /* the tied set (the leader included), kept sorted in tie-break order */
    int set[KB_TUNE_MAX_TIED + 1], n_set = 0, n_within = 0;
    for (int i = 0; i < n; i++) {
        if (!r[i].ok || !isfinite(r[i].median_us))
            continue;
        double l, h;
        kb_tune_interval(&r[i], &l, &h);
        if (i != lead && (l > hi || h < lo))   /* NAN on either side: not separated, within noise */
            continue;
        n_within += i != lead;
        if (n_set == KB_TUNE_MAX_TIED + 1 && before(&r[i], &r[set[n_set - 1]]) > 0)
            continue;
        int k = n_set < KB_TUNE_MAX_TIED + 1 ? n_set++ : n_set - 1;
        while (k > 0 && before(&r[i], &r[set[k - 1]]) < 0) {
            set[k] = set[k - 1];
            k--;
        }
        set[k] = i;
    }
    out->winner = set[0];
    out->tie = n_within > 0;
    out->n_tied = n_within;
    for (int k = 1; k < n_set && k - 1 < KB_TUNE_MAX_TIED; k++)
        out->tied[k - 1] = set[k];
    kb_tune_interval(&r[out->winner], &out->lo_us, &out->hi_us);
    out->noisy = !(r[out->winner].noise <= (max_noise > 0 ? max_noise : KB_TUNE_NOISE_BOUND));
    return out->winner;
}
