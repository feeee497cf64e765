/* run.c - `kbench run`: a session (session/session.h) with the records file, the store,
 * the trace and the console as its sinks; run.c parses, opens, and prints the setup
 * lines and the closing summary. */
#include "cli/run.h"

#include "cli/console.h"
#include "cli/run_summary.h"
#include "core/output.h"
#include "results/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* What one run holds beyond its session. */
typedef struct {
    const kb_run_opts *o;
    kb_session *s;
    kb_sb out_path;
    kb_run_summary *sum;          /* the closing summary, filled by its sink */
} run_ctx;

int kb_run_open_session(const kb_session_opts *so, kb_session **s)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_session_open(so, s, &err);
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", err.s);
    kb_sb_free(&err);
    if (st == KB_OK)
        return -1;
    return st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
}

/* Open the session, plan the suite and walk it once. An exit code, or -1 to go on. */
static int open_and_plan(run_ctx *x)
{
    const kb_run_opts *o = x->o;
    kb_session_opts so;
    if (kb_run_session_opts(o, &so) != 0)
        return KB_EXIT_INPUT;
    int rc = kb_run_open_session(&so, &x->s);
    if (rc >= 0)
        return rc;
    kb_status st;
    kb_sb msg;
    kb_sb_init(&msg);
    if (kb_session_check_setup(x->s, &msg) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", msg.s);
        kb_sb_free(&msg);
        return KB_EXIT_SETUP;
    }
    st = kb_session_plan(x->s, &msg);
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", msg.s);
    kb_sb_free(&msg);
    if (st != KB_OK)
        return st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
    const kb_plan *plan = kb_session_plan_of(x->s);
    for (int i = 0; i < plan->n_warnings; i++)
        fprintf(stderr, "kbench: warning: %s\n", plan->warnings[i]);
    if (kb_session_select(x->s, o->filters, o->n_filters) != KB_OK) {
        fprintf(stderr, "kbench: out of memory walking the plan of %s\n", o->suite_path);
        return KB_EXIT_SETUP;
    }
    /* a --filter that selects nothing is a mistake on the command line: say so before
     * any file is opened */
    if (o->n_filters > 0 && kb_session_cases(x->s)->n == 0) {
        kb_sb f;
        kb_sb_init(&f);
        kb_run_filters_text(o, &f);
        fprintf(stderr, "kbench: %s matches none of the suite's %lld cases (kbench list %s shows their ids)\n", f.s,
                (long long)plan->n_cases, o->suite_path);
        kb_sb_free(&f);
        return KB_EXIT_INPUT;
    }
    return -1;
}

/* Where the records go, and what a resumed run already holds; the trace. Only a records
 * file of this suite is ever appended to; anything else is refused and left as it was.
 * An exit code, or -1 to go on. */
static int open_records(run_ctx *x)
{
    const kb_run_opts *o = x->o;
    const char *path = o->resume_path ? o->resume_path : o->out_path;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = KB_OK;
    if (path)
        kb_sb_printf(&x->out_path, "%s", path);
    else if ((st = kb_out_dir_make("results", &err)) == KB_OK)   /* kbench's own default place */
        kb_sb_printf(&x->out_path, "results/%s.jsonl", kb_session_run_id(x->s));
    if (st == KB_OK)
        st = kb_session_records(x->s, x->out_path.s, o->resume_path, &err);
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", err.s);
    if (st == KB_OK && o->trace_path) {
        char title[96];
        snprintf(title, sizeof title, "kbench run %s%s", kb_session_run_id(x->s),
                 kb_session_device(x->s)->caps & KB_CAP_GPU_TIMER ? "" : " (emulator: CPU timings)");
        kb_sb_clear(&err);
        if ((st = kb_session_trace(x->s, o->trace_path, title, &err)) != KB_OK)
            fprintf(stderr, "kbench run: --trace: %s\n", err.s);
    }
    kb_sb_free(&err);
    if (st != KB_OK)
        return kb_out_exit(st);
    return -1;
}

/* The closing summary (cli/run_summary.h), the notes on how the run ended, the exit code. */
static int summary(run_ctx *x)
{
    const kb_session_tally *t = kb_session_tally_of(x->s);
    int64_t resumed = kb_session_cases(x->s)->resumed;
    kb_run_summary_where w = { x->out_path.s, kb_session_store_path(x->s), x->o->suite_path, x->o->brief };
    if (x->sum)
        kb_run_summary_print(x->sum, stdout, &w);
    else   /* no memory for the summary: the counts at least */
        fprintf(stdout, "kbench: %d cases: %d ok, %d skipped, %d wrong, %d failed; records in %s\n", t->total,
                t->count[KB_CASE_OK], t->count[KB_CASE_SKIPPED], t->count[KB_CASE_WRONG], t->failed, x->out_path.s);
    fflush(stdout);
    if (resumed)
        fprintf(stderr, "kbench: %lld cases were already recorded in %s and were not run again\n",
                (long long)resumed, x->out_path.s);
    if (kb_interrupted()) {
        fprintf(stderr, "kbench: interrupted; every finished case is recorded. Continue with --resume %s\n",
                x->out_path.s);
        return KB_EXIT_INTERRUPTED;
    }
    if (t->device_lost) {
        fprintf(stderr, "kbench: continue in a new process with --resume %s\n", x->out_path.s);
        return KB_EXIT_WRONG;
    }
    if (t->max_fail_hit)
        fprintf(stderr, "kbench: stopped at --max-fail %d; continue with --resume %s\n", x->o->max_fail,
                x->out_path.s);
    if (t->record_failed)
        return KB_EXIT_SETUP;
    return t->count[KB_CASE_WRONG] || t->failed ? KB_EXIT_WRONG : KB_EXIT_OK;
}

/* The console and the summary as sinks. 0, or an exit code. */
static int add_console(run_ctx *x)
{
    const kb_run_opts *o = x->o;
    kb_console_opts co = { NULL, NULL, o->quiet, o->verbose, 0 };
    if (kb_session_add_sink(x->s, kb_console_sink(&co)) != KB_OK)
        return KB_EXIT_SETUP;
    x->sum = kb_run_summary_new();
    if (x->sum && kb_session_add_sink(x->s, kb_run_summary_sink(x->sum)) != KB_OK) {
        kb_run_summary_free(x->sum);   /* the sink borrowed it: the list did not free it */
        x->sum = NULL;
    }
    return 0;
}

int kb_cmd_run(const kb_run_opts *o)
{
    run_ctx x;
    memset(&x, 0, sizeof x);
    x.o = o;
    kb_sb_init(&x.out_path);
    int rc = open_and_plan(&x);
    if (rc < 0)
        rc = open_records(&x);
    if (rc < 0) {
        kb_session_start(x.s);
        kb_session_store(x.s, o->db_path ? o->db_path : kb_store_default_path(), x.out_path.s);
        rc = add_console(&x) ? KB_EXIT_SETUP : -1;
    }
    if (rc < 0) {
        kb_session_begin(x.s);
        kb_session_run_all(x.s, NULL, NULL);
        kb_session_end(x.s);
        rc = summary(&x);
    }
    kb_session_close(x.s);
    kb_run_summary_free(x.sum);   /* after the session: its sink only borrowed it */
    kb_sb_free(&x.out_path);
    return rc;
}

/* ---- the command line ---- */

void kb_run_filters_text(const kb_run_opts *o, kb_sb *out)
{
    kb_sb_clear(out);
    for (int i = 0; i < o->n_filters; i++)
        kb_sb_printf(out, i == 0 ? "--filter '%s'" : i == 1 ? " (or '%s'" : ", '%s'", o->filters[i]);
    if (o->n_filters > 1)
        kb_sb_printf(out, ")");
}

int kb_run_session_opts(const kb_run_opts *o, kb_session_opts *so)
{
    memset(so, 0, sizeof *so);
    so->backend = o->backend;
    kb_backend_opts *bo = &so->bo;
    bo->cache_dir = o->cache_dir;
    bo->device_index = o->device_index;
    bo->sm_override = o->sm_override;
    bo->emu_threads = o->emu_threads;
    bo->emu_schedule = o->emu_schedule;
    for (const char *p = o->emu_check; p && *p;) {
        size_t n = strcspn(p, ",");
        if (n == 4 && !strncmp(p, "race", 4))
            bo->emu_checks |= KB_EMU_CHECK_RACE;
        else if (n == 4 && !strncmp(p, "init", 4))
            bo->emu_checks |= KB_EMU_CHECK_INIT;
        else if (n == 3 && !strncmp(p, "all", 3))
            bo->emu_checks |= KB_EMU_CHECK_RACE | KB_EMU_CHECK_INIT;
        else {
            fprintf(stderr, "kbench: --emu-check: expected race, init or all (comma-separated), got '%.*s'\n",
                    (int)n, p);
            return -1;
        }
        p += n + (p[n] == ',');
    }
    so->suite_path = o->suite_path;
    so->full_shapes = o->full_shapes;
    so->dump_dir = o->dump_dir;
    so->dump_all = o->n_filters > 0;   /* a filter chose the cases: dump each, not only the wrong ones */
    so->overrides = (kb_measure_overrides){ o->min_samples, o->max_samples, o->timeout_s };
    so->prune = o->prune;
    so->jobs = o->jobs;
    so->max_fail = o->max_fail;
    return 0;
}

const char *const kb_run_backend_choices[] = { "auto", "cuda", "emu", NULL };

void kb_run_opts_defaults(void *o) { ((kb_run_opts *)o)->backend = "auto"; }

static const kb_opt run_opts[] = {
    KB_ROW_BACKEND,
    KB_ROW_ARCH,
    KB_ROW_DEVICE,
    KB_ROW_FILTER,
    { "--out", NULL, KB_OPT_OUT, offsetof(kb_run_opts, out_path), "FILE",
      "JSON Lines records (default results/<suite>-<UTC time>-<pid>.jsonl)", 0, 0, 0, NULL, 0 },
    { "--resume", NULL, KB_OPT_OUT, offsetof(kb_run_opts, resume_path), "FILE",
      "append to FILE, skipping the cases it already records", 0, 0, 0, NULL, 0 },
    { "--db", NULL, KB_OPT_OUTDB, offsetof(kb_run_opts, db_path), "PATH",
      "the results store the records are added to (default $KBENCH_DB, else " KB_STORE_DEFAULT_PATH ")", 0, 0, 0,
      NULL, 0 },
    { "--trace", NULL, KB_OPT_OUT, offsetof(kb_run_opts, trace_path), "FILE",
      "also write a Chrome/Perfetto trace of the run as it goes (cases, stages, samples)", 0, 0, 0, NULL, 0 },
    KB_ROW_CACHE_DIR,
    { "--dump", NULL, KB_OPT_OUTDIR, offsetof(kb_run_opts, dump_dir), "DIR",
      "inputs, output and reference as .npy under DIR/<case>/ (filtered cases, else wrong ones)", 0, 0, 0, NULL, 0 },
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
    KB_ROW_VERBOSE,
    { "--prune", NULL, KB_OPT_FLAG, offsetof(kb_run_opts, prune), NULL,
      "skip (as 'pruned: ...') cases whose compile output shows spills or exceeded limits", 0, 0, 0, NULL, 0 },
    { "--max-fail", NULL, KB_OPT_INT, offsetof(kb_run_opts, max_fail), "N",
      "stop after N cases are wrong or failed (what finished is recorded; --resume goes on)", 1, 1000000, 0, NULL,
      0 },
};

static int run_main(void *o) { return kb_cmd_run(o); }

const kb_command kb_command_run = {
    "run", "SUITE", 1, 1, offsetof(kb_run_opts, suite_path),
    "plan, compile, execute, verify, measure and record every case of SUITE", NULL,
    run_opts, (int)(sizeof run_opts / sizeof run_opts[0]), sizeof(kb_run_opts), kb_run_opts_defaults, run_main,
};
