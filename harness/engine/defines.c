/* defines.c - the compile-time defines of a case: what makes one module distinct. */
#include "engine/defines.h"

#include <ctype.h>
#include <string.h>

static void upper_into(kb_sb *b, const char *s)
{
    for (; *s; s++) {
        char ch = (char)toupper((unsigned char)*s);
        kb_sb_append(b, &ch, 1);
    }
}

void kb_case_defines(const kb_family *f, const kb_case *c, kb_sb *out)
{
    kb_sb_clear(out);
    kb_sb_printf(out, "KB_T=%s\nKB_DTYPE_", kb_dtype_ctype(c->dtype));
    upper_into(out, kb_dtype_name(c->dtype));
    kb_sb_append(out, "=1\n", 3);
    for (int p = 0; p < f->n_params; p++) {
        const kb_param *pa = &f->params[p];
        if (p < 32 && (f->host_params >> p & 1u))   /* inputs only: the same kernel for every value */
            continue;
        upper_into(out, pa->name);
        kb_sb_printf(out, "=%lld\n", (long long)c->params[p]);
        for (int k = 0; pa->choices && pa->choices[k]; k++) {
            upper_into(out, pa->name);
            kb_sb_append(out, "_", 1);
            upper_into(out, pa->choices[k]);
            kb_sb_printf(out, "=%d\n", k);
        }
    }
    if (f->defines)
        f->defines(c, out);
    /* drop a trailing newline so splitting yields no empty define */
    while (out->len && out->s[out->len - 1] == '\n')
        out->s[--out->len] = 0;
}

int kb_defines_split(char *joined, const char **out, int max)
{
    int n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(joined, "\n", &save); tok && n < max; tok = strtok_r(NULL, "\n", &save))
        out[n++] = tok;
    return n;
}
