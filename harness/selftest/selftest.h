/* selftest.h - `kbench selftest`: what the first person with a GPU runs. A small suite
 * (suites/selftest.yaml) runs on the emulator and on the GPU through the same case
 * pipeline as `kbench run`; beyond each side's own reference check the two outputs are
 * compared element by element; then the driver/NVRTC fit, the empty-kernel launch
 * latency, device-to-device copy bandwidth against the peak, the graph round trip (graph
 * cases verified from a replay) and NVML are checked. The verdict is one line per check:
 * pass, FAIL, or not checked (with why). */
#ifndef KB_SELFTEST_H
#define KB_SELFTEST_H

#include "core/kb.h"

#include <stdio.h>

typedef enum { KB_CHECK_PASS = 0, KB_CHECK_FAIL, KB_CHECK_NOT_RUN } kb_check_result;

typedef struct {
    char name[64];
    kb_check_result result;
    char detail[512];
} kb_check;

#define KB_SELFTEST_MAX_CHECKS 16
/* [us] the empty-kernel launch check's bound on kb_overhead_floor_us (the host's enqueue
 * time or the GPU's per-launch time, the larger): a sanity window, not a target (selftest.c) */
#define KB_SELFTEST_MAX_LAUNCH_US 50.0

typedef struct {
    kb_check checks[KB_SELFTEST_MAX_CHECKS];
    int n;
    char device[160];       /* the GPU checked, "" when none */
    char work_dir[480];     /* where both sides' outputs are kept */
} kb_selftest;

typedef struct {
    const char *suite_path;  /* the suite both sides run (default suites/selftest.yaml) */
    const char *cache_dir;   /* compile cache, NULL: default */
    int device_index;
    const char *work_dir;    /* where both sides dump their outputs (default: a temp folder) */
    int sm_override;         /* --arch: both sides compile for this code of core/arch.h; 0: the GPU's own
                              * (the emulator's default, sm_90) */
} kb_selftest_opts;

/* Run every check into *t. KB_OK; the planner's error when the suite cannot be planned
 * (err says why: KB_ERR_INPUT, KB_ERR_IO), KB_ERR_SETUP when the emulator cannot run or the
 * work folder cannot be made;
 * KB_ERR_INTERRUPTED on a signal. A failed check is a result, not an error. */
kb_status kb_selftest_run(const kb_selftest_opts *o, kb_selftest *t, kb_sb *err);

/* 0 when every check passed; 1 when any failed; 3 when none failed but a GPU check could
 * not run (no GPU). */
int kb_selftest_exit(const kb_selftest *t);

/* The one-page verdict. */
void kb_selftest_print(const kb_selftest *t, FILE *out);

#endif /* KB_SELFTEST_H */
