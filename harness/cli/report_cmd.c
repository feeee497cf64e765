/* report_cmd.c - `kbench report`, `kbench query` and `kbench compare`: their options
 * (cli/opts.h) and exit codes around report.h, store.h and compare.h (see report_cmd.h). */
#include "cli/report_cmd.h"

#include "core/output.h"
#include "results/compare.h"
#include "results/compare_out.h"
#include "results/report.h"
#include "results/store.h"
#include "results/store_query.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- report ---- */

typedef struct {
    const char *run;
    const char *format;
    const char *out;
    const char *results;
    const char **filters;      /* --filter: the cases whose id contains any */
    int n_filters;
    const char *section;       /* --section: one part of the report (report_rows.h) */
   int precision;             /* only the precision comparison */
} report_opts;

static void report_defaults(void *o)
{
    ((report_opts *)o)->format = "md";
    ((report_opts *)o)->section = "all";
}

/* What an output file is filled by: the report of a run, or a comparison. */
typedef struct {
    const kb_report_run *run, *b;
    kb_report_format report;
    kb_report_section section;
    const kb_cmp_result *cmp;
    double threshold;
    kb_cmp_format cmp_format;
} out_job;

static kb_status out_write(const out_job *j, FILE *out)
{
    if (j->cmp)
        return kb_compare_write(j->run, j->b, j->cmp, j->threshold, j->cmp_format, out);
    return kb_report_write_section(j->run, j->report, j->section, out);
}

static kb_status out_fill(void *user, FILE *f, kb_sb *err)
{
    (void)err;
    return out_write(user, f);
}

/* To path by the output rule (core/output.h: complete or not at all, devices and FIFOs
 * written through), or to stdout when path is NULL. An exit code. */
static int write_out(const out_job *j, const char *path)
{
    if (path) {
        kb_sb err;
        kb_sb_init(&err);
        kb_status st = kb_out_write_with(path, out_fill, (void *)j, &err);
        if (st != KB_OK)
            fprintf(stderr, "kbench: --out: %s\n", err.s);
        kb_sb_free(&err);
        return kb_out_exit(st);
    }
    if (out_write(j, stdout) != KB_OK || fflush(stdout) != 0) {
        fprintf(stderr, "kbench: cannot write the output: %s\n", strerror(errno));
        return KB_EXIT_SETUP;
    }
    return KB_EXIT_OK;
}

/* --out onto a file the run's loading reads (the run's file, or a records file searched
 * for its id): refused before anything is read. -1 to go on, else 2. */
static int out_is_input(const kb_command *cmd, const char *out, const char *run, const char *results,
                        const char *what)
{
    kb_sb err;
    kb_sb_init(&err);
    int rc = -1;
    if (kb_report_run_not_output(run, results, out, what, &err) != KB_OK)
        rc = kb_opts_fail(cmd, "--out", "%s", err.s);
    kb_sb_free(&err);
    return rc;
}

static int report_main(void *opts)
{
    report_opts *o = opts;
    kb_report_format f;
    if (kb_report_format_parse(o->format, &f) != 0)
        return kb_opts_fail(&kb_command_report, "--format", "expected one of md, csv, html, gbench-json, junit, trace, "
                            "got '%s'", o->format);
    int rc = out_is_input(&kb_command_report, o->out, o->run, o->results, "the run being reported");
    if (rc >= 0)
        return rc;
    kb_report_section sec = KB_SECTION_ALL;
    kb_report_section_parse(o->section, &sec);   /* checked against its choices by cli/opts */
    if (o->precision && sec != KB_SECTION_ALL && sec != KB_SECTION_PRECISION)
        return kb_opts_fail(&kb_command_report, "--precision", "is --section precision; it cannot go with --section %s",
                            o->section);
    if (o->precision)
        sec = KB_SECTION_PRECISION;
    if (!kb_report_has_section(f, sec))
        return kb_opts_fail(&kb_command_report, o->precision ? "--precision" : "--section",
                            "%s has no section '%s' (md and html have every one; csv: all, cases, summary, best, "
                            "precision)", o->format, kb_report_section_names[sec]);
    kb_report_run run;
    kb_sb err;
    kb_sb_init(&err);
    if (kb_report_run_load(o->run, o->results, &run, &err) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
        kb_sb_free(&err);
        return KB_EXIT_INPUT;
    }
    kb_sb_free(&err);
    if (kb_report_run_filter(&run, o->filters, o->n_filters) != KB_OK) {
        fprintf(stderr, "kbench: --filter matches none of the cases of %s\n", o->run);
        kb_report_run_free(&run);
        return KB_EXIT_INPUT;
    }
    out_job job = { .run = &run, .report = f, .section = sec };
    rc = write_out(&job, o->out);
    kb_report_run_free(&run);
    return rc;
}

static const kb_opt report_opt_rows[] = {
    { "--format", "-f", KB_OPT_STR, offsetof(report_opts, format), "FMT",
      "md, csv, html (roofline), gbench-json (Google Benchmark), junit, trace (Chrome/Perfetto; default md)", 0, 0, 0, NULL, 0 },
    { "--out", "-o", KB_OPT_OUT, offsetof(report_opts, out), "FILE",
      "write to FILE (complete or not at all) instead of stdout", 0, 0, 0, NULL, 0 },
    { "--results", NULL, KB_OPT_STR, offsetof(report_opts, results), "DIR",
      "where a run id is looked up (default results)", 0, 0, 0, NULL, 0 },
    { "--filter", NULL, KB_OPT_LIST, offsetof(report_opts, filters), "TEXT",
      "only the cases whose id contains TEXT", 0, 0, 0, NULL, offsetof(report_opts, n_filters) },
    { "--section", NULL, KB_OPT_CHOICE, offsetof(report_opts, section), "NAME",
      "one part: summary, best, precision, tiles, launch, margins, roofline, cases (default all)", 0, 0, 0,
      kb_report_section_names, 0 },
    { "--precision", NULL, KB_OPT_FLAG, offsetof(report_opts, precision), NULL,
      "only the precision table (--section precision): per shape and input distribution, dtype and scaling recipe "
      "-> time, TFLOPS, speed-up vs bf16, accuracy", 0, 0, 0, NULL, 0 },
};

const kb_command kb_command_report = {
    "report", "RUN", 1, 1, offsetof(report_opts, run),
    "a recorded run as markdown, CSV, HTML (roofline, charts), Google Benchmark JSON, JUnit or a trace",
    "  RUN: a results .jsonl file, or a run id found in DIR/*.jsonl\n",
    report_opt_rows, (int)(sizeof report_opt_rows / sizeof report_opt_rows[0]), sizeof(report_opts),
    report_defaults, report_main,
};

/* ---- query ---- */

typedef struct {
    const char *sql;
    const char *db;
    int format;                /* kb_query_format */
    int writable;
    const char **imports;
    int n_imports;
} query_opts;

static void query_defaults(void *o)
{
    ((query_opts *)o)->db = kb_store_default_path();
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

static int query_imports(const query_opts *o, kb_sb *err)
{
    for (int k = 0; k < o->n_imports; k++) {
        size_t n = 0;
        kb_status st = kb_store_import_jsonl(o->db, o->imports[k], &n, err);
        if (st != KB_OK) {
            fprintf(stderr, "kbench: import %s: %s\n", o->imports[k], err->s);
            return st == KB_ERR_IO && access(o->imports[k], R_OK) == 0 ? KB_EXIT_SETUP : KB_EXIT_INPUT;
        }
        fprintf(stderr, "kbench: imported %zu records of %s into %s\n", n, o->imports[k], o->db);
    }
    return KB_EXIT_OK;
}

static int query_main(void *opts)
{
    query_opts *o = opts;
    if (!o->sql && o->n_imports == 0)
        return kb_opts_fail(&kb_command_query, NULL, "no SQL to run (give it as the argument, or - for stdin)");
    kb_sb err;
    kb_sb_init(&err);
    int rc = query_imports(o, &err);
    char *text = NULL;
    const char *sql = o->sql;
    if (rc == KB_EXIT_OK && sql) {
        if (strcmp(sql, "-") == 0 && !(sql = text = read_stdin())) {
            fprintf(stderr, "kbench: cannot read SQL from stdin\n");
            rc = KB_EXIT_INPUT;
        } else if (!o->writable && access(o->db, F_OK) != 0) {
            fprintf(stderr, "kbench: no results store at %s (kbench run fills it; or kbench query --import FILE.jsonl)\n",
                    o->db);
            rc = KB_EXIT_SETUP;
        } else {
            kb_status st = kb_store_query(o->db, sql, (kb_query_format)o->format, o->writable, stdout, &err);
            if (st != KB_OK)
                fprintf(stderr, "kbench: %s\n", err.s);
            rc = st == KB_OK ? KB_EXIT_OK : st == KB_ERR_IO ? KB_EXIT_SETUP : KB_EXIT_INPUT;
        }
    }
    free(text);
    kb_sb_free(&err);
    return rc;
}

static const kb_opt query_opt_rows[] = {
    { "--db", NULL, KB_OPT_IN, offsetof(query_opts, db), "PATH",
      "the store (default $KBENCH_DB, else " KB_STORE_DEFAULT_PATH ")", 0, 0, 0, NULL, 0 },
    { "--csv", NULL, KB_OPT_SET, offsetof(query_opts, format), NULL, "CSV (RFC 4180) instead of a table",
      KB_QUERY_CSV, 0, 0, NULL, 0 },
    { "--json", NULL, KB_OPT_SET, offsetof(query_opts, format), NULL, "a JSON array of objects per statement",
      KB_QUERY_JSON, 0, 0, NULL, 0 },
    { "--write", NULL, KB_OPT_FLAG, offsetof(query_opts, writable), NULL,
      "allow statements that change the store (read-only otherwise)", 0, 0, 0, NULL, 0 },
    { "--import", NULL, KB_OPT_LIST, offsetof(query_opts, imports), "FILE.jsonl",
      "import a JSON Lines file into the store first", 0, 0, 0, NULL, offsetof(query_opts, n_imports) },
};

const kb_command kb_command_query = {
    "query", "[SQL | -]", 0, 1, offsetof(query_opts, sql),
    "SQL over the results store (results/kbench.db), read-only unless --write",
    "  tables runs, devices, cases, measurements; view results (cases with their device)\n"
    "  example: kbench query \"SELECT case_id, median_us, tflops FROM results WHERE status = 'ok'\"\n",
    query_opt_rows, (int)(sizeof query_opt_rows / sizeof query_opt_rows[0]), sizeof(query_opts), query_defaults,
    query_main,
};

/* ---- compare ---- */

typedef struct {
    const char *runs[2];
    double threshold;
    const char *results;
    const char *format;
    const char *out;
    int gate_cpu;               /* CPU-clock regressions gate too (exit 4) */
} compare_opts;

static void compare_defaults(void *o)
{
    ((compare_opts *)o)->threshold = 0.05;
    ((compare_opts *)o)->format = "text";
}

static int compare_loaded(kb_report_run *a, kb_report_run *b, const compare_opts *o)
{
    double threshold = o->threshold;
    kb_cmp_format f = KB_CMP_OUT_TEXT;
    kb_cmp_format_parse(o->format, &f);   /* checked against its choices by cli/opts */
    kb_cmp_result cmp;
    if (kb_compare_runs(a, b, threshold, &cmp) != KB_OK) {
        fprintf(stderr, "kbench: out of memory\n");
        return KB_EXIT_SETUP;
    }
    cmp.gate_cpu = o->gate_cpu;
    int rc;
    if (cmp.n_compared + cmp.n_not_compared == 0) {
        fprintf(stderr, "kbench: %s and %s have no case in common: unrelated runs, nothing to compare\n",
                a->source, b->source);
        rc = KB_EXIT_INPUT;
    } else {
        out_job job = { .run = a, .b = b, .cmp = &cmp, .threshold = threshold, .cmp_format = f };
        rc = write_out(&job, o->out);
        if (rc == KB_EXIT_OK && kb_compare_gated(&cmp) > 0)
            rc = KB_EXIT_REGRESS;
    }
    kb_compare_free(&cmp);
    return rc;
}

static int compare_main(void *opts)
{
    compare_opts *o = opts;
    for (int k = 0; k < 2; k++) {
        int rc = out_is_input(&kb_command_compare, o->out, o->runs[k], o->results, k ? "run B" : "run A");
        if (rc >= 0)
            return rc;
    }
    kb_report_run a, b;
    kb_sb err;
    kb_sb_init(&err);
    int rc = KB_EXIT_INPUT;
    if (kb_report_run_load(o->runs[0], o->results, &a, &err) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
    } else {
        if (kb_report_run_load(o->runs[1], o->results, &b, &err) != KB_OK) {
            fprintf(stderr, "kbench: %s\n", err.s);
        } else {
            rc = compare_loaded(&a, &b, o);
            kb_report_run_free(&b);
        }
        kb_report_run_free(&a);
    }
    kb_sb_free(&err);
    return rc;
}

static const kb_opt compare_opt_rows[] = {
    { "--threshold", NULL, KB_OPT_DOUBLE, offsetof(compare_opts, threshold), "F",
      "a slowdown beyond this fraction, significant at p < 0.05, is a regression (default 0.05)", 0, 100, 0, NULL,
      0 },
    { "--results", NULL, KB_OPT_STR, offsetof(compare_opts, results), "DIR",
      "where run ids are looked up (default results)", 0, 0, 0, NULL, 0 },
    { "--format", "-f", KB_OPT_CHOICE, offsetof(compare_opts, format), "FMT",
      "text (default), md, json (fields in docs/compare.md) or html (a self-contained page)", 0, 0, 0,
      kb_cmp_format_names, 0 },
    { "--out", "-o", KB_OPT_OUT, offsetof(compare_opts, out), "FILE",
      "write to FILE (complete or not at all) instead of stdout; the exit code is unchanged", 0, 0, 0, NULL, 0 },
    { "--gate-cpu", NULL, KB_OPT_FLAG, offsetof(compare_opts, gate_cpu), NULL,
      "regressions of CPU-clock (emulator) cases gate too (exit 4); by default they are listed, not gated", 0, 0, 0,
      NULL, 0 },
};

const kb_command kb_command_compare = {
    "compare", "A B", 2, 2, offsetof(compare_opts, runs),
    "two runs side by side: ratio of medians, Mann-Whitney U, regressions (exit 4)",
    "  A is the baseline; A and B are .jsonl files or run ids. Exit 4 when a case of B is slower than A\n"
    "  by more than the threshold with p < 0.05 (two-sided Mann-Whitney U); exit 2 when they share no case.\n"
    "  Cases timed on a CPU clock (the emulator) do not gate unless --gate-cpu: their regressions are\n"
    "  listed and a note says why (CPU timings of unchanged code differ by several times between runs).\n",
    compare_opt_rows, (int)(sizeof compare_opt_rows / sizeof compare_opt_rows[0]), sizeof(compare_opts),
    compare_defaults, compare_main,
};

int kb_cmd_report(int argc, char **argv) { return kb_command_main(&kb_command_report, argc - 1, argv + 1); }
int kb_cmd_query(int argc, char **argv) { return kb_command_main(&kb_command_query, argc - 1, argv + 1); }
int kb_cmd_compare(int argc, char **argv) { return kb_command_main(&kb_command_compare, argc - 1, argv + 1); }
