/* run.c - `kbench run`: plan -> (valid) -> compile -> execute + verify -> measure ->
 * record, one case at a time, each record flushed as the case ends. */
#include "run.h"
#include "defines.h"
#include "modules.h"
#include "kb_nvrtc.h"
#include "plan.h"
#include "record.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
    signal(sig, SIG_DFL); /* a second Ctrl-C ends the process at once */
}

/* The status word of a record. */
static const char *status_word(kb_status st, int wrong)
{
    if (wrong)
        return "wrong";
    switch (st) {
    case KB_OK: return "ok";
    case KB_ERR_COMPILE: return "compile_error";
    case KB_ERR_FAULT: return "fault";
    case KB_ERR_TIMEOUT: return "timeout";
    default: return "launch_error";
    }
}

static int id_selected(const kb_run_opts *o, const char *id)
{
    if (o->n_filters == 0)
        return 1;
    for (int i = 0; i < o->n_filters; i++)
        if (strstr(id, o->filters[i]))
            return 1;
    return 0;
}

static void make_run_id(char *out, size_t n, const char *suite)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char ts[20];
    strftime(ts, sizeof ts, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(out, n, "%.12s-%s-%d", suite, ts, (int)getpid());
}

/* Measurement settings: the suite entry's, overridden by the command line; on the
 * emulator fewer samples by default, since CPU timings are not the point there. */
static kb_measure_opts measure_opts(const kb_run_opts *o, const kb_plan_entry *e, int emu)
{
    kb_measure_opts m = { e->warmup, e->min_samples, 0, e->max_noise, e->timeout_s };
    if (emu) {
        if (m.min_samples > 3) m.min_samples = 3;
        if (m.timeout_s > 1.0) m.timeout_s = 1.0;
        m.max_samples = 10;
    } else {
        m.max_samples = 100000;
    }
    if (o->min_samples > 0) m.min_samples = o->min_samples;
    if (o->max_samples > 0) m.max_samples = o->max_samples;
    if (o->timeout_s > 0) m.timeout_s = o->timeout_s;
    if (m.max_samples < m.min_samples) m.max_samples = m.min_samples;
    return m;
}

typedef struct {
    int total, ok, skipped, wrong, failed, resumed;
} tally;

/* Progress on stderr: rewritten in place on a terminal; on a log (CI) a line at every
 * tenth of the run, so long runs show where they are without flooding the log. */
typedef struct {
    int tty;
    int64_t n;          /* cases to run */
    int64_t done;
    int64_t next_mark;  /* non-tty: print when done reaches this */
    struct timespec t0;
} progress;

static double since_s(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void fmt_dur(char *out, size_t n, double s)
{
    long v = (long)(s + 0.5);
    if (v >= 3600)
        snprintf(out, n, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else
        snprintf(out, n, "%ld:%02ld", v / 60, v % 60);
}

static void progress_clear(const progress *pg)
{
    if (pg->tty)
        fputs("\r\033[K", stderr);
}

static void progress_step(progress *pg)
{
    pg->done++;
    if (!pg->tty && pg->done < pg->next_mark && pg->done != pg->n)
        return;
    pg->next_mark = pg->done + (pg->n >= 10 ? pg->n / 10 : 1);
    double el = since_s(&pg->t0);
    double left = pg->done ? el / pg->done * (pg->n - pg->done) : 0;
    char a[32], b[32];
    fmt_dur(a, sizeof a, el);
    fmt_dur(b, sizeof b, left);
    fprintf(stderr, "%s[%lld/%lld] %s elapsed, ~%s left%s", pg->tty ? "\r\033[K" : "kbench: progress ",
            (long long)pg->done, (long long)pg->n, a, b, pg->tty ? "" : "\n");
    fflush(stderr);
}

static void print_header(int emu, int quiet)
{
    if (quiet)
        return;
    printf("%-9s %-64s %-13s %10s %10s %12s\n", "", "case", "status", "max_abs", "err/tol",
           emu ? "cpu_median_us" : "median_us");
}

static void print_row(int i, int n, const char *id, const char *status, const kb_verify *v, int have_v,
                      const kb_measurement *m, int have_m, const char *reason, int quiet)
{
    if (quiet)
        return;
    char pos[32];
    snprintf(pos, sizeof pos, "[%d/%d]", i + 1, n);
    printf("%-9s %-64s %-13s", pos, id, status);
    if (have_v)
        printf(" %10.2e %10.3f", v->max_abs_err, v->max_err_ratio);
    else
        printf(" %10s %10s", "-", "-");
    if (have_m)
        printf(" %12.2f", m->st.median);
    else
        printf(" %12s", "-");
    if (reason && *reason)
        printf("  %s", reason);
    putchar('\n');
    fflush(stdout);
}

/* Run one case to its record. Returns 1 when the case counts as a failure. */
static int run_case(const kb_run_opts *o, const kb_plan *p, int idx, const kb_backend *be, kb_backend_ctx *bx,
                    const kb_device_info *dev, kb_modules *mods, kb_recorder *rec, const char *run_id,
                    const char *id, tally *t)
{
    const kb_case *c = &p->cases[idx];
    const kb_family *f = kb_families[c->family];
    const char *entry = f->variants[c->variant].entry;
    kb_target tgt = { dev->sm, dev->is_emulator, dev->max_shmem_per_block_optin };
    kb_result res;
    memset(&res, 0, sizeof res);
    snprintf(res.run_id, sizeof res.run_id, "%s", run_id);
    res.family = f;
    res.c = c;
    res.case_id = id;
    res.backend = be->name;
    res.dev = dev;
    res.check_shape = c->check_shape;
    res.have_work = 1;
    res.work = f->work(c);
    res.clock = dev->is_emulator ? "cpu" : "gpu";

    char why[1200] = "";
    kb_run r;
    memset(&r, 0, sizeof r);
    kb_measurement m = { 0 };
    void *state = NULL;
    kb_status st = KB_OK;
    int wrong = 0, have_m = 0;
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);

    if (!f->valid(c, &tgt, why, sizeof why)) {
        res.status_name_override = "skipped";
        res.reason = why;
        t->skipped++;
        kb_record_write(rec, &res);
        print_row(idx, (int)p->n_cases, id, "skipped", NULL, 0, NULL, 0, why, o->quiet);
        return 0;
    }

    kb_sb defs;
    kb_sb_init(&defs);
    kb_case_defines(f, c, &defs);
    const kb_module_ref *mr = kb_modules_get(mods, f->source, defs.s, dev->sm);
    kb_sb_free(&defs);
    res.compile_ms = mr->compile_ms;
    res.compile_log = mr->log;
    if (mr->status != KB_OK) {
        st = mr->status;
        snprintf(why, sizeof why, "%s did not %s for sm_%d (log in the record)", f->source,
                 st == KB_ERR_COMPILE ? "compile" : "load", dev->sm);
        goto record;
    }
    if (be->resources && be->resources(bx, mr->mod, entry, &res.res) == KB_OK) {
        kb_resources parsed;
        if (!dev->is_emulator && kb_ptxas_parse(mr->log, entry, &parsed) == 0) {
            res.res.spill_store_bytes = parsed.spill_store_bytes;
            res.res.spill_load_bytes = parsed.spill_load_bytes;
        }
        res.have_resources = 1;
    }

    r.be = be;
    r.bx = bx;
    r.mod = mr->mod;
    r.f = f;
    r.c = c;
    r.target = tgt;
    if ((st = f->setup(&r, &state)) != KB_OK)
        goto record;
    /* validate before timing: one execution, then compare with the reference */
    if ((st = f->enqueue(&r, state)) != KB_OK)
        goto record;
    if ((st = be->sync(bx)) != KB_OK) {
        kb_run_fail(&r, st, "synchronise: %s", be->last_error(bx));
        goto record;
    }
    if ((st = f->check(&r, state, &res.verify)) != KB_OK)
        goto record;
    res.verified = 1;
    /* --dump: every selected case when a filter chose them, else the failing ones */
    if (o->dump_dir && (o->n_filters > 0 || res.verify.n_bad > 0) && kb_run_dump(&r, o->dump_dir, id) != KB_OK)
        fprintf(stderr, "kbench: %s\n", r.err);
    if (res.verify.n_bad > 0) {
        wrong = 1;
        snprintf(why, sizeof why, "%lld of %lld elements outside tolerance; first at %lld: got %.6g want %.6g",
                 (long long)res.verify.n_bad, (long long)res.verify.n, (long long)res.verify.first_bad,
                 res.verify.got_at_bad, res.verify.want_at_bad);
        goto record;
    }
    kb_measure_opts mo = measure_opts(o, &p->entries[c->entry], dev->is_emulator);
    if ((st = kb_measure_case(&r, state, &mo, &m)) != KB_OK)
        goto record;
    have_m = 1;
    res.have_timing = 1;
    res.n_samples = m.n;
    res.median_us = m.st.median;
    res.mean_us = m.st.mean;
    res.min_us = m.st.min;
    res.max_us = m.st.max;
    res.p10_us = m.st.p10;
    res.p90_us = m.st.p90;
    res.cv = m.st.cv;
    res.samples_us = m.samples_us;
    res.n_samples_kept = m.n;

record:
    if (st != KB_OK && !why[0])
        snprintf(why, sizeof why, "%s", r.err[0] ? r.err : be->last_error(bx));
    if (state)
        f->teardown(&r, state);
    kb_run_free_all(&r);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    res.wall_ms = (w1.tv_sec - w0.tv_sec) * 1e3 + (w1.tv_nsec - w0.tv_nsec) * 1e-6;
    res.status = st;
    res.status_name_override = status_word(st, wrong);
    res.reason = why;
    kb_record_write(rec, &res);
    print_row(idx, (int)p->n_cases, id, res.status_name_override, &res.verify, res.verified, &m, have_m, why,
              o->quiet);
    kb_measurement_free(&m);
    if (st == KB_OK && !wrong) {
        t->ok++;
        return 0;
    }
    if (wrong)
        t->wrong++;
    else
        t->failed++;
    return 1;
}

int kb_cmd_run(const kb_run_opts *o)
{
    int rc = KB_EXIT_SETUP;
    char err[1024] = "";
    const kb_backend *be = NULL;
    kb_backend_ctx *bx = NULL;
    kb_plan plan;
    int have_plan = 0;
    kb_modules *mods = NULL;
    kb_recorder *rec = NULL;
    kb_strset done;
    kb_strset_init(&done);
    kb_sb sb, id;
    kb_sb_init(&sb);
    kb_sb_init(&id);
    tally t = { 0 };

    kb_backend_opts bo = { o->cache_dir, o->device_index, o->sm_override, o->emu_threads };
    kb_status st = kb_backend_open(o->backend, &bo, &be, &bx, err, sizeof err);
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        rc = st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
        goto out;
    }
    kb_device_info dev;
    if ((st = be->device_info(bx, &dev)) != KB_OK) {
        fprintf(stderr, "kbench: device query: %s\n", be->last_error(bx));
        goto out;
    }
    int check_shapes = dev.is_emulator && !o->full_shapes;
    if ((st = kb_suite_plan(o->suite_path, kb_families, kb_n_families, check_shapes, &plan, &sb)) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", sb.s);
        rc = st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
        goto out;
    }
    have_plan = 1;
    for (int i = 0; i < plan.n_warnings; i++)
        fprintf(stderr, "kbench: warning: %s\n", plan.warnings[i]);

    /* where the records go, and what a resumed run already holds */
    char run_id[40];
    make_run_id(run_id, sizeof run_id, plan.suite_name);
    kb_sb_clear(&sb);
    const char *out_path = o->resume_path ? o->resume_path : o->out_path;
    if (!out_path) {
        kb_sb_printf(&sb, "results/%s.jsonl", run_id);
        out_path = sb.s;
    }
    if (o->resume_path) {
        kb_sb e2;
        kb_sb_init(&e2);
        if (kb_record_finished(o->resume_path, &done, &e2) != KB_OK) {
            fprintf(stderr, "kbench: --resume: %s\n", e2.s);
            kb_sb_free(&e2);
            rc = KB_EXIT_INPUT;
            goto out;
        }
        kb_sb_free(&e2);
    }
    if (kb_record_open(out_path, &rec) != KB_OK) {
        fprintf(stderr, "kbench: cannot write records to %s: %s\n", out_path, strerror(errno));
        rc = KB_EXIT_SETUP;
        goto out;
    }
    mods = kb_modules_new(be, bx, o->cache_dir, kb_kernels_dir());

    fprintf(stderr, "kbench: suite %s: %lld cases on %s (%s, sm_%d)%s\n", plan.suite_name,
            (long long)plan.n_cases, be->name, dev.name, dev.sm,
            check_shapes ? "; emulator runs the suite's check shapes" : "");
    if (dev.is_emulator)
        fprintf(stderr, "kbench: emulator timings are CPU time, not GPU numbers\n");
    print_header(dev.is_emulator, o->quiet);

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    /* the cases this run will execute, for the progress line */
    progress pg = { isatty(2), 0, 0, 0, { 0, 0 } };
    for (int64_t i = 0; i < plan.n_cases; i++) {
        kb_case_id(&plan.cases[i], &id);
        pg.n += id_selected(o, id.s) && !kb_strset_has(&done, id.s);
    }
    clock_gettime(CLOCK_MONOTONIC, &pg.t0);

    for (int64_t i = 0; i < plan.n_cases && !interrupted; i++) {
        kb_case_id(&plan.cases[i], &id);
        if (!id_selected(o, id.s))
            continue;
        t.total++;
        if (kb_strset_has(&done, id.s)) {
            t.resumed++;
            continue;
        }
        progress_clear(&pg);
        run_case(o, &plan, (int)i, be, bx, &dev, mods, rec, run_id, id.s, &t);
        progress_step(&pg);
    }
    progress_clear(&pg);

    fprintf(stderr, "kbench: %d cases: %d ok, %d skipped, %d wrong, %d failed%s; records in %s\n", t.total,
            t.ok, t.skipped, t.wrong, t.failed, t.resumed ? " (some already recorded)" : "", out_path);
    if (t.resumed)
        fprintf(stderr, "kbench: %d cases were already recorded in %s and were not run again\n", t.resumed,
                out_path);
    if (interrupted) {
        fprintf(stderr, "kbench: interrupted; every finished case is recorded. Continue with --resume %s\n",
                out_path);
        rc = KB_EXIT_INTERRUPTED;
    } else {
        rc = (t.wrong || t.failed) ? KB_EXIT_WRONG : KB_EXIT_OK;
    }
out:
    if (rec)
        kb_record_close(rec);
    kb_strset_free(&done);
    kb_modules_free(mods);
    if (have_plan)
        kb_plan_free(&plan);
    if (bx)
        be->fini(bx);
    kb_sb_free(&id);
    kb_sb_free(&sb);
    return rc;
}
