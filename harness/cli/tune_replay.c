/* tune_replay.c - `kbench tune --replay FILE...` (tune_replay.h): the options turned into
 * a comparison (tune/report.h), its output written where asked (tune/report_out.h). */
#include "cli/tune_replay.h"

#include "tune/report.h"
#include "tune/report_out.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --budgets "1,3,10" into o. 0, or an exit code after the error. */
static int parse_budgets(const kb_command *cmd, const char *text, kb_tune_report_opts *o)
{
    const char *p = text;
    while (*p) {
        char *end;
        double v = strtod(p, &end);
        if (end == p || !(v > 0 && v <= 100) || (*end && *end != ','))
            return kb_opts_fail(cmd, "--budgets", "expected percentages in (0, 100] separated by commas, got '%s'",
                                text);
        if (o->n_budgets == KB_REPORT_MAX_BUDGETS)
            return kb_opts_fail(cmd, "--budgets", "at most %d budgets", KB_REPORT_MAX_BUDGETS);
        o->budgets[o->n_budgets++] = v;
        p = *end ? end + 1 : end;
    }
    return o->n_budgets ? 0 : kb_opts_fail(cmd, "--budgets", "expected at least one percentage");
}

/* The replay files: --replay's, then the positionals. */
static int gather(const kb_command *cmd, const kb_tune_opts *t, const char **paths)
{
    int n = 0;
    for (int i = 0; i < t->n_replay; i++)
        paths[n++] = t->replay_paths[i];
    for (int i = 0; i < KB_TUNE_MAX_POS && t->pos[i] && n < KB_TUNE_MAX_POS + 64; i++)
        paths[n++] = t->pos[i];
    return n;
}

/* The comparison's options from the command line. 0, or an exit code after the error. */
static int report_opts(const kb_command *cmd, const kb_tune_opts *t, kb_tune_report_opts *o)
{
    memset(o, 0, sizeof *o);
    kb_tune_strategy s;
    o->strategy = kb_tune_strategy_parse(t->strategy, &s) == 0 ? (int)s : -1;
    o->filter = t->run.n_filters ? t->run.filters[0] : NULL;
    o->repeats = t->repeats;
    o->seed = t->seed;
    o->prior = strcmp(t->prior, "estimate") == 0;
    o->time_unit = strcmp(t->budget_unit, "time") == 0;
    o->budget_evals = t->budget;
    o->budget_s = t->budget_time_s;
    if (t->budget > 0 && t->budget_time_s > 0)
        return kb_opts_fail(cmd, "--budget-time", "one budget: --budget N evaluations or --budget-time S seconds");
    if (t->budgets && (t->budget > 0 || t->budget_time_s > 0))
        return kb_opts_fail(cmd, "--budgets", "replaces --budget and --budget-time: give one of them");
    if (t->time_s > 0)
        return kb_opts_fail(cmd, "--time", "is the real clock of a live tune; --replay spends --budget-time S "
                            "simulated seconds");
    if (t->budgets && parse_budgets(cmd, t->budgets, o) != 0)
        return KB_EXIT_INPUT;
    return 0;
}

/* 1 when out is the same file as one of the inputs (compared by device and inode). */
static int same_as_input(const char *out, const char *const *paths, int n)
{
    struct stat so, si;
    if (stat(out, &so) != 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (stat(paths[i], &si) == 0 && si.st_dev == so.st_dev && si.st_ino == so.st_ino)
            return 1;
    return 0;
}

static int render(json_t *doc, const char *format, int one, FILE *out)
{
    if (strcmp(format, "json") == 0)
        return json_dumpf(doc, out, JSON_PRESERVE_ORDER | JSON_INDENT(2)) == 0 && fputc('\n', out) != EOF ? 0 : -1;
    if (one)
        return kb_tune_report_one_text(doc, out);
    if (strcmp(format, "svg") == 0)
        return kb_tune_report_svg(doc, out);
    if (strcmp(format, "html") == 0)
        return kb_tune_report_html(doc, out);
    return kb_tune_report_text(doc, out);
}

/* doc to stdout, or to path: a regular file (or a new one) through a temporary file
 * renamed over it, anything else (a device, a FIFO) written through. An exit code. */
static int write_out(json_t *doc, const char *format, int one, const char *path)
{
    if (!path)
        return render(doc, format, one, stdout) == 0 && fflush(stdout) == 0 ? KB_EXIT_OK : KB_EXIT_SETUP;
    struct stat st;
    int regular = stat(path, &st) != 0 || S_ISREG(st.st_mode);
    kb_sb tmp;
    kb_sb_init(&tmp);
    kb_sb_printf(&tmp, regular ? "%s.tmp.%d" : "%s", path, (int)getpid());
    FILE *f = fopen(tmp.s, "w");
    int ok = f && render(doc, format, one, f) == 0;
    ok = f && fclose(f) == 0 && ok;
    if (ok && regular && rename(tmp.s, path) != 0)
        ok = 0;
    if (!ok) {
        fprintf(stderr, "kbench: tune: --out %s: cannot be written\n", path);
        if (regular)
            unlink(tmp.s);
    }
    kb_sb_free(&tmp);
    return ok ? KB_EXIT_OK : KB_EXIT_SETUP;
}

int kb_tune_replay_main(const kb_command *cmd, const kb_tune_opts *t)
{
    const char *paths[KB_TUNE_MAX_POS + 64];
    kb_tune_report_opts o;
    int rc = report_opts(cmd, t, &o);
    if (rc)
        return rc;
    o.n_paths = gather(cmd, t, paths);
    o.paths = paths;
    if (t->run.out_path && same_as_input(t->run.out_path, paths, o.n_paths))
        return kb_opts_fail(cmd, "--out", "%s is one of the replayed files: it is never overwritten", t->run.out_path);
    int one = o.strategy >= 0 && o.n_paths == 1 && o.n_budgets == 0;
    if (one && (strcmp(t->format, "svg") == 0 || strcmp(t->format, "html") == 0))
        return kb_opts_fail(cmd, "--format", "%s charts a comparison: --strategy all or --budgets", t->format);
    kb_sb err;
    kb_sb_init(&err);
    kb_status st;
    json_t *doc = one ? kb_tune_report_one(&o, &err, &st) : kb_tune_report_run(&o, &err, &st);
    if (!doc) {
        rc = st == KB_ERR_INTERNAL ? KB_EXIT_SETUP : kb_opts_fail(cmd, "--replay", "%s", err.s);
        if (st == KB_ERR_INTERNAL)
            fprintf(stderr, "kbench: tune: --replay: out of memory\n");
    } else {
        rc = write_out(doc, t->format, one, t->run.out_path);
    }
    kb_sb_free(&err);
    json_decref(doc);
    return rc;
}
