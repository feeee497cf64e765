/* tune.c - `kbench tune SUITE`: a session (session/session.h) planned and walked once,
 * the tuning space built from its case list (tune/space.h), then the search problem by
 * problem (cli/tune_run.c); every evaluation is a case of the session whose sinks write
 * the ordinary record (JSON Lines + the results store) and the tuning database's entry. */
#include "cli/tune.h"

#include "cli/tune_replay.h"
#include "cli/tune_run.h"

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
        fprintf(stderr, "kbench: tune: no valid configuration to tune in %s%s%s\n", o->suite_path,
                o->n_filters ? " with the --filter given" : "", x->space.invalid ? "; the first refused: " : "");
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
    if (o->run.out_path)
        kb_sb_printf(&x->out_path, "%s", o->run.out_path);
    else
        kb_sb_printf(&x->out_path, "results/%s.jsonl", run_id);
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_session_records(x->s, x->out_path.s, NULL, &err);
    if (st == KB_OK)
        st = kb_tunedb_sink_open(x->s, o->db_path ? o->db_path : KB_TUNEDB_DEFAULT_PATH, &x->db, &err);
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", err.s);
    kb_sb_free(&err);
    if (st != KB_OK)
        return st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
    kb_session_store(x->s, x->out_path.s);
    if (kb_session_add_sink(x->s, kb_tunedb_sink_of(x->db)) != KB_OK) {
        x->db = NULL;   /* freed by the failed add */
        fprintf(stderr, "kbench: out of memory\n");
        return KB_EXIT_SETUP;
    }
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
    if (kb_session_tally_of(x->s)->record_failed)
        return KB_EXIT_SETUP;
    return x->failed || x->unchosen ? KB_EXIT_WRONG : KB_EXIT_OK;
}

int kb_cmd_tune(const kb_tune_opts *o)
{
    if (o->replay_path && o->run.suite_path)
        return kb_opts_fail(&kb_command_tune, "--replay", "replays a file instead of tuning SUITE: give one of them");
    if (o->replay_path)
        return kb_tune_replay_main(&kb_command_tune, o);
    if (!o->run.suite_path)
        return kb_opts_fail(&kb_command_tune, "SUITE", "a suite to tune (or --replay FILE)");
    if (strcmp(o->strategy, "all") == 0)
        return kb_opts_fail(&kb_command_tune, "--strategy", "'all' compares strategies on a --replay FILE only");
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
    o->strategy = "ils";
    o->seed = 1;
    o->repeats = 10;
    o->rounds = 2;
    o->format = "text";
}

static const char *const strategy_choices[] = { "brute", "random", "ils", "anneal", "all", NULL };
static const char *const replay_formats[] = { "text", "json", NULL };

static const kb_opt tune_opts[] = {
    KB_ROW_BACKEND,
    KB_ROW_ARCH,
    KB_ROW_DEVICE,
    KB_ROW_FILTER,
    { "--strategy", NULL, KB_OPT_CHOICE, offsetof(kb_tune_opts, strategy), "brute|random|ils|anneal|all",
      "search strategy (default ils: greedy iterated local search); all: compare them (--replay)", 0, 0, 0,
      strategy_choices, 0 },
    { "--budget", NULL, KB_OPT_INT, offsetof(kb_tune_opts, budget), "N",
      "configurations evaluated per problem at most (default: all)", 1, 1000000, 0, NULL, 0 },
    { "--time", NULL, KB_OPT_DOUBLE, offsetof(kb_tune_opts, time_s), "S",
      "search each problem for at most S seconds, then choose among what was evaluated", 0, 1e7, 1, NULL, 0 },
    { "--seed", NULL, KB_OPT_INT, offsetof(kb_tune_opts, seed), "N", "the strategy's seed (default 1)", 0,
      2147483647, 0, NULL, 0 },
    { "--db", NULL, KB_OPT_STR, offsetof(kb_tune_opts, db_path), "FILE",
      "the tuning database (default results/tune.db); a rerun reuses what it holds for the same key", 0, 0, 0,
      NULL, 0 },
    { "--rounds", NULL, KB_OPT_INT, offsetof(kb_tune_opts, rounds), "N",
      "a tie is re-measured interleaved for N rounds before the choice (default 2; 0: never)", 0, 100, 0, NULL, 0 },
    { "--confirm", NULL, KB_OPT_FLAG, offsetof(kb_tune_opts, confirm), NULL,
      "re-measure each problem's winner and its runners-up within noise (a rerun: the stored winners)", 0, 0, 0, NULL,
      0 },
    { "--no-prune", NULL, KB_OPT_FLAG, offsetof(kb_tune_opts, no_prune), NULL,
      "measure configurations that spill or exceed a limit too", 0, 0, 0, NULL, 0 },
    { "--out", NULL, KB_OPT_STR, offsetof(kb_run_opts, out_path), "FILE",
      "JSON Lines records (default results/tune-<suite>-<UTC time>-<pid>.jsonl)", 0, 0, 0, NULL, 0 },
    { "--resume", NULL, KB_OPT_STR, offsetof(kb_run_opts, out_path), "FILE",
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
    { "--replay", NULL, KB_OPT_STR, offsetof(kb_tune_opts, replay_path), "FILE",
      "run the strategy on recorded times: kbench records or a Kernel Tuner cache (no SUITE, no device)", 0, 0, 0,
      NULL, 0 },
    { "--repeats", NULL, KB_OPT_INT, offsetof(kb_tune_opts, repeats), "N",
      "--replay --strategy all: seeds per strategy (default 10)", 1, 10000, 0, NULL, 0 },
    { "--format", NULL, KB_OPT_CHOICE, offsetof(kb_tune_opts, format), "text|json", "--replay: the report's form",
      0, 0, 0, replay_formats, 0 },
};

static int tune_main(void *o) { return kb_cmd_tune(o); }

const kb_command kb_command_tune = {
    "tune", "[SUITE]", 0, 1, offsetof(kb_tune_opts, run.suite_path),
    "search each problem's configurations, choose winners beyond the noise, fill the tuning database",
    "Each problem (family, dtype, dims, pad, launch and the choice params) is tuned over its\n"
    "configurations (variant and tile params). Every evaluation is verified, measured and recorded;\n"
    "a rerun with the same GPU, driver, toolchain and kernel source reuses the database. Ctrl-C keeps\n"
    "what finished. --replay FILE runs strategies on recorded times instead (kbench records or a\n"
    "Kernel Tuner cache; --filter TEXT picks the problem; default budget 15% of the space).\n"
    "docs/tuning.md explains the strategies, the choice, the database and the replay.\n",
    tune_opts, (int)(sizeof tune_opts / sizeof tune_opts[0]), sizeof(kb_tune_opts), tune_defaults, tune_main,
};
