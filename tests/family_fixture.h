/* family_fixture.h - the set-up the kernel family tests (tests/test_gemm.c,
 * tests/test_layernorm.c) share: the family under test found in kb_families (fam,
 * fam_index; family_begin() at the top of main), a kb_case with the family's default
 * params, and one case run on the emulator through the family's setup, enqueue and
 * check (run_family_on_emu). */
#ifndef KB_TEST_FAMILY_FIXTURE_H
#define KB_TEST_FAMILY_FIXTURE_H
#include "check.h"
#include "engine/defines.h"
#include "engine/exec.h"
#include "engine/modules.h"
#include "kernels/families.h"

#include <string.h>

static const kb_family *fam;
static int fam_index;

/* Find the family called name and set fam and fam_index. 0 (and a failed CHECK) if it
 * is not registered. */
static int family_begin(const char *name)
{
    fam_index = kb_family_find(name);
    CHECK(fam_index >= 0);
    if (fam_index < 0)
        return 0;
    fam = kb_families[fam_index];
    return 1;
}

/* A case of fam: variant, dtype, pad and seed as given, every param at its default, no
 * dims and no shape name; the caller sets the dims and the params it cares about. */
static kb_case family_case(int variant, kb_dtype dt, int pad, uint32_t seed)
{
    kb_case c;
    memset(&c, 0, sizeof c);
    c.family = fam_index;
    c.variant = variant;
    c.dtype = dt;
    for (int p = 0; p < fam->n_params; p++)
        c.params[p] = fam->params[p].def;
    c.pad = pad;
    c.seed = seed;
    c.shape_name = -1;
    return c;
}

/* What run_family_on_emu checks besides the build: that fam->valid() accepts the case
 * for the emulated target, and that setup/enqueue/sync/check all return KB_OK (leave it
 * out where a fault is an expected outcome). */
enum { FAM_CHECK_VALID = 1, FAM_CHECK_RUN_OK = 2 };

/* One case on the emulator (2 workers) for arch sm, its module built with the extra
 * defines appended (when given): setup, the kernel (when launch), sync, check. *v is
 * zeroed first and receives the check; *st_out the first failure (a launch fault
 * included) or KB_OK. */
static void run_family_on_emu(const kb_case *c, int sm, const char *extra, int launch, int checks, kb_verify *v,
                              kb_status *st_out)
{
    char err[512] = "";
    kb_backend_ctx *bx = NULL;
    kb_backend_opts bo = { .emu_threads = 2, .sm_override = sm };
    memset(v, 0, sizeof *v);
    *st_out = kb_backend_emu.init(&bo, &bx, err, sizeof err);
    CHECK_MSG(*st_out == KB_OK, "%s", err);
    if (*st_out != KB_OK)
        return;
    kb_device_info dev;
    kb_backend_emu.device_info(bx, &dev);
    kb_modules *mods = kb_modules_new(&kb_backend_emu, bx, NULL, kb_kernels_dir());
    kb_sb defs;
    kb_sb_init(&defs);
    kb_case_defines(fam, c, &defs);
    if (extra)
        kb_sb_printf(&defs, "\n%s", extra);
    const kb_module_ref *ref = kb_modules_get(mods, fam->source, defs.s, sm);
    kb_sb_free(&defs);
    *st_out = ref->status;
    CHECK_MSG(ref->status == KB_OK, "%s", ref->log);
    if (ref->status == KB_OK) {
        kb_run r;
        memset(&r, 0, sizeof r);
        r.be = &kb_backend_emu;
        r.bx = bx;
        r.mod = ref->mod;
        r.f = fam;
        r.c = c;
        r.target = (kb_target){ sm, dev.caps, dev.max_shmem_per_block_optin };
        if (checks & FAM_CHECK_VALID) {
            char why[256];
            CHECK_MSG(fam->valid(c, &r.target, why, sizeof why), "%s", why);
        }
        void *state = NULL;
        kb_status st = fam->setup(&r, &state);
        if (st == KB_OK && launch)
            st = fam->enqueue(&r, state);
        if (st == KB_OK)
            st = kb_backend_emu.sync(bx);
        if (st == KB_OK)
            st = fam->check(&r, state, v);
        if (checks & FAM_CHECK_RUN_OK)
            CHECK_MSG(st == KB_OK, "%s", r.err);
        *st_out = st;
        if (state)
            fam->teardown(&r, state);
        kb_run_free_all(&r);
    }
    kb_modules_free(mods);
    kb_backend_emu.fini(bx);
}
#endif
