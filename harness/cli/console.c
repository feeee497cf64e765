/* console.c - what a run prints for people, as a record sink (see console.h). */
#include "cli/console.h"

#include "cli/console_cols.h"
#include "cli/progress.h"
#include "core/arch.h"
#include "core/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* ---- the width the table may take ---- */

int kb_console_columns(FILE *out)
{
    const char *env = getenv("COLUMNS");
    char *end;
    long v = env ? strtol(env, &end, 10) : 0;
    if (env && *env && !*end && v >= 40 && v <= 1000)
        return (int)v;
    struct winsize ws;
    if (isatty(fileno(out)) && ioctl(fileno(out), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
        return ws.ws_col;
    return KB_CONSOLE_DEFAULT_COLUMNS;
}

/* ---- the metric columns ---- */

/* Beyond status, err/tol and the median, in the order they are given up when the
 * line would be wider than the terminal. */
enum { M_RATE, M_GBPS, M_ROOF, M_AI, M_ABS, M_COUNT };
static const struct {
    const char *gpu, *cpu;       /* header on a GPU timer / on the emulator's CPU clock */
    int w;                       /* [characters] with the space before it */
} metrics[M_COUNT] = {
    { "TFLOPS", "cpu_TFLOPS", 11 }, { "GB/s", "cpu_GB/s", 10 }, { "%roof", "%roof", 7 },
    { "AI", "AI", 8 }, { "max_abs", "max_abs", 9 },
};
#define W_STATUS 8      /* "skipped " */
#define W_RATIO 8       /* err/tol */
#define W_TIME 11       /* the median */

static void num(kb_sb *out, int have, double v, int w)
{
    char b[32] = "-";
    if (have) snprintf(b, sizeof b, v >= 100 || v == 0 ? "%.1f" : v >= 0.01 ? "%.3g" : "%.2g", v);
    kb_sb_printf(out, " %*s", w - 1, b);
}

/* ---- the sink ---- */

/* The progress line on screen (NULL when none), for the reporting hook to clear. */
static const kb_progress *shown;

typedef struct {
    FILE *out, *err;              /* the table; the setup lines and the progress */
    int quiet, verbose;
    int columns;
    unsigned caps;
    kb_cols cols;
    const kb_cases *cases;
    int *cls;                    /* the progress class of each item of cases */
    int w_pos;                   /* "[k/N]" */
    int64_t pos, n;              /* cases shown so far, and to show */
    const kb_cols_family *cur;   /* whose header is the last one printed */
    unsigned shown_metrics;      /* bit m: metric m is a column of cur's table */
    /* skipped rows held back while their reason repeats */
    int64_t fold_n, fold_first, fold_last;
    kb_sb fold_reason, fold_row, fold_what;
    kb_progress pg;
} console_sink;

static int metric_applies(const console_sink *k, int m)
{
    return m != M_ROOF || (k->caps & KB_CAP_ROOFLINE);
}

/* The list "a 1x2, b 3x4, ..." after lead, wrapped at columns (continuation lines indented by 4),
 * so a family of many shapes (llm.yaml's GEMMs) does not print one line wider than the table. */
static void print_wrapped(FILE *out, const char *lead, const char *list, int columns)
{
    int at = fprintf(out, "%s", lead);
    for (const char *p = list; *p;) {
        const char *sep = strstr(p, ", ");
        int n = sep ? (int)(sep - p) : (int)strlen(p);
        if (p != list && at + 2 + n > columns) {
            fputs(",\n   ", out);
            at = 3;
        } else if (p != list) {
            fputc(',', out);
            at++;
        }
        at += fprintf(out, " %.*s", n, p);
        p += n + (sep ? 2 : 0);
    }
    fputc('\n', out);
}

/* The header block of a family's table: its name, cases and constants, the named
 * shapes, the column names; the metrics that fit k->columns. */
static void family_header(console_sink *k, const kb_cols_family *cf)
{
    int gpu = k->caps & KB_CAP_GPU_TIMER;
    int width = k->w_pos + 1 + kb_cols_width(cf) + W_STATUS + W_RATIO + W_TIME;
    k->shown_metrics = 0;
    for (int m = 0; m < M_COUNT; m++)
        if (metric_applies(k, m) && width + metrics[m].w <= k->columns) {
            k->shown_metrics |= 1u << m;
            width += metrics[m].w;
        }
    fprintf(k->out, "\n%s: %lld case%s%s%s\n", cf->f->name, (long long)cf->n_cases, cf->n_cases == 1 ? "" : "s",
            cf->constants.len ? "; the same in all: " : "", cf->constants.s);
    if (cf->shapes.len)
        print_wrapped(k->out, cf->f->n_dims > 1 ? "  shapes (dims):" : "  shapes:", cf->shapes.s, k->columns);
    kb_sb h;
    kb_sb_init(&h);
    kb_sb_printf(&h, "%-*s ", k->w_pos, "");
    kb_cols_header(cf, &h);
    kb_sb_printf(&h, "%-*s%*s%*s", W_STATUS - 1, "status", W_RATIO, "err/tol", W_TIME, gpu ? "median_us" : "cpu_us");
    for (int m = 0; m < M_COUNT; m++)
        if (k->shown_metrics >> m & 1u)
            kb_sb_printf(&h, "%*s", metrics[m].w, gpu ? metrics[m].gpu : metrics[m].cpu);
    fprintf(k->out, "%s\n", h.s);
    kb_sb_free(&h);
    k->cur = cf;
}

/* One case's row into out (no newline). */
static void format_row(const console_sink *k, const kb_sink_case *c, kb_sb *out)
{
    const kb_case_result *r = c->r;
    const kb_derived *d = &r->derived.d;
    int rates = r->measure.done && d->have_rates;
    char pos[48];
    snprintf(pos, sizeof pos, "[%lld/%lld]", (long long)k->pos, (long long)k->n);
    kb_sb_printf(out, "%-*s ", k->w_pos, pos);
    kb_cols_cells(&k->cols, k->cur, c->item->it.c, out);
    kb_sb_printf(out, "%-*s", W_STATUS - 1, c->status);
    num(out, r->verify.done, r->verify.v.max_err_ratio, W_RATIO);
    num(out, r->measure.done, r->measure.m.st.median, W_TIME);
    double v[M_COUNT] = { d->tflops, d->gbps, d->pct_roof, d->ai, r->verify.v.max_abs_err };
    /* a case without FLOPs (embedding, a copy) has no TFLOPS or AI to show, not 0 */
    int have[M_COUNT] = { rates && d->tflops > 0, rates, rates && d->have_roof, rates && d->ai > 0, r->verify.done };
    for (int m = 0; m < M_COUNT; m++)
        if (k->shown_metrics >> m & 1u)
            num(out, have[m], v[m], metrics[m].w);
    if (r->reason[0])
        kb_sb_printf(out, "  %s", r->reason);
}

/* The skipped rows held back: one as itself, more as one line with their count. */
static void flush_fold(console_sink *k)
{
    if (k->fold_n == 1)
        fprintf(k->out, "%s\n", k->fold_row.s);
    else if (k->fold_n > 1)
        fprintf(k->out, "[%lld-%lld/%lld] %lld cases skipped (%s): %s  (--verbose lists them)\n",
                (long long)k->fold_first, (long long)k->fold_last, (long long)k->n, (long long)k->fold_n,
                k->fold_what.s, k->fold_reason.s);
    k->fold_n = 0;
}

/* 1 when the list "a, b, c" holds word. */
static int has_word(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; (p = strstr(p, word)); p += n)
        if ((p == list || p[-1] == ' ') && (p[n] == 0 || p[n] == ','))
            return 1;
    return 0;
}

/* Hold a skipped row back: it joins the fold when its reason is the fold's. */
static void fold(console_sink *k, const kb_sink_case *c)
{
    const char *variant = c->item->f->variants[c->item->it.c->variant].name;
    if (k->fold_n > 0 && !strcmp(k->fold_reason.s, c->r->reason)) {
        k->fold_n++;
        k->fold_last = k->pos;
        if (!has_word(k->fold_what.s, variant))   /* the variants in it, each once */
            kb_sb_printf(&k->fold_what, ", %s", variant);
        return;
    }
    flush_fold(k);
    k->fold_n = 1;
    k->fold_first = k->fold_last = k->pos;
    kb_sb_clear(&k->fold_reason);
    kb_sb_printf(&k->fold_reason, "%s", c->r->reason);
    kb_sb_clear(&k->fold_what);
    kb_sb_printf(&k->fold_what, "%s", variant);
    kb_sb_clear(&k->fold_row);
    format_row(k, c, &k->fold_row);
}

static void show_row(console_sink *k, const kb_sink_case *c)
{
    const kb_cols_family *cf = kb_cols_find(&k->cols, c->item->f);
    if (!cf)
        return;
    if (cf != k->cur) {
        flush_fold(k);
        family_header(k, cf);
    }
    if (c->r->status == KB_CASE_SKIPPED && !k->verbose) {
        fold(k, c);
        return;
    }
    flush_fold(k);
    kb_sb line;
    kb_sb_init(&line);
    format_row(k, c, &line);
    fprintf(k->out, "%s\n", line.s);
    kb_sb_free(&line);
}

void kb_console_notes(const kb_case_result *r, const char *dump_err)
{
    if (r->compile.note && r->compile.note[0])
        fprintf(stderr, "kbench: note: %s\n", r->compile.note);
    if (r->overhead.error[0])
        fprintf(stderr, "kbench: launch overhead not measured: %s\n", r->overhead.error);
    if (r->telemetry.done && r->telemetry.t.available && r->telemetry.t.throttled)
        fprintf(stderr, "kbench: %s: the GPU was throttling during this case\n", r->case_id);
    if (dump_err && dump_err[0])
        fprintf(stderr, "kbench: %s\n", dump_err);
}

/* The suite line, the emulator's CPU-time line, the repeats line. */
static void setup_lines(FILE *err, const kb_sink_run *run)
{
    const kb_device_info *d = run->dev;
    char tgt[32] = "";
    if (run->target_sm != d->sm)
        snprintf(tgt, sizeof tgt, ", compiled for %s", kb_arch_name(run->target_sm));
    fprintf(err, "kbench: suite %s: %lld cases to run on %s (%s, sm_%d%s)%s\n", run->suite,
            (long long)run->cases->todo, run->backend, d->name, d->sm, tgt,
            run->check_shapes ? "; the emulator runs the suite's check shapes" : "");
    if (!(d->caps & KB_CAP_GPU_TIMER))
        fprintf(err, "kbench: emulator timings are CPU time, not GPU numbers\n");
    if (run->plan && run->plan->n_not_planned)
        fprintf(err, "kbench: %lld cases of entries that require a GPU (requires: gpu) are not planned here\n",
                (long long)run->plan->n_not_planned);
    if (run->cases->counts.repeats)
        fprintf(err, "kbench: %lld planned cases repeat an earlier entry's case; each runs once\n",
                (long long)run->cases->counts.repeats);
}

static void console_open(void *self, const kb_sink_run *run)
{
    console_sink *k = self;
    k->caps = run->dev->caps;
    k->cases = run->cases;
    k->n = run->cases->todo;
    char b[64];
    k->w_pos = snprintf(b, sizeof b, "[%lld/%lld]", (long long)k->n, (long long)k->n);
    setup_lines(k->err, run);
    if (kb_cols_build(run->cases, run->plan, &k->cols) != KB_OK)
        kb_report(KB_REPORT_ERROR, "out of memory laying out the table (rows are not shown)");
    kb_progress_start(&k->pg, k->err, k->n);
    k->cls = calloc((size_t)(run->cases->n ? run->cases->n : 1), sizeof *k->cls);
    for (int64_t i = 0; k->cls && i < run->cases->n; i++) {
        const kb_cases_item *it = &run->cases->items[i];
        if (!it->done)
            k->cls[i] = kb_progress_plan(&k->pg, it->f, it->it.c->variant, !it->it.valid);
    }
    shown = &k->pg;
}

static void console_case_start(void *self, const kb_cases_item *item)
{
    console_sink *k = self;
    kb_progress_clear(&k->pg);
    int64_t i = item - k->cases->items;
    kb_progress_begin(&k->pg, k->cls && i >= 0 && i < k->cases->n ? k->cls[i] : 0);
}

static kb_status console_record(void *self, const kb_sink_case *c)
{
    console_sink *k = self;
    k->pos++;
    kb_progress_clear(&k->pg);
    if (!k->quiet)
        show_row(k, c);
    fflush(k->out);
    kb_console_notes(c->r, c->dump_err);
    kb_progress_step(&k->pg);
    return KB_OK;
}

static void console_close(void *self)
{
    console_sink *k = self;
    kb_progress_clear(&k->pg);
    flush_fold(k);
    if (!k->quiet && k->pos > 0)
        fputc('\n', k->out);
    fflush(k->out);
    shown = NULL;
}

static void console_free(void *self)
{
    console_sink *k = self;
    if (shown == &k->pg)
        shown = NULL;
    kb_cols_free(&k->cols);
    kb_sb_free(&k->fold_reason);
    kb_sb_free(&k->fold_row);
    kb_sb_free(&k->fold_what);
    free(k->cls);
    free(k);
}

static const kb_sink_ops console_ops = {
    "console", 0, console_open, console_case_start, console_record, console_close, console_free,
};

kb_sink kb_console_sink(const kb_console_opts *o)
{
    console_sink *k = calloc(1, sizeof *k);
    if (!k)
        return (kb_sink){ NULL, NULL };
    k->out = o->out ? o->out : stdout;
    k->err = o->progress ? o->progress : stderr;
    k->quiet = o->quiet;
    k->verbose = o->verbose;
    k->columns = o->columns > 0 ? o->columns : kb_console_columns(k->out);
    kb_sb_init(&k->fold_reason);
    kb_sb_init(&k->fold_row);
    kb_sb_init(&k->fold_what);
    return (kb_sink){ &console_ops, k };
}

static void report_line(void *user, kb_report_level level, const char *msg)
{
    if (shown)
        kb_progress_clear(shown);
    fprintf(stderr, "kbench: %s%s\n", kb_report_word(level), msg);
}

void kb_console_report_install(void) { kb_report_set(report_line, NULL); }
