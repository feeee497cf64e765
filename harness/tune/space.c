/* space.c - problems and their configurations from the one plan walk (space.h). */
#include "tune/space.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_tune_other_op(const kb_family *f, int variant)
{
    return variant >= 0 && variant < 32 && (f->other_op_variants >> variant & 1u);
}

int kb_tune_param_is_config(const kb_family *f, int i)
{
    const kb_param *p = &f->params[i];
    int own = 0, applies = 0;
    for (int v = 0; v < f->n_variants; v++)
        if (!kb_tune_other_op(f, v)) {
            own++;
            applies += kb_param_applies(f, i, v);
        }
    /* a knob of some of the family's variants (gelu vec's max_grid, cuBLASLt's workspace); a
     * param of the other operations' variants alone is judged by its kind below */
    if (applies > 0 && applies < own)
        return 1;
    if (p->choices)
        return 0;
    return isupper((unsigned char)p->name[0]) || strcmp(p->name, "algo") == 0;
}

int kb_tune_param_in_key(const kb_family *f, int i, int variant)
{
    return !kb_tune_param_is_config(f, i) && kb_param_applies(f, i, variant);
}

static void param_value(const kb_param *p, int64_t v, kb_sb *b)
{
    if (p->choices)
        kb_sb_printf(b, "%s=%s", p->name, p->choices[v]);
    else
        kb_sb_printf(b, "%s=%lld", p->name, (long long)v);
}

void kb_tune_problem_op(const kb_family *f, const kb_case *c, kb_sb *b)
{
    kb_sb_clear(b);
    kb_sb_printf(b, "%s", f->name);
    if (kb_tune_other_op(f, c->variant))     /* another operation over the dims: its own problems */
        kb_sb_printf(b, "/%s", f->variants[c->variant].name);
    int first = 1;
    for (int i = 0; i < f->n_params; i++) {
        if (!kb_tune_param_in_key(f, i, c->variant))   /* problem params of the case's operation */
            continue;
        kb_sb_printf(b, "%s", first ? "(" : ",");
        param_value(&f->params[i], c->params[i], b);
        first = 0;
    }
    if (!first)
        kb_sb_printf(b, ")");
}

void kb_tune_problem_key(const kb_family *f, const kb_case *c, kb_sb *b)
{
    kb_tune_problem_op(f, c, b);
    kb_sb_printf(b, "/%s/", kb_dtype_name(c->dtype));
    for (int d = 0; d < f->n_dims; d++)
        kb_sb_printf(b, "%s%lld", d ? "x" : "", (long long)c->dims[d]);
    kb_sb_printf(b, "/pad%d/%s", c->pad, kb_launch_name(c->launch));
}

char *kb_tune_config_label(const kb_family *f, const kb_case *c)
{
    kb_sb b;
    kb_sb_init(&b);
    kb_sb_printf(&b, "%s", f->variants[c->variant].name);
    int first = 1;
    for (int i = 0; i < f->n_params; i++) {
        if (!kb_tune_param_is_config(f, i) || !kb_param_applies(f, i, c->variant))
            continue;
        kb_sb_printf(&b, "%s", first ? "(" : ",");
        param_value(&f->params[i], c->params[i], &b);
        first = 0;
    }
    if (!first)
        kb_sb_printf(&b, ")");
    return b.s;
}

static kb_tune_problem *find_problem(kb_tune_space *s, const char *key)
{
    for (int i = s->n - 1; i >= 0; i--)
        if (strcmp(s->problems[i].key, key) == 0)
            return &s->problems[i];
    return NULL;
}

static kb_tune_problem *add_problem(kb_tune_space *s, const kb_family *f, int family, const char *key)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 8;
        kb_tune_problem *p = realloc(s->problems, (size_t)cap * sizeof *p);
        if (!p)
            return NULL;
        s->problems = p;
        s->cap = cap;
    }
    kb_tune_problem *p = &s->problems[s->n];
    memset(p, 0, sizeof *p);
    p->key = strdup(key);
    if (!p->key)
        return NULL;
    p->family = family;
    p->axis_param[p->n_axes++] = -1;
    for (int i = 0; i < f->n_params && p->n_axes < KB_TUNE_MAX_AXES; i++)
        if (kb_tune_param_is_config(f, i))
            p->axis_param[p->n_axes++] = i;
    s->n++;
    return p;
}

/* The level of value v on axis a of p, adding it when new; -1 when out of memory. */
static int level_of(kb_tune_problem *p, int a, int64_t v)
{
    for (int i = 0; i < p->n_values[a]; i++)
        if (p->values[a][i] == v)
            return i;
    int64_t *nv = realloc(p->values[a], (size_t)(p->n_values[a] + 1) * sizeof *nv);
    if (!nv)
        return -1;
    p->values[a] = nv;
    nv[p->n_values[a]] = v;
    return p->n_values[a]++;
}

static int add_config(kb_tune_problem *p, const kb_family *f, const kb_walk_item *it)
{
    if (p->n == p->cap) {
        int cap = p->cap ? 2 * p->cap : 16;
        kb_tune_config *c = realloc(p->configs, (size_t)cap * sizeof *c);
        int *lv = realloc(p->levels, (size_t)cap * (size_t)p->n_axes * sizeof *lv);
        if (c)
            p->configs = c;
        if (lv)
            p->levels = lv;
        if (!c || !lv)
            return -1;
        p->cap = cap;
    }
    kb_tune_config *c = &p->configs[p->n];
    c->case_index = it->index;
    c->id = strdup(it->id);
    c->config = kb_tune_config_label(f, it->c);
    if (!c->id || !c->config)
        return -1;
    for (int a = 0; a < p->n_axes; a++) {
        int64_t v = a == 0 ? it->c->variant : it->c->params[p->axis_param[a]];
        int l = level_of(p, a, v);
        if (l < 0)
            return -1;
        p->levels[(size_t)p->n * (size_t)p->n_axes + (size_t)a] = l;
    }
    p->n++;
    return 0;
}

typedef struct {
    const kb_plan *plan;
    kb_tune_space *s;
    kb_sb key;
} build_ctx;

static int visit(void *user, const kb_walk_item *it)
{
    build_ctx *x = user;
    if (!it->valid) {
        if (x->s->invalid++ == 0)
            snprintf(x->s->first_invalid, sizeof x->s->first_invalid, "%s: %s", it->id, it->why);
        return 0;
    }
    const kb_family *f = x->plan->fams[it->c->family];
    kb_tune_problem_key(f, it->c, &x->key);
    kb_tune_problem *p = find_problem(x->s, x->key.s);
    if (!p && !(p = add_problem(x->s, f, it->c->family, x->key.s)))
        return 1;
    return add_config(p, f, it) < 0 ? 1 : 0;
}

/* Order the levels of p's ordinal axes (integer params) by value, so that strategies
 * measuring distances along an axis see BM 32 < 64 < 128 whatever order the suite listed
 * them in; the variant and choice params are categorical. */
static void order_levels(kb_tune_problem *p, const kb_family *f)
{
    p->categorical[0] = 1;
    for (int a = 1; a < p->n_axes; a++) {
        p->categorical[a] = f->params[p->axis_param[a]].choices != NULL;
        int nv = p->n_values[a], rank[256];
        if (p->categorical[a] || nv > 256)
            continue;
        for (int i = 0; i < nv; i++) {
            rank[i] = 0;
            for (int j = 0; j < nv; j++)
                rank[i] += p->values[a][j] < p->values[a][i];
        }
        int64_t sorted[256];
        for (int i = 0; i < nv; i++)
            sorted[rank[i]] = p->values[a][i];
        memcpy(p->values[a], sorted, (size_t)nv * sizeof sorted[0]);
        for (int c = 0; c < p->n; c++) {
            int *l = &p->levels[(size_t)c * (size_t)p->n_axes + (size_t)a];
            *l = rank[*l];
        }
    }
}

kb_status kb_tune_space_of_cases(const kb_plan *p, const kb_cases *l, kb_tune_space *out)
{
    memset(out, 0, sizeof *out);
    build_ctx x = { p, out, { 0 } };
    kb_sb_init(&x.key);
    int rc = 0;
    for (int64_t i = 0; i < l->n && rc == 0; i++)
        rc = visit(&x, &l->items[i].it);
    kb_sb_free(&x.key);
    for (int i = 0; rc == 0 && i < out->n; i++)
        order_levels(&out->problems[i], p->fams[out->problems[i].family]);
    if (rc != 0) {
        kb_tune_space_free(out);
        return KB_ERR_INTERNAL;
    }
    return KB_OK;
}

void kb_tune_space_free(kb_tune_space *s)
{
    for (int i = 0; i < s->n; i++) {
        kb_tune_problem *p = &s->problems[i];
        for (int k = 0; k < p->n; k++) {
            free(p->configs[k].id);
            free(p->configs[k].config);
        }
        for (int a = 0; a < p->n_axes; a++)
            free(p->values[a]);
        free(p->configs);
        free(p->levels);
        free(p->key);
    }
    free(s->problems);
    memset(s, 0, sizeof *s);
}
