/* stats.c - summary statistics of timing samples (see stats.h). */
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double kb_stats_quantile_sorted(const double *s, int n, double q)
{
    if (n <= 0)
        return 0.0;
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    int hi = lo + 1 < n ? lo + 1 : lo;
    double frac = pos - lo;
    return s[lo] + (s[hi] - s[lo]) * frac;
}

int kb_stats_compute(const double *x, int n, kb_stats *o)
{
    memset(o, 0, sizeof *o);
    if (n <= 0)
        return 0;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return -1;
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += s[i];
    o->n = n;
    o->mean = sum / n;
    o->min = s[0];
    o->max = s[n - 1];
    o->median = kb_stats_quantile_sorted(s, n, 0.5);
    o->p10 = kb_stats_quantile_sorted(s, n, 0.1);
    o->p90 = kb_stats_quantile_sorted(s, n, 0.9);
    if (n > 1) {
        double ss = 0;
        for (int i = 0; i < n; i++)
            ss += (s[i] - o->mean) * (s[i] - o->mean);
        o->stddev = sqrt(ss / (n - 1));
        o->cv = o->mean > 0 ? o->stddev / o->mean : 0;
    }
    free(s);
    return 0;
}
