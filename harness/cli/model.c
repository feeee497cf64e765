/* model.c - `kbench model` (see model.h): load the run and the description, roll up, write. */
#include "cli/model.h"
#include "core/paths.h"
#include "core/suggest.h"

#include "core/output.h"
#include "estimate/gpu.h"
#include "model/model_estimate.h"
#include "model/model_html.h"
#include "model/model_points.h"
#include "model/model_report.h"
#include "results/report.h"
#include "results/store.h"
#include "results/store_load.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *run;
    const char *model;
    const char *format;
    const char *out;
    const char *dtype;
    const char *results;
    const char *db;
    int with_report;
    const char **sets;
    int n_sets;
    int estimate;               /* --estimate: ops from kbench estimate's static model on --gpu */
    const char *gpu;
    const char *suite;          /* --suite: the suite whose cases are estimated */
    const char *peaks;
    int sm;                     /* --arch with --estimate: the code of core/arch.h; 0: the GPU's */
} model_opts;

static const char *const formats[] = { "md", "json", "html", "trace", NULL };

static void model_defaults(void *o)
{
    const char *db = getenv("KBENCH_DB");
    ((model_opts *)o)->format = "md";
    ((model_opts *)o)->db = db && *db ? db : KB_STORE_DEFAULT_PATH;
}

/* RUN: a records file, a run id in DIR/ *.jsonl, else a run id in the store. */
static kb_status load_run(const model_opts *o, kb_report_run *run, kb_sb *err)
{
    if (kb_report_run_load(o->run, o->results, run, err) == KB_OK)
        return KB_OK;
    kb_sb store_err;
    kb_sb_init(&store_err);
    kb_status st = kb_store_load_run(o->db, o->run, run, &store_err);
    if (st != KB_OK)
        kb_sb_printf(err, "; %s", store_err.s);
    kb_sb_free(&store_err);
    return st;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* 1 when --model names a description under data/models/ (not a file path). */
static int is_model_name(const char *m)
{
    size_t n = strlen(m);
    return !strchr(m, '/') && !(n > 5 && !strcmp(m + n - 5, ".yaml"));
}

/* "--model llama7b: no model of that name - did you mean 'llama-7b-like'? (the models:
 * gpt-style, llama-70b-like, llama-7b-like; or a YAML file)" */
static void unknown_model(const char *name)
{
    char dir[1100];
    snprintf(dir, sizeof dir, "%s/data/models", kb_data_root());
    char *names[64];
    int n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)) && n < 64) {
        size_t len = strlen(e->d_name);
        if (len > 5 && !strcmp(e->d_name + len - 5, ".yaml") && (names[n] = strndup(e->d_name, len - 5)))
            n++;
    }
    if (d)
        closedir(d);
    qsort(names, (size_t)n, sizeof names[0], cmp_str);
    const char *close = kb_suggest(name, (const char *const *)names, n);
    fprintf(stderr, "kbench model: --model %s: no model of that name", name);
    if (close)
        fprintf(stderr, " - did you mean '%s'?", close);
    fprintf(stderr, " (the models:");
    for (int i = 0; i < n; i++)
        fprintf(stderr, "%s %s", i ? "," : "", names[i]);
    fprintf(stderr, "%s; or a YAML file of your own: docs/model-format.md)\n", n ? "" : " none found");
    for (int i = 0; i < n; i++)
        free(names[i]);
}

/* --with-report: the run's HTML report with the roll-up as its last section. */
static kb_status write_with_report(const kb_model_rollup *r, FILE *out)
{
    char *page = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&page, &len);
    if (!mem) return KB_ERR_OOM;
    kb_status st = kb_report_write(r->run, KB_REPORT_HTML, mem);
    if (fclose(mem) != 0 && st == KB_OK) st = KB_ERR_OOM;
    char *end = st == KB_OK ? strstr(page, "</body>") : NULL;
    if (end) {
        fwrite(page, 1, (size_t)(end - page), out);
        kb_model_html_section(r, out);
        fputs(end, out);
    }
    free(page);
    if (st == KB_OK && !end) st = KB_ERR_INTERNAL;
    return st == KB_OK && fflush(out) == 0 && !ferror(out) ? KB_OK : st == KB_OK ? KB_ERR_IO : st;
}

static kb_status write_any(const model_opts *o, const kb_model_rollup *r, kb_model_format f, FILE *out)
{
    return o->with_report ? write_with_report(r, out) : kb_model_write(r, f, out);
}

typedef struct {
    const model_opts *o;
    const kb_model_rollup *r;
    kb_model_format f;
} model_job;

static kb_status fill_file(void *user, FILE *f, kb_sb *err)
{
    const model_job *j = user;
    (void)err;
    return write_any(j->o, j->r, j->f, f);
}

/* Write to path by the output rule (core/output.h): complete or not at all. */
static int write_file(const model_opts *o, const kb_model_rollup *r, kb_model_format f, const char *path)
{
    model_job j = { o, r, f };
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_out_write_with(path, fill_file, &j, &err);
    if (st != KB_OK)
        fprintf(stderr, "kbench model: --out: %s\n", err.s);
    kb_sb_free(&err);
    return kb_out_exit(st);
}

/* Write roll-up r in o's format to --out or stdout; a process exit code. */
static int write_rollup(const model_opts *o, const kb_model_rollup *r)
{
    kb_model_format f = KB_MODEL_MD;
    for (int i = 0; formats[i]; i++)
        if (!strcmp(o->format, formats[i])) f = (kb_model_format)i;
    if (o->out)
        return write_file(o, r, f, o->out);
    if (write_any(o, r, f, stdout) != KB_OK) {
        fprintf(stderr, "kbench: cannot write the roll-up: %s\n", strerror(errno));
        return KB_EXIT_SETUP;
    }
    return KB_EXIT_OK;
}

static int roll_and_write(const model_opts *o, const kb_model *m, kb_model_points *pts, const kb_report_run *run,
                          int dtype)
{
    kb_model_rollup *r = malloc(sizeof *r);
    if (!r) return KB_EXIT_SETUP;
    kb_model_rollup_run(m, run, dtype, r);
    int rc = kb_model_points_roll(pts, run, dtype, r) == KB_OK ? write_rollup(o, r) : KB_EXIT_SETUP;
    free(r);
    return rc;
}

/* --estimate: RUN is a suite (.yaml), or a run whose GPU-timed ops are kept (model_estimate.h). */
static int estimate_and_write(const model_opts *o, const kb_model *m, kb_model_points *pts, int dtype)
{
    size_t len = strlen(o->run);
    int have_run = !(len > 5 && (!strcmp(o->run + len - 5, ".yaml") || !strcmp(o->run + len - 4, ".yml")));
    kb_sb err, suite;
    kb_report_run run;
    kb_sb_init(&err);
    kb_sb_init(&suite);
    kb_status st = have_run ? load_run(o, &run, &err) : KB_OK;
    if (st == KB_OK && have_run) {
        st = kb_model_run_suite(&run, o->suite, &suite, &err);
        if (st != KB_OK) kb_report_run_free(&run);
    }
    if (!have_run) kb_sb_printf(&suite, "%s", o->suite ? o->suite : o->run);
    kb_model_est *e = st == KB_OK ? calloc(1, sizeof *e) : NULL;
    kb_model_est_opts eo = { suite.s, o->gpu, o->sm, NULL, 0, o->peaks, o->db };
    if (e) st = kb_model_estimate(m, have_run ? &run : NULL, &eo, dtype, e, &err);
    if (e && st == KB_OK) st = kb_model_points_estimate(pts, have_run ? &run : NULL, &eo, dtype, &e->rollup, &err);
    int rc = st == KB_OK && e ? write_rollup(o, &e->rollup) : st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
    if (st != KB_OK || !e) fprintf(stderr, "kbench model: %s\n", err.s[0] ? err.s : "out of memory");
    if (e) kb_model_est_free(e);
    if (have_run && (st == KB_OK || e)) kb_report_run_free(&run);
    free(e);
    kb_sb_free(&err);
    kb_sb_free(&suite);
    return rc;
}

/* The roll-up of the loaded model m and of its decode_points, from the run or the estimates. */
static int with_model(const model_opts *o, const kb_model *m, int dtype)
{
    kb_sb err;
    kb_model_points pts;
    kb_report_run run;
    kb_sb_init(&err);
    kb_status st = kb_model_points_load(m, o->sets, o->n_sets, &pts, &err);
    int rc;
    if (st != KB_OK) {
        rc = st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
    } else if (o->estimate) {
        rc = estimate_and_write(o, m, &pts, dtype);
    } else if (load_run(o, &run, &err) != KB_OK) {
        rc = KB_EXIT_INPUT;
    } else {
        rc = roll_and_write(o, m, &pts, &run, dtype);
        kb_report_run_free(&run);
    }
    if (err.s[0]) fprintf(stderr, "kbench model: %s\n", err.s);
    kb_model_points_free(&pts);
    kb_sb_free(&err);
    return rc;
}

static int model_main(void *opts)
{
    model_opts *o = opts;
    kb_dtype dt = 0;
    if (!o->model)
        return kb_opts_fail(&kb_command_model, "--model", "required: a name under data/models/ or a YAML file");
    if (o->with_report && strcmp(o->format, "html") != 0)
        return kb_opts_fail(&kb_command_model, "--with-report", "needs --format html (got %s)", o->format);
    if (o->dtype && kb_dtype_parse(o->dtype, &dt) != 0)
        return kb_opts_fail(&kb_command_model, "--dtype", "unknown dtype '%s'", o->dtype);
    if (o->estimate && !o->gpu)
        return kb_opts_fail(&kb_command_model, "--gpu", "required with --estimate: the GPU modelled (h100-sxm, ...)");
    if (!o->estimate && (o->gpu || o->suite || o->sm))
        return kb_opts_fail(&kb_command_model, o->gpu ? "--gpu" : o->suite ? "--suite" : "--arch",
                            "only with --estimate");
    if (o->estimate && o->with_report)
        return kb_opts_fail(&kb_command_model, "--with-report",
                            "not with --estimate (the run's report has no estimates)");
    kb_sb path, err;
    kb_sb_init(&path);
    kb_sb_init(&err);
    kb_model m;
    int rc = KB_EXIT_INPUT;
    kb_model_path(o->model, &path);
    if (is_model_name(o->model) && access(path.s, F_OK) != 0) {
        unknown_model(o->model);
        goto done;
    }
    if (o->out && (kb_out_not_input(o->out, path.s, "the model description", &err) != KB_OK ||
                   kb_report_run_not_output(o->run, o->results, o->out, "the run", &err) != KB_OK)) {
        rc = kb_opts_fail(&kb_command_model, "--out", "%s", err.s);
        goto done;
    }
    if (kb_model_load(path.s, o->sets, o->n_sets, &m, &err) != KB_OK) {
        fprintf(stderr, "kbench model: %s\n", err.s);
        goto done;
    }
    rc = with_model(o, &m, o->dtype ? (int)dt : -1);
    kb_model_free(&m);
done:
    kb_sb_free(&path);
    kb_sb_free(&err);
    return rc;
}

static const kb_opt model_opt_rows[] = {
    { "--model", "-m", KB_OPT_IN, offsetof(model_opts, model), "NAME|FILE",
      "the model description: data/models/NAME.yaml, or a YAML file (required)", 0, 0, 0, NULL, 0 },
    { "--format", "-f", KB_OPT_CHOICE, offsetof(model_opts, format), "md|json|html|trace",
      "output format: trace = the per-step timeline for chrome://tracing / Perfetto (default md)",
      0, 0, 0, formats, 0 },
    { "--out", "-o", KB_OPT_OUT, offsetof(model_opts, out), "FILE",
      "write to FILE (complete or not at all) instead of stdout", 0, 0, 0, NULL, 0 },
    { "--with-report", NULL, KB_OPT_FLAG, offsetof(model_opts, with_report), NULL,
      "html: the run's whole HTML report (charts, tables) with the roll-up as its last section", 0, 0, 0, NULL, 0 },
    { "--dtype", NULL, KB_OPT_STR, offsetof(model_opts, dtype), "DT",
      "roll up this precision instead of the model's", 0, 0, 0, NULL, 0 },
    { "--set", NULL, KB_OPT_LIST, offsetof(model_opts, sets), "PARAM=N",
      "override a param of the model (e.g. --set seq=4096)", 0, 0, 0, NULL, offsetof(model_opts, n_sets) },
    { "--results", NULL, KB_OPT_STR, offsetof(model_opts, results), "DIR",
      "where a run id is looked up (default results)", 0, 0, 0, NULL, 0 },
    { "--db", NULL, KB_OPT_IN, offsetof(model_opts, db), "PATH",
      "else the results store a run id is read from (default $KBENCH_DB, else results/kbench.db); with --estimate "
      "also its measured ceilings of the --gpu model", 0, 0, 0, NULL, 0 },
    { "--estimate", NULL, KB_OPT_FLAG, offsetof(model_opts, estimate), NULL,
      "ops from kbench estimate's static model on --gpu (every figure labelled ESTIMATE); RUN may be a suite",
      0, 0, 0, NULL, 0 },
    { "--gpu", NULL, KB_OPT_CHOICE, offsetof(model_opts, gpu), "NAME",
      "with --estimate: the GPU modelled (h100-sxm, a100-sxm, ...)", 0, 0, 0, kb_est_gpu_names, 0 },
    { "--suite", NULL, KB_OPT_IN, offsetof(model_opts, suite), "FILE",
      "with --estimate: the suite whose cases are estimated (default: RUN when a suite, else the run's suite)",
      0, 0, 0, NULL, 0 },
    { "--arch", NULL, KB_OPT_ARCH, offsetof(model_opts, sm), "ARCH",
      "with --estimate: compile the cases for ARCH (default: the GPU's; sm_90a for Hopper's wgmma and fa3 kernels)",
      0, 0, 0, NULL, 0 },
    { "--peaks", NULL, KB_OPT_IN, offsetof(model_opts, peaks), "FILE",
      "with --estimate: datasheet peaks (default $KBENCH_PEAKS, else data/peaks.json)", 0, 0, 0, NULL, 0 },
};

const kb_command kb_command_model = {
    "model", "RUN|SUITE", 1, 1, offsetof(model_opts, run),
    "LLM roll-up of a run, or an ESTIMATE on a GPU you have not got: per-op time, tokens/s, MFU, what-if",
    "  RUN: a results .jsonl file, or a run id found in DIR/*.jsonl or in the store. Models: data/models/*.yaml\n"
    "  (docs/model-format.md). Ops the run has no verified case for are listed as missing.\n"
    "  --estimate --gpu NAME: the ops from the static model of SUITE's (or the run's suite's) cases at the model's\n"
    "  shapes on NAME, labelled ESTIMATE; a run's GPU-timed ops of the same GPU model are kept, marked (gpu).\n",
    model_opt_rows, (int)(sizeof model_opt_rows / sizeof model_opt_rows[0]), sizeof(model_opts),
    model_defaults, model_main,
};
