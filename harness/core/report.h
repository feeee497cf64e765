/* report.h - the one way code below cli/ says something to the operator.
 *
 * Nothing under harness/ except cli/ writes to a terminal: a diagnostic (a note, a
 * warning, an error that does not end in a returned status) is handed to kb_report,
 * which passes it to the hook the command line installed (cli/console.c clears the
 * progress line, then prints it). Without a hook - a unit test, a fuzz target, a
 * library user - the default writes "kbench: <word><message>" to stderr, the same
 * text the command line prints.
 */
#ifndef KB_REPORT_H
#define KB_REPORT_H

/* How much a message matters; each level has one word ahead of the text (report.c). */
typedef enum {
    KB_REPORT_INFO = 0,    /* what happened ("...; using the CPU emulator") - no word */
    KB_REPORT_NOTE,        /* worth knowing, nothing lost - "note: " */
    KB_REPORT_WARNING,     /* something was skipped or repaired - "warning: " */
    KB_REPORT_ERROR,       /* an operation failed (its caller goes on or stops) - no word */
    KB_REPORT_LEVEL_COUNT
} kb_report_level;

/* The word a level puts ahead of its message: "", "note: ", "warning: ", "". */
const char *kb_report_word(kb_report_level level);

/* A hook receives one message: one line, no "kbench: " prefix, no newline. */
typedef void (*kb_report_fn)(void *user, kb_report_level level, const char *msg);

/* Install fn (NULL: the default, stderr) with its user pointer; returns nothing. Not
 * thread-safe: set it before the work starts (cli does, once per process). */
void kb_report_set(kb_report_fn fn, void *user);

/* Format a message and hand it to the hook. Safe to call when out of memory (a message
 * longer than 4 KiB is cut there). */
void kb_report(kb_report_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif /* KB_REPORT_H */
