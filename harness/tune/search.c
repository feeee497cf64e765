/* search.c - one search in progress and the moves strategies are made of (search.h). */
#include "tune/search.h"

#include <stdlib.h>
#include <string.h>

void kb_tune_trace_free(kb_tune_trace *t)
{
    free(t->order);
    free(t->times);
    free(t->at_s);
    memset(t, 0, sizeof *t);
    t->best = -1;
    t->best_time = INFINITY;
}

static uint64_t hash_levels(const int *lv, int n_axes)
{
    return kb_hash64(lv, (size_t)n_axes * sizeof *lv, KB_HASH_INIT);
}

/* The hash table of level vectors: open addressing, at most half full. 0, -1 out of memory. */
static int build_index(kb_search *s)
{
    const kb_tune_view *v = s->v;
    s->n_slot = 16;
    while (s->n_slot < 2 * v->n)
        s->n_slot *= 2;
    s->slot = calloc((size_t)s->n_slot, sizeof *s->slot);
    if (!s->slot)
        return -1;
    for (int i = 0; i < v->n; i++) {
        size_t h = (size_t)hash_levels(&v->level[(size_t)i * (size_t)v->n_axes], v->n_axes) & (size_t)(s->n_slot - 1);
        while (s->slot[h])
            h = (h + 1) & (size_t)(s->n_slot - 1);
        s->slot[h] = i + 1;
    }
    return 0;
}

kb_status kb_search_init(kb_search *s, const kb_tune_view *v, kb_tune_objective fn, void *user, int budget,
                         double budget_s, uint64_t seed, kb_tune_trace *t)
{
    memset(s, 0, sizeof *s);
    memset(t, 0, sizeof *t);
    t->best = -1;
    t->best_time = INFINITY;
    if (v->n_axes < 0 || v->n_axes > KB_TUNE_SEARCH_MAX_AXES || v->n < 0)
        return KB_ERR_INPUT;
    for (size_t k = 0; k < (size_t)v->n * (size_t)v->n_axes; k++) {
        if (v->level[k] < 0)
            return KB_ERR_INPUT;
        int a = (int)(k % (size_t)v->n_axes);
        if (v->level[k] >= s->n_levels[a])
            s->n_levels[a] = v->level[k] + 1;
    }
    s->v = v;
    s->fn = fn;
    s->user = user;
    s->budget = budget > 0 && budget < v->n ? budget : v->n;
    s->budget_s = budget_s > 0 && v->cost_s ? budget_s : 0;
    s->t = t;
    kb_rng_seed(&s->rng, seed);
    size_t cells = (size_t)(v->n ? v->n : 1);
    s->memo = malloc(cells * sizeof *s->memo);
    s->scratch = malloc(cells * sizeof *s->scratch);
    t->order = malloc(cells * sizeof *t->order);
    t->times = malloc(cells * sizeof *t->times);
    t->at_s = malloc(cells * sizeof *t->at_s);
    if (!s->memo || !s->scratch || !t->order || !t->times || !t->at_s || build_index(s) != 0) {
        kb_search_free(s);
        kb_tune_trace_free(t);
        return KB_ERR_INTERNAL;
    }
    for (int i = 0; i < v->n; i++)
        s->memo[i] = NAN;
    return KB_OK;
}

void kb_search_free(kb_search *s)
{
    free(s->memo);
    free(s->scratch);
    free(s->slot);
    s->memo = NULL;
    s->scratch = NULL;
    s->slot = NULL;
}

int kb_search_rnd(kb_search *s, int n) { return (int)(kb_rng_u32(&s->rng) % (uint32_t)n); }

double kb_search_unif(kb_search *s) { return (double)kb_rng_u32(&s->rng) / 4294967296.0; }

double kb_search_normal(kb_search *s)
{
    double u1 = 1.0 - kb_search_unif(s), u2 = kb_search_unif(s);   /* Box-Muller; u1 in (0, 1] */
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

int kb_search_done(const kb_search *s)
{
    return s->t->stopped || s->t->evaluations >= s->budget || s->visited >= s->v->n ||
           (s->budget_s > 0 && s->t->spent_s >= s->budget_s);
}

double kb_search_progress(const kb_search *s)
{
    double p = (double)s->t->evaluations / s->budget;
    if (s->budget_s > 0 && s->t->spent_s / s->budget_s > p)
        p = s->t->spent_s / s->budget_s;
    return p < 1 ? p : 1;
}

int kb_search_expected_evals(const kb_search *s)
{
    if (s->budget_s <= 0 || s->t->evaluations == 0 || s->t->spent_s <= 0)
        return s->budget;
    double e = s->t->evaluations * s->budget_s / s->t->spent_s;
    return e < s->budget ? (int)e : s->budget;
}

double kb_search_eval(kb_search *s, int i)
{
    if (!isnan(s->memo[i]))
        return s->memo[i];
    if (kb_search_done(s))
        return NAN;
    double t = s->fn(s->user, i);
    kb_tune_trace *tr = s->t;
    if (isnan(t)) {
        tr->stopped = 1;
        return NAN;
    }
    s->visited++;
    if (t == KB_TUNE_REFUSED) {
        s->memo[i] = INFINITY;
        tr->refused++;
        return INFINITY;
    }
    if (!(t >= 0))
        t = INFINITY;   /* a negative time is no time: failed */
    s->memo[i] = t;
    if (s->v->cost_s && isfinite(s->v->cost_s[i]) && s->v->cost_s[i] > 0)
        tr->spent_s += s->v->cost_s[i];
    tr->order[tr->evaluations] = i;
    tr->times[tr->evaluations] = t;
    tr->at_s[tr->evaluations++] = tr->spent_s;
    if (t < tr->best_time) {
        tr->best_time = t;
        tr->best = i;
        tr->best_found_at = tr->evaluations;
    }
    return t;
}

int kb_search_fresh(kb_search *s)
{
    int left = s->v->n - s->visited;
    if (left <= 0)
        return -1;
    int k = kb_search_rnd(s, left);
    for (int j = 0; j < s->v->n; j++)
        if (isnan(s->memo[j]) && k-- == 0)
            return j;
    return -1;
}

int kb_search_prior_best(const kb_search *s)
{
    const double *p = s->v->prior;
    int best = -1;
    for (int j = 0; p && j < s->v->n; j++)
        if (isnan(s->memo[j]) && isfinite(p[j]) && (best < 0 || p[j] < p[best]))
            best = j;
    return best;
}

static int hamming(const kb_search *s, int a, int b)
{
    int d = 0, n = s->v->n_axes;
    const int *la = &s->v->level[(size_t)a * (size_t)n], *lb = &s->v->level[(size_t)b * (size_t)n];
    for (int k = 0; k < n; k++)
        d += la[k] != lb[k];
    return d;
}

int kb_search_neighbours(kb_search *s, int i, int min_d, int *dist)
{
    int best_d = 0, n = 0;
    for (int j = 0; j < s->v->n; j++) {
        int d = j == i ? 0 : hamming(s, i, j);
        if (d < min_d)
            continue;
        if (best_d == 0 || d < best_d) {
            best_d = d;
            n = 0;
        }
        if (d == best_d)
            s->scratch[n++] = j;
    }
    for (int k = n - 1; k > 0; k--) {
        int r = kb_search_rnd(s, k + 1), tmp = s->scratch[k];
        s->scratch[k] = s->scratch[r];
        s->scratch[r] = tmp;
    }
    *dist = best_d;
    return n;
}

int kb_search_find(const kb_search *s, const int *lv)
{
    const kb_tune_view *v = s->v;
    size_t h = (size_t)hash_levels(lv, v->n_axes) & (size_t)(s->n_slot - 1);
    while (s->slot[h]) {
        int i = s->slot[h] - 1;
        if (memcmp(&v->level[(size_t)i * (size_t)v->n_axes], lv, (size_t)v->n_axes * sizeof *lv) == 0)
            return i;
        h = (h + 1) & (size_t)(s->n_slot - 1);
    }
    return -1;
}

/* The squared distance of configuration i from pos (see kb_search_nearest). */
static double distance2(const kb_search *s, int i, const double *pos)
{
    double d = 0;
    for (int a = 0; a < s->v->n_axes; a++) {
        int l = kb_search_level(s, i, a);
        if (kb_search_categorical(s, a)) {
            d += l != (int)lround(pos[a]);
        } else {
            double span = s->n_levels[a] > 1 ? s->n_levels[a] - 1 : 1, x = (pos[a] - l) / span;
            d += x * x;
        }
    }
    return d;
}

int kb_search_nearest(kb_search *s, const double *pos, int fresh_only)
{
    int best = -1, ties = 0;
    double best_d = INFINITY;
    for (int j = 0; j < s->v->n; j++) {
        if (fresh_only && !isnan(s->memo[j]))
            continue;
        double d = distance2(s, j, pos);
        if (d < best_d - 1e-12) {
            best_d = d;
            best = j;
            ties = 1;
        } else if (d <= best_d + 1e-12 && kb_search_rnd(s, ++ties) == 0) {
            best = j;   /* reservoir: each of the tied equally likely */
        }
    }
    return best;
}

int kb_search_sampled_start(kb_search *s, int k)
{
    int best = kb_search_prior_best(s);
    if (best >= 0 && isnan(kb_search_eval(s, best)))
        return -1;
    for (int i = 0; i < k && !kb_search_done(s); i++) {
        int j = kb_search_fresh(s);
        if (j < 0)
            break;
        double t = kb_search_eval(s, j);
        if (best < 0 || t < s->memo[best])
            best = j;
    }
    return best;
}

/* The first neighbour of cur (at the nearest distance >= min_d, random order) faster than
 * t, or -1; *dist gets the distance searched. */
static int improve(kb_search *s, int cur, double t, int min_d, int *dist)
{
    int n = kb_search_neighbours(s, cur, min_d, dist), found = -1;
    int *nb = malloc((size_t)(n ? n : 1) * sizeof *nb);
    if (!nb)
        return -1;
    memcpy(nb, s->scratch, (size_t)n * sizeof *nb);
    for (int k = 0; k < n && !kb_search_done(s) && found < 0; k++)
        if (kb_search_eval(s, nb[k]) < t)
            found = nb[k];
    free(nb);
    return found;
}

int kb_search_climb(kb_search *s, int cur)
{
    double t = kb_search_eval(s, cur);
    while (!kb_search_done(s)) {
        int d, next = improve(s, cur, t, 1, &d);
        if (next < 0 && d > 0 && !kb_search_done(s))
            next = improve(s, cur, t, d + 1, &d);
        if (next < 0)
            break;
        cur = next;
        t = s->memo[cur];
    }
    return cur;
}
