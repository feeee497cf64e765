/* selftest_compare.c - emulator vs GPU outputs, element by element (see selftest_compare.h). */
#include "selftest/selftest_compare.h"

#include "core/npy.h"
#include "engine/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* <dir>/<id with '/' as "__">/out.npy, as kb_run_dump writes it. */
static void out_path(const char *dir, const char *id, kb_sb *path)
{
    kb_sb_printf(path, "%s/", dir);
    for (const char *p = id; *p; p++)
        kb_sb_append(path, *p == '/' ? "__" : p, *p == '/' ? 2 : 1);
    kb_sb_printf(path, "/out.npy");
}

static float *load_out(const char *dir, const char *id, int64_t *n)
{
    kb_sb path;
    kb_sb_init(&path);
    out_path(dir, id, &path);
    float *v = NULL;
    if (kb_npy_read_f32(path.s, &v, n) != KB_OK)
        v = NULL;
    kb_sb_free(&path);
    return v;
}

/* Compare one case; 0 same, 1 differs (why filled), -1 its outputs are missing. */
static int compare_case(const kb_st_side *emu, const kb_st_side *gpu, const kb_st_case *c, char *why, size_t n)
{
    int64_t ne = 0, ng = 0;
    float *e = load_out(emu->dir, c->id, &ne), *g = load_out(gpu->dir, c->id, &ng);
    int rc = -1;
    if (e && g && ne != ng) {
        snprintf(why, n, "%.200s: %lld elements on the emulator, %lld on the GPU", c->id, (long long)ne,
                 (long long)ng);
        rc = 1;
    } else if (e && g) {
        kb_verify v;
        kb_verify_init(&v, 2 * c->atol, 2 * c->rtol);
        kb_verify_f32(&v, g, e, ne);
        rc = !kb_verify_ok(&v);
        if (rc)
            snprintf(why, n, "%.200s: %lld of %lld elements differ; first at %lld: GPU %.6g, emulator %.6g", c->id,
                     (long long)v.n_bad, (long long)v.n, (long long)v.first_bad, v.got_at_bad, v.want_at_bad);
    }
    free(e);
    free(g);
    return rc;
}

int kb_st_compare_outputs(const kb_st_side *emu, const kb_st_side *gpu, char *detail, size_t n)
{
    int compared = 0, differ = 0, missing = 0;
    char first[400] = "";
    for (int i = 0; i < emu->n; i++) {
        const kb_st_case *ce = &emu->cases[i];
        const kb_st_case *cg = kb_st_side_find(gpu, ce->id);
        if (ce->status != KB_CASE_OK || !cg || cg->status != KB_CASE_OK)
            continue;
        char why[400] = "";
        int rc = compare_case(emu, gpu, ce, why, sizeof why);
        compared += rc >= 0;
        missing += rc < 0;
        if (rc == 1 && differ++ == 0)
            snprintf(first, sizeof first, "%s", why);
    }
    if (differ) {
        snprintf(detail, n, "%d of %d cases differ; %s", differ, compared, first);
        return 1;
    }
    if (compared == 0) {
        snprintf(detail, n, "no case verified on both sides%s", missing ? " (outputs missing from the dumps)" : "");
        return 2;
    }
    snprintf(detail, n, "%d cases agree element by element", compared);
    return 0;
}
