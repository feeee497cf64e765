/* compare.c - `kbench compare`: the Mann-Whitney U test, case matching by id, verdicts
 * and the printed comparison (see compare.h). */
#include "results/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { double v; int from_a; } tagged;

static int cmp_tagged(const void *x, const void *y)
{
    double a = ((const tagged *)x)->v, b = ((const tagged *)y)->v;
    return a < b ? -1 : a > b;
}

int kb_mann_whitney(const double *a, int na, const double *b, int nb, kb_mwu *out)
{
    out->u = 0;
    out->z = 0;
    out->p = 1;
    if (na <= 0 || nb <= 0)
        return -1;
    int n = na + nb;
    tagged *t = malloc((size_t)n * sizeof *t);
    if (!t)
        return -1;
    for (int i = 0; i < na; i++) t[i] = (tagged){ a[i], 1 };
    for (int i = 0; i < nb; i++) t[na + i] = (tagged){ b[i], 0 };
    qsort(t, (size_t)n, sizeof *t, cmp_tagged);
    /* ranks 1..n, a tie group sharing the average of its ranks */
    double rank_sum_a = 0, ties = 0;
    for (int i = 0; i < n; ) {
        int j = i;
        while (j < n && t[j].v == t[i].v) j++;
        double avg = (i + 1 + j) / 2.0;            /* mean of ranks i+1 .. j */
        double size = j - i;
        for (int k = i; k < j; k++)
            if (t[k].from_a) rank_sum_a += avg;
        ties += size * size * size - size;
        i = j;
    }
    free(t);
    double n1 = na, n2 = nb, nn = n;
    out->u = rank_sum_a - n1 * (n1 + 1) / 2;
    double mean = n1 * n2 / 2;
    double var = n1 * n2 / 12 * ((nn + 1) - ties / (nn * (nn - 1)));
    if (!(var > 0))
        return 0;                                  /* all tied: no evidence either way */
    double d = fabs(out->u - mean) - 0.5;          /* continuity correction towards the mean */
    if (d <= 0)
        return 0;
    out->z = (out->u > mean ? d : -d) / sqrt(var);
    out->p = erfc(fabs(out->z) / sqrt(2.0));       /* 2 * (1 - Phi(|z|)) */
    if (out->p > 1) out->p = 1;
    return 0;
}

/* ---- matching cases by id ---- */

typedef struct { const char *id; size_t i; } keyed;

static int cmp_keyed(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    int c = strcmp(a->id, b->id);
    return c ? c : (a->i > b->i) - (a->i < b->i);   /* first occurrence first */
}

static keyed *sorted_ids(const kb_report_run *r)
{
    keyed *k = malloc((r->n ? r->n : 1) * sizeof *k);
    if (!k) return NULL;
    for (size_t i = 0; i < r->n; i++) k[i] = (keyed){ r->rows[i].case_id, i };
    qsort(k, r->n, sizeof *k, cmp_keyed);
    return k;
}

/* Row index of the first record of id, or -1. */
static long first_of(const keyed *k, size_t n, const char *id)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (strcmp(k[mid].id, id) < 0) lo = mid + 1; else hi = mid;
    }
    return lo < n && strcmp(k[lo].id, id) == 0 ? (long)k[lo].i : -1;
}

/* The samples of a row (*n 0 when none; caller frees). */
static double *samples_of(const kb_report_row *r, int *n)
{
    json_t *s = json_object_get(json_object_get(r->rec, "timing"), "samples_us");
    *n = (int)json_array_size(s);
    double *x = malloc((size_t)(*n ? *n : 1) * sizeof *x);
    if (!x) kb_out_of_memory("the samples of a case", (size_t)(*n ? *n : 1) * sizeof *x);   /* not "no samples" */
    for (int i = 0; i < *n; i++) x[i] = json_number_value(json_array_get(s, (size_t)i));
    return x;
}

static void judge(kb_cmp_case *c, double threshold)
{
    if (!c->a->ok || !c->b->ok || !c->a->have_timing || !c->b->have_timing ||
        !(c->a->median_us > 0) || !(c->b->median_us > 0)) {
        c->verdict = KB_CMP_NOT_COMPARED;
        return;
    }
    c->ratio = c->b->median_us / c->a->median_us;
    int na, nb;
    double *xa = samples_of(c->a, &na), *xb = samples_of(c->b, &nb);
    c->have_test = na >= 2 && nb >= 2 && kb_mann_whitney(xa, na, xb, nb, &c->test) == 0;
    free(xa);
    free(xb);
    int significant = c->have_test && c->test.p < KB_COMPARE_ALPHA;
    if (significant && c->ratio > 1 + threshold) c->verdict = KB_CMP_REGRESSION;
    else if (significant && c->ratio < 1 / (1 + threshold)) c->verdict = KB_CMP_IMPROVEMENT;
    else c->verdict = KB_CMP_SAME;
}

kb_status kb_compare_runs(const kb_report_run *a, const kb_report_run *b, double threshold, kb_cmp_result *out)
{
    memset(out, 0, sizeof *out);
    keyed *ka = sorted_ids(a), *kb = sorted_ids(b);
    char *b_used = calloc(b->n ? b->n : 1, 1);
    out->cases = calloc(a->n + b->n + 1, sizeof *out->cases);
    if (!ka || !kb || !b_used || !out->cases) {
        free(ka); free(kb); free(b_used); free(out->cases);
        out->cases = NULL;
        return KB_ERR_OOM;
    }
    double log_sum = 0;
    for (size_t i = 0; i < a->n; i++) {
        const kb_report_row *ra = &a->rows[i];
        if (first_of(ka, a->n, ra->case_id) != (long)i)
            continue;                                  /* a repeated id: the first one counts */
        kb_cmp_case *c = &out->cases[out->n++];
        c->case_id = ra->case_id;
        c->a = ra;
        long j = first_of(kb, b->n, ra->case_id);
        if (j < 0) { out->n_only_a++; continue; }
        b_used[j] = 1;
        c->b = &b->rows[j];
        judge(c, threshold);
        if (c->verdict == KB_CMP_NOT_COMPARED) { out->n_not_compared++; continue; }
        out->n_compared++;
        out->n_regressions += c->verdict == KB_CMP_REGRESSION;
        out->n_improvements += c->verdict == KB_CMP_IMPROVEMENT;
        log_sum += log(c->ratio);
        if (strcmp(c->a->clock, c->b->clock) != 0) out->clocks_differ = 1;
        c->cpu = strcmp(c->a->clock, "gpu") != 0 || strcmp(c->b->clock, "gpu") != 0;
        out->n_cpu_compared += c->cpu;
        out->n_cpu_regressions += c->cpu && c->verdict == KB_CMP_REGRESSION;
    }
    for (size_t j = 0; j < b->n; j++) {
        if (b_used[j] || first_of(kb, b->n, b->rows[j].case_id) != (long)j)
            continue;
        kb_cmp_case *c = &out->cases[out->n++];
        c->case_id = b->rows[j].case_id;
        c->b = &b->rows[j];
        out->n_only_b++;
    }
    out->geomean = out->n_compared ? exp(log_sum / out->n_compared) : 0;
    free(ka);
    free(kb);
    free(b_used);
    return KB_OK;
}

void kb_compare_free(kb_cmp_result *r)
{
    free(r->cases);
    memset(r, 0, sizeof *r);
}

int kb_compare_gated(const kb_cmp_result *r)
{
    return r->n_regressions - (r->gate_cpu ? 0 : r->n_cpu_regressions);
}

int kb_compare_case_gates(const kb_cmp_result *r, const kb_cmp_case *c)
{
    return c->a && c->b && c->verdict == KB_CMP_REGRESSION && (!c->cpu || r->gate_cpu);
}

int kb_compare_cpu_note(const kb_cmp_result *r, char *buf, size_t n)
{
    buf[0] = 0;
    if (!r->n_cpu_compared)
        return 0;
    snprintf(buf, n, "CPU clock: %d of %d compared cases were timed on a CPU clock (the emulator). CPU timings of "
             "unchanged code on a shared machine differ by several times between runs, so %s: %d regression%s %s%s",
             r->n_cpu_compared, r->n_compared, r->gate_cpu ? "they gate only because --gate-cpu asks" :
             "they do not gate", r->n_cpu_regressions, r->n_cpu_regressions == 1 ? "" : "s",
             r->gate_cpu ? "counted in the exit code (4)" : "listed, not counted in the exit code",
             r->gate_cpu ? "" : " (--gate-cpu makes them gate)");
    return 1;
}

static const char *const verdict_names[] = { "same", "regression", "improvement", "not_compared" };

const char *kb_cmp_verdict_name(kb_cmp_verdict v)
{
    return (unsigned)v < sizeof verdict_names / sizeof verdict_names[0] ? verdict_names[v] : "?";
}

/* The console's word: a regression that gates stands out in capitals; one on a CPU clock
 * that does not gate says so. */
static const char *verdict_word(const kb_cmp_result *r, const kb_cmp_case *c)
{
    if (c->verdict != KB_CMP_REGRESSION)
        return kb_cmp_verdict_name(c->verdict);
    return kb_compare_case_gates(r, c) ? "REGRESSION" : "regression (cpu clock, not gated)";
}

static void run_line(FILE *out, const char *tag, const kb_report_run *r)
{
    fprintf(out, "%s = %s (run %s", tag, r->source, *r->run_id ? r->run_id : "?");
    if (r->n_devs > 0)
        fprintf(out, ", %s%s", r->devs[0].name, r->devs[0].emulator ? ": emulator, CPU times" : "");
    fprintf(out, ", %zu cases)\n", r->n);
}

void kb_compare_print(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r,
                      double threshold, FILE *out)
{
    run_line(out, "A", a);
    run_line(out, "B", b);
    fprintf(out, "regression: B slower than A by more than %.3g%% and p < %.2g (two-sided Mann-Whitney U over the samples)\n",
            threshold * 100, KB_COMPARE_ALPHA);
    if (r->clocks_differ)
        fprintf(out, "warning: the runs have different clocks (cpu emulator time vs gpu time): their ratios are not comparable\n");
    char note[512];
    if (kb_compare_cpu_note(r, note, sizeof note))
        fprintf(out, "note: %s\n", note);
    size_t w = 4;
    for (size_t i = 0; i < r->n; i++)
        if (r->cases[i].a && r->cases[i].b && r->cases[i].verdict != KB_CMP_NOT_COMPARED && strlen(r->cases[i].case_id) > w)
            w = strlen(r->cases[i].case_id);
    fprintf(out, "\n%-*s  %12s  %12s  %7s  %9s  %s\n", (int)w, "case", "A median_us", "B median_us", "B/A", "p", "verdict");
    for (size_t i = 0; i < r->n; i++) {
        const kb_cmp_case *c = &r->cases[i];
        if (!c->a || !c->b || c->verdict == KB_CMP_NOT_COMPARED)
            continue;
        char ma[32], mb[32], p[32];
        kb_report_num(ma, sizeof ma, c->a->median_us);
        kb_report_num(mb, sizeof mb, c->b->median_us);
        if (c->have_test) snprintf(p, sizeof p, "%.2g", c->test.p); else snprintf(p, sizeof p, "n/a");
        fprintf(out, "%-*s  %8s %-3s  %8s %-3s  %7.3f  %9s  %s\n", (int)w, c->case_id, ma, c->a->clock,
                mb, c->b->clock, c->ratio, p, verdict_word(r, c));
    }
    if (r->n_compared)
        fprintf(out, "\ngeometric mean of B/A over %d cases: %.4f (%s %.2f%%)\n", r->n_compared, r->geomean,
                r->geomean >= 1 ? "B slower by" : "B faster by",
                r->geomean >= 1 ? (r->geomean - 1) * 100 : (1 - r->geomean) * 100);
    else
        fprintf(out, "\nno case was ok with timing in both runs\n");
    fprintf(out, "%d regression%s (%d gating), %d improvement%s, %d within noise or threshold; %d only in A, %d only in B, %d not compared\n",
            r->n_regressions, r->n_regressions == 1 ? "" : "s", kb_compare_gated(r), r->n_improvements, r->n_improvements == 1 ? "" : "s",
            r->n_compared - r->n_regressions - r->n_improvements, r->n_only_a, r->n_only_b, r->n_not_compared);
    const char *titles[3] = { "only in A:", "only in B:", "not compared (not ok with timing in both runs):" };
    for (int part = 0; part < 3; part++) {
        int any = 0;
        for (size_t i = 0; i < r->n; i++) {
            const kb_cmp_case *c = &r->cases[i];
            int in = part == 0 ? c->a && !c->b : part == 1 ? !c->a && c->b
                   : c->a && c->b && c->verdict == KB_CMP_NOT_COMPARED;
            if (!in) continue;
            if (!any) fprintf(out, "\n%s\n", titles[part]);
            any = 1;
            if (part == 2)
                fprintf(out, "  %s  (A %s, B %s)\n", c->case_id, c->a->status, c->b->status);
            else
                fprintf(out, "  %s\n", c->case_id);
        }
    }
}
