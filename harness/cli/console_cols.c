/* console_cols.c - a run's axes as per-family columns (see console_cols.h). */
#include "cli/console_cols.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What one axis takes across a family's cases while the columns are built. */
typedef struct {
    int seen;                  /* a value was seen */
    int64_t first;             /* the first value */
    int differs;               /* another value was seen */
    uint32_t variants;         /* the variants it applies to among the cases (params) */
} axis;

typedef struct {
    axis variant, dtype, pad, launch, param[KB_MAX_PARAMS];
    char **shapes;             /* distinct shape texts, "name" or dims */
    char **shape_dims;         /* their dims */
    int n_shapes;
} family_scan;

static void see(axis *a, int64_t v)
{
    if (!a->seen) {
        a->seen = 1;
        a->first = v;
    } else if (v != a->first) {
        a->differs = 1;
    }
}

static int max_int(int a, int b) { return a > b ? a : b; }

void kb_cols_param(const kb_family *f, const kb_case *kc, int p, char *buf, size_t n)
{
    if (!kb_param_applies(f, p, kc->variant))
        snprintf(buf, n, "-");
    else if (f->params[p].choices)
        snprintf(buf, n, "%s", f->params[p].choices[kc->params[p]]);
    else
        snprintf(buf, n, "%lld", (long long)kc->params[p]);
}

static void dims_text(const kb_family *f, const kb_case *kc, kb_sb *out)
{
    for (int d = 0; d < f->n_dims; d++)
        kb_sb_printf(out, d ? "x%lld" : "%lld", (long long)kc->dims[d]);
}

void kb_cols_shape(const kb_plan *plan, const kb_family *f, const kb_case *kc, kb_sb *out)
{
    if (plan && kc->shape_name >= 0 && kc->shape_name < plan->n_shape_names)
        kb_sb_printf(out, "%s", plan->shape_names[kc->shape_name]);
    else
        dims_text(f, kc, out);
}

/* Note kc's shape in the scan (its text and dims, once); its text's width. */
static int see_shape(family_scan *s, const kb_plan *plan, const kb_family *f, const kb_case *kc)
{
    kb_sb t, d;
    kb_sb_init(&t);
    kb_sb_init(&d);
    kb_cols_shape(plan, f, kc, &t);
    dims_text(f, kc, &d);
    int w = (int)t.len, found = 0;
    for (int i = 0; i < s->n_shapes && !found; i++)
        found = !strcmp(s->shapes[i], t.s);
    char **ns = found ? NULL : realloc(s->shapes, (size_t)(s->n_shapes + 1) * sizeof *ns);
    if (ns)
        s->shapes = ns;
    char **nd = ns ? realloc(s->shape_dims, (size_t)(s->n_shapes + 1) * sizeof *nd) : NULL;
    if (nd) {
        s->shape_dims = nd;
        s->shapes[s->n_shapes] = t.s;
        s->shape_dims[s->n_shapes++] = d.s;
        return w;   /* both strings now the scan's */
    }
    kb_sb_free(&t);
    kb_sb_free(&d);
    return w;
}

static void scan_case(kb_cols_family *cf, family_scan *s, const kb_plan *plan, const kb_case *kc)
{
    const kb_family *f = cf->f;
    char b[64];
    cf->n_cases++;
    see(&s->variant, kc->variant);
    cf->w_variant = max_int(cf->w_variant, (int)strlen(f->variants[kc->variant].name));
    see(&s->dtype, kc->dtype);
    cf->w_dtype = max_int(cf->w_dtype, (int)strlen(kb_dtype_name(kc->dtype)));
    see(&s->pad, kc->pad);
    snprintf(b, sizeof b, "%d", kc->pad);
    cf->w_pad = max_int(cf->w_pad, (int)strlen(b));
    see(&s->launch, kc->launch);
    cf->w_shape = max_int(cf->w_shape, see_shape(s, plan, f, kc));
    for (int p = 0; p < f->n_params && p < KB_MAX_PARAMS; p++) {
        if (!kb_param_applies(f, p, kc->variant))
            continue;
        see(&s->param[p], kc->params[p]);
        if (kc->variant < 32)
            s->param[p].variants |= 1u << kc->variant;
        kb_cols_param(f, kc, p, b, sizeof b);
        cf->w_param[p] = max_int(cf->w_param[p], (int)strlen(b));
    }
}

/* The variants of mask by name, "smem,naive". */
static void variant_names(const kb_family *f, uint32_t mask, kb_sb *out)
{
    int first = 1;
    for (int v = 0; v < f->n_variants && v < 32; v++)
        if (mask >> v & 1u) {
            kb_sb_printf(out, "%s%s", first ? "" : ",", f->variants[v].name);
            first = 0;
        }
}

/* Columns from the scan, and the constants stated above the table. */
static void settle(kb_cols_family *cf, const family_scan *s)
{
    const kb_family *f = cf->f;
    uint32_t present = 0;   /* the variants the family's cases have */
    for (int p = 0; p < f->n_params && p < KB_MAX_PARAMS; p++)
        present |= s->param[p].variants;
    cf->col_variant = s->variant.differs;
    if (!cf->col_variant)
        kb_sb_printf(&cf->constants, "variant=%s ", f->variants[s->variant.first].name);
    for (int p = 0; p < f->n_params && p < KB_MAX_PARAMS; p++) {
        const axis *a = &s->param[p];
        cf->col_param[p] = a->differs;
        if (!a->seen || a->differs)
            continue;
        if (f->params[p].choices)
            kb_sb_printf(&cf->constants, "%s=%s", f->params[p].name, f->params[p].choices[a->first]);
        else
            kb_sb_printf(&cf->constants, "%s=%lld", f->params[p].name, (long long)a->first);
        if (cf->col_variant && a->variants != present && s->variant.differs) {
            kb_sb_printf(&cf->constants, " (");
            variant_names(f, a->variants, &cf->constants);
            kb_sb_printf(&cf->constants, ")");
        }
        kb_sb_printf(&cf->constants, " ");
    }
    cf->col_dtype = s->dtype.differs;
    if (!cf->col_dtype)
        kb_sb_printf(&cf->constants, "dtype=%s ", kb_dtype_name((kb_dtype)s->dtype.first));
    cf->col_shape = s->n_shapes > 1;
    if (!cf->col_shape && s->n_shapes == 1)
        kb_sb_printf(&cf->constants, strcmp(s->shapes[0], s->shape_dims[0]) ? "shape=%s (%s) " : "shape=%s ",
                     s->shapes[0], s->shape_dims[0]);
    for (int i = 0; cf->col_shape && i < s->n_shapes; i++)
        if (strcmp(s->shapes[i], s->shape_dims[i]))
            kb_sb_printf(&cf->shapes, "%s%s %s", cf->shapes.len ? ", " : "", s->shapes[i], s->shape_dims[i]);
    cf->col_pad = s->pad.differs;
    if (!cf->col_pad)
        kb_sb_printf(&cf->constants, "pad=%lld ", (long long)s->pad.first);
    cf->col_launch = s->launch.differs;
    if (!cf->col_launch)
        kb_sb_printf(&cf->constants, "launch=%s ", kb_launch_name((kb_launch_mode)s->launch.first));
    while (cf->constants.len && cf->constants.s[cf->constants.len - 1] == ' ')
        cf->constants.s[--cf->constants.len] = 0;
    /* a column is at least as wide as its name */
    cf->w_variant = max_int(cf->w_variant, 7);
    cf->w_dtype = max_int(cf->w_dtype, 5);
    cf->w_shape = max_int(cf->w_shape, 5);
    cf->w_pad = max_int(cf->w_pad, 3);
    cf->w_launch = 6;
    for (int p = 0; p < f->n_params && p < KB_MAX_PARAMS; p++)
        cf->w_param[p] = max_int(cf->w_param[p], (int)strlen(f->params[p].name));
}

static void scan_free(family_scan *s)
{
    for (int i = 0; i < s->n_shapes; i++) {
        free(s->shapes[i]);
        free(s->shape_dims[i]);
    }
    free(s->shapes);
    free(s->shape_dims);
}

static int family_slot(kb_cols *c, const kb_family *f)
{
    for (int i = 0; i < c->n; i++)
        if (c->fams[i].f == f)
            return i;
    kb_cols_family *g = realloc(c->fams, (size_t)(c->n + 1) * sizeof *g);
    if (!g)
        return -1;
    c->fams = g;
    memset(&g[c->n], 0, sizeof g[c->n]);
    g[c->n].f = f;
    kb_sb_init(&g[c->n].constants);
    kb_sb_init(&g[c->n].shapes);
    return c->n++;
}

kb_status kb_cols_build(const kb_cases *l, const kb_plan *plan, kb_cols *out)
{
    memset(out, 0, sizeof *out);
    out->plan = plan;
    family_scan *scans = NULL;
    int n_scans = 0;
    kb_status st = KB_OK;
    for (int64_t i = 0; i < l->n && st == KB_OK; i++) {
        const kb_cases_item *it = &l->items[i];
        if (it->done)
            continue;
        int k = family_slot(out, it->f);
        if (k >= 0 && k >= n_scans) {   /* a new family: its scan starts empty */
            family_scan *ns = realloc(scans, (size_t)out->n * sizeof *ns);
            if (ns) {
                scans = ns;
                memset(&scans[n_scans], 0, (size_t)(out->n - n_scans) * sizeof *ns);
                n_scans = out->n;
            }
        }
        if (k < 0 || k >= n_scans) {
            st = KB_ERR_OOM;
            break;
        }
        scan_case(&out->fams[k], &scans[k], plan, it->it.c);
    }
    for (int k = 0; k < n_scans && st == KB_OK; k++)
        settle(&out->fams[k], &scans[k]);
    for (int k = 0; k < n_scans; k++)
        scan_free(&scans[k]);
    free(scans);
    return st;
}

void kb_cols_free(kb_cols *c)
{
    for (int i = 0; i < c->n; i++) {
        kb_sb_free(&c->fams[i].constants);
        kb_sb_free(&c->fams[i].shapes);
    }
    free(c->fams);
    memset(c, 0, sizeof *c);
}

const kb_cols_family *kb_cols_find(const kb_cols *c, const kb_family *f)
{
    for (int i = 0; i < c->n; i++)
        if (c->fams[i].f == f)
            return &c->fams[i];
    return NULL;
}

int kb_cols_width(const kb_cols_family *cf)
{
    int w = 0;
    w += cf->col_variant ? cf->w_variant + 1 : 0;
    for (int p = 0; p < cf->f->n_params && p < KB_MAX_PARAMS; p++)
        w += cf->col_param[p] ? cf->w_param[p] + 1 : 0;
    w += cf->col_dtype ? cf->w_dtype + 1 : 0;
    w += cf->col_shape ? cf->w_shape + 1 : 0;
    w += cf->col_pad ? cf->w_pad + 1 : 0;
    w += cf->col_launch ? cf->w_launch + 1 : 0;
    return w;
}

/* Names left-aligned, values too (parameter values right-aligned would read as numbers
 * of one column; they are labels of a configuration). */
void kb_cols_header(const kb_cols_family *cf, kb_sb *out)
{
    const kb_family *f = cf->f;
    if (cf->col_variant)
        kb_sb_printf(out, "%-*s ", cf->w_variant, "variant");
    for (int p = 0; p < f->n_params && p < KB_MAX_PARAMS; p++)
        if (cf->col_param[p])
            kb_sb_printf(out, "%-*s ", cf->w_param[p], f->params[p].name);
    if (cf->col_dtype)
        kb_sb_printf(out, "%-*s ", cf->w_dtype, "dtype");
    if (cf->col_shape)
        kb_sb_printf(out, "%-*s ", cf->w_shape, "shape");
    if (cf->col_pad)
        kb_sb_printf(out, "%-*s ", cf->w_pad, "pad");
    if (cf->col_launch)
        kb_sb_printf(out, "%-*s ", cf->w_launch, "launch");
}

void kb_cols_cells(const kb_cols *c, const kb_cols_family *cf, const kb_case *kc, kb_sb *out)
{
    const kb_family *f = cf->f;
    char b[64];
    if (cf->col_variant)
        kb_sb_printf(out, "%-*s ", cf->w_variant, f->variants[kc->variant].name);
    for (int p = 0; p < f->n_params && p < KB_MAX_PARAMS; p++)
        if (cf->col_param[p]) {
            kb_cols_param(f, kc, p, b, sizeof b);
            kb_sb_printf(out, "%-*s ", cf->w_param[p], b);
        }
    if (cf->col_dtype)
        kb_sb_printf(out, "%-*s ", cf->w_dtype, kb_dtype_name(kc->dtype));
    if (cf->col_shape) {
        kb_sb s;
        kb_sb_init(&s);
        kb_cols_shape(c->plan, f, kc, &s);
        kb_sb_printf(out, "%-*s ", cf->w_shape, s.s);
        kb_sb_free(&s);
    }
    if (cf->col_pad)
        kb_sb_printf(out, "%-*d ", cf->w_pad, kc->pad);
    if (cf->col_launch)
        kb_sb_printf(out, "%-*s ", cf->w_launch, kb_launch_name(kc->launch));
}

void kb_cols_config(const kb_cols_family *cf, const kb_case *kc, kb_sb *out)
{
    const kb_family *f = cf->f;
    char b[64];
    const char *sep = " ";
    kb_sb_printf(out, "%s", f->variants[kc->variant].name);
    for (int p = 0; p < f->n_params && p < KB_MAX_PARAMS; p++)
        if (cf->col_param[p] && !f->params[p].problem && kb_param_applies(f, p, kc->variant)) {
            kb_cols_param(f, kc, p, b, sizeof b);
            kb_sb_printf(out, "%s%s=%s", sep, f->params[p].name, b);
            sep = " ";
        }
    if (cf->col_launch)
        kb_sb_printf(out, "%s%s", sep, kb_launch_name(kc->launch));
}

void kb_cols_problem(const kb_cols_family *cf, const kb_case *kc, kb_sb *out)
{
    const kb_family *f = cf->f;
    char b[64];
    for (int p = 0; p < f->n_params && p < KB_MAX_PARAMS; p++)
        if (cf->col_param[p] && f->params[p].problem && kb_param_applies(f, p, kc->variant)) {
            kb_cols_param(f, kc, p, b, sizeof b);
            kb_sb_printf(out, " %s=%s", f->params[p].name, b);
        }
}

int kb_cols_same_problem(const kb_family *f, const kb_case *a, const kb_case *b)
{
    if (a->dtype != b->dtype || a->pad != b->pad || a->shape_name != b->shape_name)
        return 0;
    for (int d = 0; d < f->n_dims; d++)
        if (a->dims[d] != b->dims[d])
            return 0;
    for (int p = 0; p < f->n_params && p < KB_MAX_PARAMS; p++) {
        if (!f->params[p].problem)
            continue;
        int ia = kb_param_applies(f, p, a->variant), ib = kb_param_applies(f, p, b->variant);
        if (ia != ib || (ia && a->params[p] != b->params[p]))
            return 0;
    }
    return 1;
}
