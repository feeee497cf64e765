/* report_best.c - the fastest verified configuration per problem (see report_best.h). */
#include "results/report_best.h"

#include "engine/family.h"
#include "kernels/families.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The family's table entry of row r, NULL for a family this build does not know. */
static const kb_family *family_of(const kb_report_row *r)
{
    int f = kb_family_find(r->family);
    return f < 0 ? NULL : kb_families[f];
}

static int is_problem_param(const kb_family *f, const char *name)
{
    int p = f ? kb_family_param_find(f, name) : -1;
    return p >= 0 && f->params[p].problem;
}

int kb_report_same_problem(const kb_report_row *a, const kb_report_row *b)
{
    return a->dev == b->dev && !strcmp(a->family, b->family) && !strcmp(a->dtype, b->dtype) && a->pad == b->pad &&
           !strcmp(a->shape, b->shape) &&
           json_equal(json_object_get(a->rec, "dims"), json_object_get(b->rec, "dims")) &&
           kb_report_same_problem_params(a, b);
}

/* The axis (family, param), added when new with first value v; NULL out of memory. */
static kb_report_axis *axis_of(kb_report_axes *a, const char *family, const char *param, json_t *v)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->v[i].family, family) && !strcmp(a->v[i].param, param))
            return &a->v[i];
    kb_report_axis *g = realloc(a->v, (size_t)(a->n + 1) * sizeof *g);
    if (!g)
        return NULL;
    a->v = g;
    kb_report_axis *x = &g[a->n++];
    memset(x, 0, sizeof *x);
    snprintf(x->family, sizeof x->family, "%s", family);
    snprintf(x->param, sizeof x->param, "%s", param);
    x->first = v;
    return x;
}

static kb_status see(kb_report_axes *a, const char *family, const char *param, json_t *v, int problem)
{
    kb_report_axis *x = axis_of(a, family, param, v);
    if (!x)
        return KB_ERR_OOM;
    x->problem = problem;
    if (!json_equal(x->first, v))
        x->varies = 1;
    return KB_OK;
}

kb_status kb_report_axes_of(const kb_report_run *run, kb_report_axes *out)
{
    memset(out, 0, sizeof *out);
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        const kb_family *f = family_of(r);
        const char *k;
        json_t *v;
        json_object_foreach(json_object_get(r->rec, "params"), k, v)
            if (see(out, r->family, k, v, is_problem_param(f, k)) != KB_OK)
                return KB_ERR_OOM;
        if (see(out, r->family, "", json_object_get(r->rec, "launch"), 0) != KB_OK)
            return KB_ERR_OOM;
    }
    return KB_OK;
}

void kb_report_axes_free(kb_report_axes *a)
{
    free(a->v);
    memset(a, 0, sizeof *a);
}

int kb_report_varies(const kb_report_axes *a, const char *family, const char *param)
{
    for (int i = 0; i < a->n; i++)
        if (!strcmp(a->v[i].family, family) && !strcmp(a->v[i].param, param))
            return a->v[i].varies;
    return 0;
}

static void value_text(json_t *v, kb_sb *out)
{
    if (json_is_string(v))
        kb_sb_printf(out, "%s", json_string_value(v));
    else if (json_is_integer(v))
        kb_sb_printf(out, "%lld", (long long)json_integer_value(v));
    else if (json_is_number(v))
        kb_sb_printf(out, "%g", json_number_value(v));
}

/* " name=value" for each param of r whose problem flag is want and that varies. */
static void params_text(const kb_report_axes *a, const kb_report_row *r, int want_problem, kb_sb *out)
{
    const kb_family *f = family_of(r);
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(r->rec, "params"), k, v) {
        if (is_problem_param(f, k) != want_problem || !kb_report_varies(a, r->family, k))
            continue;
        kb_sb_printf(out, " %s=", k);
        value_text(v, out);
    }
}

void kb_report_problem_text(const kb_report_axes *a, const kb_report_row *r, int with_dims, kb_sb *out)
{
    if (*r->shape) {
        kb_sb_printf(out, "%s", r->shape);
        if (with_dims) {
            kb_sb_printf(out, " ");
            kb_report_dims_text(r, out);
        }
    } else {
        kb_report_dims_text(r, out);
    }
    params_text(a, r, 1, out);
}

void kb_report_config_text(const kb_report_axes *a, const kb_report_row *r, kb_sb *out)
{
    kb_sb_printf(out, "%s", r->variant);
    params_text(a, r, 0, out);
    if (kb_report_varies(a, r->family, ""))
        kb_sb_printf(out, " %s", r->launch);
}

static int timed(const kb_report_row *r) { return r->ok && r->have_timing && r->median_us > 0; }

/* 95% intervals of the median overlap (an unknown noise: [0, 2 x median], as tune's). */
static int overlap(const kb_report_row *a, const kb_report_row *b)
{
    double na = isfinite(a->noise) ? a->noise * 1.96 : 1, nb = isfinite(b->noise) ? b->noise * 1.96 : 1;
    double a_hi = a->median_us * (1 + na), b_lo = b->median_us * (1 - nb);
    return b_lo <= a_hi;
}

static void place(const kb_report_run *run, kb_report_best *b, int i)
{
    const kb_report_row *r = &run->rows[i];
    b->n_rows++;
    if (!timed(r))
        return;
    b->n_timed++;
    if (b->best < 0 || r->median_us < run->rows[b->best].median_us) {
        b->next = b->best;
        b->best = i;
    } else if (b->next < 0 || r->median_us < run->rows[b->next].median_us) {
        b->next = i;
    }
}

int kb_report_best_of(const kb_report_run *run, kb_report_best **out)
{
    kb_report_best *b = calloc(run->n ? run->n : 1, sizeof *b);
    int n = 0;
    *out = b;
    if (!b)
        return -1;
    for (size_t i = 0; i < run->n; i++) {
        int k = 0;
        while (k < n && !kb_report_same_problem(&run->rows[b[k].first], &run->rows[i]))
            k++;
        if (k == n)
            b[n++] = (kb_report_best){ (int)i, -1, -1, 0, 0, 0 };
        place(run, &b[k], (int)i);
    }
    for (int k = 0; k < n; k++)
        b[k].within_noise = b[k].next >= 0 && overlap(&run->rows[b[k].best], &run->rows[b[k].next]);
    return n;
}

void kb_report_margin_text(const kb_report_run *run, const kb_report_best *b, char *buf, size_t n)
{
    if (b->best < 0)
        snprintf(buf, n, "none measured");
    else if (b->next < 0)
        snprintf(buf, n, "the only one");
    else
        snprintf(buf, n, "%.2fx%s", run->rows[b->next].median_us / run->rows[b->best].median_us,
                 b->within_noise ? ", within noise" : "");
}

int kb_report_eager_twin(const kb_report_run *run, size_t g)
{
    const char *id = run->rows[g].case_id;
    size_t n = strlen(id);
    if (n < 6 || strcmp(id + n - 6, "/graph"))
        return -1;
    for (size_t i = 0; i < run->n; i++) {
        const char *e = run->rows[i].case_id;
        if (run->rows[i].dev == run->rows[g].dev && strlen(e) == n && !strncmp(e, id, n - 5) &&
            !strcmp(e + n - 5, "eager"))
            return (int)i;
    }
    return -1;
}
