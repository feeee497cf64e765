/* test_robust.c - hostile and absurd inputs through the kbench binary, category by
 * category (suites, command line, environment, damaged cache, record files, reports,
 * query, signals). The rule for each: the documented exit code, a message that names the
 * place and says what was expected, done within seconds, no signal, and files that must
 * not change left byte-identical. */
#include "accept/spec.h"
#include "check.h"
#include "core/kb.h"
#include "spawn.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdarg.h>

static char dir[128];
static char log_path[256];

static const char *in_dir(const char *name)
{
    static char bufs[8][512];
    static int k;
    char *b = bufs[k++ % 8];
    snprintf(b, 512, "%s/%s", dir, name);
    return b;
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return;
    fputs(text, f);
    fclose(f);
}

/* Run kbench (argv[0] ignored) within limit_s; check exit code want and that the output
 * contains every non-NULL needle. */
static void expect(int limit_s, int want, const char *const *argv, const char *needle, const char *needle2)
{
    int rc = run_kbench_within(argv, log_path, limit_s);
    char *out = slurp(log_path);
    CHECK_MSG(rc == want, "%s %s: exit %d, want %d", argv[1], argv[2] ? argv[2] : "", rc, want);
    CHECK_MSG(out && (!needle || strstr(out, needle)), "missing '%s' in: %s", needle, out ? out : "(no output)");
    CHECK_MSG(out && (!needle2 || strstr(out, needle2)), "missing '%s' in: %s", needle2, out ? out : "(no output)");
    if (rc != want)
        print_tail(log_path, 2000);
    free(out);
}

/* The bytes of path now, for an identity check later (caller frees). */
static char *snapshot(const char *path) { return slurp(path); }

static void same_bytes(const char *path, char *before)
{
    char *after = slurp(path);
    CHECK_MSG(before && after && strcmp(before, after) == 0, "%s changed", path);
    free(after);
    free(before);
}

static const char tiny_suite[] =
    "suite: tiny\n"
    "benchmarks:\n"
    "  - family: gelu\n"
    "    variant: naive\n"
    "    dtype: fp32\n"
    "    shape: {n: 1000}\n"
    "    measure: {min_samples: 1, warmup: 0}\n";

static void test_suites(void)
{
    char out[512];
    snprintf(out, sizeof out, "%s", in_dir("s.jsonl"));   /* in_dir's buffers are reused */
    const char *av[] = { "kbench", "run", NULL, "--backend", "emu", "--out", out, NULL };
    av[2] = "/dev/zero";
    expect(10, 2, av, "/dev/zero: not a regular file", NULL);
    /* 100k levels of nesting: refused by the event pass in milliseconds */
    kb_sb t;
    kb_sb_init(&t);
    kb_sb_printf(&t, "suite: deep\nbenchmarks:\n  - family: gelu\n    shape: ");
    for (int i = 0; i < 100000; i++) kb_sb_append(&t, "[", 1);
    for (int i = 0; i < 100000; i++) kb_sb_append(&t, "]", 1);
    put(in_dir("deep.yaml"), t.s);
    av[2] = in_dir("deep.yaml");
    expect(10, 2, av, "deep.yaml:4:", "nested more than 64 levels");
    /* 40k presets: the duplicate-key check and lookups stay fast */
    kb_sb_clear(&t);
    kb_sb_printf(&t, "suite: many\nshapes:\n");
    for (int i = 0; i < 40000; i++) kb_sb_printf(&t, "  p%d: {n: %d}\n", i, i + 1);
    kb_sb_printf(&t, "  p7: {n: 3}\nbenchmarks:\n  - family: gelu\n    shape: p1\n");
    put(in_dir("many.yaml"), t.s);
    av[2] = in_dir("many.yaml");
    expect(10, 2, av, "many.yaml:40003:3: duplicate key 'p7'", NULL);
    /* a second document, settings out of range, absurd dims */
    put(in_dir("two.yaml"), "suite: a\nbenchmarks: [{family: gelu, shape: {n: 4}}]\n---\nsuite: b\n");
    av[2] = in_dir("two.yaml");
    expect(10, 2, av, "two.yaml:3:1: a second YAML document", NULL);
    const char *bad[][2] = {
        { "    measure: {warmup: 2147483647}\n", "'warmup' must be an integer in [0, 100000]" },
        { "    measure: {timeout_s: 1e308}\n", "'timeout_s' must be a number in (0, 86400] s" },
        { "    measure: {max_noise: -1}\n", "'max_noise' must be a number in [0, 1]" },
    };
    for (int i = 0; i < 3; i++) {
        kb_sb_clear(&t);
        kb_sb_printf(&t, "suite: r\nbenchmarks:\n  - family: gelu\n    shape: {n: 4}\n%s", bad[i][0]);
        put(in_dir("range.yaml"), t.s);
        av[2] = in_dir("range.yaml");
        expect(10, 2, av, "range.yaml:5:", bad[i][1]);
    }
    put(in_dir("dims.yaml"), "suite: d\nbenchmarks:\n  - family: gelu\n    shape: {n: 9223372036854775807}\n");
    av[2] = in_dir("dims.yaml");
    expect(10, 2, av, "dims.yaml:4:16: 'n' must be between 1 and", NULL);
    put(in_dir("check.yaml"), "suite: c\nbenchmarks:\n  - family: gelu\n    shape: {n: 10, check: {n: 20}}\n");
    av[2] = in_dir("check.yaml");
    expect(10, 2, av, "check.yaml:4:", "exceeds the shape's n = 10");
    kb_sb_free(&t);
}

/* A suite whose name climbs out of results/: the records stay in results/. */
static void test_suite_name_is_a_safe_file_name(void)
{
    put(in_dir("climb.yaml"), "suite: \"../../../../x\"\nbenchmarks:\n  - family: gelu\n    variant: naive\n"
                              "    dtype: fp32\n    shape: {n: 100}\n    measure: {min_samples: 1, warmup: 0}\n");
    char cwd[512];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(chdir(dir) == 0);
    const char *av[] = { "kbench", "run", "climb.yaml", "--backend", "emu", "-q", NULL };
    expect(60, 0, av, "records in results/_._.._.._.._-", NULL);    /* no '/' left in the name */
    CHECK(chdir(cwd) == 0);
}

static void test_command_line(void)
{
    put(in_dir("tiny.yaml"), tiny_suite);
    const char *av[] = { "kbench", "run", in_dir("tiny.yaml"), "--backend", "emu", "--out", in_dir("cl.jsonl"),
                         "--filter", "no-such-case", NULL };
    expect(10, 2, av, "--filter 'no-such-case' matches none of the suite's 1 cases", NULL);
    CHECK(access(in_dir("cl.jsonl"), F_OK) != 0);            /* nothing was opened */
    put(in_dir("afile"), "x");
    const char *dump[] = { "kbench", "run", in_dir("tiny.yaml"), "--backend", "emu", "--out", in_dir("cl.jsonl"),
                           "--dump", in_dir("afile"), NULL };
    expect(10, 2, dump, "--dump", "not a directory");
}

/* Set name=value for one run (NULL value: unset), then restore. */
static void expect_env(const char *name, const char *value, int want, const char *needle)
{
    const char *old = getenv(name);
    char *saved = old ? strdup(old) : NULL;
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
    const char *av[] = { "kbench", "run", in_dir("tiny.yaml"), "--backend", "emu", "--out", in_dir("env.jsonl"),
                         NULL };
    expect(20, want, av, want ? name : NULL, needle);
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
    free(saved);
}

static void test_environment(void)
{
    put(in_dir("tiny.yaml"), tiny_suite);
    put(in_dir("afile"), "x");
    expect_env("KBENCH_CACHE_DIR", in_dir("afile"), 3, "not a writable directory");
    expect_env("KBENCH_KERNELS_DIR", in_dir("nokernels"), 3, "no kernel sources there");
    expect_env("KBENCH_KERNELS_DIR", "", 0, NULL);          /* empty: the default, and it works */
    expect_env("CXX", "/bin/false", 3, "the emulator needs a working C++ compiler");
    put(in_dir("peaks.json"), "{\"gpus\": [");
    expect_env("KBENCH_PEAKS", in_dir("peaks.json"), 3, "not valid JSON");
    expect_env("KBENCH_PEAKS", in_dir("no-peaks.json"), 3, "cannot open the peaks file");
    put(in_dir("peaks75.json"), "{\"gpus\": [{\"sku\": \"T4\", \"match\": [\"t4\"], \"sm\": 75}]}");
    expect_env("KBENCH_PEAKS", in_dir("peaks75.json"), 3, "entry 0 (T4): sm 75 is no compute capability kbench runs on");
}

/* A cached emulator module truncated to half (SIGBUS inside dlopen before): rebuilt. */
static void test_damaged_cache(void)
{
    put(in_dir("tiny.yaml"), tiny_suite);
    const char *cache = in_dir("cache");
    setenv("KBENCH_CACHE_DIR", cache, 1);
    const char *av[] = { "kbench", "run", in_dir("tiny.yaml"), "--backend", "emu", "--out", in_dir("dc.jsonl"), NULL };
    expect(120, 0, av, "1 ok", NULL);
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "for f in '%s'/*.so; do s=$(stat -c %%s \"$f\"); truncate -s $((s / 2)) \"$f\"; done",
             cache);
    CHECK(system(cmd) == 0);
    unlink(in_dir("dc.jsonl"));
    expect(120, 0, av, "is damaged", "1 ok");
    /* a FIFO in place of a cached module: found damaged without blocking, and rebuilt (the
     * cache is kbench's own directory: the name is replaced, nothing written through) */
    snprintf(cmd, sizeof cmd, "for f in '%s'/*.so; do rm \"$f\"; mkfifo \"$f\"; done", cache);
    CHECK(system(cmd) == 0);
    unlink(in_dir("dc.jsonl"));
    expect(120, 0, av, "is damaged", "1 ok");
    snprintf(cmd, sizeof cmd, "for f in '%s'/*.so; do test -f \"$f\" || exit 1; done", cache);
    CHECK(system(cmd) == 0);
    const char *test_cache = getenv("KBENCH_TEST_CACHE");
    if (test_cache)
        setenv("KBENCH_CACHE_DIR", test_cache, 1);
}

static const char rec_a[] =
    "{\"schema_version\":1,\"run_id\":\"tiny-1\",\"suite\":\"tiny\",\"case_id\":\"done-a\"}\n";

static void test_record_files(void)
{
    put(in_dir("tiny.yaml"), tiny_suite);
    const char *path = in_dir("rec.jsonl");
    const char *av[] = { "kbench", "run", in_dir("tiny.yaml"), "--backend", "emu", "--resume", path, NULL };
    /* --resume on something that is not records; --out onto a text file and a suite */
    put(path, "this is three kilobytes of notes, not records\n");
    char *before = snapshot(path);
    expect(20, 2, av, "not a kbench record", NULL);
    same_bytes(path, before);
    const char *out[] = { "kbench", "run", in_dir("tiny.yaml"), "--backend", "emu", "--out", in_dir("tiny.yaml"),
                          NULL };
    before = snapshot(in_dir("tiny.yaml"));
    expect(20, 2, out, "tiny.yaml is the SUITE argument", "does not write over its own input");
    same_bytes(in_dir("tiny.yaml"), before);
    /* another suite's records */
    put(path, "{\"schema_version\":1,\"run_id\":\"llm-1\",\"suite\":\"llm\",\"case_id\":\"x\"}\n");
    before = snapshot(path);
    expect(20, 2, av, "holds records of suite llm, not of suite tiny", NULL);
    same_bytes(path, before);
    /* the last record lacks only its newline: kept, counted as done, never cut */
    put(path, "{\"schema_version\":1,\"run_id\":\"tiny-1\",\"suite\":\"tiny\",\"case_id\":\"done-a\"}");
    expect(60, 0, av, "1 ok", NULL);
    char *now = slurp(path);
    CHECK(now && strncmp(now, rec_a, strlen(rec_a)) == 0 && strstr(now + strlen(rec_a), "gelu/naive"));
    free(now);
}

static void test_reports_and_query(void)
{
    const char *av[] = { "kbench", "report", NULL, NULL };
    put(in_dir("empty.jsonl"), "");
    av[2] = in_dir("empty.jsonl");
    expect(10, 2, av, "no records in it", NULL);
    put(in_dir("other.jsonl"), "{\"a\": 1}\n");
    av[2] = in_dir("other.jsonl");
    expect(10, 2, av, "is not a kbench record", NULL);
    put(in_dir("bin.jsonl"), "\x7f" "ELF\x02\x01\x01\x03garbage without a newline");
    av[2] = in_dir("bin.jsonl");
    expect(10, 2, av, "bin.jsonl:1:", NULL);
    /* query is read-only: VACUUM INTO creates nothing */
    put(in_dir("text.db"), "not a database but a text file long enough to have a header of sorts\n");
    const char *q[] = { "kbench", "query", "--db", in_dir("text.db"), "SELECT count(*) FROM cases", NULL };
    expect(10, 2, q, "text.db: not an SQLite database", NULL);
    char sql[600];
    snprintf(sql, sizeof sql, "VACUUM INTO '%s'", in_dir("copy.db"));
    const char *v[] = { "kbench", "query", "--db", in_dir("s.db"), sql, NULL };
    const char *mk[] = { "kbench", "query", "--db", in_dir("s.db"), "--write", "CREATE TABLE t(x)", NULL };
    expect(10, 0, mk, NULL, NULL);
    expect(10, 2, v, "read-only", NULL);
    CHECK(access(in_dir("copy.db"), F_OK) != 0);
}

/* SIGTERM in the middle of a 100000-execution warm-up: the run stops within seconds
 * with 130, and the abandoned case is not recorded (so --resume runs it). */
static void test_signal_stops_every_loop(void)
{
    put(in_dir("warm.yaml"), "suite: warm\nbenchmarks:\n  - family: gelu\n    variant: naive\n    dtype: fp32\n"
                             "    shape: {n: 100000}\n    measure: {warmup: 100000}\n");
    put(in_dir("tiny.yaml"), tiny_suite);
    const char *warm = in_dir("warm.jsonl");
    const char *av[] = { "kbench", "run", in_dir("warm.yaml"), "--backend", "emu", "--out", warm, NULL };
    pid_t pid = spawn_kbench(av, log_path);
    sleep(4);
    kill(pid, SIGTERM);
    int rc = -1;
    for (int i = 0; i < 100 && rc < 0; i++) {   /* 5 s at most */
        int status;
        if (waitpid(pid, &status, WNOHANG) == pid)
            rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        else
            usleep(50000);
    }
    if (rc < 0) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
    }
    CHECK_MSG(rc == 130, "exit %d", rc);
    char *recs = slurp(warm);
    CHECK(recs && recs[0] == 0);
    free(recs);
}

/* Issue 28's inputs of the newer commands: FIFOs and devices refused without blocking,
 * oversized files named at the line:column where they pass the limit, absurd numbers in
 * records refused naming the file, line and field. */
/* A path in the test directory that stays valid (in_dir's buffers are reused). */
static char *kept[256];   /* path_of's strings, freed at the end of main */
static int n_kept;

static const char *path_of(const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    if (n_kept < (int)(sizeof kept / sizeof kept[0]))
        kept[n_kept++] = p;
    return p;   /* kept for the test's life */
}

static void test_inputs_of_the_newer_commands(void)
{
    put(path_of("tiny.yaml"), tiny_suite);
    const char *fifo = path_of("spec.fifo");
    unlink(fifo);
    CHECK(mkfifo(fifo, 0644) == 0);
    const char *acc[] = { "kbench", "accept", "--backend", "emu", "--spec", NULL, "--suite", path_of("tiny.yaml"),
                          "--out-dir", path_of("acc"), NULL };
    acc[5] = fifo;
    expect(10, 2, acc, "spec.fifo: not a regular file (a FIFO)", NULL);
    acc[5] = "/dev/zero";
    expect(10, 2, acc, "/dev/zero: not a regular file (a character device)", NULL);
    kb_sb big;
    kb_sb_init(&big);
    kb_sb_printf(&big, "spec: big\nsku: B\nthresholds:\n");
    while (big.len <= (1 << 20))
        kb_sb_printf(&big, "  # a comment line to make the spec larger than its limit of one MiB ........\n");
    put(path_of("big.yaml"), big.s);
    kb_sb_free(&big);
    acc[5] = path_of("big.yaml");
    expect(10, 2, acc, "big.yaml:", "a spec may have at most 1 MiB; this byte is past it");
    const char *run[] = { "kbench", "run", fifo, "--backend", "emu", "--out", path_of("f.jsonl"), NULL };
    expect(10, 2, run, "spec.fifo: not a regular file (a FIFO)", NULL);
    /* a FIFO among the spec directory's entries is refused, not opened blocking */
    char specs[512];
    snprintf(specs, sizeof specs, "%s/specs", dir);
    mkdir(specs, 0755);
    char entry[600];
    snprintf(entry, sizeof entry, "%s/a.yaml", specs);
    CHECK(mkfifo(entry, 0644) == 0);
    kb_acc_gpu g = { "NVIDIA H100 80GB HBM3", 90, 132, 0 };
    kb_acc_spec sp;
    const char *how;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_acc_spec_find(specs, &g, &sp, &how, &err) == KB_ERR_INPUT && strstr(err.s, "not a regular file"));
    kb_sb_free(&err);
    /* a records file with a negative median: refused naming the file, line and field */
    put(path_of("neg.jsonl"), "{\"schema_version\":1,\"run_id\":\"r\",\"case_id\":\"c\",\"timing\":{\"median_us\":-5}}\n");
    const char *rep[] = { "kbench", "report", path_of("neg.jsonl"), NULL };
    expect(10, 2, rep, "neg.jsonl:1: timing.median_us: -5 is not a number in [0, ", NULL);
    put(path_of("dims.jsonl"), "{\"schema_version\":1,\"run_id\":\"r\",\"case_id\":\"c\",\"dims\":{\"n\":1e300}}\n");
    rep[2] = path_of("dims.jsonl");
    expect(10, 2, rep, "dims.jsonl:1: dims.n:", "is not an integer");
    put(path_of("dup.jsonl"), "{\"schema_version\":1,\"case_id\":\"c\",\"dims\":{\"n\":4,\"n\":5}}\n");
    rep[2] = path_of("dup.jsonl");
    expect(10, 2, rep, "dup.jsonl:1:", "duplicate");
}

/* Databases that are not kbench's, or that kbench may not write, through the commands. */
static void test_databases(void)
{
    put(path_of("tune.yaml"), "suite: tt\nbenchmarks:\n  - family: gelu\n    variant: naive\n    dtype: fp32\n"
                             "    shape: {n: 1000}\n    params: {BLOCK: [64, 128]}\n    measure: {min_samples: 1}\n");
    sqlite3 *db;
    CHECK(sqlite3_open(path_of("foreign.db"), &db) == SQLITE_OK);
    CHECK(sqlite3_exec(db, "CREATE TABLE notes(t); INSERT INTO notes VALUES ('mine')", NULL, NULL, NULL) == SQLITE_OK);
    sqlite3_close(db);
    char *before = snapshot(path_of("foreign.db"));
    const char *tune[] = { "kbench", "tune", path_of("tune.yaml"), "--backend", "emu", "--db", path_of("foreign.db"),
                           "--out", path_of("tt.jsonl"), "--max-noise", "1e12", NULL };   /* the database, not the verdict */
    expect(60, 2, tune, "foreign.db: not a kbench tuning database (it holds the tables notes)", NULL);
    same_bytes(path_of("foreign.db"), before);
    CHECK(access(path_of("tt.jsonl"), F_OK) != 0);                     /* refused before any work */
    /* kbench's own results store is not a tuning database either */
    const char *run[] = { "kbench", "run", path_of("tiny.yaml"), "--backend", "emu", "-q", "--out", path_of("st.jsonl"),
                          "--db", path_of("kbench.db"), NULL };
    put(path_of("tiny.yaml"), tiny_suite);
    expect(60, 0, run, NULL, NULL);
    tune[6] = path_of("kbench.db");
    expect(60, 2, tune, "kbench.db: kbench's results store, not a tuning database", NULL);
    /* a read-only tuning database: exit 3 before any work, nothing changed */
    tune[6] = path_of("tune.db");
    expect(120, 0, tune, NULL, NULL);
    chmod(path_of("tune.db"), 0444);
    before = snapshot(path_of("tune.db"));
    expect(60, 3, tune, "tune.db: is read-only", NULL);
    same_bytes(path_of("tune.db"), before);
    chmod(path_of("tune.db"), 0644);
    /* export reads read-only: an empty file stays empty; a foreign database is named */
    int fd = open(path_of("empty.db"), O_CREAT | O_WRONLY | O_TRUNC, 0644);
    close(fd);
    const char *exp[] = { "kbench", "export", "--db", path_of("empty.db"), "--allow-cpu", NULL };
    expect(10, 2, exp, "empty.db: an empty file, not a tuning database", NULL);
    struct stat sb;
    CHECK(stat(path_of("empty.db"), &sb) == 0 && sb.st_size == 0);
    exp[3] = path_of("foreign.db");
    expect(10, 2, exp, "foreign.db: not a kbench tuning database", NULL);
    const char *alone[] = { "kbench", "export", "--db", path_of("tune.db"), "--gpu-sm-count", "132", NULL };
    expect(10, 2, alone, "--gpu-sm-count: needs --gpu-sm", NULL);
    /* query: --write into a foreign database is refused; a read-only ATTACH names the file */
    const char *qw[] = { "kbench", "query", "--db", path_of("foreign.db"), "--write", "DELETE FROM notes", NULL };
    expect(10, 2, qw, "foreign.db: not a kbench results store", NULL);
    char sql[700];
    snprintf(sql, sizeof sql, "ATTACH '%s' AS x", path_of("other.db"));
    const char *qa[] = { "kbench", "query", "--db", path_of("kbench.db"), sql, NULL };
    expect(10, 2, qa, "ATTACH of", "other.db' refused");
    CHECK(access(path_of("other.db"), F_OK) != 0);
    /* estimate and model --estimate read the store's ceilings read-only: a store that is
     * there but not one (another application's, the tuning database, a FIFO) is named, exit
     * 2, without blocking; no store at all is the datasheet, exit 0 */
    const char *est[] = { "kbench", "estimate", path_of("tiny.yaml"), "--gpu", "h100-sxm", "--db",
                          path_of("foreign.db"), NULL };
    expect(30, 2, est, "foreign.db: not a kbench results store", NULL);
    est[6] = path_of("tune.db");
    expect(30, 2, est, "tune.db: kbench's tuning database, not a results store", NULL);
    est[6] = path_of("db.fifo");
    CHECK(mkfifo(est[6], 0644) == 0);
    expect(30, 2, est, "db.fifo: not a regular file", NULL);
    est[6] = path_of("no-store.db");
    expect(60, 0, est, "ESTIMATE", NULL);
    CHECK(access(path_of("no-store.db"), F_OK) != 0);
    const char *mest[] = { "kbench", "model", path_of("tiny.yaml"), "--estimate", "--gpu", "h100-sxm", "-m",
                           "tests/data/model_tiny.yaml", "--db", path_of("foreign.db"), NULL };
    expect(60, 2, mest, "foreign.db: not a kbench results store", NULL);
    /* devices names a broken peaks file, exit 3 */
    put(path_of("peaks.json"), "{\"gpus\": [");
    setenv("KBENCH_PEAKS", path_of("peaks.json"), 1);
    const char *dev[] = { "kbench", "devices", "--backend", "emu", NULL };
    expect(10, 3, dev, "peaks.json:", "not valid JSON");
    unsetenv("KBENCH_PEAKS");
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb_test_robust.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    snprintf(log_path, sizeof log_path, "%s/out.log", dir);
    const char *cache = getenv("KBENCH_CACHE_DIR");
    if (cache)
        setenv("KBENCH_TEST_CACHE", cache, 1);
    RUN(test_suites);
    RUN(test_suite_name_is_a_safe_file_name);
    RUN(test_command_line);
    RUN(test_environment);
    RUN(test_damaged_cache);
    RUN(test_record_files);
    RUN(test_reports_and_query);
    RUN(test_signal_stops_every_loop);
    RUN(test_inputs_of_the_newer_commands);
    RUN(test_databases);
    for (int i = 0; i < n_kept; i++)
        free(kept[i]);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "note: could not remove %s\n", dir);
    TEST_MAIN_END();
}
