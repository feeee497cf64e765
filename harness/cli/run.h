/* run.h - `kbench run`, and the options run, list, devices and compile share. */
#ifndef KB_RUN_H
#define KB_RUN_H

#include "cli/opts.h"
#include "session/session.h"

#include <stddef.h>

typedef struct {
    const char *suite_path;
    const char *backend;        /* "auto" (cuda when a device is present, else emu), "cuda", "emu" */
    int sm_override;            /* --arch: an architecture's code (core/arch.h); 0 = the device's own (emu: sm_90) */
    int device_index;
    const char **filters;       /* a case runs when its id contains any of them (none: all) */
    int n_filters;
    const char *out_path;       /* JSON Lines file; NULL: results/<suite>-<UTC time>.jsonl (compile: --emit's DIR) */
    const char *db_path;        /* --db: the results store; NULL: kb_store_default_path() */
    const char *resume_path;    /* continue this JSON Lines file, skipping recorded cases */
    const char *cache_dir;      /* NULL: kb_cache_dir() */
    const char *dump_dir;       /* write inputs/outputs of failing cases as .npy here */
    int full_shapes;            /* run full shapes on the emulator too */
    int quiet;                  /* no per-case rows */
    int verbose;                /* every skipped row, none folded into a count */
    int brief;                  /* the closing summary: counts and paths only (accept's runs) */
    int emu_threads;
    int min_samples, max_samples; /* overrides when > 0 */
    double timeout_s;           /* override when > 0 */
    int fail_on_spill;          /* compile: exit 1 when a case spills registers */
    int prune;                  /* run: skip cases whose compile output shows spills or exceeded limits */
    int max_fail;               /* run --max-fail: stop after N wrong or failed cases (0: never) */
    const char *emu_schedule;   /* --emu-schedule: lockstep, warp-ahead, random[:SEED] */
    const char *emu_check;      /* --emu-check: race, init, all (comma-separated) */
    const char *trace_path;     /* run --trace: Chrome trace-event JSON written as the run goes */
    int jobs;                   /* -j: compile workers; 0 = the session's default (kb_session_start) */
    const char *emit;           /* compile --emit: "ptx", "cubin", or NULL */
} kb_run_opts;

/* The session options of o (session/session.h): backend, device, arch, compile cache,
 * the emulator's threads, schedule and checks (KB_EMU_CHECK_* from --emu-check), suite,
 * shapes, --dump, overrides, --prune, -j, --max-fail. -1 with a message when --emu-check names an
 * unknown check; 0 otherwise. */
int kb_run_session_opts(const kb_run_opts *o, kb_session_opts *so);

/* The --filter values of o as they are echoed in a message: "--filter 'a'" or
 * "--filter 'a' (or 'b', ...)" (written into out, replacing it). */
void kb_run_filters_text(const kb_run_opts *o, kb_sb *out);

/* Open a session with so (its backend and device), saying why on stderr when that fails
 * or when no toolchain this build has makes code the device loads (run, tune). An exit
 * code, or -1 to go on with *s open. */
int kb_run_open_session(const kb_session_opts *so, kb_session **s);

/* The option rows run, list, devices and compile share (cli/opts.h). */
extern const char *const kb_run_backend_choices[];   /* auto, cuda, emu */
#define KB_ROW_BACKEND { "--backend", NULL, KB_OPT_CHOICE, offsetof(kb_run_opts, backend), "auto|cuda|emu", \
    "cuda when a device is present, else the CPU emulator (default auto)", 0, 0, 0, kb_run_backend_choices, 0 }
#define KB_ROW_ARCH { "--arch", NULL, KB_OPT_ARCH, offsetof(kb_run_opts, sm_override), "ARCH", \
    "target architecture (default: the device's; emu and offline: sm_90); on cuda, one the installed NVRTC supports", \
    0, 0, 0, NULL, 0 }
#define KB_ROW_DEVICE { "--device", NULL, KB_OPT_INT, offsetof(kb_run_opts, device_index), "N", \
    "CUDA device ordinal (default 0)", 0, 1023, 0, NULL, 0 }
#define KB_ROW_FILTER { "--filter", NULL, KB_OPT_LIST, offsetof(kb_run_opts, filters), "TEXT", \
    "only cases whose id contains TEXT", 0, 0, 0, NULL, offsetof(kb_run_opts, n_filters) }
#define KB_ROW_FULL_SHAPES { "--full-shapes", NULL, KB_OPT_FLAG, offsetof(kb_run_opts, full_shapes), NULL, \
    "on the emulator, the full shapes instead of the suite's check shapes", 0, 0, 0, NULL, 0 }
#define KB_ROW_CACHE_DIR { "--cache-dir", NULL, KB_OPT_OUTDIR, offsetof(kb_run_opts, cache_dir), "DIR", \
    "compile cache (default $KBENCH_CACHE_DIR, $XDG_CACHE_HOME/kbench, ~/.cache/kbench)", 0, 0, 0, NULL, 0 }
#define KB_ROW_QUIET { "--quiet", "-q", KB_OPT_FLAG, offsetof(kb_run_opts, quiet), NULL, \
    "no per-case rows, only the summary", 0, 0, 0, NULL, 0 }
#define KB_ROW_VERBOSE { "--verbose", "-v", KB_OPT_FLAG, offsetof(kb_run_opts, verbose), NULL, \
    "a row for every skipped case (by default a run of them with one reason is one line)", 0, 0, 0, NULL, 0 }
#define KB_ROW_EMU { "--emu-schedule", NULL, KB_OPT_STR, offsetof(kb_run_opts, emu_schedule), "S", \
    "emulator: lockstep (default), warp-ahead or random[:SEED] - who runs next at each wait", 0, 0, 0, NULL, 0 }, \
    { "--emu-check", NULL, KB_OPT_STR, offsetof(kb_run_opts, emu_check), "race,init", \
    "emulator: report shared-memory races between warps and reads of memory never written (or all)", \
    0, 0, 0, NULL, 0 }
#define KB_ROW_THREADS { "--threads", NULL, KB_OPT_INT, offsetof(kb_run_opts, emu_threads), "N", \
    "emulator worker threads (default: cores)", 1, 1024, 0, NULL, 0 }

#define KB_ROW_JOBS { "--jobs", "-j", KB_OPT_INT, offsetof(kb_run_opts, jobs), "N", \
    "compile workers building modules ahead of the cases that use them (default: see README)", \
    1, 256, 0, NULL, 0 }

/* Defaults every command of this struct shares: --backend auto. */
void kb_run_opts_defaults(void *o);

/* `kbench run`: its options and the function that runs it. */
extern const kb_command kb_command_run;

/* Plan, compile, execute, verify, measure and record every case of o->suite_path.
 * Returns a process exit code (KB_EXIT_*). */
int kb_cmd_run(const kb_run_opts *o);

#endif
