/* accept.h - `kbench accept`: hardware acceptance of the local GPU (docs/acceptance.md).
 * Runs the accept suite through `kbench run`'s path (every case verified and recorded),
 * judges the records against the GPU's spec (accept/verdict.h), prints a verdict table,
 * and writes the verdict JSON and JUnit XML into --out-dir (one set per rank, atomically,
 * so a fleet's ranks share a directory without coordination).
 *
 * Exit codes (srun returns the highest of its tasks, so the worst wins): 0 every test
 * that ran passed (WARN included), 5 a performance floor missed, 6 wrong results or a
 * hardware error, 3 setup error or nothing could be checked, 2 bad command line or spec,
 * 130 interrupted. */
#ifndef KB_CLI_ACCEPT_H
#define KB_CLI_ACCEPT_H

#include "cli/opts.h"
#include "cli/run.h"

typedef struct {
    kb_run_opts run;            /* first: the shared KB_ROW_* rows (offsetof kb_run_opts) apply */
    const char *spec_path;      /* --spec FILE; NULL: matched under data/acceptance/ */
    const char *suite;          /* --suite FILE; NULL: <data root>/suites/accept.yaml */
    const char *out_dir;        /* --out-dir DIR; NULL: results/accept */
    const char *json_path;      /* --json FILE: a copy of the verdict */
    const char *junit_path;     /* --junit FILE: a copy of the JUnit XML */
    const char *check_suites;   /* --check-suites auto|yes|no: the kernel check suites too */
    const char *system;         /* --system NAME|FILE: judge the node (accept/system.h) instead of the GPU */
} kb_accept_opts;

extern const kb_command kb_command_accept;

#endif /* KB_CLI_ACCEPT_H */
