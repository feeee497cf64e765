/* walk.c - the plan walk (see walk.h). */
#include "suite/walk.h"

#include "engine/family.h"
#include "engine/modules.h"
#include "kernels/families.h"

#include <string.h>

int kb_walk_check_shapes(unsigned caps, int full_shapes)
{
    return !(caps & KB_CAP_FULL_SPEED) && !full_shapes;
}

unsigned kb_walk_has(unsigned caps)
{
    return caps & KB_CAP_GPU_TIMER ? KB_REQUIRE_GPU : 0;
}

void kb_walk_drop_unmet(kb_plan *p, unsigned caps)
{
    unsigned has = kb_walk_has(caps);
    int64_t kept = 0;
    for (int64_t i = 0; i < p->n_cases; i++) {
        kb_plan_entry *e = &p->entries[p->cases[i].entry];
        if (e->requires & ~has) {
            e->n_cases--;
            p->n_not_planned++;
        } else {
            p->cases[kept++] = p->cases[i];
        }
    }
    p->n_cases = kept;
}

kb_status kb_walk_plan(const char *path, unsigned caps, int full_shapes, kb_plan *out, kb_sb *err)
{
    kb_status st = kb_suite_plan(path, kb_families, kb_n_families, kb_walk_check_shapes(caps, full_shapes), out, err);
    if (st == KB_OK)
        kb_walk_drop_unmet(out, caps);
    return st;
}

int kb_walk_selects(const kb_walk_opts *o, const char *id)
{
    if (o->n_filters == 0)
        return 1;
    for (int i = 0; i < o->n_filters; i++)
        if (strstr(id, o->filters[i]))
            return 1;
    return 0;
}

int kb_walk(const kb_plan *p, const kb_walk_opts *o, int (*fn)(void *user, const kb_walk_item *it), void *user,
            kb_walk_counts *counts)
{
    kb_walk_counts n;
    memset(&n, 0, sizeof n);
    kb_strset seen;
    kb_strset_init(&seen);
    kb_sb id;
    kb_sb_init(&id);
    int rc = 0;
    char why[1200];
    for (int64_t i = 0; i < p->n_cases && rc == 0; i++) {
        const kb_case *c = &p->cases[i];
        const kb_family *f = p->fams[c->family];
        kb_case_id_of(f, c, &id);
        int added = kb_strset_add(&seen, id.s);
        if (added < 0) {
            rc = -1;
            break;
        }
        if (!added) {
            n.repeats++;
            continue;
        }
        if (!kb_walk_selects(o, id.s)) {
            n.filtered++;
            continue;
        }
        if (o->skip && kb_strset_has(o->skip, id.s)) {
            n.skipped++;
            continue;
        }
        why[0] = 0;
        kb_walk_item it = { i, c, id.s, 1, why };
        it.valid = f->valid(c, &o->target, why, sizeof why);
        n.visited++;
        n.invalid += !it.valid;
        if (fn)
            rc = fn(user, &it);
    }
    kb_strset_free(&seen);
    kb_sb_free(&id);
    if (counts)
        *counts = n;
    return rc;
}

typedef struct {
    kb_modules *ms;
    int sm;
} prefetch_ctx;

static int prefetch_one(void *user, const kb_walk_item *it)
{
    prefetch_ctx *x = user;
    if (it->valid)
        kb_modules_prefetch_case(x->ms, it->c, x->sm);
    return 0;
}

int kb_walk_prefetch(const kb_plan *p, const kb_walk_opts *o, kb_modules *ms, int sm)
{
    prefetch_ctx x = { ms, sm };
    return kb_walk(p, o, prefetch_one, &x, NULL);
}
