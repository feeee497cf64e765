/* export.c - `kbench export` (export.h). */
#include "cli/export.h"

#include "core/output.h"
#include "tune/export.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    const kb_export_opts *o;
    kb_tune_choice_row *rows;
    int n, cap;
    int cpu_refused;
    int cpu_not_gpu;               /* --gpu-sm: emulator choices left out (no GPU's) */
    kb_tune_entry *entries;
    int n_entries, cap_entries;
} export_ctx;

static int selected(const kb_export_opts *o, const char *problem)
{
    if (o->n_problems == 0)
        return 1;
    for (int i = 0; i < o->n_problems; i++)
        if (strstr(problem, o->problems[i]))
            return 1;
    return 0;
}

static int add_choice(void *user, const kb_tune_choice_row *c)
{
    export_ctx *x = user;
    if (!selected(x->o, c->problem))
        return 0;
    if (c->key.emulator && !x->o->allow_cpu) {
        x->cpu_refused++;
        return 0;
    }
    if (x->n == x->cap) {
        int cap = x->cap ? 2 * x->cap : 16;
        kb_tune_choice_row *r = realloc(x->rows, (size_t)cap * sizeof *r);
        if (!r)
            return 1;
        x->rows = r;
        x->cap = cap;
    }
    x->rows[x->n++] = *c;
    return 0;
}

static int add_entry(void *user, const kb_tune_entry *e)
{
    export_ctx *x = user;
    if (x->n_entries == x->cap_entries) {
        int cap = x->cap_entries ? 2 * x->cap_entries : 64;
        kb_tune_entry *r = realloc(x->entries, (size_t)cap * sizeof *r);
        if (!r)
            return 1;
        x->entries = r;
        x->cap_entries = cap;
    }
    x->entries[x->n_entries++] = *e;
    return 0;
}

/* --gpu: keep one choice per problem - the GPU's own (same compute capability and SM
 * count), else the same compute capability's nearest SM count, said so in its lookup
 * field; a problem tuned only on other architectures is left out. Returns the count kept. */
static int for_gpu(export_ctx *x)
{
    int sm = kb_arch_cc(x->o->gpu_sm), smc = x->o->gpu_sm_count, kept = 0;   /* a device's cc: sm_90a is 9.0 */
    int *best_of = calloc((size_t)(x->n ? x->n : 1), sizeof *best_of);
    if (!best_of)
        return -1;
    for (int i = 0; i < x->n; i++) {   /* the row serving row i's problem: decided before anything moves */
        int best = -1, best_d = 0;
        for (int j = 0; j < x->n; j++) {
            const kb_tune_choice_row *o = &x->rows[j];
            int d = o->key.sm_count > smc ? o->key.sm_count - smc : smc - o->key.sm_count;
            if (o->key.sm == sm && strcmp(o->problem, x->rows[i].problem) == 0 && (best < 0 || d < best_d)) {
                best = j;
                best_d = d;
            }
        }
        best_of[i] = best;
    }
    for (int i = 0; i < x->n; i++) {
        x->cpu_not_gpu += x->rows[i].key.emulator;   /* sm 0: never a GPU's choice */
        if (best_of[i] != i)
            continue;   /* another row serves this problem better, or none of this sm */
        kb_tune_choice_row *c = &x->rows[i];
        if (c->key.sm_count != smc)
            snprintf(c->lookup, sizeof c->lookup, "nearest-GPU fallback: tuned on %.80s (sm_%d, %d SMs) for sm_%d, "
                     "%d SMs", c->key.device, c->key.sm, c->key.sm_count, sm, smc);
        x->rows[kept++] = *c;
    }
    free(best_of);
    return x->n = kept;
}

/* Write the chosen format to out. */
static kb_status write_out(export_ctx *x, kb_tunedb *db, FILE *out, kb_sb *err)
{
    const char *f = x->o->format;
    if (strcmp(f, "json") == 0)
        return kb_tune_export_json(x->rows, x->n, out, err);
    if (strcmp(f, "header") == 0)
        return kb_tune_export_header(x->rows, x->n, out, err);
    if (kb_tunedb_each_entry(db, &x->rows[0], add_entry, x) < 0) {
        kb_sb_printf(err, "cannot read the entries of %s", x->rows[0].problem);
        return KB_ERR_IO;
    }
    return kb_tune_export_kerneltuner(&x->rows[0], x->entries, x->n_entries, out, err);
}

typedef struct {
    export_ctx *x;
    kb_tunedb *db;
} export_job;

static kb_status fill_file(void *user, FILE *f, kb_sb *err)
{
    export_job *j = user;
    return write_out(j->x, j->db, f, err);
}

/* Write the export to path by the output rule (core/output.h), or to stdout (NULL). An
 * exit code. */
static int write_file(export_ctx *x, kb_tunedb *db, const char *path)
{
    kb_sb err;
    kb_sb_init(&err);
    export_job j = { x, db };
    kb_status s;
    if (path) {
        s = kb_out_write_with(path, fill_file, &j, &err);
    } else {
        s = write_out(x, db, stdout, &err);
        if (s == KB_OK && fflush(stdout) != 0)
            s = KB_ERR_IO;
    }
    if (s != KB_OK)
        fprintf(stderr, "kbench export: %s%s\n", path ? "--out: " : "", err.len ? err.s : "write error");
    int rc = s == KB_OK ? KB_EXIT_OK : s == KB_ERR_INPUT && !path ? KB_EXIT_INPUT : kb_out_exit(s);
    if (s == KB_OK && x->cpu_refused)
        fprintf(stderr, "kbench export: %d emulator (CPU) choices left out (--allow-cpu exports them)\n",
                x->cpu_refused);
    kb_sb_free(&err);
    return rc;
}

/* Options that need a partner, and an output onto the database read: refused naming
 * both, before the database is opened. -1 to go on, else 2. */
static int check_options(const kb_export_opts *o, const char *db_path)
{
    if (o->gpu_sm_count && !o->gpu_sm)
        return kb_opts_fail(&kb_command_export, "--gpu-sm-count", "needs --gpu-sm (the GPU's architecture, sm_XX)");
    if (o->gpu_sm && !o->gpu_sm_count)
        return kb_opts_fail(&kb_command_export, "--gpu-sm", "needs --gpu-sm-count (the GPU's SM count)");
    kb_sb err;
    kb_sb_init(&err);
    int rc = -1;
    if (kb_out_not_input(o->out_path, db_path, "the tuning database read", &err) != KB_OK)
        rc = kb_opts_fail(&kb_command_export, "--out", "%s", err.s);
    kb_sb_free(&err);
    return rc;
}

/* Checks before anything is written: something to export, one problem for kerneltuner. */
static int check_rows(const kb_command *cmd, const export_ctx *x, const char *db)
{
    if (x->n == 0 && x->cpu_refused)
        return kb_opts_fail(cmd, "--allow-cpu", "the %d choice%s in %s were measured on the CPU emulator: CPU timings, "
                            "not GPU choices; --allow-cpu exports them marked so", x->cpu_refused,
                            x->cpu_refused == 1 ? "" : "s", db);
    char cpu[96] = "";
    if (x->cpu_not_gpu)
        snprintf(cpu, sizeof cpu, " (its %d emulator choice%s no GPU's: CPU timings, sm 0)", x->cpu_not_gpu,
                 x->cpu_not_gpu == 1 ? " is" : "s are");
    if (x->n == 0 && x->o->gpu_sm)
        return kb_opts_fail(cmd, "--gpu-sm", "%s holds no current choice for %s%s%s", db, kb_arch_name(x->o->gpu_sm),
                            x->o->n_problems ? " matching --problem" : "", cpu);
    if (x->n == 0)
        return kb_opts_fail(cmd, "--db", "%s holds no current choice%s (kbench tune fills it)", db,
                            x->o->n_problems ? " matching --problem" : "");
    if (strcmp(x->o->format, "kerneltuner") == 0 && x->n != 1)
        return kb_opts_fail(cmd, "--problem", "a Kernel Tuner cache holds one problem; %d match (name one with "
                            "--problem, e.g. '%s')", x->n, x->rows[0].problem);
    return -1;
}

static int export_main(void *p)
{
    const kb_export_opts *o = p;
    const char *db_path = o->db_path ? o->db_path : KB_TUNEDB_DEFAULT_PATH;
    int early = check_options(o, db_path);
    if (early >= 0)
        return early;
    struct stat st;
    if (stat(db_path, &st) != 0 || !S_ISREG(st.st_mode))
        return kb_opts_fail(&kb_command_export, "--db", "%s: no tuning database there", db_path);
    export_ctx x = { o, NULL, 0, 0, 0, 0, NULL, 0, 0 };
    kb_tunedb *db;
    kb_sb err;
    kb_sb_init(&err);
    int rc = KB_EXIT_OK;
    kb_status opened = kb_tunedb_open_readonly(db_path, &db, &err);   /* an input: never written */
    if (opened != KB_OK) {
        fprintf(stderr, "kbench export: --db: %s\n", err.s);
        kb_sb_free(&err);
        return opened == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
    }
    if (kb_tunedb_each_choice(db, add_choice, &x) < 0) {
        fprintf(stderr, "kbench export: %s: not a tuning database\n", db_path);
        rc = KB_EXIT_INPUT;
    } else if ((o->gpu_sm == 0 || for_gpu(&x) >= 0) && (rc = check_rows(&kb_command_export, &x, db_path)) < 0) {
        rc = write_file(&x, db, o->out_path);
    }
    kb_tunedb_close(db);
    free(x.rows);
    free(x.entries);
    kb_sb_free(&err);
    return rc;
}

static const char *const formats[] = { "json", "header", "kerneltuner", NULL };

static void export_defaults(void *p) { ((kb_export_opts *)p)->format = "json"; }

static const kb_opt export_opts[] = {
    { "--format", NULL, KB_OPT_CHOICE, offsetof(kb_export_opts, format), "json|header|kerneltuner",
      "JSON document, C header, or Kernel Tuner's cache file of one problem (default json)", 0, 0, 0, formats, 0 },
    { "--db", NULL, KB_OPT_IN, offsetof(kb_export_opts, db_path), "FILE",
      "the tuning database (default results/tune.db)", 0, 0, 0, NULL, 0 },
    { "--out", NULL, KB_OPT_OUT, offsetof(kb_export_opts, out_path), "FILE", "write here (default stdout)", 0, 0, 0,
      NULL, 0 },
    { "--allow-cpu", NULL, KB_OPT_FLAG, offsetof(kb_export_opts, allow_cpu), NULL,
      "export choices measured on the CPU emulator too (marked as CPU timings)", 0, 0, 0, NULL, 0 },
    { "--gpu-sm", NULL, KB_OPT_ARCH, offsetof(kb_export_opts, gpu_sm), "sm_XX",
      "one choice per problem for this GPU: its own, else the nearest SM count of this sm_XX (said so)", 0, 0, 0,
      NULL, 0 },
    { "--gpu-sm-count", NULL, KB_OPT_INT, offsetof(kb_export_opts, gpu_sm_count), "N",
      "with --gpu-sm: the GPU's SM count", 1, 1024, 0, NULL, 0 },
    { "--problem", NULL, KB_OPT_LIST, offsetof(kb_export_opts, problems), "TEXT",
      "only problems whose key contains TEXT (repeatable)", 0, 0, 0, NULL, offsetof(kb_export_opts, n_problems) },
};

const kb_command kb_command_export = {
    "export", "", 0, 0, 0,
    "deployment JSON, a C header or a Kernel Tuner cache from the tuning database",
    "Exports the current (not stale) choice of every problem per GPU. Choices measured on the\n"
    "emulator are CPU timings: refused without --allow-cpu, marked with it.\n",
    export_opts, (int)(sizeof export_opts / sizeof export_opts[0]), sizeof(kb_export_opts), export_defaults,
    export_main,
};
