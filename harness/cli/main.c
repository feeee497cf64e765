/* main.c - the kbench command line: one table of commands, each with its options table
 * (cli/opts.h), from which parsing and every --help come. A new command is its
 * cli/<command>.{c,h} with a kb_command, and one row below. */
#include "cli/accept.h"
#include "cli/compile.h"
#include "cli/console.h"
#include "cli/devices.h"
#include "cli/estimate.h"
#include "cli/export.h"
#include "cli/fleet.h"
#include "cli/list.h"
#include "cli/model.h"
#include "cli/opts.h"
#include "cli/report_cmd.h"
#include "cli/run.h"
#include "cli/tune.h"
#include "cli/selftest.h"
#include "core/kb.h"

#include <stdio.h>
#include <string.h>

static const kb_command *const commands[] = {
    &kb_command_run, &kb_command_list, &kb_command_devices, &kb_command_compile,
    &kb_command_report, &kb_command_query, &kb_command_compare,
    &kb_command_tune, &kb_command_export,
    &kb_command_accept, &kb_command_fleet,
    &kb_command_selftest,
    &kb_command_estimate,
    &kb_command_model,
};
#define N_COMMANDS ((int)(sizeof commands / sizeof commands[0]))

static const char exit_codes[] =
    "exit codes: 0 all cases ok or skipped; 1 a case was wrong, faulted or failed to compile or launch;\n"
    "            2 bad command line, suite or input file; 3 no device, driver or toolchain, or an unusable\n"
    "            setting; 4 compare found a regression; 5 accept/fleet: a GPU below a performance floor;\n"
    "            6 accept/fleet: wrong results or a hardware error; 130 interrupted (finished cases are recorded)\n";

static void main_help(FILE *out)
{
    fputs("usage: kbench <command> [options]\n\ncommands:\n", out);
    for (int i = 0; i < N_COMMANDS; i++) {
        char left[48];
        snprintf(left, sizeof left, "%s %s", commands[i]->name, commands[i]->args);
        fprintf(out, "  %-18s %s\n", left, commands[i]->about);
    }
    fputs("\n  kbench <command> --help   the options of a command (also: kbench help <command>)\n"
          "  kbench --version\n\n", out);
    fputs(exit_codes, out);
}

static const kb_command *find_command(const char *name)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (strcmp(commands[i]->name, name) == 0)
            return commands[i];
    return NULL;
}

/* kbench help [COMMAND] */
static int help(int argc, char **argv)
{
    if (argc < 3) {
        main_help(stdout);
        return KB_EXIT_OK;
    }
    const kb_command *cmd = find_command(argv[2]);
    if (!cmd) {
        fprintf(stderr, "kbench: unknown command '%s' (kbench --help lists them)\n", argv[2]);
        return KB_EXIT_INPUT;
    }
    kb_opts_help(cmd, stdout);
    return KB_EXIT_OK;
}

int main(int argc, char **argv)
{
    kb_console_report_install();   /* every diagnostic below cli/ is printed here */
    if (argc < 2) {
        main_help(stderr);
        return KB_EXIT_INPUT;
    }
    const char *name = argv[1];
    if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help"))
        return help(argc, argv);
    if (!strcmp(name, "--version")) {
        printf("kbench %s\n", KB_VERSION);
        return KB_EXIT_OK;
    }
    const kb_command *cmd = find_command(name);
    if (!cmd) {
        fprintf(stderr, "kbench: unknown command '%s' (kbench --help lists them)\n", name);
        return KB_EXIT_INPUT;
    }
    return kb_command_main(cmd, argc - 2, argv + 2);
}
