/* system.c - system specs (see system.h): the YAML reader and the lookup by name. */
#include "accept/system.h"

#include "core/fsutil.h"
#include "core/paths.h"
#include "suite/suite_yaml.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const topo_names[] = { "any", "nvswitch", "pcie" };
_Static_assert(sizeof topo_names / sizeof topo_names[0] == KB_SYS_TOPO_COUNT, "one name per kb_sys_topo");

const char *kb_sys_topo_name(kb_sys_topo t) { return t < KB_SYS_TOPO_COUNT ? topo_names[t] : "?"; }

static const char *const top_keys[] = { "system", "description", "gpus", "topology", "nvlink", "sweep", "emu_sweep",
                                        "thresholds", NULL };
static const char *const topo_keys[] = { "expect", "source", NULL };
static const char *const nvlink_keys[] = { "links", "source", "unknown", NULL };
static const char *const sweep_keys[] = { "min", "max", "factor", NULL };
static const char *const thr_keys[] = { "allreduce_busbw", "p2p_bandwidth", NULL };
static const char *const floor_keys[] = { "reference", "fraction", "unit", "source", "unknown", NULL };

static kb_status copy_scalar(const kb_yctx *y, const yaml_node_t *n, const char *what, char *out, size_t size)
{
    const char *s;
    kb_status st = kb_yaml_scalar(y, n, what, &s);
    if (st)
        return st;
    if (strlen(s) >= size)
        return kb_yaml_fail(y, n, "'%s' is longer than %zu characters", what, size - 1);
    snprintf(out, size, "%s", s);
    return KB_OK;
}

/* The key's scalar into out; a required key that is missing is an error naming it. */
static kb_status need(const kb_yctx *y, const yaml_node_t *m, const char *key, char *out, size_t size)
{
    const yaml_node_t *v = kb_yaml_get(y, m, key);
    if (!v)
        return kb_yaml_fail(y, m, "missing required key '%s'", key);
    return copy_scalar(y, v, key, out, size);
}

static kb_status load_topology(const kb_yctx *y, const yaml_node_t *m, kb_acc_system *s)
{
    char expect[32];
    kb_status st = kb_yaml_check_map(y, m, "'topology'", topo_keys);
    if (st || (st = need(y, m, "expect", expect, sizeof expect)))
        return st;
    int t = -1;
    for (int i = 0; i < KB_SYS_TOPO_COUNT; i++)
        if (!strcmp(expect, topo_names[i]))
            t = i;
    if (t < 0)
        return kb_yaml_fail(y, kb_yaml_get(y, m, "expect"), "topology '%s': expected nvswitch, pcie or any", expect);
    s->topology = (kb_sys_topo)t;
    return need(y, m, "source", s->topology_source, sizeof s->topology_source);
}

static kb_status load_nvlink(const kb_yctx *y, const yaml_node_t *m, kb_acc_system *s)
{
    kb_status st = kb_yaml_check_map(y, m, "'nvlink'", nvlink_keys);
    if (st)
        return st;
    const yaml_node_t *u = kb_yaml_get(y, m, "unknown"), *l = kb_yaml_get(y, m, "links");
    if (!u == !l)
        return kb_yaml_fail(y, m, "'nvlink' needs either 'links' (with 'source') or 'unknown' (why)");
    if (u)
        return copy_scalar(y, u, "unknown", s->nvlink_source, sizeof s->nvlink_source);
    int64_t n;
    if ((st = kb_yaml_int_range(y, l, "links", 0, 64, &n)))
        return st;
    s->nvlink_links = (int)n;
    return need(y, m, "source", s->nvlink_source, sizeof s->nvlink_source);
}

static kb_status load_size(const kb_yctx *y, const yaml_node_t *m, const char *key, uint64_t *out)
{
    char text[32], why[160];
    kb_status st = need(y, m, key, text, sizeof text);
    if (st)
        return st;
    if (kb_coll_parse_size(text, key, out, why, sizeof why) != 0)
        return kb_yaml_fail(y, kb_yaml_get(y, m, key), "%s", why);
    return KB_OK;
}

static kb_status load_sweep(const kb_yctx *y, const yaml_node_t *m, const char *what, kb_coll_sweep *w)
{
    kb_status st = kb_yaml_check_map(y, m, what, sweep_keys);
    if (st || (st = load_size(y, m, "min", &w->min_bytes)) || (st = load_size(y, m, "max", &w->max_bytes)))
        return st;
    int64_t f;
    const yaml_node_t *fv = kb_yaml_get(y, m, "factor");
    if (!fv)
        return kb_yaml_fail(y, m, "%s needs 'factor' (nccl-tests' -f)", what);
    if ((st = kb_yaml_int_range(y, fv, "factor", 2, 1024, &f)))
        return st;
    w->factor = (uint64_t)f;
    uint64_t sizes[KB_COLL_MAX_SIZES];
    char why[200];
    if (kb_coll_sweep_sizes(w, sizes, KB_COLL_MAX_SIZES, why, sizeof why) < 0)
        return kb_yaml_fail(y, m, "%s: %s", what, why);
    return KB_OK;
}

/* A floor threshold (reference, fraction, unit, source) or {unknown: why}. */
static kb_status load_floor(const kb_yctx *y, const yaml_node_t *v, kb_acc_test t, kb_acc_threshold *th, char *unk,
                            size_t unk_size)
{
    kb_status st = kb_yaml_check_map(y, v, "a system threshold", floor_keys);
    if (st)
        return st;
    const yaml_node_t *u = kb_yaml_get(y, v, "unknown");
    if (u)
        return kb_yaml_map_len(v) != 1 ? kb_yaml_fail(y, v, "'unknown' stands alone: a figure is given or it is not")
                                       : copy_scalar(y, u, "unknown", unk, unk_size);
    const yaml_node_t *r = kb_yaml_get(y, v, "reference"), *f = kb_yaml_get(y, v, "fraction");
    const yaml_node_t *un = kb_yaml_get(y, v, "unit");
    if (!r || !f)
        return kb_yaml_fail(y, v, "threshold '%s' needs 'reference' and 'fraction' (or 'unknown')",
                            kb_acc_test_name(t));
    char unit[16];
    if (un && (st = copy_scalar(y, un, "unit", unit, sizeof unit)))
        return st;
    if (un && strcmp(unit, kb_acc_test_unit(t)))
        return kb_yaml_fail(y, un, "%s is measured in %s, not '%s'", kb_acc_test_name(t), kb_acc_test_unit(t), unit);
    if ((st = kb_yaml_number(y, r, "reference", &th->reference)) || (st = kb_yaml_number(y, f, "fraction", &th->fraction)))
        return st;
    if (!(th->reference > 0))
        return kb_yaml_fail(y, r, "reference must be positive");
    if (!(th->fraction > 0 && th->fraction <= 1.5))
        return kb_yaml_fail(y, f, "fraction %g outside (0, 1.5]", th->fraction);
    if ((st = need(y, v, "source", th->source, sizeof th->source)))
        return st;
    th->have = 1;
    return KB_OK;
}

static kb_status load_thresholds(const kb_yctx *y, const yaml_node_t *m, kb_acc_system *s)
{
    kb_status st = kb_yaml_check_map(y, m, "'thresholds'", thr_keys);
    const yaml_node_t *b = kb_yaml_get(y, m, "allreduce_busbw"), *p = kb_yaml_get(y, m, "p2p_bandwidth");
    if (st || !b || !p)
        return st ? st : kb_yaml_fail(y, m, "'thresholds' needs allreduce_busbw and p2p_bandwidth (each a figure "
                                      "with its source, or 'unknown')");
    if ((st = load_floor(y, b, KB_ACC_BUSBW, &s->busbw, s->busbw_unknown, sizeof s->busbw_unknown)))
        return st;
    return load_floor(y, p, KB_ACC_P2P, &s->p2p, s->p2p_unknown, sizeof s->p2p_unknown);
}

static kb_status load_root(const kb_yctx *y, const yaml_node_t *root, kb_acc_system *s)
{
    if (!root)
        return kb_yaml_fail(y, NULL, "empty system spec (expected a mapping with 'system' and 'thresholds')");
    kb_status st = kb_yaml_check_map(y, root, "the system spec", top_keys);
    if (st || (st = need(y, root, "system", s->name, sizeof s->name)) ||
        (st = need(y, root, "description", s->description, sizeof s->description)))
        return st;
    const yaml_node_t *v;
    int64_t n;
    if ((v = kb_yaml_get(y, root, "gpus")) && (st = kb_yaml_int_range(y, v, "gpus", 0, 1024, &n)))
        return st;
    s->gpus = v ? (int)n : 0;
    if (!(v = kb_yaml_get(y, root, "topology")))
        return kb_yaml_fail(y, root, "missing required key 'topology' ({expect: nvswitch|pcie|any, source})");
    if ((st = load_topology(y, v, s)))
        return st;
    if (!(v = kb_yaml_get(y, root, "nvlink")))
        return kb_yaml_fail(y, root, "missing required key 'nvlink' ({links, source} or {unknown})");
    if ((st = load_nvlink(y, v, s)))
        return st;
    if (!(v = kb_yaml_get(y, root, "sweep")))
        return kb_yaml_fail(y, root, "missing required key 'sweep' ({min, max, factor}: nccl-tests' -b -e -f)");
    if ((st = load_sweep(y, v, "'sweep'", &s->sweep)))
        return st;
    s->emu_sweep = (kb_coll_sweep){ 1024, 1024 * 1024, 0, 4 };
    if ((v = kb_yaml_get(y, root, "emu_sweep")) && (st = load_sweep(y, v, "'emu_sweep'", &s->emu_sweep)))
        return st;
    if (!(v = kb_yaml_get(y, root, "thresholds")))
        return kb_yaml_fail(y, root, "missing required key 'thresholds'");
    return load_thresholds(y, v, s);
}

kb_status kb_acc_system_parse(const char *text, const char *display_name, kb_acc_system *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    out->nvlink_links = -1;
    snprintf(out->file, sizeof out->file, "%s", display_name);
    kb_sb_clear(err);
    yaml_document_t doc;
    kb_status st = kb_yaml_load_doc(text, display_name, "a system spec", 16, 100000, &doc, err);
    if (st != KB_OK)
        return st;
    kb_yctx y = { &doc, display_name, err };
    st = load_root(&y, yaml_document_get_root_node(&doc), out);
    yaml_document_delete(&doc);
    return st;
}

kb_status kb_acc_system_load(const char *path, kb_acc_system *out, kb_sb *err)
{
    char *text = NULL;
    kb_sb_clear(err);
    kb_status st = kb_fs_read_text(path, KB_LIMIT_SPEC_BYTES, "system spec", &text, err);
    if (st != KB_OK)
        return st;
    st = kb_acc_system_parse(text, path, out, err);
    free(text);
    return st;
}

/* The system names of dir ("a, b, c") into err after what. */
static void list_systems(const char *dir, kb_sb *err)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    while (d && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] != '.' && len > 5 && !strcmp(e->d_name + len - 5, ".yaml"))
            kb_sb_printf(err, "%s%.*s", n++ ? ", " : "", (int)(len - 5), e->d_name);
    }
    if (d)
        closedir(d);
    if (!n)
        kb_sb_printf(err, "none");
}

kb_status kb_acc_system_find(const char *name, kb_acc_system *out, kb_sb *err)
{
    size_t len = strlen(name);
    if (strchr(name, '/') || (len > 5 && !strcmp(name + len - 5, ".yaml")))
        return kb_acc_system_load(name, out, err);
    char dir[1100], path[1400];
    snprintf(dir, sizeof dir, "%s/data/acceptance/systems", kb_data_root());
    snprintf(path, sizeof path, "%s/%s.yaml", dir, name);
    if (!len || strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789-_.") != len || access(path, F_OK) != 0) {
        kb_sb_clear(err);
        kb_sb_printf(err, "--system %s: no such system (systems in %s: ", name, dir);
        list_systems(dir, err);
        kb_sb_printf(err, "; or give a spec file's path)");
        return KB_ERR_INPUT;
    }
    return kb_acc_system_load(path, out, err);
}
