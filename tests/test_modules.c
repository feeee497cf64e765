/* test_modules.c - the run's module table: one compile per distinct (source, defines,
 * sm), refs that stay valid while the table grows, failures kept per module. */
#include "check.h"
#include "engine/modules.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int builds, loads;
static char last_err[64] = "";

static const char *fake_err(kb_backend_ctx *x) { return last_err; }
static const char *fake_tool(kb_backend_ctx *x) { return "fake 1"; }

static kb_status fake_build(kb_backend_ctx *x, const kb_compile_req *req, const char *out, kb_sb *log)
{
    builds++;
    for (int i = 0; i < req->n_defines; i++)
        if (!strcmp(req->defines[i], "BROKEN=1")) {
            kb_sb_printf(log, "error: broken on purpose");
            return KB_ERR_COMPILE;
        }
    FILE *f = fopen(out, "w");
    fputs("artefact", f);
    fclose(f);
    kb_sb_printf(log, "built with %d defines", req->n_defines);
    return KB_OK;
}

static kb_status fake_load(kb_backend_ctx *x, const char *path, kb_module **out)
{
    *out = (kb_module *)(intptr_t)(++loads); /* a distinct non-NULL handle per load */
    return KB_OK;
}

static void fake_unload(kb_backend_ctx *x, kb_module *m) { loads--; }

static const kb_backend fake = {
    .name = "fake", .last_error = fake_err, .toolchain_id = fake_tool, .artifact_ext = ".bin",
    .build = fake_build, .load = fake_load, .unload = fake_unload,
};

static char cache[] = "/tmp/kbench-modules-XXXXXX";

static void test_refs_survive_growth_and_repeats_compile_once(void)
{
    builds = 0;
    kb_modules *ms = kb_modules_new(&fake, NULL, cache, "tests/kernels");
    const kb_module_ref *first = kb_modules_get(ms, "emu_block.cu", "A=0", 90);
    CHECK(first->status == KB_OK && first->mod != NULL);
    kb_module *first_mod = first->mod;
    char defs[32];
    for (int i = 1; i < 100; i++) {   /* far past the table's first growth */
        snprintf(defs, sizeof defs, "A=%d", i);
        CHECK(kb_modules_get(ms, "emu_block.cu", defs, 90)->status == KB_OK);
    }
    CHECK(first->mod == first_mod && first->status == KB_OK);   /* still readable, unchanged */
    CHECK(strstr(first->log, "built with 1 defines") != NULL);
    int before = builds;
    CHECK(kb_modules_get(ms, "emu_block.cu", "A=0", 90) == first);
    CHECK(kb_modules_get(ms, "emu_block.cu", "A=0", 80) != first);  /* another arch is another module */
    CHECK(builds == before + 1);
    kb_modules_free(ms);
    CHECK(loads == 0);   /* every module unloaded */
}

static void test_compile_failure_is_kept(void)
{
    kb_modules *ms = kb_modules_new(&fake, NULL, cache, "tests/kernels");
    const kb_module_ref *r = kb_modules_get(ms, "emu_block.cu", "BROKEN=1", 90);
    CHECK(r->status == KB_ERR_COMPILE && r->mod == NULL);
    CHECK(strstr(r->log, "broken on purpose") != NULL);
    int before = builds;
    CHECK(kb_modules_get(ms, "emu_block.cu", "BROKEN=1", 90) == r && builds == before);
    kb_modules_free(ms);
}

static void test_build_only_never_loads(void)
{
    int before_loads = loads, before_builds = builds;
    kb_modules *ms = kb_modules_new_build_only(&fake, NULL, cache, "tests/kernels");
    const kb_module_ref *r = kb_modules_get(ms, "emu_block.cu", "B=1", 90);
    CHECK(r->status == KB_OK && r->mod == NULL && loads == before_loads);
    CHECK(strstr(r->log, "built with") != NULL && builds == before_builds + 1);
    CHECK(kb_modules_count(ms) == 1);
    kb_modules_free(ms);
}

int main(void)
{
    if (!mkdtemp(cache))
        return 2;
    RUN(test_refs_survive_growth_and_repeats_compile_once);
    RUN(test_compile_failure_is_kept);
    RUN(test_build_only_never_loads);
    TEST_MAIN_END();
}
