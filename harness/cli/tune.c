/* tune.c - `kbench tune SUITE`: a session (session/session.h) planned and walked once,
 * the tuning space built from its case list (tune/space.h), then the search problem by
 * problem (cli/tune_run.c); every evaluation is a case of the session whose sinks write
 * the ordinary record (JSON Lines + the results store) and the tuning database's entry. */
#include "cli/tune.h"

#include "cli/tune_replay.h"
#include "cli/tune_run.h"
#include "core/output.h"
#include "results/store.h"
#include "tune/winner.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Open the session, plan the suite and walk it once. An exit code, or -1 to go on. */
static int open_session(kb_tune_session *x)
{
    const kb_run_opts *o = &x->o->run;
    kb_session_opts so;
    if (kb_run_session_opts(o, &so) != 0)
        return KB_EXIT_INPUT;
    so.prune = !x->o->no_prune;
    int rc = kb_run_open_session(&so, &x->s);
    if (rc >= 0)
        return rc;
    kb_status st;
    kb_sb msg;
    kb_sb_init(&msg);
    if ((st = kb_session_check_setup(x->s, &msg)) == KB_OK)
        st = kb_session_plan(x->s, &msg);
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", msg.s);
    kb_sb_free(&msg);
    if (st != KB_OK)
        return st == KB_ERR_SETUP || st == KB_ERR_IO ? KB_EXIT_SETUP : KB_EXIT_INPUT;
    const kb_plan *plan = kb_session_plan_of(x->s);
    for (int i = 0; i < plan->n_warnings; i++)
        fprintf(stderr, "kbench: warning: %s\n", plan->warnings[i]);
    return -1;
}

/* The space of the selected cases; a filter that selects nothing is exit 2. */
static int build_space(kb_tune_session *x)
{
    const kb_run_opts *o = &x->o->run;
    if (kb_session_select(x->s, o->filters, o->n_filters) != KB_OK ||
        kb_tune_space_of_cases(kb_session_plan_of(x->s), kb_session_cases(x->s), &x->space) != KB_OK) {
        fprintf(stderr, "kbench: out of memory\n");
        return KB_EXIT_SETUP;
    }
    if (x->space.n == 0) {
        kb_sb f;
        kb_sb_init(&f);
        kb_run_filters_text(o, &f);
        fprintf(stderr, "kbench: tune: no valid configuration to tune in %s%s%s%s\n", o->suite_path,
                o->n_filters ? " with " : "", f.s, x->space.invalid ? "; the first refused: " : "");
        kb_sb_free(&f);
        if (x->space.invalid)
            fprintf(stderr, "kbench:   %s\n", x->space.first_invalid);
        return KB_EXIT_INPUT;
    }
    return -1;
}

/* Records (results/tune-<suite>-<time>-<pid>.jsonl unless --out), the store beside them,
 * the tuning database: the session's sinks. An exit code, or -1 to go on. */
static int open_outputs(kb_tune_session *x)
{
    const kb_tune_opts *o = x->o;
    char ts[20], run_id[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(run_id, sizeof run_id, "tune-%.24s-%s-%d", kb_session_plan_of(x->s)->suite_name, ts, (int)getpid());
    for (char *p = run_id; *p; p++)
        if (*p == '/' || *p == ' ')
            *p = '_';
    kb_session_set_run_id(x->s, run_id);
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = KB_OK;
    if (o->run.out_path)
        kb_sb_printf(&x->out_path, "%s", o->run.out_path);
    else if ((st = kb_out_dir_make("results", &err)) == KB_OK)   /* kbench's own default place */
        kb_sb_printf(&x->out_path, "results/%s.jsonl", run_id);
    /* the tuning database first: one kbench may not write is refused before the records
     * file is made (the session calls the records sink first whatever the order added) */
    if (st == KB_OK)
        st = kb_tunedb_sink_open(x->s, o->db_path ? o->db_path : KB_TUNEDB_DEFAULT_PATH, &x->db, &err);
    if (st == KB_OK && kb_session_add_sink(x->s, kb_tunedb_sink_of(x->db)) != KB_OK) {
        x->db = NULL;   /* freed by the failed add */
        kb_sb_printf(&err, "out of memory");
        st = KB_ERR_OOM;
    }
    if (st == KB_OK)
        st = kb_session_records(x->s, x->out_path.s, NULL, &err);
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", err.s);
    kb_sb_free(&err);
    if (st != KB_OK)
        return st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
    kb_session_store(x->s, kb_store_default_path(), x->out_path.s);
    return -1;
}

static int search_all(kb_tune_session *x)
{
    int64_t configs = 0;
    for (int i = 0; i < x->space.n; i++)
        configs += x->space.problems[i].n;
    const kb_device_info *d = kb_session_device(x->s);
    fprintf(stderr, "kbench: tune %s: %d problems, %lld configurations (%lld refused by valid()) on %s (%s, sm_%d); "
            "strategy %s, budget %d%s, seed %d\n", kb_session_plan_of(x->s)->suite_name, x->space.n,
            (long long)configs, (long long)x->space.invalid, kb_session_backend_name(x->s), d->name, d->sm,
            kb_tune_strategy_name(x->strategy), x->o->budget, x->o->budget > 0 ? " per problem" : " (all)",
            x->o->seed);
    if (x->db->key.emulator)
        fprintf(stderr, "kbench: emulator timings are CPU time: the database marks them so, and export refuses "
                "them without --allow-cpu\n");
    kb_session_begin(x->s);
    int rc = 0;
    for (int i = 0; i < x->space.n && rc == 0; i++)
        rc = kb_tune_session_problem(x, &x->space.problems[i]);
    kb_session_end(x->s);
    return rc;
}

static int summary(kb_tune_session *x)
{
    const char *db = x->o->db_path ? x->o->db_path : KB_TUNEDB_DEFAULT_PATH;
    fprintf(stderr, "kbench: tune: %d measured, %d from the database, %d pruned, %d skipped, %d failed, %d "
            "re-measured to break ties; %d problems chosen (%d ties), %d without a winner; records in %s, choices "
            "in %s\n", x->evaluated, x->reused, x->pruned, x->skipped - x->pruned, x->failed, x->remeasured,
            x->chosen, x->ties, x->unchosen, x->out_path.s, db);
    if (kb_interrupted()) {
        fprintf(stderr, "kbench: interrupted; every finished configuration is recorded and in %s: the same command "
                "reuses them\n", db);
        return KB_EXIT_INTERRUPTED;
    }
    if (x->db->failed)
        fprintf(stderr, "kbench: %d writes to %s failed (above): every measurement is in %s; the same command "
                "measures what the database lacks\n", x->db->failed, db, x->out_path.s);
    if (kb_session_tally_of(x->s)->record_failed || x->db->failed)
        return KB_EXIT_SETUP;
    return x->failed || x->unchosen ? KB_EXIT_WRONG : KB_EXIT_OK;
}

int kb_cmd_tune(const kb_tune_opts *o)
{
    if (o->n_replay)
        return kb_tune_replay_main(&kb_command_tune, o);
    if (!o->run.suite_path)
        return kb_opts_fail(&kb_command_tune, "SUITE", "a suite to tune (or --replay FILE)");
    if (o->pos[1])
        return kb_opts_fail(&kb_command_tune, "SUITE", "one suite at a time ('%s' is a second one)", o->pos[1]);
    if (strcmp(o->strategy, "all") == 0)
        return kb_opts_fail(&kb_command_tune, "--strategy", "'all' compares strategies on a --replay FILE only");
    if (o->budgets)
        return kb_opts_fail(&kb_command_tune, "--budgets", "compares strategies on a --replay FILE only");
    kb_tune_session *x = calloc(1, sizeof *x);
    if (!x)
        return KB_EXIT_SETUP;
    x->o = o;
    kb_sb_init(&x->out_path);
    kb_tune_strategy_parse(o->strategy, &x->strategy);   /* a choice row: always known */
    int rc = open_session(x);
    if (rc < 0)
        rc = build_space(x);
    if (rc < 0)
        rc = open_outputs(x);
    if (rc < 0) {
        kb_session_start(x->s);
        search_all(x);
        rc = summary(x);
    }
    kb_session_close(x->s);   /* the tuning database with it */
    kb_tune_space_free(&x->space);
    kb_sb_free(&x->out_path);
    free(x);
    return rc;
}

/* ---- the command line ---- */

static void tune_defaults(void *p)
{
    kb_tune_opts *o = p;
    kb_run_opts_defaults(&o->run);
    o->strategy = KB_TUNE_DEFAULT_STRATEGY;
    o->prior = "none";
    o->budget_unit = "evaluations";
    o->seed = 1;
    o->repeats = 10;
    o->rounds = 2;
    o->max_noise = KB_TUNE_NOISE_BOUND;
    o->format = "text";
}

static const char *const strategy_choices[] = { "brute",      "random", "ils", "anneal", "genetic", "diffevo",
                                                "dualanneal", "bayes",  "all", NULL };
_Static_assert(sizeof strategy_choices / sizeof strategy_choices[0] == KB_TUNE_STRATEGY_COUNT + 2,
               "every strategy is a choice, and all");
static const char *const replay_formats[] = { "text", "json", "svg", "html", NULL };
static const char *const prior_choices[] = { "none", "estimate", NULL };
static const char *const budget_units[] = { "evaluations", "time", NULL };

static const kb_opt tune_opts[] = {
    KB_ROW_BACKEND,
    KB_ROW_ARCH,
    KB_ROW_DEVICE,
    KB_ROW_FILTER,
    { "--strategy", NULL, KB_OPT_CHOICE, offsetof(kb_tune_opts, strategy), "NAME|all",
      "brute, random, ils, anneal, genetic, diffevo, dualanneal, bayes (default " KB_TUNE_DEFAULT_STRATEGY
      "; docs/tuning.md); all: compare them (--replay)", 0, 0, 0, strategy_choices, 0 },
    { "--prior", NULL, KB_OPT_CHOICE, offsetof(kb_tune_opts, prior), "none|estimate",
      "estimate: rank configurations by kbench's static estimate before measuring (start there; bayes' mean)", 0, 0,
      0, prior_choices, 0 },
    { "--budget", NULL, KB_OPT_INT, offsetof(kb_tune_opts, budget), "N",
      "configurations evaluated per problem at most (default: all)", 1, 1000000, 0, NULL, 0 },
    { "--time", NULL, KB_OPT_DOUBLE, offsetof(kb_tune_opts, time_s), "S",
      "search each problem for at most S seconds, then choose among what was evaluated", 0, 1e7, 1, NULL, 0 },
    { "--budget-time", NULL, KB_OPT_DOUBLE, offsetof(kb_tune_opts, budget_time_s), "S",
      "a budget of S seconds: simulated from the file's compile and benchmark times (--replay), else the real "
      "clock (as --time)", 0, 1e9, 1, NULL, 0 },
    { "--seed", NULL, KB_OPT_INT, offsetof(kb_tune_opts, seed), "N", "the strategy's seed (default 1)", 0,
      2147483647, 0, NULL, 0 },
    { "--db", NULL, KB_OPT_OUTDB, offsetof(kb_tune_opts, db_path), "FILE",
      "the tuning database (default results/tune.db); a rerun reuses what it holds for the same key", 0, 0, 0,
      NULL, 0 },
    { "--rounds", NULL, KB_OPT_INT, offsetof(kb_tune_opts, rounds), "N",
      "a tie is re-measured interleaved for N rounds before the choice (default 2; 0: never)", 0, 100, 0, NULL, 0 },
    { "--max-noise", NULL, KB_OPT_DOUBLE, offsetof(kb_tune_opts, max_noise), "X",
      "a winner's noise (relative standard error of its median) at most X, else no winner: noise (default 0.05)",
      0, 1e12, 1, NULL, 0 },
    { "--confirm", NULL, KB_OPT_FLAG, offsetof(kb_tune_opts, confirm), NULL,
      "re-measure each problem's winner and its runners-up within noise (a rerun: the stored winners)", 0, 0, 0, NULL,
      0 },
    { "--no-prune", NULL, KB_OPT_FLAG, offsetof(kb_tune_opts, no_prune), NULL,
      "measure configurations that spill or exceed a limit too", 0, 0, 0, NULL, 0 },
    { "--out", NULL, KB_OPT_OUT, offsetof(kb_run_opts, out_path), "FILE",
      "JSON Lines records (default results/tune-<suite>-<UTC time>-<pid>.jsonl)", 0, 0, 0, NULL, 0 },
    { "--resume", NULL, KB_OPT_OUT, offsetof(kb_run_opts, out_path), "FILE",
      "continue an interrupted tune: append to its records FILE (the database supplies what finished)", 0, 0, 0,
      NULL, 0 },
    KB_ROW_CACHE_DIR,
    KB_ROW_FULL_SHAPES,
    { "--min-samples", NULL, KB_OPT_INT, offsetof(kb_run_opts, min_samples), "N",
      "override the suite's min_samples", 1, KB_MEASURE_SAMPLES_MAX, 0, NULL, 0 },
    { "--max-samples", NULL, KB_OPT_INT, offsetof(kb_run_opts, max_samples), "N",
      "override the suite's max_samples", 1, KB_MEASURE_MAX_SAMPLES_MAX, 0, NULL, 0 },
    { "--timeout", NULL, KB_OPT_DOUBLE, offsetof(kb_run_opts, timeout_s), "S",
      "override the suite's timeout_s [seconds]", 0, KB_MEASURE_TIMEOUT_MAX_S, 1, NULL, 0 },
    KB_ROW_THREADS,
    KB_ROW_JOBS,
    KB_ROW_EMU,
    KB_ROW_QUIET,
    { "--replay", NULL, KB_OPT_LIST, offsetof(kb_tune_opts, replay_paths), "FILE",
      "run strategies on recorded times: kbench records or a Kernel Tuner cache (no SUITE, no device); more FILEs "
      "may follow", 0, 0, 0, NULL, offsetof(kb_tune_opts, n_replay) },
    { "--budgets", NULL, KB_OPT_STR, offsetof(kb_tune_opts, budgets), "P,P,...",
      "--replay: budgets in % of brute force (e.g. 1,3,10): curves per strategy and the methodology's score", 0, 0,
      0, NULL, 0 },
    { "--budget-unit", NULL, KB_OPT_CHOICE, offsetof(kb_tune_opts, budget_unit), "evaluations|time",
      "--replay: --budgets are % of brute force's evaluations (default) or of its simulated time", 0, 0, 0,
      budget_units, 0 },
    { "--repeats", NULL, KB_OPT_INT, offsetof(kb_tune_opts, repeats), "N",
      "--replay --strategy all: seeds per strategy (default 10)", 1, 10000, 0, NULL, 0 },
    { "--format", NULL, KB_OPT_CHOICE, offsetof(kb_tune_opts, format), "text|json|svg|html",
      "--replay: the report's form (svg, html: the performance curves)", 0, 0, 0, replay_formats, 0 },
};

static int tune_main(void *p)
{
    kb_tune_opts *o = p;
    o->run.suite_path = o->pos[0];
    if (!o->n_replay && o->budget_time_s > 0 && (o->time_s <= 0 || o->budget_time_s < o->time_s))
        o->time_s = o->budget_time_s;   /* live tuning: the real clock */
    return kb_cmd_tune(o);
}

const kb_command kb_command_tune = {
    "tune", "[SUITE | --replay FILE [FILE...]]", 0, KB_TUNE_MAX_POS, offsetof(kb_tune_opts, pos),
    "search each problem's configurations, choose winners beyond the noise, fill the tuning database",
    "Each problem (family, dtype, dims, pad, launch and the choice params) is tuned over its\n"
    "configurations (variant and tile params). Every evaluation is verified, measured and recorded;\n"
    "a rerun with the same GPU, driver, toolchain and kernel source reuses the database. Ctrl-C keeps\n"
    "what finished. --replay FILE... runs strategies on recorded times instead (kbench records or\n"
    "Kernel Tuner caches; --filter TEXT picks the problem; default budget 15% of the space);\n"
    "--strategy all --budgets 1,3,10 compares them as Willemsen et al. 2024 do, over many files.\n"
    "docs/tuning.md explains the strategies, the choice, the database and the replay.\n",
    tune_opts, (int)(sizeof tune_opts / sizeof tune_opts[0]), sizeof(kb_tune_opts), tune_defaults, tune_main,
};
