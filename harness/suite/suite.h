/* suite.h - a loaded YAML suite (format: docs/suite-format.md); loading is suite_load.h.
 *
 * Loading resolves every name against the family table it is given (family,
 * variant, dtype, parameter, choice, shape preset, axis) and compiles the where
 * clauses, so that the planner (plan.h) only multiplies integers. Every input error
 * is KB_ERR_INPUT with one message "file:line:column: what was expected".
 */
#ifndef KB_SUITE_H
#define KB_SUITE_H

#include "engine/family.h"
#include "engine/measure.h"
#include "suite/expr.h"

typedef struct {
    int64_t dims[KB_MAX_DIMS];       /* [elements] in the family's dim order */
    int64_t check_dims[KB_MAX_DIMS]; /* [elements] small shape for the emulator, when has_check */
    int has_check;
    int name;                        /* index into kb_suite.shape_names, -1 for an inline shape */
} kb_suite_shape;

/* An entry's `requires:` (kb_suite_entry.requires, kb_plan_entry.requires): planned only
 * for a target that has it (kb_walk_plan); elsewhere its cases are counted, not planned. */
#define KB_REQUIRE_GPU 1u             /* "gpu": a GPU (a backend with a GPU timer; not the emulator) */

/* Axis ids of an entry (zip groups, where slots); params follow in declared order. */
enum { KB_AXIS_VARIANT, KB_AXIS_DTYPE, KB_AXIS_SHAPE, KB_AXIS_PAD, KB_AXIS_LAUNCH, KB_AXIS_PARAM0 };
#define KB_AXIS_MAX (KB_AXIS_PARAM0 + KB_MAX_PARAMS)
/* Where-expression slots: slot a is axis a; the family's dims follow from KB_SLOT_DIM0. */
#define KB_SLOT_DIM0 KB_AXIS_MAX
#define KB_N_SLOTS (KB_AXIS_MAX + KB_MAX_DIMS)

typedef struct {
    int line, column;                 /* 1-based position of the entry in the file */
    int family;                       /* index into the family table given to the loader */
    int *variants; int n_variants;    /* variant indices, as listed (default: all) */
    kb_dtype *dtypes; int n_dtypes;   /* as listed (default: union of the variants' dtypes) */
    kb_suite_shape *shapes; int n_shapes;
    int *pads; int n_pads;            /* [elements], >= 0 */
    kb_launch_mode *launches; int n_launches;
    int64_t *param_values[KB_MAX_PARAMS]; /* per param: listed values (choice index), or its default */
    int n_param_values[KB_MAX_PARAMS];
    int zip_group[KB_AXIS_MAX];       /* zip group of each axis, -1 when the axis is not zipped */
    int n_zip_groups;
    kb_expr **where; int n_where;     /* all must hold; compiled with KB_N_SLOTS slots */
    kb_measure_settings measure;      /* KB_MEASURE_DEFAULTS, then defaults:, then the entry's measure: */
    int64_t seed;                     /* suite seed inherited or overridden by the entry */
    unsigned requires;                /* KB_REQUIRE_*: what the target must have for the entry to be planned */
} kb_suite_entry;

typedef struct {
    char *name;                       /* `suite:` */
    char *description;                /* "" when absent */
    char *source;                     /* display name of the file */
    char **shape_names; int n_shape_names; /* presets, in definition order */
    kb_suite_entry *entries; int n_entries;
    char **warnings; int n_warnings;  /* "file:line:col: ..." worth printing, not errors */
} kb_suite;

/* Release everything a (possibly partly) loaded suite owns, and zero it. */
void kb_suite_free(kb_suite *s);

/* Number of values of axis (KB_AXIS_*) in entry e: the loader checks zip groups with it,
 * the planner walks the product with it. */
int kb_suite_axis_len(const kb_suite_entry *e, int axis);

#endif /* KB_SUITE_H */
