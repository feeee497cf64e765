/* tune.h - `kbench tune SUITE`: search each problem's configurations (tune/space.h) with
 * a strategy (tune/strategy.h), every evaluation a case through the one pipeline (verified,
 * measured, recorded as an ordinary record and in the tuning database), then choose each
 * problem's winner beyond the noise (tune/winner.h). `--replay FILE` runs a strategy
 * against recorded times instead (cli/tune_replay.h). */
#ifndef KB_CLI_TUNE_H
#define KB_CLI_TUNE_H

#include "cli/tune_run.h"


extern const kb_command kb_command_tune;

/* Run `kbench tune` with o; a process exit code. */
int kb_cmd_tune(const kb_tune_opts *o);

#endif /* KB_CLI_TUNE_H */
