/* suite_shape.h - shapes of a suite: presets (`shapes:`) and an entry's shape items. */
#ifndef KB_SUITE_SHAPE_H
#define KB_SUITE_SHAPE_H

#include "suite/suite_loader.h"

/* Read `shapes:` (name -> map of dims, with an optional `check` map) into L->presets
 * and the suite's shape-name table. */
kb_status kb_suite_load_presets(kb_loader *L, const yaml_node_t *node);

/* One item of an entry's `shape` axis (a preset name or an inline map) resolved for
 * family f: every dim of f present, no other dims, check dims likewise. */
kb_status kb_suite_shape_item(kb_loader *L, const kb_family *f, const yaml_node_t *item,
                              kb_suite_shape *out);

#endif /* KB_SUITE_SHAPE_H */
