/* model_json.h - a model roll-up (model_rollup.h) as one JSON object. */
#ifndef KB_MODEL_JSON_H
#define KB_MODEL_JSON_H

#include <jansson.h>

#include "model/model_rollup.h"

/* The roll-up as a new JSON object (caller json_decref's); NULL when out of memory.
 * Fields: docs/model-format.md ("The roll-up as JSON"); a figure that does not apply
 * (MFU on the emulator, a missing op's time) is null. */
json_t *kb_model_json(const kb_model_rollup *r);

#endif /* KB_MODEL_JSON_H */
