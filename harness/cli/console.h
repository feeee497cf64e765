/* console.h - what a run prints for people: the setup lines of a run, the per-case
 * table, the progress line and the notes, as one record sink of the session
 * (kb_console_sink, session/sink.h), and the line every diagnostic of the layers below
 * becomes (kb_console_report_install). Structured results go to the records; nothing
 * reads this text back. The sink is one object: a different console (other columns,
 * folded skips, another summary) is another sink, not a change to the session. */
#ifndef KB_CONSOLE_H
#define KB_CONSOLE_H

#include "session/sink.h"

#include <time.h>

/* Progress on stderr: rewritten in place on a terminal; on a log (CI) a line at every
 * tenth of the run, so long runs show where they are without flooding the log. */
typedef struct {
    int tty;
    int64_t n;          /* cases to run */
    int64_t done;
    int64_t next_mark;  /* non-tty: print when done reaches this */
    struct timespec t0;
} kb_progress;

void kb_progress_start(kb_progress *pg, int64_t n);
void kb_progress_clear(const kb_progress *pg);  /* before printing a row */
void kb_progress_step(kb_progress *pg);         /* after a case */

/* The table: a header naming the clock (cpu_median_us without KB_CAP_GPU_TIMER in caps),
 * then a row per case: position i of n, id (padded to id_width, the longest id of the
 * run), status (its word), max abs error and err/tol, median, rate, reason. */
void kb_console_header(unsigned caps, int id_width);
void kb_console_row(int id_width, int64_t i, int64_t n, const kb_case_result *r, const char *status);

/* What an operator should know about a finished case beyond its row, on stderr: a
 * launch overhead that could not be measured, a GPU that was throttling, a --dump that
 * failed (dump_err, "" when none). */
void kb_console_notes(const kb_case_result *r, const char *dump_err);

/* The console as a record sink: when the run begins, the suite line (cases, backend,
 * device, arch, check shapes), the emulator's CPU-time line, the repeats line, the table's
 * header (unless quiet) and the progress line; before each case the progress line is
 * cleared; after it, its row (unless quiet), its notes and the progress; at the end the
 * progress line goes. A sink without ops when out of memory. */
kb_sink kb_console_sink(int quiet);

/* Install the reporting hook of the command line (core/report.h): each diagnostic clears
 * the progress line, if one is shown, and prints "kbench: <word><message>" on stderr. */
void kb_console_report_install(void);

#endif
