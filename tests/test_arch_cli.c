/* test_arch_cli.c - the architecture table through the kbench binary (issues 21 and 23):
 * --arch names, the installed NVRTC's list read at run time (and an older NVRTC's, through
 * the NVRTC double), an a-target refused on a device of another compute capability (the
 * driver double), the emulator emulating an arch by name and limits, and
 * `kbench compile --emit ptx|cubin --out DIR` with its directory and no-overwrite rules. */
#include "check.h"
#include "spawn.h"

#include <dirent.h>
#include <elf.h>
#include <sys/stat.h>

static char dir[256];

/* Run argv; the output (stdout + stderr) into *out (caller frees). The exit code. */
static int run(const char *const *argv, char **out)
{
    char log[512];
    snprintf(log, sizeof log, "%s/out.log", dir);
    int rc = run_kbench(argv, log);
    *out = slurp(log);
    if (!*out)
        *out = calloc(1, 1);
    return rc;
}

/* argv exits with want and its output holds every needle (NULL-terminated). */
static void expect(int want, const char *const *argv, const char *const *needles)
{
    char *out;
    int rc = run(argv, &out);
    CHECK_MSG(rc == want, "%s %s ...: exit %d, want %d\n%s", argv[1], argv[2], rc, want, out);
    for (int i = 0; needles[i]; i++)
        CHECK_MSG(strstr(out, needles[i]), "missing '%s' in:\n%s", needles[i], out);
    free(out);
}

static void test_arch_names(void)
{
    const char *a[] = { "kbench", "list", "suites/smoke.yaml", "--arch", "sm_75", NULL };
    const char *na[] = { "--arch: expected one of kbench's architectures (sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100",
                         "sm_120a, sm_121, sm_121a), got 'sm_75'", NULL };
    expect(2, a, na);
    const char *b[] = { "kbench", "list", "suites/smoke.yaml", "--arch", "sm_89a", NULL };
    const char *nb[] = { "got 'sm_89a'", NULL };
    expect(2, b, nb);
    const char *c[] = { "kbench", "compile", "--help", NULL };
    const char *nc[] = { "--arch ARCH", "one of sm_80, sm_86, sm_89, sm_90, sm_90a, sm_100, sm_100a, sm_103", NULL };
    expect(0, c, nc);
    /* list plans for the target: sm_120a's 99 KiB per block refuses what sm_90's 227 KiB takes */
    const char *d[] = { "kbench", "list", "suites/llm.yaml", "--arch", "sm_120a", "--filter", "vec(kind=rmsnorm", NULL };
    const char *nd[] = { "[skipped on sm_120a: vec caches", "sm_120a allows 101376 per block", NULL };
    expect(0, d, nd);
    const char *e[] = { "kbench", "list", "suites/llm.yaml", "--arch", "sm_90a", "--filter", "vec(kind=rmsnorm", NULL };
    char *out;
    CHECK(run(e, &out) == 0 && !strstr(out, "[skipped on") && strstr(out, "0 would be skipped on sm_90a"));
    free(out);
}

/* The cuda backend's list is the installed NVRTC's, read at run time: the NVRTC double says it
 * is 12.4, whose list stops at sm_90. */
static void test_nvrtc_list_at_run_time(void)
{
    const char *fake = getenv("KBENCH_FAKE_LIBNVRTC");
    CHECK_MSG(fake && access(fake, R_OK) == 0, "KBENCH_FAKE_LIBNVRTC does not name the NVRTC double");
    if (!fake)
        return;
    setenv("KBENCH_LIBNVRTC", fake, 1);
    const char *a[] = { "kbench", "compile", "suites/smoke.yaml", "--arch", "sm_100", NULL };
    const char *na[] = { "kbench: --arch sm_100: NVRTC 12.4 (", "cannot compile for sm_100; of kbench's "
                         "architectures it supports sm_80, sm_86, sm_89, sm_90, sm_90a", NULL };
    expect(2, a, na);
    const char *b[] = { "kbench", "compile", "suites/smoke.yaml", "--arch", "sm_120a", NULL };
    const char *nb[] = { "cannot compile for sm_120a", NULL };
    expect(2, b, nb);
    /* estimate builds through the same offline session: the same refusal, before any compile */
    const char *b2[] = { "kbench", "estimate", "suites/smoke.yaml", "--gpu", "b200", NULL };
    const char *nb2[] = { "kbench estimate: --arch sm_100: NVRTC 12.4 (", "cannot compile for sm_100", NULL };
    expect(2, b2, nb2);
    /* a B200 with that NVRTC: described, its toolchain unusable; run stops before any case */
    const char *lib = getenv("KBENCH_FAKE_LIBCUDA");
    if (lib) {
        setenv("KBENCH_LIBCUDA", lib, 1);
        setenv("KBENCH_FAKE_CUDA_ARCH", "100", 1);
        setenv("KBENCH_FAKE_CUDA_DRIVER", "12080", 1);
        const char *c[] = { "kbench", "devices", "--backend", "cuda", NULL };
        const char *nc[] = { "arch           sm_100 (compute capability 10.0)", "nvrtc          DOES NOT FIT: NVRTC 12.4",
                             "cannot compile for sm_100", NULL };
        expect(0, c, nc);
        const char *d[] = { "kbench", "run", "suites/smoke.yaml", "--backend", "cuda", NULL };
        const char *nd[] = { "cannot compile for sm_100", NULL };
        expect(3, d, nd);
        unsetenv("KBENCH_FAKE_CUDA_DRIVER");
        unsetenv("KBENCH_FAKE_CUDA_ARCH");
        unsetenv("KBENCH_LIBCUDA");
    }
    unsetenv("KBENCH_LIBNVRTC");
}

/* An a-CUBIN loads on exactly its compute capability: refused before any case, with the
 * reason, on a device of another (the driver double's KBENCH_FAKE_CUDA_ARCH). */
static void test_a_target_refused_on_another_device(void)
{
    const char *fake = getenv("KBENCH_FAKE_LIBCUDA");
    CHECK_MSG(fake && access(fake, R_OK) == 0, "KBENCH_FAKE_LIBCUDA does not name the driver double");
    if (!fake)
        return;
    setenv("KBENCH_LIBCUDA", fake, 1);
    setenv("KBENCH_FAKE_CUDA_ARCH", "100", 1);
    const char *a[] = { "kbench", "run", "suites/smoke.yaml", "--backend", "cuda", "--arch", "sm_90a", NULL };
    const char *na[] = { "--arch sm_90a: a CUBIN for sm_90a runs only on compute capability 9.0 exactly",
                         "this device is 10.0: use --arch sm_100 or leave --arch out", NULL };
    expect(2, a, na);
    setenv("KBENCH_FAKE_CUDA_ARCH", "103", 1);
    const char *b[] = { "kbench", "devices", "--backend", "cuda", "--arch", "sm_100a", NULL };
    const char *nb[] = { "sm_100a runs only on compute capability 10.0 exactly", NULL };
    expect(2, b, nb);
    const char *c[] = { "kbench", "devices", "--backend", "cuda", "--arch", "sm_100", NULL };
    const char *nc[] = { "arch           sm_103", "compiled for   sm_100", NULL };
    expect(0, c, nc);
    setenv("KBENCH_FAKE_CUDA_ARCH", "90", 1);
    const char *d[] = { "kbench", "devices", "--backend", "cuda", "--arch", "sm_100", NULL };
    const char *nd[] = { "a CUBIN for sm_100 runs only on compute capability 10.x", NULL };
    expect(2, d, nd);
    const char *e[] = { "kbench", "devices", "--backend", "cuda", "--arch", "sm_90a", NULL };
    const char *ne[] = { "compiled for   sm_90a", NULL };
    expect(0, e, ne);
    unsetenv("KBENCH_FAKE_CUDA_ARCH");
    unsetenv("KBENCH_LIBCUDA");
}

/* The emulator emulates the architecture --arch names: its name and limits, and the
 * modules it builds for sm_90a, sm_100 and sm_120a run and verify. */
static void test_emulated_arch(void)
{
    const char *a[] = { "kbench", "devices", "--backend", "emu", "--arch", "sm_120a", NULL };
    const char *na[] = { "arch           sm_120a (emulated)", "smem/block     99 KiB", NULL };
    expect(0, a, na);
    const char *b[] = { "kbench", "devices", "--backend", "emu", NULL };
    const char *nb[] = { "arch           sm_90 (emulated)", "smem/block     227 KiB", NULL };
    expect(0, b, nb);
    const char *archs[] = { "sm_90a", "sm_100", "sm_120a" };
    for (int i = 0; i < 3; i++) {
        char out[300];
        snprintf(out, sizeof out, "%s/emu_%s.jsonl", dir, archs[i]);
        const char *c[] = { "kbench", "run", "suites/smoke.yaml", "--backend", "emu", "--arch", archs[i], "--filter",
                            "gelu/vec(form=tanh,BLOCK=256,VEC=8", "--filter", "/31/", "--out", out, "-q",
                            "--min-samples", "1", "--max-samples", "1", NULL };
        char *log;
        CHECK_MSG(run(c, &log) == 0, "emu --arch %s:\n%s", archs[i], log);
        free(log);
        char *rec = slurp(out);
        char want[64];
        snprintf(want, sizeof want, "\"target_arch\":\"%s\"", archs[i]);
        CHECK_MSG(rec && strstr(rec, "\"status\":\"ok\"") && strstr(rec, want), "%s: %s", archs[i], rec ? rec : "");
        free(rec);
    }
}

/* kbench estimate on the architecture table: a GPU without a published SM count is refused,
 * an --arch whose CUBIN would not load on the GPU modelled is refused, a GPU whose clock is
 * unpublished is modelled without the per-clock roofs and says so, an a-target is named. */
static void test_estimate_targets(void)
{
    const char *a[] = { "kbench", "estimate", "suites/smoke.yaml", "--gpu", "b300", NULL };
    const char *na[] = { "kbench estimate: --gpu b300: ", "the model needs the SM count", NULL };
    expect(2, a, na);
    const char *b[] = { "kbench", "estimate", "suites/smoke.yaml", "--gpu", "b200", "--arch", "sm_90a", NULL };
    const char *nb[] = { "kbench estimate: --arch sm_90a on b200: a CUBIN for sm_90a runs only on compute "
                         "capability 9.0 exactly", NULL };
    expect(2, b, nb);
    const char *c[] = { "kbench", "estimate", "suites/smoke.yaml", "--gpu", "b200", "--filter",
                        "form=tanh,BLOCK=256,VEC=8", "-q", NULL };
    const char *nc[] = { "GPU b200 = B200, sm_100, 148 SMs, compiled for sm_100", "clock unpublished (sfu, cvt, issue, "
                         "smem and l2 roofs left out", "kbench estimate: b200, sm_100: ", NULL };
    expect(0, c, nc);
    const char *d[] = { "kbench", "estimate", "suites/smoke.yaml", "--gpu", "h100-sxm", "--arch", "sm_90a", "--filter",
                        "form=tanh,BLOCK=256,VEC=8", "--format", "json", NULL };
    const char *nd[] = { "\"compiled_for\": \"sm_90a\"", "\"compiled_for_sm\": 90", "\"model_clock_mhz\": 1830.0",
                         NULL };
    expect(0, d, nd);
}

/* Files in d ending in ext; the first one's path into first. */
static int count_files(const char *d, const char *ext, char *first, size_t n)
{
    DIR *dh = opendir(d);
    int k = 0;
    struct dirent *e;
    while (dh && (e = readdir(dh))) {
        size_t l = strlen(e->d_name), el = strlen(ext);
        if (l > el && !strcmp(e->d_name + l - el, ext) && k++ == 0)
            snprintf(first, n, "%s/%s", d, e->d_name);
    }
    if (dh)
        closedir(dh);
    return k;
}

static void test_emit_ptx_and_cubin(void)
{
    char out[300], first[600], file[300];
    snprintf(out, sizeof out, "%s/emit", dir);
    const char *a[] = { "kbench", "compile", "suites/smoke.yaml", "--arch", "sm_90a", "--emit", "ptx", "--out", out,
                        "--filter", "form=tanh", "-q", NULL };
    const char *na[] = { "ptx files written into", NULL };
    expect(0, a, na);
    int n = count_files(out, ".ptx", first, sizeof first);
    CHECK_MSG(n >= 2, "%d PTX files", n);
    char *ptx = slurp(first);
    CHECK_MSG(ptx && strstr(ptx, ".target sm_90a") && strstr(ptx, ".entry gelu"), "%s", first);
    free(ptx);
    /* never overwrite: the same DIR again is refused before any compile, the files as they were */
    struct stat before, after;
    CHECK(stat(first, &before) == 0);
    const char *na2[] = { "already exists; kbench never overwrites a file it did not write in this run", NULL };
    expect(2, a, na2);
    CHECK(stat(first, &after) == 0 && after.st_mtime == before.st_mtime && after.st_size == before.st_size);
    /* CUBINs: ELF images of machine EM_CUDA (190) */
    snprintf(out, sizeof out, "%s/emit_cubin", dir);
    const char *b[] = { "kbench", "compile", "suites/smoke.yaml", "--arch", "sm_100", "--emit", "cubin", "--out", out,
                        "--filter", "form=tanh,BLOCK=256,VEC=8", "-q", NULL };
    const char *nb[] = { "cubin files written into", NULL };
    expect(0, b, nb);
    CHECK(count_files(out, ".cubin", first, sizeof first) >= 1);
    char *img = slurp(first);
    CHECK_MSG(img && !memcmp(img, ELFMAG, SELFMAG) && ((const Elf64_Ehdr *)img)->e_machine == 190, "%s", first);
    free(img);
    /* the directory rules, checked before anything compiles */
    snprintf(file, sizeof file, "%s/a-file", dir);
    FILE *f = fopen(file, "w");
    CHECK(f && fputs("x", f) >= 0 && fclose(f) == 0);
    const char *c[] = { "kbench", "compile", "suites/smoke.yaml", "--emit", "ptx", "--out", file, NULL };
    const char *nc[] = { "--out: ", "exists and is not a directory", NULL };
    expect(2, c, nc);
    const char *d[] = { "kbench", "compile", "suites/smoke.yaml", "--emit", "cubin", "--out", "/proc/kbench-emit", NULL };
    const char *nd[] = { "--out: cannot make or write the directory /proc/kbench-emit", NULL };
    expect(3, d, nd);
    const char *e[] = { "kbench", "compile", "suites/smoke.yaml", "--emit", "ptx", NULL };
    const char *ne[] = { "--emit ptx|cubin and --out DIR come together", NULL };
    expect(2, e, ne);
    const char *g[] = { "kbench", "compile", "suites/smoke.yaml", "--emit", "sass", "--out", out, NULL };
    const char *ng[] = { "--emit: expected one of ptx, cubin, got 'sass'", NULL };
    expect(2, g, ng);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kbench-arch-cli-XXXXXX");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    RUN(test_arch_names);
    RUN(test_nvrtc_list_at_run_time);
    RUN(test_a_target_refused_on_another_device);
    RUN(test_emulated_arch);
    RUN(test_estimate_targets);
    RUN(test_emit_ptx_and_cubin);
    TEST_MAIN_END();
}
