/* emu_fixture.h - the set-up every tests/test_emu*.c shares: the emu backend through its
 * kb_backend interface only, a temp dir to build into, the test kernels
 * (tests/kernels/emu_*.cu) built with the host compiler and loaded, and the
 * alloc/launch helpers. fixture_begin() and fixture_end() bracket a test's main. */
#ifndef KB_TEST_EMU_FIXTURE_H
#define KB_TEST_EMU_FIXTURE_H
#include "backend/backend.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEST_KERNELS_DIR KB_SOURCE_KERNELS_DIR "/../tests/kernels"

static const kb_backend *B = &kb_backend_emu;
static char tmpdir[256];
static kb_backend_ctx *X;                /* 2 workers, sm_90 */
static kb_module *M_BLOCK, *M_WARP, *M_DATA;   /* those fixture_begin was asked for */

static kb_backend_ctx *open_emu(int threads, int sm)
{
    kb_backend_opts o = { .emu_threads = threads, .sm_override = sm };
    kb_backend_ctx *x = NULL;
    char err[512];
    kb_status st = B->init(&o, &x, err, sizeof err);
    CHECK_MSG(st == KB_OK, "%s", err);
    return x;
}

/* Build the kernel source src into a fresh file of the temp dir and load it. */
static kb_module *build_load_src(kb_backend_ctx *x, const char *src)
{
    static int n_built; /* a fresh file each time: never rewrite a loaded module */
    char out[512];
    kb_sb log;
    kb_module *m = NULL;
    snprintf(out, sizeof out, "%s/module-%d%s", tmpdir, n_built++, B->artifact_ext);
    kb_compile_req req = { .source_path = src, .include_dir = KB_SOURCE_KERNELS_DIR, .sm = 0 }; /* the context's arch */
    kb_sb_init(&log);
    kb_status st = B->build(x, &req, out, &log);
    CHECK_MSG(st == KB_OK, "build %s: %s\n%s", src, B->last_error(x), log.s);
    kb_sb_free(&log);
    if (st == KB_OK) {
        st = B->load(x, out, &m);
        CHECK_MSG(st == KB_OK, "load %s: %s", src, B->last_error(x));
    }
    return m;
}

/* Build tests/kernels/<name>.cu and load it. */
static kb_module *build_load(kb_backend_ctx *x, const char *name)
{
    char src[512];
    snprintf(src, sizeof src, "%s/%s.cu", TEST_KERNELS_DIR, name);
    return build_load_src(x, src);
}

static kb_dptr dalloc(kb_backend_ctx *x, size_t bytes)
{
    kb_dptr p = 0;
    CHECK(B->alloc(x, bytes, &p) == KB_OK);
    return p;
}

static kb_status launch(kb_backend_ctx *x, kb_module *m, const char *entry, unsigned gx, unsigned gy,
                        unsigned gz, unsigned bx, unsigned by, unsigned bz, size_t shmem,
                        const kb_arg *args, int nargs)
{
    kb_geom g = { { gx, gy, gz }, { bx, by, bz }, shmem, { 1, 1, 1 } };
    return B->launch(x, m, entry, &g, args, nargs);
}

static inline int contains(const char *s, const char *sub) { return s && strstr(s, sub) != NULL; }

/* The test kernels fixture_begin can load, as a mask. */
enum { FIX_BLOCK = 1, FIX_WARP = 2, FIX_DATA = 4 };

/* Make the temp dir /tmp/kb_<name>_XXXXXX, open X and build and load the modules of mods
 * (emu_block into M_BLOCK, emu_warp into M_WARP, emu_data into M_DATA). 0 on failure. */
static int fixture_begin(const char *name, int mods)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/kb_%s_XXXXXX", name);
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 0;
    }
    X = open_emu(2, 0);
    if (!X)
        return 0;
    if (mods & FIX_BLOCK)
        M_BLOCK = build_load(X, "emu_block");
    if (mods & FIX_WARP)
        M_WARP = build_load(X, "emu_warp");
    if (mods & FIX_DATA)
        M_DATA = build_load(X, "emu_data");
    if ((mods & FIX_BLOCK && !M_BLOCK) || (mods & FIX_WARP && !M_WARP) || (mods & FIX_DATA && !M_DATA))
        return 0;
    return 1;
}

/* Unload the modules, close X and remove the temp dir. */
static void fixture_end(void)
{
    char cmd[512];
    if (M_DATA)
        B->unload(X, M_DATA);
    if (M_WARP)
        B->unload(X, M_WARP);
    if (M_BLOCK)
        B->unload(X, M_BLOCK);
    B->fini(X);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
}
#endif
