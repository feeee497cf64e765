/* walk.h - the one plan walk every command uses (run, list, compile, and later tune and
 * accept): plan the suite for a target, then for each planned case in order
 *     id -> dedupe (a case planned twice by overlapping entries is visited once)
 *        -> filter (--filter: any of the texts is contained in the id)
 *        -> skip (ids already finished, --resume)
 *        -> valid() for the target, with its reason when not.
 */
#ifndef KB_WALK_H
#define KB_WALK_H

#include "core/strset.h"
#include "engine/modules.h"
#include "suite/plan.h"

/* Whether a backend with caps runs a suite's small check shapes (no KB_CAP_FULL_SPEED
 * and no --full-shapes) or the full ones. */
int kb_walk_check_shapes(unsigned caps, int full_shapes);

/* Plan the suite at path for a backend with caps (kb_walk_check_shapes decides the
 * shapes), without the cases of entries that require what caps lack (kb_walk_drop_unmet).
 * As kb_suite_plan: KB_OK with *out owned by the caller, else the error. */
kb_status kb_walk_plan(const char *path, unsigned caps, int full_shapes, kb_plan *out, kb_sb *err);

/* The KB_REQUIRE_* bits (suite.h) a backend with caps has: gpu with KB_CAP_GPU_TIMER. */
unsigned kb_walk_has(unsigned caps);

/* Drop from plan p the cases of entries whose `requires:` caps do not meet, counting them
 * in p->n_not_planned and out of their entries' n_cases (the order of the rest is kept). */
void kb_walk_drop_unmet(kb_plan *p, unsigned caps);

typedef struct {
    const char *const *filters;   /* a case is selected when its id contains any (none: all) */
    int n_filters;
    const kb_strset *skip;        /* ids to pass over (finished), or NULL */
    kb_target target;             /* valid() is asked for this target */
} kb_walk_opts;

/* One visited case. */
typedef struct {
    int64_t index;                /* into plan->cases */
    const kb_case *c;
    const char *id;               /* valid during the callback */
    int valid;                    /* valid() accepted it for the target */
    const char *why;              /* its reason when not valid ("" otherwise) */
} kb_walk_item;

/* What a walk passed over. */
typedef struct {
    int64_t visited;              /* selected, not skipped: the callback saw these */
    int64_t invalid;              /* of those, refused by valid() */
    int64_t repeats;              /* planned again by a later entry */
    int64_t filtered;             /* not selected by the filters */
    int64_t skipped;              /* in o->skip */
} kb_walk_counts;

/* 1 when the id is selected by the filters of o. */
int kb_walk_selects(const kb_walk_opts *o, const char *id);

/* Visit the cases of p in plan order. fn returns 0 to go on, anything else to stop the
 * walk (kb_walk then returns that value). counts may be NULL. Returns 0 after a whole
 * walk, or -1 when out of memory. */
int kb_walk(const kb_plan *p, const kb_walk_opts *o, int (*fn)(void *user, const kb_walk_item *it), void *user,
            kb_walk_counts *counts);

/* Announce, in walk order, the module of every case the walk finds valid to ms's compile
 * workers (kb_modules_prefetch_case for sm), so they build ahead of the walk that uses
 * them. As kb_walk: 0, or -1 when out of memory. */
int kb_walk_prefetch(const kb_plan *p, const kb_walk_opts *o, kb_modules *ms, int sm);

#endif /* KB_WALK_H */
