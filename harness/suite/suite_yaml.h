/* suite_yaml.h - small helpers over libyaml's document tree for the suite loader:
 * typed scalars, strict mappings, "a scalar or a list" values, and error messages
 * that name file:line:column (libyaml marks are 0-based; messages are 1-based).
 * Internal to suite.c; not a general YAML API.
 */
#ifndef KB_SUITE_YAML_H
#define KB_SUITE_YAML_H

#include <yaml.h>

#include "core/kb.h"

typedef struct {
    yaml_document_t *doc;
    const char *file;  /* display name used in messages */
    kb_sb *err;        /* receives the one error message */
} kb_yctx;

/* Walk the YAML events of text once, before any tree is built (libyaml's tree builder
 * takes tens of seconds on 100k-deep nesting; this pass costs a few ms): one document
 * only, nested at most max_depth deep, at most max_nodes nodes. what names the document in
 * the message ("a suite"). KB_OK (a syntax error is left to the tree builder, which names
 * its place), KB_ERR_INPUT with "name:line:col: ..." in err, KB_ERR_INTERNAL when libyaml
 * cannot start. */
kb_status kb_yaml_precheck(const char *text, const char *name, const char *what, int max_depth, long max_nodes,
                           kb_sb *err);

/* kb_yaml_precheck, then text's one document into *doc. KB_OK with *doc loaded (the caller
 * yaml_document_delete()s it); KB_ERR_INPUT with the precheck's message or "name:line:col:
 * YAML: <problem>" (and " (<context> at line:col)" when libyaml gives one) in err, *doc not
 * loaded; KB_ERR_INTERNAL when libyaml cannot start. */
kb_status kb_yaml_load_doc(const char *text, const char *name, const char *what, int max_depth, long max_nodes,
                           yaml_document_t *doc, kb_sb *err);

/* Write "file:line:col: <message>" for node n (or 1:1 when n is NULL) into y->err,
 * replacing what was there, and return KB_ERR_INPUT. */
kb_status kb_yaml_fail(const kb_yctx *y, const yaml_node_t *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 1 for an absent value: empty plain scalar, ~, null, Null, NULL. */
int kb_yaml_is_null(const yaml_node_t *n);

/* The node of a mapping value with the given key, or NULL when absent. */
yaml_node_t *kb_yaml_get(const kb_yctx *y, const yaml_node_t *map, const char *key);

/* Check that n is a mapping whose keys are distinct scalars among allowed[]
 * (NULL-terminated; allowed == NULL accepts any key). what names the mapping in
 * messages as a phrase: "'defaults'", "a benchmark entry". */
kb_status kb_yaml_check_map(const kb_yctx *y, const yaml_node_t *n, const char *what,
                            const char *const *allowed);

/* Pair i of a mapping (no bounds check beyond the mapping's size). */
int kb_yaml_map_len(const yaml_node_t *map);
void kb_yaml_map_pair(const kb_yctx *y, const yaml_node_t *map, int i,
                      yaml_node_t **key, yaml_node_t **value);

/* A value that may be one item or a list of items: the number of items (a sequence's
 * length, 1 for anything else) and item i (the node itself when not a sequence). */
int kb_yaml_len(const yaml_node_t *n);
yaml_node_t *kb_yaml_item(const kb_yctx *y, const yaml_node_t *n, int i);

/* A non-null scalar's text; error "expected a scalar for '<what>'" otherwise. */
kb_status kb_yaml_scalar(const kb_yctx *y, const yaml_node_t *n, const char *what, const char **out);

/* A plain decimal integer (optional sign, '_' separators as YAML 1.1 allows).
 * Errors: "expected an integer for '<what>'", "value '...' for '<what>' does not fit in
 * a 64-bit integer". */
kb_status kb_yaml_int(const kb_yctx *y, const yaml_node_t *n, const char *what, int64_t *out);

/* kb_yaml_int limited to [lo, hi]; error names the range. */
kb_status kb_yaml_int_range(const kb_yctx *y, const yaml_node_t *n, const char *what,
                            int64_t lo, int64_t hi, int64_t *out);

/* A plain finite number (integer or decimal). */
kb_status kb_yaml_number(const kb_yctx *y, const yaml_node_t *n, const char *what, double *out);

/* Check that n is a scalar or a sequence with at least one item; errors
 * "expected a list or a scalar for '<what>'" and "empty axis '<what>'". */
kb_status kb_yaml_check_axis(const kb_yctx *y, const yaml_node_t *n, const char *what);

#endif /* KB_SUITE_YAML_H */
