/* report_cmd.h - the commands that read recorded runs: report, query, compare. */
#ifndef KB_REPORT_CMD_H
#define KB_REPORT_CMD_H

#include "cli/opts.h"

/* kbench report RUN [--format md|csv|html|gbench-json|junit] [--out FILE] [--results DIR]
 * RUN is a .jsonl file or a run id found in the *.jsonl files of DIR (default results).
 * Writes to stdout, or to FILE (complete or not at all: written aside, then renamed; never
 * RUN itself). KB_EXIT_OK; KB_EXIT_INPUT for bad options or an unknown/malformed run;
 * KB_EXIT_SETUP when FILE cannot be written. */
extern const kb_command kb_command_report;

/* kbench query [--db PATH] [--csv|--json] [--write] [--import FILE.jsonl]... ["SQL" | -]
 * Imports the given JSON Lines files into the store (default $KBENCH_DB, else
 * results/kbench.db), then runs SQL (- reads it from stdin) read-only unless --write,
 * printing an aligned table, CSV or JSON. KB_EXIT_OK; KB_EXIT_INPUT for bad options,
 * an SQL error or a bad import file; KB_EXIT_SETUP when the store cannot be opened. */
extern const kb_command kb_command_query;

/* kbench compare A B [--threshold 0.05] [--results DIR]
 * A is the baseline; each a .jsonl file or a run id. Prints per case the ratio of
 * medians B/A and the U-test p-value, the geometric mean, and the cases found in one
 * run only. KB_EXIT_REGRESS when any case is slower by more than the threshold with
 * p < 0.05; KB_EXIT_INPUT for bad options or runs, or runs with no case in common;
 * KB_EXIT_OK otherwise. */
extern const kb_command kb_command_compare;

/* The same, called with argv[0] the command's name (for tests that run them in-process). */
int kb_cmd_report(int argc, char **argv);
int kb_cmd_query(int argc, char **argv);
int kb_cmd_compare(int argc, char **argv);

#endif /* KB_REPORT_CMD_H */
