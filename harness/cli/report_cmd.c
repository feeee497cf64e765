/* report_cmd.c - `kbench report`, `kbench query` and `kbench compare`: option parsing
 * and exit codes around report.h, store.h and compare.h (see report_cmd.h). */
#include "cli/report_cmd.h"
#include "results/compare.h"
#include "results/report.h"
#include "results/store.h"
#include "results/store_query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char report_usage[] =
    "usage: kbench report RUN [--format md|csv|html|gbench-json|junit] [--out FILE] [--results DIR]\n"
    "  RUN: a results .jsonl file, or a run id found in DIR/*.jsonl (default results)\n";
static const char query_usage[] =
    "usage: kbench query [--db PATH] [--csv|--json] [--write] [--import FILE.jsonl]... [\"SQL\" | -]\n"
    "  store: $KBENCH_DB, else " KB_STORE_DEFAULT_PATH "; tables runs, devices, cases, measurements;\n"
    "  view results (cases with their device). Read-only unless --write.\n"
    "  example: kbench query \"SELECT case_id, median_us, tflops FROM results WHERE status = 'ok'\"\n";
static const char compare_usage[] =
    "usage: kbench compare A B [--threshold 0.05] [--results DIR]\n"
    "  A is the baseline; A and B are .jsonl files or run ids. Exit 4 when a case of B is slower\n"
    "  than A by more than the threshold with p < 0.05 (two-sided Mann-Whitney U).\n";

/* "--name VALUE" or "--name=VALUE" at argv[*i]: 1 and *val set (advancing *i), 0 when
 * argv[*i] is another option, -1 when the value is missing. */
static int opt_value(int argc, char **argv, int *i, const char *name, const char **val)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *val = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != 0)
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *val = argv[++*i];
    return 1;
}

static int usage_error(const char *usage, const char *fmt, const char *arg)
{
    fprintf(stderr, "kbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage);
    return KB_EXIT_INPUT;
}

static int is_help(const char *a) { return strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0; }

/* Write the report into path.tmp, then rename: a reader never sees half a report. */
static int report_to_file(const kb_report_run *run, kb_report_format f, const char *path)
{
    kb_sb tmp;
    kb_sb_init(&tmp);
    kb_sb_printf(&tmp, "%s.tmp.%d", path, (int)getpid());
    FILE *out = fopen(tmp.s, "w");
    if (!out) {
        fprintf(stderr, "kbench: cannot write %s: %s\n", tmp.s, strerror(errno));
        kb_sb_free(&tmp);
        return KB_EXIT_SETUP;
    }
    kb_status st = kb_report_write(run, f, out);
    if (fclose(out) != 0) st = KB_ERR_IO;
    if (st == KB_OK && rename(tmp.s, path) != 0) st = KB_ERR_IO;
    if (st != KB_OK) {
        fprintf(stderr, "kbench: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp.s);
    }
    kb_sb_free(&tmp);
    return st == KB_OK ? KB_EXIT_OK : KB_EXIT_SETUP;
}

int kb_cmd_report(int argc, char **argv)
{
    const char *run_arg = NULL, *fmt = "md", *out_path = NULL, *results = NULL;
    for (int i = 1; i < argc; i++) {
        int r;
        if (is_help(argv[i])) { fputs(report_usage, stdout); return KB_EXIT_OK; }
        if ((r = opt_value(argc, argv, &i, "--format", &fmt)) || (r = opt_value(argc, argv, &i, "-f", &fmt)) ||
            (r = opt_value(argc, argv, &i, "--out", &out_path)) || (r = opt_value(argc, argv, &i, "-o", &out_path)) ||
            (r = opt_value(argc, argv, &i, "--results", &results))) {
            if (r < 0) return usage_error(report_usage, "%s needs a value", argv[i]);
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) return usage_error(report_usage, "unknown option %s", argv[i]);
        if (run_arg) return usage_error(report_usage, "one RUN only (also got %s)", argv[i]);
        run_arg = argv[i];
    }
    kb_report_format f;
    if (!run_arg) return usage_error(report_usage, "%s", "which run? (a .jsonl file or a run id)");
    if (kb_report_format_parse(fmt, &f) != 0) return usage_error(report_usage, "unknown format %s", fmt);
    kb_report_run run;
    kb_sb err;
    kb_sb_init(&err);
    if (kb_report_run_load(run_arg, results, &run, &err) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
        kb_sb_free(&err);
        return KB_EXIT_INPUT;
    }
    kb_sb_free(&err);
    int rc = KB_EXIT_OK;
    if (out_path) {
        rc = report_to_file(&run, f, out_path);
    } else if (kb_report_write(&run, f, stdout) != KB_OK || fflush(stdout) != 0) {
        fprintf(stderr, "kbench: cannot write the report: %s\n", strerror(errno));
        rc = KB_EXIT_SETUP;
    }
    kb_report_run_free(&run);
    return rc;
}

/* All of stdin as a string (caller frees), NULL on failure. */
static char *read_stdin(void)
{
    kb_sb b;
    char buf[4096];
    size_t n;
    kb_sb_init(&b);
    while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
        kb_sb_append(&b, buf, n);
    if (ferror(stdin)) { kb_sb_free(&b); return NULL; }
    return b.s;
}

int kb_cmd_query(int argc, char **argv)
{
    const char *db = getenv("KBENCH_DB"), *sql = NULL;
    kb_query_format fmt = KB_QUERY_TABLE;
    int writable = 0, n_imports = 0;
    const char **imports = calloc((size_t)argc + 1, sizeof *imports);
    if (!imports) return KB_EXIT_SETUP;
    if (!db || !*db) db = KB_STORE_DEFAULT_PATH;
    int rc = KB_EXIT_OK;
    for (int i = 1; i < argc && rc == KB_EXIT_OK; i++) {
        const char *v;
        int r;
        if (is_help(argv[i])) { fputs(query_usage, stdout); free(imports); return KB_EXIT_OK; }
        if ((r = opt_value(argc, argv, &i, "--db", &db)) != 0) {
            if (r < 0) rc = usage_error(query_usage, "%s needs a value", argv[i]);
        } else if ((r = opt_value(argc, argv, &i, "--import", &v)) != 0) {
            if (r < 0) rc = usage_error(query_usage, "%s needs a value", argv[i]);
            else imports[n_imports++] = v;
        } else if (strcmp(argv[i], "--csv") == 0) fmt = KB_QUERY_CSV;
        else if (strcmp(argv[i], "--json") == 0) fmt = KB_QUERY_JSON;
        else if (strcmp(argv[i], "--write") == 0) writable = 1;
        else if (argv[i][0] == '-' && argv[i][1]) rc = usage_error(query_usage, "unknown option %s", argv[i]);
        else if (sql) rc = usage_error(query_usage, "one SQL argument only (quote it): also got %s", argv[i]);
        else sql = argv[i];
    }
    if (rc == KB_EXIT_OK && !sql && n_imports == 0)
        rc = usage_error(query_usage, "%s", "no SQL to run");
    kb_sb err;
    kb_sb_init(&err);
    for (int k = 0; rc == KB_EXIT_OK && k < n_imports; k++) {
        size_t n = 0;
        kb_status st = kb_store_import_jsonl(db, imports[k], &n, &err);
        if (st != KB_OK) {
            fprintf(stderr, "kbench: import %s: %s\n", imports[k], err.s);
            rc = st == KB_ERR_IO && access(imports[k], R_OK) == 0 ? KB_EXIT_SETUP : KB_EXIT_INPUT;
        } else {
            fprintf(stderr, "kbench: imported %zu records of %s into %s\n", n, imports[k], db);
        }
    }
    char *text = NULL;
    if (rc == KB_EXIT_OK && sql) {
        if (strcmp(sql, "-") == 0 && !(sql = text = read_stdin())) {
            fprintf(stderr, "kbench: cannot read SQL from stdin\n");
            rc = KB_EXIT_INPUT;
        } else if (!writable && access(db, F_OK) != 0) {
            fprintf(stderr, "kbench: no results store at %s (kbench run fills it; or kbench query --import FILE.jsonl)\n", db);
            rc = KB_EXIT_SETUP;
        } else {
            kb_status st = kb_store_query(db, sql, fmt, writable, stdout, &err);
            if (st != KB_OK) {
                fprintf(stderr, "kbench: %s%s\n", err.s,
                        !writable && strstr(err.s, "readonly") ? " (the store is opened read-only; --write allows changes)" : "");
                rc = st == KB_ERR_IO ? KB_EXIT_SETUP : KB_EXIT_INPUT;
            }
        }
    }
    free(text);
    kb_sb_free(&err);
    free(imports);
    return rc;
}

int kb_cmd_compare(int argc, char **argv)
{
    const char *runs[2] = { NULL, NULL }, *thr = "0.05", *results = NULL;
    int n_runs = 0;
    for (int i = 1; i < argc; i++) {
        int r;
        if (is_help(argv[i])) { fputs(compare_usage, stdout); return KB_EXIT_OK; }
        if ((r = opt_value(argc, argv, &i, "--threshold", &thr)) || (r = opt_value(argc, argv, &i, "--results", &results))) {
            if (r < 0) return usage_error(compare_usage, "%s needs a value", argv[i]);
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1]) return usage_error(compare_usage, "unknown option %s", argv[i]);
        if (n_runs == 2) return usage_error(compare_usage, "two runs only (also got %s)", argv[i]);
        runs[n_runs++] = argv[i];
    }
    if (n_runs != 2) return usage_error(compare_usage, "%s", "compare needs two runs, A (baseline) and B");
    char *end;
    double threshold = strtod(thr, &end);
    if (*end || end == thr || !(threshold >= 0) || threshold > 100)
        return usage_error(compare_usage, "--threshold wants a fraction such as 0.05, not %s", thr);
    kb_report_run a, b;
    kb_sb err;
    kb_sb_init(&err);
    int rc = KB_EXIT_INPUT;
    if (kb_report_run_load(runs[0], results, &a, &err) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
        kb_sb_free(&err);
        return rc;
    }
    if (kb_report_run_load(runs[1], results, &b, &err) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
        kb_report_run_free(&a);
        kb_sb_free(&err);
        return rc;
    }
    kb_cmp_result cmp;
    if (kb_compare_runs(&a, &b, threshold, &cmp) == KB_OK) {
        kb_compare_print(&a, &b, &cmp, threshold, stdout);
        fflush(stdout);
        rc = cmp.n_regressions > 0 ? KB_EXIT_REGRESS : KB_EXIT_OK;
        kb_compare_free(&cmp);
    } else {
        fprintf(stderr, "kbench: out of memory\n");
        rc = KB_EXIT_SETUP;
    }
    kb_report_run_free(&a);
    kb_report_run_free(&b);
    kb_sb_free(&err);
    return rc;
}
