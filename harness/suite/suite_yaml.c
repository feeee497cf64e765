/* suite_yaml.c - libyaml document helpers for the suite loader (see suite_yaml.h). */
#include "suite/suite_yaml.h"

#include "core/strset.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kb_status kb_yaml_fail(const kb_yctx *y, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kb_sb_clear(y->err);
    kb_sb_printf(y->err, "%s:%d:%d: %s", y->file,
                 n ? (int)n->start_mark.line + 1 : 1, n ? (int)n->start_mark.column + 1 : 1, msg);
    return KB_ERR_INPUT;
}

int kb_yaml_is_null(const yaml_node_t *n)
{
    if (!n) return 1;
    if (n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return 0;
    const char *s = (const char *)n->data.scalar.value;
    return !*s || !strcmp(s, "~") || !strcmp(s, "null") || !strcmp(s, "Null") || !strcmp(s, "NULL");
}

int kb_yaml_map_len(const yaml_node_t *map)
{
    return (int)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
}

void kb_yaml_map_pair(const kb_yctx *y, const yaml_node_t *map, int i,
                      yaml_node_t **key, yaml_node_t **value)
{
    const yaml_node_pair_t *p = map->data.mapping.pairs.start + i;
    *key = yaml_document_get_node(y->doc, p->key);
    *value = yaml_document_get_node(y->doc, p->value);
}

static const char *key_text(const yaml_node_t *k)
{
    return k && k->type == YAML_SCALAR_NODE ? (const char *)k->data.scalar.value : NULL;
}

yaml_node_t *kb_yaml_get(const kb_yctx *y, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) return NULL;
    for (int i = 0; i < kb_yaml_map_len(map); i++) {
        yaml_node_t *k, *v;
        kb_yaml_map_pair(y, map, i, &k, &v);
        const char *t = key_text(k);
        if (t && !strcmp(t, key)) return v;
    }
    return NULL;
}

/* Key t (at node k) must be one of allowed[]. */
static kb_status check_allowed(const kb_yctx *y, const yaml_node_t *k, const char *t, const char *what,
                               const char *const *allowed)
{
    for (int j = 0; allowed[j]; j++)
        if (!strcmp(t, allowed[j]))
            return KB_OK;
    kb_sb list;
    kb_sb_init(&list);
    for (int j = 0; allowed[j]; j++)
        kb_sb_printf(&list, "%s%s", j ? ", " : "", allowed[j]);
    kb_status st = kb_yaml_fail(y, k, "unknown key '%s' in %s (expected one of: %s)", t, what, list.s);
    kb_sb_free(&list);
    return st;
}

kb_status kb_yaml_check_map(const kb_yctx *y, const yaml_node_t *n, const char *what,
                            const char *const *allowed)
{
    if (!n || n->type != YAML_MAPPING_NODE)
        return kb_yaml_fail(y, n, "expected a mapping for %s", what);
    int len = kb_yaml_map_len(n);
    kb_strset seen;          /* linear in the number of keys: a suite may have 40k presets */
    kb_strset_init(&seen);
    kb_status st = KB_OK;
    for (int i = 0; i < len && st == KB_OK; i++) {
        yaml_node_t *k, *v;
        kb_yaml_map_pair(y, n, i, &k, &v);
        const char *t = key_text(k);
        if (!t)
            st = kb_yaml_fail(y, k, "expected a scalar key in %s", what);
        else if (kb_strset_add(&seen, t) == 0)
            st = kb_yaml_fail(y, k, "duplicate key '%s' in %s", t, what);
        else if (allowed)
            st = check_allowed(y, k, t, what, allowed);
    }
    kb_strset_free(&seen);
    return st;
}

int kb_yaml_len(const yaml_node_t *n)
{
    if (n && n->type == YAML_SEQUENCE_NODE)
        return (int)(n->data.sequence.items.top - n->data.sequence.items.start);
    return 1;
}

yaml_node_t *kb_yaml_item(const kb_yctx *y, const yaml_node_t *n, int i)
{
    if (n && n->type == YAML_SEQUENCE_NODE)
        return yaml_document_get_node(y->doc, n->data.sequence.items.start[i]);
    return (yaml_node_t *)n;
}

kb_status kb_yaml_scalar(const kb_yctx *y, const yaml_node_t *n, const char *what, const char **out)
{
    if (!n || n->type != YAML_SCALAR_NODE || kb_yaml_is_null(n))
        return kb_yaml_fail(y, n, "expected a scalar for '%s'", what);
    *out = (const char *)n->data.scalar.value;
    return KB_OK;
}

kb_status kb_yaml_int(const kb_yctx *y, const yaml_node_t *n, const char *what, int64_t *out)
{
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return kb_yaml_fail(y, n, "expected an integer for '%s'", what);
    const char *s = (const char *)n->data.scalar.value, *p = s;
    int neg = 0;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    /* Accumulate as a negative number so INT64_MIN is representable. */
    int64_t v = 0;
    int digits = 0;
    for (; *p; p++) {
        if (*p == '_' && digits) continue;
        if (*p < '0' || *p > '9')
            return kb_yaml_fail(y, n, "expected an integer for '%s', got '%s'", what, s);
        if (__builtin_mul_overflow(v, 10, &v) || __builtin_sub_overflow(v, *p - '0', &v))
            return kb_yaml_fail(y, n, "value '%s' for '%s' does not fit in a 64-bit integer", s, what);
        digits++;
    }
    if (!digits)
        return kb_yaml_fail(y, n, "expected an integer for '%s', got '%s'", what, s);
    if (!neg && v == INT64_MIN)
        return kb_yaml_fail(y, n, "value '%s' for '%s' does not fit in a 64-bit integer", s, what);
    *out = neg ? v : -v;
    return KB_OK;
}

kb_status kb_yaml_int_range(const kb_yctx *y, const yaml_node_t *n, const char *what,
                            int64_t lo, int64_t hi, int64_t *out)
{
    kb_status st = kb_yaml_int(y, n, what, out);
    if (st) return st;
    if (*out < lo || *out > hi) {
        if (hi == INT64_MAX)
            return kb_yaml_fail(y, n, "'%s' must be >= %lld, got %lld", what, (long long)lo, (long long)*out);
        return kb_yaml_fail(y, n, "'%s' must be between %lld and %lld, got %lld", what,
                            (long long)lo, (long long)hi, (long long)*out);
    }
    return KB_OK;
}

kb_status kb_yaml_number(const kb_yctx *y, const yaml_node_t *n, const char *what, double *out)
{
    if (!n || n->type != YAML_SCALAR_NODE || n->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return kb_yaml_fail(y, n, "expected a number for '%s'", what);
    const char *s = (const char *)n->data.scalar.value;
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (!*s || *end || errno || !isfinite(v))
        return kb_yaml_fail(y, n, "expected a finite number for '%s', got '%s'", what, s);
    *out = v;
    return KB_OK;
}

kb_status kb_yaml_check_axis(const kb_yctx *y, const yaml_node_t *n, const char *what)
{
    if (!n || n->type == YAML_MAPPING_NODE || kb_yaml_is_null(n))
        return kb_yaml_fail(y, n, "expected a list or a scalar for '%s'", what);
    if (kb_yaml_len(n) == 0)
        return kb_yaml_fail(y, n, "empty axis '%s'", what);
    return KB_OK;
}

kb_status kb_yaml_precheck(const char *text, const char *name, const char *what, int max_depth, long max_nodes,
                           kb_sb *err)
{
    yaml_parser_t p;
    yaml_event_t ev;
    if (!yaml_parser_initialize(&p))
        return KB_ERR_INTERNAL;
    yaml_parser_set_input_string(&p, (const unsigned char *)text, strlen(text));
    kb_status st = KB_OK;
    int depth = 0, docs = 0;
    long nodes = 0;
    for (int done = 0; !done && st == KB_OK;) {
        if (!yaml_parser_parse(&p, &ev))
            break;                                /* the tree builder reports syntax errors */
        int line = (int)ev.start_mark.line + 1, col = (int)ev.start_mark.column + 1;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = 1; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                kb_sb_printf(err, "%s:%d:%d: a second YAML document; %s is one document", name, line, col, what);
                st = KB_ERR_INPUT;
            }
            break;
        case YAML_SEQUENCE_START_EVENT: case YAML_MAPPING_START_EVENT:
            nodes++;
            if (++depth > max_depth) {
                kb_sb_printf(err, "%s:%d:%d: nested more than %d levels deep", name, line, col, max_depth);
                st = KB_ERR_INPUT;
            }
            break;
        case YAML_SCALAR_EVENT: case YAML_ALIAS_EVENT: nodes++; break;
        case YAML_SEQUENCE_END_EVENT: case YAML_MAPPING_END_EVENT: depth--; break;
        default: break;
        }
        if (nodes > max_nodes && st == KB_OK) {
            kb_sb_printf(err, "%s:%d:%d: more than %ld YAML nodes", name, line, col, max_nodes);
            st = KB_ERR_INPUT;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return st;
}

kb_status kb_yaml_load_doc(const char *text, const char *name, const char *what, int max_depth, long max_nodes,
                           yaml_document_t *doc, kb_sb *err)
{
    kb_status st = kb_yaml_precheck(text, name, what, max_depth, max_nodes, err);   /* before any tree */
    if (st != KB_OK)
        return st;
    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) {
        kb_sb_printf(err, "%s: cannot initialise the YAML parser", name);
        return KB_ERR_INTERNAL;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    if (!yaml_parser_load(&parser, doc)) {
        kb_sb_clear(err);
        kb_sb_printf(err, "%s:%d:%d: YAML: %s", name, (int)parser.problem_mark.line + 1,
                     (int)parser.problem_mark.column + 1, parser.problem ? parser.problem : "parse error");
        if (parser.context)
            kb_sb_printf(err, " (%s at %d:%d)", parser.context, (int)parser.context_mark.line + 1,
                         (int)parser.context_mark.column + 1);
        st = KB_ERR_INPUT;
    }
    yaml_parser_delete(&parser);
    return st;
}
