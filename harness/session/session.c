/* session.c - a session (see session.h): opening it, its plan and its one walk, its
 * outputs, its pipeline, running its cases, and what a command reads of it. */
#include "session/session.h"

#include "core/fsutil.h"
#include "core/report.h"
#include "engine/defines.h"
#include "engine/setup.h"
#include "results/ceilings.h"
#include "results/record.h"
#include "results/record_json.h"
#include "session/prune.h"
#include "session/sink_files.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct kb_session {
    kb_session_opts o;
    const kb_backend *be;          /* NULL offline without a build */
    kb_backend_ctx *bx;            /* NULL offline */
    kb_device_info dev;            /* zeroed offline */
    unsigned plan_caps;            /* the caps the plan's shapes are chosen for */
    kb_target target;              /* what valid() is asked about and kernels are compiled for */
    kb_plan own_plan;              /* kb_session_plan's */
    const kb_plan *plan;           /* own_plan or an adopted one; NULL before either */
    kb_cases cases;                /* the one walk (kb_session_select) */
    kb_sinks sinks;
    char run_id[64];
    kb_modules *mods;
    int workers;                   /* compile workers running */
    int started;                   /* kb_session_start ran */
    kb_pipeline pipe;
    kb_peaks peaks;
    kb_l2_flush flush;             /* cold-L2 scratch, allocated once */
    int have_flush;
    char *store_path;              /* the store a sink writes, where the ceilings come from */
    int ceilings_tried;
    kb_session_tally tally;
};

/* ---- opening ---- */

static kb_status open_device(kb_session *s, kb_sb *err)
{
    char msg[1024] = "";
    kb_status st = kb_backend_open(s->o.backend, &s->o.bo, &s->be, &s->bx, msg, sizeof msg);
    if (st != KB_OK) {
        s->bx = NULL;
        kb_sb_printf(err, "%s", msg);
        return st;
    }
    if (s->be->device_info(s->bx, &s->dev) != KB_OK) {
        kb_sb_printf(err, "device query: %s", s->be->last_error(s->bx));
        return KB_ERR_SETUP;
    }
    if (s->dev.toolchain_unusable && !s->o.keep_unusable) {
        /* every module would fail to load: stop before the first case, with the fix */
        kb_sb_printf(err, "%s (%s): %s", s->dev.name, s->be->name, s->dev.toolchain_note);
        return KB_ERR_SETUP;
    }
    s->plan_caps = s->dev.caps;
    s->target = (kb_target){ kb_target_sm(&s->dev), s->dev.caps, s->dev.max_shmem_per_block_optin };
    return KB_OK;
}

/* No device: the caps of the backend's table plan the shapes, --arch (default sm_90) is
 * the target; a build session compiles with that backend's compiler alone. */
static kb_status open_offline(kb_session *s, kb_sb *err)
{
    s->plan_caps = kb_backend_caps_of(s->o.backend);
    int sm = s->o.bo.sm_override ? s->o.bo.sm_override : 90;
    s->target = (kb_target){ sm, s->o.judge_caps ? s->plan_caps : 0, kb_arch_max_shmem_optin(sm) };
    if (!s->o.build)
        return KB_OK;
    if (!(s->be = kb_backend_find(s->o.backend))) {
        kb_sb_printf(err, "unknown backend '%s' (expected cuda or emu)", s->o.backend);
        return KB_ERR_INPUT;
    }
    if (s->o.build_ptx && s->be == &kb_backend_cuda)
        s->be = &kb_backend_cuda_ptx;
    /* the compiler's own list, read at run time (an older NVRTC lacks sm_100): before anything */
    char why[768];
    int r = kb_be_compiles_for(s->be, sm, why, sizeof why);
    if (r <= 0)
        kb_sb_printf(err, "--arch %s: %s", kb_arch_name(sm), why);
    return r > 0 ? KB_OK : r == 0 ? KB_ERR_INPUT : KB_ERR_SETUP;
}

kb_status kb_session_open(const kb_session_opts *o, kb_session **out, kb_sb *err)
{
    *out = NULL;
    kb_session *s = calloc(1, sizeof *s);
    if (!s) {
        kb_sb_printf(err, "out of memory opening a session");
        return KB_ERR_OOM;
    }
    s->o = *o;
    kb_status st = o->offline ? open_offline(s, err) : open_device(s, err);
    if (st != KB_OK) {
        kb_session_close(s);
        return st;
    }
    *out = s;
    return KB_OK;
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

kb_status kb_session_check_setup(kb_session *s, kb_sb *err)
{
    if (kb_setup_check(s->o.bo.cache_dir, err) != KB_OK)
        return KB_ERR_SETUP;
    return check_dump_dir(s->o.dump_dir, err);
}

/* ---- the plan and its one walk ---- */

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

kb_status kb_session_plan(kb_session *s, kb_sb *err)
{
    kb_status st = kb_walk_plan(s->o.suite_path, s->plan_caps, s->o.full_shapes, &s->own_plan, err);
    if (st != KB_OK)
        return st;
    s->plan = &s->own_plan;
    make_run_id(s->run_id, sizeof s->run_id, s->plan->suite_name);
    return KB_OK;
}

void kb_session_adopt_plan(kb_session *s, const kb_plan *p)
{
    s->plan = p;
    if (!s->run_id[0])
        make_run_id(s->run_id, sizeof s->run_id, p->suite_name);
}

kb_status kb_session_select(kb_session *s, const char *const *filters, int n_filters)
{
    kb_cases_free(&s->cases);
    kb_walk_opts wo = { filters, n_filters, NULL, s->target };
    return kb_cases_build(s->plan, &wo, &s->cases);
}

/* ---- outputs ---- */

kb_status kb_session_add_sink(kb_session *s, kb_sink k) { return kb_sinks_add(&s->sinks, k); }

kb_status kb_session_records(kb_session *s, const char *path, const char *resume, kb_sb *err)
{
    kb_sink k;
    kb_status st = kb_sink_jsonl_open(path, s->plan->suite_name, &k, err);
    if (st == KB_OK && (st = kb_session_add_sink(s, k)) != KB_OK)
        kb_sb_printf(err, "out of memory adding the records file %s", path);
    if (st != KB_OK || !resume)
        return st;
    kb_strset done;
    kb_strset_init(&done);
    if ((st = kb_record_finished(resume, &done, err)) != KB_OK)
        kb_sb_printf(err, " (--resume)");
    else
        kb_cases_mark_done(&s->cases, &done);
    kb_strset_free(&done);
    return st;
}

/* The device's measured ceilings from the store, once both the store and the peaks are
 * there: the measured and path roofs. */
static void load_ceilings(kb_session *s)
{
    if (s->ceilings_tried || !s->store_path || !s->pipe.peaks)
        return;
    s->ceilings_tried = 1;
    if (kb_ceilings_load(s->store_path, &s->dev, &s->peaks) > 0)
        kb_report(KB_REPORT_INFO, "%s", s->peaks.measured_note);
}

void kb_session_store(kb_session *s, const char *db_path, const char *records_path)
{
    kb_sb note;
    kb_sb_init(&note);
    kb_sink k;
    if (kb_sink_store_open(db_path, records_path, &k, &note) != KB_OK)
        kb_report(KB_REPORT_ERROR, "results store %s: %s (JSON Lines records only)", db_path, note.s);
    else if (kb_session_add_sink(s, k) == KB_OK && (s->store_path = strdup(db_path)))
        load_ceilings(s);
    kb_sb_free(&note);
}

kb_status kb_session_trace(kb_session *s, const char *path, const char *title, kb_sb *err)
{
    kb_sink k;
    kb_status st = kb_sink_trace_open(path, title, &k, err);
    return st == KB_OK ? kb_session_add_sink(s, k) : st;
}

void kb_session_set_run_id(kb_session *s, const char *run_id)
{
    snprintf(s->run_id, sizeof s->run_id, "%s", run_id);
}

/* ---- the pipeline ---- */

/* The compile workers: -j when given, else the cores (at most 8) for a session that only
 * compiles; for one that measures, the cores but one on a backend with a GPU timer (the
 * host only launches), and the cores on the emulator, which pauses the builds in flight
 * while a timing window is open (backend/emu/emu_build.h): modules are built ahead of
 * the cases while they verify, and no compiler's CPU time lands in a CPU-timed sample. */
static int default_jobs(const kb_session *s)
{
    if (s->o.jobs > 0)
        return s->o.jobs;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int n = cores < 1 ? 1 : cores > 8 ? 8 : (int)cores;
    if (s->o.offline || !(s->dev.caps & KB_CAP_GPU_TIMER))
        return n;
    return n > 1 ? n - 1 : 1;
}

/* Peaks for the roofline, the flush buffer, overrides, dump and prune. */
static void start_measuring(kb_session *s)
{
    kb_pipeline *p = &s->pipe;
    if (s->dev.caps & KB_CAP_ROOFLINE) {
        kb_sb note;
        kb_sb_init(&note);
        if (kb_peaks_for_device(&s->dev, NULL, &s->peaks, &note) == KB_OK)
            p->peaks = &s->peaks;
        else
            kb_report(KB_REPORT_ERROR, "peaks: %s (rates without %% of roofline)", note.s);
        kb_sb_free(&note);
    }
    char err[512];
    s->have_flush = kb_l2_flush_alloc(s->be, s->bx, &s->dev, &s->flush, err, sizeof err) == KB_OK;
    if (s->have_flush)
        p->flush = &s->flush;
    else
        kb_report(KB_REPORT_ERROR, "L2 flush buffer: %s (each case allocates its own)", err);
    p->overrides = &s->o.overrides;
    p->dump_dir = s->o.dump_dir;
    p->dump_all = s->o.dump_all;
    if (s->o.prune) {
        p->prune = kb_tune_prune;   /* recorded skipped, "pruned: <why>", before anything runs */
        p->prune_user = &s->dev;
    }
    load_ceilings(s);
}

void kb_session_start(kb_session *s)
{
    if (s->started)
        return;
    s->started = 1;
    if (s->o.offline) {
        if (s->o.build) {
            s->mods = kb_modules_new_build_only(s->be, NULL, s->o.bo.cache_dir, kb_kernels_dir());
            s->workers = kb_modules_start(s->mods, default_jobs(s));
        }
        return;
    }
    kb_pipeline *p = &s->pipe;
    p->be = s->be;
    p->bx = s->bx;
    p->dev = &s->dev;
    p->mods = s->mods = kb_modules_new(s->be, s->bx, s->o.bo.cache_dir, kb_kernels_dir());
    p->empty = kb_modules_get(s->mods, KB_EMPTY_SOURCE, "", s->target.sm);
    s->workers = kb_modules_start(s->mods, default_jobs(s));
    start_measuring(s);
}

void kb_session_close(kb_session *s)
{
    if (!s)
        return;
    if (s->have_flush)
        kb_l2_flush_free(s->be, s->bx, &s->flush);
    kb_sinks_free(&s->sinks);
    if (s->mods)
        kb_modules_free(s->mods);
    kb_cases_free(&s->cases);
    kb_plan_free(&s->own_plan);
    if (s->bx)
        s->be->fini(s->bx);
    free(s->store_path);
    free(s);
}

/* ---- what a command reads ---- */

const kb_device_info *kb_session_device(const kb_session *s) { return &s->dev; }

const char *kb_session_backend_name(const kb_session *s) { return s->be ? s->be->name : s->o.backend; }

void kb_session_backend(const kb_session *s, const kb_backend **be, kb_backend_ctx **bx)
{
    *be = s->be;
    *bx = s->bx;
}

int kb_session_target_sm(const kb_session *s) { return s->target.sm; }

const char *kb_session_toolchain_id(const kb_session *s) { return s->be ? kb_be_toolchain_id(s->be, s->bx) : ""; }

const kb_plan *kb_session_plan_of(const kb_session *s) { return s->plan; }

const kb_cases *kb_session_cases(const kb_session *s) { return &s->cases; }

int kb_session_check_shapes(const kb_session *s) { return kb_walk_check_shapes(s->plan_caps, s->o.full_shapes); }

const char *kb_session_run_id(const kb_session *s) { return s->run_id; }

const char *kb_session_store_path(const kb_session *s) { return s->store_path; }

int kb_session_workers(const kb_session *s) { return s->workers; }

int kb_session_modules_count(const kb_session *s) { return s->mods ? kb_modules_count(s->mods) : 0; }

void kb_session_prefetch(kb_session *s, const kb_cases_item *item)
{
    if (s->mods && item->it.valid)
        kb_modules_prefetch_case(s->mods, item->it.c, s->target.sm);
}

kb_status kb_session_datasheet_peaks(const kb_session *s, kb_peaks *out, kb_sb *note)
{
    return kb_peaks_for_device(&s->dev, NULL, out, note);
}

kb_status kb_session_peaks_file_check(kb_sb *err)
{
    kb_sb why;
    kb_sb_init(&why);
    const char *path = kb_peaks_default_path();
    kb_status st = kb_peaks_check_file(path, &why);
    if (st != KB_OK)
        kb_sb_printf(err, "peaks file%s %s", getenv("KBENCH_PEAKS") && *getenv("KBENCH_PEAKS") ? " (KBENCH_PEAKS)" : "",
                     why.s);
    kb_sb_free(&why);
    return st;
}

kb_status kb_session_peaks_text(const kb_session *s, kb_sb *text, kb_sb *note)
{
    kb_peaks p;
    kb_status st = kb_session_datasheet_peaks(s, &p, note);
    if (st == KB_OK)
        kb_peaks_format(&p, text);
    return st;
}

void kb_session_health(const kb_session_opts *o, kb_health *out)
{
    char err[1024] = "";
    const kb_backend *be;
    kb_backend_ctx *bx;
    if (kb_backend_open(o->backend, &o->bo, &be, &bx, err, sizeof err) != KB_OK) {
        kb_health_unread(out, *err ? err : "the backend could not be opened again");
        return;
    }
    kb_be_health(be, bx, out);
    be->fini(bx);
}

/* ---- offline builds ---- */

void kb_session_build(kb_session *s, const kb_cases_item *item, kb_built *out)
{
    const kb_family *f = item->f;
    const kb_case *c = item->it.c;
    memset(out, 0, sizeof *out);
    out->res.registers = out->res.spill_store_bytes = out->res.spill_load_bytes = -1;
    out->res.stack_bytes = out->res.static_shmem_bytes = out->res.max_threads = -1;
    out->entry = f->variants[c->variant].entry;
    if (!out->entry) {
        out->status = KB_BUILT_VENDOR;
        return;
    }
    kb_sb defs;
    kb_sb_init(&defs);
    kb_case_defines(f, c, &defs);
    const kb_module_ref *b = kb_modules_get(s->mods, f->source, defs.s, s->target.sm);
    kb_sb_free(&defs);
    out->log = b->log;
    out->artifact = b->status == KB_OK ? b->artifact : NULL;
    if (b->status != KB_OK)
        out->status = KB_BUILT_FAILED;
    else if (kb_be_build_resources(s->be, b->log, out->entry, &out->res) != 0)
        out->status = KB_BUILT_NO_REPORT;
}

int kb_session_module_id(const kb_session *s, const kb_cases_item *item, kb_sb *out)
{
    (void)s;   /* the target is the session's: one per session, so not part of the text */
    const kb_family *f = item->f;
    const kb_case *c = item->it.c;
    if (!item->it.valid || !f->variants[c->variant].entry)
        return -1;
    kb_sb defs;
    kb_sb_init(&defs);
    kb_case_defines(f, c, &defs);
    kb_sb_clear(out);
    kb_sb_printf(out, "%s\n%s", f->source, defs.s);
    kb_sb_free(&defs);
    return 0;
}

/* ---- running the cases ---- */

void kb_session_begin(kb_session *s)
{
    kb_sink_run run = { s->run_id, s->plan ? s->plan->suite_name : "", kb_session_backend_name(s), &s->dev,
                        s->target.sm, s->plan ? s->plan->n_cases : 0, &s->cases, kb_session_check_shapes(s),
                        s->plan };
    kb_sinks_open(&s->sinks, &run);
    kb_interrupt_install();
}

static void count(kb_session *s, kb_case_status st)
{
    s->tally.count[st]++;
    s->tally.total++;
    s->tally.failed += st != KB_CASE_WRONG && kb_case_status_failed(st);
}

/* Serialise the result once; the same record goes to every sink. 0, or -1 when the
 * records file could not keep it. */
static int record(kb_session *s, const kb_cases_item *item, const kb_case_result *r)
{
    char when[32];
    kb_record_time_now(when);
    int shape = item->it.c->shape_name;
    kb_record_ctx ctx = { .run_id = s->run_id, .suite = s->plan->suite_name, .time = when,
                          .backend = s->be->name, .dev = &s->dev,
                          .shape = shape >= 0 && shape < s->plan->n_shape_names ? s->plan->shape_names[shape] : NULL };
    json_t *rec = kb_record_json(&ctx, r);
    kb_sink_case c = { item, r, kb_case_status_name(r->status), rec, s->pipe.dump_err };
    int rc = kb_sinks_record(&s->sinks, &c);
    json_decref(rec);
    return rc;
}

kb_session_step kb_session_run_case(kb_session *s, const kb_cases_item *item, kb_session_seen_fn seen, void *user)
{
    if (kb_interrupted())
        return KB_SESSION_STOP_INTERRUPTED;
    const kb_case *c = item->it.c;
    kb_case_verdict v = { item->it.valid, item->it.why };
    kb_case_result r;
    kb_sinks_case_start(&s->sinks, item);
    kb_case_run_judged(&s->pipe, item->f, c, item->it.id, &s->plan->entries[c->entry].measure, &v, &r);
    if (r.error == KB_ERR_INTERRUPTED) {
        /* abandoned part-way: not a result; --resume runs it again */
        kb_case_result_free(&r);
        return KB_SESSION_STOP_INTERRUPTED;
    }
    int kept = record(s, item, &r) == 0;
    count(s, r.status);
    if (seen)
        seen(user, &r);
    kb_case_result_free(&r);
    if (!kept) {
        s->tally.record_failed = 1;
        kb_report(KB_REPORT_ERROR, "the record of %s could not be written; stopping the run", item->it.id);
        return KB_SESSION_STOP_RECORD;
    }
    /* A sticky fault (illegal address, launch timeout, ...) leaves the CUDA context
     * unusable: every later call would fail with the same error, and each later case
     * would be recorded as a fault of its own. The case that faulted is recorded; the
     * rest are left for a new process (--resume). On the emulator sync always works. */
    if (s->be->sync(s->bx) != KB_OK) {
        s->tally.device_lost = 1;
        kb_report(KB_REPORT_ERROR, "the device is unusable after %s (%s); the remaining cases were not run",
                  item->it.id, s->be->last_error(s->bx));
        return KB_SESSION_STOP_DEVICE;
    }
    int bad = s->tally.count[KB_CASE_WRONG] + s->tally.failed;
    if (s->o.max_fail > 0 && bad >= s->o.max_fail) {
        s->tally.max_fail_hit = 1;
        kb_report(KB_REPORT_ERROR, "%d case%s wrong or failed (max_fail %d); the remaining cases were not run", bad,
                  bad == 1 ? "" : "s", s->o.max_fail);
        return KB_SESSION_STOP_MAX_FAIL;
    }
    return KB_SESSION_NEXT;
}

kb_session_step kb_session_run_all(kb_session *s, kb_session_seen_fn seen, void *user)
{
    for (int64_t i = 0; i < s->cases.n; i++)
        if (!s->cases.items[i].done)
            kb_session_prefetch(s, &s->cases.items[i]);
    for (int64_t i = 0; i < s->cases.n; i++) {
        if (s->cases.items[i].done)
            continue;
        kb_session_step step = kb_session_run_case(s, &s->cases.items[i], seen, user);
        if (step != KB_SESSION_NEXT)
            return step;
    }
    return KB_SESSION_NEXT;
}

void kb_session_end(kb_session *s) { kb_sinks_close(&s->sinks); }

const kb_session_tally *kb_session_tally_of(const kb_session *s) { return &s->tally; }
