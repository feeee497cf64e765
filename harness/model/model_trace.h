/* model_trace.h - a model roll-up (model_rollup.h) as a Chrome trace-event timeline of
 * one model step per phase (chrome://tracing, Perfetto): a process per phase, the layers
 * as slices, in each the ops in description order (count executions each), per-model ops
 * before or after the layers where the description puts them; each op's slice lasts the
 * median of the case it matched. Missing ops are instant events naming why. A timeline
 * built from medians, not a recording: the trace's metadata says so, and on the emulator
 * that its times are CPU times. */
#ifndef KB_MODEL_TRACE_H
#define KB_MODEL_TRACE_H

#include <jansson.h>

#include "model/model_rollup.h"

/* The trace as a new JSON object {"traceEvents": [...], ...}; NULL when out of memory. */
json_t *kb_model_trace(const kb_model_rollup *r);

#endif
