/* stats.h - summary statistics of timing samples. */
#ifndef KB_STATS_H
#define KB_STATS_H

typedef struct {
    int n;             /* samples */
    double median;     /* the headline number */
    double mean, min, max;
    double p10, p90;   /* linear-interpolated percentiles */
    double stddev;     /* sample standard deviation (n-1) */
    double cv;         /* stddev / mean; 0 for n < 2 */
} kb_stats;

/* Summarise x[0..n) (unchanged; sorted copy made internally). n == 0 gives all zeros.
 * Returns 0, or -1 when out of memory. */
int kb_stats_compute(const double *x, int n, kb_stats *out);

/* Percentile q in [0,1] of an ascending array by linear interpolation (numpy's default). */
double kb_stats_quantile_sorted(const double *sorted, int n, double q);

#endif
