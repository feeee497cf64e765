/* spawn.h - run the kbench binary from a test: argv in, exit code and output out.
 * The binary is $KBENCH_BIN (set by CTest), else ./build/kbench. */
#ifndef KB_TEST_SPAWN_H
#define KB_TEST_SPAWN_H

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *kbench_bin(void)
{
    const char *b = getenv("KBENCH_BIN");
    return b && *b ? b : "./build/kbench";
}

/* Start argv[0..] (argv[0] is replaced by the kbench binary) with stdout+stderr going
 * to out_path. Returns the pid (> 0); when the binary cannot be started the test program
 * exits 1 with a message, so no caller ever signals pid -1. */
static pid_t spawn_kbench(const char *const *argv, const char *out_path)
{
    int n = 0;
    while (argv[n])
        n++;
    char **av = calloc((size_t)n + 1, sizeof *av);
    av[0] = (char *)kbench_bin();
    for (int i = 1; i < n; i++)
        av[i] = (char *)argv[i];
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    pid_t pid;
    int rc = posix_spawn(&pid, av[0], &fa, NULL, av, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0 || pid <= 0) {
        /* Never hand back -1: a caller's kill(pid, ...) would signal every process it may
         * (kill(-1), as root the whole machine). No binary, no test. */
        fprintf(stderr, "spawn.h: cannot start %s: %s (set KBENCH_BIN, or run from the source directory)\n",
                av[0], strerror(rc));
        exit(1);
    }
    free(av);
    return pid;
}

/* Wait for pid; returns its exit code, 128+signal when killed, -1 on error. */
static int wait_exit(pid_t pid)
{
    int status;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

/* Run kbench to completion; returns the exit code. */
static inline int run_kbench(const char *const *argv, const char *out_path)
{
    return wait_exit(spawn_kbench(argv, out_path));
}

/* Run kbench, killing it after limit_s seconds: returns its exit code, or -2 when it
 * had to be killed (a hang is a failure of its own). */
static inline int run_kbench_within(const char *const *argv, const char *out_path, int limit_s)
{
    pid_t pid = spawn_kbench(argv, out_path);
    if (pid < 0)
        return -1;
    for (int i = 0; i < limit_s * 20; i++) {
        int status;
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
        usleep(50000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -2;
}

/* Whole file as a NUL-terminated string (malloc'ed), or NULL. */
static inline char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    size_t got = fread(s, 1, (size_t)n, f);
    s[got] = 0;
    fclose(f);
    return s;
}

static inline void print_tail(const char *path, size_t max)
{
    char *s = slurp(path);
    if (!s)
        return;
    size_t n = strlen(s);
    fprintf(stderr, "---- %s (last %zu bytes) ----\n%s\n----\n", path, n < max ? n : max,
            n > max ? s + n - max : s);
    free(s);
}

#endif
