/* report.c - strategies replayed on recorded spaces, compared as Willemsen et al. 2024 do
 * (report.h): the runs, the curves, random sampling's exact baseline and the scores, as
 * one JSON document. */
#include "tune/report.h"

#include "tune/prior.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    kb_tune_strategy s;
    int prior;
} variant;

/* One space being compared. */
typedef struct {
    const kb_tune_report_opts *o;
    const char *path;
    kb_tune_replay r;
    double *prior;                 /* [n] estimates, NULL without */
    int opt;                       /* the optimum's index */
    double worst;                  /* the slowest time (a run that found nothing) */
    double brute_s;                /* [s] simulated time of brute force, 0 without costs */
    int time_unit;                 /* points are seconds (else evaluations) */
    int n_points;
    double point[KB_REPORT_MAX_BUDGETS];
    double grid[KB_REPORT_GRID];
    int n_grid;
} space;

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static const char *unit_of(const kb_tune_replay *r)
{
    return strcmp(r->format, "Kernel Tuner cache") == 0 ? "ms" : r->cpu ? "cpu_us" : "us";
}

static void variant_name(const variant *v, char *out, size_t n)
{
    snprintf(out, n, "%s%s", kb_tune_strategy_name(v->s), v->prior ? "+estimate" : "");
}

/* The strategies to compare. */
static int variants(const kb_tune_report_opts *o, variant *out)
{
    int n = 0;
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++)
        if (o->strategy < 0 || o->strategy == s) {
            int plain = o->strategy < 0 || !o->prior || s == KB_TUNE_BRUTE || s == KB_TUNE_RANDOM;
            if (plain)
                out[n++] = (variant){ (kb_tune_strategy)s, 0 };
            if (o->prior && s != KB_TUNE_BRUTE && s != KB_TUNE_RANDOM)
                out[n++] = (variant){ (kb_tune_strategy)s, 1 };
        }
    return n;
}

/* The estimate prior of a space of kbench records. 0, or -1 with err. */
static int load_prior(space *x, kb_sb *err)
{
    if (!x->r.cases) {
        kb_sb_printf(err, "%s: --prior estimate: a %s; the estimate knows only kbench's own kernels (kbench records)",
                     x->path, x->r.format);
        return -1;
    }
    if (!(x->prior = malloc((size_t)x->r.n * sizeof *x->prior)))
        return -1;
    kb_sb why;
    kb_sb_init(&why);
    int n = kb_tune_prior_estimate(x->r.cases, x->r.n, x->r.sm ? x->r.sm : 90, x->prior, &why);
    if (n < 0)
        kb_sb_printf(err, "%s: --prior estimate: %s", x->path, why.s);
    kb_sb_free(&why);
    return n < 0 ? -1 : 0;
}

/* The budgets of x in its unit (evaluations or seconds), and the score's grid. 0, or -1
 * with err (a time budget on a space without costs). */
static int budgets(space *x, kb_sb *err)
{
    const kb_tune_report_opts *o = x->o;
    int cand = kb_tune_replay_candidates(&x->r);
    x->time_unit = o->budget_s > 0 || (o->time_unit && o->budget_evals <= 0);
    if (x->time_unit && x->brute_s <= 0) {
        kb_sb_printf(err, "%s: a budget in simulated time needs what each evaluation cost (Kernel Tuner's "
                     "compile_time, benchmark_time ...; kbench's wall_ms), which this %s lacks", x->path, x->r.format);
        return -1;
    }
    x->n_points = 0;
    if (o->budget_evals > 0)
        x->point[x->n_points++] = o->budget_evals < cand ? o->budget_evals : cand;
    else if (o->budget_s > 0)
        x->point[x->n_points++] = o->budget_s;
    for (int k = 0; o->budget_evals <= 0 && o->budget_s <= 0 && k < o->n_budgets; k++) {
        double p = o->budgets[k] / 100.0;
        x->point[x->n_points++] = x->time_unit ? p * x->brute_s : fmax(1.0, ceil(p * cand));
    }
    if (x->n_points == 0)   /* the default: 15% of the configurations */
        x->point[x->n_points++] = fmax(1.0, ceil(0.15 * cand));
    double lo = x->point[0], hi = x->point[0];
    for (int k = 1; k < x->n_points; k++) {
        lo = fmin(lo, x->point[k]);
        hi = fmax(hi, x->point[k]);
    }
    x->n_grid = hi > lo ? KB_REPORT_GRID : 1;
    for (int g = 0; g < x->n_grid; g++) {
        double v = x->n_grid > 1 ? lo + (hi - lo) * g / (x->n_grid - 1) : lo;
        x->grid[g] = x->time_unit ? v : round(v);
    }
    return 0;
}

static int load_space(space *x, kb_sb *err, kb_status *st)
{
    if ((*st = kb_tune_replay_load(x->path, x->o->filter, &x->r, err)) != KB_OK)
        return -1;
    if (x->r.n_problems > 1)
        fprintf(stderr, "kbench: tune: --replay: %d problems in %s; replaying %s (--filter TEXT picks another)\n",
                x->r.n_problems, x->path, x->r.problem);
    if (x->r.cpu)
        fprintf(stderr, "kbench: tune: --replay: %s holds emulator CPU timings, not GPU times\n", x->path);
    x->opt = kb_tune_replay_optimum(&x->r);
    for (int i = 0; i < x->r.n; i++) {
        if (isfinite(x->r.time[i]) && x->r.time[i] > x->worst)
            x->worst = x->r.time[i];
        if (x->r.cost_s && x->r.time[i] != KB_TUNE_REFUSED)
            x->brute_s += x->r.cost_s[i];
    }
    *st = KB_ERR_INPUT;
    if ((x->o->prior && load_prior(x, err) != 0) || budgets(x, err) != 0)
        return -1;
    *st = KB_OK;
    return 0;
}

/* The best of trace t within budget b (x's unit); INFINITY when none. */
static double best_at(const space *x, const kb_tune_trace *t, double b)
{
    double best = INFINITY;
    for (int k = 0; k < t->evaluations; k++) {
        if (x->time_unit ? t->at_s[k] > b * (1 + 1e-12) : k >= (int)b)
            break;
        best = fmin(best, t->times[k]);
    }
    return best;
}

/* Random sampling's evaluations at budget b: b, or b seconds at the mean cost. */
static int random_evals(const space *x, double b)
{
    if (!x->time_unit)
        return (int)b;
    double per = x->brute_s / kb_tune_replay_candidates(&x->r), e = per > 0 ? floor(b / per) : 1;
    return e < 1 ? 1 : e > x->r.n ? x->r.n : (int)e;
}

static int search(const space *x, const variant *v, int seed, double max_b, kb_tune_trace *t)
{
    kb_tune_view view = kb_tune_replay_view(&x->r, v->prior ? x->prior : NULL);
    kb_tune_search_opts so = { .strategy = v->s, .seed = (uint64_t)seed };
    if (x->time_unit)
        so.budget_s = max_b;
    else
        so.budget = (int)max_b;
    return kb_tune_search(&so, &view, kb_tune_replay_objective, (void *)&x->r, t) == KB_OK ? 0 : -1;
}

/* Runs of one strategy over the seeds: best[p * repeats + seed] at each budget, the
 * grid's mean best, the evaluations to 5% of each run (0 never). 0, -1 out of memory. */
static int runs(const space *x, const variant *v, double *best, double *grid_mean, double *to5)
{
    int reps = x->o->repeats;
    double max_b = 0;
    for (int p = 0; p < x->n_points; p++)
        max_b = fmax(max_b, x->point[p]);
    for (int g = 0; g < x->n_grid; g++) {
        max_b = fmax(max_b, x->grid[g]);
        grid_mean[g] = 0;
    }
    for (int k = 0; k < reps; k++) {
        kb_tune_trace t;
        if (search(x, v, x->o->seed + k, max_b, &t) != 0)
            return -1;
        for (int p = 0; p < x->n_points; p++)
            best[p * reps + k] = best_at(x, &t, x->point[p]);
        for (int g = 0; g < x->n_grid; g++) {
            double b = best_at(x, &t, x->grid[g]);
            grid_mean[g] += (isfinite(b) ? b : x->worst) / reps;
        }
        to5[k] = 0;
        double run_best = INFINITY;
        for (int e = 0; e < t.evaluations && !to5[k]; e++)
            if ((run_best = fmin(run_best, t.times[e])) <= 1.05 * x->r.time[x->opt])
                to5[k] = e + 1;
        kb_tune_trace_free(&t);
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double p = *(const double *)a, q = *(const double *)b;
    return p < q ? -1 : p > q;
}

/* The q-quantile of v[0..n) (sorted in place; linear between neighbours). */
static double quantile(double *v, int n, double q)
{
    if (n == 0)
        return NAN;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    double h = q * (n - 1);
    int i = (int)floor(h);
    if (i + 1 >= n || !isfinite(v[i + 1]))
        return v[i];
    return v[i] + (h - i) * (v[i + 1] - v[i]);
}

static double standardised(double found, double rnd, double opt)
{
    return rnd > opt ? (rnd - found) / (rnd - opt) : 0.0;
}

/* A strategy's row at budget p. */
static json_t *row(const space *x, const char *name, double *b, int reps, double rnd)
{
    double opt = x->r.time[x->opt], mean = 0;
    int within = 0;
    for (int k = 0; k < reps; k++) {
        within += b[k] <= 1.05 * opt;
        mean += (isfinite(b[k]) ? b[k] : x->worst) / reps;
    }
    double q1 = quantile(b, reps, 0.25), med = quantile(b, reps, 0.5), q3 = quantile(b, reps, 0.75);
    json_t *o = json_object();
    json_object_set_new(o, "strategy", json_string(name));
    json_object_set_new(o, "median_best", num(med));
    json_object_set_new(o, "q1_best", num(q1));
    json_object_set_new(o, "q3_best", num(q3));
    json_object_set_new(o, "median_ratio", num(med / opt));
    json_object_set_new(o, "q1_ratio", num(q1 / opt));
    json_object_set_new(o, "q3_ratio", num(q3 / opt));
    json_object_set_new(o, "runs_within_5pct", json_integer(within));
    json_object_set_new(o, "runs", json_integer(reps));
    json_t *each = json_array();   /* every run's best / optimum, ascending (b sorted by quantile) */
    for (int k = 0; k < reps; k++)
        json_array_append_new(each, num(b[k] / opt));
    json_object_set_new(o, "run_ratios", each);
    json_object_set_new(o, "mean_best", num(mean));
    json_object_set_new(o, "score", num(standardised(mean, rnd, opt)));
    return o;
}

/* The budget points of x with random sampling's exact baseline, rows to be added. */
static json_t *point_objects(const space *x)
{
    json_t *pts = json_array();
    int cand = kb_tune_replay_candidates(&x->r);
    double opt = x->r.time[x->opt];
    for (int p = 0; p < x->n_points; p++) {
        json_t *o = json_object();
        int e = random_evals(x, x->point[p]);
        double pct = 100.0 * (x->time_unit ? x->point[p] / x->brute_s : x->point[p] / cand);
        json_object_set_new(o, "budget_pct", num(pct));
        json_object_set_new(o, x->time_unit ? "seconds" : "evaluations",
                            x->time_unit ? json_real(x->point[p]) : json_integer((json_int_t)x->point[p]));
        double q1 = kb_tune_replay_random_quantile(&x->r, e, 0.25), med = kb_tune_replay_random_quantile(&x->r, e, 0.5);
        double q3 = kb_tune_replay_random_quantile(&x->r, e, 0.75), ex = kb_tune_replay_random_expected(&x->r, e);
        json_object_set_new(o, "random_evaluations", json_integer(e));
        json_object_set_new(o, "random_expected", num(ex));
        json_object_set_new(o, "random_median_ratio", num(med / opt));
        json_object_set_new(o, "random_q1_ratio", num(q1 / opt));
        json_object_set_new(o, "random_q3_ratio", num(q3 / opt));
        json_object_set_new(o, "random_expected_ratio", num(ex / opt));
        json_object_set_new(o, "strategies", json_array());
        json_array_append_new(pts, o);
    }
    return pts;
}

/* The space's header fields. */
static json_t *space_header(const space *x)
{
    const kb_tune_replay *r = &x->r;
    json_t *o = json_object();
    json_object_set_new(o, "file", json_string(x->path));
    json_object_set_new(o, "file_format", json_string(r->format));
    json_object_set_new(o, "problem", json_string(r->problem));
    json_object_set_new(o, "device", json_string(r->device));
    json_object_set_new(o, "space", json_integer(r->n));
    json_object_set_new(o, "candidates", json_integer(kb_tune_replay_candidates(r)));
    json_object_set_new(o, "refused", json_integer(r->refused));
    json_object_set_new(o, "failed", json_integer(r->failed));
    json_object_set_new(o, "absent", r->absent >= 0 ? json_integer(r->absent) : json_null());
    json_object_set_new(o, "time_unit", json_string(unit_of(r)));
    json_object_set_new(o, "cpu_timings", json_boolean(r->cpu));
    json_object_set_new(o, "budget_unit", json_string(x->time_unit ? "seconds" : "evaluations"));
    json_object_set_new(o, "brute_force_s", x->brute_s > 0 ? json_real(x->brute_s) : json_null());
    json_object_set_new(o, "optimum_time", json_real(r->time[x->opt]));
    json_object_set_new(o, "optimum_config", json_string(r->label[x->opt]));
    json_object_set_new(o, "prior", json_boolean(x->prior != NULL));
    return o;
}

/* Every strategy on one space: its JSON object; *scores gets each variant's score. */
static json_t *compare_space(space *x, const variant *vs, int n_vs, double *scores)
{
    int reps = x->o->repeats;
    double *best = malloc((size_t)x->n_points * reps * sizeof *best), grid_mean[KB_REPORT_GRID];
    double *to5 = malloc((size_t)reps * sizeof *to5), opt = x->r.time[x->opt];
    json_t *o = space_header(x), *pts = point_objects(x), *to5j = json_object(), *sc = json_object();
    for (int i = 0; best && to5 && i < n_vs; i++) {
        char name[48];
        variant_name(&vs[i], name, sizeof name);
        if (runs(x, &vs[i], best, grid_mean, to5) != 0)
            break;
        for (int p = 0; p < x->n_points; p++) {
            double rnd = json_real_value(json_object_get(json_array_get(pts, (size_t)p), "random_expected"));
            json_array_append_new(json_object_get(json_array_get(pts, (size_t)p), "strategies"),
                                  row(x, name, &best[p * reps], reps, rnd));
        }
        scores[i] = 0;
        for (int g = 0; g < x->n_grid; g++)
            scores[i] += standardised(grid_mean[g], kb_tune_replay_random_expected(&x->r, random_evals(x, x->grid[g])),
                                      opt) / x->n_grid;
        json_object_set_new(sc, name, json_real(scores[i]));
        int reached = 0;
        for (int k = 0; k < reps; k++) {
            reached += to5[k] > 0;
            to5[k] = to5[k] > 0 ? to5[k] : INFINITY;   /* never: counts as beyond every budget */
        }
        json_t *e = json_object();
        json_object_set_new(e, "median", num(quantile(to5, reps, 0.5)));
        json_object_set_new(e, "reached", json_integer(reached));
        json_object_set_new(e, "runs", json_integer(reps));
        json_object_set_new(to5j, name, e);
    }
    free(best);
    free(to5);
    json_object_set_new(o, "points", pts);
    json_object_set_new(o, "evaluations_to_5pct", to5j);
    json_object_set_new(o, "score", sc);
    return o;
}

static void free_space(space *x)
{
    kb_tune_replay_free(&x->r);
    free(x->prior);
    x->prior = NULL;
}

/* The aggregate: each variant's score averaged over the spaces, and the best of them. */
static void aggregate(json_t *doc, const variant *vs, int n_vs, const double *scores, int n_spaces)
{
    json_t *agg = json_object();
    int best = -1;
    double best_score = -INFINITY;
    for (int i = 0; i < n_vs; i++) {
        char name[48];
        variant_name(&vs[i], name, sizeof name);
        double m = 0;
        for (int k = 0; k < n_spaces; k++)
            m += scores[k * n_vs + i] / n_spaces;
        json_object_set_new(agg, name, json_real(m));
        if (vs[i].s != KB_TUNE_BRUTE && m > best_score) {
            best_score = m;
            best = i;
        }
    }
    json_object_set_new(doc, "aggregate_score", agg);
    char name[48] = "";
    if (best >= 0)
        variant_name(&vs[best], name, sizeof name);
    json_object_set_new(doc, "best_by_aggregate_score", best >= 0 ? json_string(name) : json_null());
}

static json_t *doc_header(const kb_tune_report_opts *o, const variant *vs, int n_vs)
{
    json_t *doc = json_object(), *names = json_array();
    for (int i = 0; i < n_vs; i++) {
        char name[48];
        variant_name(&vs[i], name, sizeof name);
        json_array_append_new(names, json_string(name));
    }
    json_object_set_new(doc, "kbench_tune_report", json_integer(1));
    json_object_set_new(doc, "method", json_string("Willemsen et al., FGCS 2024: (random - found) / (random - optimum), "
                                                   "random sampling computed exactly, averaged over the budgets"));
    json_object_set_new(doc, "repeats", json_integer(o->repeats));
    json_object_set_new(doc, "first_seed", json_integer(o->seed));
    json_object_set_new(doc, "strategies", names);
    return doc;
}

json_t *kb_tune_report_run(const kb_tune_report_opts *o, kb_sb *err, kb_status *st)
{
    variant vs[2 * KB_TUNE_STRATEGY_COUNT];
    int n_vs = variants(o, vs), loaded = 0;
    double *scores = calloc((size_t)(o->n_paths ? o->n_paths : 1) * (size_t)n_vs, sizeof *scores);
    space *xs = calloc((size_t)(o->n_paths ? o->n_paths : 1), sizeof *xs);
    *st = scores && xs ? KB_OK : KB_ERR_INTERNAL;
    for (; *st == KB_OK && loaded < o->n_paths; loaded++) {   /* every file first: a bad one fails fast */
        xs[loaded].o = o;
        xs[loaded].path = o->paths[loaded];
        load_space(&xs[loaded], err, st);
    }
    json_t *doc = NULL, *spaces = json_array();
    for (int k = 0; *st == KB_OK && k < o->n_paths; k++)
        json_array_append_new(spaces, compare_space(&xs[k], vs, n_vs, &scores[k * n_vs]));
    if (*st == KB_OK) {
        doc = doc_header(o, vs, n_vs);
        json_object_set_new(doc, "spaces", spaces);
        aggregate(doc, vs, n_vs, scores, o->n_paths);
    } else {
        json_decref(spaces);
    }
    for (int k = 0; xs && k < loaded; k++)
        free_space(&xs[k]);
    free(xs);
    free(scores);
    return doc;
}

json_t *kb_tune_report_one(const kb_tune_report_opts *o, kb_sb *err, kb_status *st)
{
    space x;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.path = o->paths[0];
    json_t *j = NULL;
    variant v = { (kb_tune_strategy)o->strategy, o->prior };
    kb_tune_trace t;
    if (load_space(&x, err, st) == 0 && search(&x, &v, o->seed, x.point[0], &t) == 0) {
        double opt = x.r.time[x.opt];
        j = space_header(&x);
        json_object_set_new(j, "strategy", json_string(kb_tune_strategy_name(v.s)));
        json_object_set_new(j, "seed", json_integer(o->seed));
        json_object_set_new(j, x.time_unit ? "budget_s" : "budget",
                            x.time_unit ? json_real(x.point[0]) : json_integer((json_int_t)x.point[0]));
        json_object_set_new(j, "evaluations", json_integer(t.evaluations));
        json_object_set_new(j, "refused", json_integer(t.refused));
        json_object_set_new(j, "spent_s", x.brute_s > 0 ? json_real(t.spent_s) : json_null());
        json_object_set_new(j, "best_time", num(t.best_time));
        json_object_set_new(j, "best_config", t.best >= 0 ? json_string(x.r.label[t.best]) : json_null());
        json_object_set_new(j, "best_found_at", t.best >= 0 ? json_integer(t.best_found_at) : json_null());
        int w = 0;
        for (int e = 0; e < t.evaluations && !w; e++)
            w = t.times[e] <= 1.05 * opt ? e + 1 : 0;
        json_object_set_new(j, "within_5pct_at", w ? json_integer(w) : json_null());
        json_object_set_new(j, "random_expected_best",
                            num(kb_tune_replay_random_expected(&x.r, random_evals(&x, x.point[0]))));
        kb_tune_trace_free(&t);
    } else if (*st == KB_OK) {
        *st = KB_ERR_INTERNAL;
    }
    free_space(&x);
    return j;
}
