/* test_tune.c - the tuner's pure parts: strategies on synthetic landscapes with known
 * optima (seeded, budget-bound), the winner beyond the noise, static pruning, the space
 * built from a suite, and the tuning database's keys, resume and staleness. */
#include "check.h"
#include "suite/plan.h"
#include "session/prune.h"
#include "tune/replay.h"
#include "tune/space.h"
#include "tune/strategy.h"
#include "tune/tunedb.h"
#include "tune/winner.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

/* A 3-axis grid (8 x 8 x 6 = 384 configurations) with a smooth bowl around (5, 2, 3),
 * a little deterministic roughness, and every 7th configuration failing. */
#define AX 3
static const int dims3[AX] = { 8, 8, 6 };
typedef struct {
    int n;
    int level[8 * 8 * 6 * AX];
    int calls;
    int seen[8 * 8 * 6];
    int repeat;                    /* a configuration was evaluated twice */
    int stop_after;                /* > 0: return NAN on that call */
} land;

static void land_init(land *l)
{
    memset(l, 0, sizeof *l);
    for (int a = 0; a < dims3[0]; a++)
        for (int b = 0; b < dims3[1]; b++)
            for (int c = 0; c < dims3[2]; c++) {
                l->level[l->n * AX] = a;
                l->level[l->n * AX + 1] = b;
                l->level[l->n * AX + 2] = c;
                l->n++;
            }
}

static double land_time(const land *l, int i)
{
    const int *v = &l->level[i * AX];
    if (i % 7 == 3 && !(v[0] == 5 && v[1] == 2 && v[2] == 3))
        return INFINITY;
    double d = (v[0] - 5) * (v[0] - 5) + (v[1] - 2) * (v[1] - 2) + 2.0 * (v[2] - 3) * (v[2] - 3);
    return 10.0 + d + 0.3 * ((i * 2654435761u) % 7) / 7.0;
}

static double land_fn(void *user, int i)
{
    land *l = user;
    if (l->stop_after && l->calls + 1 == l->stop_after)
        return NAN;
    l->calls++;
    l->repeat |= l->seen[i]++;
    return land_time(l, i);
}

static int land_optimum(const land *l)
{
    int best = 0;
    for (int i = 1; i < l->n; i++)
        if (land_time(l, i) < land_time(l, best))
            best = i;
    return best;
}

static void search(kb_tune_strategy s, int budget, uint64_t seed, land *l, kb_tune_trace *t)
{
    kb_tune_view v = { l->n, AX, l->level };
    kb_tune_search_opts o = { s, budget, seed, 0 };
    CHECK(kb_tune_search(&o, &v, land_fn, l, t) == KB_OK);
}

static void test_brute_finds_optimum(void)
{
    land l;
    land_init(&l);
    kb_tune_trace t;
    search(KB_TUNE_BRUTE, 0, 1, &l, &t);
    CHECK(t.evaluations == l.n && l.calls == l.n && !l.repeat);
    CHECK(t.best == land_optimum(&l));
    CHECK(t.order[0] == 0 && t.order[l.n - 1] == l.n - 1);
    kb_tune_trace_free(&t);
}

/* Every strategy: the budget is respected, nothing is evaluated twice, the best is the
 * minimum of what was evaluated and never a failed configuration, and a seed repeats
 * the same search exactly. */
static void test_budget_seed_memo(void)
{
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++) {
        land a, b;
        land_init(&a);
        land_init(&b);
        kb_tune_trace ta, tb;
        search((kb_tune_strategy)s, 40, 7, &a, &ta);
        search((kb_tune_strategy)s, 40, 7, &b, &tb);
        CHECK_MSG(ta.evaluations == 40 && a.calls == 40, "%s: %d evaluations", kb_tune_strategy_name(s), ta.evaluations);
        CHECK(!a.repeat);
        CHECK(ta.evaluations == tb.evaluations && memcmp(ta.order, tb.order, 40 * sizeof(int)) == 0);
        double min = INFINITY;
        for (int k = 0; k < ta.evaluations; k++)
            min = fmin(min, ta.times[k]);
        CHECK(ta.best >= 0 && ta.best_time == min && isfinite(ta.best_time));
        CHECK(ta.best_found_at >= 1 && ta.order[ta.best_found_at - 1] == ta.best);
        kb_tune_trace_free(&ta);
        kb_tune_trace_free(&tb);
    }
}

/* The local searches find the bowl's optimum of 384 configurations with a fraction of
 * brute force's evaluations, for most seeds; a different seed gives a different order. */
static void test_local_search_finds_optimum(void)
{
    for (int s = KB_TUNE_ILS; s <= KB_TUNE_ANNEAL; s++) {
        int found = 0;
        for (uint64_t seed = 1; seed <= 10; seed++) {
            land l;
            land_init(&l);
            kb_tune_trace t;
            search((kb_tune_strategy)s, 96, seed, &l, &t);
            found += t.best == land_optimum(&l);
            kb_tune_trace_free(&t);
        }
        CHECK_MSG(found >= 8, "%s found the optimum for %d of 10 seeds", kb_tune_strategy_name(s), found);
    }
    land a, b;
    land_init(&a);
    land_init(&b);
    kb_tune_trace ta, tb;
    search(KB_TUNE_RANDOM, 20, 1, &a, &ta);
    search(KB_TUNE_RANDOM, 20, 2, &b, &tb);
    CHECK(memcmp(ta.order, tb.order, 20 * sizeof(int)) != 0);
    kb_tune_trace_free(&ta);
    kb_tune_trace_free(&tb);
}

/* NAN from the objective (Ctrl-C) stops the search with what finished kept. */
static void test_stop(void)
{
    land l;
    land_init(&l);
    l.stop_after = 6;
    kb_tune_trace t;
    search(KB_TUNE_ILS, 0, 3, &l, &t);
    CHECK(t.stopped && t.evaluations == 5 && l.calls == 5);
    kb_tune_trace_free(&t);
    kb_tune_strategy s;
    CHECK(kb_tune_strategy_parse("ils", &s) == 0 && s == KB_TUNE_ILS);
    CHECK(kb_tune_strategy_parse("genetic", &s) == -1);
}

static void test_winner(void)
{
    kb_tune_result r[] = {
        { "a", 1, 100.0, 0.001, -1, -1 },  /* [99.8, 100.2] */
        { "b", 1, 90.0, 0.001, -1, -1 },   /* [89.8, 90.2]: fastest, alone */
        { "c", 0, 50.0, 0.001, -1, -1 },   /* failed: never the winner */
        { "d", 1, 95.0, 0.001, -1, -1 },
    };
    kb_tune_choice c;
    CHECK(kb_tune_choose(r, 4, &c) == 1 && !c.tie && c.n_tied == 0);
    CHECK(fabs(c.lo_us - (90.0 - 1.96 * 0.09)) < 1e-9);
    /* d within b's noise: a tie; with resources known, fewer registers goes first */
    r[3].median_us = 90.1;
    r[1].registers = 96;
    r[3].registers = 64;
    CHECK(kb_tune_choose(r, 4, &c) == 3 && c.tie && c.n_tied == 1 && c.tied[0] == 1);
    /* unknown resources: the median decides, then the id */
    r[1].registers = r[3].registers = -1;
    CHECK(kb_tune_choose(r, 4, &c) == 1 && c.tie && c.tied[0] == 3);
    kb_tune_result none[] = { { "x", 0, 1.0, 0.0, -1, -1 } };
    CHECK(kb_tune_choose(none, 1, &c) == -1 && c.winner == -1);
}

static void test_prune(void)
{
    kb_device_info d;
    memset(&d, 0, sizeof d);
    d.max_shmem_per_block_optin = 227 * 1024;
    kb_resources ok = { 128, 0, 0, 0, 16384, 512 };
    char why[256] = "";
    CHECK(kb_tune_prune(&d, NULL, &ok, why, sizeof why) == 1);
    CHECK(kb_tune_prune(&d, NULL, NULL, why, sizeof why) == 1);
    kb_resources unknown = { -1, -1, -1, -1, -1, -1 };
    CHECK(kb_tune_prune(&d, NULL, &unknown, why, sizeof why) == 1);
    kb_resources spill = ok;
    spill.spill_store_bytes = 48;
    CHECK(kb_tune_prune(&d, NULL, &spill, why, sizeof why) == 0 && strstr(why, "spills registers (48 bytes"));
    kb_resources big = ok;
    big.static_shmem_bytes = 240 * 1024;
    CHECK(kb_tune_prune(&d, NULL, &big, why, sizeof why) == 0 && strstr(why, "static shared memory"));
    kb_resources regs = ok;
    regs.registers = 300;
    CHECK(kb_tune_prune(&d, NULL, &regs, why, sizeof why) == 0 && strstr(why, "registers"));
}

static const char suite_text[] =
    "suite: t\n"
    "benchmarks:\n"
    "  - family: gelu\n"
    "    variant: [naive, vec]\n"
    "    dtype: [fp32, bf16]\n"
    "    shape: [{n: 4096}]\n"
    "    params: {BLOCK: [64, 128, 2000], VEC: [2, 4], form: [erf, tanh]}\n";

/* Problems are family/dtype/dims/pad/launch plus the choice params; configurations the
 * variant and tile params; valid() refusals (BLOCK 2000) never enter the space. */
static void test_space(void)
{
    kb_plan p;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_suite_plan_text(suite_text, "t.yaml", kb_families, kb_n_families, 0, &p, &err) == KB_OK);
    kb_walk_opts o = { NULL, 0, NULL, { 90, 0, 227 * 1024 } };
    kb_cases l;
    kb_tune_space s;
    CHECK(kb_cases_build(&p, &o, &l) == KB_OK);
    CHECK(kb_tune_space_of_cases(&p, &l, &s) == KB_OK);
    CHECK_MSG(s.n == 4, "%d problems", s.n);   /* 2 dtypes x 2 forms */
    CHECK_MSG(strcmp(s.problems[0].key, "gelu(form=erf,ypad=-1)/fp32/4096/pad0/eager") == 0, "%s",
              s.problems[0].key);
    /* naive: BLOCK 64, 128; vec: BLOCK x VEC = 4 */
    CHECK_MSG(s.problems[0].n == 6, "%d configs", s.problems[0].n);
    CHECK(s.invalid == 12 && strstr(s.first_invalid, "BLOCK=2000"));
    const kb_tune_problem *q = &s.problems[0];
    CHECK(q->n_axes == 4 && q->n_values[0] == 2);   /* variant, BLOCK, VEC, max_grid (vec only) */
    int found = 0;
    for (int i = 0; i < q->n; i++)
        found += strcmp(q->configs[i].config, "vec(BLOCK=128,VEC=4,max_grid=0)") == 0;
    CHECK(found == 1);
    kb_tune_space_free(&s);
    kb_cases_free(&l);
    kb_plan_free(&p);
    kb_sb_free(&err);
}

static const char decode_text[] =
    "suite: t\n"
    "benchmarks:\n"
    "  - {family: attention, variant: mma, dtype: bf16, shape: [{b: 1, h: 8, s: 256, d: 64}], params: {causal: yes},"
    " pad: 0}\n"
    "  - family: attention\n"
    "    variant: decode\n"
    "    dtype: bf16\n"
    "    shape: [{b: 1, h: 8, s: 256, d: 64}]\n"
    "    params: {causal: yes, q_len: [1, 8], group: 8, CHUNK: [0, 128]}\n"
    "    pad: 0\n";

/* attention/decode computes another operation over attention's dims (other_op_variants): its
 * cases are problems of their own, one per q_len and group (problem params), never
 * configurations of the square attention at the same dims; CHUNK is a configuration axis. */
static void test_space_other_operation(void)
{
    kb_plan p;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_suite_plan_text(decode_text, "t.yaml", kb_families, kb_n_families, 0, &p, &err) == KB_OK);
    kb_walk_opts o = { NULL, 0, NULL, { 90, 0, 227 * 1024 } };
    kb_cases l;
    kb_tune_space s;
    CHECK(kb_cases_build(&p, &o, &l) == KB_OK);
    CHECK(kb_tune_space_of_cases(&p, &l, &s) == KB_OK);
    CHECK_MSG(s.n == 3, "%d problems", s.n);
    static const char *const keys[] = { "attention(causal=yes)/bf16/1x8x256x64/pad0/eager",
                                        "attention/decode(causal=yes,q_len=1,group=8)/bf16/1x8x256x64/pad0/eager",
                                        "attention/decode(causal=yes,q_len=8,group=8)/bf16/1x8x256x64/pad0/eager" };
    for (int i = 0; i < 3 && i < s.n; i++) {
        CHECK_MSG(!strcmp(s.problems[i].key, keys[i]), "%s", s.problems[i].key);
        CHECK(s.problems[i].n == (i ? 2 : 1));
    }
    if (s.n == 3)
        CHECK_MSG(!strcmp(s.problems[1].configs[1].config, "decode(CHUNK=128,WARPS=4,STAGES=2)"), "%s",
                  s.problems[1].configs[1].config);
    kb_tune_space_free(&s);
    kb_cases_free(&l);
    kb_plan_free(&p);
    kb_sb_free(&err);
}

static kb_tune_entry entry(const char *id, double us)
{
    kb_tune_entry e;
    memset(&e, 0, sizeof e);
    snprintf(e.case_id, sizeof e.case_id, "%s", id);
    snprintf(e.problem, sizeof e.problem, "gelu(form=erf)/fp32/4096/pad0/eager");
    snprintf(e.status, sizeof e.status, "ok");
    snprintf(e.clock, sizeof e.clock, "gpu");
    e.median_us = us;
    e.noise = 0.01;
    e.registers = 32;
    e.shmem_bytes = -1;
    return e;
}

static int count_choice(void *user, const kb_tune_choice_row *c)
{
    (*(int *)user)++;
    CHECK(strcmp(c->source, "src2") == 0 && strcmp(c->key.driver, "13.0") == 0);
    return 0;
}

/* Keys: a rerun hits; another source, driver or GPU misses; a newer choice under another
 * key marks the older stale. */
static void test_db(void)
{
    char path[] = "/tmp/kb_tune_test_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    kb_tunedb *db;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_tunedb_open(path, &db, &err) == KB_OK);
    kb_device_info d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "NVIDIA H100 80GB HBM3");
    d.sm = 90;
    d.sm_count = 132;
    d.driver_version = 13000;
    d.caps = KB_CAP_GPU_TIMER;
    kb_tune_key k, k2;
    kb_tune_key_make(&d, "nvrtc 13.0", &k);
    CHECK(strstr(k.silicon, "sm_90|132 SMs") && strcmp(k.driver, "13.0") == 0 && !k.emulator);
    kb_tune_entry e = entry("gelu/vec(BLOCK=128,VEC=4)/fp32/4096/pad0/eager", 12.5), got;
    CHECK(kb_tunedb_put(db, &k, "src1", &e, &err) == KB_OK);
    CHECK(kb_tunedb_lookup(db, &k, "src1", e.case_id, &got) == 1 && got.median_us == 12.5 && got.registers == 32);
    CHECK(got.shmem_bytes == -1 && strcmp(got.status, "ok") == 0);
    CHECK(kb_tunedb_lookup(db, &k, "src2", e.case_id, &got) == 0);
    d.sm_count = 114;
    kb_tune_key_make(&d, "nvrtc 13.0", &k2);
    CHECK(kb_tunedb_lookup(db, &k2, "src1", e.case_id, &got) == 0);
    d.sm_count = 132;
    d.driver_version = 13010;
    kb_tune_key_make(&d, "nvrtc 13.0", &k2);
    CHECK(kb_tunedb_lookup(db, &k2, "src1", e.case_id, &got) == 0);
    kb_tune_choice_row c;
    memset(&c, 0, sizeof c);
    snprintf(c.problem, sizeof c.problem, "%s", e.problem);
    CHECK(kb_tunedb_put_choice(db, &k, "src1", &c, &err) == KB_OK);
    d.driver_version = 13000;
    kb_tune_key_make(&d, "nvrtc 13.0", &k2);
    CHECK(kb_tunedb_put_choice(db, &k2, "src2", &c, &err) == KB_OK);   /* the source changed */
    int n = 0;
    CHECK(kb_tunedb_each_choice(db, count_choice, &n) == 1 && n == 1);
    kb_tunedb_close(db);
    kb_sb_free(&err);
    unlink(path);
}

static double replay_objective(void *user, int i) { return ((const kb_tune_replay *)user)->time[i]; }

/* A Kernel Tuner cache (2 x 3 space): one failed entry, one absent (failed), the rest
 * timed; written unterminated, as Kernel Tuner leaves a cache it is appending to. */
static const char kt_cache[] =
    "{\"schema_version\": \"1.0.0\", \"device_name\": \"NVIDIA A100-SXM4-80GB\", \"kernel_name\": \"matmul\",\n"
    " \"problem_size\": [4096, 4096], \"tune_params_keys\": [\"block_size_x\", \"tile\"],\n"
    " \"tune_params\": {\"block_size_x\": [32, 64], \"tile\": [1, 2, 4]}, \"objective\": \"time\",\n"
    " \"cache\": {\n"
    "\"32,1\": {\"block_size_x\": 32, \"tile\": 1, \"time\": 4.0},\n"
    "\"32,2\": {\"block_size_x\": 32, \"tile\": 2, \"time\": 3.0},\n"
    "\"32,4\": {\"block_size_x\": 32, \"tile\": 4, \"time\": \"CompilationFailedConfig\"},\n"
    "\"64,1\": {\"block_size_x\": 64, \"tile\": 1, \"time\": 2.0},\n"
    "\"64,4\": {\"block_size_x\": 64, \"tile\": 4, \"time\": 1.0},\n";

static void test_replay_kerneltuner(void)
{
    char path[] = "/tmp/kb_tune_kt_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0 && write(fd, kt_cache, sizeof kt_cache - 1) == (ssize_t)(sizeof kt_cache - 1));
    close(fd);
    kb_tune_replay r;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_tune_replay_load(path, NULL, &r, &err) == KB_OK, "%s", err.s);
    CHECK(r.n == 6 && r.n_axes == 2 && r.absent == 1 && strcmp(r.format, "Kernel Tuner cache") == 0);
    int failed = 0, opt = kb_tune_replay_optimum(&r);
    for (int i = 0; i < r.n; i++)
        failed += isinf(r.time[i]);
    CHECK(failed == 2 && opt >= 0 && r.time[opt] == 1.0 && strcmp(r.label[opt], "block_size_x=64,tile=4") == 0);
    /* random's expected best of 1 draw: the mean with failures as the slowest (4):
     * (4 + 3 + 4 + 2 + 4 + 1) / 6 = 3; of 6 draws: the optimum */
    CHECK(fabs(kb_tune_replay_random_expected(&r, 1) - 3.0) < 1e-12);
    CHECK(fabs(kb_tune_replay_random_expected(&r, 6) - 1.0) < 1e-12);
    /* of 2 draws: sorted 1,2,3,4,4,4: P(min=1) = 5/15, P(2) = 4/15, P(3) = 3/15, P(4) = 3/15 */
    CHECK(fabs(kb_tune_replay_random_expected(&r, 2) - (5 * 1.0 + 4 * 2.0 + 3 * 3.0 + 3 * 4.0) / 15) < 1e-12);
    kb_tune_view v = { r.n, r.n_axes, r.level };
    for (int s = 0; s < KB_TUNE_STRATEGY_COUNT; s++) {
        kb_tune_search_opts o = { (kb_tune_strategy)s, 0, 5, 0 };
        kb_tune_trace t;
        CHECK(kb_tune_search(&o, &v, replay_objective, &r, &t) == KB_OK);
        CHECK(t.evaluations == 6 && t.best == opt);
        kb_tune_trace_free(&t);
    }
    kb_tune_replay_free(&r);
    /* neither format */
    fd = open(path, O_WRONLY | O_TRUNC);
    CHECK(write(fd, "[1, 2]\n", 7) == 7);
    close(fd);
    kb_sb_clear(&err);
    CHECK(kb_tune_replay_load(path, NULL, &r, &err) == KB_ERR_INPUT && strstr(err.s, path));
    kb_sb_free(&err);
    unlink(path);
}

int main(void)
{
    RUN(test_brute_finds_optimum);
    RUN(test_budget_seed_memo);
    RUN(test_local_search_finds_optimum);
    RUN(test_stop);
    RUN(test_winner);
    RUN(test_prune);
    RUN(test_space);
    RUN(test_space_other_operation);
    RUN(test_db);
    RUN(test_replay_kerneltuner);
    TEST_MAIN_END();
}
