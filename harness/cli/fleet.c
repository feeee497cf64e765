/* fleet.c - `kbench fleet DIR` (see fleet.h). */
#include "cli/fleet.h"

#include "accept/fleet.h"
#include "accept/fleet_html.h"
#include "accept/fleet_md.h"
#include "accept/fleet_stats.h"
#include "accept/verdict_io.h"
#include "core/fsutil.h"
#include "core/output.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
    json_t *fj;
    kb_status (*fn)(json_t *, FILE *);
} page_job;

static kb_status page_fill(void *user, FILE *f, kb_sb *err)
{
    const page_job *j = user;
    (void)err;
    return j->fn(j->fj, f);
}

/* Write a page of fj to path with the writer fn, by the output rule (core/output.h). */
static kb_status write_page(const char *path, json_t *fj, kb_status (*fn)(json_t *, FILE *), kb_sb *err)
{
    page_job j = { fj, fn };
    return kb_out_write_with(path, page_fill, &j, err);
}

static const char *const page_names[] = { "fleet.json", "fleet.md", "fleet.html", "fleet.junit.xml" };

/* No page may be a rank file read (a symlink planted as fleet.json): refused before any
 * page is written. -1 to go on, else 2. */
static int pages_not_inputs(const kb_fleet_opts *o, const kb_fleet *f)
{
    const char *dir = o->out_dir ? o->out_dir : o->dir;
    char page[1100], rank[1100];
    kb_sb err;
    kb_sb_init(&err);
    int rc = -1;
    for (int p = 0; p < 4 && rc < 0; p++) {
        snprintf(page, sizeof page, "%s/%s", dir, page_names[p]);
        struct stat sb;
        if (stat(page, &sb) != 0)
            continue;   /* a new page cannot be a rank file */
        for (int i = 0; i < f->n && rc < 0; i++) {
            snprintf(rank, sizeof rank, "%s/%s", o->dir, f->gpus[i].file);
            if (kb_out_not_input(page, rank, "a rank file read", &err) != KB_OK)
                rc = kb_opts_fail(&kb_command_fleet, "--out-dir", "%s", err.s);
        }
    }
    kb_sb_free(&err);
    return rc;
}

static kb_status write_all(const kb_fleet_opts *o, json_t *fj, kb_sb *err)
{
    const char *dir = o->out_dir ? o->out_dir : o->dir;
    char json_path[1024], md_path[1024], html_path[1024], junit_path[1024];
    snprintf(json_path, sizeof json_path, "%s/%s", dir, page_names[0]);
    snprintf(md_path, sizeof md_path, "%s/%s", dir, page_names[1]);
    snprintf(html_path, sizeof html_path, "%s/%s", dir, page_names[2]);
    snprintf(junit_path, sizeof junit_path, "%s/%s", dir, page_names[3]);
    kb_status st = kb_out_dir_make(dir, err);   /* an output directory is made (core/output.h) */
    if (st == KB_OK)
        st = kb_acc_write_json(json_path, fj, err);
    if (st == KB_OK)
        st = write_page(md_path, fj, kb_fleet_markdown, err);
    if (st == KB_OK)
        st = write_page(html_path, fj, kb_fleet_html, err);
    if (st == KB_OK)
        st = kb_acc_junit_file(junit_path, json_object_get(fj, "gpus"), "kbench fleet", err);
    if (st == KB_OK)
        fprintf(stderr, "kbench fleet: %s, %s, %s, %s\n", json_path, md_path, html_path, junit_path);
    return st;
}

/* The directory the pages go to, made (--out-dir) and writable, before anything is
 * printed. 0, or -1 after saying why. */
static int output_dir_ready(const kb_fleet_opts *o)
{
    const char *dir = o->out_dir ? o->out_dir : o->dir;
    if ((o->out_dir ? kb_fs_mkdir_p(dir) : KB_OK) == KB_OK && access(dir, W_OK | X_OK) == 0)
        return 0;
    int e = errno;
    fprintf(stderr, "kbench fleet: %s %s: not a directory kbench can write to (%s)%s\n",
            o->out_dir ? "--out-dir" : "DIR", dir, strerror(e), o->out_dir ? "" : "; name another with --out-dir");
    return -1;
}

static int fleet_main(void *opts)
{
    const kb_fleet_opts *o = opts;
    kb_fleet f;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_fleet_load(o->dir, &f, &err);
    if (st == KB_ERR_OOM) {   /* the environment, not the command line */
        fprintf(stderr, "kbench fleet: %s\n", err.s);
        kb_fleet_free(&f);
        kb_sb_free(&err);
        return KB_EXIT_SETUP;
    }
    if (st != KB_OK) {
        int rc = kb_opts_fail(&kb_command_fleet, "DIR", "%s", err.s);
        kb_sb_free(&err);
        return rc;
    }
    int early = pages_not_inputs(o, &f);
    if (early >= 0) {
        kb_fleet_free(&f);
        kb_sb_free(&err);
        return early;
    }
    if (output_dir_ready(o) != 0) {
        kb_fleet_free(&f);
        kb_sb_free(&err);
        return KB_EXIT_SETUP;
    }
    if (kb_fleet_judge(&f, o->k, o->rel_floor) != KB_OK) {
        fprintf(stderr, "kbench fleet: %s: out of memory judging the GPUs\n", o->dir);
        kb_fleet_free(&f);
        kb_sb_free(&err);
        return KB_EXIT_SETUP;
    }
    json_t *fj = kb_fleet_json(&f);
    int rc = kb_fleet_exit_code(&f);
    if (!o->quiet)
        kb_fleet_markdown(fj, stdout);
    if (write_all(o, fj, &err) != KB_OK) {
        fprintf(stderr, "kbench fleet: %s\n", err.s);
        rc = rc > KB_EXIT_SETUP ? rc : KB_EXIT_SETUP;
    }
    if (!f.n)
        fprintf(stderr, "kbench fleet: %s holds no verdict file (*.verdict.json from kbench accept --out-dir)\n",
                o->dir);
    json_decref(fj);
    kb_fleet_free(&f);
    kb_sb_free(&err);
    return rc;
}

static void fleet_defaults(void *opts)
{
    kb_fleet_opts *o = opts;
    o->k = KB_FLEET_DEFAULT_K;
    o->rel_floor = KB_FLEET_DEFAULT_REL_FLOOR;
}

static const kb_opt fleet_opts[] = {
    { "--k", NULL, KB_OPT_DOUBLE, offsetof(kb_fleet_opts, k), "K",
      "outlier bound: median -/+ K robust scales (default 3)", 0, 100, 1, NULL, 0 },
    { "--rel-floor", NULL, KB_OPT_DOUBLE, offsetof(kb_fleet_opts, rel_floor), "F",
      "the robust scale is at least F x median (default 0.02)", 0, 1, 0, NULL, 0 },
    { "--out-dir", NULL, KB_OPT_OUTDIR, offsetof(kb_fleet_opts, out_dir), "DIR",
      "where fleet.json, .md, .html and .junit.xml go (default: the input DIR)", 0, 0, 0, NULL, 0 },
    { "--quiet", "-q", KB_OPT_FLAG, offsetof(kb_fleet_opts, quiet), NULL, "no markdown on stdout", 0, 0, 0, NULL, 0 },
};

const kb_command kb_command_fleet = {
    "fleet", "DIR", 1, 1, offsetof(kb_fleet_opts, dir),
    "merge the verdicts of a fleet's accept ranks, flag outliers per SKU and node",
    "Exit codes: the worst GPU's - 6 wrong results or a hardware error, 5 below a floor or an outlier,\n"
    "3 nothing checked or a missing/duplicate/corrupt rank file, 0 pass; 2 when DIR cannot be read.",
    fleet_opts, (int)(sizeof fleet_opts / sizeof fleet_opts[0]), sizeof(kb_fleet_opts), fleet_defaults, fleet_main,
};
