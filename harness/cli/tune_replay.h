/* tune_replay.h - `kbench tune --replay FILE`: strategies run against recorded times
 * (tune/replay.h) instead of a device, one strategy or, with --strategy all, every
 * strategy over --repeats seeds scored against random sampling at the same budget. */
#ifndef KB_CLI_TUNE_REPLAY_H
#define KB_CLI_TUNE_REPLAY_H

#include "cli/tune_run.h"

/* Run the replay o asks for; a process exit code. cmd: for error messages. */
int kb_tune_replay_main(const kb_command *cmd, const kb_tune_opts *o);

#endif /* KB_CLI_TUNE_REPLAY_H */
