/* cases.h - a session's one walk of its plan, kept: every case the walk selects, in
 * plan order, with its id, its family and valid()'s verdict for the target, asked once.
 * Everything that used to walk the plan again - the compile workers' prefetch, the
 * progress totals, the id column's width, the run loop, the tuner's space - reads this
 * list instead (see session.h).
 *
 * The walk (suite/walk.h) dedupes cases planned twice, applies --filter and asks valid();
 * the cases a resumed records file already holds are marked afterwards
 * (kb_cases_mark_done), because that file is opened only once the filter has proved to
 * select something.
 */
#ifndef KB_SESSION_CASES_H
#define KB_SESSION_CASES_H

#include "core/strset.h"
#include "suite/walk.h"

/* One selected case. */
typedef struct {
    kb_walk_item it;              /* index (into the plan), c, id, valid, why: id and why owned by the list */
    const kb_family *f;           /* the case's family, from the plan's table */
    int done;                     /* already recorded (--resume): not run again */
} kb_cases_item;

typedef struct {
    kb_cases_item *items;         /* in plan order (it.index increasing) */
    int64_t n, cap;
    kb_walk_counts counts;        /* what the walk passed over (visited = n) */
    int64_t resumed;              /* items marked done */
    int64_t todo;                 /* items not done */
    int id_width;                 /* the longest id of the items not done, at least 4 (the console column) */
} kb_cases;

/* Walk plan p with o (o->skip is ignored: see kb_cases_mark_done) into *out, which the
 * caller frees with kb_cases_free (also after a failure). KB_OK, or KB_ERR_OOM. */
kb_status kb_cases_build(const kb_plan *p, const kb_walk_opts *o, kb_cases *out);

/* Mark the items whose id is in done (a resumed file's finished cases); todo, resumed
 * and id_width follow. done NULL marks nothing. */
void kb_cases_mark_done(kb_cases *l, const kb_strset *done);

/* The item of plan case index, or NULL when the walk did not select it. */
const kb_cases_item *kb_cases_find(const kb_cases *l, int64_t index);

void kb_cases_free(kb_cases *l);

#endif /* KB_SESSION_CASES_H */
