/* plan.h - expand a suite into concrete cases (kb_case[]).
 *
 * Per entry: the Cartesian product of its axes, except that the axes of a zip group
 * advance together; a param that does not apply to a variant (kb_param.variants)
 * does not multiply that variant's cases (it holds its default, also for where); a
 * dtype the variant does not support is dropped for that variant; then every where
 * clause must hold. Cost is linear in the number of combinations enumerated.
 *
 * Each case's seed is a hash of (suite seed, family name, dims, pad): every variant,
 * dtype, param and launch mode of one problem sees the same inputs.
 */
#ifndef KB_PLAN_H
#define KB_PLAN_H

#include "suite/suite.h"

/* Bounds that keep a typo (an axis of 10^6 values, a hundred aliased entries) from
 * eating the machine: checked before anything is allocated or enumerated. */
#define KB_PLAN_MAX_CASES 1000000       /* cases a plan may hold (~170 MB at ~170 bytes each) */
#define KB_PLAN_MAX_COMBOS 20000000     /* combinations the whole suite may enumerate before where
                                         * (about 2 s of planning) */

/* Per suite entry, for later stages (measurement settings, messages). */
typedef struct {
    int line;              /* 1-based line of the entry in the suite */
    char family[32];
    kb_measure_settings measure; /* the entry's measurement settings */
    int column;            /* 1-based column of the entry */
    int64_t n_cases;       /* cases this entry contributed to the plan */
    unsigned requires;     /* KB_REQUIRE_* (suite.h) */
} kb_plan_entry;

typedef struct {
    const kb_family *const *fams;            /* the family table the plan was made with */
    kb_case *cases; int64_t n_cases;
    kb_plan_entry *entries; int n_entries;   /* kb_case.entry indexes this */
    char **shape_names; int n_shape_names;   /* kb_case.shape_name indexes this */
    char *suite_name;
    char **warnings; int n_warnings;         /* "file:line:col: ..." for the caller to print */
    char *description;                       /* "" when the suite has none */
    char *source;                            /* display name of the suite file */
    int64_t n_not_planned;                   /* cases left out: their entry `requires:` what the
                                              * target lacks (kb_walk_plan) */
} kb_plan;

/* Load the suite at path against fams[0..n_fams) and expand it. use_check_shapes:
 * cases use a shape's `check` dims when it has them (check_shape = 1), for the
 * emulator. On success *out owns the plan (kb_plan_free). On failure *out is empty and
 * err holds one message: KB_ERR_IO (unreadable file, names the path), KB_ERR_INPUT
 * ("file:line:col: ..."), KB_ERR_INTERNAL (family table beyond kbench's limits). */
kb_status kb_suite_plan(const char *path, const kb_family *const *fams, int n_fams,
                        int use_check_shapes, kb_plan *out, kb_sb *err);

/* Same from text in memory; display_name is used in messages (for tests and tools). */
kb_status kb_suite_plan_text(const char *text, const char *display_name,
                             const kb_family *const *fams, int n_fams,
                             int use_check_shapes, kb_plan *out, kb_sb *err);

/* Expand an already loaded suite (the same fams it was loaded with). The plan copies
 * what it needs; s stays owned by the caller. Errors: KB_ERR_INPUT when an entry
 * exceeds KB_PLAN_MAX_COMBOS or the plan KB_PLAN_MAX_CASES. */
kb_status kb_plan_build(const kb_suite *s, const kb_family *const *fams, int n_fams,
                        int use_check_shapes, kb_plan *out, kb_sb *err);

/* The input seed of a problem: FNV-1a over (suite seed, family name, dims, pad),
 * folded to 32 bits. Exposed so tools can recompute it. */
uint32_t kb_plan_seed(int64_t suite_seed, const char *family, const int64_t *dims, int n_dims, int pad);

/* Release everything the plan owns and zero it (an empty plan is fine). */
void kb_plan_free(kb_plan *p);

#endif /* KB_PLAN_H */
