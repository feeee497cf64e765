/* test_launch_overhead.c - eager vs graph arithmetic on the fake backend's virtual clock
 * (measure_fake.h), the empty-kernel floor, error paths, the JSON block; and the real
 * emulator with kernels/kb_empty.cu, which must also compile with NVRTC for the GPUs. */
#include "check.h"
#include "backend/cuda/kb_nvrtc.h"
#include "engine/launch_overhead.h"
#include "results/record_json.h"
#include "measure_fake.h"
#include "engine/modules.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int empty_module_tag;
#define FAKE_EMPTY ((kb_module *)&empty_module_tag)

/* Cost model (fake_reset): eager launch = gap 3 + kernel 5; graph replay = base 8 +
 * per node (1 + kernel). The fake family launches 2 kernels per execution. */
static void test_arithmetic(void)
{
    fake_reset();
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_overhead ov;
    memset(&ov, 0, sizeof ov);
    ov.empty = FAKE_EMPTY;
    CHECK_MSG(kb_launch_overhead(&r, NULL, 10, &ov) == KB_OK, "%s", r.err);
    CHECK(ov.n == 10 && ov.launches == 2 && ov.empty == FAKE_EMPTY && ov.reps == KB_OVERHEAD_REPS);
    CHECK(KB_OVERHEAD_REPS >= 9);
    /* eager: 10 executions x 2 launches x (3 + 5) = 160 us -> 16 per execution */
    CHECK_MSG(ov.eager_us == 16.0, "eager %g", ov.eager_us);
    /* graph: 8 + 20 nodes x (1 + 5) = 128 us -> 12.8 per execution */
    CHECK_MSG(fabs(ov.graph_us - 12.8) < 1e-12, "graph %g", ov.graph_us);
    /* (160 - 128) / (10 x 2); every repetition alike: the quartiles too */
    CHECK_MSG(fabs(ov.per_launch_us - 1.6) < 1e-12, "per launch %g", ov.per_launch_us);
    CHECK(fabs(ov.per_launch_q1_us - 1.6) < 1e-12 && fabs(ov.per_launch_q3_us - 1.6) < 1e-12);
    CHECK(ov.null_reason[0] == 0);
    /* the floor: a fixed 128 empty launches, not the case's 10: eager 3 per launch;
     * graph (8 + 128 x 1) / 128 */
    CHECK(ov.empty_n == KB_OVERHEAD_EMPTY_N && KB_OVERHEAD_EMPTY_N >= 100);
    CHECK_MSG(ov.empty_eager_us == 3.0, "empty eager %g", ov.empty_eager_us);
    CHECK_MSG(fabs(ov.empty_graph_us - 136.0 / 128) < 1e-12, "empty graph %g", ov.empty_graph_us);
    CHECK(isfinite(ov.host_enqueue_us) && ov.host_enqueue_us >= 0);
    /* one capture of 10 executions (20 nodes) for the case, one of 128 empty launches,
     * each instantiated once and replayed 1 + KB_OVERHEAD_REPS times */
    CHECK(fake_count('B') == 2 && fake_count('N') == 2);
    CHECK(fake_count('C') == 20 + KB_OVERHEAD_EMPTY_N);
    CHECK(fake_count('G') == 2 * (1 + KB_OVERHEAD_REPS));
    CHECK(fake_count('S') == 4 * KB_OVERHEAD_REPS && fake_count('E') == 4 * KB_OVERHEAD_REPS);
    CHECK(fake_count('F') == 0);
}

/* Too few executions per window: per_launch_us is null with the reason; the rest stays. */
static void test_too_few_is_null(void)
{
    fake_reset();
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_overhead ov;
    memset(&ov, 0, sizeof ov);
    CHECK(kb_launch_overhead(&r, NULL, KB_OVERHEAD_MIN_N - 1, &ov) == KB_OK);
    CHECK(isnan(ov.per_launch_us) && isnan(ov.per_launch_q1_us) && isnan(ov.per_launch_q3_us));
    CHECK_MSG(strstr(ov.null_reason, "only 9 executions per window"), "%s", ov.null_reason);
    CHECK(ov.eager_us == 16.0);
}

/* A backend without full speed (the emulator): every window KB_OVERHEAD_FEW_REPS times. */
static void test_few_reps_without_full_speed(void)
{
    fake_reset();
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_backend slow = *r.be;
    slow.caps &= ~(unsigned)KB_CAP_FULL_SPEED;
    r.be = &slow;
    kb_overhead ov;
    memset(&ov, 0, sizeof ov);
    ov.empty = FAKE_EMPTY;
    CHECK(kb_launch_overhead(&r, NULL, 4, &ov) == KB_OK);
    CHECK(ov.reps == KB_OVERHEAD_FEW_REPS && KB_OVERHEAD_FEW_REPS >= 3 && KB_OVERHEAD_FEW_REPS < KB_OVERHEAD_REPS);
    CHECK(ov.eager_us == 16.0 && isnan(ov.per_launch_us) && ov.empty_eager_us == 3.0);
    /* the case's and the floor's graphs replayed 1 + KB_OVERHEAD_FEW_REPS times each */
    CHECK(fake_count('G') == 2 * (1 + KB_OVERHEAD_FEW_REPS));
    CHECK(fake_count('S') == 4 * KB_OVERHEAD_FEW_REPS && fake_count('E') == 4 * KB_OVERHEAD_FEW_REPS);
}

/* Noisy windows: the median and quartiles of the per-repetition differences. The timer
 * answers the scripted values, eager windows first, then the graph's. */
static void test_quartiles(void)
{
    static const double script[2 * KB_OVERHEAD_REPS] = {
        140, 100, 180, 120, 160, 110, 170, 130, 150,   /* eager, shuffled 100..180 */
        0, 0, 0, 0, 0, 0, 0, 0, 0,                      /* graph */
    };
    fake_reset();
    fk.script = script;
    fk.script_n = 2 * KB_OVERHEAD_REPS;
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_overhead ov;
    memset(&ov, 0, sizeof ov);
    CHECK(kb_launch_overhead(&r, NULL, 10, &ov) == KB_OK);
    /* differences / (10 x 2): 5 .. 9; quartiles of nine sorted values: 6, 7, 8 */
    CHECK_MSG(fabs(ov.per_launch_us - 7) < 1e-12, "%g", ov.per_launch_us);
    CHECK_MSG(fabs(ov.per_launch_q1_us - 6) < 1e-12 && fabs(ov.per_launch_q3_us - 8) < 1e-12, "%g %g",
              ov.per_launch_q1_us, ov.per_launch_q3_us);
}

/* A different model, to be sure the formula is not tuned to one set of numbers: a
 * kernel longer than the launch gap hides it, so eager ~ graph minus the graph's base. */
static void test_long_kernel_hides_launches(void)
{
    fake_reset();
    fk.kernel_us = 100;
    fk.gap_us = 2;
    fk.node_gap_us = 2;
    fk.graph_base_us = 0;
    fk.fam_launches = 1;
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_overhead ov;
    memset(&ov, 0, sizeof ov);
    CHECK(kb_launch_overhead(&r, NULL, 10, &ov) == KB_OK);
    CHECK(ov.launches == 1 && ov.eager_us == 102.0 && ov.graph_us == 102.0 && ov.per_launch_us == 0.0);
    /* no empty module: no floor */
    CHECK(isnan(ov.empty_eager_us) && isnan(ov.empty_graph_us));
    CHECK(fake_count('B') == 1);
}

static kb_status enqueue_nothing(kb_run *r, void *state) { return KB_OK; }

static void test_errors(void)
{
    fake_reset();
    kb_run r;
    kb_case c;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    kb_overhead ov;
    memset(&ov, 0, sizeof ov);
    CHECK(kb_launch_overhead(&r, NULL, 0, &ov) == KB_ERR_INPUT);

    /* a backend without graphs */
    kb_backend nograph = fake_be;
    nograph.caps &= ~(unsigned)KB_CAP_GRAPHS;   /* a consistent table: the bit and the four slots go */
    nograph.graph_begin = NULL;
    nograph.graph_end = NULL;
    nograph.graph_launch = NULL;
    nograph.graph_free = NULL;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    r.be = &nograph;
    CHECK(kb_launch_overhead(&r, NULL, 4, &ov) == KB_ERR_LAUNCH);
    CHECK(strstr(r.err, "cannot capture graphs") != NULL);

    /* a family that launches nothing cannot have a per-launch cost */
    kb_family fam = fake_family;
    fam.enqueue = enqueue_nothing;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    r.f = &fam;
    CHECK(kb_launch_overhead(&r, NULL, 4, &ov) == KB_ERR_INTERNAL);

    /* a failing timer is the case's error */
    fake_reset();
    fk.fail_stop_at = 2;
    fake_run(&r, &c, KB_LAUNCH_EAGER);
    CHECK(kb_launch_overhead(&r, NULL, 4, &ov) == KB_ERR_FAULT);
    CHECK(strstr(r.err, "fake: scripted fault") != NULL);
    CHECK(fk.capturing == 0);
}

static void test_json(void)
{
    kb_overhead ov;
    memset(&ov, 0, sizeof ov);
    ov.n = 100;
    ov.launches = 2;
    ov.eager_us = 4.5;
    ov.graph_us = 2.5;
    ov.per_launch_us = 1.0;
    ov.empty_eager_us = NAN;
    ov.empty_graph_us = NAN;
    ov.host_enqueue_us = 2.25;
    kb_case_result r;
    memset(&r, 0, sizeof r);
    r.case_id = "x";
    r.measure.clock = "cpu";
    r.overhead.done = 1;
    r.overhead.ov = ov;
    kb_record_ctx ctx = { .run_id = "run", .time = "2026-01-01T00:00:00Z", .backend = "emu", .dev = NULL };
    json_t *rec = kb_record_json(&ctx, &r);
    json_t *j = json_incref(json_object_get(rec, "launch_overhead"));
    json_decref(rec);
    CHECK(j != NULL);
    if (!j)
        return;
    CHECK(json_integer_value(json_object_get(j, "n")) == 100);
    CHECK(json_integer_value(json_object_get(j, "launches")) == 2);
    CHECK(json_real_value(json_object_get(j, "per_launch_us")) == 1.0);
    CHECK(json_real_value(json_object_get(j, "host_enqueue_us")) == 2.25);
    CHECK(json_is_null(json_object_get(j, "empty_eager_us")));
    CHECK(json_is_null(json_object_get(j, "empty_n")) && json_is_null(json_object_get(j, "null_reason")));
    CHECK(!strcmp(json_string_value(json_object_get(j, "clock")), "cpu"));
    json_decref(j);
}

static void test_choice_of_n(void)
{
    CHECK(kb_launch_overhead_n(2.0, KB_CAP_FULL_SPEED) == 100);      /* tiny kernel: the cap */
    CHECK(kb_launch_overhead_n(1000.0, KB_CAP_FULL_SPEED) == 20);    /* 1 ms: 20 fit in 20 ms */
    CHECK(kb_launch_overhead_n(1.5e6, 0) == 1);      /* longer than the budget: still one */
    CHECK(kb_launch_overhead_n(0.0, KB_CAP_FULL_SPEED) == 100);      /* unknown median */
    CHECK(kb_launch_overhead_n(2.0, 0) == 1);      /* the emulator: one execution per window */
    CHECK(kb_launch_overhead_n(10e3, 0) == 1);
}

/* ---- the real emulator and NVRTC with kernels/kb_empty.cu ---- */

static kb_status empty_enqueue(kb_run *r, void *state)
{
    static const kb_geom g = { { 1, 1, 1 }, { 1, 1, 1 }, 0, { 1, 1, 1 } };
    return kb_run_launch(r, KB_EMPTY_ENTRY, &g, NULL, 0);
}

static void test_emulator(void)
{
    empty_emu e;
    if (empty_emu_open(&e, empty_enqueue)) {
        kb_overhead ov;
        memset(&ov, 0, sizeof ov);
        ov.empty = e.ref->mod;
        kb_status st = kb_launch_overhead(&e.r, NULL, KB_OVERHEAD_MIN_N, &ov);
        CHECK_MSG(st == KB_OK, "%s", e.r.err);
        /* CPU times: only their presence and sign can be asserted */
        CHECK(ov.launches == 1 && ov.eager_us > 0 && ov.graph_us > 0 && isfinite(ov.per_launch_us));
        CHECK(ov.reps == KB_OVERHEAD_FEW_REPS);   /* the emulator has no full speed */
        CHECK(ov.empty_eager_us > 0 && ov.empty_graph_us > 0 && ov.host_enqueue_us > 0);
    }
    empty_emu_close(&e);
}

static void test_nvrtc_compiles_empty(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", kb_kernels_dir(), KB_EMPTY_SOURCE);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f)
        return;
    static char src[8192];
    size_t n = fread(src, 1, sizeof src - 1, f);
    fclose(f);
    src[n] = 0;
    const char *inc[] = { kb_kernels_dir() };
    static const int sms[] = { 80, 89, 90 };
    for (int i = 0; i < 3; i++) {
        void *cubin = NULL;
        size_t bytes = 0;
        kb_sb log;
        kb_sb_init(&log);
        kb_status st = kb_nvrtc_compile(src, path, inc, 1, NULL, 0, sms[i], &cubin, &bytes, &log);
        CHECK_MSG(st == KB_OK && cubin && bytes > 0, "sm_%d: %s", sms[i], log.s);
        CHECK_MSG(strstr(log.s, KB_EMPTY_ENTRY) != NULL, "sm_%d log names no kb_empty: %s", sms[i], log.s);
        free(cubin);
        kb_sb_free(&log);
    }
}

int main(void)
{
    RUN(test_arithmetic);
    RUN(test_too_few_is_null);
    RUN(test_few_reps_without_full_speed);
    RUN(test_quartiles);
    RUN(test_long_kernel_hides_launches);
    RUN(test_errors);
    RUN(test_json);
    RUN(test_choice_of_n);
    RUN(test_emulator);
    RUN(test_nvrtc_compiles_empty);
    TEST_MAIN_END();
}
