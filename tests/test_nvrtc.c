/* test_nvrtc.c - NVRTC compile to CUBIN and the ptxas log parser, on real logs.
 * NVRTC needs no GPU, so everything here runs on any machine with the toolkit. */
#include "check.h"
#include "core/fsutil.h"
#include "backend/cuda/kb_nvrtc.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define RESOURCES_CU "tests/kernels/nvrtc_resources.cu"
#define INCLUDE_CU "tests/kernels/nvrtc_include.cu"

/* A CUBIN is an ELF file whose machine is EM_CUDA (190). */
static int is_cuda_elf(const unsigned char *p, size_t n)
{
    return n > 20 && memcmp(p, "\x7f" "ELF", 4) == 0 && (p[18] | p[19] << 8) == 190;
}

static void test_version(void)
{
    int major = -1, minor = -1;
    CHECK(kb_nvrtc_version(&major, &minor) == 0);
    CHECK(major >= 12);
    CHECK(minor >= 0);
}

/* Compile nvrtc_resources.cu for sm and check every entry's resources. */
static void check_resources_for(int sm)
{
    char *src = NULL;
    void *cubin = NULL;
    size_t bytes = 0;
    kb_sb log;
    kb_resources axpy, pressure, spill, stack, smem, r;
    char arch_tag[32];

    kb_sb_init(&log);
    CHECK(kb_fs_read_all(RESOURCES_CU, &src, NULL) == KB_OK);
    if (!src)
        goto done;
    kb_status st = kb_nvrtc_compile(src, RESOURCES_CU, NULL, 0, NULL, 0, sm, &cubin, &bytes, &log);
    CHECK_MSG(st == KB_OK, "sm_%d: %s\n%s", sm, kb_status_name(st), log.s);
    if (st != KB_OK)
        goto done;
    CHECK(cubin != NULL && bytes > 1000);
    CHECK(is_cuda_elf(cubin, bytes));
    snprintf(arch_tag, sizeof arch_tag, "for 'sm_%d'", sm);
    CHECK_MSG(strstr(log.s, arch_tag) != NULL, "log lacks %s:\n%s", arch_tag, log.s);

    CHECK(kb_ptxas_parse(log.s, "k_axpy", &axpy) == 0);
    CHECK(kb_ptxas_parse(log.s, "k_pressure", &pressure) == 0);
    CHECK(kb_ptxas_parse(log.s, "k_spill", &spill) == 0);
    CHECK(kb_ptxas_parse(log.s, "k_stack", &stack) == 0);
    CHECK(kb_ptxas_parse(log.s, "k_smem", &smem) == 0);

    /* Light kernel: few registers, nothing else. */
    CHECK_MSG(axpy.registers > 0 && axpy.registers <= 32, "sm_%d axpy regs %d", sm, axpy.registers);
    CHECK(axpy.spill_store_bytes == 0 && axpy.spill_load_bytes == 0);
    CHECK(axpy.stack_bytes == 0 && axpy.static_shmem_bytes == 0);
    CHECK(axpy.max_threads == -1);

    /* 64 live accumulators, no cap: many registers, no spills. */
    CHECK_MSG(pressure.registers > 64, "sm_%d pressure regs %d", sm, pressure.registers);
    CHECK(pressure.registers > axpy.registers);
    CHECK(pressure.spill_store_bytes == 0 && pressure.stack_bytes == 0);

    /* The same live set under __launch_bounds__(768, 2): capped registers, spills. */
    CHECK_MSG(spill.registers > 0 && spill.registers <= 40, "sm_%d spill regs %d", sm, spill.registers);
    CHECK_MSG(spill.spill_store_bytes > 0 && spill.spill_load_bytes > 0, "sm_%d spills %d/%d", sm,
              spill.spill_store_bytes, spill.spill_load_bytes);
    CHECK(spill.stack_bytes >= spill.spill_store_bytes / 4);

    /* Dynamically indexed 1 KiB array: a stack frame, not a spill. The helper's
     * own "Function properties" block (0 bytes) must not be read for k_stack. */
    CHECK_MSG(stack.stack_bytes >= 1024, "sm_%d stack %d", sm, stack.stack_bytes);
    CHECK(stack.spill_store_bytes == 0);

    /* 1024 floats of static shared memory. */
    CHECK_MSG(smem.static_shmem_bytes == 4096, "sm_%d smem %d", sm, smem.static_shmem_bytes);
    CHECK(spill.static_shmem_bytes == 0);

    /* Not entries: a device function, a prefix of entry names, a missing name. */
    CHECK(kb_ptxas_parse(log.s, "_Z9kb_t_pickPKfi", &r) == -1);
    CHECK(r.registers == -1 && r.stack_bytes == -1);
    CHECK(kb_ptxas_parse(log.s, "k_", &r) == -1);
    CHECK(kb_ptxas_parse(log.s, "k_missing", &r) == -1);
done:
    free(cubin);
    free(src);
    kb_sb_free(&log);
}

static void test_resources_sm80(void) { check_resources_for(80); }
static void test_resources_sm89(void) { check_resources_for(89); }
static void test_resources_sm90(void) { check_resources_for(90); }

/* Logs in the layouts other ptxas versions print. */
static void test_parse_fixed_logs(void)
{
    kb_resources r;
    /* Older ptxas: no "used N barriers", cmem after smem, entries whose names
     * are prefixes of each other. */
    const char *old =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'k2' for 'sm_80'\n"
        "ptxas info    : Function properties for k2\n"
        "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
        "ptxas info    : Used 255 registers, 49152 bytes smem, 368 bytes cmem[0]\n"
        "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
        "ptxas info    : Function properties for k\n"
        "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 10 registers, 368 bytes cmem[0]\n";
    CHECK(kb_ptxas_parse(old, "k", &r) == 0);
    CHECK(r.registers == 10 && r.static_shmem_bytes == 0 && r.stack_bytes == 0);
    CHECK(r.spill_store_bytes == 0 && r.spill_load_bytes == 0);
    CHECK(kb_ptxas_parse(old, "k2", &r) == 0);
    CHECK(r.registers == 255 && r.static_shmem_bytes == 49152);
    CHECK(r.stack_bytes == 8 && r.spill_store_bytes == 4 && r.spill_load_bytes == 12);

    /* A device function's block inside the entry's section, before the entry's
     * own: stack and spills come from the block named after the entry. */
    const char *helper =
        "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
        "ptxas info    : Function properties for _Z6helperv\n"
        "ptxas         .     64 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"
        "ptxas info    : Function properties for k\n"
        "ptxas         .     16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
        "ptxas info    : Used 20 registers, used 0 barriers, 80 bytes cumulative stack size\n";
    CHECK(kb_ptxas_parse(helper, "k", &r) == 0);
    CHECK(r.registers == 20 && r.stack_bytes == 16 && r.spill_store_bytes == 0);

    /* No "Function properties" block at all: registers only, stack unknown. */
    const char *bare = "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
                       "ptxas info    : Used 7 registers, used 1 barriers, 512 bytes smem\n";
    CHECK(kb_ptxas_parse(bare, "k", &r) == 0);
    CHECK(r.registers == 7 && r.static_shmem_bytes == 512 && r.stack_bytes == -1);

    /* An entry without its "Used" line, a NULL log, an empty name. */
    CHECK(kb_ptxas_parse("ptxas info    : Compiling entry function 'k' for 'sm_90'\n", "k", &r) == -1);
    CHECK(kb_ptxas_parse(NULL, "k", &r) == -1);
    CHECK(kb_ptxas_parse(old, "", &r) == -1);
    CHECK(r.registers == -1);
}

/* -D and -I reach the compiler: the define sizes the shared array. */
static void test_defines_and_includes(void)
{
    char *src = NULL;
    CHECK(kb_fs_read_all(INCLUDE_CU, &src, NULL) == KB_OK);
    if (!src)
        return;
    const char *inc[] = { "tests/kernels" };
    const int blocks[] = { 64, 512 };
    for (int i = 0; i < 2; i++) {
        char def[32];
        void *cubin = NULL;
        size_t bytes = 0;
        kb_resources r;
        kb_sb log;
        kb_sb_init(&log);
        snprintf(def, sizeof def, "KB_T_BLOCK=%d", blocks[i]);
        const char *defs[] = { def };
        kb_status st = kb_nvrtc_compile(src, INCLUDE_CU, inc, 1, defs, 1, 90, &cubin, &bytes, &log);
        CHECK_MSG(st == KB_OK, "%s\n%s", def, log.s);
        CHECK(cubin && is_cuda_elf(cubin, bytes));
        CHECK(kb_ptxas_parse(log.s, "k_scale", &r) == 0);
        CHECK_MSG(r.static_shmem_bytes == blocks[i] * 4, "%s: smem %d", def, r.static_shmem_bytes);
        free(cubin);
        kb_sb_free(&log);
    }

    /* Without the define the source's own #error fires. */
    void *cubin = (void *)1;
    size_t bytes = 1;
    kb_sb log;
    kb_sb_init(&log);
    CHECK(kb_nvrtc_compile(src, INCLUDE_CU, inc, 1, NULL, 0, 90, &cubin, &bytes, &log) == KB_ERR_COMPILE);
    CHECK(cubin == NULL && bytes == 0);
    CHECK_MSG(strstr(log.s, "KB_T_BLOCK must be defined") != NULL, "%s", log.s);
    kb_sb_clear(&log);

    /* Without the include directory the project header is not found. */
    CHECK(kb_nvrtc_compile(src, "elsewhere.cu", NULL, 0, (const char *const[]){ "KB_T_BLOCK=64" }, 1, 90,
                           &cubin, &bytes, &log) == KB_ERR_COMPILE);
    CHECK_MSG(strstr(log.s, "nvrtc_include.h") != NULL, "%s", log.s);
    kb_sb_free(&log);
    free(src);
}

static void test_syntax_error(void)
{
    const char *bad = "extern \"C\" __global__ void k(float *y)\n{\n    y[0] = 1.0f\n}\n";
    void *cubin = (void *)1;
    size_t bytes = 1;
    kb_sb log;
    kb_sb_init(&log);
    kb_sb_printf(&log, "previous\n");
    CHECK(kb_nvrtc_compile(bad, "bad.cu", NULL, 0, NULL, 0, 90, &cubin, &bytes, &log) == KB_ERR_COMPILE);
    CHECK(cubin == NULL && bytes == 0);
    /* The log is appended to, and carries the one-line API report, then NVRTC's
     * diagnostic with the source name and line (the missing ';' shows at the '}'). */
    CHECK(strncmp(log.s, "previous\n", 9) == 0);
    CHECK_MSG(strstr(log.s, "bad.cu(4)") != NULL && strstr(log.s, "error") != NULL, "%s", log.s);
    CHECK_MSG(strstr(log.s, "expected a \";\"") != NULL, "%s", log.s);
    CHECK_MSG(strstr(log.s, "-> NVRTC_ERROR_COMPILATION") != NULL, "%s", log.s);
    kb_sb_free(&log);
}

static void test_bad_arch(void)
{
    void *cubin = NULL;
    size_t bytes = 0;
    kb_sb log;
    kb_sb_init(&log);
    /* sm_10 never existed and is no row of the architecture table: refused before NVRTC */
    CHECK(kb_nvrtc_compile("extern \"C\" __global__ void k() {}", "k.cu", NULL, 0, NULL, 0, 10,
                           &cubin, &bytes, &log) == KB_ERR_INPUT);
    CHECK(cubin == NULL && bytes == 0);
    CHECK_MSG(strstr(log.s, "no architecture of code 10") != NULL, "%s", log.s);
    kb_sb_free(&log);
}

/* Every module gets -DKB_ARCH=<cc> and -DKB_ARCH_SPECIFIC=<0|1> from the table, and the
 * table's --gpu-architecture: the source checks both against what NVRTC compiles for. */
static const char gate_src[] =
    "#if !defined(KB_ARCH) || !defined(KB_ARCH_SPECIFIC) || KB_ARCH != __CUDA_ARCH__ / 10\n"
    "#error gating defines missing or wrong\n#endif\n"
    "#if KB_ARCH_SPECIFIC != defined(__CUDA_ARCH_SPECIFIC__)\n#error KB_ARCH_SPECIFIC disagrees\n#endif\n"
    "extern \"C\" __global__ void k(int *p) { p[0] = KB_ARCH * 10 + KB_ARCH_SPECIFIC; }\n";

static void test_gating_defines(void)
{
    static const int codes[] = { 80, 90, 90 + KB_ARCH_SPECIFIC, 100, 100 + KB_ARCH_SPECIFIC, 120 + KB_ARCH_SPECIFIC };
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        void *cubin = NULL;
        size_t bytes = 0;
        kb_sb log;
        kb_sb_init(&log);
        CHECK_MSG(kb_nvrtc_compile(gate_src, "gate.cu", NULL, 0, NULL, 0, codes[i], &cubin, &bytes, &log) == KB_OK,
                  "%s: %s", kb_arch_name(codes[i]), log.s);
        free(cubin);
        kb_sb_free(&log);
    }
}

/* The PTX of an sm_90a compile targets sm_90a (what `kbench compile --emit ptx` writes). */
static void test_ptx_target(void)
{
    char *ptx = NULL;
    size_t bytes = 0;
    kb_sb log;
    kb_sb_init(&log);
    CHECK_MSG(kb_nvrtc_compile_ptx(gate_src, "gate.cu", NULL, 0, NULL, 0, 90 + KB_ARCH_SPECIFIC, &ptx, &bytes, &log) ==
              KB_OK, "%s", log.s);
    CHECK(ptx && bytes == strlen(ptx) && strstr(ptx, ".target sm_90a") && strstr(ptx, ".entry k"));
    CHECK_MSG(strstr(log.s, "Compiling entry function 'k' for 'sm_90a'"), "the ptxas report stays: %s", log.s);
    free(ptx);
    kb_sb_free(&log);
}

int main(void)
{
    RUN(test_version);
    RUN(test_parse_fixed_logs);
    RUN(test_resources_sm80);
    RUN(test_resources_sm89);
    RUN(test_resources_sm90);
    RUN(test_defines_and_includes);
    RUN(test_syntax_error);
    RUN(test_bad_arch);
    RUN(test_gating_defines);
    RUN(test_ptx_target);
    TEST_MAIN_END();
}
