/* console.h - what a run prints for people, as one record sink of the session
 * (session/sink.h): the setup lines, one table per family whose columns are the axes the
 * run varies (cli/console_cols.h: nvbench's column per axis; what the family's cases
 * share is stated once above its table), a row per case, skipped rows with the same
 * reason folded into one line with their count, the progress line with a time left that
 * does not swing (cli/progress.h), and the per-case notes; and the line every diagnostic
 * of the layers below becomes (kb_console_report_install). Structured results go to the
 * records; nothing reads this text back. The closing summary is cli/run_summary.h's.
 */
#ifndef KB_CONSOLE_H
#define KB_CONSOLE_H

#include "session/sink.h"

#include <stdio.h>

/* Where nothing says how wide the output may be (not a terminal, no COLUMNS). */
#define KB_CONSOLE_DEFAULT_COLUMNS 160

typedef struct {
    FILE *out;                    /* the table (NULL: stdout) */
    FILE *progress;               /* the setup lines and the progress line (NULL: stderr) */
    int quiet;                    /* no table, no rows */
    int verbose;                  /* every skipped row, none folded */
    int columns;                  /* the width the table may take; 0: kb_console_columns(out) */
} kb_console_opts;

/* The width [characters] output to out may take: $COLUMNS (40..1000), else the
 * terminal's when out is one, else KB_CONSOLE_DEFAULT_COLUMNS. The axis columns are
 * always shown whole; the width decides which metric columns (TFLOPS, GB/s, %roof, AI,
 * max_abs, given up in that order from the end) fit beside them. */
int kb_console_columns(FILE *out);

/* The console as a record sink: when the run begins, the suite line (cases to run,
 * backend, device, arch, check shapes), the emulator's CPU-time line and the repeats
 * line on stderr; then per case, numbered within the cases this run executes ("[k/N]",
 * a --filter's or --resume's selection, not the suite's), its row under its family's
 * header (printed when the family changes): axis cells, status, err/tol, the median
 * (cpu_us on the emulator), the metrics that fit, the reason; skipped rows with the same
 * reason in a row are one line "[a-b/N] n cases skipped (variants): reason" unless
 * verbose; the notes and the progress on stderr. A sink without ops when out of memory. */
kb_sink kb_console_sink(const kb_console_opts *o);

/* What an operator should know about a finished case beyond its row, on stderr: a
 * compile note, a launch overhead that could not be measured, a GPU that was throttling,
 * a --dump that failed (dump_err, "" when none). */
void kb_console_notes(const kb_case_result *r, const char *dump_err);

/* Install the reporting hook of the command line (core/report.h): each diagnostic clears
 * the progress line, if one is shown, and prints "kbench: <word><message>" on stderr. */
void kb_console_report_install(void);

#endif
