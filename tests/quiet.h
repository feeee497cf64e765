/* quiet.h - call a `kbench <command>` function (int fn(int argc, char **argv)) from a
 * test with its stdout silenced, for commands whose output the test does not read. */
#ifndef KB_TEST_QUIET_H
#define KB_TEST_QUIET_H

#include <stdio.h>
#include <unistd.h>

/* argv[0] is the command name; argv is NULL-terminated. Returns fn's exit code. */
static int run_quiet(int (*fn)(int, char **), char **argv)
{
    int argc = 0;
    while (argv[argc])
        argc++;
    fflush(stdout);
    int saved = dup(1);
    FILE *null = fopen("/dev/null", "w");
    dup2(fileno(null), 1);
    int rc = fn(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    fclose(null);
    return rc;
}

#endif
