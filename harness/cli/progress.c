/* progress.c - the progress line and its time-left model (see progress.h). */
#include "cli/progress.h"

#include <string.h>
#include <unistd.h>

static double since_s(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) + (t.tv_nsec - t0->tv_nsec) * 1e-9;
}

void kb_progress_fmt(char *out, size_t n, double s)
{
    long v = (long)(s + 0.5);
    if (v >= 3600)
        snprintf(out, n, "%ld:%02ld:%02ld", v / 3600, v / 60 % 60, v % 60);
    else
        snprintf(out, n, "%ld:%02ld", v / 60, v % 60);
}

void kb_progress_start(kb_progress *pg, FILE *out, int64_t n)
{
    memset(pg, 0, sizeof *pg);
    pg->out = out;
    pg->tty = isatty(fileno(out));
    pg->n = n;
    pg->cur = -1;
    pg->shown_s = -1;
    clock_gettime(CLOCK_MONOTONIC, &pg->t0);
    pg->case_t0 = pg->t0;
}

int kb_progress_plan(kb_progress *pg, const void *group, int sub, int refused)
{
    for (int i = 0; i < pg->n_cls; i++) {
        kb_progress_class *c = &pg->cls[i];
        if (c->group == group && c->sub == sub && c->refused == refused) {
            c->left++;
            return i;
        }
    }
    int i = pg->n_cls < KB_PROGRESS_MAX_CLASSES ? pg->n_cls++ : KB_PROGRESS_MAX_CLASSES - 1;
    kb_progress_class *c = &pg->cls[i];
    if (c->left == 0 && c->done == 0)
        *c = (kb_progress_class){ group, sub, 0, 0, 0, refused };
    c->left++;
    return i;
}

void kb_progress_clear(const kb_progress *pg)
{
    if (pg->tty)
        fputs("\r\033[K", pg->out);
}

void kb_progress_begin(kb_progress *pg, int cls)
{
    pg->cur = cls;
    clock_gettime(CLOCK_MONOTONIC, &pg->case_t0);
}

/* The mean wall time [s] of a case of class c, or -1 when nothing tells. */
static double class_mean(const kb_progress *pg, const kb_progress_class *c)
{
    if (c->done > 0)
        return c->sum_s / (double)c->done;
    double sum = 0;
    int64_t n = 0;
    for (int i = 0; i < pg->n_cls; i++)
        if (pg->cls[i].refused == c->refused) {
            sum += pg->cls[i].sum_s;
            n += pg->cls[i].done;
        }
    if (n > 0)
        return sum / (double)n;
    return c->refused ? 0 : -1;   /* a refused case is recorded without running */
}

double kb_progress_left_s(const kb_progress *pg)
{
    double left = 0;
    for (int i = 0; i < pg->n_cls; i++) {
        const kb_progress_class *c = &pg->cls[i];
        if (c->left == 0)
            continue;
        double m = class_mean(pg, c);
        if (m < 0)
            return -1;
        left += m * (double)c->left;
    }
    return left;
}

/* The time left to show: the model's, blended into what was shown before (which counted
 * down meanwhile), so one slow or one instant case moves it a third of the way. */
static double smoothed_left(kb_progress *pg, double now_s)
{
    double model = kb_progress_left_s(pg);
    if (model < 0)
        return -1;
    if (pg->shown_s < 0) {
        pg->shown_s = model;
    } else {
        double counted = pg->shown_s - (now_s - pg->shown_at_s);
        pg->shown_s = (counted > 0 ? counted : 0) * (2.0 / 3.0) + model / 3.0;
    }
    pg->shown_at_s = now_s;
    return pg->shown_s;
}

void kb_progress_account(kb_progress *pg, double case_s)
{
    if (pg->cur >= 0) {
        kb_progress_class *c = &pg->cls[pg->cur];
        c->sum_s += case_s;
        c->done++;
        if (c->left > 0)
            c->left--;
        pg->cur = -1;
    }
    pg->done++;
}

void kb_progress_step(kb_progress *pg)
{
    double now = since_s(&pg->t0);
    kb_progress_account(pg, since_s(&pg->case_t0));
    double left = smoothed_left(pg, now);
    if (!pg->tty && pg->done < pg->next_mark && pg->done != pg->n)
        return;
    pg->next_mark = pg->done + (pg->n >= 10 ? pg->n / 10 : 1);
    char a[32], b[32] = "?";
    kb_progress_fmt(a, sizeof a, now);
    if (left >= 0)
        kb_progress_fmt(b, sizeof b, pg->done == pg->n ? 0 : left);
    fprintf(pg->out, "%s[%lld/%lld] %s elapsed, ~%s left%s", pg->tty ? "\r\033[K" : "kbench: progress ",
            (long long)pg->done, (long long)pg->n, a, b, pg->tty ? "" : "\n");
    fflush(pg->out);
}
