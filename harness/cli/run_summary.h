/* run_summary.h - the closing summary of `kbench run`: what a person decides from.
 *
 *   - the cases by status, and the skipped ones by reason;
 *   - for each shape and dtype (and pad, where the run has several), the fastest
 *     verified configuration and its margin over the runner-up, "within noise" when the
 *     runner-up's 95% interval of the median overlaps the best's (tune/winner.h, the rule
 *     `kbench tune` crowns a winner by); on the emulator the times are CPU timings of the
 *     check shapes and the heading says so;
 *   - where the records and the results database are, and the next commands (report,
 *     compare, tune) with those paths.
 * It is a record sink of its own (session/sink.h) that only collects; run.c prints it
 * when the run has ended. Configurations are named by the console's columns
 * (cli/console_cols.h): the variant and the params that vary within the family.
 */
#ifndef KB_RUN_SUMMARY_H
#define KB_RUN_SUMMARY_H

#include "session/sink.h"

#include <stdio.h>

typedef struct kb_run_summary kb_run_summary;

/* An empty summary (NULL when out of memory). Free with kb_run_summary_free. */
kb_run_summary *kb_run_summary_new(void);
void kb_run_summary_free(kb_run_summary *s);

/* A sink that fills s with each finished case (s stays the caller's: the sink does not
 * free it, and s must outlive the session the sink is added to, or be printed before
 * the session is closed - the items it keeps belong to the session's case list). */
kb_sink kb_run_summary_sink(kb_run_summary *s);

typedef struct {
    const char *records;          /* the records file */
    const char *db;               /* the results store, NULL when there is none */
    const char *suite;            /* the suite file, for `kbench tune` */
    int brief;                    /* the counts and the paths only (accept's runs) */
} kb_run_summary_where;

/* Print the summary to out. Returns the number of shape/dtype groups shown. */
int kb_run_summary_print(const kb_run_summary *s, FILE *out, const kb_run_summary_where *w);

#endif /* KB_RUN_SUMMARY_H */
