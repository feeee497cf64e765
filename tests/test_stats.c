/* test_stats.c - summary statistics against sample sets worked out by hand (and matching
 * numpy's defaults: linear-interpolated percentiles, ddof=1 standard deviation). */
#include "check.h"
#include "engine/measure.h"
#include "core/stats.h"

#include <math.h>
#include <string.h>

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 1e-12 * (1.0 + fabs((double)(b))))

/* Odd count, unsorted input: median is the middle value; the input is left alone. */
static void test_odd(void)
{
    double x[] = { 9, 1, 5, 3, 7 };
    double copy[5];
    memcpy(copy, x, sizeof x);
    kb_stats s;
    CHECK(kb_stats_compute(x, 5, &s) == 0);
    CHECK(memcmp(x, copy, sizeof x) == 0);
    CHECK(s.n == 5);
    CHECK(NEAR(s.median, 5));
    CHECK(NEAR(s.mean, 5));
    CHECK(NEAR(s.min, 1) && NEAR(s.max, 9));
    /* numpy.percentile([1,3,5,7,9], 10) = 1 + 0.4 * (3 - 1) = 1.8; 90 -> 7 + 0.6 * 2 = 8.2 */
    CHECK_MSG(NEAR(s.p10, 1.8), "p10 %g", s.p10);
    CHECK_MSG(NEAR(s.p90, 8.2), "p90 %g", s.p90);
    /* sum of squares about 5: 16+4+0+4+16 = 40; / (n-1) = 10 */
    CHECK(NEAR(s.stddev, sqrt(10.0)));
    CHECK(NEAR(s.cv, sqrt(10.0) / 5));
}

/* Even count: the median interpolates between the two middle values. */
static void test_even(void)
{
    double x[] = { 4, 1, 3, 2 };
    kb_stats s;
    CHECK(kb_stats_compute(x, 4, &s) == 0);
    CHECK(NEAR(s.median, 2.5));
    /* positions q*(n-1): 0.3 -> 1.3, 2.7 -> 3.7 */
    CHECK_MSG(NEAR(s.p10, 1.3), "p10 %g", s.p10);
    CHECK_MSG(NEAR(s.p90, 3.7), "p90 %g", s.p90);
    CHECK(NEAR(s.mean, 2.5));
    CHECK(NEAR(s.stddev, sqrt(5.0 / 3.0)));
}

/* A skewed set: one outlier moves the mean and the cv, not the median. */
static void test_outlier(void)
{
    double x[] = { 10, 10, 10, 10, 10, 10, 10, 10, 10, 110 };
    kb_stats s;
    CHECK(kb_stats_compute(x, 10, &s) == 0);
    CHECK(NEAR(s.median, 10));
    CHECK(NEAR(s.mean, 20));
    CHECK(NEAR(s.p10, 10));
    CHECK_MSG(NEAR(s.p90, 20), "p90 %g", s.p90); /* 8.1 -> 10 + 0.1 * 100 */
    double sd = sqrt((9 * 100.0 + 8100.0) / 9);
    CHECK(NEAR(s.stddev, sd));
    CHECK(NEAR(s.cv, sd / 20));
}

static void test_degenerate(void)
{
    kb_stats s;
    double one = 42;
    CHECK(kb_stats_compute(&one, 1, &s) == 0);
    CHECK(s.n == 1 && s.median == 42 && s.p10 == 42 && s.p90 == 42 && s.stddev == 0 && s.cv == 0);
    CHECK(kb_stats_compute(NULL, 0, &s) == 0);
    CHECK(s.n == 0 && s.median == 0 && s.mean == 0);
    double same[] = { 3, 3, 3 };
    CHECK(kb_stats_compute(same, 3, &s) == 0);
    CHECK(s.stddev == 0 && s.cv == 0);
}

static void test_quantile_sorted(void)
{
    double s[] = { 0, 10, 20, 30 };
    CHECK(NEAR(kb_stats_quantile_sorted(s, 4, 0.0), 0));
    CHECK(NEAR(kb_stats_quantile_sorted(s, 4, 1.0), 30));
    CHECK(NEAR(kb_stats_quantile_sorted(s, 4, 0.5), 15));
    CHECK(NEAR(kb_stats_quantile_sorted(s, 4, 0.25), 7.5));
    CHECK(kb_stats_quantile_sorted(s, 0, 0.5) == 0);
}

/* The stopping statistic: relative standard error of the median. */
static void test_noise(void)
{
    kb_stats s;
    memset(&s, 0, sizeof s);
    s.n = 100;
    s.median = 10;
    s.stddev = 1;
    CHECK(NEAR(kb_measure_noise(&s), 1.2533 * 1 / 10 / 10));
    s.n = 1;
    CHECK(isinf(kb_measure_noise(&s)));
    s.n = 5;
    s.median = 0;
    CHECK(isinf(kb_measure_noise(&s)));
}

int main(void)
{
    RUN(test_odd);
    RUN(test_even);
    RUN(test_outlier);
    RUN(test_degenerate);
    RUN(test_quantile_sorted);
    RUN(test_noise);
    TEST_MAIN_END();
}
