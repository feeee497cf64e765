/* tune_run.c - the search of one problem (tune_run.h): each evaluation is a lookup in
 * the tuning database (same silicon, driver, toolchain and source: reused) or a case of
 * the session, recorded by its sinks as `kbench run` records it (and entered in the
 * database); then the choice. */
#include "cli/tune_run.h"

#include "tune/prior.h"
#include "tune/winner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    kb_tune_session *x;
    const kb_tune_problem *p;
    const char *source;
    kb_tune_entry *e;              /* [p->n], filled as evaluated */
    int evals;
    int best;
    double best_us;
    int before;                    /* the winner before a re-measurement, -1 when none was made */
    double t0_s;                   /* [s] when the search began (monotonic) */
    int out_of_time;               /* --time ran out: the search stopped, the choice is still made */
} problem_ctx;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double entry_time(const kb_tune_entry *e)
{
    return strcmp(e->status, "ok") == 0 && isfinite(e->median_us) ? e->median_us : INFINITY;
}

static void print_eval(problem_ctx *pc, int i, int reused)
{
    kb_tune_session *x = pc->x;
    const kb_tune_entry *e = &pc->e[i];
    if (x->o->run.quiet)
        return;
    int budget = x->o->budget > 0 && x->o->budget < pc->p->n ? x->o->budget : pc->p->n;
    printf("  [%3d/%d] %-44s ", pc->evals, budget, e->config);
    if (strcmp(e->status, "ok") == 0)
        printf("%10.2f %s_us", e->median_us, e->clock);
    else
        printf("%s: %.60s", e->status, e->reason);
    if (pc->best >= 0)
        printf("  best %.2f (%s)", pc->best_us, pc->p->configs[pc->best].config);
    printf("%s\n", reused ? "  [from the database]" : "");
    fflush(stdout);
}

/* The case of configuration i in the session's list (the space was built from it). */
static const kb_cases_item *item_of(const problem_ctx *pc, int i)
{
    return kb_cases_find(kb_session_cases(pc->x->s), pc->p->configs[i].case_index);
}

typedef struct {
    problem_ctx *pc;
    int i;
} eval_ctx;

/* A measured configuration: its entry (the sink entered the same one) and the counts. */
static void evaluated(void *user, const kb_case_result *r)
{
    eval_ctx *ev = user;
    kb_tune_session *x = ev->pc->x;
    kb_tune_entry *e = &ev->pc->e[ev->i];
    kb_tunedb_entry_of(item_of(ev->pc, ev->i), r, e);
    int skipped = strcmp(e->status, "skipped") == 0;
    x->evaluated++;
    x->pruned += skipped && strncmp(e->reason, "pruned: ", 8) == 0;
    x->skipped += skipped;
    x->failed += !skipped && strcmp(e->status, "ok") != 0;
}

/* Run configuration i as a case of the session into pc->e[i]. 0, or -1 to stop. */
static int measure(problem_ctx *pc, int i)
{
    eval_ctx ev = { pc, i };
    return kb_session_run_case(pc->x->s, item_of(pc, i), evaluated, &ev) == KB_SESSION_NEXT ? 0 : -1;
}

/* The strategy's objective: the configuration's median, INFINITY when it did not pass,
 * NAN to stop. */
static double objective(void *user, int i)
{
    problem_ctx *pc = user;
    kb_tune_session *x = pc->x;
    if (kb_interrupted())
        return NAN;
    /* the first configuration is always evaluated: a choice needs one, and the time before it
     * (the compile workers taking the problem's modules) is not the search's */
    if (x->o->time_s > 0 && pc->evals > 0 && now_s() - pc->t0_s > x->o->time_s) {
        pc->out_of_time = 1;
        return NAN;
    }
    /* a configuration measured before under the same key is reused; one pruned before is
     * measured again when pruning is off */
    int reused = kb_tunedb_lookup(x->db->db, &x->db->key, pc->source, pc->p->configs[i].id, &pc->e[i]) == 1 &&
                 !(x->o->no_prune && strncmp(pc->e[i].reason, "pruned: ", 8) == 0);
    if (reused)
        x->reused++;
    else if (measure(pc, i) < 0)
        return NAN;
    pc->evals++;
    double t = entry_time(&pc->e[i]);
    if (t < pc->best_us) {
        pc->best_us = t;
        pc->best = i;
    }
    print_eval(pc, i, reused);
    /* skipped (pruned before it ran, a vendor library without its GPU): refused before it
     * cost a measurement, so not an evaluation of the budget */
    return strcmp(pc->e[i].status, "skipped") == 0 ? KB_TUNE_REFUSED : t;
}

/* "config (median us)" of the tied runners-up, "; "-joined. */
static void tied_text(const problem_ctx *pc, const int *idx, const kb_tune_choice *ch, char *out, size_t n)
{
    size_t len = 0;
    out[0] = 0;
    for (int k = 0; k < ch->n_tied && k < KB_TUNE_MAX_TIED && len < n; k++) {
        const kb_tune_entry *e = &pc->e[idx[ch->tied[k]]];
        int w = snprintf(out + len, n - len, "%s%s (%.2f us)", k ? "; " : "", e->config, e->median_us);
        len += w > 0 ? (size_t)w : 0;
    }
}

static void print_choice(const problem_ctx *pc, const kb_tune_choice_row *c)
{
    const kb_tune_session *x = pc->x;
    const char *unit = x->db->key.emulator ? "cpu_us" : "us";
    if (c->noisy) {
        printf("  no winner: noise - the leader %s (%.2f %s) has a noise above %.3g%% (95%% interval [%.4g, %.4g]); "
               "measure again with more samples (--min-samples) or on a quieter machine\n", c->config, c->median_us,
               unit, 100 * (x->o->max_noise > 0 ? x->o->max_noise : KB_TUNE_NOISE_BOUND), c->lo_us, c->hi_us);
        return;
    }
    printf("  winner %s: %.2f %s, 95%% interval [%.4g, %.4g]; ", c->config, c->median_us, unit, c->lo_us, c->hi_us);
    if (c->tie) {
        const char *semi = strstr(c->tied, "; ");
        int first = semi ? (int)(semi - c->tied) : (int)strlen(c->tied);
        printf("a tie: %d other%s within its noise (next in the tie-break order: %.*s)\n", c->n_tied, c->n_tied == 1 ? "" : "s",
               first, c->tied);
    }
    else
        printf("clear: no other configuration within its noise\n");
    if (x->db->key.emulator)
        printf("  (emulator: CPU timings, not a GPU winner)\n");
}

/* The evaluated configurations as the winner rule sees them (calloc'ed, in trace order). */
static kb_tune_result *results_of(const problem_ctx *pc, const kb_tune_trace *t)
{
    kb_tune_result *r = calloc((size_t)(t->evaluations ? t->evaluations : 1), sizeof *r);
    for (int k = 0; r && k < t->evaluations; k++) {
        const kb_tune_entry *e = &pc->e[t->order[k]];
        r[k] = (kb_tune_result){ e->case_id, isfinite(entry_time(e)), e->median_us, e->noise, e->registers,
                                 e->shmem_bytes };
    }
    return r;
}

/* The samples of one re-measurement, pooled. */
typedef struct {
    const char *id;
    double **pool;
    int *n_pool, *failed;
} pool_ctx;

static void pool_samples(void *user, const kb_case_result *r)
{
    pool_ctx *p = user;
    int ok = r->status == KB_CASE_OK;
    double *np = ok ? realloc(*p->pool, (size_t)(*p->n_pool + r->measure.m.n) * sizeof *np) : NULL;
    if (ok && !np)
        fprintf(stderr, "kbench: out of memory pooling %d samples of %s: it is not trusted\n",
                *p->n_pool + r->measure.m.n, p->id);
    if (np) {
        memcpy(np + *p->n_pool, r->measure.m.samples_us, (size_t)r->measure.m.n * sizeof *np);
        *p->pool = np;
        *p->n_pool += r->measure.m.n;
    } else {
        *p->failed = !ok ? (int)r->status : (int)KB_CASE_LAUNCH_ERROR;  /* failing once: not trusted */
    }
}

/* One more measurement of configuration i, recorded (not entered: the pool is, after),
 * its samples appended to pool. 0, -1 to stop. */
static int remeasure(problem_ctx *pc, int i, double **pool, int *n_pool, int *failed)
{
    kb_tune_session *x = pc->x;
    pool_ctx p = { pc->p->configs[i].id, pool, n_pool, failed };
    x->db->hold = 1;
    kb_session_step step = kb_session_run_case(x->s, item_of(pc, i), pool_samples, &p);
    x->db->hold = 0;
    x->remeasured += step != KB_SESSION_STOP_INTERRUPTED;
    return step == KB_SESSION_NEXT ? 0 : -1;
}

/* The pooled samples of a re-measured configuration into its entry (and the database). */
static void pool_into(problem_ctx *pc, int i, const double *pool, int n, int failed)
{
    kb_tunedb_sink_pool(pc->x->db, pc->source, &pc->e[i], pool, n, failed);
}

/* A tie is re-measured before the choice: the leader and the configurations within its
 * noise, round-robin for --rounds rounds (interleaved, so a drift in clocks or load hits
 * them alike), each configuration's samples pooled over the rounds. 0, -1 to stop. */
static int break_tie(problem_ctx *pc, const kb_tune_trace *t)
{
    int confirm = pc->x->o->confirm, set[KB_TUNE_MAX_TIED + 1], n_set = 0, rc = 0;
    int rounds = confirm && pc->x->o->rounds < 1 ? 1 : pc->x->o->rounds;
    kb_tune_result *r = results_of(pc, t);
    kb_tune_choice ch;
    if (!r || rounds <= 0 || kb_tune_choose(r, t->evaluations, pc->x->o->max_noise, &ch) < 0 || !(ch.tie || ch.noisy || confirm)) {
        free(r);
        return 0;
    }
    pc->before = t->order[ch.winner];
    set[n_set++] = t->order[ch.winner];
    for (int k = 0; k < ch.n_tied && k < KB_TUNE_MAX_TIED; k++)
        set[n_set++] = t->order[ch.tied[k]];
    free(r);
    double *pool[KB_TUNE_MAX_TIED + 1] = { 0 };
    int n_pool[KB_TUNE_MAX_TIED + 1] = { 0 }, failed[KB_TUNE_MAX_TIED + 1] = { 0 };
    if (!pc->x->o->run.quiet)
        printf("  %s of %d: re-measuring them interleaved, %d round%s\n", ch.tie ? "a tie" : "confirming the winner",
               n_set, rounds, rounds == 1 ? "" : "s");
    for (int round = 0; round < rounds && rc == 0; round++)
        for (int k = 0; k < n_set && rc == 0; k++)
            rc = remeasure(pc, set[k], &pool[k], &n_pool[k], &failed[k]);
    for (int k = 0; k < n_set; k++) {
        if (rc == 0)
            pool_into(pc, set[k], pool[k], n_pool[k], failed[k]);
        free(pool[k]);
    }
    return rc;
}

/* Choose among the evaluated configurations and store the choice. */
static void choose(problem_ctx *pc, const kb_tune_trace *t, const kb_tune_search_opts *so)
{
    kb_tune_session *x = pc->x;
    kb_tune_result *r = results_of(pc, t);
    if (!r) {
        x->unchosen++;
        fprintf(stderr, "kbench: out of memory choosing among %d configurations of %s: no winner\n",
                t->evaluations, pc->p->key);
        return;
    }
    kb_tune_choice ch;
    if (kb_tune_choose(r, t->evaluations, pc->x->o->max_noise, &ch) < 0) {
        x->unchosen++;
        printf("  no configuration passed: no winner\n");
        free(r);
        return;
    }
    const kb_tune_entry *w = &pc->e[t->order[ch.winner]];
    kb_tune_choice_row *c = calloc(1, sizeof *c);
    if (!c)
        fprintf(stderr, "kbench: out of memory storing the choice of %s (%s): not in the tuning database\n",
                pc->p->key, w->config);
    if (c) {
        snprintf(c->problem, sizeof c->problem, "%s", pc->p->key);
        snprintf(c->family, sizeof c->family, "%s", w->family);
        snprintf(c->case_id, sizeof c->case_id, "%s", w->case_id);
        snprintf(c->config, sizeof c->config, "%s", w->config);
        kb_tune_choice_from_entry(w, c);   /* the typed problem and configuration */
        c->median_us = w->median_us;
        c->lo_us = ch.lo_us;
        c->hi_us = ch.hi_us;
        c->tie = ch.tie;
        c->noisy = ch.noisy;
        c->n_tied = ch.n_tied;
        tied_text(pc, t->order, &ch, c->tied, sizeof c->tied);
        snprintf(c->strategy, sizeof c->strategy, "%s", kb_tune_strategy_name(so->strategy));
        c->evaluations = t->evaluations;
        c->space = pc->p->n;
        kb_sb err;
        kb_sb_init(&err);
        if (kb_tunedb_put_choice(x->db->db, &x->db->key, pc->source, c, &err) != KB_OK) {
            fprintf(stderr, "kbench: tuning database: %s\n", err.s);
            x->db->failed++;   /* the run exits 3: the choice is printed, not saved */
        }
        kb_sb_free(&err);
        print_choice(pc, c);
        int now = t->order[ch.winner];
        if (pc->before >= 0 && pc->before != now)
            printf("  the re-measurement changed the winner: %s before\n", pc->p->configs[pc->before].config);
        else if (pc->before >= 0)
            printf("  the re-measurement confirmed the winner\n");
    }
    x->chosen += !ch.noisy;
    x->unchosen += ch.noisy;   /* no winner: the exit code says so */
    x->ties += ch.tie && !ch.noisy;
    free(c);
    free(r);
}

/* --prior estimate: the static estimate of each configuration of p (tune/prior.h), or
 * NULL (said why) when there is none. */
static double *problem_prior(kb_tune_session *x, const kb_tune_problem *p)
{
    kb_sb why;
    kb_sb_init(&why);
    double *est = kb_tune_prior_of_problem(x->s, p, &why);
    if (!est)
        fprintf(stderr, "kbench: --prior estimate: %s: %s; searching without it\n", p->key, why.s);
    kb_sb_free(&why);
    return est;
}

int kb_tune_session_problem(kb_tune_session *x, const kb_tune_problem *p)
{
    const kb_family *f = kb_session_plan_of(x->s)->fams[p->family];
    problem_ctx pc = { x, p, kb_tunedb_sink_source(x->db, p->family, f), calloc((size_t)p->n, sizeof(kb_tune_entry)),
                       0, -1, INFINITY, -1, now_s(), 0 };
    if (!pc.e)
        return -1;
    if (!x->o->run.quiet)
        printf("%s: %d configurations\n", p->key, p->n);
    if (x->o->budget <= 0 || x->o->budget >= p->n)   /* every configuration will be compiled: ahead */
        for (int i = 0; i < p->n; i++)
            kb_session_prefetch(x->s, item_of(&pc, i));
    kb_tune_search_opts so = { .strategy = x->strategy, .budget = x->o->budget, .seed = (uint64_t)x->o->seed };
    double *prior = strcmp(x->o->prior, "estimate") == 0 ? problem_prior(x, p) : NULL;
    kb_tune_view v = { .n = p->n, .n_axes = p->n_axes, .level = p->levels, .categorical = p->categorical,
                       .prior = prior };
    kb_tune_trace t;
    int rc = -1;
    if (kb_tune_search(&so, &v, objective, &pc, &t) == KB_OK) {
        if (pc.out_of_time && !x->o->run.quiet)
            printf("  --time %.0f s spent: choosing among the %d evaluated\n", x->o->time_s, t.evaluations);
        rc = t.stopped && !pc.out_of_time ? -1 : break_tie(&pc, &t);
        if (rc == 0)
            choose(&pc, &t, &so);
        kb_tune_trace_free(&t);
    }
    free(prior);
    free(pc.e);
    return rc;
}
