/* run.c - `kbench run`: plan -> valid -> compile -> execute + verify -> measure ->
 * derive -> record, one case at a time, each record flushed as the case ends. */
#include "cli/run.h"
#include "cli/console.h"
#include "engine/defines.h"
#include "engine/derive.h"
#include "backend/cuda/kb_nvrtc.h"
#include "engine/launch_overhead.h"
#include "engine/modules.h"
#include "backend/cuda/nvml.h"
#include "backend/cuda/nvtx.h"
#include "engine/peaks.h"
#include "suite/plan.h"
#include "results/record.h"
#include "results/store.h"

#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
    signal(sig, SIG_DFL); /* a second Ctrl-C ends the process at once */
}

/* What every case of one run shares. */
typedef struct {
    const kb_run_opts *o;
    const kb_plan *plan;
    const kb_backend *be;
    kb_backend_ctx *bx;
    kb_device_info dev;
    const char *clock;          /* "cpu" on the emulator, "gpu" on a device */
    kb_peaks peaks;
    int have_peaks;
    kb_modules *mods;
    const kb_module_ref *empty; /* kb_empty.cu, the launch-overhead floor */
    kb_l2_flush flush;          /* cold-L2 scratch, allocated once */
    int have_flush;
    kb_nvml *nvml;              /* NULL on the emulator */
    kb_recorder *rec;
    kb_store *store;            /* NULL when the store cannot be opened (records still written) */
    const char *out_path;
    char run_id[40];
    int id_width;               /* console column: the longest id of the run */
    int ok, skipped, wrong, failed, resumed;
    int record_failed;          /* a record could not be written: the run stops */
} run_ctx;

int kb_run_selects(const kb_run_opts *o, const char *id)
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

/* Measurement settings: the suite entry's, then the emulator's limits (CPU timings are
 * not the point there, so few samples), then the command line. */
static kb_measure_opts measure_opts(const run_ctx *x, const kb_plan_entry *e)
{
    const kb_run_opts *o = x->o;
    kb_measure_opts m = kb_measure_opts_from_entry(e);
    if (x->dev.is_emulator) {
        if (m.min_samples > 3) m.min_samples = 3;
        if (m.timeout_s > 1.0) m.timeout_s = 1.0;
        m.max_samples = 10;
    }
    if (o->min_samples > 0) m.min_samples = o->min_samples;
    if (o->max_samples > 0) m.max_samples = o->max_samples;
    /* an explicit --max-samples below the suite's min_samples is a bound, not a hint */
    if (o->max_samples > 0 && o->min_samples <= 0 && m.min_samples > m.max_samples)
        m.min_samples = m.max_samples;
    if (o->timeout_s > 0) m.timeout_s = o->timeout_s;
    if (m.max_samples > 0 && m.max_samples < m.min_samples) m.max_samples = m.min_samples;
    m.flush = x->have_flush ? &x->flush : NULL;
    return m;
}

/* Timing, derived rates, launch overhead and telemetry of a verified case. */
static kb_status measure(run_ctx *x, kb_run *r, void *state, kb_measurement *m, kb_result *res)
{
    const kb_case *c = r->c;
    kb_measure_opts mo = measure_opts(x, &x->plan->entries[c->entry]);
    kb_status st = kb_measure_case(r, state, &mo, m);
    if (st != KB_OK)
        return st;
    kb_measurement_to_result(m, x->clock, res);
    res->l2_mode = kb_l2_mode_name(m->l2);
    res->flush_bytes = (double)m->flush_bytes;
    res->stop_reason = kb_measure_stop_name(m->stop);
    kb_derive(&res->work, m->st.median, x->have_peaks ? &x->peaks : NULL, c->dtype, &res->derived);
    res->have_derived = 1;

    /* eager vs graph launch overhead, once per problem: the graph twin of a case would
     * measure the same thing */
    if (c->launch == KB_LAUNCH_EAGER && x->be->graph_begin) {
        kb_overhead ov = { .empty = x->empty && x->empty->status == KB_OK ? x->empty->mod : NULL };
        int n = kb_launch_overhead_n(m->st.median, x->dev.is_emulator);
        if (kb_launch_overhead(r, state, n, &ov) == KB_OK)
            res->launch_overhead = kb_overhead_json(&ov, x->clock);
        else
            fprintf(stderr, "kbench: launch overhead not measured: %s\n", r->err);
    }
    if (x->nvml) {
        kb_nvml_sample tel;
        kb_nvml_read(x->nvml, &tel);
        res->telemetry = kb_nvml_json(&tel, kb_nvml_why(x->nvml));
        if (tel.available && tel.throttled)
            fprintf(stderr, "kbench: %s: the GPU was throttling during this case\n", res->case_id);
    }
    return KB_OK;
}

/* Run one case to its record (x->record_failed when it could not be written). */
static void run_case(run_ctx *x, int64_t idx, const char *id)
{
    const kb_run_opts *o = x->o;
    const kb_case *c = &x->plan->cases[idx];
    const kb_family *f = kb_families[c->family];
    const char *entry = f->variants[c->variant].entry;
    kb_target tgt = { x->dev.sm, x->dev.is_emulator, x->dev.max_shmem_per_block_optin };
    kb_result res;
    memset(&res, 0, sizeof res);
    snprintf(res.run_id, sizeof res.run_id, "%s", x->run_id);
    res.family = f;
    res.c = c;
    res.case_id = id;
    res.backend = x->be->name;
    res.dev = &x->dev;
    res.check_shape = c->check_shape;
    res.have_work = 1;
    res.work = f->work(c);
    res.clock = x->clock;

    char why[1200] = "";
    kb_run r;
    memset(&r, 0, sizeof r);
    kb_measurement m = { 0 };
    void *state = NULL;
    kb_status st = KB_OK;
    struct timespec w0, w1;
    clock_gettime(CLOCK_MONOTONIC, &w0);
    kb_nvtx_push(id);

    if (!f->valid(c, &tgt, why, sizeof why)) {
        res.status_name_override = "skipped";
        goto record;
    }
    kb_sb defs;
    kb_sb_init(&defs);
    kb_case_defines(f, c, &defs);
    const kb_module_ref *mr = kb_modules_get(x->mods, f->source, defs.s, x->dev.sm);
    kb_sb_free(&defs);
    res.compile_ms = mr->compile_ms;
    res.compile_log = mr->log;
    if ((st = mr->status) != KB_OK) {
        snprintf(why, sizeof why, "%s did not %s for sm_%d (log in the record)", f->source,
                 st == KB_ERR_COMPILE ? "compile" : "load", x->dev.sm);
        goto record;
    }
    if (x->be->resources && x->be->resources(x->bx, mr->mod, entry, &res.res) == KB_OK) {
        kb_resources parsed; /* spills are only in the ptxas log */
        if (!x->dev.is_emulator && kb_ptxas_parse(mr->log, entry, &parsed) == 0) {
            res.res.spill_store_bytes = parsed.spill_store_bytes;
            res.res.spill_load_bytes = parsed.spill_load_bytes;
        }
        res.have_resources = 1;
    }

    r.be = x->be;
    r.bx = x->bx;
    r.mod = mr->mod;
    r.f = f;
    r.c = c;
    r.target = tgt;
    if ((st = f->setup(&r, &state)) != KB_OK)
        goto record;
    /* validate before timing: one execution, compared with the reference */
    if ((st = f->enqueue(&r, state)) != KB_OK)
        goto record;
    if ((st = x->be->sync(x->bx)) != KB_OK) {
        kb_run_fail(&r, st, "synchronise: %s", x->be->last_error(x->bx));
        goto record;
    }
    if ((st = f->check(&r, state, &res.verify)) != KB_OK)
        goto record;
    res.verified = 1;
    /* --dump: every selected case when a filter chose them, else the failing ones */
    if (o->dump_dir && (o->n_filters > 0 || res.verify.n_bad > 0) && kb_run_dump(&r, o->dump_dir, id) != KB_OK)
        fprintf(stderr, "kbench: %s\n", r.err);
    if (res.verify.n_bad > 0) {
        snprintf(why, sizeof why, "%lld of %lld elements outside tolerance; first at %lld: got %.6g want %.6g",
                 (long long)res.verify.n_bad, (long long)res.verify.n, (long long)res.verify.first_bad,
                 res.verify.got_at_bad, res.verify.want_at_bad);
        goto record;
    }
    st = measure(x, &r, state, &m, &res);

record:
    if (st != KB_OK && !why[0])
        snprintf(why, sizeof why, "%s", r.err[0] ? r.err : x->be->last_error(x->bx));
    if (state)
        f->teardown(&r, state);
    kb_run_free_all(&r);
    clock_gettime(CLOCK_MONOTONIC, &w1);
    res.wall_ms = (w1.tv_sec - w0.tv_sec) * 1e3 + (w1.tv_nsec - w0.tv_nsec) * 1e-6;
    res.status = st;
    res.reason = why;
    const char *status = kb_result_status(&res);
    if (kb_record_write(x->rec, &res) != KB_OK)
        x->record_failed = 1; /* kb_record_write said why on stderr */
    if (x->store) {
        kb_sb err;
        kb_sb_init(&err);
        if (kb_store_put_result(x->store, &res, x->out_path, &err) != KB_OK)
            fprintf(stderr, "kbench: results store: %s (the JSON Lines record is written)\n", err.s);
        kb_sb_free(&err);
    }
    if (!o->quiet)
        kb_console_row(x->id_width, idx, x->plan->n_cases, id, status, res.verified ? &res.verify : NULL,
                       res.have_timing ? &m : NULL, res.derived.have_rates ? res.derived.gbps : 0, why);
    kb_nvtx_pop();
    json_decref(res.launch_overhead);
    json_decref(res.telemetry);
    kb_measurement_free(&m);

    if (!strcmp(status, "ok"))
        x->ok++;
    else if (!strcmp(status, "skipped"))
        x->skipped++;
    else if (!strcmp(status, "wrong"))
        x->wrong++;
    else
        x->failed++;
}

/* Open what a run needs beyond the backend: peaks, flush buffer, telemetry, stores. */
static void open_run_services(run_ctx *x, const char *out_path)
{
    kb_sb note;
    kb_sb_init(&note);
    x->have_peaks = kb_peaks_for_device(&x->dev, NULL, &x->peaks, &note) == KB_OK;
    if (!x->have_peaks)
        fprintf(stderr, "kbench: peaks: %s (rates without %% of roofline)\n", note.s);
    char err[512];
    x->have_flush = kb_l2_flush_alloc(x->be, x->bx, &x->dev, &x->flush, err, sizeof err) == KB_OK;
    if (!x->have_flush)
        fprintf(stderr, "kbench: L2 flush buffer: %s (each case allocates its own)\n", err);
    if (!x->dev.is_emulator)
        x->nvml = kb_nvml_open(x->dev.pci_bus_id, x->dev.uuid);
    x->empty = kb_modules_get(x->mods, KB_EMPTY_SOURCE, "", x->dev.sm);

    /* the SQLite store sits beside the records: results/kbench.db by default */
    char *dir = strdup(out_path);
    kb_sb db;
    kb_sb_init(&db);
    kb_sb_printf(&db, "%s/kbench.db", dirname(dir));
    kb_sb_clear(&note);
    if (kb_store_open(db.s, &x->store, &note) != KB_OK) {
        fprintf(stderr, "kbench: results store %s: %s (JSON Lines records only)\n", db.s, note.s);
        x->store = NULL;
    }
    free(dir);
    kb_sb_free(&db);
    kb_sb_free(&note);
}

int kb_cmd_run(const kb_run_opts *o)
{
    int rc = KB_EXIT_SETUP;
    char err[1024] = "";
    run_ctx x;
    memset(&x, 0, sizeof x);
    x.o = o;
    kb_plan plan;
    memset(&plan, 0, sizeof plan);
    x.plan = &plan;
    kb_strset done;
    kb_strset_init(&done);
    kb_sb sb, id;
    kb_sb_init(&sb);
    kb_sb_init(&id);

    kb_backend_opts bo = { o->cache_dir, o->device_index, o->sm_override, o->emu_threads };
    kb_status st = kb_backend_open(o->backend, &bo, &x.be, &x.bx, err, sizeof err);
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        rc = st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
        goto out;
    }
    if ((st = x.be->device_info(x.bx, &x.dev)) != KB_OK) {
        fprintf(stderr, "kbench: device query: %s\n", x.be->last_error(x.bx));
        goto out;
    }
    x.clock = x.dev.is_emulator ? "cpu" : "gpu";
    int check_shapes = x.dev.is_emulator && !o->full_shapes;
    if ((st = kb_suite_plan(o->suite_path, kb_families, kb_n_families, check_shapes, &plan, &sb)) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", sb.s);
        rc = st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
        goto out;
    }
    for (int i = 0; i < plan.n_warnings; i++)
        fprintf(stderr, "kbench: warning: %s\n", plan.warnings[i]);

    /* where the records go, and what a resumed run already holds */
    make_run_id(x.run_id, sizeof x.run_id, plan.suite_name);
    kb_sb_clear(&sb);
    x.out_path = o->resume_path ? o->resume_path : o->out_path;
    if (!x.out_path) {
        kb_sb_printf(&sb, "results/%s.jsonl", x.run_id);
        x.out_path = sb.s;
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
    if (kb_record_open(x.out_path, &x.rec) != KB_OK) {
        fprintf(stderr, "kbench: cannot write records to %s\n", x.out_path);
        goto out;
    }
    x.mods = kb_modules_new(x.be, x.bx, o->cache_dir, kb_kernels_dir());
    open_run_services(&x, x.out_path);

    fprintf(stderr, "kbench: suite %s: %lld cases on %s (%s, sm_%d)%s\n", plan.suite_name,
            (long long)plan.n_cases, x.be->name, x.dev.name, x.dev.sm,
            check_shapes ? "; the emulator runs the suite's check shapes" : "");
    if (x.dev.is_emulator)
        fprintf(stderr, "kbench: emulator timings are CPU time, not GPU numbers\n");

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* the case in flight runs to its record: blocking calls must not fail with EINTR */
    sa.sa_flags = SA_RESTART;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    /* Overlapping entries can plan the same case twice: it runs once (a second record
     * with the same id would also make --resume ambiguous). */
    kb_progress pg;
    int64_t todo = 0, repeats = 0;
    kb_strset seen;
    kb_strset_init(&seen);
    x.id_width = 4;
    for (int64_t i = 0; i < plan.n_cases; i++) {
        kb_case_id(&plan.cases[i], &id);
        if (!kb_strset_add(&seen, id.s)) {
            repeats++;
            continue;
        }
        if (kb_run_selects(o, id.s) && !kb_strset_has(&done, id.s)) {
            todo++;
            if ((int)id.len > x.id_width)
                x.id_width = (int)id.len;
        }
    }
    kb_strset_free(&seen);
    kb_strset_init(&seen);
    if (repeats)
        fprintf(stderr, "kbench: %lld planned cases repeat an earlier entry's case; each runs once\n",
                (long long)repeats);
    if (!o->quiet)
        kb_console_header(x.dev.is_emulator, x.id_width);
    kb_progress_start(&pg, todo);
    int device_lost = 0;
    for (int64_t i = 0; i < plan.n_cases && !interrupted; i++) {
        kb_case_id(&plan.cases[i], &id);
        if (!kb_run_selects(o, id.s) || !kb_strset_add(&seen, id.s))
            continue;
        if (kb_strset_has(&done, id.s)) {
            x.resumed++;
            continue;
        }
        kb_progress_clear(&pg);
        run_case(&x, i, id.s);
        kb_progress_step(&pg);
        if (x.record_failed) {
            kb_progress_clear(&pg);
            fprintf(stderr, "kbench: the record of %s could not be written; stopping the run\n", id.s);
            break;
        }
        /* A sticky fault (illegal address, launch timeout, ...) leaves the CUDA context
         * unusable: every later call would fail with the same error, and each later case
         * would be recorded as a fault of its own. The case that faulted is recorded; the
         * rest are left for a new process (--resume). On the emulator sync always works. */
        if (x.be->sync(x.bx) != KB_OK) {
            kb_progress_clear(&pg);
            fprintf(stderr, "kbench: the device is unusable after %s (%s); the remaining cases were not run\n",
                    id.s, x.be->last_error(x.bx));
            device_lost = 1;
            break;
        }
    }
    kb_progress_clear(&pg);
    kb_strset_free(&seen);

    fprintf(stderr, "kbench: %d cases: %d ok, %d skipped, %d wrong, %d failed; records in %s\n",
            x.ok + x.skipped + x.wrong + x.failed, x.ok, x.skipped, x.wrong, x.failed, x.out_path);
    if (x.resumed)
        fprintf(stderr, "kbench: %d cases were already recorded in %s and were not run again\n", x.resumed,
                x.out_path);
    if (interrupted) {
        fprintf(stderr, "kbench: interrupted; every finished case is recorded. Continue with --resume %s\n",
                x.out_path);
        rc = KB_EXIT_INTERRUPTED;
    } else if (device_lost) {
        fprintf(stderr, "kbench: continue in a new process with --resume %s\n", x.out_path);
        rc = KB_EXIT_WRONG;
    } else if (x.record_failed) {
        rc = KB_EXIT_SETUP;
    } else {
        rc = (x.wrong || x.failed) ? KB_EXIT_WRONG : KB_EXIT_OK;
    }
out:
    if (x.have_flush)
        kb_l2_flush_free(x.be, x.bx, &x.flush);
    kb_nvml_close(x.nvml);
    kb_store_close(x.store);
    kb_record_close(x.rec);
    kb_strset_free(&done);
    kb_modules_free(x.mods);
    kb_plan_free(&plan);
    if (x.bx)
        x.be->fini(x.bx);
    kb_sb_free(&id);
    kb_sb_free(&sb);
    return rc;
}
