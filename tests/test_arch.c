/* test_arch.c - the architecture table (core/arch.h): every row consistent with itself and
 * with the CUDA Programming Guide's tables, the names kbench promises, the paths where the
 * PTX ISA puts them, lookups, the CUBIN-loads-on rule with its messages, the gating defines. */
#include "check.h"
#include "core/arch.h"
#include "estimate/gpu.h"

#include <stdio.h>
#include <string.h>

/* Every row: name = "sm_<cc>[a]", code = cc (+ KB_ARCH_SPECIFIC for `a`), the NVRTC target
 * its own name, limits as the guide relates them, sorted, and an `a` row right after its
 * plain row with a superset of its paths. */
static void test_rows_consistent(void)
{
    CHECK(kb_n_archs == KB_ARCH_COUNT);
    for (int i = 0; i < kb_n_archs; i++) {
        const kb_arch *a = &kb_archs[i];
        char name[16];
        snprintf(name, sizeof name, "sm_%d%s", a->cc, a->specific ? "a" : "");
        CHECK_MSG(!strcmp(a->name, name), "row %d: %s vs %s", i, a->name, name);
        CHECK_MSG(a->code == a->cc + (a->specific ? KB_ARCH_SPECIFIC : 0), "%s: code %d", a->name, a->code);
        CHECK_MSG(!strcmp(a->nvrtc_arch, a->name), "%s: NVRTC target %s", a->name, a->nvrtc_arch);
        CHECK_MSG(a->smem_block_optin == a->smem_sm - a->smem_reserved, "%s: opt-in = per SM - reserved", a->name);
        CHECK(a->regs_sm == 65536 && a->regs_thread == 255 && a->threads_block == 1024);
        CHECK_MSG(a->threads_sm % 32 == 0 && a->threads_sm >= 1536 && a->blocks_sm >= 16, "%s", a->name);
        CHECK_MSG(a->paths & KB_PATH_MMA, "%s: every architecture of kbench has mma.sync", a->name);
        CHECK_MSG(!(a->paths & ~((1u << KB_PATH_COUNT) - 1)), "%s: unknown path bits", a->name);
        CHECK_MSG((a->cluster_portable > 0) == !!(a->paths & KB_PATH_CLUSTER), "%s: clusters", a->name);
        if (i > 0)
            CHECK_MSG(kb_archs[i - 1].cc < a->cc || (kb_archs[i - 1].cc == a->cc && a->specific),
                      "%s out of order", a->name);
        if (a->specific) {
            const kb_arch *plain = &kb_archs[i - 1];
            CHECK_MSG(plain->cc == a->cc && !plain->specific, "%s follows its plain target", a->name);
            CHECK_MSG((a->paths & plain->paths) == plain->paths && a->paths != plain->paths,
                      "%s has more than %s", a->name, plain->name);
            CHECK(a->smem_block_optin == plain->smem_block_optin && a->blocks_sm == plain->blocks_sm);
        }
    }
}

/* The names the issues promise (21: sm_90a; 23: Blackwell) are rows, with the guide's limits. */
static void test_promised_rows(void)
{
    static const struct { const char *name; int cc, specific, optin_kib, sm_kib, threads, blocks; } want[] = {
        { "sm_80", 80, 0, 163, 164, 2048, 32 },   { "sm_86", 86, 0, 99, 100, 1536, 16 },
        { "sm_89", 89, 0, 99, 100, 1536, 24 },    { "sm_90", 90, 0, 227, 228, 2048, 32 },
        { "sm_90a", 90, 1, 227, 228, 2048, 32 },  { "sm_100", 100, 0, 227, 228, 2048, 32 },
        { "sm_100a", 100, 1, 227, 228, 2048, 32 }, { "sm_103", 103, 0, 227, 228, 2048, 32 },
        { "sm_103a", 103, 1, 227, 228, 2048, 32 }, { "sm_120", 120, 0, 99, 100, 1536, 24 },
        { "sm_120a", 120, 1, 99, 100, 1536, 24 }, { "sm_121", 121, 0, 99, 100, 1536, 24 },
        { "sm_121a", 121, 1, 99, 100, 1536, 24 },
    };
    CHECK(sizeof want / sizeof want[0] == KB_ARCH_COUNT);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        const kb_arch *a = kb_arch_find(want[i].name);
        CHECK_MSG(a, "%s missing", want[i].name);
        if (!a)
            continue;
        CHECK_MSG(a->cc == want[i].cc && a->specific == want[i].specific, "%s", a->name);
        CHECK_MSG(a->smem_block_optin == want[i].optin_kib * 1024 && a->smem_sm == want[i].sm_kib * 1024, "%s",
                  a->name);
        CHECK_MSG(a->threads_sm == want[i].threads && a->blocks_sm == want[i].blocks, "%s", a->name);
    }
}

/* Paths where the PTX ISA puts them: wgmma on sm_90a only, tcgen05 on sm_100a/103a, the
 * block-scaled mma.sync on sm_120a/121a, fp8 mma.sync from sm_89, TMA and clusters from sm_90. */
static void test_paths(void)
{
    for (int i = 0; i < kb_n_archs; i++) {
        const kb_arch *a = &kb_archs[i];
        CHECK_MSG(kb_arch_has(a->code, KB_PATH_WGMMA) == (a->cc == 90 && a->specific), "%s wgmma", a->name);
        CHECK_MSG(kb_arch_has(a->code, KB_PATH_TCGEN05) == ((a->cc == 100 || a->cc == 103) && a->specific),
                  "%s tcgen05", a->name);
        CHECK_MSG(kb_arch_has(a->code, KB_PATH_MMA_BLOCK_SCALE) == (a->cc / 10 == 12 && a->specific), "%s bs",
                  a->name);
        CHECK_MSG(kb_arch_has(a->code, KB_PATH_MMA_FP8) == (a->cc >= 89), "%s fp8", a->name);
        CHECK_MSG(kb_arch_has(a->code, KB_PATH_TMA | KB_PATH_CLUSTER) == (a->cc >= 90), "%s tma", a->name);
        CHECK_MSG(kb_arch_has(a->code, KB_PATH_MMA_FP8_NATIVE) == (a->cc == 89 || a->cc / 10 == 12), "%s fp8 native",
                  a->name);
    }
    CHECK(!kb_arch_has(75, KB_PATH_MMA));   /* a code the table lacks has nothing */
    CHECK(kb_arch_has(90, 0));
    CHECK(!strcmp(kb_arch_path_name(KB_PATH_WGMMA), "wgmma"));
    CHECK(!strcmp(kb_arch_path_name(KB_PATH_MMA | KB_PATH_TMA), "?"));
    CHECK(!strcmp(kb_arch_path_name(KB_PATH_MMA_BLOCK_SCALE), "mma.sync block_scale"));
}

static void test_lookups(void)
{
    CHECK(kb_arch_find("sm_90a") && kb_arch_find("sm_90a")->code == 1090);
    CHECK(kb_arch_find("90a") == kb_arch_find("sm_90a"));
    CHECK(kb_arch_find("90") && kb_arch_find("90")->code == 90);
    CHECK(kb_arch_find("sm_120a") && kb_arch_find("sm_120a")->code == 1120);
    CHECK(!kb_arch_find("sm_75") && !kb_arch_find("sm_89a") && !kb_arch_find("sm_90A") && !kb_arch_find(""));
    CHECK(!kb_arch_find("sm_") && !kb_arch_find("sm_90a ") && !kb_arch_find("compute_90") && !kb_arch_find(NULL));
    CHECK(!kb_arch_find("sm_100f"));   /* family targets are not in the table */
    CHECK(!strcmp(kb_arch_name(1103), "sm_103a") && !strcmp(kb_arch_name(89), "sm_89"));
    CHECK(!strcmp(kb_arch_name(87), "sm_?"));
    CHECK(kb_arch_cc(1090) == 90 && kb_arch_cc(120) == 120 && kb_arch_cc(1089) == 0);
    CHECK(kb_arch_of_cc(100) == kb_arch_find("sm_100") && kb_arch_of_cc(87) == NULL);
    CHECK(kb_arch_max_shmem_optin(1090) == 227 * 1024 && kb_arch_max_shmem_optin(120) == 99 * 1024);
    CHECK(kb_arch_max_shmem_optin(75) == 0);
}

/* CUDA Programming Guide 5.1.2: an `a` CUBIN on exactly its cc; a plain one on the same
 * major with an equal or newer minor; never across majors. */
static void test_runs_on(void)
{
    char why[512] = "";
    CHECK(kb_arch_runs_on(90, 90, why, sizeof why));
    CHECK(kb_arch_runs_on(1090, 90, why, sizeof why));
    CHECK(kb_arch_runs_on(80, 86, why, sizeof why) && kb_arch_runs_on(80, 87, why, sizeof why));
    CHECK(kb_arch_runs_on(86, 89, why, sizeof why));
    CHECK(kb_arch_runs_on(100, 103, why, sizeof why));      /* sm_100 on a B300 */
    CHECK(kb_arch_runs_on(120, 121, why, sizeof why));      /* sm_120 on a GB10 */
    CHECK(why[0] == 0);
    CHECK(!kb_arch_runs_on(1100, 103, why, sizeof why));    /* sm_100a is 10.0 only */
    CHECK_MSG(strstr(why, "sm_100a") && strstr(why, "10.0 exactly") && strstr(why, "10.3") &&
              strstr(why, "--arch sm_103"), "%s", why);
    CHECK(!kb_arch_runs_on(1090, 100, why, sizeof why));
    CHECK(!kb_arch_runs_on(1120, 121, why, sizeof why));
    CHECK(!kb_arch_runs_on(103, 100, why, sizeof why));     /* a newer minor than the device */
    CHECK_MSG(strstr(why, "sm_103") && strstr(why, "10.x with x >= 3") && strstr(why, "--arch sm_100"), "%s", why);
    CHECK(!kb_arch_runs_on(90, 100, why, sizeof why));      /* never across majors */
    CHECK(!kb_arch_runs_on(100, 90, why, sizeof why));
    CHECK(!kb_arch_runs_on(89, 86, why, sizeof why));
    CHECK(!kb_arch_runs_on(80, 75, why, sizeof why));
    CHECK_MSG(strstr(why, "leave --arch out") && !strstr(why, "sm_75"), "%s", why);   /* no row for 7.5 */
    CHECK(!kb_arch_runs_on(1089, 89, why, sizeof why));
    CHECK_MSG(strstr(why, "no architecture of code 1089"), "%s", why);
}

static void test_defines_and_list(void)
{
    char a[32], s[32];
    CHECK(kb_arch_defines(1090, a, s) == 0 && !strcmp(a, "KB_ARCH=90") && !strcmp(s, "KB_ARCH_SPECIFIC=1"));
    CHECK(kb_arch_defines(120, a, s) == 0 && !strcmp(a, "KB_ARCH=120") && !strcmp(s, "KB_ARCH_SPECIFIC=0"));
    CHECK(kb_arch_defines(75, a, s) == -1);
    char list[512];
    kb_arch_list(list, sizeof list, NULL, NULL);
    CHECK_MSG(!strncmp(list, "sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100,", 42) && strstr(list, ", sm_121a") &&
              !strstr(list, "sm_121a,"), "%s", list);
    char tiny[12];
    kb_arch_list(tiny, sizeof tiny, NULL, NULL);
    CHECK(strlen(tiny) == sizeof tiny - 1);
}

static int hopper_only(int cc, void *user)
{
    (*(int *)user)++;
    return cc == 90;
}

static void test_list_filtered(void)
{
    char list[128];
    int asked = 0;
    CHECK(!strcmp(kb_arch_list(list, sizeof list, hopper_only, &asked), "sm_90, sm_90a"));
    CHECK(asked == KB_ARCH_COUNT);
}

/* The estimate's per-architecture rows repeat the table's limits (estimate/gpu.c; sm_86
 * shares sm_89's row there, a simplification docs/estimate.md states); every estimate GPU's
 * architecture is a row of the table. */
static void test_estimate_rows_agree(void)
{
    int checked = 0;
    for (int i = 0; i < kb_n_archs; i++) {
        const kb_arch *t = &kb_archs[i];
        const kb_est_arch *e = kb_est_arch_find(t->cc);
        if (t->specific || !e || e->sm != t->cc)
            continue;
        checked++;
        CHECK_MSG(e->max_threads_sm == t->threads_sm && e->max_blocks_sm == t->blocks_sm && e->regs_sm == t->regs_sm,
                  "%s", t->name);
        CHECK_MSG(e->smem_sm_bytes == t->smem_sm && e->smem_reserved_bytes == t->smem_reserved, "%s", t->name);
    }
    CHECK(checked >= 5);   /* 80, 89, 90, 100, 103, 120 */
    for (int i = 0; i < kb_est_n_gpus; i++)
        CHECK_MSG(kb_arch_of_cc(kb_est_gpus[i].sm) != NULL, "%s", kb_est_gpus[i].name);
    CHECK(kb_est_gpu_reference(90 + KB_ARCH_SPECIFIC) == kb_est_gpu_reference(90));
    CHECK(kb_est_gpu_reference(100) && !strcmp(kb_est_gpu_reference(100)->name, "b200"));
    CHECK(kb_est_gpu_reference(120 + KB_ARCH_SPECIFIC) && !strcmp(kb_est_gpu_reference(1120)->name, "rtx5090"));
}

int main(void)
{
    RUN(test_rows_consistent);
    RUN(test_promised_rows);
    RUN(test_paths);
    RUN(test_lookups);
    RUN(test_runs_on);
    RUN(test_defines_and_list);
    RUN(test_list_filtered);
    RUN(test_estimate_rows_agree);
    TEST_MAIN_END();
}
