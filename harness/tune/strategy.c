/* strategy.c - the strategies' names and dispatch, and the simple ones: brute force,
 * random sampling, greedy ILS and simulated annealing over configuration levels
 * (strategy.h). The others live in evolve.c, anneal2.c and bayes.c. */
#include "tune/strategy.h"

#include "tune/anneal2.h"
#include "tune/bayes.h"
#include "tune/evolve.h"

#include <stdlib.h>
#include <string.h>

const char *const kb_tune_strategy_names[] = { "brute",   "random",     "ils",   "anneal", "genetic",
                                               "diffevo", "dualanneal", "bayes", NULL };
_Static_assert(sizeof kb_tune_strategy_names / sizeof kb_tune_strategy_names[0] == KB_TUNE_STRATEGY_COUNT + 1,
               "one name per strategy");

const char *kb_tune_strategy_name(kb_tune_strategy s)
{
    return (unsigned)s < KB_TUNE_STRATEGY_COUNT ? kb_tune_strategy_names[s] : "?";
}

int kb_tune_strategy_parse(const char *s, kb_tune_strategy *out)
{
    for (int i = 0; i < KB_TUNE_STRATEGY_COUNT; i++)
        if (strcmp(s, kb_tune_strategy_names[i]) == 0) {
            *out = (kb_tune_strategy)i;
            return 0;
        }
    return -1;
}

static void run_brute(kb_search *s)
{
    for (int i = 0; i < s->v->n && !kb_search_done(s); i++)
        kb_search_eval(s, i);
}

static void run_random(kb_search *s)
{
    int i;
    while (!kb_search_done(s) && (i = kb_search_fresh(s)) >= 0)
        kb_search_eval(s, i);
}

/* The size of a sampled start: about a tenth of the budget, 2 to 10. */
static int start_size(const kb_search *s)
{
    int k = kb_search_expected_evals(s) / 10;
    return k < 2 ? 2 : k > 10 ? 10 : k;
}

static void run_ils(kb_search *s, int patience)
{
    int start = kb_search_sampled_start(s, start_size(s));
    while (start >= 0 && !kb_search_done(s)) {
        int opt = kb_search_climb(s, start);
        int stale = 0;
        while (!kb_search_done(s) && stale < patience) {
            double before = s->t->best_time;
            int p = opt, d;
            for (int step = 0; step < 3; step++) {   /* a random walk of three neighbour steps */
                int n = kb_search_neighbours(s, p, 1, &d);
                if (n > 0)
                    p = s->scratch[kb_search_rnd(s, n)];
            }
            int o2 = kb_search_climb(s, p);
            if (s->memo[o2] < s->memo[opt])
                opt = o2;
            stale = s->t->best_time < before ? 0 : stale + 1;
        }
        start = kb_search_fresh(s);
    }
}

static void run_anneal(kb_search *s)
{
    int cur = kb_search_sampled_start(s, start_size(s));
    if (cur < 0)
        return;
    double t = kb_search_eval(s, cur), temp = 0.2;
    long steps = 0, max_steps = 100L * s->v->n + 1000;
    while (!kb_search_done(s) && steps++ < max_steps) {
        int d, n = kb_search_neighbours(s, cur, 1, &d);
        int next = n > 0 ? s->scratch[kb_search_rnd(s, n)] : kb_search_fresh(s);
        if (next < 0)
            break;
        double tn = kb_search_eval(s, next);
        if (isnan(tn))
            break;
        double worse = isinf(t) ? -1.0 : isinf(tn) ? INFINITY : (tn - t) / t;
        if (worse < 0 || kb_search_unif(s) < exp(-worse / temp)) {
            cur = next;
            t = tn;
        }
        temp = 0.2 * pow(1e-3 / 0.2, kb_search_progress(s));   /* cools over the budget */
        if (n > 0 && steps % 50 == 0) {      /* every neighbour known: jump to a new point */
            int unseen = 0;
            for (int k = 0; k < n; k++)
                unseen += isnan(s->memo[s->scratch[k]]);
            if (!unseen && (next = kb_search_fresh(s)) >= 0 && !isnan(tn = kb_search_eval(s, next)) && tn < t) {
                cur = next;
                t = tn;
            }
        }
    }
    run_random(s);   /* steps exhausted in a small space: spend the rest of the budget */
}

kb_status kb_tune_search(const kb_tune_search_opts *o, const kb_tune_view *v, kb_tune_objective fn, void *user,
                         kb_tune_trace *out)
{
    kb_search s;
    kb_status st = kb_search_init(&s, v, fn, user, o->budget, o->budget_s, o->seed, out);
    if (st != KB_OK)
        return st;
    if (v->n > 0) {
        switch (o->strategy) {
        case KB_TUNE_BRUTE: run_brute(&s); break;
        case KB_TUNE_RANDOM: run_random(&s); break;
        case KB_TUNE_ILS: run_ils(&s, o->patience > 0 ? o->patience : 5); break;
        case KB_TUNE_ANNEAL: run_anneal(&s); break;
        case KB_TUNE_GENETIC: st = kb_search_genetic(&s); break;
        case KB_TUNE_DIFFEVO: st = kb_search_diffevo(&s); break;
        case KB_TUNE_DUALANNEAL: st = kb_search_dualanneal(&s); break;
        case KB_TUNE_BAYES: st = kb_search_bayes(&s); break;
        default: st = KB_ERR_INPUT; break;
        }
        if (st == KB_OK && !s.t->stopped)
            run_random(&s);   /* a strategy that ran out of moves: the rest of the budget at random */
    }
    kb_search_free(&s);
    if (st != KB_OK)
        kb_tune_trace_free(out);
    return st;
}
