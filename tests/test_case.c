/* test_case.c - the case pipeline (engine/case.c) on the real emulator with the gelu
 * family: which blocks each outcome fills (ok eager, ok graph, skipped, compile error),
 * the statuses and reasons, per-stage times, measurement caps and overrides, --dump. */
#include "check.h"
#include "engine/case.h"
#include "kernels/families.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static kb_backend_ctx *bx;
static kb_device_info dev;

/* gelu, variant by name, n elements, every param at its default. */
static kb_case gelu_case(const char *variant, int64_t n, kb_launch_mode launch)
{
    kb_case c;
    memset(&c, 0, sizeof c);
    c.family = kb_family_find("gelu");
    const kb_family *f = kb_families[c.family];
    c.variant = kb_family_variant_find(f, variant);
    c.dtype = KB_DT_FP32;
    c.dims[0] = n;
    for (int i = 0; i < f->n_params; i++)
        c.params[i] = f->params[i].def;
    c.launch = launch;
    c.seed = 42;
    return c;
}

static void pipeline(kb_pipeline *p, kb_modules *mods)
{
    memset(p, 0, sizeof *p);
    p->be = &kb_backend_emu;
    p->bx = bx;
    p->dev = &dev;
    p->mods = mods;
    p->empty = kb_modules_get(mods, KB_EMPTY_SOURCE, "", dev.sm);
}

static void test_ok_eager_and_graph(void)
{
    kb_modules *mods = kb_modules_new(&kb_backend_emu, bx, NULL, kb_kernels_dir());
    kb_pipeline p;
    pipeline(&p, mods);
    kb_measure_settings ms = KB_MEASURE_DEFAULTS;
    kb_case c = gelu_case("vec", 5000, KB_LAUNCH_EAGER);
    kb_case_result r;
    kb_case_run(&p, &c, "gelu-eager", &ms, &r);
    CHECK_MSG(r.status == KB_CASE_OK && r.error == KB_OK, "%s: %s", kb_case_status_name(r.status), r.reason);
    CHECK(r.reason[0] == 0 && !strcmp(r.case_id, "gelu-eager") && r.family == kb_families[c.family]);
    CHECK(r.compile.done && r.compile.log != NULL && r.compile.have_resources);
    CHECK(r.verify.done && r.verify.v.n == 5000 && r.verify.v.n_bad == 0);
    /* the emulator lacks KB_CAP_FULL_SPEED: the suite's 10 samples are capped */
    CHECK(r.measure.done && r.measure.m.n >= 1 && r.measure.m.n <= KB_SLOW_MAX_SAMPLES);
    CHECK(!strcmp(r.measure.clock, "cpu"));
    CHECK(r.derived.done && r.derived.d.have_rates && !r.derived.d.have_roof);
    CHECK(r.work.bytes_read == 5000 * 4.0 && r.work.bytes_written == 5000 * 4.0);
    CHECK(r.overhead.done && r.overhead.ov.launches == 1 && r.overhead.error[0] == 0); /* eager + graphs */
    CHECK(!r.telemetry.done);                      /* no telemetry slot on the emulator */
    for (int s = 0; s <= KB_STAGE_OVERHEAD; s++)   /* every stage that did work took time */
        CHECK_MSG(r.stage_ms[s] > 0, "stage %s", kb_stage_name((kb_stage)s));
    CHECK(r.wall_ms >= r.stage_ms[KB_STAGE_MEASURE]);
    kb_case_result_free(&r);

    /* graph launch: measured as a graph replay, no overhead block (its eager twin has it);
     * command-line overrides reach the sampling loop */
    kb_measure_overrides o = { 2, 2, 0 };
    p.overrides = &o;
    c = gelu_case("naive", 3000, KB_LAUNCH_GRAPH);
    kb_case_run(&p, &c, "gelu-graph", &ms, &r);
    CHECK_MSG(r.status == KB_CASE_OK, "%s", r.reason);
    CHECK(r.measure.done && r.measure.m.n == 2 && !r.overhead.done);
    kb_case_result_free(&r);
    kb_modules_free(mods);
}

/* The emulator with graph capture failing as the test says: only the overhead stage
 * captures graphs for an eager case. */
static kb_status graph_fails_with;
static kb_status failing_graph_begin(kb_backend_ctx *x) { return graph_fails_with; }

/* A fault while timing the launch overhead is the case's fault (the context is lost);
 * another failure there leaves the measured case ok, with the reason kept. */
static void test_fault_in_overhead_fails_the_case(void)
{
    kb_backend shim = kb_backend_emu;
    shim.graph_begin = failing_graph_begin;
    kb_modules *mods = kb_modules_new(&kb_backend_emu, bx, NULL, kb_kernels_dir());
    kb_pipeline p;
    pipeline(&p, mods);
    p.be = &shim;
    kb_measure_settings ms = KB_MEASURE_DEFAULTS;
    kb_case c = gelu_case("vec", 3000, KB_LAUNCH_EAGER);
    kb_case_result r;
    graph_fails_with = KB_ERR_FAULT;
    kb_case_run(&p, &c, "gelu-overhead-fault", &ms, &r);
    CHECK_MSG(r.status == KB_CASE_FAULT && r.error == KB_ERR_FAULT, "%s", kb_case_status_name(r.status));
    CHECK(r.measure.done && !r.overhead.done);
    kb_case_result_free(&r);
    graph_fails_with = KB_ERR_LAUNCH;
    kb_case_run(&p, &c, "gelu-overhead-launch", &ms, &r);
    CHECK_MSG(r.status == KB_CASE_OK, "%s: %s", kb_case_status_name(r.status), r.reason);
    CHECK(!r.overhead.done && r.overhead.error[0] != 0);
    kb_case_result_free(&r);
    kb_modules_free(mods);
}

/* A graph case is verified from a graph replay: a replay that computes nothing is wrong
 * (verifying an eager twin would have called it ok). */
static kb_status replay_nothing(kb_backend_ctx *x, kb_graph *g) { return KB_OK; }

static void test_graph_case_verifies_the_replay(void)
{
    kb_backend shim = kb_backend_emu;
    kb_modules *mods = kb_modules_new(&kb_backend_emu, bx, NULL, kb_kernels_dir());
    kb_pipeline p;
    pipeline(&p, mods);
    kb_measure_settings ms = KB_MEASURE_DEFAULTS;
    kb_case c = gelu_case("naive", 3000, KB_LAUNCH_GRAPH);
    kb_case_result r;
    kb_case_run(&p, &c, "gelu-graph-ok", &ms, &r);
    CHECK_MSG(r.status == KB_CASE_OK, "%s", r.reason);
    kb_case_result_free(&r);
    shim.graph_launch = replay_nothing;
    p.be = &shim;
    kb_case_run(&p, &c, "gelu-graph-empty", &ms, &r);
    CHECK_MSG(r.status == KB_CASE_WRONG, "%s: %s", kb_case_status_name(r.status), r.reason);
    kb_case_result_free(&r);
    kb_modules_free(mods);
}

static void test_skipped(void)
{
    kb_modules *mods = kb_modules_new(&kb_backend_emu, bx, NULL, kb_kernels_dir());
    kb_pipeline p;
    pipeline(&p, mods);
    kb_measure_settings ms = KB_MEASURE_DEFAULTS;
    kb_case c = gelu_case("vec", 100, KB_LAUNCH_EAGER);
    c.params[kb_family_param_find(kb_families[c.family], "BLOCK")] = 33;
    kb_case_result r;
    kb_case_run(&p, &c, "gelu-bad-block", &ms, &r);
    CHECK(r.status == KB_CASE_SKIPPED && !kb_case_status_failed(r.status));
    CHECK_MSG(strstr(r.reason, "BLOCK=33") != NULL, "%s", r.reason);
    CHECK(!r.compile.done && !r.verify.done && !r.measure.done && !r.derived.done);
    CHECK(r.stage_ms[KB_STAGE_VALID] > 0 && r.stage_ms[KB_STAGE_COMPILE] == 0);
    kb_case_result_free(&r);
    /* buffers the device cannot hold: skipped before anything is allocated */
    kb_device_info small = dev;
    small.total_mem_bytes = 1 << 20;
    p.dev = &small;
    c = gelu_case("vec", 1 << 20, KB_LAUNCH_EAGER);
    kb_case_run(&p, &c, "gelu-too-big", &ms, &r);
    CHECK(r.status == KB_CASE_SKIPPED && !r.compile.done);
    CHECK_MSG(strstr(r.reason, "its buffers need at least 8.0 MiB; the device has 1.0 MiB"), "%s", r.reason);
    kb_case_result_free(&r);
    kb_modules_free(mods);
}

static void test_compile_error_and_dump(void)
{
    char dir[] = "/tmp/kb_test_case.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[256];
    snprintf(path, sizeof path, "%s/gelu.cu", dir);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("#error deliberately broken\n", f);
    fclose(f);
    kb_modules *mods = kb_modules_new(&kb_backend_emu, bx, NULL, dir);
    kb_pipeline p;
    pipeline(&p, mods);
    kb_measure_settings ms = KB_MEASURE_DEFAULTS;
    kb_case c = gelu_case("naive", 100, KB_LAUNCH_EAGER);
    kb_case_result r;
    kb_case_run(&p, &c, "gelu-broken", &ms, &r);
    CHECK(r.status == KB_CASE_COMPILE_ERROR && r.error == KB_ERR_COMPILE && kb_case_status_failed(r.status));
    CHECK_MSG(strstr(r.reason, "gelu.cu did not compile for sm_90"), "%s", r.reason);
    CHECK(r.compile.done && strstr(r.compile.log, "deliberately broken"));
    CHECK(!r.verify.done && !r.measure.done);
    kb_case_result_free(&r);
    kb_modules_free(mods);

    /* --dump of a chosen case: its arrays land under dir/<id>/ */
    mods = kb_modules_new(&kb_backend_emu, bx, NULL, kb_kernels_dir());
    pipeline(&p, mods);
    p.dump_dir = dir;
    p.dump_all = 1;
    kb_case_run(&p, &c, "gelu/dumped", &ms, &r);
    CHECK_MSG(r.status == KB_CASE_OK && p.dump_err[0] == 0, "%s %s", r.reason, p.dump_err);
    snprintf(path, sizeof path, "%s/gelu__dumped/out.npy", dir);
    struct stat st;
    CHECK_MSG(stat(path, &st) == 0 && st.st_size > 100 * 4, "%s", path);
    kb_case_result_free(&r);
    kb_modules_free(mods);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* The OPTIONAL prune hook: asked after the compile stage with the resources; a refusal
 * ends the case skipped, "pruned: <why>", before setup. */
static int prune_count;
static int prune_unknown_registers(void *user, const kb_case *c, const kb_resources *res, char *why, size_t n)
{
    (void)c;
    prune_count++;
    if (*(int *)user && res && res->registers < 0) {
        snprintf(why, n, "registers unknown");
        return 0;
    }
    return 1;
}

static void test_prune_hook(void)
{
    kb_modules *mods = kb_modules_new(&kb_backend_emu, bx, NULL, kb_kernels_dir());
    kb_pipeline p;
    pipeline(&p, mods);
    int refuse = 1;
    p.prune = prune_unknown_registers;
    p.prune_user = &refuse;
    kb_measure_settings ms = KB_MEASURE_DEFAULTS;
    kb_case c = gelu_case("vec", 1000, KB_LAUNCH_EAGER);
    kb_case_result r;
    kb_case_run(&p, &c, "gelu-pruned", &ms, &r);
    CHECK(r.status == KB_CASE_SKIPPED && prune_count == 1);
    CHECK_MSG(strcmp(r.reason, "pruned: registers unknown") == 0, "%s", r.reason);
    CHECK(r.compile.done && !r.verify.done && !r.measure.done);
    kb_case_result_free(&r);
    refuse = 0;
    kb_case_run(&p, &c, "gelu-kept", &ms, &r);
    CHECK(r.status == KB_CASE_OK && prune_count == 2);
    kb_case_result_free(&r);
    kb_modules_free(mods);
}

int main(void)
{
    char err[512] = "";
    kb_backend_opts bo = { .emu_threads = 2 };
    if (kb_backend_emu.init(&bo, &bx, err, sizeof err) != KB_OK || kb_backend_emu.device_info(bx, &dev) != KB_OK) {
        fprintf(stderr, "emulator: %s\n", err);
        return 1;
    }
    RUN(test_ok_eager_and_graph);
    RUN(test_fault_in_overhead_fails_the_case);
    RUN(test_graph_case_verifies_the_replay);
    RUN(test_skipped);
    RUN(test_prune_hook);
    RUN(test_compile_error_and_dump);
    kb_backend_emu.fini(bx);
    TEST_MAIN_END();
}
