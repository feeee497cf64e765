/* replay_build.h - building a recorded space (replay.h) configuration by configuration:
 * the distinct values of each axis, the levels, the labels, and at the end the order of
 * the levels (by value on an ordinal axis) and the checks every space must pass. Used by
 * the Kernel Tuner reader (replay.c) and the records reader (replay_rec.c). */
#ifndef KB_TUNE_REPLAY_BUILD_H
#define KB_TUNE_REPLAY_BUILD_H

#include "tune/replay_types.h"

#include <jansson.h>

typedef struct {
    kb_tune_replay *r;
    int cap;                       /* configurations allocated */
    int with_cases;                /* keep r->cases */
    char **vals[KB_TUNE_MAX_AXES]; /* distinct value texts per axis (owned) */
    int n_vals[KB_TUNE_MAX_AXES];
} kb_replay_builder;

void kb_replay_builder_init(kb_replay_builder *b, kb_tune_replay *r);
void kb_replay_builder_free(kb_replay_builder *b);

/* A JSON scalar as Kernel Tuner joins it into a key (Python's str of the value), any
 * length, into out (cleared first). */
void kb_replay_value_text(json_t *v, kb_sb *out);
/* The index of value v in the JSON array list (compared as texts), -1 when absent. */
int kb_replay_value_index(json_t *list, json_t *v);

/* Declare the values of JSON array list on axis a, in order. 0, -1 out of memory. */
int kb_replay_declare(kb_replay_builder *b, int a, json_t *list);

/* Add a configuration: its value on every axis (JSON scalars), its time (INFINITY failed,
 * KB_TUNE_REFUSED refused), what it cost [s] (NAN unknown). 0; -1 with err for a value
 * too long (a text of more than 4096 characters); -2 out of memory. */
int kb_replay_add(kb_replay_builder *b, json_t *const *vals, double t, double cost_s, kb_sb *err);
/* The same with the values as texts (records: "-" for a param that does not apply). */
int kb_replay_add_texts(kb_replay_builder *b, const char *const *vals, double t, double cost_s, kb_sb *err);

/* Finish the space: order the levels of ordinal axes by value, mark categorical ones,
 * count refused and failed. 0; -1 with "path: ..." in err when two configurations are
 * the same or none has a time; -2 out of memory. */
int kb_replay_finish(kb_replay_builder *b, const char *path, kb_sb *err);

#endif /* KB_TUNE_REPLAY_BUILD_H */
