/* devices.h - `kbench devices`. */
#ifndef KB_DEVICES_H
#define KB_DEVICES_H

#include "cli/run.h"

/* The device of o->backend ("auto": the driver's) with its properties and peaks; says so
 * and returns KB_EXIT_SETUP when there is none. A process exit code. */
int kb_cmd_devices(const kb_run_opts *o);

extern const kb_command kb_command_devices;

#endif
