/* suite.c - a loaded suite: releasing it, and the length of an entry's axes (see suite.h). */
#include "suite/suite.h"

#include <stdlib.h>
#include <string.h>

static void free_entry(kb_suite_entry *e)
{
    free(e->variants);
    free(e->dtypes);
    free(e->shapes);
    free(e->pads);
    free(e->launches);
    for (int p = 0; p < KB_MAX_PARAMS; p++)
        free(e->param_values[p]);
    for (int i = 0; i < e->n_where; i++)
        kb_expr_free(e->where[i]);
    free(e->where);
}

void kb_suite_free(kb_suite *s)
{
    for (int i = 0; i < s->n_entries; i++)
        free_entry(&s->entries[i]);
    free(s->entries);
    for (int i = 0; i < s->n_shape_names; i++)
        free(s->shape_names[i]);
    free(s->shape_names);
    for (int i = 0; i < s->n_warnings; i++)
        free(s->warnings[i]);
    free(s->warnings);
    free(s->name);
    free(s->description);
    free(s->source);
    memset(s, 0, sizeof *s);
}

int kb_suite_axis_len(const kb_suite_entry *e, int axis)
{
    switch (axis) {
    case KB_AXIS_VARIANT: return e->n_variants;
    case KB_AXIS_DTYPE: return e->n_dtypes;
    case KB_AXIS_SHAPE: return e->n_shapes;
    case KB_AXIS_PAD: return e->n_pads;
    case KB_AXIS_LAUNCH: return e->n_launches;
    default: return e->n_param_values[axis - KB_AXIS_PARAM0];
    }
}
