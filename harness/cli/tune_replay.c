/* tune_replay.c - `kbench tune --replay FILE` (tune_replay.h). */
#include "cli/tune_replay.h"

#include "tune/replay.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double replay_time(void *user, int i) { return ((const kb_tune_replay *)user)->time[i]; }

/* The evaluation at which the best so far first came within 5% of the optimum; 0 never. */
static int within_at(const kb_tune_trace *t, double opt)
{
    double best = INFINITY;
    for (int k = 0; k < t->evaluations; k++) {
        best = fmin(best, t->times[k]);
        if (best <= 1.05 * opt)
            return k + 1;
    }
    return 0;
}

static json_t *num_or_null(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static const char *unit_of(const kb_tune_replay *r)
{
    return strcmp(r->format, "Kernel Tuner cache") == 0 ? "ms" : r->cpu ? "cpu_us" : "us";
}

static json_t *header_json(const kb_tune_replay *r, int budget)
{
    int opt = kb_tune_replay_optimum(r);
    json_t *o = json_object();
    json_object_set_new(o, "file_format", json_string(r->format));
    json_object_set_new(o, "problem", json_string(r->problem));
    json_object_set_new(o, "space", json_integer(r->n));
    json_object_set_new(o, "absent", json_integer(r->absent));
    json_object_set_new(o, "time_unit", json_string(unit_of(r)));
    json_object_set_new(o, "budget", json_integer(budget));
    json_object_set_new(o, "optimum_time", num_or_null(opt >= 0 ? r->time[opt] : NAN));
    json_object_set_new(o, "optimum_config", opt >= 0 ? json_string(r->label[opt]) : json_null());
    json_object_set_new(o, "random_expected_best", num_or_null(kb_tune_replay_random_expected(r, budget)));
    return o;
}

static int one(const kb_tune_opts *o, const kb_tune_replay *r, kb_tune_strategy s, int budget)
{
    kb_tune_search_opts so = { .strategy = s, .budget = budget, .seed = (uint64_t)o->seed };
    kb_tune_view v = { .n = r->n, .n_axes = r->n_axes, .level = r->level };
    kb_tune_trace t;
    if (kb_tune_search(&so, &v, replay_time, (void *)r, &t) != KB_OK)
        return KB_EXIT_SETUP;
    int opt = kb_tune_replay_optimum(r);
    double opt_t = opt >= 0 ? r->time[opt] : NAN;
    json_t *j = header_json(r, budget);
    json_object_set_new(j, "strategy", json_string(kb_tune_strategy_name(s)));
    json_object_set_new(j, "seed", json_integer(o->seed));
    json_object_set_new(j, "evaluations", json_integer(t.evaluations));
    json_object_set_new(j, "best_time", num_or_null(t.best_time));
    json_object_set_new(j, "best_config", t.best >= 0 ? json_string(r->label[t.best]) : json_null());
    json_object_set_new(j, "best_found_at", t.best >= 0 ? json_integer(t.best_found_at) : json_null());
    int w = opt >= 0 ? within_at(&t, opt_t) : 0;
    json_object_set_new(j, "within_5pct_at", w ? json_integer(w) : json_null());
    if (strcmp(o->format, "json") == 0) {
        json_dumpf(j, stdout, JSON_PRESERVE_ORDER | JSON_COMPACT);
        putchar('\n');
    } else {
        printf("replay of %s (%s, %d configurations, times in %s)\n", r->problem, r->format, r->n, unit_of(r));
        printf("%s, budget %d, seed %d: best %.6g (%s) found at evaluation %d of %d; optimum %.6g (%s)%s\n",
               kb_tune_strategy_name(s), budget, o->seed, t.best_time, t.best >= 0 ? r->label[t.best] : "none",
               t.best_found_at, t.evaluations, opt_t, opt >= 0 ? r->label[opt] : "none",
               w ? "" : "; never within 5% of the optimum");
    }
    json_decref(j);
    kb_tune_trace_free(&t);
    return KB_EXIT_OK;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median_of(double *v, int n)
{
    if (n == 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* One strategy over seeds 1..repeats: median best, runs within 5%, median evaluations to
 * get there, and the median over the runs of the score against random sampling (1: the
 * optimum, 0: random's expected best at this budget, negative: worse than random; the
 * median, as one run stuck in a slow region would otherwise outweigh the rest). */
static json_t *score(const kb_tune_replay *r, kb_tune_strategy s, int budget, int repeats, double opt, double rnd)
{
    double *best = calloc((size_t)repeats, sizeof *best), *at = calloc((size_t)repeats, sizeof *at);
    double *sc = calloc((size_t)repeats, sizeof *sc);
    int reached = 0, runs = 0;
    kb_tune_view v = { .n = r->n, .n_axes = r->n_axes, .level = r->level };
    if (!best || !at || !sc)
        fprintf(stderr, "kbench tune: out of memory for %d repeats of %s: not scored\n", repeats,
                kb_tune_strategy_name(s));
    for (int seed = 1; best && at && sc && seed <= repeats; seed++) {
        kb_tune_search_opts so = { .strategy = s, .budget = budget, .seed = (uint64_t)seed };
        kb_tune_trace t;
        if (kb_tune_search(&so, &v, replay_time, (void *)r, &t) != KB_OK)
            break;
        int w = within_at(&t, opt);
        best[runs] = t.best_time;
        if (w)
            at[reached++] = w;
        sc[runs] = rnd > opt ? (isfinite(t.best_time) ? (rnd - t.best_time) / (rnd - opt) : -INFINITY) : 0.0;
        runs++;
        kb_tune_trace_free(&t);
    }
    json_t *o = json_object();
    json_object_set_new(o, "strategy", json_string(kb_tune_strategy_name(s)));
    json_object_set_new(o, "runs", json_integer(runs));
    json_object_set_new(o, "median_best_time", num_or_null(median_of(best, runs)));
    json_object_set_new(o, "runs_within_5pct", json_integer(reached));
    json_object_set_new(o, "median_evaluations_to_5pct", num_or_null(median_of(at, reached)));
    json_object_set_new(o, "score_vs_random", num_or_null(median_of(sc, runs)));
    free(sc);
    free(best);
    free(at);
    return o;
}

static int all(const kb_tune_opts *o, const kb_tune_replay *r, int budget)
{
    int opt = kb_tune_replay_optimum(r);
    if (opt < 0) {
        fprintf(stderr, "kbench tune: --replay: every configuration failed: nothing to compare\n");
        return KB_EXIT_INPUT;
    }
    double rnd = kb_tune_replay_random_expected(r, budget);
    json_t *j = header_json(r, budget), *arr = json_array();
    json_object_set_new(j, "repeats", json_integer(o->repeats));
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++)
        json_array_append_new(arr, score(r, (kb_tune_strategy)s, budget, o->repeats, r->time[opt], rnd));
    json_object_set_new(j, "strategies", arr);
    if (strcmp(o->format, "json") == 0) {
        json_dumpf(j, stdout, JSON_PRESERVE_ORDER | JSON_INDENT(2));
        putchar('\n');
    } else {
        printf("replay of %s (%s, %d configurations, times in %s): budget %d (%.0f%% of brute force), %d seeds\n",
               r->problem, r->format, r->n, unit_of(r), budget, 100.0 * budget / r->n, o->repeats);
        printf("optimum %.6g; random sampling's expected best at this budget %.6g\n", r->time[opt], rnd);
        printf("%-8s %14s %12s %18s %16s\n", "strategy", "median best", "within 5%", "evals to 5% (med)",
               "score (median)");
        size_t i;
        json_t *s;
        json_array_foreach(arr, i, s) {
            json_t *ev = json_object_get(s, "median_evaluations_to_5pct");
            char evals[32] = "never";
            if (json_is_number(ev))
                snprintf(evals, sizeof evals, "%.1f", json_number_value(ev));
            printf("%-8s %14.6g %9lld/%-2lld %18s %16.3f\n", json_string_value(json_object_get(s, "strategy")),
                   json_number_value(json_object_get(s, "median_best_time")),
                   (long long)json_integer_value(json_object_get(s, "runs_within_5pct")),
                   (long long)json_integer_value(json_object_get(s, "runs")), evals,
                   json_number_value(json_object_get(s, "score_vs_random")));
        }
    }
    json_decref(j);
    return KB_EXIT_OK;
}

int kb_tune_replay_main(const kb_command *cmd, const kb_tune_opts *o)
{
    kb_tune_replay r;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_tune_replay_load(o->replay_path, o->run.n_filters ? o->run.filters[0] : NULL, &r, &err);
    if (st != KB_OK) {
        int rc = kb_opts_fail(cmd, "--replay", "%s", err.s);
        kb_sb_free(&err);
        return st == KB_ERR_IO ? KB_EXIT_SETUP : rc;
    }
    kb_sb_free(&err);
    int budget = o->budget > 0 ? (o->budget < r.n ? o->budget : r.n) : (r.n * 15 + 99) / 100;
    if (r.n_problems > 1)
        fprintf(stderr, "kbench tune: --replay: %d problems in %s; replaying %s (--filter TEXT picks another)\n",
                r.n_problems, o->replay_path, r.problem);
    if (r.cpu)
        fprintf(stderr, "kbench tune: --replay: these records are emulator CPU timings, not GPU times\n");
    int rc;
    kb_tune_strategy s;
    if (kb_tune_strategy_parse(o->strategy, &s) == 0)
        rc = one(o, &r, s, budget);
    else
        rc = all(o, &r, budget);
    kb_tune_replay_free(&r);
    return rc;
}
