/* measure_fake.h - a fake backend and family for the measurement tests (test_measure.c,
 * test_launch_overhead.c), and the real emulator with kb_empty.cu as a one-launch family.
 * Header-only: each test program includes it once.
 *
 * The fake keeps a virtual device clock with a simple cost model and logs every call
 * as one character, so tests can check both what was timed and in which order:
 *   F fill   S timer_start   E timer_stop   L eager launch   C launch recorded in a capture
 *   B graph_begin   N graph_end   G graph_launch   Y sync
 * Cost model [us]: an eager launch costs fk.gap_us + its kernel time; a graph replay
 * costs fk.graph_base_us + per node (fk.node_gap_us + kernel time); a fill costs
 * fk.fill_us. The case's kernel ("k") takes fk.kernel_us, kb_empty takes 0.
 * timer_stop returns the virtual time since timer_start, or the next scripted value
 * when fk.script is set.
 */
#ifndef KB_MEASURE_FAKE_H
#define KB_MEASURE_FAKE_H

#include "engine/exec.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FAKE_LOG_MAX (1 << 20)

static struct {
    /* configuration */
    double kernel_us, gap_us, graph_base_us, node_gap_us, fill_us;
    const double *script;   /* scripted timer values, cycled; NULL: virtual clock */
    int script_n;
    int fail_stop_at;       /* the timer_stop call (1-based) that fails; 0 never */
    long sleep_ns;          /* real time spent per eager launch (timeout test) */
    int l2_bytes;
    int fam_launches;       /* launches per execution of the fake family */
    /* state */
    double clock_us, t_start_us;
    int capturing;
    int script_i, n_stop, n_fills, n_allocs;
    kb_dptr next_ptr, last_fill_dst;
    size_t last_fill_bytes;
    char log[FAKE_LOG_MAX];
    int n_log;
} fk;

struct kb_graph { int nodes; double kernel_sum_us; };
static struct kb_graph fake_capture;

static void fake_reset(void)
{
    memset(&fk, 0, sizeof fk);
    fk.kernel_us = 5;
    fk.gap_us = 3;
    fk.graph_base_us = 8;
    fk.node_gap_us = 1;
    fk.fill_us = 100;
    fk.l2_bytes = 1 << 20;
    fk.fam_launches = 2;
    fk.next_ptr = 0x10000;
}

static void fake_log(char c)
{
    if (fk.n_log < FAKE_LOG_MAX - 1)
        fk.log[fk.n_log++] = c;
    fk.log[fk.n_log] = 0;
}

static int fake_count(char c)
{
    int n = 0;
    for (int i = 0; i < fk.n_log; i++)
        n += fk.log[i] == c;
    return n;
}

static const char *fake_last_error(kb_backend_ctx *x) { return "fake: scripted fault"; }

static kb_status fake_device_info(kb_backend_ctx *x, kb_device_info *d)
{
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "fake GPU");
    d->sm = 90;
    d->l2_bytes = fk.l2_bytes;
    return KB_OK;
}

static kb_status fake_alloc(kb_backend_ctx *x, size_t bytes, kb_dptr *out)
{
    fk.n_allocs++;
    *out = fk.next_ptr;
    fk.next_ptr += (bytes + 255) & ~(size_t)255;
    return KB_OK;
}

static void fake_free(kb_backend_ctx *x, kb_dptr p) {}

/* Uploads (the guard bytes after each allocation) go nowhere: nothing is read back. */
static kb_status fake_upload(kb_backend_ctx *x, kb_dptr dst, const void *src, size_t bytes) { return KB_OK; }

static kb_status fake_fill(kb_backend_ctx *x, kb_dptr dst, uint8_t byte, size_t bytes)
{
    fake_log('F');
    fk.n_fills++;
    fk.last_fill_dst = dst;
    fk.last_fill_bytes = bytes;
    fk.clock_us += fk.fill_us;
    return KB_OK;
}

static double fake_kernel_us(const char *entry) { return strcmp(entry, "kb_empty") ? fk.kernel_us : 0.0; }

static kb_status fake_launch(kb_backend_ctx *x, kb_module *m, const char *entry, const kb_geom *g,
                             const kb_arg *args, int nargs)
{
    if (fk.capturing) {
        fake_log('C');
        fake_capture.nodes++;
        fake_capture.kernel_sum_us += fake_kernel_us(entry);
        return KB_OK;
    }
    fake_log('L');
    fk.clock_us += fk.gap_us + fake_kernel_us(entry);
    if (fk.sleep_ns) {
        struct timespec ts = { 0, fk.sleep_ns };
        nanosleep(&ts, NULL);
    }
    return KB_OK;
}

static kb_status fake_sync(kb_backend_ctx *x)
{
    fake_log('Y');
    return KB_OK;
}

static kb_status fake_timer_start(kb_backend_ctx *x)
{
    fake_log('S');
    fk.t_start_us = fk.clock_us;
    return KB_OK;
}

static kb_status fake_timer_stop(kb_backend_ctx *x, double *us)
{
    fake_log('E');
    fk.n_stop++;
    if (fk.fail_stop_at && fk.n_stop == fk.fail_stop_at)
        return KB_ERR_FAULT;
    *us = fk.script ? fk.script[fk.script_i++ % fk.script_n] : fk.clock_us - fk.t_start_us;
    return KB_OK;
}

static kb_status fake_graph_begin(kb_backend_ctx *x)
{
    fake_log('B');
    fk.capturing = 1;
    memset(&fake_capture, 0, sizeof fake_capture);
    return KB_OK;
}

static kb_status fake_graph_end(kb_backend_ctx *x, kb_graph **out)
{
    fake_log('N');
    fk.capturing = 0;
    *out = malloc(sizeof **out);
    if (!*out)
        return KB_ERR_OOM;
    **out = fake_capture;
    return KB_OK;
}

static kb_status fake_graph_launch(kb_backend_ctx *x, kb_graph *g)
{
    fake_log('G');
    fk.clock_us += fk.graph_base_us + g->nodes * fk.node_gap_us + g->kernel_sum_us;
    return KB_OK;
}

static void fake_graph_free(kb_backend_ctx *x, kb_graph *g) { free(g); }

static const kb_backend fake_be = {
    .name = "fake",
    .caps = KB_CAP_GRAPHS | KB_CAP_FULL_SPEED,   /* a GPU's pace (the emulator's: test_launch_overhead) */
    .last_error = fake_last_error,
    .device_info = fake_device_info,
    .alloc = fake_alloc,
    .free = fake_free,
    .upload = fake_upload,
    .fill = fake_fill,
    .launch = fake_launch,
    .sync = fake_sync,
    .timer_start = fake_timer_start,
    .timer_stop = fake_timer_stop,
    .graph_begin = fake_graph_begin,
    .graph_end = fake_graph_end,
    .graph_launch = fake_graph_launch,
    .graph_free = fake_graph_free,
};

/* ---- the fake family: fk.fam_launches launches of "k" per execution ---- */
static kb_status fam_enqueue(kb_run *r, void *state)
{
    static const kb_geom g = { { 4, 1, 1 }, { 128, 1, 1 }, 0, { 1, 1, 1 } };
    for (int i = 0; i < fk.fam_launches; i++) {
        kb_status st = kb_run_launch(r, "k", &g, NULL, 0);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

static kb_work fam_work(const kb_case *c)
{
    kb_work w = { 2e6, 3e5, 1e5, 0 };
    return w;
}

static const kb_family fake_family = { .name = "fake", .work = fam_work, .enqueue = fam_enqueue };

/* A run over the fake backend and family, launch mode m. */
static void fake_run(kb_run *r, kb_case *c, kb_launch_mode m)
{
    memset(r, 0, sizeof *r);
    memset(c, 0, sizeof *c);
    c->launch = m;
    r->be = &fake_be;
    r->f = &fake_family;
    r->c = c;
}

/* ---- the real emulator with kernels/kb_empty.cu as a one-launch family ---- */

#include "engine/launch_overhead.h"
#include "engine/modules.h"   /* (test programs include check.h before this header) */

typedef struct {
    kb_backend_ctx *bx;
    kb_modules *mods;
    const kb_module_ref *ref;
    kb_family fam;
    kb_case c;
    kb_run r;       /* ready to measure the family {fam_work, enqueue} */
} empty_emu;

/* Open the emulator (2 workers) and build kb_empty.cu through the compile cache. Returns
 * 1 when e->r is ready; CHECKs record why not. Call empty_emu_close in every case. */
static int empty_emu_open(empty_emu *e, kb_status (*enqueue)(kb_run *, void *))
{
    char err[512] = "";
    kb_backend_opts bo = { .emu_threads = 2 };
    memset(e, 0, sizeof *e);
    kb_status st = kb_backend_emu.init(&bo, &e->bx, err, sizeof err);
    CHECK_MSG(st == KB_OK, "%s", err);
    if (st != KB_OK)
        return 0;
    e->mods = kb_modules_new(&kb_backend_emu, e->bx, NULL, kb_kernels_dir());
    e->ref = kb_modules_get(e->mods, KB_EMPTY_SOURCE, "", 90);
    CHECK_MSG(e->ref->status == KB_OK, "%s", e->ref->log);
    if (e->ref->status != KB_OK)
        return 0;
    e->fam = (kb_family){ .name = "empty", .work = fam_work, .enqueue = enqueue };
    e->r.be = &kb_backend_emu;
    e->r.bx = e->bx;
    e->r.mod = e->ref->mod;
    e->r.f = &e->fam;
    e->r.c = &e->c;
    return 1;
}

static void empty_emu_close(empty_emu *e)
{
    kb_modules_free(e->mods);
    if (e->bx)
        kb_backend_emu.fini(e->bx);
}

#endif /* KB_MEASURE_FAKE_H */
