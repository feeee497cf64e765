/* test_console.c - the console of `kbench run` (cli/console.h, console_cols.h,
 * progress.h): suites/llm.yaml's plan through the console sink, each case given a made-up
 * result (valid cases ok, refused ones skipped with valid()'s reason, vendor rows skipped
 * as on a GPU host without the library), and the text read back: every case shown once,
 * in a row or a fold; no two rows of a family that read the same (the axis cells tell
 * every case apart); no run of skipped rows with one reason; numbering over the cases
 * run; the metric columns that fit COLUMNS; --verbose; and the time-left model. */
#include "check.h"
#include "cli/console.h"
#include "cli/console_cols.h"
#include "cli/progress.h"
#include "core/strset.h"
#include "session/session.h"

#include <stdlib.h>
#include <string.h>

#define VENDOR_REASON "cuBLASLt could not be loaded (the test's stand-in reason)"

static kb_session *open_plan(const char *backend, const char *suite, const char *const *filters, int n)
{
    kb_session_opts o = { .backend = backend, .offline = 1, .judge_caps = 1, .suite_path = suite };
    kb_session *s = NULL;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_session_open(&o, &s, &err) == KB_OK && kb_session_plan(s, &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    if (s)
        CHECK(kb_session_select(s, filters, n) == KB_OK);
    return s;
}

/* A made-up result for item: ok with a median, or skipped with a reason. */
static void fake_result(const kb_cases_item *it, int64_t i, kb_case_result *r)
{
    memset(r, 0, sizeof *r);
    r->family = it->f;
    r->c = it->it.c;
    r->case_id = it->it.id;
    int vendor = it->f->variants[it->it.c->variant].entry == NULL;
    if (!it->it.valid || vendor) {
        r->status = KB_CASE_SKIPPED;
        snprintf(r->reason, sizeof r->reason, "%s", it->it.valid ? VENDOR_REASON : it->it.why);
        return;
    }
    r->status = KB_CASE_OK;
    r->verify.done = 1;
    r->verify.v.max_err_ratio = 0.25;
    r->verify.v.max_abs_err = 1e-3;
    r->measure.done = 1;
    r->measure.m.st.median = 10.0 + (double)(i % 7);
    r->derived.done = 1;
    r->derived.d.have_rates = 1;
    r->derived.d.tflops = 1.5;
    r->derived.d.gbps = 100;
    r->derived.d.ai = 2;
}

/* Every selected case of s through a console sink; the table's text (caller frees). */
static char *console_text(kb_session *s, const char *backend, int verbose, int columns)
{
    FILE *f = tmpfile(), *progress = tmpfile();
    CHECK(f != NULL && progress != NULL);
    if (!f || !progress)
        return NULL;
    kb_console_opts co = { f, progress, 0, verbose, columns };
    kb_sink k = kb_console_sink(&co);
    kb_device_info dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "test device");
    dev.sm = 90;
    dev.caps = kb_backend_caps_of(backend);
    const kb_cases *l = kb_session_cases(s);
    kb_sink_run run = { "run", "llm", backend, &dev, 90, kb_session_plan_of(s)->n_cases, l, 1,
                        kb_session_plan_of(s) };
    k.ops->open(k.self, &run);
    for (int64_t i = 0; i < l->n; i++) {
        kb_case_result r;
        fake_result(&l->items[i], i, &r);
        kb_sink_case c = { &l->items[i], &r, kb_case_status_name(r.status), NULL, "" };
        k.ops->case_start(k.self, &l->items[i]);
        CHECK(k.ops->record(k.self, &c) == KB_OK);
    }
    k.ops->close(k.self);
    k.ops->free(k.self);
    long n = ftell(f);
    char *text = calloc((size_t)n + 1, 1);
    rewind(f);
    if (text && fread(text, 1, (size_t)n, f) != (size_t)n)
        text[0] = 0;
    fclose(f);
    fclose(progress);
    return text;
}

/* What a table's text says, line by line. */
typedef struct {
    int64_t rows, folded, fold_lines, skipped_rows, last_pos, total;
    int dup_rows;                 /* rows whose family and cells repeat an earlier row's */
    int skipped_runs;             /* a skipped row right after one with the same reason */
    int max_len;                  /* the longest line */
    int headers_with_max_abs, headers;
} table_read;

static const char *reason_of(const char *line)
{
    const char *r = strstr(line, VENDOR_REASON);
    if (r)
        return VENDOR_REASON;
    r = strrchr(line, ')');   /* valid()'s reasons end with a parenthesis or a word: the tail */
    return r ? r : line + strlen(line);
}

static void read_table(const char *text, table_read *t)
{
    memset(t, 0, sizeof *t);
    kb_strset seen;
    kb_strset_init(&seen);
    char family[64] = "", prev_reason[1300] = "";
    int status_col = -1, prev_skipped = 0;
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        char line[4096];
        snprintf(line, sizeof line, "%.*s", (int)(n < sizeof line - 1 ? n : sizeof line - 1), p);
        p += n + (p[n] == '\n');
        if ((int)n > t->max_len) t->max_len = (int)n;
        char *colon = strstr(line, ": ");
        if (line[0] && line[0] != ' ' && line[0] != '[' && colon && strstr(line, " case")) {
            snprintf(family, sizeof family, "%.*s", (int)(colon - line), line);   /* "gemm: 190 cases..." */
            continue;
        }
        if (line[0] == ' ' && strstr(line, "status")) {
            status_col = (int)(strstr(line, "status") - line);
            t->headers++;
            t->headers_with_max_abs += strstr(line, "max_abs") != NULL;
            continue;
        }
        if (line[0] != '[')
            continue;
        long long a, b, total;
        if (sscanf(line, "[%lld-%lld/%lld]", &a, &b, &total) == 3) {   /* a fold */
            t->fold_lines++;
            t->folded += b - a + 1;
            t->last_pos = b;
            t->total = total;
            prev_skipped = 0;
            continue;
        }
        CHECK(sscanf(line, "[%lld/%lld]", &a, &total) == 2);
        CHECK_MSG(a == t->last_pos + 1, "row %lld after %lld", a, (long long)t->last_pos);
        t->last_pos = a;
        t->total = total;
        t->rows++;
        const char *cells = strchr(line, ']') + 2;
        int end = status_col - (int)(cells - line);
        char key[4200];
        snprintf(key, sizeof key, "%s|%.*s", family, end > 0 ? end : 0, cells);
        if (kb_strset_add(&seen, key) == 0)
            t->dup_rows++;
        int skipped = status_col >= 0 && !strncmp(line + status_col, "skipped", 7);
        const char *why = skipped ? reason_of(line) : "";
        if (skipped && prev_skipped && !strcmp(why, prev_reason))
            t->skipped_runs++;
        t->skipped_rows += skipped;
        prev_skipped = skipped;
        snprintf(prev_reason, sizeof prev_reason, "%s", why);
    }
    kb_strset_free(&seen);
}

/* llm.yaml's whole plan for a GPU (the vendor rows planned, then skipped) and for the
 * emulator (requires: gpu leaves them out). */
static void test_llm_plan_reads_whole(void)
{
    const char *backends[] = { "cuda", "emu" };
    for (int b = 0; b < 2; b++) {
        kb_session *s = open_plan(backends[b], "suites/llm.yaml", NULL, 0);
        if (!s)
            return;
        const kb_cases *l = kb_session_cases(s);
        char *text = console_text(s, backends[b], 0, 160);
        table_read t;
        read_table(text ? text : "", &t);
        CHECK_MSG(t.rows + t.folded == l->todo, "%s: %lld rows + %lld folded of %lld cases", backends[b],
                  (long long)t.rows, (long long)t.folded, (long long)l->todo);
        CHECK(t.last_pos == l->todo && t.total == l->todo);
        CHECK_MSG(t.dup_rows == 0, "%s: %d rows read like another", backends[b], t.dup_rows);
        CHECK_MSG(t.skipped_runs == 0, "%s: %d runs of skipped rows", backends[b], t.skipped_runs);
        CHECK(t.headers >= 6);   /* a table per family */
        if (b == 0)   /* 285 cuBLASLt and 3 cuDNN rows: folded */
            CHECK_MSG(t.fold_lines >= 2 && t.folded >= 280, "%lld folded in %lld lines", (long long)t.folded,
                      (long long)t.fold_lines);
        else          /* no vendor row is planned for the emulator */
            CHECK(kb_session_plan_of(s)->n_not_planned == 288 && !strstr(text ? text : "", "cublaslt"));
        free(text);
        kb_session_close(s);
    }
}

/* --verbose: every skipped case has its row. */
static void test_verbose_shows_every_skip(void)
{
    kb_session *s = open_plan("cuda", "suites/llm.yaml", NULL, 0);
    if (!s)
        return;
    char *text = console_text(s, "cuda", 1, 160);
    table_read t;
    read_table(text ? text : "", &t);
    CHECK(t.fold_lines == 0 && t.rows == kb_session_cases(s)->todo && t.skipped_rows >= 283);
    CHECK(t.dup_rows == 0);
    free(text);
    kb_session_close(s);
}

/* --filter: [k/N] counts the cases run, not the suite's. */
static void test_numbering_follows_the_filter(void)
{
    const char *f[] = { "softmax/online" };
    kb_session *s = open_plan("emu", "suites/llm.yaml", f, 1);
    if (!s)
        return;
    int64_t n = kb_session_cases(s)->todo;
    CHECK(n > 0 && n < kb_session_plan_of(s)->n_cases);
    char *text = console_text(s, "emu", 0, 160);
    char want[64];
    snprintf(want, sizeof want, "[1/%lld] ", (long long)n);
    CHECK_MSG(text && strstr(text, want), "no %s", want);
    table_read t;
    read_table(text ? text : "", &t);
    CHECK(t.rows == n && t.total == n && t.dup_rows == 0);
    free(text);
    kb_session_close(s);
}

/* The width: the axis cells stay whole; the metric columns that fit are shown. */
static void test_columns_widen_the_table(void)
{
    kb_session *s = open_plan("emu", "suites/llm.yaml", NULL, 0);
    if (!s)
        return;
    char *narrow = console_text(s, "emu", 0, 100), *wide = console_text(s, "emu", 0, 250);
    table_read tn, tw;
    read_table(narrow ? narrow : "", &tn);
    read_table(wide ? wide : "", &tw);
    /* 100 columns: the narrow families keep max_abs, the wide ones give it up */
    CHECK_MSG(tn.headers_with_max_abs < tw.headers_with_max_abs && tw.headers_with_max_abs == tw.headers, "%d %d of %d",
              tn.headers_with_max_abs, tw.headers_with_max_abs, tw.headers);
    CHECK(tn.dup_rows == 0 && tw.dup_rows == 0 && tn.rows == tw.rows);
    CHECK_MSG(tn.max_len < tw.max_len, "%d vs %d", tn.max_len, tw.max_len);
    free(narrow);
    free(wide);
    kb_session_close(s);
    setenv("COLUMNS", "123", 1);
    CHECK(kb_console_columns(stdout) == 123);
    setenv("COLUMNS", "12", 1);      /* nonsense: ignored */
    CHECK(kb_console_columns(stdout) != 12);
    unsetenv("COLUMNS");
}

/* The columns of a family: what varies is a column, what does not is said once. */
static void test_columns_of_a_family(void)
{
    kb_session *s = open_plan("emu", "suites/llm.yaml", NULL, 0);
    if (!s)
        return;
    kb_cols c;
    CHECK(kb_cols_build(kb_session_cases(s), kb_session_plan_of(s), &c) == KB_OK);
    const kb_cols_family *ln = NULL, *gemm = NULL;
    for (int i = 0; i < c.n; i++) {
        if (!strcmp(c.fams[i].f->name, "layernorm")) ln = &c.fams[i];
        if (!strcmp(c.fams[i].f->name, "gemm")) gemm = &c.fams[i];
    }
    CHECK(ln && gemm);
    if (ln && gemm) {
        int kind = kb_family_param_find(ln->f, "kind"), layout = kb_family_param_find(gemm->f, "layout");
        CHECK(ln->col_param[kind] && ln->col_variant && ln->col_dtype && ln->col_shape && ln->col_pad);
        CHECK(!gemm->col_param[layout] && strstr(gemm->constants.s, "layout=nt"));
        CHECK(strstr(gemm->shapes.s, "qkv_prefill 48x96x64"));
        /* kind is the problem, not the configuration */
        const kb_cases *l = kb_session_cases(s);
        for (int64_t i = 0; i < l->n; i++)
            if (l->items[i].f == ln->f) {
                kb_sb cfg, prob;
                kb_sb_init(&cfg);
                kb_sb_init(&prob);
                kb_cols_config(ln, l->items[i].it.c, &cfg);
                kb_cols_problem(ln, l->items[i].it.c, &prob);
                CHECK(!strstr(cfg.s, "kind=") && strstr(prob.s, " kind="));
                kb_sb_free(&cfg);
                kb_sb_free(&prob);
                break;
            }
    }
    kb_cols_free(&c);
    kb_session_close(s);
}

/* The time left: a class's mean times its cases still to run; refused cases cost their
 * own (near nothing), so a run of them does not read as the end of the run. */
static void test_time_left_model(void)
{
    kb_progress pg;
    FILE *sink = tmpfile();
    CHECK(sink != NULL);
    if (!sink)
        return;
    kb_progress_start(&pg, sink, 20);
    static const int fam_a, fam_b;
    int refused = -1, slow = -1;
    for (int i = 0; i < 10; i++)
        refused = kb_progress_plan(&pg, &fam_a, 0, 1);
    for (int i = 0; i < 10; i++)
        slow = kb_progress_plan(&pg, &fam_b, 3, 0);
    CHECK(refused != slow && pg.n_cls == 2);
    for (int i = 0; i < 10; i++) {   /* ten refused cases first, nearly free */
        kb_progress_begin(&pg, refused);
        kb_progress_account(&pg, 0.001);
    }
    CHECK(kb_progress_left_s(&pg) < 0);   /* nothing runnable finished: unknown, not "0:00" */
    kb_progress_begin(&pg, slow);
    kb_progress_account(&pg, 2.0);
    CHECK(kb_progress_left_s(&pg) == 9 * 2.0);   /* the old ratio said 9 * 11/2.01 ~ 0.1 s each */
    kb_progress_begin(&pg, slow);
    kb_progress_account(&pg, 4.0);
    CHECK(kb_progress_left_s(&pg) == 8 * 3.0);
    fclose(sink);
}

int main(void)
{
    RUN(test_llm_plan_reads_whole);
    RUN(test_verbose_shows_every_skip);
    RUN(test_numbering_follows_the_filter);
    RUN(test_columns_widen_the_table);
    RUN(test_columns_of_a_family);
    RUN(test_time_left_model);
    TEST_MAIN_END();
}
