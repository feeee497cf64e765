/* fleet_stats.c - median, MAD and outlier bounds (see fleet_stats.h). */
#include "accept/fleet_stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double kb_fleet_median(const double *x, int n)
{
    if (n <= 0)
        return NAN;
    double *s = malloc((size_t)n * sizeof *s);
    if (!s)
        return NAN;
    memcpy(s, x, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : 0.5 * s[n / 2 - 1] + 0.5 * s[n / 2];   /* no overflow near DBL_MAX */
    free(s);
    return m;
}

int kb_fleet_dist_of(const double *x, int n, double k, double rel_floor, kb_fleet_dist *out)
{
    memset(out, 0, sizeof *out);
    out->n = n;
    if (n <= 0)
        return 0;
    out->median = kb_fleet_median(x, n);
    double *dev = malloc((size_t)n * sizeof *dev);
    if (!dev || isnan(out->median)) {   /* NAN: kb_fleet_median could not allocate */
        free(dev);
        return -1;
    }
    for (int i = 0; i < n; i++)
        dev[i] = fabs(x[i] - out->median);
    out->mad = kb_fleet_median(dev, n);
    free(dev);
    if (isnan(out->mad))
        return -1;
    out->scale = fmax(1.4826 * out->mad, rel_floor * fabs(out->median));
    out->low = out->median - k * out->scale;
    out->high = out->median + k * out->scale;
    return n >= KB_FLEET_MIN_GPUS;
}

int kb_fleet_dist_ratio(const double *x, int n, double factor, kb_fleet_dist *out)
{
    int enough = kb_fleet_dist_of(x, n, 0, 0, out);
    out->scale = 0;
    out->low = out->median / factor;
    out->high = out->median * factor;
    return enough;
}

int kb_fleet_is_outlier(const kb_fleet_dist *d, double x, int lower_is_better)
{
    if (d->n < KB_FLEET_MIN_GPUS)
        return 0;
    return lower_is_better ? x > d->high : x < d->low;
}
