/* family_check.c - the kernel check of one family suite (tests/suites/kernels_<family>.yaml),
 * registered in CTest once per suite:
 *   1. `kbench run SUITE --backend emu --emu-schedule random:1 --emu-check race,init -j 2`:
 *      every case executed on the emulator with warps interleaved at random (seeded) and
 *      every shared-memory access checked for races and reads of unwritten bytes, then
 *      verified against the CPU reference (guard bytes included); exit 0, every record ok
 *      or skipped with a reason, and every ok record verified over at least one element.
 *      Two compile workers build the modules ahead of the cases (the pool's real use).
 *   2. `kbench compile SUITE --arch sm_80 | sm_89 | sm_90` (default workers): every case's module compiles
 *      with NVRTC and ptxas reports its resources (with --no-spills: and none spills); with
 *      --blackwell also for sm_100 and sm_120a (issue 23: the suite compiles there spill-free).
 * --arch A (a suite of one architecture's kernels, gemm/wgmma's sm_90a): the emulator run and
 * the --dump check with --arch A, and the compile for A only.
 * usage: family_check SUITE.yaml [--no-spills] [--blackwell] [--arch A] */
#include "check.h"
#include "spawn.h"

#include <jansson.h>

static const char *suite;
static int no_spills, blackwell;
static const char *suite_arch;   /* --arch: the one architecture of the suite, or NULL */
static char dir[256];
static char first_ok[1024];   /* id of the first ok case, for the --dump check */

static void test_emulator_run_verifies_every_case(void)
{
    char out[512], log[512];
    snprintf(out, sizeof out, "%s/records.jsonl", dir);
    snprintf(log, sizeof log, "%s/run.log", dir);
    const char *argv[] = { "kbench", "run", suite, "--backend", "emu", "--out", out, "--quiet",
                           "--emu-schedule", "random:1", "--emu-check", "race,init", "-j", "2",
                           "--min-samples", "1", "--max-samples", "2", "--timeout", "0.01",
                           suite_arch ? "--arch" : NULL, suite_arch, NULL };
    int rc = run_kbench(argv, log);
    CHECK_MSG(rc == 0, "kbench run %s exited %d", suite, rc);
    if (rc != 0)
        print_tail(log, 4000);

    FILE *f = fopen(out, "r");
    CHECK(f != NULL);
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    int n = 0, n_ok = 0;
    while (getline(&line, &cap, f) > 0) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        CHECK_MSG(j != NULL, "record %d is not JSON: %s", n + 1, je.text);
        if (!j)
            continue;
        n++;
        const char *id = json_string_value(json_object_get(j, "case_id"));
        const char *st = json_string_value(json_object_get(j, "status"));
        CHECK_MSG(st && (!strcmp(st, "ok") || !strcmp(st, "skipped")), "%s: status %s (%s)", id ? id : "?",
                  st ? st : "?", json_string_value(json_object_get(j, "reason")));
        if (st && !strcmp(st, "skipped")) {
            const char *why = json_string_value(json_object_get(j, "reason"));
            CHECK_MSG(why && *why, "%s skipped without a reason", id ? id : "?");
        }
        if (st && !strcmp(st, "ok")) {
            n_ok++;
            if (!first_ok[0] && id)
                snprintf(first_ok, sizeof first_ok, "%s", id);
            json_int_t ne = json_integer_value(json_object_get(json_object_get(j, "verify"), "n"));
            CHECK_MSG(ne > 0, "%s: ok but nothing verified", id ? id : "?");
            CHECK(!strcmp(json_string_value(json_object_get(json_object_get(j, "timing"), "clock")), "cpu"));
        }
        json_decref(j);
    }
    free(line);
    fclose(f);
    CHECK_MSG(n_ok > 0, "%s: no case ran ok (%d records)", suite, n);
    printf("     %s: %d records, %d ok\n", suite, n, n_ok);
}

/* --dump on a chosen case writes its output and reference as .npy (every family exposes them) */
static void test_dump_of_a_chosen_case(void)
{
    CHECK(first_ok[0] != 0);
    if (!first_ok[0])
        return;
    char out[512], log[512], dump[512], path[2048];
    snprintf(out, sizeof out, "%s/dump.jsonl", dir);
    snprintf(log, sizeof log, "%s/dump.log", dir);
    snprintf(dump, sizeof dump, "%s/dump", dir);
    const char *argv[] = { "kbench", "run", suite, "--backend", "emu", "--out", out, "--quiet", "--filter", first_ok,
                           "--dump", dump, "--min-samples", "1", "--max-samples", "1", suite_arch ? "--arch" : NULL, suite_arch,
                           NULL };
    CHECK(run_kbench(argv, log) == 0);
    char name[1024];
    size_t k = 0;
    for (const char *p = first_ok; *p && k + 3 < sizeof name; p++) {
        if (*p == '/') { name[k++] = '_'; name[k++] = '_'; }
        else name[k++] = *p;
    }
    name[k] = 0;
    const char *files[] = { "out.npy", "ref.npy" };
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/%s/%s", dump, name, files[i]);
        CHECK_MSG(access(path, R_OK) == 0, "%s was not written", path);
    }
}

static void compile_for(const char *arch)
{
    char log[512];
    snprintf(log, sizeof log, "%s/compile_%s.log", dir, arch);
    const char *argv[] = { "kbench", "compile", suite, "--arch", arch, "--quiet",
                           no_spills ? "--fail-on-spill" : NULL, NULL };
    int rc = run_kbench(argv, log);
    CHECK_MSG(rc == 0, "kbench compile %s --arch %s exited %d", suite, arch, rc);
    if (rc != 0)
        print_tail(log, 4000);
}

static void test_nvrtc_sm80(void) { compile_for("sm_80"); }
static void test_nvrtc_sm89(void) { compile_for("sm_89"); }
static void test_nvrtc_sm90(void) { compile_for("sm_90"); }
static void test_nvrtc_sm100(void) { compile_for("sm_100"); }
static void test_nvrtc_sm120a(void) { compile_for("sm_120a"); }
static void test_nvrtc_suite_arch(void) { compile_for(suite_arch); }

int main(int argc, char **argv)
{
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--no-spills"))
            no_spills = 1;
        else if (!strcmp(argv[i], "--blackwell"))
            blackwell = 1;
        else if (!strcmp(argv[i], "--arch") && i + 1 < argc)
            suite_arch = argv[++i];
        else
            argc = 0;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: family_check SUITE.yaml [--no-spills] [--blackwell] [--arch A]\n");
        return 2;
    }
    suite = argv[1];
    snprintf(dir, sizeof dir, "/tmp/kbench-family-check-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    RUN(test_emulator_run_verifies_every_case);
    RUN(test_dump_of_a_chosen_case);
    if (suite_arch) {
        RUN(test_nvrtc_suite_arch);
        TEST_MAIN_END();
    }
    RUN(test_nvrtc_sm80);
    RUN(test_nvrtc_sm89);
    RUN(test_nvrtc_sm90);
    if (blackwell) {
        RUN(test_nvrtc_sm100);
        RUN(test_nvrtc_sm120a);
    }
    TEST_MAIN_END();
}
