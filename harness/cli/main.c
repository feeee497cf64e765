/* main.c - the kbench command line: the table of commands (cli/commands.c), each with its
 * options table (cli/opts.h), from which parsing and every --help come. */
#include "cli/commands.h"
#include "cli/console.h"
#include "cli/opts.h"
#include "core/kb.h"
#include "core/suggest.h"

#include <stdio.h>
#include <string.h>

static const char exit_codes[] =
    "exit codes: 0 all cases ok or skipped; 1 a case was wrong, faulted or failed to compile or launch;\n"
    "            2 bad command line, suite or input file; 3 no device, driver or toolchain, or an unusable\n"
    "            setting; 4 compare found a regression; 5 accept/fleet: a GPU below a performance floor;\n"
    "            6 accept/fleet: wrong results or a hardware error; 130 interrupted (finished cases are recorded)\n";

static void main_help(FILE *out)
{
    fputs("usage: kbench <command> [options]\n\ncommands:\n", out);
    for (int i = 0; i < kb_n_commands; i++) {
        char left[48];
        snprintf(left, sizeof left, "%s %s", kb_commands[i]->name, kb_commands[i]->args);
        fprintf(out, "  %-18s %s\n", left, kb_commands[i]->about);
    }
    fputs("\n  kbench <command> --help   the options of a command (also: kbench help <command>)\n"
          "  kbench --version\n\n", out);
    fputs(exit_codes, out);
}

static const kb_command *find_command(const char *name)
{
    for (int i = 0; i < kb_n_commands; i++)
        if (strcmp(kb_commands[i]->name, name) == 0)
            return kb_commands[i];
    return NULL;
}

/* "unknown command 'rnu' - did you mean 'run'? (kbench --help lists them)"; exit 2. */
static int unknown_command(const char *name)
{
    const char *names[64];   /* more than the table holds */
    int n = kb_n_commands < 64 ? kb_n_commands : 64;
    for (int i = 0; i < n; i++)
        names[i] = kb_commands[i]->name;
    const char *close = kb_suggest(name, names, n);
    fprintf(stderr, "kbench: unknown command '%s'", name);
    if (close)
        fprintf(stderr, " - did you mean '%s'?", close);
    fprintf(stderr, " (kbench --help lists them)\n");
    return KB_EXIT_INPUT;
}

/* kbench help [COMMAND] */
static int help(int argc, char **argv)
{
    if (argc < 3) {
        main_help(stdout);
        return KB_EXIT_OK;
    }
    const kb_command *cmd = find_command(argv[2]);
    if (!cmd)
        return unknown_command(argv[2]);
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
    if (!cmd)
        return unknown_command(name);
    return kb_command_main(cmd, argc - 2, argv + 2);
}
