/* run.h - the commands: run, list, devices (the stages wired together). */
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

/* 1 when a case id is selected by o's --filter values (any contained in id; none: all). */
int kb_run_selects(const kb_run_opts *o, const char *id);

/* Each returns a process exit code (KB_EXIT_*). */
int kb_cmd_run(const kb_run_opts *o);
int kb_cmd_list(const kb_run_opts *o);      /* families, or the planned cases of o->suite_path */
int kb_cmd_devices(const kb_run_opts *o);
/* Offline NVRTC compile of every module of o->suite_path for o->sm_override (default 90);
 * exit 1 on a compile error, or on any spill when fail_on_spill. */
int kb_cmd_compile(const kb_run_opts *o, int fail_on_spill);

/* Open a backend by name ("auto" falls back to emu with a one-line banner on stderr).
 * Returns KB_OK, or KB_ERR_SETUP / KB_ERR_INPUT with err filled. */
kb_status kb_backend_open(const char *name, const kb_backend_opts *bo, const kb_backend **be,
                          kb_backend_ctx **bx, char *err, size_t errlen);

#endif
