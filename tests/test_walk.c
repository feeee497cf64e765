/* test_walk.c - the one plan walk: dedupe of cases planned twice, filters, the resume
 * skip set, valid() with its reason for the target, counts, stopping early, and the
 * check-shape choice by capability. */
#include "check.h"
#include "suite/walk.h"
#include "suite_fakes.h"

#include <string.h>

/* gelu refuses VEC=8 on sm_80 (a made-up rule with a reason, to see it carried). */
static int gelu_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    if (c->variant == 1 && c->params[1] == 8 && t->sm < 89) {
        snprintf(why, n, "VEC=8 wants sm_89 (test rule)");
        return 0;
    }
    return 1;
}

static int always_valid(const kb_case *c, const kb_target *t, char *why, size_t n) { return 1; }

static kb_family gelu, gemm;
static const kb_family *fams[2];

static const char *const suite =
    "suite: walk\n"
    "shapes:\n"
    "  s: {n: 4096, check: {n: 64}}\n"
    "benchmarks:\n"
    "  - family: gelu\n"
    "    variant: vec\n"
    "    dtype: fp32\n"
    "    shape: s\n"
    "    params: {VEC: [4, 8]}\n"
    "  - family: gelu\n"                /* plans vec VEC=4 again, and naive */
    "    variant: [naive, vec]\n"
    "    dtype: fp32\n"
    "    shape: s\n"
    "    params: {VEC: 4}\n";

typedef struct {
    char ids[16][128];
    int valid[16];
    char why[16][128];
    int n, stop_after;
} seen;

static int collect(void *user, const kb_walk_item *it)
{
    seen *s = user;
    if (s->n < 16) {
        snprintf(s->ids[s->n], sizeof s->ids[0], "%s", it->id);
        s->valid[s->n] = it->valid;
        snprintf(s->why[s->n], sizeof s->why[0], "%s", it->why);
    }
    s->n++;
    return s->stop_after && s->n >= s->stop_after ? 7 : 0;
}

static int plan(kb_plan *p, int check)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_plan_text(suite, "walk.yaml", fams, 2, check, p, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    return st == KB_OK;
}

static void test_dedupe_valid_counts(void)
{
    kb_plan p;
    if (!plan(&p, 0))
        return;
    CHECK(p.n_cases == 4);
    kb_walk_opts o = { NULL, 0, NULL, { 80, 0, 163 * 1024 } };
    seen s = { 0 };
    kb_walk_counts n;
    CHECK(kb_walk(&p, &o, collect, &s, &n) == 0);
    CHECK(n.visited == 3 && n.repeats == 1 && n.invalid == 1 && n.filtered == 0 && n.skipped == 0);
    CHECK(s.n == 3);
    CHECK(strstr(s.ids[0], "VEC=4") && s.valid[0]);
    CHECK(strstr(s.ids[1], "VEC=8") && !s.valid[1] && !strcmp(s.why[1], "VEC=8 wants sm_89 (test rule)"));
    CHECK(strstr(s.ids[2], "gelu/naive") && s.valid[2] && s.why[2][0] == 0);
    CHECK(strstr(s.ids[0], "/4096/"));            /* full shapes */
    /* the same plan for sm_90: nothing refused */
    o.target.sm = 90;
    CHECK(kb_walk(&p, &o, NULL, NULL, &n) == 0 && n.visited == 3 && n.invalid == 0);
    kb_plan_free(&p);
}

static void test_filters_skip_stop(void)
{
    kb_plan p;
    if (!plan(&p, 1))
        return;
    const char *filters[] = { "VEC=8", "naive" };
    kb_walk_opts o = { filters, 2, NULL, { 90, 0, 227 * 1024 } };
    seen s = { 0 };
    kb_walk_counts n;
    CHECK(kb_walk(&p, &o, collect, &s, &n) == 0);
    CHECK(n.visited == 2 && n.filtered == 1 && n.repeats == 1);
    CHECK(strstr(s.ids[0], "/64/"));              /* check shapes */
    /* ids already recorded are passed over */
    kb_strset done;
    kb_strset_init(&done);
    kb_strset_add(&done, s.ids[0]);
    o.skip = &done;
    memset(&s, 0, sizeof s);
    CHECK(kb_walk(&p, &o, collect, &s, &n) == 0 && n.visited == 1 && n.skipped == 1);
    kb_strset_free(&done);
    /* the callback stops the walk with its own value */
    o.skip = NULL;
    o.n_filters = 0;
    memset(&s, 0, sizeof s);
    s.stop_after = 2;
    CHECK(kb_walk(&p, &o, collect, &s, &n) == 7 && s.n == 2);
    CHECK(kb_walk_selects(&o, "anything"));
    kb_plan_free(&p);
}

/* requires: gpu - planned for a target with a GPU timer, left out (and counted) elsewhere. */
static void test_requires_gpu(void)
{
    static const char *const text =
        "suite: req\nbenchmarks:\n"
        "  - family: gelu\n    variant: naive\n    dtype: fp32\n    shape: {n: 64}\n"
        "  - family: gelu\n    variant: vec\n    dtype: fp32\n    shape: {n: 64}\n    params: {VEC: [4, 8]}\n"
        "    requires: gpu\n"
        "  - family: gelu\n    variant: naive\n    dtype: fp32\n    shape: {n: 128}\n";
    unsigned gpu_caps = KB_CAP_GPU_TIMER | KB_CAP_FULL_SPEED, emu_caps = KB_CAP_GRAPHS;
    CHECK(kb_walk_has(gpu_caps) == KB_REQUIRE_GPU && kb_walk_has(emu_caps) == 0);
    for (int k = 0; k < 2; k++) {
        kb_plan p;
        kb_sb err;
        kb_sb_init(&err);
        kb_status st = kb_suite_plan_text(text, "req.yaml", fams, 2, 1, &p, &err);
        CHECK_MSG(st == KB_OK, "%s", err.s);
        kb_sb_free(&err);
        if (st != KB_OK)
            return;
        CHECK(p.n_cases == 4 && p.entries[1].requires == KB_REQUIRE_GPU);
        kb_walk_drop_unmet(&p, k ? emu_caps : gpu_caps);
        if (k) {   /* the emulator: the two vec cases are not planned; the rest keep their order */
            CHECK(p.n_cases == 2 && p.n_not_planned == 2 && p.entries[1].n_cases == 0);
            CHECK(p.cases[0].entry == 0 && p.cases[1].entry == 2 && p.cases[1].dims[0] == 128);
        } else {
            CHECK(p.n_cases == 4 && p.n_not_planned == 0 && p.entries[1].n_cases == 2);
        }
        kb_plan_free(&p);
    }
}

static void test_check_shape_choice(void)
{
    CHECK(kb_walk_check_shapes(0, 0) == 1);                     /* the emulator */
    CHECK(kb_walk_check_shapes(0, 1) == 0);                     /* --full-shapes */
    CHECK(kb_walk_check_shapes(KB_CAP_FULL_SPEED, 0) == 0);     /* a GPU */
}

int main(void)
{
    gelu = fake_gelu;
    gelu.valid = gelu_valid;
    gemm = fake_gemm;
    gemm.valid = always_valid;
    fams[0] = &gelu;
    fams[1] = &gemm;
    RUN(test_dedupe_valid_counts);
    RUN(test_filters_skip_stop);
    RUN(test_check_shape_choice);
    RUN(test_requires_gpu);
    TEST_MAIN_END();
}
