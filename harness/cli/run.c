/* run.c - `kbench run`: open the backend, plan and walk the suite, run each case
 * through the case pipeline (engine/case.h), and hand each result to the record file,
 * the store and the console, one case at a time, each record flushed as the case ends. */
#include "cli/run.h"

#include "cli/console.h"
#include "core/fsutil.h"
#include "engine/case.h"
#include "engine/setup.h"
#include "results/record.h"
#include "results/record_json.h"
#include "results/report_trace.h"
#include "results/ceilings.h"
#include "results/store.h"
#include "suite/walk.h"
#include "tune/prune.h"

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* What every case of one run shares. */
typedef struct {
    const kb_run_opts *o;
    kb_plan plan;
    const kb_backend *be;
    kb_backend_ctx *bx;
    kb_device_info dev;
    kb_peaks peaks;
    kb_l2_flush flush;          /* cold-L2 scratch, allocated once */
    int have_flush;
    kb_measure_overrides overrides;
    kb_pipeline pipe;
    kb_recorder *rec;
    kb_store *store;            /* NULL when the store cannot be opened (records still written) */
    kb_sb out_path;
    char run_id[40];
    kb_strset done;             /* case ids a resumed file already holds */
    int id_width;               /* console column: the longest id of the run */
    int64_t todo;               /* cases this process will run */
    kb_progress pg;
    int count[KB_CASE_STATUS_COUNT];
    int64_t resumed;
    int record_failed;          /* a record could not be written: the run stops */
    int device_lost;            /* the device is unusable after a case */
    kb_trace_stream trace;      /* --trace: the trace written as the run goes */
} run_ctx;

/* "<suite>-<UTC time>-<pid>", also the default records file's name: the suite's first
 * 12 characters made safe for a file name (letters, digits, '-', '_'; '.' but not first),
 * so that no suite name can put records outside results/. */
static void make_run_id(char *out, size_t n, const char *suite)
{
    char safe[13];
    int k = 0;
    for (const char *p = suite; *p && k < 12; p++, k++) {
        char ch = *p;
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '-' ||
                 ch == '_' || (ch == '.' && k > 0);
        safe[k] = ok ? ch : '_';
    }
    safe[k] = 0;
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char ts[20];
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(out, n, "%s-%s-%d", k ? safe : "suite", ts, (int)getpid());
}

/* --dump DIR must be a directory kbench can write into (created when missing), found
 * out before the first case rather than after the first failure. */
static kb_status check_dump_dir(const char *dir, kb_sb *err)
{
    struct stat st;
    if (!dir)
        return KB_OK;
    if (kb_fs_mkdir_p(dir) != KB_OK || stat(dir, &st) != 0 || !S_ISDIR(st.st_mode) ||
        access(dir, W_OK | X_OK) != 0) {
        int e = errno ? errno : ENOTDIR;
        kb_sb_printf(err, "--dump %s: not a directory kbench can write to: %s", dir, strerror(e));
        return KB_ERR_SETUP;
    }
    return KB_OK;
}

int kb_run_open_backend(const kb_run_opts *o, const kb_backend **be, kb_backend_ctx **bx, kb_device_info *dev)
{
    char err[1024] = "";
    kb_backend_opts bo;
    if (kb_run_backend_opts(o, &bo) != 0)
        return KB_EXIT_INPUT;
    kb_status st = kb_backend_open(o->backend, &bo, be, bx, err, sizeof err);
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        return st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
    }
    if ((*be)->device_info(*bx, dev) != KB_OK) {
        fprintf(stderr, "kbench: device query: %s\n", (*be)->last_error(*bx));
        return KB_EXIT_SETUP;
    }
    if (dev->toolchain_unusable) {
        /* every module would fail to load: stop before the first case, with the fix */
        fprintf(stderr, "kbench: %s (%s): %s\n", dev->name, (*be)->name, dev->toolchain_note);
        return KB_EXIT_SETUP;
    }
    return -1;
}

/* Open the backend and plan the suite for it. An exit code, or -1 to go on. */
static int open_backend_and_plan(run_ctx *x)
{
    const kb_run_opts *o = x->o;
    int rc = kb_run_open_backend(o, &x->be, &x->bx, &x->dev);
    if (rc >= 0)
        return rc;
    kb_status st;
    kb_sb msg;
    kb_sb_init(&msg);
    if (kb_setup_check(o->cache_dir, &msg) != KB_OK || check_dump_dir(o->dump_dir, &msg) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", msg.s);
        kb_sb_free(&msg);
        return KB_EXIT_SETUP;
    }
    st = kb_walk_plan(o->suite_path, x->dev.caps, o->full_shapes, &x->plan, &msg);
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", msg.s);
    kb_sb_free(&msg);
    if (st != KB_OK)
        return st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
    for (int i = 0; i < x->plan.n_warnings; i++)
        fprintf(stderr, "kbench: warning: %s\n", x->plan.warnings[i]);
    /* a --filter that selects nothing is a mistake on the command line: say so before
     * any file is opened */
    kb_walk_opts wo = { o->filters, o->n_filters, NULL, { 0, 0, 0 } };
    kb_walk_counts n;
    if (o->n_filters > 0 && kb_walk(&x->plan, &wo, NULL, NULL, &n) == 0 && n.visited == 0) {
        fprintf(stderr, "kbench: --filter matches none of the suite's %lld cases (kbench list %s shows their ids)\n",
                (long long)x->plan.n_cases, o->suite_path);
        return KB_EXIT_INPUT;
    }
    return -1;
}

/* Where the records go, and what a resumed run already holds. Only a records file of
 * this suite is ever appended to; anything else is refused and left as it was. An exit
 * code, or -1 to go on. */
static int open_records(run_ctx *x)
{
    const kb_run_opts *o = x->o;
    make_run_id(x->run_id, sizeof x->run_id, x->plan.suite_name);
    const char *path = o->resume_path ? o->resume_path : o->out_path;
    if (path)
        kb_sb_printf(&x->out_path, "%s", path);
    else
        kb_sb_printf(&x->out_path, "results/%s.jsonl", x->run_id);
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_record_open(x->out_path.s, x->plan.suite_name, &x->rec, &err);
    if (st == KB_OK && o->resume_path && (st = kb_record_finished(o->resume_path, &x->done, &err)) != KB_OK)
        kb_sb_printf(&err, " (--resume)");
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", err.s);
    kb_sb_free(&err);
    if (st == KB_OK && o->trace_path) {
        char title[96];
        snprintf(title, sizeof title, "kbench run %s%s", x->run_id,
                 x->dev.caps & KB_CAP_GPU_TIMER ? "" : " (emulator: CPU timings)");
        if (kb_trace_stream_open(o->trace_path, title, &x->trace) != KB_OK) {
            fprintf(stderr, "kbench run: --trace: cannot write %s: %s\n", o->trace_path, strerror(errno));
            return KB_EXIT_INPUT;
        }
    }
    if (st == KB_OK)
        return -1;
    return st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
}

/* The SQLite store beside the records: results/kbench.db by default. */
static void open_store(run_ctx *x)
{
    char *dir = strdup(x->out_path.s);
    kb_sb db, note;
    kb_sb_init(&db);
    kb_sb_init(&note);
    if (!dir)   /* not "." instead: the store would silently move */
        kb_out_of_memory("the records directory", strlen(x->out_path.s) + 1);
    kb_sb_printf(&db, "%s/kbench.db", dirname(dir));
    if (kb_store_open(db.s, &x->store, &note) != KB_OK) {
        fprintf(stderr, "kbench: results store %s: %s (JSON Lines records only)\n", db.s, note.s);
        x->store = NULL;
    }
    /* the device's measured ceilings (a ceilings run in this store): the measured and path roofs */
    if (x->store && x->pipe.peaks && kb_ceilings_load(db.s, &x->dev, &x->peaks) > 0)
        fprintf(stderr, "kbench: %s\n", x->peaks.measured_note);
    free(dir);
    kb_sb_free(&db);
    kb_sb_free(&note);
}

/* What the pipeline needs beyond the backend: modules, peaks, flush buffer. */
static void open_pipeline(run_ctx *x)
{
    const kb_run_opts *o = x->o;
    kb_pipeline *p = &x->pipe;
    p->be = x->be;
    p->bx = x->bx;
    p->dev = &x->dev;
    p->mods = kb_modules_new(x->be, x->bx, o->cache_dir, kb_kernels_dir());
    p->empty = kb_modules_get(p->mods, KB_EMPTY_SOURCE, "", kb_target_sm(&x->dev));
    kb_modules_start(p->mods, kb_run_jobs(o, x->dev.caps, 1));
    if (x->dev.caps & KB_CAP_ROOFLINE) {
        kb_sb note;
        kb_sb_init(&note);
        if (kb_peaks_for_device(&x->dev, NULL, &x->peaks, &note) == KB_OK)
            p->peaks = &x->peaks;
        else
            fprintf(stderr, "kbench: peaks: %s (rates without %% of roofline)\n", note.s);
        kb_sb_free(&note);
    }
    char err[512];
    x->have_flush = kb_l2_flush_alloc(x->be, x->bx, &x->dev, &x->flush, err, sizeof err) == KB_OK;
    if (x->have_flush)
        p->flush = &x->flush;
    else
        fprintf(stderr, "kbench: L2 flush buffer: %s (each case allocates its own)\n", err);
    x->overrides = (kb_measure_overrides){ o->min_samples, o->max_samples, o->timeout_s };
    p->overrides = &x->overrides;
    p->dump_dir = o->dump_dir;
    p->dump_all = o->n_filters > 0;
    if (o->prune) {
        p->prune = kb_tune_prune;   /* recorded skipped, "pruned: <why>", before anything runs */
        p->prune_user = &x->dev;
    }
}

/* Serialise the result once; the same object goes to the file and the store. */
static void record_case(run_ctx *x, const kb_case_result *r)
{
    char when[32];
    kb_record_time_now(when);
    kb_record_ctx ctx = { .run_id = x->run_id, .suite = x->plan.suite_name, .time = when, .backend = x->be->name,
                          .dev = &x->dev };
    json_t *rec = kb_record_json(&ctx, r);
    if (!rec || kb_record_write(x->rec, rec) != KB_OK) {
        x->record_failed = 1; /* kb_record_write said why on stderr */
        json_decref(rec);
        return;
    }
    if (kb_trace_stream_case(&x->trace, rec) != KB_OK) {
        fprintf(stderr, "kbench: --trace: cannot write %s; the trace stops here (records go on)\n", x->o->trace_path);
        kb_trace_stream_close(&x->trace);
    }
    if (x->store) {
        kb_sb err;
        kb_sb_init(&err);
        if (kb_store_put(x->store, rec, x->out_path.s, &err) != KB_OK)
            fprintf(stderr, "kbench: results store: %s (the JSON Lines record is written)\n", err.s);
        kb_sb_free(&err);
    }
    json_decref(rec);
}

/* First walk: how many cases this process runs, and the id column's width. */
static int count_case(void *user, const kb_walk_item *it)
{
    run_ctx *x = user;
    x->todo++;
    int len = (int)strlen(it->id);
    if (len > x->id_width)
        x->id_width = len;
    return 0;
}

/* Second walk: run one case to its record. Nonzero stops the walk. */
static int run_one(void *user, const kb_walk_item *it)
{
    run_ctx *x = user;
    if (kb_interrupted())
        return 1;
    const kb_case *c = it->c;
    kb_case_result r;
    kb_progress_clear(&x->pg);
    kb_case_run(&x->pipe, c, it->id, &x->plan.entries[c->entry].measure, &r);
    if (r.error == KB_ERR_INTERRUPTED) {
        /* abandoned part-way: not a result; --resume runs it again */
        kb_case_result_free(&r);
        return 1;
    }
    record_case(x, &r);
    x->count[r.status]++;
    if (!x->o->quiet)
        kb_console_row(x->id_width, it->index, x->plan.n_cases, &r);
    kb_console_notes(&r, x->pipe.dump_err);
    kb_case_result_free(&r);
    kb_progress_step(&x->pg);
    if (x->record_failed) {
        kb_progress_clear(&x->pg);
        fprintf(stderr, "kbench: the record of %s could not be written; stopping the run\n", it->id);
        return 1;
    }
    /* A sticky fault (illegal address, launch timeout, ...) leaves the CUDA context
     * unusable: every later call would fail with the same error, and each later case
     * would be recorded as a fault of its own. The case that faulted is recorded; the
     * rest are left for a new process (--resume). On the emulator sync always works. */
    if (x->be->sync(x->bx) != KB_OK) {
        kb_progress_clear(&x->pg);
        fprintf(stderr, "kbench: the device is unusable after %s (%s); the remaining cases were not run\n", it->id,
                x->be->last_error(x->bx));
        x->device_lost = 1;
        return 1;
    }
    return 0;
}

/* Walk the plan three times (count, announce the modules, run). 0, or -1 when out of memory. */
static int run_cases(run_ctx *x)
{
    const kb_run_opts *o = x->o;
    kb_walk_opts wo = { o->filters, o->n_filters, &x->done, { 0, 0, 0 } };
    wo.target = (kb_target){ kb_target_sm(&x->dev), x->dev.caps, x->dev.max_shmem_per_block_optin };
    kb_walk_counts n;
    x->id_width = 4;
    if (kb_walk(&x->plan, &wo, count_case, x, &n) < 0)
        return -1;
    x->resumed = n.skipped;
    char tgt[32] = "";
    if (kb_target_sm(&x->dev) != x->dev.sm)
        snprintf(tgt, sizeof tgt, ", compiled for %s", kb_arch_name(kb_target_sm(&x->dev)));
    fprintf(stderr, "kbench: suite %s: %lld cases on %s (%s, sm_%d%s)%s\n", x->plan.suite_name,
            (long long)x->plan.n_cases, x->be->name, x->dev.name, x->dev.sm, tgt,
            kb_walk_check_shapes(x->dev.caps, o->full_shapes) ? "; the emulator runs the suite's check shapes" : "");
    if (!(x->dev.caps & KB_CAP_GPU_TIMER))
        fprintf(stderr, "kbench: emulator timings are CPU time, not GPU numbers\n");
    if (n.repeats)
        fprintf(stderr, "kbench: %lld planned cases repeat an earlier entry's case; each runs once\n",
                (long long)n.repeats);
    if (!o->quiet)
        kb_console_header(x->dev.caps, x->id_width);
    kb_progress_start(&x->pg, x->todo);
    kb_interrupt_install();
    if (kb_walk_prefetch(&x->plan, &wo, x->pipe.mods, kb_target_sm(&x->dev)) < 0)
        return -1;
    int rc = kb_walk(&x->plan, &wo, run_one, x, NULL);
    kb_progress_clear(&x->pg);
    return rc < 0 ? -1 : 0;
}

/* The closing lines and the exit code. */
static int summary(run_ctx *x)
{
    int failed = 0, total = 0;
    for (int s = 0; s < KB_CASE_STATUS_COUNT; s++) {
        total += x->count[s];
        if (s != KB_CASE_WRONG && kb_case_status_failed((kb_case_status)s))
            failed += x->count[s];
    }
    fprintf(stderr, "kbench: %d cases: %d ok, %d skipped, %d wrong, %d failed; records in %s\n", total,
            x->count[KB_CASE_OK], x->count[KB_CASE_SKIPPED], x->count[KB_CASE_WRONG], failed, x->out_path.s);
    if (x->resumed)
        fprintf(stderr, "kbench: %lld cases were already recorded in %s and were not run again\n",
                (long long)x->resumed, x->out_path.s);
    if (kb_interrupted()) {
        fprintf(stderr, "kbench: interrupted; every finished case is recorded. Continue with --resume %s\n",
                x->out_path.s);
        return KB_EXIT_INTERRUPTED;
    }
    if (x->device_lost) {
        fprintf(stderr, "kbench: continue in a new process with --resume %s\n", x->out_path.s);
        return KB_EXIT_WRONG;
    }
    if (x->record_failed)
        return KB_EXIT_SETUP;
    return x->count[KB_CASE_WRONG] || failed ? KB_EXIT_WRONG : KB_EXIT_OK;
}

static void close_run(run_ctx *x)
{
    if (x->have_flush)
        kb_l2_flush_free(x->be, x->bx, &x->flush);
    kb_store_close(x->store);
    kb_record_close(x->rec);
    kb_trace_stream_close(&x->trace);
    kb_strset_free(&x->done);
    kb_modules_free(x->pipe.mods);
    kb_plan_free(&x->plan);
    if (x->bx)
        x->be->fini(x->bx);
    kb_sb_free(&x->out_path);
}

int kb_cmd_run(const kb_run_opts *o)
{
    run_ctx x;
    memset(&x, 0, sizeof x);
    x.o = o;
    kb_strset_init(&x.done);
    kb_sb_init(&x.out_path);
    int rc = open_backend_and_plan(&x);
    if (rc < 0)
        rc = open_records(&x);
    if (rc < 0) {
        open_pipeline(&x);
        open_store(&x);
        rc = run_cases(&x) < 0 ? KB_EXIT_SETUP : summary(&x);
    }
    close_run(&x);
    return rc;
}

/* ---- the command line ---- */

int kb_run_backend_opts(const kb_run_opts *o, kb_backend_opts *bo)
{
    memset(bo, 0, sizeof *bo);
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
    return 0;
}

const char *const kb_run_backend_choices[] = { "auto", "cuda", "emu", NULL };

void kb_run_opts_defaults(void *o) { ((kb_run_opts *)o)->backend = "auto"; }

int kb_run_jobs(const kb_run_opts *o, unsigned caps, int measuring)
{
    if (o->jobs > 0)
        return o->jobs;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cores < 1 ? 1 : cores > 8 ? 8 : (int)cores;
    if (!measuring)
        return n;
    return caps & KB_CAP_GPU_TIMER ? (n > 1 ? n - 1 : 1) : 1;
}

static const kb_opt run_opts[] = {
    KB_ROW_BACKEND,
    KB_ROW_ARCH,
    KB_ROW_DEVICE,
    KB_ROW_FILTER,
    { "--out", NULL, KB_OPT_STR, offsetof(kb_run_opts, out_path), "FILE",
      "JSON Lines records (default results/<suite>-<UTC time>-<pid>.jsonl)", 0, 0, 0, NULL, 0 },
    { "--resume", NULL, KB_OPT_STR, offsetof(kb_run_opts, resume_path), "FILE",
      "append to FILE, skipping the cases it already records", 0, 0, 0, NULL, 0 },
    { "--trace", NULL, KB_OPT_STR, offsetof(kb_run_opts, trace_path), "FILE",
      "also write a Chrome/Perfetto trace of the run as it goes (cases, stages, samples)", 0, 0, 0, NULL, 0 },
    KB_ROW_CACHE_DIR,
    { "--dump", NULL, KB_OPT_STR, offsetof(kb_run_opts, dump_dir), "DIR",
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
    { "--prune", NULL, KB_OPT_FLAG, offsetof(kb_run_opts, prune), NULL,
      "skip (as 'pruned: ...') cases whose compile output shows spills or exceeded limits", 0, 0, 0, NULL, 0 },
};

static int run_main(void *o) { return kb_cmd_run(o); }

const kb_command kb_command_run = {
    "run", "SUITE", 1, 1, offsetof(kb_run_opts, suite_path),
    "plan, compile, execute, verify, measure and record every case of SUITE", NULL,
    run_opts, (int)(sizeof run_opts / sizeof run_opts[0]), sizeof(kb_run_opts), kb_run_opts_defaults, run_main,
};
