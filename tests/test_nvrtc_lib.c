/* test_nvrtc_lib.c - NVRTC chosen at run time: the pure rules (which driver loads which
 * NVRTC's CUBINs, which architectures an NVRTC's list covers) and the selection against the
 * NVRTC of this machine's toolkit (CUDA 13: it fits a 13.0 driver, not a 12.4 one). Which
 * device runs which CUBIN is the architecture table's rule (test_arch.c). */
#include "check.h"
#include "backend/cuda/kb_nvrtc.h"
#include "backend/cuda/kb_nvrtc_lib.h"

#include <stdlib.h>
#include <string.h>

/* CUDA Compatibility guide: 13.x needs >= 580 (CUDA 13.0), 12.x >= 525 (12.0), no crossing. */
static void test_version_fit(void)
{
    CHECK(kb_nvrtc_min_driver(13) == 13000);
    CHECK(kb_nvrtc_min_driver(12) == 12000);
    CHECK(kb_nvrtc_min_branch(13) == 580);
    CHECK(kb_nvrtc_min_branch(12) == 525);
    CHECK(kb_nvrtc_min_branch(11) == 450);
    CHECK(kb_nvrtc_min_branch(9) == 0);
    CHECK(kb_nvrtc_fits(13, 13000));
    CHECK(kb_nvrtc_fits(13, 13020));
    CHECK(!kb_nvrtc_fits(13, 12090)); /* R575 */
    CHECK(!kb_nvrtc_fits(13, 12040)); /* R550 */
    CHECK(kb_nvrtc_fits(12, 12040));  /* minor-version compatibility inside 12 */
    CHECK(kb_nvrtc_fits(12, 12000));
    CHECK(kb_nvrtc_fits(12, 13000));  /* backward compatibility */
    CHECK(!kb_nvrtc_fits(12, 11080));
    CHECK(!kb_nvrtc_fits(0, 13000));
}

static void test_unfit_message(void)
{
    char m[512];
    kb_nvrtc_unfit_message(m, sizeof m, 13, 12040);
    CHECK_MSG(strstr(m, "CUDA 12.4 (12040)") && strstr(m, "NVRTC 13") && strstr(m, ">= 580") &&
              strstr(m, "cuda-compat") && strstr(m, "libnvrtc.so.12"), "%s", m);
    char tiny[8];
    kb_nvrtc_unfit_message(tiny, sizeof tiny, 13, 12040);
    CHECK(strlen(tiny) == 7);
}

/* nvrtcGetSupportedArchs lists compute capabilities; an `a` target is listed by its cc. */
static void test_arch_listed(void)
{
    static const int nvrtc12_4[] = { 50, 52, 53, 60, 61, 62, 70, 72, 75, 80, 86, 87, 89, 90 };
    int n = (int)(sizeof nvrtc12_4 / sizeof nvrtc12_4[0]);
    CHECK(kb_nvrtc_arch_listed(nvrtc12_4, n, 90));
    CHECK(kb_nvrtc_arch_listed(nvrtc12_4, n, 90 + KB_ARCH_SPECIFIC));
    CHECK(kb_nvrtc_arch_listed(nvrtc12_4, n, 86));
    CHECK(!kb_nvrtc_arch_listed(nvrtc12_4, n, 100));
    CHECK(!kb_nvrtc_arch_listed(nvrtc12_4, n, 120 + KB_ARCH_SPECIFIC));
    CHECK(!kb_nvrtc_arch_listed(nvrtc12_4, n, 75));   /* listed, but no architecture of kbench's */
    CHECK(!kb_nvrtc_arch_listed(nvrtc12_4, 0, 90));
}

/* The installed NVRTC (CUDA 13.0) is asked at run time: it compiles for every
 * architecture of the table (75 80 86 87 88 89 90 100 103 110 120 121). An older NVRTC's
 * refusal (and its list) is covered by test_arch_listed and the cli test with a fake. */
static void test_supports_installed(void)
{
    char why[768] = "";
    char note[1024];
    CHECK_MSG(kb_nvrtc_lib_select(13000, note, sizeof note) == KB_OK, "%s", note);
    for (int i = 0; i < kb_n_archs; i++)
        CHECK_MSG(kb_nvrtc_supports(kb_archs[i].code, why, sizeof why) == 1, "%s: %s", kb_archs[i].name, why);
    CHECK(kb_nvrtc_supports(75, why, sizeof why) == 0);   /* a code the table lacks: nothing to compile */
    CHECK_MSG(strstr(why, "cannot compile for sm_?") && strstr(why, "sm_90a") && strstr(why, "sm_120a"), "%s", why);
}

/* This machine has NVRTC 13 only (the toolkit kbench builds with). */
static void test_select(void)
{
    char note[1024];
    CHECK_MSG(kb_nvrtc_lib_select(13000, note, sizeof note) == KB_OK, "%s", note);
    const kb_nvrtc_lib *l = kb_nvrtc_lib_current();
    CHECK(l && l->major >= 13 && l->CompileProgram && l->GetCUBIN);
    CHECK_MSG(strstr(note, "NVRTC 13."), "%s", note);
    int ma = 0, mi = -1;
    CHECK(kb_nvrtc_version(&ma, &mi) == 0 && ma == l->major && mi == l->minor);

    /* an R550 driver: the only NVRTC found makes CUBINs it cannot load */
    CHECK(kb_nvrtc_lib_select(12040, note, sizeof note) == KB_ERR_SETUP);
    CHECK_MSG(strstr(note, "12040") && strstr(note, "NVRTC 13"), "%s", note);
    CHECK(kb_nvrtc_lib_current() == NULL);
    CHECK(kb_nvrtc_version(&ma, &mi) == -1);

    /* KBENCH_LIBNVRTC is the user's explicit choice: the only candidate */
    setenv("KBENCH_LIBNVRTC", "/nonexistent/libnvrtc.so.12", 1);
    CHECK(kb_nvrtc_lib_select(13000, note, sizeof note) == KB_ERR_SETUP);
    CHECK_MSG(strstr(note, "KBENCH_LIBNVRTC") && strstr(note, "/nonexistent/libnvrtc.so.12"), "%s", note);
    setenv("KBENCH_LIBNVRTC", "libnvrtc.so.13", 1);
    CHECK_MSG(kb_nvrtc_lib_select(13000, note, sizeof note) == KB_OK, "%s", note);
    unsetenv("KBENCH_LIBNVRTC");

    /* no driver (offline compile): the newest that loads */
    CHECK_MSG(kb_nvrtc_lib_select(0, note, sizeof note) == KB_OK, "%s", note);
    CHECK(kb_nvrtc_lib_current() != NULL);
}

/* A compile after the selection uses the selected library. */
static void test_compile_after_select(void)
{
    char note[1024];
    static const char src[] = "extern \"C\" __global__ void k(float *p) { p[threadIdx.x] = 1.f; }\n";
    void *cubin = NULL;
    size_t bytes = 0;
    kb_sb log;
    kb_sb_init(&log);
    CHECK(kb_nvrtc_lib_select(12040, note, sizeof note) == KB_ERR_SETUP);
    CHECK(kb_nvrtc_compile(src, "k.cu", NULL, 0, NULL, 0, 80, &cubin, &bytes, &log) == KB_ERR_SETUP);
    CHECK_MSG(strstr(log.s, "KBENCH_LIBNVRTC"), "%s", log.s);
    CHECK(cubin == NULL);
    CHECK(kb_nvrtc_lib_select(13000, note, sizeof note) == KB_OK);
    CHECK_MSG(kb_nvrtc_compile(src, "k.cu", NULL, 0, NULL, 0, 80, &cubin, &bytes, &log) == KB_OK, "%s", log.s);
    CHECK(cubin && bytes > 100);
    free(cubin);
    kb_sb_free(&log);
}

int main(void)
{
    RUN(test_version_fit);
    RUN(test_unfit_message);
    RUN(test_arch_listed);
    RUN(test_supports_installed);
    RUN(test_select);
    RUN(test_compile_after_select);
    TEST_MAIN_END();
}
