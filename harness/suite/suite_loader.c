/* suite_loader.c - what the suite loader's files share (see suite_loader.h). */
#include "suite/suite_loader.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *kb_suite_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) kb_out_of_memory("the suite", (n ? n : 1) * size);
    return p;
}

char *kb_suite_xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p) kb_out_of_memory("the suite", strlen(s) + 1);
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
    if (!w) kb_out_of_memory("the suite's warnings", (size_t)(s->n_warnings + 1) * sizeof *w);
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

static const char *const measure_keys[] = { "warmup", "min_samples", "max_samples", "max_noise", "timeout_s",
                                            "l2", "warmup_s", "throttle_threshold", "throttle_recovery_s", NULL };

/* One numeric setting, checked against its range in kb_measure_fields. */
static kb_status load_measure_field(kb_yctx *y, const yaml_node_t *v, const kb_measure_field *f,
                                    kb_measure_settings *m)
{
    double d;
    kb_status st = kb_yaml_number(y, v, f->key, &d);
    if (st)
        return st;
    if (!kb_measure_field_ok(f, d)) {
        char expect[96];
        kb_measure_field_expect(f, expect, sizeof expect);
        return kb_yaml_fail(y, v, "'%s' must be %s, got %.17g", f->key, expect, d);
    }
    kb_measure_field_set(f, m, d);
    return KB_OK;
}

/* Override the fields of m that node sets; the others keep what m had. */
kb_status kb_suite_load_measure(kb_loader *L, const yaml_node_t *node, kb_measure_settings *m)
{
    kb_yctx *y = &L->y;
    kb_status st = kb_yaml_check_map(y, node, "'measure'", measure_keys);
    if (st) return st;
    const yaml_node_t *v;
    for (int i = 0; i < kb_measure_n_fields; i++)
        if ((v = kb_yaml_get(y, node, kb_measure_fields[i].key)) &&
            (st = load_measure_field(y, v, &kb_measure_fields[i], m)))
            return st;
    if ((v = kb_yaml_get(y, node, "l2"))) {
        const char *s;
        if ((st = kb_yaml_scalar(y, v, "l2", &s))) return st;
        if (strcmp(s, "cold") && strcmp(s, "hot"))
            return kb_yaml_fail(y, v, "unknown l2 mode '%s' (expected one of: cold, hot)", s);
        m->l2 = !strcmp(s, "cold") ? KB_L2_COLD : KB_L2_HOT;
    }
    if (m->max_samples > 0 && m->max_samples < m->min_samples)
        return kb_yaml_fail(y, node, "'max_samples' (%d) is below 'min_samples' (%d)", m->max_samples,
                            m->min_samples);
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
        st = kb_yaml_int_range(&L->y, kb_yaml_item(&L->y, node, i), "pad", 0, KB_SUITE_MAX_PAD, &v);
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

