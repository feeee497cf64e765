/* selftest.c - `kbench selftest`'s checks and verdict (see selftest.h). */
#include "selftest/selftest.h"

#include "selftest/selftest_compare.h"
#include "selftest/selftest_side.h"

#include "core/fsutil.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* Sanity bounds, not performance targets (*assumptions*: no GPU has been measured here).
 * A GPU launches an empty kernel in a few microseconds (NVIDIA quotes ~2-5 us); 50 us
 * means something is wrong (a debugger or profiler attached, a virtualised or throttled
 * GPU). A device-to-device copy reaches 70-90% of the memory peak on data-centre GPUs
 * (H100 SXM: 2.90 of 3.35 TB/s); under 30% is broken, over 105% means the timer is. */
#define MAX_LAUNCH_US KB_SELFTEST_MAX_LAUNCH_US
#define MIN_COPY_FRACTION 0.30
#define MAX_COPY_FRACTION 1.05

static kb_check *add(kb_selftest *t, const char *name, kb_check_result res, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static kb_check *add(kb_selftest *t, const char *name, kb_check_result res, const char *fmt, ...)
{
    if (t->n == KB_SELFTEST_MAX_CHECKS)
        return &t->checks[t->n - 1];
    kb_check *c = &t->checks[t->n++];
    snprintf(c->name, sizeof c->name, "%s", name);
    c->result = res;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->detail, sizeof c->detail, fmt, ap);
    va_end(ap);
    return c;
}

static const char *const gpu_checks[] = {
    "driver and NVRTC fit", "GPU: the suite verifies", "GPU vs emulator outputs", "graph round trip",
    "empty-kernel launch", "copy bandwidth", "NVML readable",
};
#define N_GPU_CHECKS (int)(sizeof gpu_checks / sizeof gpu_checks[0])

/* Every GPU check from index `from` on, not run, for one reason. */
static void not_run(kb_selftest *t, int from, const char *why)
{
    for (int i = from; i < N_GPU_CHECKS; i++)
        add(t, gpu_checks[i], KB_CHECK_NOT_RUN, "%s", why);
}

/* "the suite verifies" on one side: every case ok or skipped, at least one ok. */
static void suite_check(kb_selftest *t, const char *name, const kb_st_side *s)
{
    const kb_st_case *bad = NULL;
    for (int i = 0; i < s->n && !bad; i++)
        if (s->cases[i].status != KB_CASE_OK && s->cases[i].status != KB_CASE_SKIPPED)
            bad = &s->cases[i];
    if (bad)
        add(t, name, KB_CHECK_FAIL, "%d ok, %d skipped, %d failed; first: %.200s: %s: %.200s", s->n_ok, s->n_skipped,
            s->n_failed, bad->id, kb_case_status_name(bad->status), bad->reason);
    else
        add(t, name, s->n_ok ? KB_CHECK_PASS : KB_CHECK_FAIL, "%d ok, %d skipped", s->n_ok, s->n_skipped);
}

static void graph_check(kb_selftest *t, const kb_st_side *s)
{
    int ok = 0, failed = 0;
    const kb_st_case *bad = NULL;
    for (int i = 0; i < s->n; i++) {
        if (!s->cases[i].graph || s->cases[i].status == KB_CASE_SKIPPED)
            continue;
        if (s->cases[i].status == KB_CASE_OK)
            ok++;
        else if (failed++ == 0)
            bad = &s->cases[i];
    }
    if (bad)
        add(t, gpu_checks[3], KB_CHECK_FAIL, "%d of %d graph cases failed; first: %.200s: %.200s", failed, ok + failed,
            bad->id, bad->reason);
    else if (ok)
        add(t, gpu_checks[3], KB_CHECK_PASS, "%d graph cases captured, replayed and verified", ok);
    else
        add(t, gpu_checks[3], KB_CHECK_NOT_RUN, "the suite has no graph case");
}

/* The measured checks: launch latency, copy bandwidth, NVML. */
static void device_checks(kb_selftest *t, const kb_st_side *s)
{
    if (!isfinite(s->floor_us))
        add(t, gpu_checks[4], KB_CHECK_FAIL, "not measured (no eager case timed its launch overhead)");
    else
        add(t, gpu_checks[4], s->floor_us <= MAX_LAUNCH_US ? KB_CHECK_PASS : KB_CHECK_FAIL,
            "%.2f us per empty-kernel launch, back to back (the host's enqueue time or the GPU's, the larger; "
            "bound %.0f us)", s->floor_us, MAX_LAUNCH_US);
    double f = s->peak_gbps > 0 ? s->copy_gbps / s->peak_gbps : 0;
    if (s->copy_gbps <= 0)
        add(t, gpu_checks[5], KB_CHECK_FAIL, "the copy case did not run ok");
    else if (s->peak_gbps <= 0)
        add(t, gpu_checks[5], KB_CHECK_NOT_RUN, "%.0f GB/s measured; no bandwidth peak for this device", s->copy_gbps);
    else
        add(t, gpu_checks[5], f >= MIN_COPY_FRACTION && f <= MAX_COPY_FRACTION ? KB_CHECK_PASS : KB_CHECK_FAIL,
            "%.0f GB/s = %.0f%% of the %.0f GB/s peak (sane: %.0f-%.0f%%)", s->copy_gbps, 100 * f, s->peak_gbps,
            100 * MIN_COPY_FRACTION, 100 * MAX_COPY_FRACTION);
    if (s->telemetry_ok)
        add(t, gpu_checks[6], KB_CHECK_PASS, "clocks, power and throttle reasons read");
    else
        add(t, gpu_checks[6], KB_CHECK_FAIL, "%s", s->telemetry_why[0] ? s->telemetry_why : "no case read telemetry");
}

/* The GPU's half: the same plan, compared with the emulator's outputs, then the copy at
 * its full shape and the device checks. */
static void gpu_half(const kb_selftest_opts *o, kb_selftest *t, const kb_plan *plan, const kb_st_side *emu,
                     const char *dir)
{
    char err[1024] = "";
    kb_st_side gpu;
    kb_status st = kb_st_side_open(&gpu, "cuda", o->cache_dir, o->device_index, o->sm_override, dir, err, sizeof err);
    if (st != KB_OK) {
        not_run(t, 0, err);
        kb_st_side_close(&gpu);
        return;
    }
    const kb_device_info *d = &gpu.dev;
    snprintf(t->device, sizeof t->device, "%.120s (sm_%d, CUDA %d.%d driver)", d->name, d->sm,
             d->driver_version / 1000, d->driver_version % 1000 / 10);
    if (d->toolchain_unusable) {
        add(t, gpu_checks[0], KB_CHECK_FAIL, "%s", d->toolchain_note);
        not_run(t, 1, "nothing this build compiles loads on this driver");
        kb_st_side_close(&gpu);
        return;
    }
    add(t, gpu_checks[0], KB_CHECK_PASS, "%s", d->toolchain_note);
    if (kb_st_side_run(&gpu, plan, NULL) != 0) {
        not_run(t, 1, "interrupted");
        kb_st_side_close(&gpu);
        return;
    }
    suite_check(t, gpu_checks[1], &gpu);
    char detail[512];
    int cmp = kb_st_compare_outputs(emu, &gpu, detail, sizeof detail);
    add(t, gpu_checks[2], cmp == 0 ? KB_CHECK_PASS : cmp == 1 ? KB_CHECK_FAIL : KB_CHECK_NOT_RUN, "%s", detail);
    graph_check(t, &gpu);
    /* the copy at its full shape: bandwidth needs more than the check shape's 256 KiB */
    kb_plan full;
    kb_sb perr;
    kb_sb_init(&perr);
    gpu.copy_gbps = gpu.peak_gbps = 0;
    if (kb_walk_plan(o->suite_path, d->caps, 1, &full, &perr) == KB_OK) {
        kb_st_side_run(&gpu, &full, "ceiling/copy");
        kb_plan_free(&full);
    }
    kb_sb_free(&perr);
    device_checks(t, &gpu);
    kb_st_side_close(&gpu);
}

/* A fresh work folder: o->work_dir, else one under $TMPDIR (kept: the dumps are evidence). */
static int work_dir(const kb_selftest_opts *o, char *out, size_t n)
{
    if (o->work_dir) {
        snprintf(out, n, "%s", o->work_dir);
        return kb_fs_mkdir_p(out) == KB_OK ? 0 : -1;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(out, n, "%s/kbench-selftest-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    return mkdtemp(out) ? 0 : -1;
}

kb_status kb_selftest_run(const kb_selftest_opts *o, kb_selftest *t, kb_sb *err)
{
    char dir[480], side[512], msg[1024] = "";
    kb_plan plan;
    kb_st_side emu;
    memset(t, 0, sizeof *t);
    /* both sides run the emulator's check shapes, so their outputs can be compared */
    kb_status st = kb_walk_plan(o->suite_path, kb_backend_emu.caps, 0, &plan, err);
    if (st != KB_OK)
        return st;
    if (work_dir(o, dir, sizeof dir) != 0) {
        kb_sb_printf(err, "cannot create the work folder %s", dir);
        kb_plan_free(&plan);
        return KB_ERR_SETUP;
    }
    snprintf(t->work_dir, sizeof t->work_dir, "%s", dir);
    snprintf(side, sizeof side, "%s/emu", dir);
    if ((st = kb_st_side_open(&emu, "emu", o->cache_dir, 0, o->sm_override, side, msg, sizeof msg)) != KB_OK) {
        kb_sb_printf(err, "the emulator: %s", msg);
        kb_st_side_close(&emu);
        kb_plan_free(&plan);
        return st;
    }
    if (kb_st_side_run(&emu, &plan, NULL) != 0) {
        st = KB_ERR_INTERRUPTED;
    } else {
        suite_check(t, "emulator: the suite verifies", &emu);
        snprintf(side, sizeof side, "%s/gpu", dir);
        gpu_half(o, t, &plan, &emu, side);
        st = kb_interrupted() ? KB_ERR_INTERRUPTED : KB_OK;
    }
    kb_st_side_close(&emu);
    kb_plan_free(&plan);
    return st;
}

int kb_selftest_exit(const kb_selftest *t)
{
    int not_checked = 0;
    for (int i = 0; i < t->n; i++) {
        if (t->checks[i].result == KB_CHECK_FAIL)
            return KB_EXIT_WRONG;
        not_checked += t->checks[i].result == KB_CHECK_NOT_RUN;
    }
    return not_checked ? KB_EXIT_SETUP : KB_EXIT_OK;
}

void kb_selftest_print(const kb_selftest *t, FILE *out)
{
    static const char *const word[] = { "pass", "FAIL", "not checked" };
    int count[3] = { 0, 0, 0 };
    fprintf(out, "kbench selftest: %s\n\n", t->device[0] ? t->device : "no GPU");
    for (int i = 0; i < t->n; i++) {
        const kb_check *c = &t->checks[i];
        count[c->result]++;
        fprintf(out, "  %-12s %-30s %s\n", word[c->result], c->name, c->detail);
    }
    if (t->work_dir[0])
        fprintf(out, "\n  outputs of both sides: %s/{emu,gpu}/<case>/{out,ref,...}.npy\n", t->work_dir);
    fprintf(out, "\n%d passed, %d failed, %d not checked", count[0], count[1], count[2]);
    if (count[1])
        fprintf(out, ": something does not work (see FAIL above)\n");
    else if (count[2])
        fprintf(out, ": what needs a GPU was not checked; on a machine with one, run kbench selftest there\n");
    else
        fprintf(out, ": everything checked works\n");
}
