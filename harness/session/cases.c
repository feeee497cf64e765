/* cases.c - the session's one walk, kept as a list (see cases.h). */
#include "session/cases.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    const kb_plan *p;
    kb_cases *l;
} build_ctx;

static int keep(void *user, const kb_walk_item *it)
{
    build_ctx *x = user;
    kb_cases *l = x->l;
    if (l->n == l->cap) {
        int64_t cap = l->cap ? 2 * l->cap : 64;
        kb_cases_item *grown = realloc(l->items, (size_t)cap * sizeof *grown);
        if (!grown)
            return -1;
        l->items = grown;
        l->cap = cap;
    }
    kb_cases_item *k = &l->items[l->n];
    memset(k, 0, sizeof *k);
    k->it = *it;
    k->it.id = strdup(it->id);
    k->it.why = strdup(it->why);
    k->f = x->p->fams[it->c->family];
    if (!k->it.id || !k->it.why) {
        free((char *)k->it.id);
        free((char *)k->it.why);
        return -1;
    }
    l->n++;
    return 0;
}

kb_status kb_cases_build(const kb_plan *p, const kb_walk_opts *o, kb_cases *out)
{
    memset(out, 0, sizeof *out);
    kb_walk_opts wo = *o;
    wo.skip = NULL;
    build_ctx x = { p, out };
    if (kb_walk(p, &wo, keep, &x, &out->counts) != 0)
        return KB_ERR_OOM;
    kb_cases_mark_done(out, NULL);
    return KB_OK;
}

void kb_cases_mark_done(kb_cases *l, const kb_strset *done)
{
    l->resumed = l->todo = 0;
    l->id_width = 4;
    for (int64_t i = 0; i < l->n; i++) {
        kb_cases_item *k = &l->items[i];
        k->done = done && kb_strset_has(done, k->it.id);
        if (k->done) {
            l->resumed++;
            continue;
        }
        l->todo++;
        int len = (int)strlen(k->it.id);
        if (len > l->id_width)
            l->id_width = len;
    }
}

const kb_cases_item *kb_cases_find(const kb_cases *l, int64_t index)
{
    int64_t lo = 0, hi = l->n;   /* items are in plan order: a binary search */
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (l->items[mid].it.index < index)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < l->n && l->items[lo].it.index == index ? &l->items[lo] : NULL;
}

void kb_cases_free(kb_cases *l)
{
    for (int64_t i = 0; i < l->n; i++) {
        free((char *)l->items[i].it.id);
        free((char *)l->items[i].it.why);
    }
    free(l->items);
    memset(l, 0, sizeof *l);
}
