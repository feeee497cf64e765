/* commands.h - the table of kbench's commands, each with its option table (cli/opts.h).
 * main.c dispatches through it; the tests walk it (every output option of every command
 * against hostile targets: tests/test_robust.c). A new command is its cli/<command>.{c,h}
 * with a kb_command, and one row in commands.c. */
#ifndef KB_COMMANDS_H
#define KB_COMMANDS_H

#include "cli/opts.h"

/* Every command, in the order `kbench --help` lists them (static storage). */
extern const kb_command *const kb_commands[];
extern const int kb_n_commands;

#endif /* KB_COMMANDS_H */
