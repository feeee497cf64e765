/* compile.h - `kbench compile`. */
#ifndef KB_COMPILE_H
#define KB_COMPILE_H

#include "cli/run.h"

/* Offline NVRTC compile of every module of o->suite_path for o->sm_override (default 90),
 * through the compile cache, with each case's resources from the build log. Exit 1 on
 * a compile error, or on any spill when fail_on_spill; a process exit code. */
int kb_cmd_compile(const kb_run_opts *o, int fail_on_spill);

extern const kb_command kb_command_compile;

#endif
