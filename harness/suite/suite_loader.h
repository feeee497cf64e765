/* suite_loader.h - state shared by the suite loader's files while one suite loads
 * (suite_load.c the top level, suite_shape.c shapes, suite_entry.c one benchmark entry),
 * and the readers both defaults and entries use (measure, pad, launch). Not used
 * outside the loader.
 */
#ifndef KB_SUITE_LOADER_H
#define KB_SUITE_LOADER_H

#include "suite/suite.h"
#include "suite/suite_yaml.h"

/* A shape as written (dim name -> value), before a family gives the names meaning.
 * More dims than KB_MAX_DIMS cannot fit any family and are rejected when read. */
typedef struct {
    const yaml_node_t *node;
    int n;
    const char *names[KB_MAX_DIMS];  /* point into the YAML document */
    int64_t vals[KB_MAX_DIMS];       /* [elements], >= 1 */
} kb_raw_dims;

typedef struct {
    const char *name;                /* preset name; NULL for an inline shape */
    kb_raw_dims dims;
    kb_raw_dims check;               /* valid when has_check */
    int has_check;
} kb_raw_shape;

/* Limits on what a suite may ask for (docs/suite-format.md, "Limits"). */
#define KB_SUITE_MAX_DIM (1ll << 40)          /* one dim [elements] */
#define KB_SUITE_MAX_ELEMENTS (1ll << 56)     /* the product of a shape's dims */
#define KB_SUITE_MAX_PAD 4096                 /* [elements] leading-dim padding / misalignment */

typedef struct {
    kb_yctx y;
    kb_suite *s;                     /* being filled */
    const kb_family *const *fams; int n_fams;
    /* defaults every entry inherits */
    int64_t seed;
    int *pads; int n_pads; const yaml_node_t *pad_node;            /* node NULL = built-in [0] */
    kb_launch_mode *launches; int n_launches; const yaml_node_t *launch_node;
    kb_measure_settings measure;
    kb_raw_shape *presets; int n_presets;  /* parallel to s->shape_names */
    int *preset_order;                     /* preset indices sorted by name (lookups) */
    const char *dtype_names[KB_DT_COUNT];  /* value names of the dtype slot in where */
    const char *const *launch_names;       /* value names of the launch slot */
} kb_loader;

/* calloc that stops kbench with kb_out_of_memory (as kb_sb does): the loader has no partial result to save. */
void *kb_suite_xcalloc(size_t n, size_t size);
/* strdup that stops kbench with kb_out_of_memory. */
char *kb_suite_xstrdup(const char *s);
/* "a, b, c" of names[0..n); the caller frees the result. */
char *kb_suite_join(const char *const *names, int n);
/* Append a warning "file:line:col: ..." at node n to the suite. */
void kb_suite_warn(kb_loader *L, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Measure overrides of node applied to m (shared by defaults and entries). */
kb_status kb_suite_load_measure(kb_loader *L, const yaml_node_t *node, kb_measure_settings *m);
/* Pad and launch axes (shared by defaults and entries); replace *out on success. */
kb_status kb_suite_load_pads(kb_loader *L, const yaml_node_t *node, int **out, int *n_out);
kb_status kb_suite_load_launches(kb_loader *L, const yaml_node_t *node, kb_launch_mode **out, int *n_out);

#endif /* KB_SUITE_LOADER_H */
