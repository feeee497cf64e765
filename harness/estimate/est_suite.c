/* est_suite.c - the static model over a suite (est_suite.h): the plan walk of `kbench
 * compile` at full shapes, each case compiled offline, its resources to the model. */
#include "estimate/est_suite.h"

#include "session/session.h"

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

/* A new row for the case (NULL when out of memory). */
static kb_est_row *add_row(kb_est_rows *r, const kb_walk_item *it, kb_est_row_status st, const char *why)
{
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

/* One case built offline and estimated into a row: 0, or -1 when out of memory. */
static int estimate_item(kb_session *s, const kb_est_suite_opts *o, const kb_cases_item *k, kb_est_rows *out)
{
    const kb_walk_item *it = &k->it;
    kb_est_row *row;
    if (!it->valid)
        return add_row(out, it, KB_EST_ROW_SKIPPED, it->why) ? 0 : -1;
    kb_built b;
    kb_session_build(s, k, &b);
    if (b.status == KB_BUILT_VENDOR)
        return add_row(out, it, KB_EST_ROW_SKIPPED, "a vendor library call: no model of its kernels") ? 0 : -1;
    if (b.status != KB_BUILT)
        return add_row(out, it, KB_EST_ROW_COMPILE_ERROR,
                       b.status == KB_BUILT_FAILED ? "no estimate (kbench compile shows the log)"
                                                   : "no resource report for its entry")
                   ? 0
                   : -1;
    if (!(row = add_row(out, it, KB_EST_ROW_OK, NULL)))
        return -1;
    row->regs = b.res.registers;
    if (kb_estimate_built(k->f, it->c, o->sm, &b.res, o->x, &row->e, row->why, sizeof row->why) != 0)
        row->status = KB_EST_ROW_NO_MODEL;
    return 0;
}

kb_status kb_est_suite(const kb_est_suite_opts *o, kb_est_rows *out, int64_t *selected, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    if (selected)
        *selected = 0;
    /* offline: NVRTC for the arch (the cuda backend's build alone), the suite at its full shapes */
    kb_session_opts so = { .backend = "cuda", .offline = 1, .build = 1, .full_shapes = 1,
                           .suite_path = o->suite_path, .jobs = o->jobs };
    so.bo.cache_dir = o->cache_dir;
    so.bo.sm_override = o->sm;
    kb_session *s = NULL;
    kb_status st = kb_session_open(&so, &s, err);
    if (st == KB_OK)
        st = kb_session_plan(s, err);
    if (st == KB_OK && kb_session_select(s, o->filters, o->n_filters) != KB_OK) {
        kb_sb_printf(err, "out of memory walking the plan of %s", o->suite_path);
        st = KB_ERR_SETUP;
    }
    if (st != KB_OK) {
        kb_session_close(s);
        return st;
    }
    kb_session_start(s);
    const kb_cases *l = kb_session_cases(s);
    for (int64_t i = 0; i < l->n; i++)
        kb_session_prefetch(s, &l->items[i]);
    int oom = 0;
    for (int64_t i = 0; i < l->n && !oom; i++)
        oom = estimate_item(s, o, &l->items[i], out) != 0;
    if (selected)
        *selected = l->n;
    kb_session_close(s);
    if (oom) {
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
