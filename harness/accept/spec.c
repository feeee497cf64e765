/* spec.c - acceptance specs (see spec.h): the test table, the YAML reader, matching. */
#include "accept/spec.h"

#include "core/fsutil.h"
#include "core/paths.h"
#include "suite/suite_yaml.h"

#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the tests ---- */

static const struct {
    const char *name, *unit;
    kb_acc_kind kind;
    int dtype;
} tests[] = {
    [KB_ACC_CORRECTNESS] = { "correctness", "", KB_ACC_KIND_CHECK, -1 },
    [KB_ACC_MEM_BW] = { "memory_bandwidth", "GB/s", KB_ACC_KIND_FLOOR, -1 },
    [KB_ACC_GEMM_FP32] = { "gemm_fp32", "TFLOPS", KB_ACC_KIND_FLOOR, KB_DT_FP32 },
    [KB_ACC_GEMM_TF32] = { "gemm_tf32", "TFLOPS", KB_ACC_KIND_FLOOR, KB_DT_TF32 },
    [KB_ACC_GEMM_FP16] = { "gemm_fp16", "TFLOPS", KB_ACC_KIND_FLOOR, KB_DT_FP16 },
    [KB_ACC_GEMM_BF16] = { "gemm_bf16", "TFLOPS", KB_ACC_KIND_FLOOR, KB_DT_BF16 },
    [KB_ACC_GEMM_INT8] = { "gemm_int8", "TOPS", KB_ACC_KIND_FLOOR, KB_DT_INT8 },
    [KB_ACC_GEMM_FP8] = { "gemm_fp8", "TFLOPS", KB_ACC_KIND_FLOOR, KB_DT_FP8E4M3 },
    [KB_ACC_LAUNCH] = { "launch_latency", "us", KB_ACC_KIND_LIMIT, -1 },
    [KB_ACC_CLOCKS] = { "clocks", "", KB_ACC_KIND_CHECK, -1 },
    [KB_ACC_ECC] = { "ecc", "", KB_ACC_KIND_CHECK, -1 },
    [KB_ACC_ROW_REMAP] = { "row_remap", "", KB_ACC_KIND_CHECK, -1 },
    [KB_ACC_PCIE] = { "pcie_link", "", KB_ACC_KIND_CHECK, -1 },
    [KB_ACC_COLL] = { "collectives", "", KB_ACC_KIND_CHECK, -1 },
    [KB_ACC_BUSBW] = { "allreduce_busbw", "GB/s", KB_ACC_KIND_FLOOR, -1 },
    [KB_ACC_COLL_BUSY] = { "coll_busy", "us", KB_ACC_KIND_LIMIT, -1 },
    [KB_ACC_P2P] = { "p2p_bandwidth", "GB/s", KB_ACC_KIND_FLOOR, -1 },
    [KB_ACC_NVLINK] = { "nvlink", "", KB_ACC_KIND_CHECK, -1 },
    [KB_ACC_TOPOLOGY] = { "topology", "", KB_ACC_KIND_CHECK, -1 },
};
_Static_assert(sizeof tests / sizeof tests[0] == KB_ACC_TEST_COUNT, "one row per kb_acc_test");

const char *kb_acc_test_name(kb_acc_test t) { return tests[t].name; }
const char *kb_acc_test_unit(kb_acc_test t) { return tests[t].unit; }
kb_acc_kind kb_acc_test_kind(kb_acc_test t) { return tests[t].kind; }
int kb_acc_test_dtype(kb_acc_test t) { return tests[t].dtype; }
int kb_acc_test_is_system(kb_acc_test t) { return t >= KB_ACC_FIRST_SYSTEM; }

int kb_acc_test_parse(const char *name)
{
    for (int i = 0; i < KB_ACC_TEST_COUNT; i++)
        if (!strcmp(tests[i].name, name))
            return i;
    return -1;
}

/* ---- the YAML reader ---- */

static const char *const top_keys[] = { "spec", "sku", "match", "thresholds", NULL };
static const char *const match_keys[] = { "pci_device_id", "name", "sm", "sm_count", NULL };
static const char *const floor_keys[] = { "reference", "fraction", "unit", "source", NULL };
static const char *const limit_keys[] = { "limit", "unit", "source", NULL };

/* A scalar copied into out[n]; error when longer. */
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

/* A PCI device id: four hex digits, with or without 0x ("2330", 0x2330). */
static kb_status pci_id(const kb_yctx *y, const yaml_node_t *n, unsigned *out)
{
    const char *s;
    kb_status st = kb_yaml_scalar(y, n, "pci_device_id", &s);
    if (st)
        return st;
    const char *p = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? s + 2 : s;
    if (strlen(p) != 4 || strspn(p, "0123456789abcdefABCDEF") != 4)
        return kb_yaml_fail(y, n, "pci_device_id '%s': expected four hex digits (0x2330)", s);
    *out = (unsigned)strtoul(p, NULL, 16);
    return KB_OK;
}

/* Lower case, every run of punctuation or space as one space, trimmed. */
static void normalise(const char *in, char *out, size_t size)
{
    size_t k = 0;
    int space = 1;
    for (const char *p = in; *p && k + 1 < size; p++) {
        unsigned char ch = (unsigned char)*p;
        if (isalnum(ch)) {
            out[k++] = (char)tolower(ch);
            space = 0;
        } else if (!space) {
            out[k++] = ' ';
            space = 1;
        }
    }
    while (k > 0 && out[k - 1] == ' ')
        k--;
    out[k] = 0;
}

static kb_status load_match_lists(const kb_yctx *y, const yaml_node_t *m, kb_acc_spec *s)
{
    kb_status st;
    const yaml_node_t *v;
    if ((v = kb_yaml_get(y, m, "pci_device_id"))) {
        if ((st = kb_yaml_check_axis(y, v, "pci_device_id")))
            return st;
        if (kb_yaml_len(v) > KB_ACC_MAX_MATCH)
            return kb_yaml_fail(y, v, "at most %d PCI device ids", KB_ACC_MAX_MATCH);
        for (int i = 0; i < kb_yaml_len(v); i++)
            if ((st = pci_id(y, kb_yaml_item(y, v, i), &s->pci_ids[s->n_pci_ids++])))
                return st;
    }
    if ((v = kb_yaml_get(y, m, "name"))) {
        if ((st = kb_yaml_check_axis(y, v, "name")))
            return st;
        if (kb_yaml_len(v) > KB_ACC_MAX_MATCH)
            return kb_yaml_fail(y, v, "at most %d names", KB_ACC_MAX_MATCH);
        for (int i = 0; i < kb_yaml_len(v); i++) {
            const yaml_node_t *it = kb_yaml_item(y, v, i);
            char raw[64];
            if ((st = copy_scalar(y, it, "name", raw, sizeof raw)))
                return st;
            normalise(raw, s->names[s->n_names], sizeof s->names[0]);
            if (!s->names[s->n_names++][0])
                return kb_yaml_fail(y, it, "name '%s' has no letter or digit", raw);
        }
    }
    return KB_OK;
}

static kb_status load_match(const kb_yctx *y, const yaml_node_t *m, kb_acc_spec *s)
{
    kb_status st = kb_yaml_check_map(y, m, "'match'", match_keys);
    if (st || (st = load_match_lists(y, m, s)))
        return st;
    const yaml_node_t *v;
    int64_t n;
    if ((v = kb_yaml_get(y, m, "sm"))) {
        if ((st = kb_yaml_int_range(y, v, "sm", 50, 200, &n)))
            return st;
        if (!kb_arch_runs_any((int)n))
            return kb_yaml_fail(y, v, "sm %lld: no architecture of kbench's runs on compute capability %lld.%lld "
                                "(core/arch.h)", (long long)n, (long long)n / 10, (long long)n % 10);
        s->sm = (int)n;
    }
    if ((v = kb_yaml_get(y, m, "sm_count"))) {
        if ((st = kb_yaml_int_range(y, v, "sm_count", 1, 4096, &n)))
            return st;
        s->sm_count = (int)n;
    }
    if (!s->n_pci_ids && !s->n_names)
        return kb_yaml_fail(y, m, "'match' needs a pci_device_id or a name "
                            "(a spec without 'match' is the generic one)");
    if (s->n_names && !s->sm)
        return kb_yaml_fail(y, m, "'match' by name needs 'sm' (the compute capability x10) as well");
    return KB_OK;
}

/* The common keys of a threshold: unit (must be the test's) and source (required). */
static kb_status load_unit_source(const kb_yctx *y, const yaml_node_t *v, kb_acc_test t, kb_acc_threshold *th)
{
    kb_status st;
    const yaml_node_t *u = kb_yaml_get(y, v, "unit");
    char unit[16];
    if (u && (st = copy_scalar(y, u, "unit", unit, sizeof unit)))
        return st;
    if (u && strcmp(unit, kb_acc_test_unit(t)))
        return kb_yaml_fail(y, u, "%s is measured in %s, not '%s'", kb_acc_test_name(t), kb_acc_test_unit(t), unit);
    const yaml_node_t *src = kb_yaml_get(y, v, "source");
    if (!src)
        return kb_yaml_fail(y, v, "threshold '%s' needs a 'source' (datasheet, DCGM golden value or kbench "
                            "measurement)", kb_acc_test_name(t));
    return copy_scalar(y, src, "source", th->source, sizeof th->source);
}

static kb_status load_floor(const kb_yctx *y, const yaml_node_t *v, kb_acc_test t, kb_acc_threshold *th)
{
    kb_status st = kb_yaml_check_map(y, v, "a floor threshold", floor_keys);
    if (st || (st = load_unit_source(y, v, t, th)))
        return st;
    const yaml_node_t *r = kb_yaml_get(y, v, "reference"), *f = kb_yaml_get(y, v, "fraction");
    if (!r || !f)
        return kb_yaml_fail(y, v, "threshold '%s' needs 'reference' and 'fraction'", kb_acc_test_name(t));
    if (r->type == YAML_SCALAR_NODE && !strcmp((const char *)r->data.scalar.value, "peak"))
        th->from_peak = 1;
    else if ((st = kb_yaml_number(y, r, "reference", &th->reference)))
        return st;
    else if (!(th->reference > 0))
        return kb_yaml_fail(y, r, "reference must be positive (or 'peak')");
    if ((st = kb_yaml_number(y, f, "fraction", &th->fraction)))
        return st;
    if (!(th->fraction > 0 && th->fraction <= 1.5))
        return kb_yaml_fail(y, f, "fraction %g outside (0, 1.5]", th->fraction);
    return KB_OK;
}

static kb_status load_limit(const kb_yctx *y, const yaml_node_t *v, kb_acc_test t, kb_acc_threshold *th)
{
    kb_status st = kb_yaml_check_map(y, v, "a limit threshold", limit_keys);
    if (st || (st = load_unit_source(y, v, t, th)))
        return st;
    const yaml_node_t *l = kb_yaml_get(y, v, "limit");
    if (!l)
        return kb_yaml_fail(y, v, "threshold '%s' needs 'limit'", kb_acc_test_name(t));
    if ((st = kb_yaml_number(y, l, "limit", &th->limit)))
        return st;
    if (!(th->limit > 0))
        return kb_yaml_fail(y, l, "limit must be positive");
    return KB_OK;
}

static kb_status load_thresholds(const kb_yctx *y, const yaml_node_t *m, kb_acc_spec *s)
{
    kb_status st = kb_yaml_check_map(y, m, "'thresholds'", NULL);
    if (st)
        return st;
    for (int i = 0; i < kb_yaml_map_len(m); i++) {
        yaml_node_t *k, *v;
        kb_yaml_map_pair(y, m, i, &k, &v);
        const char *name = (const char *)k->data.scalar.value;
        int t = kb_acc_test_parse(name);
        if (t < 0 || kb_acc_test_kind((kb_acc_test)t) == KB_ACC_KIND_CHECK || kb_acc_test_is_system((kb_acc_test)t))
            return kb_yaml_fail(y, k, "unknown threshold '%s' (expected memory_bandwidth, gemm_fp32, gemm_tf32, "
                                "gemm_fp16, gemm_bf16, gemm_int8, gemm_fp8 or launch_latency)", name);
        kb_acc_threshold *th = &s->t[t];
        st = kb_acc_test_kind((kb_acc_test)t) == KB_ACC_KIND_FLOOR ? load_floor(y, v, (kb_acc_test)t, th)
                                                                   : load_limit(y, v, (kb_acc_test)t, th);
        if (st)
            return st;
        th->have = 1;
    }
    return KB_OK;
}

static kb_status load_root(const kb_yctx *y, const yaml_node_t *root, kb_acc_spec *s)
{
    if (!root)
        return kb_yaml_fail(y, NULL, "empty spec (expected a mapping with 'spec', 'sku' and 'thresholds')");
    kb_status st = kb_yaml_check_map(y, root, "the spec", top_keys);
    if (st)
        return st;
    const yaml_node_t *v;
    if (!(v = kb_yaml_get(y, root, "spec")))
        return kb_yaml_fail(y, root, "missing required key 'spec' (the spec's name)");
    if ((st = copy_scalar(y, v, "spec", s->name, sizeof s->name)))
        return st;
    if (!(v = kb_yaml_get(y, root, "sku")))
        return kb_yaml_fail(y, root, "missing required key 'sku'");
    if ((st = copy_scalar(y, v, "sku", s->sku, sizeof s->sku)))
        return st;
    if (!(v = kb_yaml_get(y, root, "thresholds")))
        return kb_yaml_fail(y, root, "missing required key 'thresholds'");
    if ((st = load_thresholds(y, v, s)))
        return st;
    v = kb_yaml_get(y, root, "match");
    s->generic = !v;
    return v ? load_match(y, v, s) : KB_OK;
}

kb_status kb_acc_spec_parse(const char *text, const char *display_name, kb_acc_spec *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    snprintf(out->file, sizeof out->file, "%s", display_name);
    yaml_document_t doc;
    kb_sb_clear(err);
    kb_status st = kb_yaml_load_doc(text, display_name, "a spec", 16, 100000, &doc, err);
    if (st != KB_OK)
        return st;
    kb_yctx y = { &doc, display_name, err };
    st = load_root(&y, yaml_document_get_root_node(&doc), out);
    yaml_document_delete(&doc);
    return st;
}

kb_status kb_acc_spec_load(const char *path, kb_acc_spec *out, kb_sb *err)
{
    char *text = NULL;
    kb_sb_clear(err);
    /* opened without blocking, a regular text file of at most 1 MiB (core/fsutil.h) */
    kb_status st = kb_fs_read_text(path, KB_LIMIT_SPEC_BYTES, "spec", &text, err);
    if (st != KB_OK)
        return st;
    st = kb_acc_spec_parse(text, path, out, err);
    free(text);
    return st;
}

/* ---- matching ---- */

int kb_acc_spec_matches(const kb_acc_spec *s, const kb_acc_gpu *g, const char **how)
{
    if (s->generic)
        return 0;
    if (g->pci_device_id && s->n_pci_ids) {
        for (int i = 0; i < s->n_pci_ids; i++)
            if (s->pci_ids[i] == g->pci_device_id) {
                if (how)
                    *how = "pci device id";
                return 1;
            }
        return 0;
    }
    if (!s->n_names || s->sm != g->sm || (s->sm_count && s->sm_count != g->sm_count))
        return 0;
    char name[160], padded[164];
    normalise(g->name ? g->name : "", name, sizeof name);
    snprintf(padded, sizeof padded, " %s ", name);
    for (int i = 0; i < s->n_names; i++) {
        char phrase[68];
        snprintf(phrase, sizeof phrase, " %s ", s->names[i]);
        if (strstr(padded, phrase)) {
            if (how)
                *how = "name + compute capability + SM count";
            return 1;
        }
    }
    return 0;
}

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void free_names(char **names, int n)
{
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

/* The *.yaml names of dir, sorted (caller frees each and the array); -1 when unreadable,
 * -2 when out of memory. */
static int list_specs(const char *dir, char ***out)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0, cap = 16;
    char **names = malloc(cap * sizeof *names);
    struct dirent *e;
    int oom = !names;
    while (!oom && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.' || len < 6 || strcmp(e->d_name + len - 5, ".yaml"))
            continue;
        if (n == cap) {
            char **grown = realloc(names, (size_t)(cap *= 2) * sizeof *names);
            if (!(oom = !grown))
                names = grown;
        }
        if (!oom && !(oom = !(names[n] = strdup(e->d_name))))
            n++;
    }
    closedir(d);
    if (oom) {
        free_names(names, n);
        return -2;
    }
    qsort(names, n, sizeof *names, cmp_names);
    *out = names;
    return n;
}

kb_status kb_acc_spec_find(const char *dir, const kb_acc_gpu *g, kb_acc_spec *out, const char **how, kb_sb *err)
{
    char **names = NULL;
    int n = list_specs(dir, &names);
    kb_sb_clear(err);
    if (n < 0) {
        kb_sb_printf(err, n == -1 ? "%s: cannot read the spec directory" : "%s: out of memory listing the specs", dir);
        return n == -1 ? KB_ERR_SETUP : KB_ERR_OOM;
    }
    kb_acc_spec s, generic;
    int have_generic = 0, found = 0;
    kb_status st = KB_OK;
    for (int i = 0; i < n && !found && st == KB_OK; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if ((st = kb_acc_spec_load(path, &s, err)) != KB_OK)
            break;
        if (kb_acc_spec_matches(&s, g, how)) {
            *out = s;
            found = 1;
        } else if (s.generic && !have_generic) {
            generic = s;
            have_generic = 1;
        }
    }
    free_names(names, n);
    if (st != KB_OK || found)
        return st;
    if (!have_generic) {
        kb_sb_printf(err, "%s: no spec matches %s (sm_%d, %d SMs) and there is no generic spec", dir,
                     g->name ? g->name : "?", g->sm, g->sm_count);
        return KB_ERR_SETUP;
    }
    *out = generic;
    if (how)
        *how = "generic: no SKU spec matched";
    return KB_OK;
}

const char *kb_acc_spec_dir(void)
{
    static char dir[1024];
    if (!dir[0])
        snprintf(dir, sizeof dir, "%s/data/acceptance", kb_data_root());
    return dir;
}
