/* plan.c - expand a loaded suite into kb_case[] (see plan.h).
 *
 * An entry's axes are gathered into groups: each zip group is one group, every other
 * axis is a group of its own. The group holding the variant axis is walked outermost,
 * so that for each variant the groups made only of params that do not apply to it
 * shrink to one step (the param's default) before the inner odometer runs. The
 * per-combination work is integer stores, a 64-bit hash and the where trees.
 */
#include "suite/plan.h"

#include "suite/suite_load.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int axes[KB_AXIS_MAX];
    int n_axes;
    int len;
} group;

static char *xstrdup(const char *s)
{
    char *p = strdup(s ? s : "");
    if (!p) kb_out_of_memory("the plan", strlen(s ? s : "") + 1);
    return p;
}

static void add_warning(kb_plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_warning(kb_plan *p, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    char **w = realloc(p->warnings, (size_t)(p->n_warnings + 1) * sizeof *w);
    if (!w) kb_out_of_memory("the plan's warnings", (size_t)(p->n_warnings + 1) * sizeof *w);
    p->warnings = w;
    p->warnings[p->n_warnings++] = xstrdup(msg);
}

/* FNV-1a of an int64 in little-endian byte order, so seeds agree across hosts. */
static uint64_t hash_i64(uint64_t h, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 0; i < 8; i++) {
        h ^= (u >> (8 * i)) & 0xffu;
        h *= 0x100000001b3ull;
    }
    return h;
}

uint32_t kb_plan_seed(int64_t suite_seed, const char *family, const int64_t *dims, int n_dims, int pad)
{
    uint64_t h = hash_i64(KB_HASH_INIT, suite_seed);
    h = kb_hash64(family, strlen(family) + 1, h); /* the NUL separates the name from the dims */
    for (int d = 0; d < n_dims; d++)
        h = hash_i64(h, dims[d]);
    h = hash_i64(h, pad);
    return (uint32_t)(h ^ (h >> 32));
}


/* Gather axes into groups. The variant is axis 0, so its group is always group 0.
 * Returns the group count. */
static int make_groups(const kb_suite_entry *e, int n_axes, group *g)
{
    int n = 0, of_zip[KB_AXIS_MAX];
    for (int z = 0; z < KB_AXIS_MAX; z++) of_zip[z] = -1;
    for (int a = 0; a < n_axes; a++) {
        int z = e->zip_group[a], gi;
        if (z >= 0 && of_zip[z] >= 0) {
            gi = of_zip[z];
        } else {
            gi = n++;
            g[gi].n_axes = 0;
            g[gi].len = kb_suite_axis_len(e, a); /* zipped axes share one length (checked at load) */
            if (z >= 0) of_zip[z] = gi;
        }
        g[gi].axes[g[gi].n_axes++] = a;
    }
    return n;
}

typedef struct {
    const kb_suite *s;
    const kb_family *f;
    const kb_suite_entry *e;
    int ei;
    int use_check;
    kb_plan *out;
    int64_t cap;
    int64_t combos;    /* combinations reaching the dtype/where filters */
    int64_t emitted;
} expander;

/* Build the case for the current axis indices; keep it if the variant supports the
 * dtype and every where clause holds. Returns -1 when the plan is full. */
static int emit(expander *x, const int *idx, int v)
{
    const kb_family *f = x->f;
    const kb_suite_entry *e = x->e;
    kb_dtype dt = e->dtypes[idx[KB_AXIS_DTYPE]];
    if (!(f->variants[v].dtypes & KB_DT_BIT(dt)))
        return 0;
    x->combos++;
    kb_case c;
    memset(&c, 0, sizeof c);
    const kb_suite_shape *sh = &e->shapes[idx[KB_AXIS_SHAPE]];
    int check = x->use_check && sh->has_check;
    c.family = e->family;
    c.variant = v;
    c.dtype = dt;
    memcpy(c.dims, check ? sh->check_dims : sh->dims, sizeof c.dims);
    for (int p = 0; p < f->n_params; p++)
        c.params[p] = kb_param_applies(f, p, v) ? e->param_values[p][idx[KB_AXIS_PARAM0 + p]]
                                                : f->params[p].def;
    c.pad = e->pads[idx[KB_AXIS_PAD]];
    c.launch = e->launches[idx[KB_AXIS_LAUNCH]];
    c.shape_name = sh->name;
    c.check_shape = check;
    c.entry = x->ei;
    if (e->n_where) {
        int64_t slots[KB_N_SLOTS] = { 0 };
        slots[KB_AXIS_VARIANT] = v;
        slots[KB_AXIS_DTYPE] = dt;
        slots[KB_AXIS_SHAPE] = sh->name;
        slots[KB_AXIS_PAD] = c.pad;
        slots[KB_AXIS_LAUNCH] = c.launch;
        for (int p = 0; p < f->n_params; p++) slots[KB_AXIS_PARAM0 + p] = c.params[p];
        for (int d = 0; d < f->n_dims; d++) slots[KB_SLOT_DIM0 + d] = c.dims[d];
        for (int w = 0; w < e->n_where; w++)
            if (!kb_expr_holds(e->where[w], slots)) return 0;
    }
    c.seed = kb_plan_seed(e->seed, f->name, c.dims, f->n_dims, c.pad);
    kb_plan *out = x->out;
    if (out->n_cases == x->cap) {
        if (x->cap >= KB_PLAN_MAX_CASES) return -1;
        x->cap = x->cap ? x->cap * 2 : 1024;
        if (x->cap > KB_PLAN_MAX_CASES) x->cap = KB_PLAN_MAX_CASES;
        kb_case *nc = realloc(out->cases, (size_t)x->cap * sizeof *nc);
        if (!nc) kb_out_of_memory("the plan's cases", (size_t)x->cap * sizeof *nc);
        out->cases = nc;
    }
    out->cases[out->n_cases++] = c;
    x->emitted++;
    return 0;
}

static void set_group(const group *g, int pos, int *idx)
{
    for (int k = 0; k < g->n_axes; k++) idx[g->axes[k]] = pos;
}

/* 1 when every axis of the group is a param that does not apply to variant v. */
static int collapses(const kb_family *f, const group *g, int v)
{
    for (int k = 0; k < g->n_axes; k++) {
        int a = g->axes[k];
        if (a < KB_AXIS_PARAM0 || kb_param_applies(f, a - KB_AXIS_PARAM0, v)) return 0;
    }
    return 1;
}

/* The combinations entry e enumerates before filtering (KB_PLAN_MAX_COMBOS + 1 when
 * more). */
static int64_t entry_combos(const kb_suite_entry *e, const kb_family *f)
{
    group g[KB_AXIS_MAX] = { { { 0 }, 0, 0 } };
    int n_groups = make_groups(e, KB_AXIS_PARAM0 + f->n_params, g);
    int64_t product = 1;
    for (int i = 0; i < n_groups; i++)
        if (__builtin_mul_overflow(product, (int64_t)g[i].len, &product) || product > KB_PLAN_MAX_COMBOS)
            return KB_PLAN_MAX_COMBOS + 1;
    return product;
}

/* The budget is the whole suite's, checked before a single case is made: the entry
 * where the running sum of combinations crosses it is named. */
static kb_status check_budget(const kb_suite *s, const kb_family *const *fams, int n_fams, kb_sb *err)
{
    int64_t total = 0;
    for (int ei = 0; ei < s->n_entries; ei++) {
        const kb_suite_entry *e = &s->entries[ei];
        if (e->family < 0 || e->family >= n_fams)
            continue;   /* kb_plan_build says so */
        int64_t n = entry_combos(e, fams[e->family]);
        if (n > KB_PLAN_MAX_COMBOS - total) {
            kb_sb_clear(err);
            kb_sb_printf(err, "%s:%d:%d: entry %d (%s): the suite combines more than %d cases before filtering "
                         "(%lld by the entries before this one); narrow its axes or zip them", s->source, e->line,
                         e->column, ei + 1, fams[e->family]->name, KB_PLAN_MAX_COMBOS, (long long)total);
            return KB_ERR_INPUT;
        }
        total += n;
    }
    return KB_OK;
}

static kb_status expand_entry(expander *x, kb_sb *err)
{
    const kb_suite_entry *e = x->e;
    const kb_family *f = x->f;
    group g[KB_AXIS_MAX] = { { { 0 }, 0, 0 } };
    int n_groups = make_groups(e, KB_AXIS_PARAM0 + f->n_params, g);

    int idx[KB_AXIS_MAX] = { 0 }, pos[KB_AXIS_MAX], eff[KB_AXIS_MAX];
    for (int i0 = 0; i0 < g[0].len; i0++) {
        set_group(&g[0], i0, idx);
        int v = e->variants[idx[KB_AXIS_VARIANT]];
        for (int i = 1; i < n_groups; i++) {
            pos[i] = 0;
            eff[i] = collapses(f, &g[i], v) ? 1 : g[i].len;
            set_group(&g[i], 0, idx);
        }
        for (;;) {
            if (emit(x, idx, v) < 0) {
                kb_sb_clear(err);
                kb_sb_printf(err, "%s:%d:%d: the plan exceeds %d cases (entry %d, %s); split the suite",
                             x->s->source, e->line, e->column, KB_PLAN_MAX_CASES, x->ei + 1, f->name);
                return KB_ERR_INPUT;
            }
            int i = n_groups - 1;
            for (; i >= 1; i--) { /* odometer: the last group turns fastest */
                if (++pos[i] < eff[i]) { set_group(&g[i], pos[i], idx); break; }
                pos[i] = 0;
                set_group(&g[i], 0, idx);
            }
            if (i < 1) break;
        }
    }
    return KB_OK;
}

kb_status kb_plan_build(const kb_suite *s, const kb_family *const *fams, int n_fams,
                        int use_check_shapes, kb_plan *out, kb_sb *err)
{
    kb_status st = KB_OK;
    memset(out, 0, sizeof *out);
    if ((st = check_budget(s, fams, n_fams, err)) != KB_OK)
        return st;
    out->fams = fams;
    out->suite_name = xstrdup(s->name);
    out->description = xstrdup(s->description);
    out->source = xstrdup(s->source);
    out->shape_names = calloc((size_t)s->n_shape_names + 1, sizeof *out->shape_names);
    out->entries = calloc((size_t)s->n_entries + 1, sizeof *out->entries);
    if (!out->shape_names || !out->entries) kb_out_of_memory("the plan", (size_t)s->n_entries * sizeof *out->entries);
    for (int i = 0; i < s->n_shape_names; i++)
        out->shape_names[out->n_shape_names++] = xstrdup(s->shape_names[i]);
    for (int i = 0; i < s->n_warnings; i++)
        add_warning(out, "%s", s->warnings[i]);

    expander x = { 0 };
    x.s = s;
    x.use_check = use_check_shapes;
    x.out = out;
    for (int ei = 0; ei < s->n_entries; ei++) {
        const kb_suite_entry *e = &s->entries[ei];
        if (e->family < 0 || e->family >= n_fams) {
            kb_sb_clear(err);
            kb_sb_printf(err, "plan: entry %d names family %d of %d (suite loaded with another table?)",
                         ei + 1, e->family, n_fams);
            st = KB_ERR_INTERNAL;
            goto fail;
        }
        const kb_family *f = fams[e->family];
        kb_plan_entry *pe = &out->entries[out->n_entries++];
        pe->line = e->line;
        pe->column = e->column;
        snprintf(pe->family, sizeof pe->family, "%s", f->name);
        pe->measure = e->measure;
        pe->requires = e->requires;

        x.f = f;
        x.e = e;
        x.ei = ei;
        x.combos = x.emitted = 0;
        if ((st = expand_entry(&x, err))) goto fail;
        pe->n_cases = x.emitted;
        if (x.combos > 0 && x.emitted == 0)
            add_warning(out, "%s:%d:%d: entry %d (%s): the where filter removes every case",
                        s->source, e->line, e->column, ei + 1, f->name);
    }
    return KB_OK;
fail:
    kb_plan_free(out);
    return st;
}

kb_status kb_suite_plan_text(const char *text, const char *display_name,
                             const kb_family *const *fams, int n_fams,
                             int use_check_shapes, kb_plan *out, kb_sb *err)
{
    kb_suite s;
    memset(out, 0, sizeof *out);
    kb_status st = kb_suite_load_text(text, display_name, fams, n_fams, &s, err);
    if (st) return st;
    st = kb_plan_build(&s, fams, n_fams, use_check_shapes, out, err);
    kb_suite_free(&s);
    return st;
}

kb_status kb_suite_plan(const char *path, const kb_family *const *fams, int n_fams,
                        int use_check_shapes, kb_plan *out, kb_sb *err)
{
    kb_suite s;
    memset(out, 0, sizeof *out);
    kb_status st = kb_suite_load(path, fams, n_fams, &s, err);
    if (st) return st;
    st = kb_plan_build(&s, fams, n_fams, use_check_shapes, out, err);
    kb_suite_free(&s);
    return st;
}

void kb_plan_free(kb_plan *p)
{
    free(p->cases);
    free(p->entries);
    for (int i = 0; i < p->n_shape_names; i++) free(p->shape_names[i]);
    free(p->shape_names);
    for (int i = 0; i < p->n_warnings; i++) free(p->warnings[i]);
    free(p->warnings);
    free(p->suite_name);
    free(p->description);
    free(p->source);
    memset(p, 0, sizeof *p);
}
