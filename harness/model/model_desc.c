/* model_desc.c - load and evaluate a model description (see model_desc.h).
 *
 * libyaml builds the tree (marks give line:column); the top level is read first (model,
 * dtype, params, phases), then each op, whose expressions are compiled against the params
 * and phase variables (suite/expr.h) and evaluated once per phase it is modelled in.
 * The op's family, variant, dims and params are checked against the family registry, so
 * a typo fails here, naming its place, rather than as a "missing" op later.
 */
#include "model/model_desc.h"

#include "core/fsutil.h"
#include "core/paths.h"
#include "engine/family.h"
#include "kernels/families.h"
#include "suite/expr.h"
#include "suite/suite_loader.h"
#include "suite/suite_yaml.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *const kb_model_phase_names[KB_PHASE_COUNT] = { "prefill", "decode" };
const char *const kb_model_pvar_names[KB_PV_COUNT] = { "tokens", "seqs", "q_len", "kv_len" };

/* NULL-terminated, for kb_yaml_check_map */
static const char *const phase_keys[] = { "prefill", "decode", NULL };
static const char *const pvar_keys[] = { "tokens", "seqs", "q_len", "kv_len", NULL };

#define MAX_SLOTS (KB_MODEL_MAX_PARAMS + KB_PV_COUNT)
#define DIM_MAX ((int64_t)1 << 40)

typedef struct {
    kb_yctx y;
    kb_model *m;
    kb_expr_slot slots[MAX_SLOTS];        /* the params, then the phase variables */
    int64_t vals[KB_PHASE_COUNT][MAX_SLOTS];
} mload;

/* Compile the scalar n against the first n_slots slots and evaluate it in phase, in [lo, hi]. */
static kb_status eval_node(mload *L, const yaml_node_t *n, const char *what, int n_slots, int phase, int64_t lo,
                           int64_t hi, int64_t *out)
{
    const char *text;
    kb_status st = kb_yaml_scalar(&L->y, n, what, &text);
    if (st) return st;
    kb_expr *e = NULL;
    kb_sb msg;
    kb_sb_init(&msg);
    st = kb_expr_compile(text, L->slots, n_slots, &e, &msg);
    if (st) {
        kb_yaml_fail(&L->y, n, "'%s': %s", what, msg.s);
        kb_sb_free(&msg);
        return KB_ERR_INPUT;
    }
    kb_sb_free(&msg);
    int64_t v = 0;
    int bad = kb_expr_eval(e, L->vals[phase], &v) != 0;
    kb_expr_free(e);
    if (bad)
        return kb_yaml_fail(&L->y, n, "'%s' = '%s' divides by zero or overflows at %s", what, text,
                            kb_model_phase_names[phase]);
    if (v < lo || v > hi)
        return kb_yaml_fail(&L->y, n, "'%s' = '%s' is %lld at %s; expected [%lld, %lld]", what, text, (long long)v,
                            kb_model_phase_names[phase], (long long)lo, (long long)hi);
    *out = v;
    return KB_OK;
}

static int is_ident(const char *s)
{
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

/* ---- params (plain integers), overrides, phases ---- */

static kb_status load_params(mload *L, const yaml_node_t *node)
{
    kb_model *m = L->m;
    kb_status st = kb_yaml_check_map(&L->y, node, "'params'", NULL);
    if (st) return st;
    if (kb_yaml_map_len(node) > KB_MODEL_MAX_PARAMS)
        return kb_yaml_fail(&L->y, node, "more than %d params", KB_MODEL_MAX_PARAMS);
    for (int i = 0; i < kb_yaml_map_len(node); i++) {
        yaml_node_t *k, *v;
        const char *name;
        kb_yaml_map_pair(&L->y, node, i, &k, &v);
        if ((st = kb_yaml_scalar(&L->y, k, "param name", &name))) return st;
        if (!is_ident(name))
            return kb_yaml_fail(&L->y, k, "param name '%s' is not an identifier", name);
        for (int p = 0; p < KB_PV_COUNT; p++)
            if (!strcmp(name, kb_model_pvar_names[p]))
                return kb_yaml_fail(&L->y, k, "'%s' is a phase variable, not a param", name);
        if ((st = kb_yaml_int_range(&L->y, v, name, 1, DIM_MAX, &m->params[m->n_params]))) return st;
        m->param_names[m->n_params++] = kb_suite_xstrdup(name);
    }
    m->layers = kb_model_param(m, "layers");
    if (m->layers < 0)
        return kb_yaml_fail(&L->y, node, "missing param 'layers' (how many decoder layers)");
    return KB_OK;
}

static kb_status apply_sets(mload *L, const char *const *sets, int n_sets)
{
    kb_model *m = L->m;
    for (int i = 0; i < n_sets; i++) {
        const char *eq = strchr(sets[i], '=');
        char *end = NULL;
        long long v = eq ? strtoll(eq + 1, &end, 10) : 0;
        int k = -1;
        for (int p = 0; eq && p < m->n_params; p++)
            if (strlen(m->param_names[p]) == (size_t)(eq - sets[i]) && !strncmp(m->param_names[p], sets[i], eq - sets[i]))
                k = p;
        if (!eq || k < 0 || !end || end == eq + 1 || *end || v < 1 || v > DIM_MAX) {
            kb_sb_clear(L->y.err);
            kb_sb_printf(L->y.err, "--set %s: expected PARAM=N with a param of %s and N in [1, 2^40]", sets[i],
                         L->y.file);
            return KB_ERR_INPUT;
        }
        m->params[k] = v;
    }
    m->layers = kb_model_param(m, "layers");
    return KB_OK;
}

static kb_status load_phases(mload *L, const yaml_node_t *node)
{
    kb_status st = kb_yaml_check_map(&L->y, node, "'phases'", phase_keys);
    if (st) return st;
    for (int ph = 0; ph < KB_PHASE_COUNT; ph++) {
        const yaml_node_t *p = kb_yaml_get(&L->y, node, kb_model_phase_names[ph]);
        if (!p) return kb_yaml_fail(&L->y, node, "missing phase '%s'", kb_model_phase_names[ph]);
        if ((st = kb_yaml_check_map(&L->y, p, kb_model_phase_names[ph], pvar_keys))) return st;
        for (int v = 0; v < KB_PV_COUNT; v++) {
            const yaml_node_t *e = kb_yaml_get(&L->y, p, kb_model_pvar_names[v]);
            if (!e)
                return kb_yaml_fail(&L->y, p, "phase '%s' lacks '%s'", kb_model_phase_names[ph],
                                    kb_model_pvar_names[v]);
            if ((st = eval_node(L, e, kb_model_pvar_names[v], L->m->n_params, ph, 1, DIM_MAX,
                                &L->m->pvars[ph][v])))
                return st;
        }
    }
    return KB_OK;
}

/* ---- one op ---- */

static const char *const op_keys[] = { "op", "family", "variant", "dtype", "case", "params", "dims", "count",
                                       "scope", "phases", "weights", "note", "pad", NULL };

static kb_status op_strings(mload *L, const yaml_node_t *n, kb_model_op *op, const kb_family **fam)
{
    const yaml_node_t *v;
    const char *s;
    kb_status st;
    if (!(v = kb_yaml_get(&L->y, n, "op"))) return kb_yaml_fail(&L->y, n, "an op needs 'op' (its name)");
    if ((st = kb_yaml_scalar(&L->y, v, "op", &s))) return st;
    op->name = kb_suite_xstrdup(s);
    for (int i = 0; i < L->m->n_ops; i++)
        if (!strcmp(L->m->ops[i].name, s)) return kb_yaml_fail(&L->y, v, "a second op named '%s'", s);
    if (!(v = kb_yaml_get(&L->y, n, "family"))) return kb_yaml_fail(&L->y, n, "op '%s' needs 'family'", op->name);
    if ((st = kb_yaml_scalar(&L->y, v, "family", &s))) return st;
    int f = kb_family_find(s);
    if (f < 0) return kb_yaml_fail(&L->y, v, "unknown family '%s' (kbench list shows them)", s);
    *fam = kb_families[f];
    op->family = kb_suite_xstrdup(s);
    if ((v = kb_yaml_get(&L->y, n, "variant"))) {
        if ((st = kb_yaml_scalar(&L->y, v, "variant", &s))) return st;
        if (kb_family_variant_find(*fam, s) < 0)
            return kb_yaml_fail(&L->y, v, "family '%s' has no variant '%s'", op->family, s);
        op->variant = kb_suite_xstrdup(s);
    }
    op->dtype = -1;
    if ((v = kb_yaml_get(&L->y, n, "dtype"))) {
        kb_dtype dt;
        if ((st = kb_yaml_scalar(&L->y, v, "dtype", &s))) return st;
        if (kb_dtype_parse(s, &dt) != 0) return kb_yaml_fail(&L->y, v, "unknown dtype '%s'", s);
        op->dtype = (int)dt;
    }
    if ((v = kb_yaml_get(&L->y, n, "case"))) {
        if ((st = kb_yaml_scalar(&L->y, v, "case", &s))) return st;
        op->case_id = kb_suite_xstrdup(s);
    }
    s = "";
    if ((v = kb_yaml_get(&L->y, n, "note")) && (st = kb_yaml_scalar(&L->y, v, "note", &s))) return st;
    op->note = kb_suite_xstrdup(s);
    return KB_OK;
}

static kb_status op_scope(mload *L, const yaml_node_t *n, kb_model_op *op)
{
    const yaml_node_t *v;
    const char *s;
    kb_status st;
    if ((v = kb_yaml_get(&L->y, n, "scope"))) {
        if ((st = kb_yaml_scalar(&L->y, v, "scope", &s))) return st;
        if (strcmp(s, "layer") && strcmp(s, "model"))
            return kb_yaml_fail(&L->y, v, "scope is 'layer' (per layer) or 'model' (once per step), not '%s'", s);
        op->per_model = !strcmp(s, "model");
    }
    op->phases = (1u << KB_PHASE_COUNT) - 1;
    if ((v = kb_yaml_get(&L->y, n, "phases"))) {
        if ((st = kb_yaml_check_axis(&L->y, v, "phases"))) return st;
        op->phases = 0;
        for (int i = 0; i < kb_yaml_len(v); i++) {
            const yaml_node_t *it = kb_yaml_item(&L->y, v, i);
            int ph = -1;
            if ((st = kb_yaml_scalar(&L->y, it, "phases", &s))) return st;
            for (int p = 0; p < KB_PHASE_COUNT; p++)
                if (!strcmp(s, kb_model_phase_names[p])) ph = p;
            if (ph < 0) return kb_yaml_fail(&L->y, it, "unknown phase '%s' (prefill, decode)", s);
            op->phases |= 1u << ph;
        }
    }
    int64_t pad = 0;
    if ((v = kb_yaml_get(&L->y, n, "pad")) && (st = kb_yaml_int_range(&L->y, v, "pad", 0, 4096, &pad))) return st;
    op->pad = (int)pad;
    return KB_OK;
}

static kb_status op_constraints(mload *L, const yaml_node_t *n, const kb_family *fam, kb_model_op *op)
{
    const yaml_node_t *v = kb_yaml_get(&L->y, n, "params");
    kb_status st;
    if (!v) return KB_OK;
    if ((st = kb_yaml_check_map(&L->y, v, "'params'", NULL))) return st;
    if (kb_yaml_map_len(v) > KB_MODEL_MAX_CONSTRAINTS)
        return kb_yaml_fail(&L->y, v, "more than %d params", KB_MODEL_MAX_CONSTRAINTS);
    for (int i = 0; i < kb_yaml_map_len(v); i++) {
        yaml_node_t *k, *val;
        const char *name, *text;
        kb_yaml_map_pair(&L->y, v, i, &k, &val);
        if ((st = kb_yaml_scalar(&L->y, k, "param name", &name))) return st;
        int p = kb_family_param_find(fam, name);
        if (p < 0) return kb_yaml_fail(&L->y, k, "family '%s' has no param '%s'", fam->name, name);
        if ((st = kb_yaml_scalar(&L->y, val, name, &text))) return st;
        const kb_param *par = &fam->params[p];
        kb_model_constraint *k_ = &op->constraints[op->n_constraints];
        int known = par->choices == NULL;
        for (int c = 0; par->choices && par->choices[c]; c++)
            known |= !strcmp(par->choices[c], text);
        if (!known) return kb_yaml_fail(&L->y, val, "'%s' is not a choice of param '%s'", text, name);
        int64_t lo, hi;
        kb_param_range(par, &lo, &hi);
        k_->is_int = par->choices == NULL;
        for (int ph = 0; k_->is_int && ph < KB_PHASE_COUNT; ph++)
            if ((op->phases & (1u << ph)) &&
                (st = eval_node(L, val, name, L->m->n_params + KB_PV_COUNT, ph, lo, hi, &k_->ival[ph])))
                return st;
        k_->name = kb_suite_xstrdup(name);
        k_->value = kb_suite_xstrdup(text);
        op->n_constraints++;
    }
    return KB_OK;
}

static kb_status op_dims(mload *L, const yaml_node_t *n, const kb_family *fam, kb_model_op *op)
{
    const yaml_node_t *v = kb_yaml_get(&L->y, n, "dims");
    kb_status st;
    if (!v) return kb_yaml_fail(&L->y, n, "op '%s' needs 'dims'", op->name);
    const char *names[KB_MODEL_MAX_DIMS + 1] = { 0 };
    for (int d = 0; d < fam->n_dims && d < KB_MODEL_MAX_DIMS; d++) names[d] = fam->dims[d];
    if ((st = kb_yaml_check_map(&L->y, v, "'dims'", names))) {
        kb_sb_printf(L->y.err, " (family '%s' has dims:", fam->name);
        for (int d = 0; d < fam->n_dims; d++) kb_sb_printf(L->y.err, " %s", fam->dims[d]);
        kb_sb_printf(L->y.err, ")");
        return st;
    }
    for (int d = 0; d < fam->n_dims && d < KB_MODEL_MAX_DIMS; d++) {
        const yaml_node_t *e = kb_yaml_get(&L->y, v, fam->dims[d]);
        if (!e) return kb_yaml_fail(&L->y, v, "dims lack '%s' (family '%s')", fam->dims[d], fam->name);
        op->dim_names[d] = kb_suite_xstrdup(fam->dims[d]);
        op->n_dims = d + 1;
        for (int ph = 0; ph < KB_PHASE_COUNT; ph++)
            if ((op->phases & (1u << ph)) &&
                (st = eval_node(L, e, fam->dims[d], L->m->n_params + KB_PV_COUNT, ph, 1, DIM_MAX, &op->dims[ph][d])))
                return st;
    }
    return KB_OK;
}

static kb_status op_counts(mload *L, const yaml_node_t *n, kb_model_op *op)
{
    const yaml_node_t *c = kb_yaml_get(&L->y, n, "count"), *w = kb_yaml_get(&L->y, n, "weights");
    int ns = L->m->n_params + KB_PV_COUNT;
    kb_status st;
    for (int ph = 0; ph < KB_PHASE_COUNT; ph++) {
        op->count[ph] = 1;
        if (c && (op->phases & (1u << ph)) && (st = eval_node(L, c, "count", ns, ph, 0, 1 << 20, &op->count[ph])))
            return st;
    }
    if (w && (st = eval_node(L, w, "weights", L->m->n_params, 0, 0, (int64_t)1 << 50, &op->weights))) return st;
    return KB_OK;
}

static kb_status load_op(mload *L, const yaml_node_t *n)
{
    kb_model_op *op = &L->m->ops[L->m->n_ops];
    const kb_family *fam = NULL;
    kb_status st = kb_yaml_check_map(&L->y, n, "an op", op_keys);
    if (st) return st;
    op->line = (int)n->start_mark.line + 1;
    if ((st = op_strings(L, n, op, &fam)) || (st = op_scope(L, n, op)) || (st = op_constraints(L, n, fam, op)) ||
        (st = op_dims(L, n, fam, op)) || (st = op_counts(L, n, op))) {
        L->m->n_ops++;   /* so kb_model_free releases what the op holds */
        return st;
    }
    L->m->n_ops++;
    return KB_OK;
}

/* ---- top level ---- */

static const char *const top_keys[] = { "model", "description", "dtype", "params", "phases", "ops",
                                        "decode_points", NULL };

/* decode_points: {PARAM: N or [N, ...], ...}, each a param of the model, values in [1, 2^40],
 * at most KB_MODEL_MAX_POINTS points in the cross product. */
static kb_status load_points(mload *L, const yaml_node_t *node)
{
    kb_model *m = L->m;
    kb_status st = kb_yaml_check_map(&L->y, node, "'decode_points'", NULL);
    if (st) return st;
    if (kb_yaml_map_len(node) == 0 || kb_yaml_map_len(node) > KB_MODEL_MAX_AXES)
        return kb_yaml_fail(&L->y, node, "decode_points names 1 to %d params", KB_MODEL_MAX_AXES);
    m->n_points = 1;
    for (int i = 0; i < kb_yaml_map_len(node); i++) {
        yaml_node_t *k, *v;
        const char *name;
        kb_yaml_map_pair(&L->y, node, i, &k, &v);
        if ((st = kb_yaml_scalar(&L->y, k, "decode_points param", &name))) return st;
        kb_model_axis *a = &m->axes[m->n_axes];
        a->param = -1;
        for (int p = 0; p < m->n_params; p++)
            if (!strcmp(m->param_names[p], name)) a->param = p;
        if (a->param < 0)
            return kb_yaml_fail(&L->y, k, "decode_points: '%s' is not a param of the model (its 'params')", name);
        if ((st = kb_yaml_check_axis(&L->y, v, name))) return st;
        if (kb_yaml_len(v) > KB_MODEL_MAX_POINTS / m->n_points)
            return kb_yaml_fail(&L->y, v, "decode_points: more than %d points", KB_MODEL_MAX_POINTS);
        for (a->n = 0; a->n < kb_yaml_len(v); a->n++)
            if ((st = kb_yaml_int_range(&L->y, kb_yaml_item(&L->y, v, a->n), name, 1, DIM_MAX, &a->vals[a->n])))
                return st;
        m->n_points *= a->n;
        m->n_axes++;
    }
    return KB_OK;
}

static kb_status load_top(mload *L, const yaml_node_t *root)
{
    kb_model *m = L->m;
    const yaml_node_t *v;
    const char *s;
    kb_status st;
    if ((st = kb_yaml_check_map(&L->y, root, "the model", top_keys))) return st;
    if (!(v = kb_yaml_get(&L->y, root, "model"))) return kb_yaml_fail(&L->y, root, "missing 'model' (its name)");
    if ((st = kb_yaml_scalar(&L->y, v, "model", &s))) return st;
    m->name = kb_suite_xstrdup(s);
    s = "";
    if ((v = kb_yaml_get(&L->y, root, "description")) && (st = kb_yaml_scalar(&L->y, v, "description", &s)))
        return st;
    m->description = kb_suite_xstrdup(s);
    m->dtype = KB_DT_BF16;
    if ((v = kb_yaml_get(&L->y, root, "dtype"))) {
        kb_dtype dt;
        if ((st = kb_yaml_scalar(&L->y, v, "dtype", &s))) return st;
        if (kb_dtype_parse(s, &dt) != 0) return kb_yaml_fail(&L->y, v, "unknown dtype '%s'", s);
        m->dtype = (int)dt;
    }
    if (!(v = kb_yaml_get(&L->y, root, "params"))) return kb_yaml_fail(&L->y, root, "missing 'params'");
    return load_params(L, v);
}

static kb_status load_rest(mload *L, const yaml_node_t *root)
{
    kb_model *m = L->m;
    for (int i = 0; i < m->n_params; i++) {
        L->slots[i].name = m->param_names[i];
        for (int ph = 0; ph < KB_PHASE_COUNT; ph++) L->vals[ph][i] = m->params[i];
    }
    const yaml_node_t *v = kb_yaml_get(&L->y, root, "phases");
    kb_status st;
    if (!v) return kb_yaml_fail(&L->y, root, "missing 'phases' (prefill and decode)");
    if ((st = load_phases(L, v))) return st;
    for (int p = 0; p < KB_PV_COUNT; p++) {
        L->slots[m->n_params + p].name = kb_model_pvar_names[p];
        for (int ph = 0; ph < KB_PHASE_COUNT; ph++) L->vals[ph][m->n_params + p] = m->pvars[ph][p];
    }
    if ((v = kb_yaml_get(&L->y, root, "decode_points")) && (st = load_points(L, v))) return st;
    if (!(v = kb_yaml_get(&L->y, root, "ops"))) return kb_yaml_fail(&L->y, root, "missing 'ops'");
    if (v->type != YAML_SEQUENCE_NODE || kb_yaml_len(v) == 0)
        return kb_yaml_fail(&L->y, v, "expected a non-empty list of ops for 'ops'");
    if (kb_yaml_len(v) > KB_MODEL_MAX_OPS) return kb_yaml_fail(&L->y, v, "more than %d ops", KB_MODEL_MAX_OPS);
    m->ops = kb_suite_xcalloc((size_t)kb_yaml_len(v), sizeof *m->ops);
    for (int i = 0; i < kb_yaml_len(v); i++)
        if ((st = load_op(L, kb_yaml_item(&L->y, v, i)))) return st;
    return KB_OK;
}

kb_status kb_model_load_text(const char *text, const char *display_name, const char *const *sets, int n_sets,
                             kb_model *out, kb_sb *err)
{
    yaml_document_t doc;
    mload L;
    kb_status st;
    memset(out, 0, sizeof *out);
    memset(&L, 0, sizeof L);
    L.m = out;
    L.y.doc = &doc;
    L.y.file = display_name;
    L.y.err = err;
    kb_sb_clear(err);
    out->file = kb_suite_xstrdup(display_name);
    out->text = kb_suite_xstrdup(text);
    if ((st = kb_yaml_load_doc(text, display_name, "a model description", 16, 200000, &doc, err)) != KB_OK)
        goto done;
    const yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (!root)
        st = kb_yaml_fail(&L.y, NULL, "empty model description (expected a mapping with 'model', 'params', "
                                       "'phases' and 'ops')");
    else if ((st = load_top(&L, root)) == KB_OK && (st = apply_sets(&L, sets, n_sets)) == KB_OK)
        st = load_rest(&L, root);
    yaml_document_delete(&doc);
done:
    if (st) kb_model_free(out);
    return st;
}

kb_status kb_model_load(const char *path, const char *const *sets, int n_sets, kb_model *out, kb_sb *err)
{
    struct stat sb;
    char *text = NULL;
    memset(out, 0, sizeof *out);
    kb_sb_clear(err);
    if (stat(path, &sb) != 0) {
        kb_sb_printf(err, "%s: no such model description (a YAML file, or a name under data/models/)", path);
        return KB_ERR_INPUT;
    }
    /* opened without blocking, a regular text file of at most 1 MiB (core/fsutil.h) */
    if (kb_fs_read_text(path, KB_MODEL_MAX_BYTES, "model description", &text, err) != KB_OK)
        return KB_ERR_INPUT;
    kb_status st = kb_model_load_text(text, path, sets, n_sets, out, err);
    free(text);
    return st;
}

void kb_model_path(const char *name_or_file, kb_sb *out)
{
    size_t n = strlen(name_or_file);
    kb_sb_clear(out);
    if (strchr(name_or_file, '/') || (n > 5 && !strcmp(name_or_file + n - 5, ".yaml")))
        kb_sb_printf(out, "%s", name_or_file);
    else
        kb_sb_printf(out, "%s/data/models/%s.yaml", kb_data_root(), name_or_file);
}

int64_t kb_model_param(const kb_model *m, const char *name)
{
    for (int i = 0; i < m->n_params; i++)
        if (!strcmp(m->param_names[i], name)) return m->params[i];
    return -1;
}

void kb_model_free(kb_model *m)
{
    for (int i = 0; i < m->n_ops; i++) {
        kb_model_op *op = &m->ops[i];
        free(op->name); free(op->family); free(op->variant); free(op->case_id); free(op->note);
        for (int d = 0; d < op->n_dims; d++) free(op->dim_names[d]);
        for (int c = 0; c < op->n_constraints; c++) {
            free(op->constraints[c].name);
            free(op->constraints[c].value);
        }
    }
    free(m->ops);
    for (int i = 0; i < m->n_params; i++) free(m->param_names[i]);
    free(m->name); free(m->description); free(m->file); free(m->text);
    memset(m, 0, sizeof *m);
}
