/* suite.c - load a YAML suite into a validated kb_suite (see suite.h).
 *
 * libyaml builds the document tree (with line/column marks); this file walks it once,
 * top level first (suite, description, defaults, shapes), then each benchmark entry.
 * Shapes are read in suite_shape.c, entries in suite_entry.c. Every check reports the node it failed on.
 */
#include "suite/suite.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "suite/suite_internal.h"

static const char *const launch_names[] = { "eager", "graph" };

void *kb_suite_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) abort();
    return p;
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p) abort();
    return p;
}

void kb_suite_warn(kb_loader *L, const yaml_node_t *n, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    kb_suite *s = L->s;
    char **w = realloc(s->warnings, (size_t)(s->n_warnings + 1) * sizeof *w);
    if (!w) abort();
    s->warnings = w;
    kb_sb b;
    kb_sb_init(&b);
    kb_sb_printf(&b, "%s:%d:%d: %s", L->y.file, (int)n->start_mark.line + 1,
                 (int)n->start_mark.column + 1, msg);
    s->warnings[s->n_warnings++] = b.s; /* the buffer's string is ours now */
}

char *kb_suite_join(const char *const *names, int n)
{
    kb_sb b;
    kb_sb_init(&b);
    for (int i = 0; i < n; i++)
        kb_sb_printf(&b, "%s%s", i ? ", " : "", names[i]);
    return b.s;
}

/* ---- measure ---- */

static const char *const measure_keys[] = { "min_samples", "max_noise", "timeout_s", "warmup", "l2", NULL };

/* Override the fields of m that node sets; the others keep what m had. */
kb_status kb_suite_load_measure(kb_loader *L, const yaml_node_t *node, kb_measure *m)
{
    kb_yctx *y = &L->y;
    kb_status st = kb_yaml_check_map(y, node, "'measure'", measure_keys);
    if (st) return st;
    const yaml_node_t *v;
    int64_t i;
    if ((v = kb_yaml_get(y, node, "min_samples"))) {
        if ((st = kb_yaml_int_range(y, v, "min_samples", 1, INT_MAX, &i))) return st;
        m->min_samples = (int)i;
    }
    if ((v = kb_yaml_get(y, node, "warmup"))) {
        if ((st = kb_yaml_int_range(y, v, "warmup", 0, INT_MAX, &i))) return st;
        m->warmup = (int)i;
    }
    if ((v = kb_yaml_get(y, node, "max_noise"))) {
        if ((st = kb_yaml_number(y, v, "max_noise", &m->max_noise))) return st;
        if (m->max_noise < 0)
            return kb_yaml_fail(y, v, "'max_noise' must be >= 0 (a relative noise, 0.005 = 0.5%%)");
    }
    if ((v = kb_yaml_get(y, node, "timeout_s"))) {
        if ((st = kb_yaml_number(y, v, "timeout_s", &m->timeout_s))) return st;
        if (m->timeout_s <= 0)
            return kb_yaml_fail(y, v, "'timeout_s' must be > 0 [seconds]");
    }
    if ((v = kb_yaml_get(y, node, "l2"))) {
        const char *s;
        if ((st = kb_yaml_scalar(y, v, "l2", &s))) return st;
        if (strcmp(s, "cold") && strcmp(s, "hot"))
            return kb_yaml_fail(y, v, "unknown l2 mode '%s' (expected one of: cold, hot)", s);
        m->l2_cold = !strcmp(s, "cold");
    }
    return KB_OK;
}

/* ---- pad and launch axes (shared by defaults and entries) ---- */

kb_status kb_suite_load_pads(kb_loader *L, const yaml_node_t *node, int **out, int *n_out)
{
    kb_status st = kb_yaml_check_axis(&L->y, node, "pad");
    if (st) return st;
    int n = kb_yaml_len(node);
    int *pads = kb_suite_xcalloc((size_t)n, sizeof *pads);
    for (int i = 0; i < n; i++) {
        int64_t v;
        st = kb_yaml_int_range(&L->y, kb_yaml_item(&L->y, node, i), "pad", 0, INT_MAX, &v);
        if (st) { free(pads); return st; }
        pads[i] = (int)v;
    }
    free(*out);
    *out = pads;
    *n_out = n;
    return KB_OK;
}

kb_status kb_suite_load_launches(kb_loader *L, const yaml_node_t *node, kb_launch_mode **out, int *n_out)
{
    kb_status st = kb_yaml_check_axis(&L->y, node, "launch");
    if (st) return st;
    int n = kb_yaml_len(node);
    kb_launch_mode *ls = kb_suite_xcalloc((size_t)n, sizeof *ls);
    for (int i = 0; i < n; i++) {
        const yaml_node_t *it = kb_yaml_item(&L->y, node, i);
        const char *s;
        if ((st = kb_yaml_scalar(&L->y, it, "launch", &s))) goto fail;
        if (!strcmp(s, "eager")) ls[i] = KB_LAUNCH_EAGER;
        else if (!strcmp(s, "graph")) ls[i] = KB_LAUNCH_GRAPH;
        else { st = kb_yaml_fail(&L->y, it, "unknown launch mode '%s' (expected one of: eager, graph)", s); goto fail; }
    }
    free(*out);
    *out = ls;
    *n_out = n;
    return KB_OK;
fail:
    free(ls);
    return st;
}

/* ---- top level ---- */

static const char *const top_keys[] = { "suite", "description", "defaults", "shapes", "benchmarks", NULL };
static const char *const default_keys[] = { "seed", "pad", "launch", "measure", NULL };

static kb_status load_defaults(kb_loader *L, const yaml_node_t *node)
{
    kb_yctx *y = &L->y;
    kb_status st = kb_yaml_check_map(y, node, "'defaults'", default_keys);
    if (st) return st;
    const yaml_node_t *v;
    if ((v = kb_yaml_get(y, node, "seed")) && (st = kb_yaml_int(y, v, "seed", &L->seed))) return st;
    if ((v = kb_yaml_get(y, node, "pad"))) {
        if ((st = kb_suite_load_pads(L, v, &L->pads, &L->n_pads))) return st;
        L->pad_node = v;
    }
    if ((v = kb_yaml_get(y, node, "launch"))) {
        if ((st = kb_suite_load_launches(L, v, &L->launches, &L->n_launches))) return st;
        L->launch_node = v;
    }
    if ((v = kb_yaml_get(y, node, "measure")) && (st = kb_suite_load_measure(L, v, &L->measure))) return st;
    return KB_OK;
}

static kb_status load_root(kb_loader *L, const yaml_node_t *root)
{
    kb_yctx *y = &L->y;
    kb_suite *s = L->s;
    if (!root)
        return kb_yaml_fail(y, NULL, "empty suite (expected a mapping with 'suite' and 'benchmarks')");
    kb_status st = kb_yaml_check_map(y, root, "the suite", top_keys);
    if (st) return st;

    const yaml_node_t *v = kb_yaml_get(y, root, "suite");
    const char *str;
    if (!v) return kb_yaml_fail(y, root, "missing required key 'suite' (the suite's name)");
    if ((st = kb_yaml_scalar(y, v, "suite", &str))) return st;
    s->name = xstrdup(str);
    s->description = xstrdup("");
    if ((v = kb_yaml_get(y, root, "description"))) {
        if ((st = kb_yaml_scalar(y, v, "description", &str))) return st;
        free(s->description);
        s->description = xstrdup(str);
    }

    if ((v = kb_yaml_get(y, root, "defaults")) && (st = load_defaults(L, v))) return st;
    if ((v = kb_yaml_get(y, root, "shapes")) && (st = kb_suite_load_presets(L, v))) return st;

    v = kb_yaml_get(y, root, "benchmarks");
    if (!v) return kb_yaml_fail(y, root, "missing required key 'benchmarks' (the list of entries)");
    if (v->type != YAML_SEQUENCE_NODE)
        return kb_yaml_fail(y, v, "expected a list of entries for 'benchmarks'");
    int n = kb_yaml_len(v);
    if (n == 0) return kb_yaml_fail(y, v, "'benchmarks' is empty");
    s->entries = kb_suite_xcalloc((size_t)n, sizeof *s->entries);
    for (int i = 0; i < n; i++) {
        s->n_entries = i + 1; /* so kb_suite_free sees the entry being filled */
        if ((st = kb_suite_load_entry(L, kb_yaml_item(y, v, i), i, &s->entries[i]))) return st;
    }
    return KB_OK;
}

kb_status kb_suite_load_text(const char *text, const char *display_name,
                             const kb_family *const *fams, int n_fams, kb_suite *out, kb_sb *err)
{
    kb_status st = KB_OK;
    yaml_parser_t parser;
    yaml_document_t doc;
    int have_doc = 0;
    kb_measure md = KB_MEASURE_DEFAULTS;
    kb_loader L = { 0 };

    memset(out, 0, sizeof *out);
    out->source = xstrdup(display_name);
    L.y.doc = &doc;
    L.y.file = display_name;
    L.y.err = err;
    L.s = out;
    L.fams = fams;
    L.n_fams = n_fams;
    L.seed = 1;
    L.measure = md;
    L.pads = kb_suite_xcalloc(1, sizeof *L.pads);        /* pad: [0] */
    L.n_pads = 1;
    L.launches = kb_suite_xcalloc(1, sizeof *L.launches); /* launch: [eager] */
    L.n_launches = 1;
    for (int d = 0; d < KB_DT_COUNT; d++)
        L.dtype_names[d] = kb_dtype_name((kb_dtype)d);
    L.launch_names = launch_names;

    if (!yaml_parser_initialize(&parser)) {
        kb_sb_clear(err);
        kb_sb_printf(err, "%s: cannot initialise the YAML parser", display_name);
        st = KB_ERR_INTERNAL;
        goto fail_parser;
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, strlen(text));
    if (!yaml_parser_load(&parser, &doc)) {
        kb_sb_clear(err);
        kb_sb_printf(err, "%s:%d:%d: YAML: %s", display_name, (int)parser.problem_mark.line + 1,
                     (int)parser.problem_mark.column + 1, parser.problem ? parser.problem : "parse error");
        if (parser.context)
            kb_sb_printf(err, " (%s at %d:%d)", parser.context, (int)parser.context_mark.line + 1,
                         (int)parser.context_mark.column + 1);
        st = KB_ERR_INPUT;
        goto fail;
    }
    have_doc = 1;
    st = load_root(&L, yaml_document_get_root_node(&doc));
fail:
    if (have_doc) yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
fail_parser:
    free(L.presets);
    free(L.pads);
    free(L.launches);
    if (st) kb_suite_free(out);
    return st;
}

kb_status kb_suite_load(const char *path, const kb_family *const *fams, int n_fams,
                        kb_suite *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f) {
        kb_sb_clear(err);
        kb_sb_printf(err, "%s: cannot open suite: %s", path, strerror(errno));
        return KB_ERR_IO;
    }
    kb_sb text;
    kb_sb_init(&text);
    char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0)
        kb_sb_append(&text, buf, n);
    int bad = ferror(f);
    fclose(f);
    kb_status st;
    if (bad) {
        kb_sb_clear(err);
        kb_sb_printf(err, "%s: cannot read suite: %s", path, strerror(errno));
        st = KB_ERR_IO;
    } else if (strlen(text.s) != text.len) {
        kb_sb_clear(err);
        kb_sb_printf(err, "%s: not a text file (contains a NUL byte)", path);
        st = KB_ERR_INPUT;
    } else {
        st = kb_suite_load_text(text.s, path, fams, n_fams, out, err);
    }
    kb_sb_free(&text);
    return st;
}

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
