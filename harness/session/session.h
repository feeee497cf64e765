/* session.h - the one place cases are run from: every command that plans, compiles or
 * runs cases (run, tune, selftest, accept, compile, estimate, list, devices) does it
 * through a session, so the pipeline is assembled once and every command's records come
 * out of the same code.
 *
 * A session owns, in the order a command sets them up:
 *   1. the backend and its device (kb_session_open): --backend auto falls back to the
 *      emulator with one line (kb_report), a device whose toolchain makes nothing it can
 *      load is refused, the compile cache and --dump are checked (kb_session_check_setup);
 *      or, offline (list, compile, estimate), no device at all: a target arch and caps;
 *   2. the plan (kb_session_plan, or a borrowed one: kb_session_adopt_plan) and ONE walk
 *      of it into the list of selected cases with valid()'s verdict, asked once per case
 *      (kb_session_select, session/cases.h); the prefetch, the progress totals, the run
 *      loop and the tuner's space read that list;
 *   3. the pipeline (kb_session_start): the module table and its compile workers, the
 *      datasheet peaks plus the measured ceilings of the store, the cold-L2 flush buffer,
 *      the measurement overrides, --dump, the prune hook (session/prune.h);
 *   4. the record sinks (session/sink.h): the records file, the store, the trace
 *      (kb_session_records / _store / _trace) and any a command adds (the console, the
 *      tuning database: kb_session_add_sink).
 * Then kb_session_begin, kb_session_run_case per case (or kb_session_run_all), and
 * kb_session_end. Nothing here prints: diagnostics go through kb_report (core/report.h),
 * and what a command shows comes from its sinks and from the accessors below.
 */
#ifndef KB_SESSION_H
#define KB_SESSION_H

#include "engine/case.h"
#include "kernels/families.h"   /* the registry: `kbench list` shows it */
#include "session/cases.h"
#include "session/sink.h"

typedef struct kb_session kb_session;

typedef struct {
    const char *backend;          /* "auto" (cuda when a device is present, else emu), "cuda", "emu" */
    kb_backend_opts bo;           /* device, --arch, compile cache, the emulator's threads, schedule, checks */
    const char *suite_path;       /* what kb_session_plan plans */
    int full_shapes;              /* the full shapes on a backend that would run check shapes */
    const char *dump_dir;         /* --dump DIR: arrays of cases under DIR (NULL: none) */
    int dump_all;                 /* dump every case, not only the wrong ones */
    kb_measure_overrides overrides; /* command-line measurement overrides (0: the suite's) */
    int prune;                    /* skip cases whose compile output spills or exceeds a limit */
    int jobs;                     /* compile workers; 0: the default (kb_session_start) */
    int max_fail;                 /* stop once this many cases are wrong or failed (0: never) */
    int keep_unusable;            /* open a device whose toolchain makes nothing it loads, for a
                                   * command that judges it (devices, selftest, accept's probe) */
    int offline;                  /* no device (list, compile, estimate): plan for the caps of
                                   * `backend` and --arch (default sm_90) */
    int build;                    /* offline: build modules for the target with `backend`'s
                                   * compiler (NVRTC for cuda: no driver needed), never load;
                                   * the target must be one that compiler compiles for */
    int build_ptx;                /* with build on cuda: PTX instead of CUBINs (compile --emit ptx;
                                   * cached apart from the CUBINs) */
    int judge_caps;               /* offline: valid() sees the backend's caps (list); else none */
} kb_session_opts;

/* Open a session: the backend and its device, or (o->offline) a target with no device.
 * KB_OK with *out set (kb_session_close it); otherwise *out NULL and err says why:
 * KB_ERR_INPUT (an unknown backend, an --arch it refuses or, building offline, one its
 * compiler lacks: "--arch sm_100: NVRTC 12.4 (...) cannot compile for sm_100; ..."),
 * KB_ERR_SETUP (no driver, no device, the device query failed, no toolchain fits the
 * driver, no compiler to build with), KB_ERR_OOM. */
kb_status kb_session_open(const kb_session_opts *o, kb_session **out, kb_sb *err);

/* The compile cache and kernels directory (engine/setup.h) and --dump DIR (created, must
 * be writable). KB_OK, or KB_ERR_SETUP with one message in err. */
kb_status kb_session_check_setup(kb_session *s, kb_sb *err);

/* Plan o->suite_path for the device (its check shapes unless it runs at full speed or
 * full_shapes). KB_OK, or the planner's status (KB_ERR_INPUT, KB_ERR_IO, KB_ERR_SETUP)
 * with err "file:line:col: ...". The plan's warnings are kb_session_plan_of(s)->warnings:
 * the command shows them. The default run id is made from the suite's name. */
kb_status kb_session_plan(kb_session *s, kb_sb *err);

/* Use plan p (borrowed: it must outlive the session, or the next adopt) instead. */
void kb_session_adopt_plan(kb_session *s, const kb_plan *p);

/* The one walk of the plan into the session's case list (replacing any earlier one):
 * dedupe, the filters (a case is selected when its id contains any; none: all), valid()
 * for the target. KB_OK, or KB_ERR_OOM. */
kb_status kb_session_select(kb_session *s, const char *const *filters, int n_filters);

/* The records file at path (created, or appended to when it is a records file of the
 * suite) as the required sink; resume (may equal path, NULL: none) names a records file
 * whose finished cases are marked done in the list and not run again. KB_OK, or the
 * failure with err filled ("(--resume)" appended when reading resume failed). */
kb_status kb_session_records(kb_session *s, const char *path, const char *resume, kb_sb *err);

/* The SQLite store at db_path (a command's --db, else kb_store_default_path(): one place
 * for every run, wherever its records file is) as a sink, its rows pointing at
 * records_path, and from it the device's measured ceilings (once the pipeline has its
 * peaks; reported). When the store cannot be opened, that is reported and the records
 * file stays the only output. */
void kb_session_store(kb_session *s, const char *db_path, const char *records_path);

/* A Chrome trace at path, written as the run goes (by the output rule, core/output.h).
 * KB_OK, or KB_ERR_INPUT / KB_ERR_SETUP / KB_ERR_OOM with err naming path. */
kb_status kb_session_trace(kb_session *s, const char *path, const char *title, kb_sb *err);

/* Add a sink the command made (the session owns it from here). KB_OK or KB_ERR_OOM. */
kb_status kb_session_add_sink(kb_session *s, kb_sink k);

/* Replace the run id the records carry (kb_session_plan made "<suite>-<UTC time>-<pid>"). */
void kb_session_set_run_id(kb_session *s, const char *run_id);

/* Assemble the pipeline (once; later calls do nothing): modules and compile workers (-j
 * when given; else, measuring on a GPU timer, the cores but one (at most 8); on the
 * emulator the cores, at most 8: it pauses the builds in flight during its timing
 * windows, so none inflates a CPU timing; offline the cores, at most 8), peaks, ceilings,
 * flush, overrides, dump, prune. What cannot be had (no
 * peaks for the device, no flush buffer) is reported, and the run goes on without it. */
void kb_session_start(kb_session *s);

/* The run begins: every sink's open, and the Ctrl-C/SIGTERM handler (kb_interrupt_install:
 * the case in flight finishes, is recorded, and the run stops). */
void kb_session_begin(kb_session *s);

typedef enum {
    KB_SESSION_NEXT = 0,          /* the case is recorded: go on */
    KB_SESSION_STOP_INTERRUPTED,  /* a signal: the case in flight is not a result */
    KB_SESSION_STOP_RECORD,       /* its record could not be written (reported) */
    KB_SESSION_STOP_DEVICE,       /* the device is unusable after it (a sticky fault; reported) */
    KB_SESSION_STOP_MAX_FAIL      /* it made max_fail cases wrong or failed (reported) */
} kb_session_step;

/* Called with each finished case's result, after its sinks (it is freed after). */
typedef void (*kb_session_seen_fn)(void *user, const kb_case_result *r);

/* Run one case of the list through the pipeline (valid()'s verdict from the list), hand
 * its record to every sink, count it, call seen (may be NULL). Stops before the case
 * when interrupted, and after it when its record could not be kept, the device no
 * longer synchronises, or the wrong and failed cases reach max_fail. */
kb_session_step kb_session_run_case(kb_session *s, const kb_cases_item *item, kb_session_seen_fn seen, void *user);

/* Prefetch the modules of every selected case, then run each one not done in plan
 * order (kb_session_run_case, seen as there) until a step stops. Returns the last step. */
kb_session_step kb_session_run_all(kb_session *s, kb_session_seen_fn seen, void *user);

/* The run ended: every sink's close. */
void kb_session_end(kb_session *s);

/* What the finished cases came to. */
typedef struct {
    int count[KB_CASE_STATUS_COUNT]; /* by status */
    int total;
    int failed;                   /* failing statuses other than wrong (compile, launch, input, fault, timeout) */
    int record_failed;            /* a record could not be written */
    int device_lost;              /* the device was unusable after a case */
    int max_fail_hit;             /* the run stopped at max_fail wrong or failed cases */
} kb_session_tally;

const kb_session_tally *kb_session_tally_of(const kb_session *s);

/* Close everything the session opened (NULL is fine). */
void kb_session_close(kb_session *s);

/* ---- what a command reads ---- */

const kb_device_info *kb_session_device(const kb_session *s);   /* zeroed offline */
const char *kb_session_backend_name(const kb_session *s);       /* "cuda", "emu"; offline: o->backend */
void kb_session_backend(const kb_session *s, const kb_backend **be, kb_backend_ctx **bx);
int kb_session_target_sm(const kb_session *s);                  /* what kernels are compiled for */
const char *kb_session_toolchain_id(const kb_session *s);       /* "" when the backend has none */
const kb_plan *kb_session_plan_of(const kb_session *s);         /* NULL before kb_session_plan */
const kb_cases *kb_session_cases(const kb_session *s);          /* the list of kb_session_select */
int kb_session_check_shapes(const kb_session *s);               /* the plan holds the check shapes */
const char *kb_session_run_id(const kb_session *s);
const char *kb_session_store_path(const kb_session *s);         /* the store a sink writes, NULL: none */
int kb_session_workers(const kb_session *s);                    /* compile workers running */
int kb_session_modules_count(const kb_session *s);              /* distinct modules asked for */

/* Announce item's module to the compile workers (a valid case of kbench's own kernels). */
void kb_session_prefetch(kb_session *s, const kb_cases_item *item);

/* The device's datasheet peaks (engine/peaks.h). KB_OK, or the failure with note filled. */
kb_status kb_session_datasheet_peaks(const kb_session *s, kb_peaks *out, kb_sb *note);
/* The datasheet peaks file in use ($KBENCH_PEAKS, else data/peaks.json) checked as a whole:
 * readable (a regular file of at most 4 MiB), valid JSON, a "gpus" array. KB_OK, or
 * KB_ERR_SETUP with err = "peaks file PATH: why" (kbench devices exits 3 on it). */
kb_status kb_session_peaks_file_check(kb_sb *err);

/* The same, formatted for people (kb_peaks_format) into text, or why there are none into
 * note. KB_OK or the failure. */
kb_status kb_session_peaks_text(const kb_session *s, kb_sb *text, kb_sb *note);

/* The GPU's health now (backend/health.h): through the backend's health slot, every
 * value unread with the reason where there is none or the backend cannot be opened. */
void kb_session_health(const kb_session_opts *o, kb_health *out);

/* ---- offline builds (compile, estimate) ---- */

typedef enum {
    KB_BUILT = 0,                 /* compiled; res holds what the build log reports */
    KB_BUILT_VENDOR,              /* a vendor library call: no kernel of kbench's to compile */
    KB_BUILT_FAILED,              /* did not compile (log says why) */
    KB_BUILT_NO_REPORT            /* compiled, but the log reports nothing of the entry */
} kb_built_status;

typedef struct {
    kb_built_status status;
    const char *entry;            /* the variant's kernel entry (NULL for a vendor call) */
    const char *log;              /* the compiler log (borrowed from the module table) */
    const char *artifact;         /* KB_BUILT, KB_BUILT_NO_REPORT: the built file in the compile cache
                                   * (a .cubin, or a .ptx with o->build_ptx; borrowed: read, never
                                   * write); else NULL */
    kb_resources res;             /* fields -1 where unknown */
} kb_built;

/* Build item's module for the target in an offline session with o->build (the pipeline
 * started: kb_session_start) and read its resources from the build log. */
void kb_session_build(kb_session *s, const kb_cases_item *item, kb_built *out);

/* The identity of item's module for the session's target, as text equal exactly when two
 * cases build the same module (its source and defines: "<source>\n<defines>"), into out
 * (replacing its text): what names a module's file (compile --emit). 0, or -1 for a case
 * with no module of kbench's (refused by valid(), or a vendor library call). */
int kb_session_module_id(const kb_session *s, const kb_cases_item *item, kb_sb *out);

#endif /* KB_SESSION_H */
