/* test_gbench.c - the Google Benchmark bridge: it hands back the runs it was fed
 * (manual times, iterations, repetitions), the aggregates over them, the finished
 * counters, and a failing iteration as an error run. Times are scripted, never real. */
#include "check.h"
#include "engine/gbench_bridge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 1e-9 * (fabs((double)(a)) + fabs((double)(b))) + 1e-12)

/* A scripted iteration function: returns script[i % n] microseconds, counts calls,
 * and fails on call number fail_at (1-based; 0 = never). */
typedef struct {
    const double *script;
    int n;
    int calls;
    int fail_at;
} feeder;

static int feed(void *user, double *elapsed_us, char *msg, size_t msglen)
{
    feeder *f = user;
    f->calls++;
    if (f->fail_at && f->calls == f->fail_at) {
        snprintf(msg, msglen, "scripted failure at call %d", f->calls);
        return 1;
    }
    *elapsed_us = f->script[(f->calls - 1) % f->n];
    return 0;
}

static kb_gbench_case make_case(feeder *f, int64_t iterations, int repetitions)
{
    kb_gbench_case c;
    memset(&c, 0, sizeof c);
    c.name = "gemm/wmma(BM=128,BN=128)/bf16/64x64x64"; /* regex metacharacters on purpose */
    c.fn = feed;
    c.user = f;
    c.iterations = iterations;
    c.repetitions = repetitions;
    return c;
}

/* One iteration per repetition: every repetition is exactly one fed sample. */
static void test_runs_are_the_fed_samples(void)
{
    static const double s[] = { 10, 30, 20, 40, 1000 };
    feeder f = { s, 5, 0, 0 };
    kb_gbench_case c = make_case(&f, 1, 5);
    kb_gbench_result r;
    CHECK(kb_gbench_run_case(&c, &r) == KB_OK);
    CHECK(f.calls == 5);
    int reps = 0;
    for (int i = 0; i < r.n_runs; i++) {
        if (r.runs[i].aggregate)
            continue;
        CHECK(r.runs[i].repetition_index == reps);
        CHECK(r.runs[i].iterations == 1);
        CHECK(!r.runs[i].error);
        CHECK_MSG(NEAR(r.runs[i].real_time_us, s[reps]), "run %d: %g us, fed %g", reps, r.runs[i].real_time_us,
                  s[reps]);
        reps++;
    }
    CHECK(reps == 5);
    /* aggregates over {10,30,20,40,1000}: mean 220, median 30, sample stddev, cv */
    const kb_gbench_run *mean = kb_gbench_aggregate(&r, "mean");
    const kb_gbench_run *median = kb_gbench_aggregate(&r, "median");
    const kb_gbench_run *sd = kb_gbench_aggregate(&r, "stddev");
    const kb_gbench_run *cv = kb_gbench_aggregate(&r, "cv");
    CHECK(mean && median && sd && cv);
    if (mean && median && sd && cv) {
        double m = 220, ss = 0;
        for (int i = 0; i < 5; i++)
            ss += (s[i] - m) * (s[i] - m);
        double sdev = sqrt(ss / 4);
        CHECK_MSG(NEAR(mean->real_time_us, 220), "mean %g", mean->real_time_us);
        CHECK_MSG(NEAR(median->real_time_us, 30), "median %g", median->real_time_us);
        CHECK_MSG(fabs(sd->real_time_us - sdev) < 1e-6, "stddev %g want %g", sd->real_time_us, sdev);
        CHECK(cv->percent && !mean->percent);
        CHECK_MSG(fabs(cv->real_time_us - sdev / m) < 1e-9, "cv %g want %g", cv->real_time_us, sdev / m);
        CHECK(mean->repetition_index == -1 && mean->iterations == 5);
    }
    CHECK(kb_gbench_aggregate(&r, "p99") == NULL);
    kb_gbench_result_free(&r);
    CHECK(r.runs == NULL && r.n_runs == 0);
}

/* Several iterations per repetition: a run's time is the mean of its iterations. */
static void test_iterations_per_run(void)
{
    static const double s[] = { 1, 2, 3, 6 };
    feeder f = { s, 4, 0, 0 };
    kb_gbench_case c = make_case(&f, 4, 2);
    kb_gbench_result r;
    CHECK(kb_gbench_run_case(&c, &r) == KB_OK);
    CHECK(f.calls == 8);
    CHECK(r.n_runs >= 2);
    for (int i = 0; i < 2 && i < r.n_runs; i++) {
        CHECK(!r.runs[i].aggregate && r.runs[i].iterations == 4);
        CHECK_MSG(NEAR(r.runs[i].real_time_us, 3.0), "run %d: %g", i, r.runs[i].real_time_us);
    }
    kb_gbench_result_free(&r);
}

/* Rate counters are finished against the manual time, plain ones are left alone. */
static void test_counters(void)
{
    static const double s[] = { 2.0 }; /* 2 us per iteration */
    feeder f = { s, 1, 0, 0 };
    kb_gbench_case c = make_case(&f, 10, 1);
    /* 4e6 FLOP per iteration at 2 us -> 2e12 FLOP/s; counted in TFLOP: 2 TFLOPS */
    kb_gbench_counter_set(&c.counters[0], "TFLOPS", 4e6 * 1e-12, KB_GBENCH_ITER_RATE);
    kb_gbench_counter_set(&c.counters[1], "AI", 12.5, KB_GBENCH_PLAIN);
    /* a plain rate divides the value by the run's whole time (10 x 2 us) */
    kb_gbench_counter_set(&c.counters[2], "per_run", 1.0, KB_GBENCH_RATE);
    c.n_counters = 3;
    kb_gbench_result r;
    CHECK(kb_gbench_run_case(&c, &r) == KB_OK);
    CHECK(r.n_runs == 1); /* one repetition: no aggregates */
    if (r.n_runs >= 1) {
        const kb_gbench_run *run = &r.runs[0];
        CHECK(run->n_counters == 3);
        CHECK(!strcmp(run->counters[0].name, "TFLOPS") && run->counters[0].kind == KB_GBENCH_ITER_RATE);
        CHECK_MSG(fabs(run->counters[0].value - 2.0) < 1e-9, "TFLOPS %g", run->counters[0].value);
        CHECK_MSG(run->counters[1].value == 12.5, "AI %g", run->counters[1].value);
        CHECK_MSG(fabs(run->counters[2].value - 1.0 / 20e-6) < 1e-3, "per_run %g", run->counters[2].value);
    }
    kb_gbench_result_free(&r);
}

/* iterations = 0: Google Benchmark grows the count until min_time of manual time. */
static void test_min_time(void)
{
    static const double s[] = { 1000.0 }; /* 1 ms of manual time per iteration */
    feeder f = { s, 1, 0, 0 };
    kb_gbench_case c = make_case(&f, 0, 1);
    c.min_time_s = 0.02;
    kb_gbench_result r;
    CHECK(kb_gbench_run_case(&c, &r) == KB_OK);
    CHECK(r.n_runs == 1);
    if (r.n_runs == 1) {
        CHECK_MSG(r.runs[0].iterations * 1e-3 >= 0.02, "%lld iterations", (long long)r.runs[0].iterations);
        CHECK(NEAR(r.runs[0].real_time_us, 1000.0));
    }
    kb_gbench_result_free(&r);
}

/* A failing iteration is an error run with the message; other repetitions still report. */
static void test_error_run(void)
{
    static const double s[] = { 5.0 };
    feeder f = { s, 1, 0, 2 };
    kb_gbench_case c = make_case(&f, 1, 3);
    kb_gbench_result r;
    CHECK(kb_gbench_run_case(&c, &r) == KB_OK);
    int errors = 0, ok = 0;
    for (int i = 0; i < r.n_runs; i++) {
        if (r.runs[i].aggregate)
            continue;
        if (r.runs[i].error) {
            errors++;
            CHECK(strstr(r.runs[i].error_message, "scripted failure at call 2") != NULL);
        } else {
            ok++;
            CHECK(NEAR(r.runs[i].real_time_us, 5.0));
        }
    }
    CHECK(errors == 1 && ok == 2);
    kb_gbench_result_free(&r);
}

static void test_bad_input(void)
{
    feeder f = { NULL, 0, 0, 0 };
    kb_gbench_case c = make_case(&f, 1, 0);
    kb_gbench_result r;
    CHECK(kb_gbench_run_case(&c, &r) == KB_ERR_INPUT);
    c.repetitions = 1;
    c.fn = NULL;
    CHECK(kb_gbench_run_case(&c, &r) == KB_ERR_INPUT);
    c.fn = feed;
    c.n_counters = KB_GBENCH_MAX_COUNTERS + 1;
    CHECK(kb_gbench_run_case(&c, &r) == KB_ERR_INPUT);
    CHECK(f.calls == 0 && r.runs == NULL);
}

/* Calls are independent: nothing stays registered from the previous case. */
static void test_back_to_back(void)
{
    static const double s[] = { 7.0 };
    for (int k = 0; k < 3; k++) {
        feeder f = { s, 1, 0, 0 };
        kb_gbench_case c = make_case(&f, 2, 1);
        kb_gbench_result r;
        CHECK(kb_gbench_run_case(&c, &r) == KB_OK);
        CHECK(f.calls == 2 && r.n_runs == 1);
        kb_gbench_result_free(&r);
    }
}

int main(void)
{
    RUN(test_runs_are_the_fed_samples);
    RUN(test_iterations_per_run);
    RUN(test_counters);
    RUN(test_min_time);
    RUN(test_error_run);
    RUN(test_bad_input);
    RUN(test_back_to_back);
    TEST_MAIN_END();
}
