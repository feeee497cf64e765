/* bayes.c - Bayesian optimisation with a Gaussian process over the level grid (bayes.h). */
#include "tune/bayes.h"

#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

#define TRAIN_MAX 128    /* training points at most */
#define TRAIN_BEST 80    /* ... of which the fastest */
#define CAND_MAX 512     /* candidates scored per step */
#define BATCH_MAX 8      /* configurations chosen per fit at most */
#define BATCH_EVERY 100  /* one more per fit for every 100 evaluations */
#define REFIT_EVERY 5    /* steps between hyperparameter fits */
#define XI 0.01          /* expected improvement's margin [standard deviations] */

static const double noise_grid[] = { 1e-4, 1e-2, 0.1 };
#define ELL_MIN 0.05     /* length scales [the axis' range] */
#define ELL_MAX 50.0

typedef struct {
    kb_search *s;
    int na;
    double *feat;                  /* [n * na] ordinal: level / (levels - 1); categorical: level */
    double *prior;                 /* [n] standardised log prior, NULL without one */
    int m, train[TRAIN_MAX];       /* training configurations */
    double y[TRAIN_MAX];           /* their residuals: standardised log time - mean function */
    double b0, b1;                 /* mean function b0 + b1 prior */
    double inv_ell2[KB_TUNE_SEARCH_MAX_AXES]; /* per axis 1 / length scale^2 (automatic relevance) */
    double noise;
    int fitted;
    double *L;                     /* [TRAIN_MAX^2] Cholesky factor of K + noise I (column major) */
    double alpha[TRAIN_MAX];       /* (K + noise I)^-1 y */
    int *cand, n_cand;             /* [CAND_MAX] */
    double *ks;                    /* [TRAIN_MAX * CAND_MAX] kernel between training points and candidates */
    unsigned char *mark;           /* [n] candidate already listed */
} gp;

/* The squared distance of configurations i and j, each axis in its own length scale. */
static double dist2(const gp *g, int i, int j)
{
    const double *a = &g->feat[(size_t)i * (size_t)g->na], *b = &g->feat[(size_t)j * (size_t)g->na];
    double d = 0;
    for (int k = 0; k < g->na; k++) {
        if (kb_search_categorical(g->s, k))
            d += (a[k] != b[k]) * g->inv_ell2[k];
        else
            d += (a[k] - b[k]) * (a[k] - b[k]) * g->inv_ell2[k];
    }
    return d;
}

/* Matern 5/2 of the distance between configurations i and j. */
static double kernel(const gp *g, int i, int j)
{
    double r = sqrt(5.0 * dist2(g, i, j));
    return (1.0 + r + r * r / 3.0) * exp(-r);
}

/* Features, and the prior standardised in log space. 0, -1 out of memory. */
static int gp_init(gp *g, kb_search *s)
{
    memset(g, 0, sizeof *g);
    g->s = s;
    g->na = s->v->n_axes;
    size_t n = (size_t)s->v->n;
    g->feat = malloc((n * (size_t)g->na + 1) * sizeof *g->feat);
    g->L = malloc(TRAIN_MAX * TRAIN_MAX * sizeof *g->L);
    g->cand = malloc(CAND_MAX * sizeof *g->cand);
    g->ks = malloc((size_t)TRAIN_MAX * CAND_MAX * sizeof *g->ks);
    g->mark = calloc(n + 1, 1);
    if (!g->feat || !g->L || !g->cand || !g->ks || !g->mark)
        return -1;
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < g->na; a++) {
            int l = kb_search_level(s, (int)i, a), nl = s->n_levels[a];
            g->feat[i * (size_t)g->na + (size_t)a] = kb_search_categorical(s, a) ? l : nl > 1 ? (double)l / (nl - 1) : 0;
        }
    if (!s->v->prior)
        return 0;
    if (!(g->prior = malloc(n * sizeof *g->prior)))
        return -1;
    double sum = 0, sq = 0, worst = -INFINITY;
    int k = 0;
    for (size_t i = 0; i < n; i++)
        if (isfinite(s->v->prior[i]) && s->v->prior[i] > 0) {
            double l = log(s->v->prior[i]);
            sum += l;
            sq += l * l;
            worst = l > worst ? l : worst;
            k++;
        }
    double mean = k ? sum / k : 0, sd = k > 1 ? sqrt(fmax(sq / k - mean * mean, 1e-12)) : 1;
    for (size_t i = 0; i < n; i++) {   /* no estimate: as the worst estimated */
        double p = s->v->prior[i];
        g->prior[i] = ((isfinite(p) && p > 0 ? log(p) : worst) - mean) / sd;
    }
    if (k == 0) {
        free(g->prior);
        g->prior = NULL;
    }
    return 0;
}

static void gp_free(gp *g)
{
    free(g->feat);
    free(g->prior);
    free(g->L);
    free(g->cand);
    free(g->ks);
    free(g->mark);
}

/* The training set: every evaluation up to TRAIN_MAX, else the TRAIN_BEST fastest and
 * the latest others. Returns the number of finite times among them. */
static int pick_training(gp *g)
{
    const kb_tune_trace *t = g->s->t;
    g->m = 0;
    if (t->evaluations <= TRAIN_MAX) {
        for (int k = 0; k < t->evaluations; k++)
            g->train[g->m++] = t->order[k];
    } else {
        int idx[TRAIN_BEST], nb = 0;   /* the fastest, by insertion into a sorted list */
        for (int k = 0; k < t->evaluations; k++) {
            int j;
            if (nb < TRAIN_BEST)
                j = nb++;
            else if (t->times[k] >= t->times[idx[TRAIN_BEST - 1]])
                continue;
            else
                j = TRAIN_BEST - 1;
            while (j > 0 && t->times[k] < t->times[idx[j - 1]]) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = k;
        }
        unsigned char *in = g->mark;   /* borrowed, cleared again below */
        for (int j = 0; j < nb; j++) {
            g->train[g->m++] = t->order[idx[j]];
            in[t->order[idx[j]]] = 1;
        }
        for (int k = t->evaluations - 1; k >= 0 && g->m < TRAIN_MAX; k--)
            if (!in[t->order[k]])
                g->train[g->m++] = t->order[k];
        for (int j = 0; j < nb; j++)
            in[t->order[idx[j]]] = 0;
    }
    int finite = 0;
    for (int k = 0; k < g->m; k++)
        finite += isfinite(g->s->memo[g->train[k]]);
    return finite;
}

/* The targets: log time (failed: log 1.5x the slowest), standardised, minus the mean
 * function fitted to them (with a prior). Returns the smallest standardised log time. */
static double targets(gp *g)
{
    double worst = -INFINITY, sum = 0, sq = 0;
    for (int k = 0; k < g->m; k++) {
        double t = g->s->memo[g->train[k]];
        if (isfinite(t) && t > 0 && log(t) > worst)
            worst = log(t);
    }
    for (int k = 0; k < g->m; k++) {
        double t = g->s->memo[g->train[k]];
        g->y[k] = isfinite(t) && t > 0 ? log(t) : worst + log(1.5);
        sum += g->y[k];
        sq += g->y[k] * g->y[k];
    }
    double mean = sum / g->m, sd = sqrt(fmax(sq / g->m - mean * mean, 1e-12)), best = INFINITY;
    for (int k = 0; k < g->m; k++) {
        g->y[k] = (g->y[k] - mean) / sd;
        best = g->y[k] < best ? g->y[k] : best;
    }
    g->b0 = g->b1 = 0;
    if (g->prior && g->m >= 3) {   /* least squares of y on the prior */
        double sp = 0, spp = 0, spy = 0, sy = 0;
        for (int k = 0; k < g->m; k++) {
            double p = g->prior[g->train[k]];
            sp += p;
            spp += p * p;
            spy += p * g->y[k];
            sy += g->y[k];
        }
        double var = spp / g->m - (sp / g->m) * (sp / g->m);
        g->b1 = var > 1e-9 ? (spy / g->m - (sp / g->m) * (sy / g->m)) / var : 0;
        g->b1 = g->b1 > 0 ? g->b1 : 0;
        g->b0 = sy / g->m - g->b1 * sp / g->m;
    }
    for (int k = 0; k < g->m; k++)
        g->y[k] -= g->b0 + g->b1 * (g->prior ? g->prior[g->train[k]] : 0);
    return best;
}

/* Factor K + noise I (the current length scales) into g->L and solve for alpha. Returns
 * the log marginal likelihood, -INFINITY when the matrix is not positive definite. */
static double factor(gp *g, double noise)
{
    int m = g->m;
    for (int j = 0; j < m; j++)
        for (int i = j; i < m; i++)
            g->L[(size_t)j * m + i] = kernel(g, g->train[i], g->train[j]) + (i == j ? noise : 0);
    if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', m, g->L, m) != 0)
        return -INFINITY;
    memcpy(g->alpha, g->y, (size_t)m * sizeof *g->alpha);
    if (LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', m, 1, g->L, m, g->alpha, m) != 0)
        return -INFINITY;
    double lml = 0;
    for (int i = 0; i < m; i++)
        lml += -0.5 * g->y[i] * g->alpha[i] - log(g->L[(size_t)i * m + i]);
    return lml;
}

/* One sweep of automatic relevance determination: each axis' length scale halved or
 * doubled when the marginal likelihood gains, then the noise from its grid. Returns the
 * best log marginal likelihood (-INFINITY when nothing factors). */
static double sweep(gp *g, double best)
{
    for (int a = 0; a < g->na; a++) {
        if (g->s->n_levels[a] < 2)
            continue;
        double keep = g->inv_ell2[a];
        for (int d = 0; d < 2; d++) {
            double try = keep * (d ? 0.25 : 4.0);   /* length scale x2 or /2 */
            if (try > 1.0 / (ELL_MIN * ELL_MIN) || try < 1.0 / (ELL_MAX * ELL_MAX))
                continue;
            g->inv_ell2[a] = try;
            double l = factor(g, g->noise);
            if (l > best + 1e-9) {
                best = l;
                keep = try;
            }
        }
        g->inv_ell2[a] = keep;
    }
    for (size_t b = 0; b < sizeof noise_grid / sizeof noise_grid[0]; b++) {
        double l = factor(g, noise_grid[b]);
        if (l > best + 1e-9) {
            best = l;
            g->noise = noise_grid[b];
        }
    }
    return best;
}

/* Fit the hyperparameters by the marginal likelihood when choose (two sweeps the first
 * time, from length scale 0.5 of every axis' range) and leave the factor in g. 0, or -1
 * when the model is not usable this step. */
static int fit(gp *g, int choose)
{
    if (!g->fitted) {
        for (int a = 0; a < g->na; a++)
            g->inv_ell2[a] = 4.0;
        g->noise = 1e-2;
    }
    if (choose || !g->fitted) {
        double best = factor(g, g->noise);
        for (int k = 0; k < (g->fitted ? 1 : 2); k++)
            best = sweep(g, best);
        g->fitted = 1;
    }
    for (double jitter = 0; jitter <= 1.0; jitter = jitter ? jitter * 10 : 1e-6)
        if (isfinite(factor(g, g->noise + jitter)))
            return 0;
    return -1;
}

static void add_candidate(gp *g, int j)
{
    if (g->n_cand < CAND_MAX && isnan(g->s->memo[j]) && !g->mark[j]) {
        g->mark[j] = 1;
        g->cand[g->n_cand++] = j;
    }
}

/* The candidates: every unevaluated configuration when they are few, else the
 * neighbours of the three fastest and random ones. */
static void candidates(gp *g)
{
    kb_search *s = g->s;
    int left = s->v->n - s->visited;
    g->n_cand = 0;
    if (left <= CAND_MAX) {
        for (int j = 0; j < s->v->n; j++)
            add_candidate(g, j);
    } else {
        const kb_tune_trace *t = s->t;
        int top[3] = { -1, -1, -1 }, nt = 3;
        for (int k = 0; k < t->evaluations; k++)
            for (int r = 0; r < nt; r++)
                if (isfinite(t->times[k]) && (top[r] < 0 || t->times[k] < s->memo[top[r]])) {
                    for (int q = nt - 1; q > r; q--)
                        top[q] = top[q - 1];
                    top[r] = t->order[k];
                    break;
                }
        for (int r = 0; r < nt && top[r] >= 0; r++) {
            int d, n = kb_search_neighbours(s, top[r], 1, &d);
            for (int k = 0; k < n && g->n_cand < CAND_MAX / 2; k++)
                add_candidate(g, s->scratch[k]);
        }
        for (int tries = 0; g->n_cand < CAND_MAX && tries < 4 * CAND_MAX; tries++)
            add_candidate(g, kb_search_rnd(s, s->v->n));
    }
    for (int k = 0; k < g->n_cand; k++)
        g->mark[g->cand[k]] = 0;
}

/* The batch (want <= BATCH_MAX) of candidates of the largest expected improvement
 * below best into pick[], best first. Returns how many. */
static int acquire(gp *g, double best, int want, int *pick)
{
    int m = g->m, c = g->n_cand, n = 0;
    double ei_of[BATCH_MAX];
    for (int k = 0; k < c; k++)
        for (int i = 0; i < m; i++)
            g->ks[(size_t)k * m + i] = kernel(g, g->train[i], g->cand[k]);
    double *v = malloc((size_t)m * (c ? c : 1) * sizeof *v);
    if (v)
        memcpy(v, g->ks, (size_t)m * c * sizeof *v);
    if (!v || c == 0 || LAPACKE_dtrtrs(LAPACK_COL_MAJOR, 'L', 'N', 'N', m, c, g->L, m, v, m) != 0) {
        free(v);
        return 0;
    }
    for (int k = 0; k < c; k++) {
        double mu = g->b0 + g->b1 * (g->prior ? g->prior[g->cand[k]] : 0), var = 1.0;
        for (int i = 0; i < m; i++) {
            mu += g->ks[(size_t)k * m + i] * g->alpha[i];
            var -= v[(size_t)k * m + i] * v[(size_t)k * m + i];
        }
        double sd = sqrt(var > 1e-12 ? var : 1e-12), z = (best - mu - XI) / sd;
        double ei = (best - mu - XI) * 0.5 * erfc(-z / sqrt(2.0)) + sd * exp(-0.5 * z * z) / sqrt(2.0 * M_PI);
        int j;   /* insert into the sorted batch */
        if (n < want)
            j = n++;
        else if (ei <= ei_of[want - 1])
            continue;
        else
            j = want - 1;
        while (j > 0 && ei > ei_of[j - 1]) {
            ei_of[j] = ei_of[j - 1];
            pick[j] = pick[j - 1];
            j--;
        }
        ei_of[j] = ei;
        pick[j] = g->cand[k];
    }
    free(v);
    return n;
}

/* The initial design: the prior's best, then a Latin hypercube of the level grid
 * (kb_search_lhs), each point the nearest unevaluated configuration - one more point than
 * the axes that vary (the fewest a model of them can stand on), 5 to 10, and at most half
 * the budget, but never fewer than 5 points (a budget of 5 or less is all design).
 * Measured on the landscapes: 20 left the model too few evaluations at 1% of a space; 5 on
 * a skewed 11-axis space let the model's first picks do worse than random. The floor of 5:
 * runs of 5 to 9 evaluations on the emulator's GEMM landscapes (each budget a run of its
 * own, 100 seeds) did better with 5 points of design than with half the budget (2 to 4
 * points and a model of them: on prefill nn at 5 evaluations a median 3.41x the optimum,
 * random sampling's exact median 3.38x, against 1.76x), and a design of the whole budget
 * did worse from 8 evaluations up (decode nt at 11: 1.51x against 1.18x with 5): once the
 * model has 5 points its picks are worth more than more stratified points.
 * Until the model takes over, bayes is a sampler: random draws can repeat one level of an
 * axis that decides the time (a tile size, a variant) and miss another, where a Latin
 * hypercube gives every level its share of the design (McKay, Beckman and Conover 1979).
 * The share is the level's share of the grid, not of the space: a variant with fewer
 * tile params has fewer configurations, no smaller a chance to hold the optimum (the
 * emulator's prefill GEMM: the smem variant is 32 of 485 configurations and the fastest).
 * Kernel Tuner's Bayesian optimisation (after Willemsen et al. 2021) starts from a Latin
 * hypercube of the parameter grid too; it skips a point outside the restricted space and
 * draws at random instead, where here the nearest configuration is taken. */
static void initial(kb_search *s)
{
    int k = 1, j = kb_search_prior_best(s);
    double pos[10 * KB_TUNE_SEARCH_MAX_AXES];
    for (int a = 0; a < s->v->n_axes; a++)
        k += s->n_levels[a] > 1;
    k = k < 5 ? 5 : k > 10 ? 10 : k;
    int budget = kb_search_expected_evals(s), least = budget < 5 ? budget : 5;
    if (k > budget / 2)
        k = budget / 2 > least ? budget / 2 : least;
    int prior = j >= 0;   /* the prior's best takes one slot: the hypercube has the other k - 1 */
    int lhs = kb_search_lhs(s, k - prior, pos) == 0;
    for (int i = 0; s->t->evaluations < k && !kb_search_done(s); i++) {
        int d = i - prior;   /* the design point of iteration i */
        if (j < 0)   /* the design's points, then (refused ones) random draws */
            j = lhs && d >= 0 && d < k - prior ? kb_search_nearest(s, &pos[(size_t)d * (size_t)s->v->n_axes], 1)
                                               : kb_search_fresh(s);
        if (j < 0)
            break;
        kb_search_eval(s, j);
        j = -1;
    }
}

kb_status kb_search_bayes(kb_search *s)
{
    gp g;
    if (gp_init(&g, s) != 0) {
        gp_free(&g);
        return KB_ERR_INTERNAL;
    }
    initial(s);
    for (int step = 0; !kb_search_done(s); step++) {
        int pick[BATCH_MAX], n = 0, want = 1 + s->t->evaluations / BATCH_EVERY;
        want = want > BATCH_MAX ? BATCH_MAX : want;
        if (pick_training(&g) >= 2) {
            double best = targets(&g);
            if (fit(&g, step % REFIT_EVERY == 0) == 0) {
                candidates(&g);
                n = acquire(&g, best, want, pick);
            }
        }
        if (n == 0 && (pick[0] = kb_search_fresh(s)) >= 0)
            n = 1;   /* too few successes to model yet */
        if (n == 0)
            break;
        for (int k = 0; k < n; k++)
            if (isnan(kb_search_eval(s, pick[k])))
                n = -1;
        if (n < 0)
            break;
    }
    gp_free(&g);
    return KB_OK;
}
