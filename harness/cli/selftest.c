/* selftest.c - `kbench selftest` (see cli/selftest.h). */
#include "cli/selftest.h"

#include "core/paths.h"
#include "selftest/selftest.h"

#include <stddef.h>
#include <stdio.h>

int kb_cmd_selftest(const kb_selftest_cli_opts *o)
{
    char suite[1024];
    if (o->suite_path)
        snprintf(suite, sizeof suite, "%s", o->suite_path);
    else
        snprintf(suite, sizeof suite, "%s/suites/selftest.yaml", kb_data_root());
    kb_selftest_opts so = { suite, o->cache_dir, o->device_index, o->work_dir, o->sm_override };
    kb_selftest t;
    kb_sb err;
    kb_sb_init(&err);
    fprintf(stderr, "kbench: selftest: %s on the emulator, then on the GPU\n", suite);
    kb_status st = kb_selftest_run(&so, &t, &err);
    if (st == KB_ERR_INTERRUPTED) {
        kb_sb_free(&err);
        return KB_EXIT_INTERRUPTED;
    }
    if (st != KB_OK) {
        fprintf(stderr, "kbench: selftest: %s\n", err.s);
        kb_sb_free(&err);
        return st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
    }
    kb_sb_free(&err);
    kb_selftest_print(&t, stdout);
    return kb_selftest_exit(&t);
}

static const kb_opt selftest_opts[] = {
    { "--device", NULL, KB_OPT_INT, offsetof(kb_selftest_cli_opts, device_index), "N",
      "CUDA device ordinal (default 0)", 0, 1023, 0, NULL, 0 },
    { "--arch", NULL, KB_OPT_ARCH, offsetof(kb_selftest_cli_opts, sm_override), "ARCH",
      "both sides compile for this architecture (default: the GPU's own; sm_90a: the a-target)", 0, 0, 0, NULL, 0 },
    { "--cache-dir", NULL, KB_OPT_OUTDIR, offsetof(kb_selftest_cli_opts, cache_dir), "DIR",
      "compile cache (default $KBENCH_CACHE_DIR, $XDG_CACHE_HOME/kbench, ~/.cache/kbench)", 0, 0, 0, NULL, 0 },
    { "--work-dir", NULL, KB_OPT_OUTDIR, offsetof(kb_selftest_cli_opts, work_dir), "DIR",
      "keep both sides' outputs (.npy per case) here (default a new $TMPDIR/kbench-selftest-XXXXXX)", 0, 0, 0,
      NULL, 0 },
};

static int selftest_main(void *o) { return kb_cmd_selftest(o); }

const kb_command kb_command_selftest = {
    "selftest", "[SUITE]", 0, 1, offsetof(kb_selftest_cli_opts, suite_path),
    "what the first run on a GPU checks: emulator vs GPU outputs, driver/NVRTC, latency, bandwidth, graphs",
    "  runs SUITE (default suites/selftest.yaml) on the emulator and on the GPU and compares every output\n"
    "  element by element; then the driver/NVRTC fit, empty-kernel launch latency, copy bandwidth against the\n"
    "  peak, the graph round trip and NVML. Exit 0: every check passed; 1: one failed; 3: no GPU was checked\n"
    "  (the verdict lists what could not be checked).\n",
    selftest_opts, (int)(sizeof selftest_opts / sizeof selftest_opts[0]), sizeof(kb_selftest_cli_opts), NULL,
    selftest_main,
};
