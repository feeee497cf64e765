/* compare.h - two recorded runs side by side: per case the ratio of medians, a
 * two-sided Mann-Whitney U test over the two sample sets, the geometric mean of the
 * ratios, and regressions (slower by more than a threshold AND significant).
 *
 * CPU clocks do not gate: a case either run timed on a CPU clock (the emulator) is
 * compared and its regression listed, but it does not count towards the exit code unless
 * the caller sets gate_cpu (--gate-cpu): CPU timings of unchanged code on a shared machine
 * differ by several times between runs (two identical emulator runs gave 31 regressions),
 * so they cannot tell a slower kernel from a busier machine. Every output says so.
 */
#ifndef KB_COMPARE_H
#define KB_COMPARE_H

#include <stdio.h>

#include "results/report.h"

#define KB_COMPARE_ALPHA 0.05      /* significance level of the U test */

/* Mann-Whitney U test of samples a[0..na) against b[0..nb). */
typedef struct {
    double u;       /* U statistic of a: the number of pairs (a_i, b_j) with a_i > b_j, ties 1/2 */
    double z;       /* normal approximation with tie correction and continuity correction */
    double p;       /* two-sided p-value; 1 when every value is tied (no evidence) */
} kb_mwu;

/* Two-sided test with the normal approximation: mean n1*n2/2, variance
 * n1*n2/12 * ((n+1) - sum(t^3 - t) / (n(n-1))) over tie groups of size t, and a
 * continuity correction of 1/2 (as scipy.stats.mannwhitneyu with method="asymptotic").
 * Returns 0, or -1 when na or nb is 0 or out of memory (out then says p = 1). */
int kb_mann_whitney(const double *a, int na, const double *b, int nb, kb_mwu *out);

typedef enum {
    KB_CMP_SAME = 0,      /* within the threshold, or not significant */
    KB_CMP_REGRESSION,    /* B slower than A by more than the threshold, p < alpha */
    KB_CMP_IMPROVEMENT,   /* B faster: ratio < 1 / (1 + threshold), p < alpha */
    KB_CMP_NOT_COMPARED   /* not ok in one of the runs, or no timing */
} kb_cmp_verdict;

typedef struct {
    const char *case_id;
    const kb_report_row *a, *b;   /* NULL when the case is missing from that run */
    double ratio;                 /* median B / median A (> 1: B slower) */
    kb_mwu test;
    int have_test;                /* both runs kept >= 2 samples */
    kb_cmp_verdict verdict;
    int cpu;                      /* compared, and a run timed it on a CPU clock: it gates only with gate_cpu */
} kb_cmp_case;

typedef struct {
    kb_cmp_case *cases;           /* A's cases in A's order, then those only in B */
    size_t n;
    int n_compared, n_regressions, n_improvements, n_only_a, n_only_b, n_not_compared;
    double geomean;               /* of the ratios of the compared cases; 0 when none */
    int clocks_differ;            /* one run is emulator (cpu) time, the other gpu */
    int n_cpu_compared;           /* compared cases with a CPU clock in either run */
    int n_cpu_regressions;        /* of the regressions, those */
    int gate_cpu;                 /* the caller's choice (--gate-cpu): CPU-clock regressions gate too */
} kb_cmp_result;

/* Compare run a (baseline) with run b. threshold is relative (0.05: 5% slower). A case
 * id that occurs more than once in a run is matched by its first record. KB_ERR_OOM
 * only. Free with kb_compare_free. */
kb_status kb_compare_runs(const kb_report_run *a, const kb_report_run *b, double threshold, kb_cmp_result *out);
void kb_compare_free(kb_cmp_result *r);

/* The regressions that gate (exit 4): those timed on GPU clocks in both runs, and with
 * r->gate_cpu the CPU-clock ones too. */
int kb_compare_gated(const kb_cmp_result *r);

/* 1 when c is a regression that gates (see kb_compare_gated). */
int kb_compare_case_gates(const kb_cmp_result *r, const kb_cmp_case *c);

/* The CPU-clock note into buf (n bytes): how many compared cases were CPU-timed, why they
 * do not gate and what --gate-cpu does. 1 when there is one (a CPU-timed case was
 * compared), else 0 and buf "". */
int kb_compare_cpu_note(const kb_cmp_result *r, char *buf, size_t n);

/* "same", "regression", "improvement", "not_compared" (the JSON words). */
const char *kb_cmp_verdict_name(kb_cmp_verdict v);

/* Print the comparison as an aligned table with a summary, the geometric mean and the
 * cases found in only one run. */
void kb_compare_print(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r,
                      double threshold, FILE *out);

#endif /* KB_COMPARE_H */
