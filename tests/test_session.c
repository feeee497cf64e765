/* test_session.c - the session layer (harness/session/): valid() is asked exactly once
 * per selected case however many times the list is read (prefetch, totals, the run loop,
 * the valid stage of the pipeline), through a counting family on the emulator; the list
 * keeps dedupe, filters, verdicts and resume marks; the sink multiplex keeps the records
 * file first and skips the mirrors of a record it could not keep; run_case stops on an
 * interrupt before the case; an offline session plans without a device. */
#include "check.h"
#include "core/fsutil.h"
#include "core/report.h"
#include "engine/exec.h"
#include "results/record.h"
#include "session/session.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- a family that counts valid(): variant "odd" is refused for an odd n, the rest is
 * skipped in setup (entry NULL: nothing to compile, no kernel runs) ---- */
static int valid_calls;
static int count_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    valid_calls++;
    if (c->variant == 1 && c->dims[0] % 2) {
        snprintf(why, n, "odd n (test rule)");
        return 0;
    }
    return 1;
}
static kb_work count_work(const kb_case *c)
{
    kb_work w = { 1, 4, 4, 0 };
    return w;
}
static kb_status count_setup(kb_run *r, void **state) { return kb_run_skip(r, "nothing to run (test family)"); }
static kb_status count_enqueue(kb_run *r, void *state) { return KB_OK; }
static kb_status count_check(kb_run *r, void *state, kb_verify *v) { return KB_OK; }
static void count_teardown(kb_run *r, void *state) {}

static const kb_variant count_variants[] = {
    { "plain", NULL, KB_DT_BIT(KB_DT_FP32), "skipped in setup" },
    { "odd", NULL, KB_DT_BIT(KB_DT_FP32), "refused by valid() for odd n" },
};
static const char *const count_dims[] = { "n" };
static const kb_param count_params[] = { { "B", 1, NULL, 0, "a param to plan twice", 0, 0, 0 } };
static const kb_family count_fam = {
    .name = "count", .source = "count.cu", .about = "counts valid()",
    .variants = count_variants, .n_variants = KB_COUNT(count_variants),
    .dims = count_dims, .n_dims = KB_COUNT(count_dims),
    .params = count_params, .n_params = KB_COUNT(count_params), .valid = count_valid, .work = count_work,
    .setup = count_setup, .enqueue = count_enqueue, .check = count_check, .teardown = count_teardown,
};
static const kb_family *const fams[] = { &count_fam };

/* 2 variants x n {7, 8} x B {1, 2} = 8 cases, then B=1 of both variants at n 8 again
 * (2 repeats): 8 distinct cases, of which odd/n=7 (2) are refused. */
static const char *const suite =
    "suite: count\n"
    "shapes:\n"
    "  a: {n: 7}\n"
    "  b: {n: 8}\n"
    "benchmarks:\n"
    "  - family: count\n"
    "    variant: [plain, odd]\n"
    "    dtype: fp32\n"
    "    shape: [a, b]\n"
    "    params: {B: [1, 2]}\n"
    "  - family: count\n"
    "    variant: [plain, odd]\n"
    "    dtype: fp32\n"
    "    shape: b\n"
    "    params: {B: 1}\n";

static char dir[] = "/tmp/kb_test_session_XXXXXX";

static int plan_text(kb_plan *p)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_suite_plan_text(suite, "count.yaml", fams, 1, 0, p, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    return st == KB_OK;
}

static kb_session *open_emu(void)
{
    kb_session_opts o = { .backend = "emu", .overrides = { 1, 1, 1.0 } };
    o.bo.emu_threads = 1;
    kb_session *s = NULL;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_session_open(&o, &s, &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    return s;
}

/* The records of path by case id: status and reason. Returns how many. */
static int records(const char *path, json_t ***objs, size_t *n)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_record_load(path, objs, n, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    return st == KB_OK ? (int)*n : -1;
}

static void test_valid_once_per_case(void)
{
    kb_plan p;
    if (!plan_text(&p))
        return;
    kb_session *s = open_emu();
    if (!s) {
        kb_plan_free(&p);
        return;
    }
    CHECK(p.n_cases == 10);
    valid_calls = 0;
    kb_session_adopt_plan(s, &p);
    CHECK(kb_session_select(s, NULL, 0) == KB_OK);
    const kb_cases *l = kb_session_cases(s);
    CHECK(l->n == 8 && l->counts.repeats == 2 && l->counts.invalid == 2 && l->todo == 8);
    CHECK(valid_calls == 8);           /* the walk asked each distinct case once */
    char path[300];
    snprintf(path, sizeof path, "%s/valid.jsonl", dir);
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_session_records(s, path, NULL, &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    kb_session_start(s);
    kb_session_begin(s);
    CHECK(kb_session_run_all(s, NULL, NULL) == KB_SESSION_NEXT);   /* prefetch + run loop + pipeline */
    kb_session_end(s);
    CHECK_MSG(valid_calls == 8, "valid() ran %d times for 8 cases", valid_calls);
    const kb_session_tally *t = kb_session_tally_of(s);
    CHECK(t->total == 8 && t->count[KB_CASE_SKIPPED] == 8 && t->failed == 0);
    kb_session_close(s);
    json_t **objs = NULL;
    size_t n = 0;
    int refused = 0, set_up = 0;
    if (records(path, &objs, &n) == 8)
        for (size_t i = 0; i < n; i++) {
            const char *why = json_string_value(json_object_get(objs[i], "reason"));
            refused += why && !strcmp(why, "odd n (test rule)");
            set_up += why && !strcmp(why, "nothing to run (test family)");
        }
    CHECK(refused == 2 && set_up == 6);   /* the walk's verdict reached the valid stage */
    kb_record_free_all(objs, n);
    kb_plan_free(&p);
}

static void test_filters_and_resume_marks(void)
{
    kb_plan p;
    if (!plan_text(&p))
        return;
    /* the list alone: the filter selects, valid() is asked of what it selects */
    const char *f[] = { "count/odd" };
    kb_walk_opts wo = { f, 1, NULL, { 90, 0, 227 * 1024 } };
    kb_cases l;
    valid_calls = 0;
    CHECK(kb_cases_build(&p, &wo, &l) == KB_OK);
    CHECK(l.n == 4 && l.counts.filtered == 4 && l.counts.invalid == 2 && valid_calls == 4);
    CHECK(kb_cases_find(&l, l.items[2].it.index) == &l.items[2]);
    CHECK(kb_cases_find(&l, 0) == NULL);   /* plan case 0 is count/plain: filtered out */
    kb_strset done;
    kb_strset_init(&done);
    kb_strset_add(&done, l.items[0].it.id);
    kb_cases_mark_done(&l, &done);
    CHECK(l.resumed == 1 && l.todo == 3 && l.items[0].done && !l.items[1].done);
    kb_strset_free(&done);

    /* through a session: a resumed records file marks what it holds */
    kb_session *s = open_emu();
    if (s) {
        char path[300], line[700];
        snprintf(path, sizeof path, "%s/resume.jsonl", dir);
        snprintf(line, sizeof line, "{\"schema_version\":1,\"suite\":\"count\",\"case_id\":\"%s\"}\n", l.items[1].it.id);
        FILE *fp = fopen(path, "w");
        CHECK(fp != NULL);
        if (fp) {
            fputs(line, fp);
            fclose(fp);
        }
        kb_session_adopt_plan(s, &p);
        CHECK(kb_session_select(s, f, 1) == KB_OK);
        kb_sb err;
        kb_sb_init(&err);
        CHECK_MSG(kb_session_records(s, path, path, &err) == KB_OK, "%s", err.s);
        kb_sb_free(&err);
        const kb_cases *sl = kb_session_cases(s);
        CHECK(sl->resumed == 1 && sl->todo == 3 && sl->items[1].done);
        kb_session_close(s);
    }
    kb_cases_free(&l);
    kb_plan_free(&p);
}

/* ---- the multiplex: passes and the mirror rule ---- */
static char calls[64];
static kb_status fail_with;
static kb_status rec_required(void *self, const kb_sink_case *c) { strcat(calls, "R"); return fail_with; }
static kb_status rec_mirror(void *self, const kb_sink_case *c) { strcat(calls, "M"); return KB_ERR_IO; }
static kb_status rec_shown(void *self, const kb_sink_case *c) { strcat(calls, "S"); return KB_OK; }
static int freed;
static void free_one(void *self) { freed++; }
static const kb_sink_ops required_ops = { "r", KB_SINK_REQUIRED, NULL, NULL, rec_required, NULL, free_one };
static const kb_sink_ops mirror_ops = { "m", KB_SINK_MIRROR, NULL, NULL, rec_mirror, NULL, free_one };
static const kb_sink_ops shown_ops = { "s", 0, NULL, NULL, rec_shown, NULL, free_one };

static void test_sink_passes(void)
{
    kb_sinks l;
    memset(&l, 0, sizeof l);
    /* added out of order: the passes put the records file first, the console last */
    kb_sinks_add(&l, (kb_sink){ &shown_ops, NULL });
    kb_sinks_add(&l, (kb_sink){ &mirror_ops, NULL });
    kb_sinks_add(&l, (kb_sink){ &required_ops, NULL });
    kb_sinks_add(&l, (kb_sink){ NULL, NULL });   /* a constructor that failed: ignored */
    json_t *rec = json_object();
    kb_sink_case c = { NULL, NULL, "ok", rec, "" };
    calls[0] = 0;
    fail_with = KB_OK;
    CHECK(kb_sinks_record(&l, &c) == 0 && !strcmp(calls, "RMS"));   /* a mirror's failure stops nothing */
    calls[0] = 0;
    fail_with = KB_ERR_IO;
    CHECK(kb_sinks_record(&l, &c) == -1 && !strcmp(calls, "RS"));   /* no mirror holds what the file lacks */
    calls[0] = 0;
    c.rec = NULL;                                                   /* no record could be built */
    CHECK(kb_sinks_record(&l, &c) == -1 && !strcmp(calls, "S"));
    json_decref(rec);
    freed = 0;
    kb_sinks_free(&l);
    CHECK(freed == 3 && l.n == 0);
}

static void test_interrupted_before_the_case(void)
{
    kb_plan p;
    if (!plan_text(&p))
        return;
    kb_session *s = open_emu();
    if (!s) {
        kb_plan_free(&p);
        return;
    }
    kb_session_adopt_plan(s, &p);
    CHECK(kb_session_select(s, NULL, 0) == KB_OK);
    kb_session_start(s);
    kb_interrupt_set(2);
    CHECK(kb_session_run_case(s, &kb_session_cases(s)->items[0], NULL, NULL) == KB_SESSION_STOP_INTERRUPTED);
    kb_interrupt_set(0);
    CHECK(kb_session_tally_of(s)->total == 0);   /* nothing ran, nothing recorded */
    kb_session_close(s);
    kb_plan_free(&p);
}

static void test_offline_list(void)
{
    kb_session_opts o = { .backend = "cuda", .offline = 1, .judge_caps = 1, .suite_path = "suites/smoke.yaml" };
    o.bo.sm_override = 80;
    kb_session *s = NULL;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_session_open(&o, &s, &err) == KB_OK && kb_session_plan(s, &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    if (!s)
        return;
    CHECK(kb_session_select(s, NULL, 0) == KB_OK && kb_session_cases(s)->n == 133);
    CHECK(kb_session_target_sm(s) == 80 && !kb_session_check_shapes(s));   /* cuda: the full shapes */
    CHECK(!strcmp(kb_session_backend_name(s), "cuda") && !strncmp(kb_session_run_id(s), "smoke-", 6));
    kb_session_close(s);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_valid_once_per_case);
    RUN(test_filters_and_resume_marks);
    RUN(test_sink_passes);
    RUN(test_interrupted_before_the_case);
    RUN(test_offline_list);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
