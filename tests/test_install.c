/* test_install.c - an installed kbench works on its own: `cmake --install` into a fresh
 * prefix, then the installed binary lists the families and runs the installed smoke
 * suite on the emulator, finding its kernels and data beside itself. */
#include "check.h"
#include "spawn.h"

static char dir[128];

static int sh(const char *fmt, const char *a, const char *b)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, fmt, a, b);
    return system(cmd);
}

static void test_installed_binary_runs(void)
{
    const char *build = getenv("KBENCH_BIN");
    CHECK_MSG(build != NULL, "KBENCH_BIN is not set (run through ctest)");
    if (!build)
        return;
    char build_dir[1024];
    snprintf(build_dir, sizeof build_dir, "%s", build);
    *strrchr(build_dir, '/') = 0;
    CHECK(sh("cmake --install '%s' --prefix '%s/prefix' > /dev/null", build_dir, dir) == 0);
    char bin[512], suite[512], out[512], log[512];
    snprintf(bin, sizeof bin, "%s/prefix/bin/kbench", dir);
    snprintf(suite, sizeof suite, "%s/prefix/share/kbench/suites/smoke.yaml", dir);
    snprintf(out, sizeof out, "%s/smoke.jsonl", dir);
    snprintf(log, sizeof log, "%s/install.log", dir);
    setenv("KBENCH_BIN", bin, 1);
    unsetenv("KBENCH_KERNELS_DIR");
    unsetenv("KBENCH_PEAKS");
    const char *list[] = { "kbench", "list", NULL };
    CHECK(run_kbench(list, log) == 0);
    char *text = slurp(log);
    CHECK(text && strstr(text, "gemm") && strstr(text, "softmax"));
    free(text);
    /* the installed tree's kernels are the ones used (without them the run stops with a
     * setup error naming them, though the source tree is still there), and it verifies */
    const char *run[] = { "kbench", "run", suite, "--backend", "emu", "--out", out, "--filter", "naive", "-q", NULL };
    CHECK(sh("mv '%s/prefix/share/kbench/kernels' '%s/kernels.away'", dir, dir) == 0);
    CHECK(run_kbench(run, log) == 3);
    text = slurp(log);
    CHECK_MSG(text && strstr(text, "prefix/bin/../share/kbench/kernels/kb_device.h"), "%s", text ? text : "");
    free(text);
    CHECK(sh("mv '%s/kernels.away' '%s/prefix/share/kbench/kernels'", dir, dir) == 0);
    int rc = run_kbench(run, log);
    CHECK_MSG(rc == 0, "exit %d", rc);
    text = slurp(log);
    CHECK(text && strstr(text, " 0 wrong, 0 failed"));
    if (rc != 0)
        print_tail(log, 3000);
    free(text);
    text = slurp(out);
    CHECK(text && strstr(text, "\"status\":\"ok\""));
    free(text);
    setenv("KBENCH_BIN", build, 1);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb_test_install.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    RUN(test_installed_binary_runs);
    sh("rm -rf '%s'%s", dir, "");
    TEST_MAIN_END();
}
