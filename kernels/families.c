/* families.c - the registry of kernel families (see families.h). */
#include "kernels/families.h"

#include <string.h>

/* Defined by kernels/<family>.c; a new family adds its line here and in the table. */
extern const kb_family kb_family_gelu;
extern const kb_family kb_family_gemm;
extern const kb_family kb_family_attention;
extern const kb_family kb_family_softmax;
extern const kb_family kb_family_embedding;
extern const kb_family kb_family_layernorm;
extern const kb_family kb_family_ceiling;

const kb_family *const kb_families[] = {
    &kb_family_gelu,
    &kb_family_gemm,
    &kb_family_attention,
    &kb_family_softmax,
    &kb_family_embedding,
    &kb_family_layernorm,
    &kb_family_ceiling,
};
const int kb_n_families = KB_COUNT(kb_families);

int kb_family_find(const char *name)
{
    for (int i = 0; i < kb_n_families; i++)
        if (strcmp(kb_families[i]->name, name) == 0)
            return i;
    return -1;
}

void kb_case_id(const kb_case *c, kb_sb *b)
{
    kb_case_id_of(kb_families[c->family], c, b);
}
