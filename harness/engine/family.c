/* family.c - lookups in a family descriptor and the self-describing case id (the registry
 * of families is kernels/families.c). */
#include "engine/family.h"

#include <stdio.h>
#include <string.h>

int kb_family_variant_find(const kb_family *f, const char *name)
{
    for (int i = 0; i < f->n_variants; i++)
        if (strcmp(f->variants[i].name, name) == 0)
            return i;
    return -1;
}

int kb_family_param_find(const kb_family *f, const char *name)
{
    for (int i = 0; i < f->n_params; i++)
        if (strcmp(f->params[i].name, name) == 0)
            return i;
    return -1;
}

int kb_param_applies(const kb_family *f, int param, int variant)
{
    uint32_t m = f->params[param].variants;
    return m == 0 || (variant >= 0 && variant < 32 && (m >> variant) & 1u);
}

int kb_path_set(kb_path *out, const char *unit, kb_dtype dt, int widened)
{
    snprintf(out->kind, sizeof out->kind, "%s/%s%s", unit, kb_dtype_name(dt), widened ? "/widened" : "");
    out->dtype = widened ? KB_DT_FP16 : dt;
    return 1;
}

void kb_case_id_of(const kb_family *f, const kb_case *c, kb_sb *b)
{
    kb_sb_clear(b);
    kb_sb_printf(b, "%s/%s", f->name, f->variants[c->variant].name);
    int first = 1;
    for (int p = 0; p < f->n_params; p++) {
        if (!kb_param_applies(f, p, c->variant) ||
            (f->n_id_params && p >= f->n_id_params && c->params[p] == f->params[p].def))
            continue;
        kb_sb_append(b, first ? "(" : ",", 1);
        first = 0;
        if (f->params[p].choices)
            kb_sb_printf(b, "%s=%s", f->params[p].name, f->params[p].choices[c->params[p]]);
        else
            kb_sb_printf(b, "%s=%lld", f->params[p].name, (long long)c->params[p]);
    }
    if (!first)
        kb_sb_append(b, ")", 1);
    kb_sb_printf(b, "/%s/", kb_dtype_name(c->dtype));
    for (int d = 0; d < f->n_dims; d++)
        kb_sb_printf(b, d ? "x%lld" : "%lld", (long long)c->dims[d]);
    kb_sb_printf(b, "/pad%d/%s", c->pad, kb_launch_name(c->launch));
}
