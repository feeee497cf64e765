/* progress.h - the progress line of a run: done/total, elapsed, and a time left that
 * does not swing.
 *
 * The time left is a model, not a ratio: each case belongs to a class (its family and
 * variant, and whether valid() refused it: a refused case is recorded without running),
 * every finished case adds its wall time to its class's mean, and the estimate is the
 * sum over the cases still to run of their class's mean (a class not seen yet: the mean
 * of every runnable case so far; a refused one: the mean of refused ones, else 0). A
 * run of 280 skipped vendor rows then no longer reads as "almost done", nor a slow
 * family as hours left. The shown value is smoothed on top (each new estimate moves it
 * by a third), counting down in between. On a terminal the line is rewritten in place;
 * on a log (CI) a line at every tenth of the run.
 */
#ifndef KB_PROGRESS_H
#define KB_PROGRESS_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define KB_PROGRESS_MAX_CLASSES 256   /* classes beyond this share the last one */

typedef struct {
    const void *group;           /* the class's identity (kb_progress_plan) */
    int sub;
    double sum_s;                /* [s] wall time of the finished cases of the class */
    int64_t done, left;          /* finished; still to run */
    int refused;                 /* the class of cases valid() refused */
} kb_progress_class;

typedef struct {
    FILE *out;                   /* where the line goes (stderr) */
    int tty;                     /* rewritten in place */
    int64_t n, done;
    int64_t next_mark;           /* not a terminal: print when done reaches this */
    struct timespec t0;          /* the run's start */
    struct timespec case_t0;     /* the case in flight's start */
    int cur;                     /* its class, -1 before the first case */
    kb_progress_class cls[KB_PROGRESS_MAX_CLASSES];
    int n_cls;
    double shown_s;              /* [s] the time left last shown, -1 before any */
    double shown_at_s;           /* [s] since t0, when it was shown */
} kb_progress;

/* Start a run of n cases on out (a terminal or not: isatty of its descriptor). */
void kb_progress_start(kb_progress *pg, FILE *out, int64_t n);

/* Count a case to come into its class: (group, sub, refused) identify it (the console
 * passes the family and the variant's index; refused when valid() refused it). Call once
 * per case before the first kb_progress_begin; returns the class for kb_progress_begin. */
int kb_progress_plan(kb_progress *pg, const void *group, int sub, int refused);

/* Clear the line (a terminal) before something else is printed. */
void kb_progress_clear(const kb_progress *pg);

/* The case of class cls starts now. */
void kb_progress_begin(kb_progress *pg, int cls);

/* The case in flight finished: count it (kb_progress_account with its wall time) and
 * print the line. */
void kb_progress_step(kb_progress *pg);

/* Count the case in flight as finished after case_s seconds, printing nothing. */
void kb_progress_account(kb_progress *pg, double case_s);

/* The time left [s] the model gives now, unsmoothed (-1 when nothing has finished). */
double kb_progress_left_s(const kb_progress *pg);

/* "1:02:03" or "4:05" for s seconds into out. */
void kb_progress_fmt(char *out, size_t n, double s);

#endif /* KB_PROGRESS_H */
