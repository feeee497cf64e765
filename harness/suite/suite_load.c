/* suite_load.c - load a YAML suite into a validated kb_suite (see suite_load.h).
 *
 * libyaml builds the document tree (with line/column marks); this file walks it once,
 * top level first (suite, description, defaults, shapes), then each benchmark entry.
 * Shapes are read in suite_shape.c, entries in suite_entry.c. Every check reports the
 * node it failed on.
 */
#include "suite/suite_load.h"

#include "suite/suite_entry.h"
#include "suite/suite_loader.h"
#include "suite/suite_shape.h"

#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const launch_names[] = { "eager", "graph" };

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
    s->name = kb_suite_xstrdup(str);
    s->description = kb_suite_xstrdup("");
    if ((v = kb_yaml_get(y, root, "description"))) {
        if ((st = kb_yaml_scalar(y, v, "description", &str))) return st;
        free(s->description);
        s->description = kb_suite_xstrdup(str);
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
    yaml_document_t doc;
    kb_measure_settings md = KB_MEASURE_DEFAULTS;
    kb_loader L = { 0 };

    memset(out, 0, sizeof *out);
    out->source = kb_suite_xstrdup(display_name);
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

    kb_sb_clear(err);
    st = kb_yaml_load_doc(text, display_name, "a suite", KB_SUITE_MAX_DEPTH, KB_SUITE_MAX_NODES, &doc, err);
    if (st == KB_OK) {
        st = load_root(&L, yaml_document_get_root_node(&doc));
        yaml_document_delete(&doc);
    }
    free(L.presets);
    free(L.preset_order);
    free(L.pads);
    free(L.launches);
    if (st) kb_suite_free(out);
    return st;
}

/* Read the suite file: a regular file of at most KB_SUITE_MAX_BYTES (opened without
 * blocking: core/fsutil.h) with no NUL byte. */
static kb_status read_suite(const char *path, kb_sb *text, kb_sb *err)
{
    char *buf = NULL;
    kb_status rc = kb_fs_read_text(path, KB_SUITE_MAX_BYTES, "suite", &buf, err);
    if (rc == KB_OK)
        kb_sb_append(text, buf, strlen(buf));
    free(buf);
    return rc;
}

kb_status kb_suite_load(const char *path, const kb_family *const *fams, int n_fams,
                        kb_suite *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    kb_sb text;
    kb_sb_init(&text);
    kb_sb_clear(err);
    kb_status st = read_suite(path, &text, err);
    if (st == KB_OK)
        st = kb_suite_load_text(text.s, path, fams, n_fams, out, err);
    kb_sb_free(&text);
    return st;
}

