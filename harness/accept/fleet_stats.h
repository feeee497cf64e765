/* fleet_stats.h - robust outlier detection across GPUs of one SKU: the median and the
 * median absolute deviation (MAD), which one slow GPU in a fleet cannot drag the way it
 * drags a mean and a standard deviation.
 *
 *   scale = max(1.4826 x MAD, rel_floor x |median|)
 *   a higher-is-better value x is an outlier when x < median - k x scale
 *   a lower-is-better value x (a latency) when   x > median + k x scale
 * 1.4826 x MAD estimates the standard deviation of normally distributed values; the
 * relative floor keeps a fleet of near-identical GPUs (MAD 0) from flagging a 0.1%
 * difference. With fewer than KB_FLEET_MIN_GPUS values there is no judgement.
 */
#ifndef KB_ACCEPT_FLEET_STATS_H
#define KB_ACCEPT_FLEET_STATS_H

#define KB_FLEET_MIN_GPUS 3       /* values needed before anything is called an outlier */
#define KB_FLEET_DEFAULT_K 3.0
#define KB_FLEET_DEFAULT_REL_FLOOR 0.02
#define KB_FLEET_CPU_FACTOR 100.0 /* CPU (emulator) timings: a factor from the median (7x seen between
                                   * unchanged runs on a loaded 2-core machine: only an injected fault counts) */

typedef struct {
    int n;
    double median, mad;
    double scale;                 /* max(1.4826 MAD, rel_floor |median|) */
    double low, high;             /* median -/+ k scale */
} kb_fleet_dist;

/* The median of x[0..n) (x is not modified); NAN for n = 0 or when out of memory. */
double kb_fleet_median(const double *x, int n);

/* The distribution of x[0..n) with bounds at k scales. 1 when n >= KB_FLEET_MIN_GPUS (the
 * bounds apply), 0 otherwise (n, median and mad still filled when n > 0), -1 when out of
 * memory. NAN values are not allowed in x. */
int kb_fleet_dist_of(const double *x, int n, double k, double rel_floor, kb_fleet_dist *out);

/* For CPU timings (the emulator: noisy, shared cores), bounds by ratio instead: low =
 * median / factor, high = median x factor. Same return (-1 too) and fields as kb_fleet_dist_of. */
int kb_fleet_dist_ratio(const double *x, int n, double factor, kb_fleet_dist *out);

/* 1 when x lies beyond the bound on its bad side (below low, or above high when
 * lower_is_better). */
int kb_fleet_is_outlier(const kb_fleet_dist *d, double x, int lower_is_better);

#endif /* KB_ACCEPT_FLEET_STATS_H */
