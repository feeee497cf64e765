/* suite_entry.c - one benchmark entry of a suite: its family, its axes (variant,
 * dtype, shape, params, pad, launch), zip groups, where clauses, seed and measure.
 *
 * Order matters: the family gives meaning to every other key; variants decide which
 * dtypes are legal; axes must exist before zip can compare their lengths; zip decides
 * which axes may repeat a value; where is compiled last, against all of them.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "suite/suite_entry.h"
#include "suite/suite_shape.h"

static const char *const entry_keys[] = {
    "family", "variant", "dtype", "shape", "params", "pad", "launch", "zip", "where", "measure", "seed",
    "requires", NULL
};

typedef struct {
    kb_loader *L;
    kb_yctx *y;
    kb_suite_entry *e;
    const kb_family *f;
    const yaml_node_t *node;
    int n_axes;                                 /* KB_AXIS_PARAM0 + f->n_params */
    const char *axis_name[KB_AXIS_MAX];
    const yaml_node_t *axis_node[KB_AXIS_MAX];  /* where the axis was written; NULL = default */
    const char **variant_names;                 /* f's variant names, for messages and where */
} entry_ctx;

static int count_choices(const kb_param *p)
{
    int n = 0;
    while (p->choices && p->choices[n]) n++;
    return n;
}

static kb_status load_family(entry_ctx *c, int index)
{
    kb_loader *L = c->L;
    const yaml_node_t *v = kb_yaml_get(c->y, c->node, "family");
    const char *name;
    if (!v) return kb_yaml_fail(c->y, c->node, "entry %d lacks 'family'", index + 1);
    kb_status st = kb_yaml_scalar(c->y, v, "family", &name);
    if (st) return st;
    c->e->family = -1;
    for (int i = 0; i < L->n_fams; i++)
        if (!strcmp(L->fams[i]->name, name)) c->e->family = i;
    if (c->e->family < 0) {
        kb_sb known;
        kb_sb_init(&known);
        for (int i = 0; i < L->n_fams; i++)
            kb_sb_printf(&known, "%s%s", i ? ", " : "", L->fams[i]->name);
        st = kb_yaml_fail(c->y, v, "unknown family '%s' (known: %s)", name, known.s);
        kb_sb_free(&known);
        return st;
    }
    const kb_family *f = c->f = L->fams[c->e->family];
    if (f->n_dims > KB_MAX_DIMS || f->n_params > KB_MAX_PARAMS || f->n_variants > 32 || f->n_variants < 1) {
        kb_sb_clear(c->y->err);
        kb_sb_printf(c->y->err, "family %s: %d dims, %d params, %d variants exceed what kbench holds "
                     "(%d, %d, 1..32)", f->name, f->n_dims, f->n_params, f->n_variants,
                     KB_MAX_DIMS, KB_MAX_PARAMS);
        return KB_ERR_INTERNAL;
    }
    c->variant_names = kb_suite_xcalloc((size_t)f->n_variants, sizeof *c->variant_names);
    for (int i = 0; i < f->n_variants; i++)
        c->variant_names[i] = f->variants[i].name;
    static const char *const fixed[] = { "variant", "dtype", "shape", "pad", "launch" };
    for (int a = 0; a < KB_AXIS_PARAM0; a++)
        c->axis_name[a] = fixed[a];
    for (int p = 0; p < f->n_params; p++)
        c->axis_name[KB_AXIS_PARAM0 + p] = f->params[p].name;
    c->n_axes = KB_AXIS_PARAM0 + f->n_params;
    return KB_OK;
}

static kb_status load_variants(entry_ctx *c)
{
    const kb_family *f = c->f;
    kb_suite_entry *e = c->e;
    const yaml_node_t *v = kb_yaml_get(c->y, c->node, "variant");
    if (!v) { /* default: every variant */
        e->variants = kb_suite_xcalloc((size_t)f->n_variants, sizeof *e->variants);
        for (int i = 0; i < f->n_variants; i++) e->variants[i] = i;
        e->n_variants = f->n_variants;
        return KB_OK;
    }
    kb_status st = kb_yaml_check_axis(c->y, v, "variant");
    if (st) return st;
    int n = kb_yaml_len(v);
    e->variants = kb_suite_xcalloc((size_t)n, sizeof *e->variants);
    for (int i = 0; i < n; i++) {
        const yaml_node_t *it = kb_yaml_item(c->y, v, i);
        const char *name;
        if ((st = kb_yaml_scalar(c->y, it, "variant", &name))) return st;
        int found = -1;
        for (int j = 0; j < f->n_variants; j++)
            if (!strcmp(f->variants[j].name, name)) found = j;
        if (found < 0) {
            char *list = kb_suite_join(c->variant_names, f->n_variants);
            st = kb_yaml_fail(c->y, it, "unknown variant '%s' for family %s (expected one of: %s)", name, f->name, list);
            free(list);
            return st;
        }
        e->variants[e->n_variants++] = found;
    }
    c->axis_node[KB_AXIS_VARIANT] = v;
    return KB_OK;
}

static kb_status load_dtypes(entry_ctx *c)
{
    const kb_family *f = c->f;
    kb_suite_entry *e = c->e;
    uint32_t mask = 0; /* dtypes at least one listed variant supports */
    for (int i = 0; i < e->n_variants; i++)
        mask |= f->variants[e->variants[i]].dtypes;
    const yaml_node_t *v = kb_yaml_get(c->y, c->node, "dtype");
    e->dtypes = kb_suite_xcalloc(KB_DT_COUNT + (size_t)kb_yaml_len(v), sizeof *e->dtypes);
    if (!v) { /* default: every dtype a listed variant supports; per variant the rest drop */
        for (int d = 0; d < KB_DT_COUNT; d++)
            if (mask & KB_DT_BIT(d)) e->dtypes[e->n_dtypes++] = (kb_dtype)d;
        return KB_OK;
    }
    kb_status st = kb_yaml_check_axis(c->y, v, "dtype");
    if (st) return st;
    for (int i = 0; i < kb_yaml_len(v); i++) {
        const yaml_node_t *it = kb_yaml_item(c->y, v, i);
        const char *name;
        kb_dtype d;
        if ((st = kb_yaml_scalar(c->y, it, "dtype", &name))) return st;
        if (kb_dtype_parse(name, &d)) {
            char *list = kb_suite_join(c->L->dtype_names, KB_DT_COUNT);
            st = kb_yaml_fail(c->y, it, "unknown dtype '%s' (expected one of: %s)", name, list);
            free(list);
            return st;
        }
        if (!(mask & KB_DT_BIT(d))) {
            kb_sb vs;
            kb_sb_init(&vs);
            for (int j = 0; j < e->n_variants; j++)
                kb_sb_printf(&vs, "%s%s", j ? ", " : "", f->variants[e->variants[j]].name);
            st = kb_yaml_fail(c->y, it, "dtype '%s' is not supported by any listed variant of %s (%s)",
                              name, f->name, vs.s);
            kb_sb_free(&vs);
            return st;
        }
        e->dtypes[e->n_dtypes++] = d;
    }
    c->axis_node[KB_AXIS_DTYPE] = v;
    return KB_OK;
}

static kb_status load_shapes(entry_ctx *c)
{
    const kb_family *f = c->f;
    kb_suite_entry *e = c->e;
    const yaml_node_t *v = kb_yaml_get(c->y, c->node, "shape");
    if (!v) {
        if (f->n_dims > 0) {
            char *list = kb_suite_join(f->dims, f->n_dims);
            kb_status st = kb_yaml_fail(c->y, c->node, "entry for family %s lacks 'shape' (dims: %s)", f->name, list);
            free(list);
            return st;
        }
        e->shapes = kb_suite_xcalloc(1, sizeof *e->shapes); /* a family without dims: one empty shape */
        e->shapes[0].name = -1;
        e->n_shapes = 1;
        return KB_OK;
    }
    if (kb_yaml_is_null(v))
        return kb_yaml_fail(c->y, v, "expected a shape preset name, a map of dims, or a list of them for 'shape'");
    int n = kb_yaml_len(v);
    if (n == 0) return kb_yaml_fail(c->y, v, "empty axis 'shape'");
    e->shapes = kb_suite_xcalloc((size_t)n, sizeof *e->shapes);
    for (int i = 0; i < n; i++) {
        kb_status st = kb_suite_shape_item(c->L, f, kb_yaml_item(c->y, v, i), &e->shapes[i]);
        if (st) return st;
        e->n_shapes++;
    }
    c->axis_node[KB_AXIS_SHAPE] = v;
    return KB_OK;
}

static kb_status load_param_values(entry_ctx *c, int p, const yaml_node_t *v)
{
    const kb_param *par = &c->f->params[p];
    kb_suite_entry *e = c->e;
    kb_status st = kb_yaml_check_axis(c->y, v, par->name);
    if (st) return st;
    int n = kb_yaml_len(v), n_choices = count_choices(par);
    free(e->param_values[p]);
    e->param_values[p] = kb_suite_xcalloc((size_t)n, sizeof *e->param_values[p]);
    e->n_param_values[p] = 0;
    for (int i = 0; i < n; i++) {
        const yaml_node_t *it = kb_yaml_item(c->y, v, i);
        int64_t x = -1;
        if (!par->choices) {
            int64_t lo, hi;
            kb_param_range(par, &lo, &hi);
            if ((st = kb_yaml_int_range(c->y, it, par->name, lo, hi, &x))) return st;
        } else {
            const char *name;
            if ((st = kb_yaml_scalar(c->y, it, par->name, &name))) return st;
            for (int j = 0; j < n_choices; j++)
                if (!strcmp(par->choices[j], name)) x = j;
            if (x < 0) {
                char *list = kb_suite_join(par->choices, n_choices);
                st = kb_yaml_fail(c->y, it, "unknown value '%s' for parameter '%s' (expected one of: %s)",
                                  name, par->name, list);
                free(list);
                return st;
            }
        }
        e->param_values[p][e->n_param_values[p]++] = x;
    }
    c->axis_node[KB_AXIS_PARAM0 + p] = v;
    return KB_OK;
}

static kb_status load_params(entry_ctx *c)
{
    const kb_family *f = c->f;
    kb_suite_entry *e = c->e;
    for (int p = 0; p < f->n_params; p++) { /* unlisted params take their default */
        e->param_values[p] = kb_suite_xcalloc(1, sizeof *e->param_values[p]);
        e->param_values[p][0] = f->params[p].def;
        e->n_param_values[p] = 1;
    }
    const yaml_node_t *v = kb_yaml_get(c->y, c->node, "params");
    if (!v) return KB_OK;
    kb_status st = kb_yaml_check_map(c->y, v, "'params'", NULL);
    if (st) return st;
    for (int i = 0; i < kb_yaml_map_len(v); i++) {
        yaml_node_t *k, *val;
        kb_yaml_map_pair(c->y, v, i, &k, &val);
        const char *name = (const char *)k->data.scalar.value;
        int p = -1;
        for (int j = 0; j < f->n_params; j++)
            if (!strcmp(f->params[j].name, name)) p = j;
        if (p < 0) {
            if (f->n_params == 0)
                return kb_yaml_fail(c->y, k, "unknown parameter '%s': family %s has no parameters", name, f->name);
            kb_sb list;
            kb_sb_init(&list);
            for (int j = 0; j < f->n_params; j++)
                kb_sb_printf(&list, "%s%s", j ? ", " : "", f->params[j].name);
            st = kb_yaml_fail(c->y, k, "unknown parameter '%s' for family %s (expected one of: %s)", name, f->name, list.s);
            kb_sb_free(&list);
            return st;
        }
        if ((st = load_param_values(c, p, val))) return st;
        int used = 0;
        for (int j = 0; j < e->n_variants; j++)
            used |= kb_param_applies(f, p, e->variants[j]);
        if (!used)
            kb_suite_warn(c->L, k, "parameter '%s' applies to none of the listed variants of %s; its values are ignored",
                          name, f->name);
    }
    return KB_OK;
}

/* pad, launch, seed, measure: the entry's own value, else the suite's defaults. */
static kb_status load_inherited(entry_ctx *c)
{
    kb_loader *L = c->L;
    kb_suite_entry *e = c->e;
    kb_status st;
    const yaml_node_t *v;
    if ((v = kb_yaml_get(c->y, c->node, "pad"))) {
        if ((st = kb_suite_load_pads(L, v, &e->pads, &e->n_pads))) return st;
        c->axis_node[KB_AXIS_PAD] = v;
    } else {
        e->pads = kb_suite_xcalloc((size_t)L->n_pads, sizeof *e->pads);
        memcpy(e->pads, L->pads, (size_t)L->n_pads * sizeof *e->pads);
        e->n_pads = L->n_pads;
        c->axis_node[KB_AXIS_PAD] = L->pad_node;
    }
    if ((v = kb_yaml_get(c->y, c->node, "launch"))) {
        if ((st = kb_suite_load_launches(L, v, &e->launches, &e->n_launches))) return st;
        c->axis_node[KB_AXIS_LAUNCH] = v;
    } else {
        e->launches = kb_suite_xcalloc((size_t)L->n_launches, sizeof *e->launches);
        memcpy(e->launches, L->launches, (size_t)L->n_launches * sizeof *e->launches);
        e->n_launches = L->n_launches;
        c->axis_node[KB_AXIS_LAUNCH] = L->launch_node;
    }
    e->seed = L->seed;
    if ((v = kb_yaml_get(c->y, c->node, "seed")) && (st = kb_yaml_int(c->y, v, "seed", &e->seed))) return st;
    e->measure = L->measure;
    if ((v = kb_yaml_get(c->y, c->node, "measure")) && (st = kb_suite_load_measure(L, v, &e->measure))) return st;
    return KB_OK;
}

static kb_status load_zip(entry_ctx *c)
{
    kb_suite_entry *e = c->e;
    for (int a = 0; a < KB_AXIS_MAX; a++) e->zip_group[a] = -1;
    const yaml_node_t *v = kb_yaml_get(c->y, c->node, "zip");
    if (!v) return KB_OK;
    if (v->type != YAML_SEQUENCE_NODE || kb_yaml_len(v) == 0)
        return kb_yaml_fail(c->y, v, "expected a list of axis groups for 'zip', e.g. [[shape, pad]]");
    int flat = 1; /* zip: [shape, pad] is one group, written without the outer list */
    for (int i = 0; i < kb_yaml_len(v); i++)
        if (kb_yaml_item(c->y, v, i)->type != YAML_SCALAR_NODE) flat = 0;
    int n_groups = flat ? 1 : kb_yaml_len(v);
    for (int g = 0; g < n_groups; g++) {
        const yaml_node_t *gn = flat ? v : kb_yaml_item(c->y, v, g);
        if (gn->type != YAML_SEQUENCE_NODE || kb_yaml_len(gn) == 0)
            return kb_yaml_fail(c->y, gn, "expected a list of axis names for a zip group, e.g. [shape, pad]");
        int axes[KB_AXIS_MAX], n = kb_yaml_len(gn);
        for (int i = 0; i < n; i++) {
            const yaml_node_t *it = kb_yaml_item(c->y, gn, i);
            const char *name;
            kb_status st = kb_yaml_scalar(c->y, it, "zip", &name);
            if (st) return st;
            int a = -1;
            for (int j = 0; j < c->n_axes; j++)
                if (!strcmp(c->axis_name[j], name)) a = j;
            if (a < 0) {
                char *list = kb_suite_join(c->axis_name, c->n_axes);
                st = kb_yaml_fail(c->y, it, "unknown axis '%s' in zip (expected one of: %s)", name, list);
                free(list);
                return st;
            }
            if (e->zip_group[a] >= 0)
                return kb_yaml_fail(c->y, it, "axis '%s' appears twice in zip", name);
            e->zip_group[a] = g;
            axes[i] = a;
        }
        for (int i = 1; i < n; i++) {
            if (kb_suite_axis_len(e, axes[i]) == kb_suite_axis_len(e, axes[0])) continue;
            kb_sb names;
            kb_sb_init(&names);
            for (int j = 0; j < n; j++)
                kb_sb_printf(&names, "%s%s", j ? ", " : "", c->axis_name[axes[j]]);
            kb_status st = kb_yaml_fail(c->y, gn, "zip group [%s] has lengths %d and %d", names.s,
                                        kb_suite_axis_len(e, axes[0]), kb_suite_axis_len(e, axes[i]));
            kb_sb_free(&names);
            return st;
        }
    }
    e->n_zip_groups = n_groups;
    return KB_OK;
}

/* The key that makes two values of axis a equal (shapes: a hash of the whole shape;
 * a 64-bit collision between two distinct shapes of one entry is not a practical worry). */
static int64_t axis_key(const kb_suite_entry *e, int a, int i)
{
    switch (a) {
    case KB_AXIS_VARIANT: return e->variants[i];
    case KB_AXIS_DTYPE: return e->dtypes[i];
    case KB_AXIS_SHAPE: return (int64_t)kb_hash64(&e->shapes[i], sizeof e->shapes[i], KB_HASH_INIT);
    case KB_AXIS_PAD: return e->pads[i];
    case KB_AXIS_LAUNCH: return e->launches[i];
    default: return e->param_values[a - KB_AXIS_PARAM0][i];
    }
}

typedef struct { int64_t key; int index; } keyed;
static int keyed_cmp(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return a->index - b->index;
}

/* A value listed twice in an axis that is not zipped would make two identical cases
 * (same case id); reject it at the second occurrence. Sorting keeps this n log n. */
static kb_status check_duplicates(entry_ctx *c)
{
    kb_suite_entry *e = c->e;
    for (int a = 0; a < c->n_axes; a++) {
        if (!c->axis_node[a] || e->zip_group[a] >= 0) continue;
        int n = kb_suite_axis_len(e, a), second = -1;
        keyed *k = kb_suite_xcalloc((size_t)n, sizeof *k);
        for (int i = 0; i < n; i++) k[i] = (keyed){ axis_key(e, a, i), i };
        qsort(k, (size_t)n, sizeof *k, keyed_cmp);
        for (int i = 1; i < n; i++)
            if (k[i].key == k[i - 1].key && (second < 0 || k[i].index < second)) second = k[i].index;
        free(k);
        if (second >= 0)
            return kb_yaml_fail(c->y, kb_yaml_item(c->y, c->axis_node[a], second),
                                "duplicate value in axis '%s' (list each value once; zip pairs repeated values)",
                                c->axis_name[a]);
    }
    return KB_OK;
}

static kb_status load_where(entry_ctx *c)
{
    const kb_family *f = c->f;
    kb_suite_entry *e = c->e;
    const yaml_node_t *v = kb_yaml_get(c->y, c->node, "where");
    if (!v) return KB_OK;
    if (v->type == YAML_MAPPING_NODE || kb_yaml_is_null(v))
        return kb_yaml_fail(c->y, v, "expected a string or a list of strings for 'where'");
    kb_expr_slot slots[KB_N_SLOTS] = { { 0 } };
    slots[KB_AXIS_VARIANT] = (kb_expr_slot){ "variant", c->variant_names, f->n_variants };
    slots[KB_AXIS_DTYPE] = (kb_expr_slot){ "dtype", c->L->dtype_names, KB_DT_COUNT };
    slots[KB_AXIS_SHAPE] = (kb_expr_slot){ "shape", (const char *const *)c->L->s->shape_names,
                                           c->L->s->n_shape_names };
    slots[KB_AXIS_PAD] = (kb_expr_slot){ "pad", NULL, 0 };
    slots[KB_AXIS_LAUNCH] = (kb_expr_slot){ "launch", c->L->launch_names, KB_LAUNCH_COUNT };
    for (int p = 0; p < f->n_params; p++)
        slots[KB_AXIS_PARAM0 + p] = (kb_expr_slot){ f->params[p].name, f->params[p].choices,
                                                    count_choices(&f->params[p]) };
    for (int d = 0; d < f->n_dims; d++)
        slots[KB_SLOT_DIM0 + d] = (kb_expr_slot){ f->dims[d], NULL, 0 };

    int n = kb_yaml_len(v);
    e->where = kb_suite_xcalloc((size_t)n, sizeof *e->where);
    kb_sb msg;
    kb_sb_init(&msg);
    kb_status st = KB_OK;
    for (int i = 0; i < n && !st; i++) {
        const yaml_node_t *it = kb_yaml_item(c->y, v, i);
        const char *text;
        if ((st = kb_yaml_scalar(c->y, it, "where", &text))) break;
        if (kb_expr_compile(text, slots, KB_N_SLOTS, &e->where[i], &msg))
            st = kb_yaml_fail(c->y, it, "where: %s", msg.s);
        else
            e->n_where++;
    }
    kb_sb_free(&msg);
    return st;
}

/* requires: gpu (a scalar or a list of them). */
static kb_status load_requires(entry_ctx *c)
{
    const yaml_node_t *v = kb_yaml_get(c->y, c->node, "requires");
    if (!v) return KB_OK;
    if (v->type == YAML_MAPPING_NODE || kb_yaml_is_null(v))
        return kb_yaml_fail(c->y, v, "expected gpu or a list of them for 'requires'");
    int n = kb_yaml_len(v);
    for (int i = 0; i < n; i++) {
        const yaml_node_t *it = kb_yaml_item(c->y, v, i);
        const char *text;
        kb_status st = kb_yaml_scalar(c->y, it, "requires", &text);
        if (st) return st;
        if (strcmp(text, "gpu") != 0)
            return kb_yaml_fail(c->y, it, "requires: expected gpu, got '%s'", text);
        c->e->requires |= KB_REQUIRE_GPU;
    }
    return KB_OK;
}

kb_status kb_suite_load_entry(kb_loader *L, const yaml_node_t *n, int index, kb_suite_entry *e)
{
    entry_ctx c = { 0 };
    c.L = L;
    c.y = &L->y;
    c.e = e;
    c.node = n;
    if (!n || n->type != YAML_MAPPING_NODE)
        return kb_yaml_fail(c.y, n, "expected a mapping for benchmark entry %d", index + 1);
    e->line = (int)n->start_mark.line + 1;
    e->column = (int)n->start_mark.column + 1;
    kb_status st;
    if ((st = kb_yaml_check_map(c.y, n, "a benchmark entry", entry_keys))) return st;
    if ((st = load_family(&c, index))) goto done;
    if ((st = load_variants(&c))) goto done;
    if ((st = load_dtypes(&c))) goto done;
    if ((st = load_shapes(&c))) goto done;
    if ((st = load_params(&c))) goto done;
    if ((st = load_inherited(&c))) goto done;
    if ((st = load_zip(&c))) goto done;
    if ((st = check_duplicates(&c))) goto done;
    if ((st = load_requires(&c))) goto done;
    st = load_where(&c);
done:
    free(c.variant_names);
    return st;
}
