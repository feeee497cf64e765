/* suite_shape.c - shapes of a suite: named presets (`shapes:`) and the items of an
 * entry's `shape` axis, checked against the entry's family.
 *
 * A shape is a map of dims, e.g. {m: 2048, n: 11008, k: 4096}, with an optional
 * `check` map of the same structure: the small shape the emulator runs instead.
 * Dims are int64 >= 1 whose product must fit in int64 (element counts are products).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/suite_shape.h"

/* Read a map of dims (and, when check is not NULL, its `check` map). */
static kb_status read_dims(kb_loader *L, const yaml_node_t *node, kb_raw_dims *d,
                           kb_raw_dims *check, int *has_check)
{
    kb_yctx *y = &L->y;
    if (!node || node->type != YAML_MAPPING_NODE)
        return kb_yaml_fail(y, node, "expected a map of dims for a shape, e.g. {n: 4096}");
    kb_status st = kb_yaml_check_map(y, node, "a shape", NULL);
    if (st) return st;
    memset(d, 0, sizeof *d);
    d->node = node;
    int64_t product = 1;
    for (int i = 0; i < kb_yaml_map_len(node); i++) {
        yaml_node_t *k, *v;
        kb_yaml_map_pair(y, node, i, &k, &v);
        const char *name = (const char *)k->data.scalar.value;
        if (check && !strcmp(name, "check")) {
            if ((st = read_dims(L, v, check, NULL, NULL))) return st;
            *has_check = 1;
            continue;
        }
        if (d->n == KB_MAX_DIMS)
            return kb_yaml_fail(y, k, "a shape has at most %d dims", KB_MAX_DIMS);
        int64_t x;
        if ((st = kb_yaml_int_range(y, v, name, 1, KB_SUITE_MAX_DIM, &x))) return st;
        if (__builtin_mul_overflow(product, x, &product) || product > KB_SUITE_MAX_ELEMENTS)
            return kb_yaml_fail(y, v, "the dims of this shape multiply past %lld (2^56): no device holds that",
                                (long long)KB_SUITE_MAX_ELEMENTS);
        d->names[d->n] = name;
        d->vals[d->n++] = x;
    }
    if (d->n == 0)
        return kb_yaml_fail(y, node, "a shape needs at least one dim");
    return KB_OK;
}

static const kb_loader *sort_loader;   /* qsort has no user pointer; loading is single-threaded */

static int by_name(const void *a, const void *b)
{
    return strcmp(sort_loader->presets[*(const int *)a].name, sort_loader->presets[*(const int *)b].name);
}

/* Index of the preset called name, -1 when none: a binary search over L->preset_order,
 * so that an entry with 40k shape items over 40k presets costs n log n, not n^2. */
static int find_preset(const kb_loader *L, const char *name)
{
    int lo = 0, hi = L->n_presets - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, i = L->preset_order[mid];
        int c = strcmp(name, L->presets[i].name);
        if (c == 0)
            return i;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

kb_status kb_suite_load_presets(kb_loader *L, const yaml_node_t *node)
{
    kb_yctx *y = &L->y;
    kb_status st = kb_yaml_check_map(y, node, "'shapes'", NULL);
    if (st) return st;
    int n = kb_yaml_map_len(node);
    L->presets = kb_suite_xcalloc((size_t)n, sizeof *L->presets);
    L->s->shape_names = kb_suite_xcalloc((size_t)n, sizeof *L->s->shape_names);
    for (int i = 0; i < n; i++) {
        yaml_node_t *k, *v;
        kb_yaml_map_pair(y, node, i, &k, &v);
        kb_raw_shape *p = &L->presets[i];
        p->name = (const char *)k->data.scalar.value;
        if ((st = read_dims(L, v, &p->dims, &p->check, &p->has_check))) return st;
        L->s->shape_names[i] = strdup(p->name);
        if (!L->s->shape_names[i]) return KB_ERR_INTERNAL;
        L->s->n_shape_names = L->n_presets = i + 1;
    }
    L->preset_order = kb_suite_xcalloc((size_t)n, sizeof *L->preset_order);
    for (int i = 0; i < n; i++)
        L->preset_order[i] = i;
    sort_loader = L;
    qsort(L->preset_order, (size_t)n, sizeof *L->preset_order, by_name);
    return KB_OK;
}

/* Map raw dims onto f's dims in declared order. at: the node errors point to;
 * label: " 'name'" for a preset, "" inline; kind: "shape" or "check shape". */
static kb_status resolve(kb_loader *L, const kb_family *f, const yaml_node_t *at, const char *label,
                         const char *kind, const kb_raw_dims *r, int64_t *dims)
{
    for (int d = 0; d < f->n_dims; d++) {
        int found = -1;
        for (int i = 0; i < r->n; i++)
            if (!strcmp(r->names[i], f->dims[d])) found = i;
        if (found < 0)
            return kb_yaml_fail(&L->y, at, "%s%s for family %s lacks dim '%s'", kind, label, f->name, f->dims[d]);
        dims[d] = r->vals[found];
    }
    for (int i = 0; i < r->n; i++) {
        int known = 0;
        for (int d = 0; d < f->n_dims; d++)
            if (!strcmp(r->names[i], f->dims[d])) known = 1;
        if (!known) {
            char *list = kb_suite_join(f->dims, f->n_dims);
            kb_status st = kb_yaml_fail(&L->y, at, "%s%s has dim '%s', which family %s does not have (dims: %s)",
                                        kind, label, r->names[i], f->name, list);
            free(list);
            return st;
        }
    }
    return KB_OK;
}

kb_status kb_suite_shape_item(kb_loader *L, const kb_family *f, const yaml_node_t *item,
                              kb_suite_shape *out)
{
    kb_yctx *y = &L->y;
    kb_raw_shape inl = { 0 };
    const kb_raw_shape *r;
    const yaml_node_t *at, *check_at;
    char label[160] = "";
    kb_status st;

    memset(out, 0, sizeof *out);
    if (item && item->type == YAML_SCALAR_NODE && !kb_yaml_is_null(item)) {
        const char *name = (const char *)item->data.scalar.value;
        out->name = find_preset(L, name);
        if (out->name < 0) {
            if (L->n_presets == 0)
                return kb_yaml_fail(y, item, "shape '%s' is not defined (the suite has no 'shapes:')", name);
            return kb_yaml_fail(y, item, "shape '%s' is not defined", name);
        }
        r = &L->presets[out->name];
        /* Errors point at the use, and say where the preset is. */
        snprintf(label, sizeof label, " '%s' (defined at line %d)", name, (int)r->dims.node->start_mark.line + 1);
        at = check_at = item;
    } else if (item && item->type == YAML_MAPPING_NODE) {
        if ((st = read_dims(L, item, &inl.dims, &inl.check, &inl.has_check))) return st;
        r = &inl;
        out->name = -1;
        at = item;
        check_at = inl.has_check ? inl.check.node : item;
    } else {
        return kb_yaml_fail(y, item, "expected a shape preset name or a map of dims for 'shape'");
    }
    if ((st = resolve(L, f, at, label, "shape", &r->dims, out->dims))) return st;
    if (r->has_check) {
        if ((st = resolve(L, f, check_at, label, "check shape", &r->check, out->check_dims))) return st;
        out->has_check = 1;
        for (int d = 0; d < f->n_dims; d++)
            if (out->check_dims[d] > out->dims[d])
                return kb_yaml_fail(y, check_at, "check shape%s: %s = %lld exceeds the shape's %s = %lld (a check "
                                    "shape is a smaller stand-in for the emulator)", label, f->dims[d],
                                    (long long)out->check_dims[d], f->dims[d], (long long)out->dims[d]);
    }
    return KB_OK;
}
