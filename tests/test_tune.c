/* test_tune.c - the tuner's pure parts: strategies on synthetic landscapes with known
 * optima (seeded, budget-bound), the winner beyond the noise, static pruning, the space
 * built from a suite, and the tuning database's keys, resume and staleness. */
#include "check.h"
#include "kernels/families.h"
#include "session/prune.h"
#include "suite/plan.h"
#include "tune/search.h"
#include "tune/space.h"
#include "tune/strategy.h"
#include "tune/tunedb.h"
#include "tune/winner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

/* A 3-axis grid (8 x 8 x 6 = 384 configurations) with a smooth bowl around (5, 2, 3),
 * a little deterministic roughness, and every 7th configuration failing. */
#define AX 3
static const int dims3[AX] = { 8, 8, 6 };
typedef struct {
    int n;
    int level[8 * 8 * 6 * AX];
    int calls;
    int seen[8 * 8 * 6];
    int repeat;                    /* a configuration was evaluated twice */
    int stop_after;                /* > 0: return NAN on that call */
} land;

static void land_init(land *l)
{
    memset(l, 0, sizeof *l);
    for (int a = 0; a < dims3[0]; a++)
        for (int b = 0; b < dims3[1]; b++)
            for (int c = 0; c < dims3[2]; c++) {
                l->level[l->n * AX] = a;
                l->level[l->n * AX + 1] = b;
                l->level[l->n * AX + 2] = c;
                l->n++;
            }
}

static double land_time(const land *l, int i)
{
    const int *v = &l->level[i * AX];
    if (i % 7 == 3 && !(v[0] == 5 && v[1] == 2 && v[2] == 3))
        return INFINITY;
    double d = (v[0] - 5) * (v[0] - 5) + (v[1] - 2) * (v[1] - 2) + 2.0 * (v[2] - 3) * (v[2] - 3);
    return 10.0 + d + 0.3 * ((i * 2654435761u) % 7) / 7.0;
}

static double land_fn(void *user, int i)
{
    land *l = user;
    if (l->stop_after && l->calls + 1 == l->stop_after)
        return NAN;
    l->calls++;
    l->repeat |= l->seen[i]++;
    return land_time(l, i);
}

static int land_optimum(const land *l)
{
    int best = 0;
    for (int i = 1; i < l->n; i++)
        if (land_time(l, i) < land_time(l, best))
            best = i;
    return best;
}

static void search(kb_tune_strategy s, int budget, uint64_t seed, land *l, kb_tune_trace *t)
{
    kb_tune_view v = { .n = l->n, .n_axes = AX, .level = l->level };
    kb_tune_search_opts o = { .strategy = s, .budget = budget, .seed = seed };
    CHECK(kb_tune_search(&o, &v, land_fn, l, t) == KB_OK);
}

static void test_brute_finds_optimum(void)
{
    land l;
    land_init(&l);
    kb_tune_trace t;
    search(KB_TUNE_BRUTE, 0, 1, &l, &t);
    CHECK(t.evaluations == l.n && l.calls == l.n && !l.repeat);
    CHECK(t.best == land_optimum(&l));
    CHECK(t.order[0] == 0 && t.order[l.n - 1] == l.n - 1);
    kb_tune_trace_free(&t);
}

/* Every strategy: the budget is respected, nothing is evaluated twice, the best is the
 * minimum of what was evaluated and never a failed configuration, and a seed repeats
 * the same search exactly. */
static void test_budget_seed_memo(void)
{
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++) {
        land a, b;
        land_init(&a);
        land_init(&b);
        kb_tune_trace ta, tb;
        search((kb_tune_strategy)s, 40, 7, &a, &ta);
        search((kb_tune_strategy)s, 40, 7, &b, &tb);
        CHECK_MSG(ta.evaluations == 40 && a.calls == 40, "%s: %d evaluations", kb_tune_strategy_name(s), ta.evaluations);
        CHECK(!a.repeat);
        CHECK(ta.evaluations == tb.evaluations && memcmp(ta.order, tb.order, 40 * sizeof(int)) == 0);
        double min = INFINITY;
        for (int k = 0; k < ta.evaluations; k++)
            min = fmin(min, ta.times[k]);
        CHECK(ta.best >= 0 && ta.best_time == min && isfinite(ta.best_time));
        CHECK(ta.best_found_at >= 1 && ta.order[ta.best_found_at - 1] == ta.best);
        kb_tune_trace_free(&ta);
        kb_tune_trace_free(&tb);
    }
}

/* The guided strategies find the bowl's optimum of 384 configurations with a quarter of
 * brute force's evaluations, for most seeds; a different seed gives a different order. */
static void test_local_search_finds_optimum(void)
{
    for (int s = KB_TUNE_ILS; s < KB_TUNE_STRATEGY_COUNT; s++) {
        int found = 0;
        for (uint64_t seed = 1; seed <= 10; seed++) {
            land l;
            land_init(&l);
            kb_tune_trace t;
            search((kb_tune_strategy)s, 96, seed, &l, &t);
            found += t.best == land_optimum(&l);
            kb_tune_trace_free(&t);
        }
        CHECK_MSG(found >= 8, "%s found the optimum for %d of 10 seeds", kb_tune_strategy_name(s), found);
    }
    land a, b;
    land_init(&a);
    land_init(&b);
    kb_tune_trace ta, tb;
    search(KB_TUNE_RANDOM, 20, 1, &a, &ta);
    search(KB_TUNE_RANDOM, 20, 2, &b, &tb);
    CHECK(memcmp(ta.order, tb.order, 20 * sizeof(int)) != 0);
    kb_tune_trace_free(&ta);
    kb_tune_trace_free(&tb);
}

/* NAN from the objective (Ctrl-C) stops the search with what finished kept. */
static void test_stop(void)
{
    land l;
    land_init(&l);
    l.stop_after = 6;
    kb_tune_trace t;
    search(KB_TUNE_ILS, 0, 3, &l, &t);
    CHECK(t.stopped && t.evaluations == 5 && l.calls == 5);
    kb_tune_trace_free(&t);
    kb_tune_strategy s;
    CHECK(kb_tune_strategy_parse("ils", &s) == 0 && s == KB_TUNE_ILS);
    CHECK(kb_tune_strategy_parse("genetic", &s) == 0 && s == KB_TUNE_GENETIC);
    CHECK(kb_tune_strategy_parse("hill", &s) == -1);
}


/* A landscape with holes and refusals: the bowl's grid with about 40% of the
 * combinations absent (not in the space: a restriction) and every 5th remaining one
 * refused before it runs (pruned). */
typedef struct {
    land l;
    int n;
    int level[8 * 8 * 6 * AX];
    int map[8 * 8 * 6];            /* index in the sparse space -> index in l */
    double cost[8 * 8 * 6];
    int asked[8 * 8 * 6];
    int refused_asked;
} sparse;

static void sparse_init(sparse *sp)
{
    memset(sp, 0, sizeof *sp);
    land_init(&sp->l);
    for (int i = 0; i < sp->l.n; i++) {
        if ((i * 7919u) % 10 < 4 && !(i == land_optimum(&sp->l)))
            continue;
        memcpy(&sp->level[sp->n * AX], &sp->l.level[i * AX], AX * sizeof(int));
        sp->cost[sp->n] = 0.5 + (i % 5);
        sp->map[sp->n++] = i;
    }
}

static double sparse_fn(void *user, int i)
{
    sparse *sp = user;
    sp->asked[i]++;
    if (i % 5 == 4) {
        sp->refused_asked++;
        return KB_TUNE_REFUSED;
    }
    return land_time(&sp->l, sp->map[i]);
}

/* Every strategy on the sparse space: a refused configuration is asked once and costs
 * nothing (the budget counts only the others), nothing is asked twice, the best is the
 * fastest evaluated and never refused, a seed repeats the search. */
static void test_constraints_refused(void)
{
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++) {
        sparse a, b;
        sparse_init(&a);
        sparse_init(&b);
        kb_tune_view va = { .n = a.n, .n_axes = AX, .level = a.level }, vb = { .n = b.n, .n_axes = AX, .level = b.level };
        kb_tune_search_opts o = { .strategy = (kb_tune_strategy)s, .budget = 50, .seed = 11 };
        kb_tune_trace ta, tb;
        CHECK(kb_tune_search(&o, &va, sparse_fn, &a, &ta) == KB_OK);
        CHECK(kb_tune_search(&o, &vb, sparse_fn, &b, &tb) == KB_OK);
        CHECK_MSG(ta.evaluations == 50, "%s: %d evaluations", kb_tune_strategy_name(s), ta.evaluations);
        CHECK(ta.refused == a.refused_asked);
        int repeats = 0;
        for (int i = 0; i < a.n; i++)
            repeats += a.asked[i] > 1;
        CHECK_MSG(repeats == 0, "%s asked %d configurations twice", kb_tune_strategy_name(s), repeats);
        for (int k = 0; k < ta.evaluations; k++)
            CHECK(ta.order[k] % 5 != 4);   /* refused ones are never in the trace */
        CHECK(ta.evaluations == tb.evaluations && ta.refused == tb.refused &&
              memcmp(ta.order, tb.order, (size_t)ta.evaluations * sizeof(int)) == 0);
        CHECK(ta.best >= 0 && ta.best % 5 != 4);
        kb_tune_trace_free(&ta);
        kb_tune_trace_free(&tb);
    }
}

/* A budget in simulated seconds: the search stops once the costs of its evaluations
 * reach it (the evaluation that crosses it completes), the trace's times add up, and
 * refused configurations cost nothing. */
static void test_time_budget(void)
{
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++) {
        sparse a;
        sparse_init(&a);
        kb_tune_view v = { .n = a.n, .n_axes = AX, .level = a.level, .cost_s = a.cost };
        kb_tune_search_opts o = { .strategy = (kb_tune_strategy)s, .seed = 3, .budget_s = 40.0 };
        kb_tune_trace t;
        CHECK(kb_tune_search(&o, &v, sparse_fn, &a, &t) == KB_OK);
        double sum = 0;
        for (int k = 0; k < t.evaluations; k++) {
            sum += a.cost[t.order[k]];
            CHECK(fabs(t.at_s[k] - sum) < 1e-9);
        }
        double last = t.evaluations ? a.cost[t.order[t.evaluations - 1]] : 0;
        CHECK_MSG(t.spent_s >= 40.0 && t.spent_s - last < 40.0, "%s: spent %g s", kb_tune_strategy_name(s), t.spent_s);
        kb_tune_trace_free(&t);
    }
}

/* With a prior, every strategy but brute and random evaluates the prior's best first. */
static void test_prior_first(void)
{
    land l;
    land_init(&l);
    double prior[8 * 8 * 6];
    for (int i = 0; i < l.n; i++)
        prior[i] = 100.0 + (i * 37 % 101);
    prior[123] = 1.0;
    for (int s = KB_TUNE_ILS; s < KB_TUNE_STRATEGY_COUNT; s++) {
        land x;
        land_init(&x);
        kb_tune_view v = { .n = x.n, .n_axes = AX, .level = x.level, .prior = prior };
        kb_tune_search_opts o = { .strategy = (kb_tune_strategy)s, .budget = 20, .seed = 5 };
        kb_tune_trace t;
        CHECK(kb_tune_search(&o, &v, land_fn, &x, &t) == KB_OK);
        CHECK_MSG(t.evaluations == 20 && t.order[0] == 123, "%s began at %d", kb_tune_strategy_name(s), t.order[0]);
        kb_tune_trace_free(&t);
    }
}

/* A categorical axis (levels are names) and a space of one configuration. */
static void test_categorical_and_tiny(void)
{
    land l;
    land_init(&l);
    const unsigned char cat[AX] = { 1, 0, 1 };
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++) {
        land x;
        land_init(&x);
        kb_tune_view v = { .n = x.n, .n_axes = AX, .level = x.level, .categorical = cat };
        kb_tune_search_opts o = { .strategy = (kb_tune_strategy)s, .budget = 60, .seed = 2 };
        kb_tune_trace t;
        CHECK(kb_tune_search(&o, &v, land_fn, &x, &t) == KB_OK && t.evaluations == 60 && !x.repeat);
        kb_tune_trace_free(&t);
        land one;
        land_init(&one);
        kb_tune_view v1 = { .n = 1, .n_axes = AX, .level = one.level };
        CHECK(kb_tune_search(&o, &v1, land_fn, &one, &t) == KB_OK && t.evaluations == 1 && t.best == 0);
        kb_tune_trace_free(&t);
    }
    int bad_level[AX] = { 0, -1, 0 };
    kb_tune_view bad = { .n = 1, .n_axes = AX, .level = bad_level };
    kb_tune_search_opts o = { .strategy = KB_TUNE_BAYES, .seed = 1 };
    kb_tune_trace t;
    CHECK(kb_tune_search(&o, &bad, land_fn, &l, &t) == KB_ERR_INPUT);
}

/* A 5 x 5 x 5 grid (an objective that never fails): the tests of the initial design. */
#define G5 125
typedef struct {
    int level[G5 * AX];
    int seen[G5];
} grid5;

static void grid5_init(grid5 *g)
{
    memset(g, 0, sizeof *g);
    for (int i = 0; i < G5; i++) {
        g->level[i * AX] = i / 25;
        g->level[i * AX + 1] = i / 5 % 5;
        g->level[i * AX + 2] = i % 5;
    }
}

static double grid5_fn(void *user, int i)
{
    grid5 *g = user;
    g->seen[i]++;
    return 1.0 + ((unsigned)i * 2654435761u) % 1000;
}

/* kb_search_lhs: on each axis of k levels, k points take each level once (a Latin
 * hypercube); a level most of the space has gets no more than its share of the grid; a
 * seed repeats the design, another seed permutes it. */
static void test_latin_hypercube(void)
{
    grid5 g;
    grid5_init(&g);
    kb_tune_view v = { .n = G5, .n_axes = AX, .level = g.level };
    double pos[3][5 * AX];
    for (int r = 0; r < 3; r++) {
        kb_search s;
        kb_tune_trace t;
        CHECK(kb_search_init(&s, &v, grid5_fn, &g, 10, 0, r < 2 ? 9 : 10, &t) == KB_OK);
        CHECK(kb_search_lhs(&s, 5, pos[r]) == 0 && kb_search_lhs(&s, 0, pos[r]) == -1);
        kb_search_free(&s);
        kb_tune_trace_free(&t);
        for (int a = 0; a < AX; a++) {
            int hit[5] = { 0 };
            for (int i = 0; i < 5; i++)
                hit[(int)pos[r][i * AX + a]]++;
            for (int l = 0; l < 5; l++)
                CHECK_MSG(hit[l] == 1, "axis %d level %d taken %d times", a, l, hit[l]);
        }
    }
    CHECK(memcmp(pos[0], pos[1], sizeof pos[0]) == 0 && memcmp(pos[0], pos[2], sizeof pos[0]) != 0);
    /* axis 0 with level 0 on 3/5 of the space, 1 and 2 on 1/5 each: still 1 or 2 of 5
     * points each (a level's share of the grid, not of the space) */
    grid5 h;
    grid5_init(&h);
    for (int i = 0; i < G5; i++)
        h.level[i * AX] = i < 75 ? 0 : i < 100 ? 1 : 2;
    kb_tune_view vh = { .n = G5, .n_axes = AX, .level = h.level };
    for (uint64_t seed = 1; seed <= 8; seed++) {
        kb_search s;
        kb_tune_trace t;
        CHECK(kb_search_init(&s, &vh, grid5_fn, &h, 10, 0, seed, &t) == KB_OK && kb_search_lhs(&s, 5, pos[0]) == 0);
        int hit[3] = { 0 };
        for (int i = 0; i < 5; i++)
            hit[(int)pos[0][i * AX]]++;
        for (int l = 0; l < 3; l++)
            CHECK_MSG(hit[l] == 1 || hit[l] == 2, "level %d taken %d times", l, hit[l]);
        kb_search_free(&s);
        kb_tune_trace_free(&t);
    }
}

/* bayes begins with its initial design, a Latin hypercube: on the 5 x 5 x 5 grid (3 axes:
 * 4 points, at least 5) its first 5 evaluations take each level of every axis once, for
 * every seed; and it never asks a configuration twice. */
static void test_bayes_initial_design(void)
{
    for (uint64_t seed = 1; seed <= 8; seed++) {
        grid5 g;
        grid5_init(&g);
        kb_tune_view v = { .n = G5, .n_axes = AX, .level = g.level };
        kb_tune_search_opts o = { .strategy = KB_TUNE_BAYES, .budget = 30, .seed = seed };
        kb_tune_trace t;
        CHECK(kb_tune_search(&o, &v, grid5_fn, &g, &t) == KB_OK && t.evaluations == 30);
        for (int a = 0; a < AX; a++) {
            int hit[5] = { 0 };
            for (int k = 0; k < 5; k++)
                hit[g.level[t.order[k] * AX + a]]++;
            for (int l = 0; l < 5; l++)
                CHECK_MSG(hit[l] == 1, "seed %d axis %d level %d taken %d times", (int)seed, a, l, hit[l]);
        }
        for (int i = 0; i < G5; i++)
            CHECK(g.seen[i] <= 1);
        kb_tune_trace_free(&t);
    }
}

/* bayes's initial design has 5 points at least (the whole budget below 5): the 4
 * evaluations of a budget of 4 on the 5 x 5 x 5 grid lie one in each quarter of every
 * axis' levels (sorted, the i-th within stratum i's levels), and the first 5 of a budget
 * of 8 - half of it 4 - take each level of every axis once. */
static void sorted_levels(const grid5 *g, const kb_tune_trace *t, int a, int n, int *lv)
{
    for (int k = 0; k < n; k++) {   /* insertion sort */
        int l = g->level[t->order[k] * AX + a], j = k;
        for (; j > 0 && lv[j - 1] > l; j--)
            lv[j] = lv[j - 1];
        lv[j] = l;
    }
}

static void test_bayes_small_budget(void)
{
    for (uint64_t seed = 1; seed <= 8; seed++)
        for (int budget = 4; budget <= 8; budget += 4) {
            grid5 g;
            grid5_init(&g);
            kb_tune_view v = { .n = G5, .n_axes = AX, .level = g.level };
            kb_tune_search_opts o = { .strategy = KB_TUNE_BAYES, .budget = budget, .seed = seed };
            kb_tune_trace t;
            CHECK(kb_tune_search(&o, &v, grid5_fn, &g, &t) == KB_OK && t.evaluations == budget);
            int k = budget < 5 ? budget : 5, lv[5];
            for (int a = 0; a < AX; a++) {
                sorted_levels(&g, &t, a, k, lv);
                for (int i = 0; i < k; i++)   /* stratum i of k over 5 levels: [i*5/k, (i+1)*5/k) */
                    CHECK_MSG(lv[i] >= i * 5 / k && lv[i] <= ((i + 1) * 5 + k - 1) / k - 1,
                              "budget %d seed %d axis %d: sorted level %d is %d", budget, (int)seed, a, i, lv[i]);
            }
            kb_tune_trace_free(&t);
        }
}

/* With a prior, bayes evaluates the prior's best first and the other k - 1 design points form
 * a Latin hypercube of their own: on an 8 x 8 x 8 grid (k = 5) the four lie one in each
 * quarter of every axis' levels, {0,1}, {2,3}, {4,5}, {6,7}. Before, slot 0 of a 5-point
 * hypercube was dropped, and the four left came from strata of 8/5 levels. */
#define G8 512
static double grid8_fn(void *user, int i)
{
    (void)user;
    return 1.0 + ((unsigned)i * 2654435761u) % 1000;
}

static void test_bayes_prior_design(void)
{
    static int level[G8 * AX];
    double prior[G8];
    for (int i = 0; i < G8; i++) {
        level[i * AX] = i / 64, level[i * AX + 1] = i / 8 % 8, level[i * AX + 2] = i % 8;
        prior[i] = 100.0 + (i * 37 % 101);
    }
    prior[77] = 1.0;
    for (uint64_t seed = 1; seed <= 8; seed++) {
        kb_tune_view v = { .n = G8, .n_axes = AX, .level = level, .prior = prior };
        kb_tune_search_opts o = { .strategy = KB_TUNE_BAYES, .budget = 30, .seed = seed };
        kb_tune_trace t;
        CHECK(kb_tune_search(&o, &v, grid8_fn, NULL, &t) == KB_OK && t.evaluations == 30 && t.order[0] == 77);
        for (int a = 0; a < AX; a++) {
            int hit[4] = { 0 };
            for (int k = 1; k <= 4; k++)
                hit[level[t.order[k] * AX + a] / 2]++;
            for (int q = 0; q < 4; q++)
                CHECK_MSG(hit[q] == 1, "seed %d axis %d: quarter %d has %d design points", (int)seed, a, q, hit[q]);
        }
        kb_tune_trace_free(&t);
    }
}

static void test_winner(void)
{
    kb_tune_result r[] = {
        { "a", 1, 100.0, 0.001, -1, -1 },  /* [99.8, 100.2] */
        { "b", 1, 90.0, 0.001, -1, -1 },   /* [89.8, 90.2]: fastest, alone */
        { "c", 0, 50.0, 0.001, -1, -1 },   /* failed: never the winner */
        { "d", 1, 95.0, 0.001, -1, -1 },
    };
    kb_tune_choice c;
    CHECK(kb_tune_choose(r, 4, 0, &c) == 1 && !c.tie && c.n_tied == 0 && !c.noisy);
    CHECK(fabs(c.lo_us - 90.0 / exp(1.96 * 0.001)) < 1e-9 && fabs(c.hi_us - 90.0 * exp(1.96 * 0.001)) < 1e-9);
    /* d within b's noise: a tie; with resources known, fewer registers goes first */
    r[3].median_us = 90.1;
    r[1].registers = 96;
    r[3].registers = 64;
    CHECK(kb_tune_choose(r, 4, 0, &c) == 3 && c.tie && c.n_tied == 1 && c.tied[0] == 1);
    /* unknown resources: the median decides, then the id */
    r[1].registers = r[3].registers = -1;
    CHECK(kb_tune_choose(r, 4, 0, &c) == 1 && c.tie && c.tied[0] == 3);
    kb_tune_result none[] = { { "x", 0, 1.0, 0.0, -1, -1 } };
    CHECK(kb_tune_choose(none, 1, 0, &c) == -1 && c.winner == -1);
    /* intervals in log space never reach 0, however large the noise (issue 24: [0.00, 2893.97]) */
    kb_tune_result wide = { "w", 1, 1446.985, 0.6, -1, -1 };
    double lo, hi;
    kb_tune_interval(&wide, &lo, &hi);
    CHECK(lo > 0 && fabs(lo * hi - 1446.985 * 1446.985) < 1e-6 * 1446.985 * 1446.985);
    /* a leader noisier than the bound, or of unknown noise, is no winner: noise */
    kb_tune_result noisy[] = { { "a", 1, 10.0, KB_TUNE_NOISE_BOUND * 1.5, -1, -1 }, { "b", 1, 30.0, 0.001, -1, -1 } };
    CHECK(kb_tune_choose(noisy, 2, 0, &c) == 0 && c.noisy);
    noisy[0].noise = NAN;
    CHECK(kb_tune_choose(noisy, 2, 0, &c) == 0 && c.noisy && isnan(c.lo_us) && c.tie);   /* unknown: within noise of b */
    noisy[0].noise = KB_TUNE_NOISE_BOUND;
    CHECK(kb_tune_choose(noisy, 2, 0, &c) == 0 && !c.noisy && !c.tie);
}

static void test_prune(void)
{
    kb_device_info d;
    memset(&d, 0, sizeof d);
    d.max_shmem_per_block_optin = 227 * 1024;
    kb_resources ok = { 128, 0, 0, 0, 16384, 512 };
    char why[256] = "";
    CHECK(kb_tune_prune(&d, NULL, &ok, why, sizeof why) == 1);
    CHECK(kb_tune_prune(&d, NULL, NULL, why, sizeof why) == 1);
    kb_resources unknown = { -1, -1, -1, -1, -1, -1 };
    CHECK(kb_tune_prune(&d, NULL, &unknown, why, sizeof why) == 1);
    kb_resources spill = ok;
    spill.spill_store_bytes = 48;
    CHECK(kb_tune_prune(&d, NULL, &spill, why, sizeof why) == 0 && strstr(why, "spills registers (48 bytes"));
    kb_resources big = ok;
    big.static_shmem_bytes = 240 * 1024;
    CHECK(kb_tune_prune(&d, NULL, &big, why, sizeof why) == 0 && strstr(why, "static shared memory"));
    kb_resources regs = ok;
    regs.registers = 300;
    CHECK(kb_tune_prune(&d, NULL, &regs, why, sizeof why) == 0 && strstr(why, "registers"));
}

static const char suite_text[] =
    "suite: t\n"
    "benchmarks:\n"
    "  - family: gelu\n"
    "    variant: [naive, vec]\n"
    "    dtype: [fp32, bf16]\n"
    "    shape: [{n: 4096}]\n"
    "    params: {BLOCK: [64, 128, 2000], VEC: [2, 4], form: [erf, tanh]}\n";

/* Problems are family/dtype/dims/pad/launch plus the choice params; configurations the
 * variant and tile params; valid() refusals (BLOCK 2000) never enter the space. */
static void test_space(void)
{
    kb_plan p;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_suite_plan_text(suite_text, "t.yaml", kb_families, kb_n_families, 0, &p, &err) == KB_OK);
    kb_walk_opts o = { NULL, 0, NULL, { 90, 0, 227 * 1024 } };
    kb_cases l;
    kb_tune_space s;
    CHECK(kb_cases_build(&p, &o, &l) == KB_OK);
    CHECK(kb_tune_space_of_cases(&p, &l, &s) == KB_OK);
    CHECK_MSG(s.n == 4, "%d problems", s.n);   /* 2 dtypes x 2 forms */
    CHECK_MSG(strcmp(s.problems[0].key, "gelu(form=erf,ypad=-1)/fp32/4096/pad0/eager") == 0, "%s",
              s.problems[0].key);
    /* naive: BLOCK 64, 128; vec: BLOCK x VEC = 4 */
    CHECK_MSG(s.problems[0].n == 6, "%d configs", s.problems[0].n);
    CHECK(s.invalid == 12 && strstr(s.first_invalid, "BLOCK=2000"));
    const kb_tune_problem *q = &s.problems[0];
    CHECK(q->n_axes == 4 && q->n_values[0] == 2);   /* variant, BLOCK, VEC, max_grid (vec only) */
    int found = 0;
    for (int i = 0; i < q->n; i++)
        found += strcmp(q->configs[i].config, "vec(BLOCK=128,VEC=4,max_grid=0)") == 0;
    CHECK(found == 1);
    kb_tune_space_free(&s);
    kb_cases_free(&l);
    kb_plan_free(&p);
    /* levels of an integer param follow its values, whatever order the suite lists them in;
     * the variant is categorical */
    static const char unordered[] = "suite: u\nbenchmarks:\n  - family: gelu\n    variant: [vec]\n"
                                    "    dtype: [fp32]\n    shape: [{n: 4096}]\n    params: {BLOCK: [256, 64, 128], VEC: [4, 2]}\n";
    CHECK(kb_suite_plan_text(unordered, "u.yaml", kb_families, kb_n_families, 0, &p, &err) == KB_OK);
    CHECK(kb_cases_build(&p, &o, &l) == KB_OK);
    CHECK(kb_tune_space_of_cases(&p, &l, &s) == KB_OK && s.n == 1);
    q = &s.problems[0];
    CHECK(q->categorical[0] && !q->categorical[1]);
    for (int a = 1; a < q->n_axes; a++)
        for (int k = 1; k < q->n_values[a]; k++)
            CHECK(q->values[a][k - 1] < q->values[a][k]);
    for (int i = 0; i < q->n; i++) {
        const char *b = strstr(q->configs[i].config, "BLOCK=");
        int block = b ? atoi(b + 6) : 0;
        CHECK(q->values[1][q->levels[i * q->n_axes + 1]] == block);
    }
    kb_tune_space_free(&s);
    kb_cases_free(&l);
    kb_plan_free(&p);
    kb_sb_free(&err);
}

static const char decode_text[] =
    "suite: t\n"
    "benchmarks:\n"
    "  - {family: attention, variant: mma, dtype: bf16, shape: [{b: 1, h: 8, s: 256, d: 64}], params: {causal: yes},"
    " pad: 0}\n"
    "  - family: attention\n"
    "    variant: decode\n"
    "    dtype: bf16\n"
    "    shape: [{b: 1, h: 8, s: 256, d: 64}]\n"
    "    params: {causal: yes, q_len: [1, 8], group: 8, CHUNK: [0, 128]}\n"
    "    pad: 0\n";

/* attention/decode computes another operation over attention's dims (other_op_variants): its
 * cases are problems of their own, one per q_len and group (problem params), never
 * configurations of the square attention at the same dims; CHUNK is a configuration axis. */
static void test_space_other_operation(void)
{
    kb_plan p;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_suite_plan_text(decode_text, "t.yaml", kb_families, kb_n_families, 0, &p, &err) == KB_OK);
    kb_walk_opts o = { NULL, 0, NULL, { 90, 0, 227 * 1024 } };
    kb_cases l;
    kb_tune_space s;
    CHECK(kb_cases_build(&p, &o, &l) == KB_OK);
    CHECK(kb_tune_space_of_cases(&p, &l, &s) == KB_OK);
    CHECK_MSG(s.n == 3, "%d problems", s.n);
    static const char *const keys[] = { "attention(causal=yes)/bf16/1x8x256x64/pad0/eager",
                                        "attention/decode(causal=yes,q_len=1,group=8)/bf16/1x8x256x64/pad0/eager",
                                        "attention/decode(causal=yes,q_len=8,group=8)/bf16/1x8x256x64/pad0/eager" };
    for (int i = 0; i < 3 && i < s.n; i++) {
        CHECK_MSG(!strcmp(s.problems[i].key, keys[i]), "%s", s.problems[i].key);
        CHECK(s.problems[i].n == (i ? 2 : 1));
    }
    if (s.n == 3)
        CHECK_MSG(!strcmp(s.problems[1].configs[1].config, "decode(CHUNK=128,WARPS=4,STAGES=2)"), "%s",
                  s.problems[1].configs[1].config);
    kb_tune_space_free(&s);
    kb_cases_free(&l);
    kb_plan_free(&p);
    kb_sb_free(&err);
}

static kb_tune_entry entry(const char *id, double us)
{
    kb_tune_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.case_id, sizeof e.case_id, "%s", id);
    snprintf(e.problem, sizeof e.problem, "gelu(form=erf)/fp32/4096/pad0/eager");
    snprintf(e.status, sizeof e.status, "ok");
    snprintf(e.clock, sizeof e.clock, "gpu");
    e.median_us = us;
    e.noise = 0.01;
    e.registers = 32;
    e.shmem_bytes = -1;
    return e;
}

static int count_choice(void *user, const kb_tune_choice_row *c)
{
    (*(int *)user)++;
    CHECK(strcmp(c->source, "src2") == 0 && strcmp(c->key.driver, "13.0") == 0);
    return 0;
}


/* Keys: a rerun hits; another source, driver or GPU misses; a newer choice under another
 * key marks the older stale. */
static void test_db(void)
{
    char path[] = "/tmp/kb_tune_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    kb_tunedb *db;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_tunedb_open(path, &db, &err) == KB_OK);
    kb_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "NVIDIA H100 80GB HBM3");
    d.sm = 90;
    d.sm_count = 132;
    d.driver_version = 13000;
    d.caps = KB_CAP_GPU_TIMER;
    kb_tune_key k, k2;
    kb_tune_key_make(&d, "nvrtc 13.0", &k);
    CHECK(strstr(k.silicon, "sm_90|132 SMs") && strcmp(k.driver, "13.0") == 0 && !k.emulator);
    kb_tune_entry e = entry("gelu/vec(BLOCK=128,VEC=4)/fp32/4096/pad0/eager", 12.5), got;
    CHECK(kb_tunedb_put(db, &k, "src1", &e, &err) == KB_OK);
    CHECK(kb_tunedb_lookup(db, &k, "src1", e.case_id, &got) == 1 && got.median_us == 12.5 && got.registers == 32);
    CHECK(got.shmem_bytes == -1 && strcmp(got.status, "ok") == 0);
    CHECK(kb_tunedb_lookup(db, &k, "src2", e.case_id, &got) == 0);
    d.sm_count = 114;
    kb_tune_key_make(&d, "nvrtc 13.0", &k2);
    CHECK(kb_tunedb_lookup(db, &k2, "src1", e.case_id, &got) == 0);
    d.sm_count = 132;
    d.driver_version = 13010;
    kb_tune_key_make(&d, "nvrtc 13.0", &k2);
    CHECK(kb_tunedb_lookup(db, &k2, "src1", e.case_id, &got) == 0);
    kb_tune_choice_row c;
    memset(&c, 0, sizeof c);
    snprintf(c.problem, sizeof c.problem, "%s", e.problem);
    CHECK(kb_tunedb_put_choice(db, &k, "src1", &c, &err) == KB_OK);
    d.driver_version = 13000;
    kb_tune_key_make(&d, "nvrtc 13.0", &k2);
    CHECK(kb_tunedb_put_choice(db, &k2, "src2", &c, &err) == KB_OK);   /* the source changed */
    int n = 0;
    CHECK(kb_tunedb_each_choice(db, count_choice, &n) == 1 && n == 1);
    kb_tunedb_close(db);
    kb_sb_free(&err);
    unlink(path);
}

int main(void)
{
    RUN(test_brute_finds_optimum);
    RUN(test_budget_seed_memo);
    RUN(test_local_search_finds_optimum);
    RUN(test_stop);
    RUN(test_constraints_refused);
    RUN(test_time_budget);
    RUN(test_prior_first);
    RUN(test_categorical_and_tiny);
    RUN(test_latin_hypercube);
    RUN(test_bayes_initial_design);
    RUN(test_bayes_small_budget);
    RUN(test_bayes_prior_design);
    RUN(test_winner);
    RUN(test_prune);
    RUN(test_space);
    RUN(test_space_other_operation);
    RUN(test_db);
    TEST_MAIN_END();
}
