/* test_output_walk.c - every output option of every command (cli/commands.h's table: the
 * rows marked KB_OPT_OUT, _OUTDIR and _OUTDB) against every hostile target, through the
 * kbench binary (issue 28). The options come from the tables; each needs a fixture here (a
 * command line that reaches the writing), and an output option without one fails the
 * test, so a new one cannot be forgotten.
 *
 * Targets and what the output rule (core/output.h) promises for each:
 *   file outputs     /dev/null: written through, still a device; /dev/full: exit 3, still a
 *                    device; a FIFO with a reader: written through, still a FIFO; a symlink
 *                    to a file: the file written, the link kept; a symlink to a directory, a
 *                    directory: exit 2; a read-only file: exit 3, byte-identical; a path in a
 *                    missing directory: exit 3, nothing made; each of the command's own
 *                    inputs: exit 2, byte-identical.
 *   directories      /dev/null, /dev/full, a FIFO, a symlink to a file, an input file: exit 2;
 *                    a symlink to a directory, a directory, a missing one (made): written;
 *                    a read-only directory: exit 3.
 *   databases        devices, FIFOs, directories, a symlink to a directory, inputs: exit 2;
 *                    a symlink to an empty file: the file claimed, the link kept; a
 *                    read-only database: exit 3, byte-identical; a missing directory: exit 3. */
#include "check.h"
#include "cli/commands.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>

static char dir[128];
static char log_path[256];
static char cache[600];

static const char *at(const char *name)
{
    static char bufs[16][600];
    static int k;
    char *b = bufs[k++ % 16];
    snprintf(b, sizeof bufs[0], "%s/%s", dir, name);
    return b;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

/* ---- fixtures: a command line per output option that reaches its writing ---- */

typedef struct {
    const char *cmd, *opt;
    const char *args[14];      /* after the command's name; the option and its value are appended */
    int ok_rc;                 /* the exit code of a run with a usable target */
    const char *inputs[4];     /* the command's own input files, each tried as the output */
} fixture;

static char suite[600], tsuite[600], records[600], tunedb[600], fleetdir[600], model[] = "tests/data/model_tiny.yaml";

#define RUN_ARGS suite, "--backend", "emu", "-q"
/* the outputs are the point, not the tuner's verdict on a loaded machine; --confirm re-measures
 * the winner, so a run that finds every configuration in the database still writes records */
#define TUNE_ARGS tsuite, "--backend", "emu", "-q", "--budget", "2", "--max-noise", "1e12", "--confirm"
static const fixture fixtures[] = {
    { "run", "--out", { RUN_ARGS }, 0, { suite } },
    { "run", "--resume", { RUN_ARGS }, 0, { suite } },
    { "run", "--trace", { RUN_ARGS, "--out", records }, 0, { suite, records } },
    { "run", "--dump", { RUN_ARGS, "--out", "/dev/null", "--filter", "gelu" }, 0, { suite } },
    { "run", "--cache-dir", { RUN_ARGS, "--out", "/dev/null" }, 0, { suite } },
    { "run", "--db", { RUN_ARGS, "--out", records }, 0, { suite, records } },
    { "tune", "--db", { TUNE_ARGS, "--out", "/dev/null" }, 0, { tsuite } },
    { "tune", "--out", { TUNE_ARGS, "--db", tunedb }, 0, { tsuite, tunedb } },
    { "tune", "--resume", { TUNE_ARGS, "--db", tunedb }, 0, { tsuite, tunedb } },
    { "tune", "--cache-dir", { TUNE_ARGS, "--db", tunedb, "--out", "/dev/null" },
      0, { tsuite, tunedb } },
    { "report", "--out", { records }, 0, { records } },
    { "compare", "--out", { records, records }, 0, { records } },
    { "export", "--out", { "--db", tunedb, "--allow-cpu" }, 0, { tunedb } },
    { "model", "--out", { records, "--model", model }, 0, { records, model } },
    { "accept", "--out-dir", { "--backend", "emu", "--suite", suite, "--check-suites", "no" }, 0, { suite } },
    { "accept", "--json", { "--backend", "emu", "--suite", suite, "--check-suites", "no", "--out-dir", fleetdir }, 0,
      { suite } },
    { "accept", "--junit", { "--backend", "emu", "--suite", suite, "--check-suites", "no", "--out-dir", fleetdir }, 0,
      { suite } },
    { "accept", "--cache-dir", { "--backend", "emu", "--suite", suite, "--check-suites", "no", "--out-dir", fleetdir },
      0, { suite } },
    { "fleet", "--out-dir", { fleetdir, "--quiet" }, 0, { NULL } },
    { "compile", "--cache-dir", { suite, "-q" }, 0, { suite } },
    { "estimate", "--cache-dir", { suite, "--gpu", "h100-sxm" }, 0, { suite } },
    /* no GPU here: the emulator's side runs and writes, then selftest exits 3 (nothing on a GPU checked) */
    { "selftest", "--cache-dir", { "tests/suites/selftest_small.yaml" }, 3, { "tests/suites/selftest_small.yaml" } },
    { "selftest", "--work-dir", { "tests/suites/selftest_small.yaml" }, 3, { "tests/suites/selftest_small.yaml" } },
};
#define N_FIXTURES ((int)(sizeof fixtures / sizeof fixtures[0]))

static const fixture *fixture_of(const char *cmd, const char *opt)
{
    for (int i = 0; i < N_FIXTURES; i++)
        if (!strcmp(fixtures[i].cmd, cmd) && !strcmp(fixtures[i].opt, opt))
            return &fixtures[i];
    return NULL;
}

/* ---- running one trial ---- */

/* Run the fixture with value as the option's; drain fifo_fd (>= 0) while it runs, counting
 * the bytes into *drained. The exit code (-2 when it had to be killed after 120 s). */
static int run_fixture(const fixture *fx, const char *value, int fifo_fd, long *drained)
{
    const char *argv[24] = { "kbench", fx->cmd };
    int n = 2;
    for (int i = 0; fx->args[i] && n < 20; i++)
        argv[n++] = fx->args[i];
    argv[n++] = fx->opt;
    argv[n++] = value;
    argv[n] = NULL;
    pid_t pid = spawn_kbench(argv, log_path);
    *drained = 0;
    for (int t = 0; t < 120 * 20; t++) {
        int status;
        if (fifo_fd >= 0) {
            char buf[65536];
            ssize_t k;
            while ((k = read(fifo_fd, buf, sizeof buf)) > 0)
                *drained += k;
        }
        if (waitpid(pid, &status, WNOHANG) == pid) {
            ssize_t k;
            char buf[65536];
            while (fifo_fd >= 0 && (k = read(fifo_fd, buf, sizeof buf)) > 0)
                *drained += k;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        usleep(50000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -2;
}

static long size_of(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static int is_kind(const char *path, mode_t kind)
{
    struct stat sb;
    return lstat(path, &sb) == 0 && (sb.st_mode & S_IFMT) == kind;
}

/* A trial's verdict: the exit code wanted, and the log on failure. */
static void expect_rc(const fixture *fx, const char *target, int rc, int want)
{
    CHECK_MSG(rc == want, "%s %s <%s>: exit %d, want %d", fx->cmd, fx->opt, target, rc, want);
    if (rc != want)
        print_tail(log_path, 1500);
}

/* A refusal: its exit code, and a message that names the option and the path. */
static void expect_refusal(const fixture *fx, const char *target, const char *path, int rc, int want)
{
    expect_rc(fx, target, rc, want);
    char *log = slurp(log_path);
    CHECK_MSG(log && strstr(log, path), "%s %s <%s>: the message does not name %s: %s", fx->cmd, fx->opt, target,
              path, log ? log : "(no log)");
    free(log);
}

/* Something was written into directory d. */
static int has_entries(const char *d)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd, "test -n \"$(ls -A '%s' 2>/dev/null)\"", d);
    return system(cmd) == 0;
}

static char *bytes_of(const char *path) { return slurp(path); }

static void same_bytes(const fixture *fx, const char *target, const char *path, char *before)
{
    char *after = bytes_of(path);
    CHECK_MSG(before && after && !strcmp(before, after), "%s %s <%s>: %s changed", fx->cmd, fx->opt, target, path);
    free(before);
    free(after);
}

/* ---- the targets of a file output ---- */

static void walk_devices(const fixture *fx, int writes_db)
{
    long drained;
    int want_null = writes_db ? 2 : fx->ok_rc, want_full = writes_db ? 2 : 3;
    expect_rc(fx, "/dev/null", run_fixture(fx, "/dev/null", -1, &drained), want_null);
    CHECK(is_kind("/dev/null", S_IFCHR));
    expect_rc(fx, "/dev/full", run_fixture(fx, "/dev/full", -1, &drained), want_full);
    CHECK_MSG(is_kind("/dev/full", S_IFCHR), "/dev/full is no longer a device after %s %s", fx->cmd, fx->opt);
}

static void walk_fifo(const fixture *fx, const char *t, int want)
{
    const char *fifo = at("walk.fifo");
    unlink(fifo);
    CHECK(mkfifo(fifo, 0644) == 0);
    int fd = open(fifo, O_RDONLY | O_NONBLOCK);
    long drained = 0;
    int rc = run_fixture(fx, fifo, fd, &drained);
    expect_rc(fx, t, rc, want);
    if (want == 0)
        CHECK_MSG(drained > 0, "%s %s <fifo>: nothing came through the FIFO", fx->cmd, fx->opt);
    CHECK(is_kind(fifo, S_IFIFO));
    close(fd);
    unlink(fifo);
}

static void walk_file_output(const fixture *fx, int db)
{
    long drained;
    walk_devices(fx, db);
    walk_fifo(fx, "fifo", db ? 2 : fx->ok_rc);
    const char *target = at("walk.target"), *link = at("walk.link");
    unlink(link);
    unlink(target);
    put(target, "");
    CHECK(symlink(target, link) == 0);
    expect_rc(fx, "symlink to a file", run_fixture(fx, link, -1, &drained), fx->ok_rc);
    CHECK(is_kind(link, S_IFLNK));
    CHECK_MSG(size_of(target) > 0, "%s %s: the symlink's target was not written", fx->cmd, fx->opt);
    unlink(link);
    CHECK(symlink(dir, link) == 0);
    expect_refusal(fx, "symlink to a directory", link, run_fixture(fx, link, -1, &drained), 2);
    CHECK(is_kind(link, S_IFLNK));
    unlink(link);
    expect_refusal(fx, "a directory", dir, run_fixture(fx, dir, -1, &drained), 2);
    const char *ro = at("walk.ro");
    put(ro, db ? "" : "keep\n");
    if (db)   /* a real database of the kind, read-only */
        CHECK(run_fixture(fx, ro, -1, &drained) == fx->ok_rc);
    chmod(ro, 0444);
    char *before = bytes_of(ro);
    expect_refusal(fx, "a read-only file", ro, run_fixture(fx, ro, -1, &drained), 3);
    same_bytes(fx, "a read-only file", ro, before);
    chmod(ro, 0644);
    unlink(ro);
    expect_refusal(fx, "a missing directory", at("no/such/dir/out"), run_fixture(fx, at("no/such/dir/out"), -1,
                   &drained), 3);
    CHECK(access(at("no"), F_OK) != 0);
}

/* ---- the targets of an output directory ---- */

static void walk_dir_output(const fixture *fx)
{
    long drained;
    expect_refusal(fx, "/dev/null", "/dev/null", run_fixture(fx, "/dev/null", -1, &drained), 2);
    expect_refusal(fx, "/dev/full", "/dev/full", run_fixture(fx, "/dev/full", -1, &drained), 2);
    CHECK(is_kind("/dev/null", S_IFCHR) && is_kind("/dev/full", S_IFCHR));
    walk_fifo(fx, "fifo", 2);
    const char *target = at("walk.file"), *link = at("walk.dlink"), *d = at("walk.dir");
    put(target, "keep\n");
    unlink(link);
    CHECK(symlink(target, link) == 0);
    expect_refusal(fx, "symlink to a file", link, run_fixture(fx, link, -1, &drained), 2);
    unlink(link);
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir '%s'", d, d);
    CHECK(system(cmd) == 0);
    CHECK(symlink(d, link) == 0);
    expect_rc(fx, "symlink to a directory", run_fixture(fx, link, -1, &drained), fx->ok_rc);
    CHECK(is_kind(link, S_IFLNK));
    CHECK_MSG(has_entries(d), "%s %s: nothing written through the symlink into its directory", fx->cmd, fx->opt);
    unlink(link);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir '%s'", d, d);
    CHECK(system(cmd) == 0);
    expect_rc(fx, "a directory", run_fixture(fx, d, -1, &drained), fx->ok_rc);
    CHECK_MSG(has_entries(d), "%s %s: nothing written into the directory", fx->cmd, fx->opt);
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mkdir '%s'", d, d);
    CHECK(system(cmd) == 0);
    chmod(d, 0555);
    expect_refusal(fx, "a read-only directory", d, run_fixture(fx, d, -1, &drained), 3);
    CHECK(!has_entries(d));
    chmod(d, 0755);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", at("made"));
    CHECK(system(cmd) == 0);
    expect_rc(fx, "a missing directory", run_fixture(fx, at("made/here"), -1, &drained), fx->ok_rc);
    CHECK(is_kind(at("made/here"), S_IFDIR) && has_entries(at("made/here")));
}

static void walk_inputs(const fixture *fx)
{
    long drained;
    for (int i = 0; fx->inputs[i]; i++) {
        char *before = bytes_of(fx->inputs[i]);
        expect_refusal(fx, fx->inputs[i], fx->inputs[i], run_fixture(fx, fx->inputs[i], -1, &drained), 2);
        same_bytes(fx, "its own input", fx->inputs[i], before);
    }
}

/* ---- the walk ---- */

static void make_inputs(void)
{
    snprintf(suite, sizeof suite, "%s/tiny.yaml", dir);
    snprintf(tsuite, sizeof tsuite, "%s/tune.yaml", dir);
    snprintf(records, sizeof records, "%s/tiny.jsonl", dir);
    snprintf(tunedb, sizeof tunedb, "%s/tune.db", dir);
    snprintf(fleetdir, sizeof fleetdir, "%s/fleet", dir);
    put(suite, "suite: tiny\nbenchmarks:\n  - family: gelu\n    variant: naive\n    dtype: fp32\n"
               "    shape: {n: 1000}\n    measure: {min_samples: 1, max_samples: 2, warmup: 0}\n");
    put(tsuite, "suite: tunetiny\nbenchmarks:\n  - family: gelu\n    variant: naive\n    dtype: fp32\n"
                "    shape: {n: 1000}\n    params: {BLOCK: [64, 128]}\n"
                "    measure: {min_samples: 1, max_samples: 2, warmup: 0}\n");
    const char *r[] = { "kbench", "run", suite, "--backend", "emu", "-q", "--out", records, NULL };
    CHECK(run_kbench(r, log_path) == 0);
    const char *t[] = { "kbench", "tune", tsuite, "--backend", "emu", "-q", "--db", tunedb, "--out", "/dev/null",
                        "--max-noise", "1e12", NULL };   /* the outputs are the point, not the verdict on a loaded machine */
    CHECK(run_kbench(t, log_path) == 0);
    const char *a[] = { "kbench", "accept", "--backend", "emu", "--suite", suite, "--check-suites", "no",
                        "--out-dir", fleetdir, NULL };
    CHECK(run_kbench(a, log_path) == 0);
}

static void test_every_output_option(void)
{
    int walked = 0;
    for (int c = 0; c < kb_n_commands; c++) {
        const kb_command *cmd = kb_commands[c];
        for (int i = 0; i < cmd->n_opts; i++) {
            const kb_opt *op = &cmd->opts[i];
            if (!kb_opt_is_output(op->kind))
                continue;
            const fixture *fx = fixture_of(cmd->name, op->name);
            CHECK_MSG(fx, "kbench %s %s: an output option without a fixture in test_output_walk.c", cmd->name,
                      op->name);
            if (!fx)
                continue;
            printf("  %s %s\n", cmd->name, op->name);
            fflush(stdout);
            if (op->kind == KB_OPT_OUTDIR)
                walk_dir_output(fx);
            else
                walk_file_output(fx, op->kind == KB_OPT_OUTDB);
            walk_inputs(fx);
            walked++;
        }
    }
    CHECK(walked >= 20);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb_test_walk.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(log_path, sizeof log_path, "%s/out.log", dir);
    const char *c = getenv("KBENCH_CACHE_DIR");
    snprintf(cache, sizeof cache, "%s", c ? c : "");
    make_inputs();
    RUN(test_every_output_option);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "chmod -R u+w '%s'; rm -rf '%s'", dir, dir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
    TEST_MAIN_END();
}
