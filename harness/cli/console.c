/* console.c - the per-case table and the progress line (see console.h). */
#include "cli/console.h"

#include "core/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double since_s(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static void fmt_dur(char *out, size_t n, double s)
{
    long v = (long)(s + 0.5);
    if (v >= 3600)
        snprintf(out, n, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else
        snprintf(out, n, "%ld:%02ld", v / 60, v % 60);
}

void kb_progress_start(kb_progress *pg, int64_t n)
{
    pg->tty = isatty(2);
    pg->n = n;
    pg->done = 0;
    pg->next_mark = 0;
    clock_gettime(CLOCK_MONOTONIC, &pg->t0);
}

void kb_progress_clear(const kb_progress *pg)
{
    if (pg->tty)
        fputs("\r\033[K", stderr);
}

void kb_progress_step(kb_progress *pg)
{
    pg->done++;
    if (!pg->tty && pg->done < pg->next_mark && pg->done != pg->n)
        return;
    pg->next_mark = pg->done + (pg->n >= 10 ? pg->n / 10 : 1);
    double el = since_s(&pg->t0);
    double left = pg->done ? el / pg->done * (pg->n - pg->done) : 0;
    char a[32], b[32];
    fmt_dur(a, sizeof a, el);
    fmt_dur(b, sizeof b, left);
    fprintf(stderr, "%s[%lld/%lld] %s elapsed, ~%s left%s", pg->tty ? "\r\033[K" : "kbench: progress ",
            (long long)pg->done, (long long)pg->n, a, b, pg->tty ? "" : "\n");
    fflush(stderr);
}

/* The case column: ids longer than this keep their head and tail around "..." so that a
 * row stays within 160 columns (the record keeps the whole id). */
#define ID_MAX 60

static int id_cols(int id_width) { return id_width > ID_MAX ? ID_MAX : id_width; }

static void print_id(const char *id, int w)
{
    size_t n = strlen(id);
    if ((int)n <= w) {
        printf("%-*s", w, id);
        return;
    }
    int head = 18, tail = w - head - 3;
    printf("%.*s...%s", head, id, id + n - tail);
}

void kb_console_header(unsigned caps, int id_width)
{
    int gpu = caps & KB_CAP_GPU_TIMER;
    printf("%-10s %-*s %-13s %8s %7s %11s %8s %8s %7s %6s\n", "", id_cols(id_width), "case", "status", "max_abs",
           "err/tol", gpu ? "median_us" : "cpu_med_us", gpu ? "TFLOPS" : "cpu_TFLOP", gpu ? "GB/s" : "cpu_GB/s", "AI",
           "%roof");
}

static void num(int have, double v, int w)
{
    char b[32] = "-";
    if (have) snprintf(b, sizeof b, v >= 100 || v == 0 ? "%.1f" : v >= 0.01 ? "%.3g" : "%.2g", v);
    printf(" %*s", w, b);
}

void kb_console_row(int id_width, int64_t i, int64_t n, const kb_case_result *r, const char *status)
{
    char pos[32];
    const kb_derived *d = &r->derived.d;
    int rates = r->measure.done && d->have_rates;
    snprintf(pos, sizeof pos, "[%lld/%lld]", (long long)i + 1, (long long)n);
    printf("%-10s ", pos);
    print_id(r->case_id, id_cols(id_width));
    printf(" %-13s", status);
    if (r->verify.done)
        printf(" %8.1e %7.3f", r->verify.v.max_abs_err, r->verify.v.max_err_ratio);
    else
        printf(" %8s %7s", "-", "-");
    num(r->measure.done, r->measure.m.st.median, 11);
    num(rates, d->tflops, 8);
    num(rates, d->gbps, 8);
    num(rates, d->ai, 7);
    num(rates && d->have_roof, d->pct_roof, 6);
    if (r->reason[0])
        printf("  %s", r->reason);
    putchar('\n');
    fflush(stdout);
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

/* ---- the console as a record sink ---- */

/* The progress line on screen (NULL when none), for the reporting hook to clear. */
static const kb_progress *shown;

typedef struct {
    int quiet;
    int id_width;
    int64_t n_cases;
    kb_progress pg;
} console_sink;

static void console_open(void *self, const kb_sink_run *run)
{
    console_sink *k = self;
    const kb_device_info *d = run->dev;
    k->id_width = run->cases->id_width;
    k->n_cases = run->n_cases;
    char tgt[32] = "";
    if (run->target_sm != d->sm)
        snprintf(tgt, sizeof tgt, ", compiled for sm_%d", run->target_sm);
    fprintf(stderr, "kbench: suite %s: %lld cases on %s (%s, sm_%d%s)%s\n", run->suite, (long long)run->n_cases,
            run->backend, d->name, d->sm, tgt, run->check_shapes ? "; the emulator runs the suite's check shapes" : "");
    if (!(d->caps & KB_CAP_GPU_TIMER))
        fprintf(stderr, "kbench: emulator timings are CPU time, not GPU numbers\n");
    if (run->cases->counts.repeats)
        fprintf(stderr, "kbench: %lld planned cases repeat an earlier entry's case; each runs once\n",
                (long long)run->cases->counts.repeats);
    if (!k->quiet)
        kb_console_header(d->caps, k->id_width);
    kb_progress_start(&k->pg, run->cases->todo);
    shown = &k->pg;
}

static void console_case_start(void *self, const kb_cases_item *item) { kb_progress_clear(&((console_sink *)self)->pg); }

static kb_status console_record(void *self, const kb_sink_case *c)
{
    console_sink *k = self;
    if (!k->quiet)
        kb_console_row(k->id_width, c->item->it.index, k->n_cases, c->r, c->status);
    kb_console_notes(c->r, c->dump_err);
    kb_progress_step(&k->pg);
    return KB_OK;
}

static void console_close(void *self)
{
    kb_progress_clear(&((console_sink *)self)->pg);
    shown = NULL;
}

static void console_free(void *self)
{
    if (shown == &((console_sink *)self)->pg)
        shown = NULL;
    free(self);
}

static const kb_sink_ops console_ops = {
    "console", 0, console_open, console_case_start, console_record, console_close, console_free,
};

kb_sink kb_console_sink(int quiet)
{
    console_sink *k = calloc(1, sizeof *k);
    if (!k)
        return (kb_sink){ NULL, NULL };
    k->quiet = quiet;
    return (kb_sink){ &console_ops, k };
}

static void report_line(void *user, kb_report_level level, const char *msg)
{
    if (shown)
        kb_progress_clear(shown);
    fprintf(stderr, "kbench: %s%s\n", kb_report_word(level), msg);
}

void kb_console_report_install(void) { kb_report_set(report_line, NULL); }
