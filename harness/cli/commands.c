/* commands.c - the table of commands (see commands.h). */
#include "cli/commands.h"

#include "cli/accept.h"
#include "cli/compile.h"
#include "cli/devices.h"
#include "cli/estimate.h"
#include "cli/export.h"
#include "cli/fleet.h"
#include "cli/list.h"
#include "cli/model.h"
#include "cli/report_cmd.h"
#include "cli/run.h"
#include "cli/selftest.h"
#include "cli/tune.h"

const kb_command *const kb_commands[] = {
    &kb_command_run, &kb_command_list, &kb_command_devices, &kb_command_compile,
    &kb_command_report, &kb_command_query, &kb_command_compare,
    &kb_command_tune, &kb_command_export,
    &kb_command_accept, &kb_command_fleet,
    &kb_command_selftest,
    &kb_command_estimate,
    &kb_command_model,
};

const int kb_n_commands = (int)(sizeof kb_commands / sizeof kb_commands[0]);
