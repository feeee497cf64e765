/* test_estimate_cli.c - `kbench estimate` end to end: every line it prints says
 * "estimate", one row per selected case with its limiting roof, pad 1's GEMM within 0.8x
 * of pad 0's, and its command-line errors (exit 2); `kbench compile`'s estimate columns
 * agree with it and say what they are. Needs NVRTC, no GPU. */
#include "check.h"
#include "spawn.h"

#include <math.h>

#define LOG "build/test_estimate_cli.log"
#define GEMM_128 "gemm/mma(layout=nt,alpha=1,beta=0,BM=128,BN=128,BK=32,WM=64,WN=64,STAGES=3)/bf16/2048x12288x4096/"

/* The estimate of the row whose id contains key, -1 when none. */
static double est_of(const char *out, const char *key, char *limit)
{
    const char *p = strstr(out, key);
    if (!p)
        return -1;
    char id[256];
    double us = -1;
    if (sscanf(p, "%255s %31s %lf", id, limit, &us) != 3)
        return -1;
    return us;
}

static void test_rows(void)
{
    const char *argv[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h100-sxm", "--filter", GEMM_128, NULL };
    CHECK(run_kbench(argv, LOG) == 0);
    char *out = slurp(LOG);
    CHECK(out != NULL);
    if (!out)
        return;
    int lines = 0, rows = 0;
    for (char *l = out; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : l + strlen(l)) {
        char *end = strchr(l, '\n');
        if (end)
            *end = 0;
        CHECK_MSG(strstr(l, "estimate") != NULL, "a line without 'estimate': %s", l);
        lines++;
        rows += strncmp(l, "estimate gemm/", 14) == 0;
        if (end)
            *end = '\n';
    }
    CHECK(lines >= 4 && rows == 2);   /* pad 0 and pad 1 */
    char lim0[32] = "", lim1[32] = "";
    double us0 = est_of(out, GEMM_128 "pad0/eager", lim0), us1 = est_of(out, GEMM_128 "pad1/eager", lim1);
    /* pad 1's register-staged mainloop: within 0.8x of pad 0 (it was 54x slower) */
    CHECK(us0 > 0 && us1 > 0 && us0 / us1 >= 0.8);
    CHECK(strcmp(lim0, "l2") == 0 && lim1[0] != 0);
    free(out);
}

/* kbench compile --arch sm_90: the same estimate as kbench estimate --gpu h100-sxm (the
 * arch's reference GPU), under a header that says ESTIMATE; sm_86 has no reference GPU. */
static void test_compile_columns(void)
{
    const char *est[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h100-sxm", "--filter", GEMM_128 "pad0", NULL };
    CHECK(run_kbench(est, LOG) == 0);
    char *out = slurp(LOG), lim[32] = "";
    double want = out ? est_of(out, GEMM_128 "pad0/eager", lim) : -1;
    free(out);
    const char *cmp[] = { "kbench", "compile", "suites/llm.yaml", "--arch", "sm_90", "--filter", GEMM_128 "pad0", NULL };
    CHECK(run_kbench(cmp, LOG) == 0);
    out = slurp(LOG);
    CHECK(out && strstr(out, "ESTIMATE on h100-sxm") && strstr(out, "estimate_us"));
    const char *row = out ? strstr(out, GEMM_128 "pad0/eager") : NULL;
    char id[256], status[32], climit[32] = "";
    int regs, st, ld, stack, smem;
    double got = -1;
    CHECK(row && sscanf(row, "%255s %31s %d %d %d %d %d %lf %31s", id, status, &regs, &st, &ld, &stack, &smem, &got,
                        climit) == 9);
    CHECK_MSG(want > 0 && fabs(got - want) < 0.01 && strcmp(lim, climit) == 0, "compile %.2f %s, estimate %.2f %s",
              got, climit, want, lim);
    free(out);
    const char *sm86[] = { "kbench", "compile", "suites/llm.yaml", "--arch", "sm_86", "--filter", GEMM_128 "pad0", NULL };
    CHECK(run_kbench(sm86, LOG) == 0);
    out = slurp(LOG);
    CHECK(out && strstr(out, "no reference GPU") && !strstr(out, "ESTIMATE on"));
    free(out);
}

static void test_errors(void)
{
    const char *no_gpu[] = { "kbench", "estimate", "suites/llm.yaml", NULL };
    CHECK(run_kbench(no_gpu, LOG) == 2);
    char *out = slurp(LOG);
    CHECK(out && strstr(out, "--gpu") != NULL);
    free(out);
    const char *bad_gpu[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "h900", NULL };
    CHECK(run_kbench(bad_gpu, LOG) == 2);
    const char *bad_filter[] = { "kbench", "estimate", "suites/llm.yaml", "--gpu", "a100-sxm", "--filter", "zzz", NULL };
    CHECK(run_kbench(bad_filter, LOG) == 2);
    const char *no_suite[] = { "kbench", "estimate", "no/such.yaml", "--gpu", "a100-sxm", NULL };
    CHECK(run_kbench(no_suite, LOG) == 2);
}

int main(void)
{
    RUN(test_rows);
    RUN(test_compile_columns);
    RUN(test_errors);
    TEST_MAIN_END();
}
