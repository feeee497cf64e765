/* est_suite.c - the static model over a suite (est_suite.h): the plan walk of `kbench
 * compile` at full shapes, each case compiled offline, its resources to the model. */
#include "estimate/est_suite.h"

#include "engine/defines.h"
#include "engine/modules.h"

#include <stdlib.h>
#include <string.h>

static const char *const status_names[] = {
    [KB_EST_ROW_OK] = "ok",
    [KB_EST_ROW_SKIPPED] = "skipped",
    [KB_EST_ROW_NO_MODEL] = "no_model",
    [KB_EST_ROW_COMPILE_ERROR] = "compile_error",
};
_Static_assert(sizeof status_names / sizeof status_names[0] == KB_EST_ROW_STATUS_COUNT, "one name per row status");

const char *kb_est_row_status_name(kb_est_row_status s)
{
    return (unsigned)s < KB_EST_ROW_STATUS_COUNT ? status_names[s] : "?";
}

typedef struct {
    const kb_est_suite_opts *o;
    const kb_backend *be; /* the cuda backend: its build is NVRTC alone */
    kb_modules *mods;
    kb_est_rows *out;
    kb_sb defs;
    int oom;
} walk_ctx;

/* A new row for the walked case (NULL when out of memory). */
static kb_est_row *add_row(walk_ctx *w, const kb_walk_item *it, kb_est_row_status st, const char *why)
{
    kb_est_rows *r = w->out;
    if (r->n == r->cap) {
        size_t cap = r->cap ? 2 * r->cap : 64;
        kb_est_row *nr = realloc(r->rows, cap * sizeof *nr);
        if (!nr)
            return NULL;
        r->rows = nr, r->cap = cap;
    }
    kb_est_row *row = &r->rows[r->n];
    memset(row, 0, sizeof *row);
    row->id = strdup(it->id);
    if (!row->id)
        return NULL;
    r->n++;
    row->c = *it->c;
    row->status = st;
    row->regs = -1;
    snprintf(row->why, sizeof row->why, "%s", why ? why : "");
    return row;
}

static int estimate_item(void *user, const kb_walk_item *it)
{
    walk_ctx *w = user;
    const kb_family *f = kb_families[it->c->family];
    const char *entry = f->variants[it->c->variant].entry;
    kb_est_row *row;
    if (!it->valid || !entry) {
        row =
            add_row(w, it, KB_EST_ROW_SKIPPED, it->valid ? "a vendor library call: no model of its kernels" : it->why);
        return row ? 0 : (w->oom = 1);
    }
    kb_case_defines(f, it->c, &w->defs);
    const kb_module_ref *b = kb_modules_get(w->mods, f->source, w->defs.s, w->o->sm);
    kb_resources res;
    if (b->status != KB_OK || w->be->build_resources(b->log, entry, &res) != 0) {
        row = add_row(w, it, KB_EST_ROW_COMPILE_ERROR,
                      b->status != KB_OK ? "no estimate (kbench compile shows the log)"
                                         : "no resource report for its entry");
        return row ? 0 : (w->oom = 1);
    }
    if (!(row = add_row(w, it, KB_EST_ROW_OK, NULL)))
        return w->oom = 1;
    row->regs = res.registers;
    if (kb_estimate_built(f, it->c, w->o->sm, &res, w->o->x, &row->e, row->why, sizeof row->why) != 0)
        row->status = KB_EST_ROW_NO_MODEL;
    return 0;
}

kb_status kb_est_suite(const kb_est_suite_opts *o, kb_est_rows *out, kb_walk_counts *counts, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    walk_ctx w = { o, &kb_backend_cuda, NULL, out, { 0 }, 0 };
    kb_plan plan;
    kb_status st = kb_walk_plan(o->suite_path, w.be->caps, 1, &plan, err); /* full shapes */
    if (st != KB_OK)
        return st;
    kb_sb_init(&w.defs);
    w.mods = kb_modules_new_build_only(w.be, NULL, o->cache_dir, kb_kernels_dir());
    kb_walk_opts wo = { o->filters, o->n_filters, NULL, { o->sm, 0, kb_arch_max_shmem_optin(o->sm) } };
    kb_walk_counts n;
    int rc = w.mods ? 0 : -1;
    if (rc == 0) {
        kb_modules_start(w.mods, o->jobs);
        rc = kb_walk_prefetch(&plan, &wo, w.mods, o->sm);
    }
    if (rc == 0)
        rc = kb_walk(&plan, &wo, estimate_item, &w, &n);
    if (counts)
        *counts = rc == 0 ? n : (kb_walk_counts){ 0 };
    kb_modules_free(w.mods);
    kb_plan_free(&plan);
    kb_sb_free(&w.defs);
    if (rc != 0 || w.oom) {
        kb_sb_printf(err, "out of memory estimating %s", o->suite_path);
        return KB_ERR_SETUP;
    }
    return KB_OK;
}

size_t kb_est_rows_count(const kb_est_rows *r, kb_est_row_status s)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++)
        n += r->rows[i].status == s;
    return n;
}

void kb_est_rows_free(kb_est_rows *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->rows[i].id);
    free(r->rows);
    memset(r, 0, sizeof *r);
}
