/* main.c - the kbench command line: parse flags into kb_run_opts, dispatch. */
#include "core/kb.h"
#include "cli/report_cmd.h"
#include "cli/compile.h"
#include "cli/devices.h"
#include "cli/list.h"
#include "cli/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_main[] =
    "usage: kbench <command> [options]\n"
    "\n"
    "commands:\n"
    "  run SUITE       plan, compile, execute, verify, measure and record every case of SUITE\n"
    "  list [SUITE]    the families with their variants and axes, or the planned cases of SUITE\n"
    "  devices         the device the selected backend drives, with its properties\n"
    "  compile SUITE   JIT every module of SUITE with NVRTC for --arch (offline), show registers and spills\n"
    "  report RUN      a recorded run as markdown, CSV, HTML (roofline), Google Benchmark JSON or JUnit\n"
    "  query SQL       SQL over the results store (results/kbench.db)\n"
    "  compare A B     two runs side by side: ratio of medians, Mann-Whitney U, regressions (exit 4)\n"
    "\n"
    "  kbench <command> --help   options of a command\n"
    "  kbench --version\n"
    "\n"
    "exit codes: 0 all cases ok or skipped; 1 a case was wrong, faulted or failed to compile or launch;\n"
    "            2 bad command line or suite; 3 no device, driver or toolchain; 4 compare found a regression;\n"
    "            130 interrupted\n";

static const char usage_run[] =
    "usage: kbench run SUITE [options]\n"
    "\n"
    "  --backend auto|cuda|emu  cuda when a device is present, else the CPU emulator (default auto)\n"
    "  --arch sm_80|sm_89|sm_90 target architecture (cuda: compile for it; emu: emulate it; default: the device's / sm_90)\n"
    "  --device N               CUDA device ordinal (default 0)\n"
    "  --filter TEXT            run only cases whose id contains TEXT (repeatable: any matches)\n"
    "  --out FILE               JSON Lines output (default results/<suite>-<UTC time>.jsonl)\n"
    "  --resume FILE            append to FILE, skipping the cases it already records\n"
    "  --cache-dir DIR          compile cache (default $KBENCH_CACHE_DIR, $XDG_CACHE_HOME/kbench, ~/.cache/kbench)\n"
    "  --dump DIR               write inputs, output and reference as .npy files under DIR/<case>/:\n"
    "                           for every case a --filter selects, else for every wrong case\n"
    "  --full-shapes            on the emulator, run the full shapes instead of the suite's check shapes\n"
    "  --min-samples N, --max-samples N, --timeout S   override the suite's measurement settings\n"
    "  --threads N              emulator worker threads (default: cores)\n"
    "  --quiet                  no per-case rows, only the summary\n";

static const char usage_list[] =
    "usage: kbench list [SUITE] [--backend B] [--arch sm_XX] [--filter TEXT] [--full-shapes]\n"
    "\n"
    "  without SUITE: every family with its variants, dtypes, dims and parameters\n"
    "  with SUITE:    every planned case id of the suite (after zip and where)\n";

static const char usage_devices[] =
    "usage: kbench devices [--backend auto|cuda|emu] [--device N]\n"
    "\n"
    "  the device of the backend with its properties; with --backend cuda and no driver,\n"
    "  says so and exits 3\n";

static const char usage_compile[] =
    "usage: kbench compile SUITE [--arch sm_80|sm_89|sm_90] [--filter TEXT] [--fail-on-spill] [--quiet]\n"
    "\n"
    "  compiles every distinct module of the suite with NVRTC for the architecture (default sm_90);\n"
    "  needs no GPU or driver. Prints registers, spill stores/loads, stack and static shared memory per\n"
    "  case; exits 1 when a module fails to compile, or with --fail-on-spill when any case spills\n";

static int parse_arch(const char *s, int *sm)
{
    if (strncmp(s, "sm_", 3) == 0)
        s += 3;
    char *end;
    long v = strtol(s, &end, 10);
    if (*end || (v != 80 && v != 86 && v != 89 && v != 90))
        return -1;
    *sm = (int)v;
    return 0;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > 1000000000)
        return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return KB_EXIT_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage_main, stdout);
        return KB_EXIT_OK;
    }
    if (!strcmp(cmd, "--version")) {
        printf("kbench %s\n", KB_VERSION);
        return KB_EXIT_OK;
    }
    if (!strcmp(cmd, "report"))
        return kb_cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "query"))
        return kb_cmd_query(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare"))
        return kb_cmd_compare(argc - 1, argv + 1);
    const char *usage = !strcmp(cmd, "run") ? usage_run : !strcmp(cmd, "list") ? usage_list
                      : !strcmp(cmd, "devices") ? usage_devices : !strcmp(cmd, "compile") ? usage_compile : NULL;
    if (!usage) {
        fprintf(stderr, "kbench: unknown command '%s'\n\n%s", cmd, usage_main);
        return KB_EXIT_INPUT;
    }

    kb_run_opts o = { .backend = "auto" };
    int fail_on_spill = 0;
    const char **filters = calloc((size_t)argc, sizeof *filters);
    int rc = KB_EXIT_INPUT;
    if (!filters)
        return KB_EXIT_SETUP;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        const char *val = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VAL() do { if (!val) { fprintf(stderr, "kbench %s: %s needs a value\n", cmd, a); goto out; } i++; } while (0)
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            fputs(usage, stdout);
            rc = KB_EXIT_OK;
            goto out;
        } else if (!strcmp(a, "--backend")) {
            NEED_VAL();
            if (strcmp(val, "auto") && strcmp(val, "cuda") && strcmp(val, "emu")) {
                fprintf(stderr, "kbench %s: --backend must be auto, cuda or emu, not '%s'\n", cmd, val);
                goto out;
            }
            o.backend = val;
        } else if (!strcmp(a, "--arch")) {
            NEED_VAL();
            if (parse_arch(val, &o.sm_override)) {
                fprintf(stderr, "kbench %s: --arch must be sm_80, sm_86, sm_89 or sm_90, not '%s'\n", cmd, val);
                goto out;
            }
        } else if (!strcmp(a, "--device")) {
            NEED_VAL();
            if (parse_int(val, &o.device_index)) {
                fprintf(stderr, "kbench %s: --device needs a device ordinal, not '%s'\n", cmd, val);
                goto out;
            }
        } else if (!strcmp(a, "--filter")) {
            NEED_VAL();
            filters[o.n_filters++] = val;
        } else if (!strcmp(a, "--out")) {
            NEED_VAL();
            o.out_path = val;
        } else if (!strcmp(a, "--resume")) {
            NEED_VAL();
            o.resume_path = val;
        } else if (!strcmp(a, "--cache-dir")) {
            NEED_VAL();
            o.cache_dir = val;
        } else if (!strcmp(a, "--dump")) {
            NEED_VAL();
            o.dump_dir = val;
        } else if (!strcmp(a, "--full-shapes")) {
            o.full_shapes = 1;
        } else if (!strcmp(a, "--fail-on-spill") && !strcmp(cmd, "compile")) {
            fail_on_spill = 1;
        } else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
            o.quiet = 1;
        } else if (!strcmp(a, "--threads") || !strcmp(a, "--min-samples") || !strcmp(a, "--max-samples")) {
            NEED_VAL();
            int *dst = !strcmp(a, "--threads") ? &o.emu_threads : !strcmp(a, "--min-samples") ? &o.min_samples
                                                                                                : &o.max_samples;
            if (parse_int(val, dst) || *dst == 0) {
                fprintf(stderr, "kbench %s: %s needs a positive integer, not '%s'\n", cmd, a, val);
                goto out;
            }
        } else if (!strcmp(a, "--timeout")) {
            NEED_VAL();
            char *end;
            o.timeout_s = strtod(val, &end);
            if (*end || !(o.timeout_s > 0)) {
                fprintf(stderr, "kbench %s: --timeout needs seconds > 0, not '%s'\n", cmd, val);
                goto out;
            }
        } else if (a[0] == '-') {
            fprintf(stderr, "kbench %s: unknown option '%s'\n\n%s", cmd, a, usage);
            goto out;
        } else if (!o.suite_path && strcmp(cmd, "devices")) {
            o.suite_path = a;
        } else {
            fprintf(stderr, "kbench %s: unexpected argument '%s'\n\n%s", cmd, a, usage);
            goto out;
        }
#undef NEED_VAL
    }
    o.filters = filters;
    if (!strcmp(cmd, "run") || !strcmp(cmd, "compile")) {
        if (!o.suite_path) {
            fprintf(stderr, "kbench %s: which suite? (e.g. kbench %s suites/llm.yaml)\n\n%s", cmd, cmd, usage);
            goto out;
        }
        rc = !strcmp(cmd, "run") ? kb_cmd_run(&o) : kb_cmd_compile(&o, fail_on_spill);
    } else if (!strcmp(cmd, "list")) {
        rc = kb_cmd_list(&o);
    } else {
        rc = kb_cmd_devices(&o);
    }
out:
    free(filters);
    return rc;
}
