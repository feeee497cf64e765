/* test_run_summary.c - the closing summary of `kbench run` (cli/run_summary.h): llm.yaml's
 * layernorm cases with made-up medians through the summary sink, and the text read back:
 * the counts by status and by skip reason; one line per shape, kind, dtype and pad naming
 * the fastest verified configuration and its margin over the runner-up, "within noise"
 * where the 95% intervals overlap; layernorm and rmsnorm never ranked together; the CPU
 * label on the emulator; the paths and next commands; the brief form. */
#include "check.h"
#include "cli/run_summary.h"
#include "session/session.h"

#include <stdlib.h>
#include <string.h>

static kb_session *open_plan(const char *filter)
{
    kb_session_opts o = { .backend = "emu", .offline = 1, .judge_caps = 1, .suite_path = "suites/llm.yaml" };
    kb_session *s = NULL;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_session_open(&o, &s, &err) == KB_OK && kb_session_plan(s, &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    const char *f[] = { filter };
    if (s)
        CHECK(kb_session_select(s, f, 1) == KB_OK);
    return s;
}

/* The made-up median of a case [us]: it depends on every param, so each configuration of
 * a problem has its own; fp32 cases are noisy (their margins fall within the noise). */
static double median_of(const kb_case *c)
{
    double m = 100;
    for (int p = 0; p < KB_MAX_PARAMS; p++)
        m += (double)((c->params[p] * 37 + p * 11) % 97);
    return m + 5.0 * c->variant + 0.5 * c->pad;
}

static void fake(const kb_cases_item *it, kb_case_result *r)
{
    memset(r, 0, sizeof *r);
    r->family = it->f;
    r->c = it->it.c;
    r->case_id = it->it.id;
    if (it->f->variants[it->it.c->variant].name[0] == 'b' && it->it.c->pad == 1) {   /* block, pad 1 */
        r->status = KB_CASE_SKIPPED;
        snprintf(r->reason, sizeof r->reason, "a made-up reason");
        return;
    }
    r->status = KB_CASE_OK;
    r->verify.done = 1;
    r->measure.done = 1;
    r->measure.m.st.median = median_of(it->it.c);
    r->measure.m.noise = it->it.c->dtype == KB_DT_FP32 ? 0.5 : 0.0001;
}

static char *summary_text(kb_session *s, int brief)
{
    kb_run_summary *sum = kb_run_summary_new();
    kb_sink k = kb_run_summary_sink(sum);
    kb_device_info dev;
    memset(&dev, 0, sizeof dev);
    dev.caps = kb_backend_caps_of("emu");
    const kb_cases *l = kb_session_cases(s);
    kb_sink_run run = { "run", "llm", "emu", &dev, 90, kb_session_plan_of(s)->n_cases, l, 1,
                        kb_session_plan_of(s) };
    k.ops->open(k.self, &run);
    for (int64_t i = 0; i < l->n; i++) {
        kb_case_result r;
        fake(&l->items[i], &r);
        kb_sink_case c = { &l->items[i], &r, kb_case_status_name(r.status), NULL, "" };
        CHECK(k.ops->record(k.self, &c) == KB_OK);
    }
    FILE *f = tmpfile();
    kb_run_summary_where w = { "results/x.jsonl", "results/kbench.db", "suites/llm.yaml", brief };
    int groups = kb_run_summary_print(sum, f, &w);
    CHECK(brief ? groups == 0 : groups > 0);
    long n = ftell(f);
    char *text = calloc((size_t)n + 1, 1);
    rewind(f);
    if (fread(text, 1, (size_t)n, f) != (size_t)n)
        text[0] = 0;
    fclose(f);
    kb_run_summary_free(sum);   /* the sink only borrowed it */
    return text;
}

/* The line of one problem: "  <shape> kind=<kind> <dtype> <pad> ...". */
static const char *line_of(const char *text, const char *shape, const char *kind, const char *dtype, int pad,
                           char *buf, size_t n)
{
    for (const char *p = text; *p;) {
        size_t len = strcspn(p, "\n");
        snprintf(buf, n, "%.*s", (int)len, p);
        p += len + (p[len] == '\n');
        char s[64], k[64], d[16];
        int pd;
        if (sscanf(buf, " %63s kind=%63s %15s %d", s, k, d, &pd) == 4 && !strcmp(s, shape) && !strcmp(k, kind) &&
            !strcmp(d, dtype) && pd == pad)
            return buf;
    }
    return NULL;
}

static void test_best_per_problem(void)
{
    kb_session *s = open_plan("layernorm/");
    if (!s)
        return;
    char *text = summary_text(s, 0);
    CHECK(text && strstr(text, "CPU timings") && strstr(text, "the CPU's ranking, not a GPU's"));
    CHECK(text && strstr(text, "records in results/x.jsonl") && strstr(text, "results/kbench.db"));
    CHECK(text && strstr(text, "kbench report results/x.jsonl --format html --out results/x.html"));
    CHECK(text && strstr(text, "kbench tune suites/llm.yaml") && strstr(text, "kbench compare results/x.jsonl"));
    CHECK(text && strstr(text, "a made-up reason"));
    /* every problem of the run: the fastest and the margin, computed here independently */
    const kb_cases *l = kb_session_cases(s);
    const kb_family *f = l->items[0].f;
    int kind = kb_family_param_find(f, "kind"), checked = 0;
    for (int64_t i = 0; i < l->n; i++) {
        const kb_case *c = l->items[i].it.c;
        kb_case_result r;
        fake(&l->items[i], &r);
        if (r.status != KB_CASE_OK)
            continue;
        double best = 1e30, second = 1e30;
        const kb_case *bc = NULL;
        for (int64_t j = 0; j < l->n; j++) {   /* its problem: shape, kind, dtype, pad */
            const kb_case *d = l->items[j].it.c;
            kb_case_result q;
            fake(&l->items[j], &q);
            if (q.status != KB_CASE_OK || d->shape_name != c->shape_name || d->params[kind] != c->params[kind] ||
                d->dtype != c->dtype || d->pad != c->pad)
                continue;
            double m = median_of(d);
            if (m < best) { second = best; best = m; bc = d; } else if (m < second) second = m;
        }
        if (bc != c)
            continue;   /* each problem once, from its fastest case */
        char buf[512], want[64];
        const char *line = line_of(text, kb_session_plan_of(s)->shape_names[c->shape_name],
                                   f->params[kind].choices[c->params[kind]], kb_dtype_name(c->dtype), c->pad, buf,
                                   sizeof buf);
        CHECK_MSG(line != NULL, "no line for case %s", l->items[i].it.id);
        if (!line)
            continue;
        checked++;
        CHECK_MSG(strstr(line, f->variants[c->variant].name), "%s: not %s", line, l->items[i].it.id);
        if (second < 1e30) {
            snprintf(want, sizeof want, "%.2fx", second / best);
            CHECK_MSG(strstr(line, want), "%s lacks %s", line, want);
            /* fp32: noise 0.5, the intervals overlap; else 1e-4: apart unless equal */
            int noisy = c->dtype == KB_DT_FP32 || second == best;
            CHECK_MSG(!!strstr(line, "within noise") == noisy, "%s", line);
        } else {
            CHECK(strstr(line, "the only one") != NULL);
        }
    }
    CHECK_MSG(checked >= 16, "%d problems checked", checked);
    free(text);
    kb_session_close(s);
}

static void test_brief(void)
{
    kb_session *s = open_plan("layernorm/vec");
    if (!s)
        return;
    char *text = summary_text(s, 1);
    CHECK(text && strstr(text, " cases: ") && strstr(text, "records in results/x.jsonl"));
    CHECK(text && !strstr(text, "fastest verified") && !strstr(text, "next:"));
    free(text);
    kb_session_close(s);
}

int main(void)
{
    RUN(test_best_per_problem);
    RUN(test_brief);
    TEST_MAIN_END();
}
