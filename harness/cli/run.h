/* run.h - `kbench run`, and the options run, list, devices and compile share. */
#ifndef KB_RUN_H
#define KB_RUN_H

#include "backend/backend.h"
#include "engine/measure.h"

typedef struct {
    const char *suite_path;
    const char *backend;        /* "auto" (cuda when a device is present, else emu), "cuda", "emu" */
    int sm_override;            /* --arch sm_XX; 0 = the device's own (emu: 90) */
    int device_index;
    const char *const *filters; /* a case runs when its id contains any of them (none: all) */
    int n_filters;
    const char *out_path;       /* JSON Lines file; NULL: results/<suite>-<UTC time>.jsonl */
    const char *resume_path;    /* continue this JSON Lines file, skipping recorded cases */
    const char *cache_dir;      /* NULL: kb_cache_dir() */
    const char *dump_dir;       /* write inputs/outputs of failing cases as .npy here */
    int full_shapes;            /* run full shapes on the emulator too */
    int quiet;                  /* no per-case rows */
    int emu_threads;
    int min_samples, max_samples; /* overrides when > 0 */
    double timeout_s;           /* override when > 0 */
} kb_run_opts;

/* Plan, compile, execute, verify, measure and record every case of o->suite_path.
 * Returns a process exit code (KB_EXIT_*). */
int kb_cmd_run(const kb_run_opts *o);

#endif
