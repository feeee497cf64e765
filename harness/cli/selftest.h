/* selftest.h - `kbench selftest`: the emulator and the GPU run the same small suite and
 * their outputs are compared; driver/NVRTC fit, launch latency, copy bandwidth, graph
 * round trip and NVML are checked (selftest/selftest.h). */
#ifndef KB_CLI_SELFTEST_H
#define KB_CLI_SELFTEST_H

#include "cli/opts.h"

typedef struct {
    const char *suite_path;     /* default <data root>/suites/selftest.yaml */
    const char *cache_dir;
    const char *work_dir;       /* default a fresh $TMPDIR/kbench-selftest-XXXXXX */
    int device_index;
    int sm_override;            /* --arch: a code of core/arch.h; 0 = the GPU's own */
} kb_selftest_cli_opts;

/* Exit 0 when every check passed, 1 when one failed, 3 when no GPU could be checked
 * (what was not checked is listed), 2 for a bad suite, 130 interrupted. */
int kb_cmd_selftest(const kb_selftest_cli_opts *o);

extern const kb_command kb_command_selftest;

#endif
