/* test_opts.c - the one command-line parser (cli/opts.h): every kind of option, both
 * value forms, repeatable lists, ranges, positional counts, every error's shape and exit
 * code, generated help; then the real commands through the kbench binary. */
#include "check.h"
#include "cli/opts.h"
#include "core/arch.h"
#include "spawn.h"

#include <math.h>
#include <stddef.h>

typedef struct {
    const char *pos[2];
    int flag, set, n, arch, n_list;
    double x;
    const char *s, *choice;
    const char **list;
} fake_opts;

static const char *const colours[] = { "red", "green", NULL };
static int ran;

static int fake_run(void *o) { ran++; return 0; }
static void fake_defaults(void *o) { ((fake_opts *)o)->choice = "red"; ((fake_opts *)o)->n = 7; }

static const kb_opt rows[] = {
    { "--flag", "-f", KB_OPT_FLAG, offsetof(fake_opts, flag), NULL, "a flag", 0, 0, 0, NULL, 0 },
    { "--set", NULL, KB_OPT_SET, offsetof(fake_opts, set), NULL, "sets 3", 3, 0, 0, NULL, 0 },
    { "--n", "-n", KB_OPT_INT, offsetof(fake_opts, n), "N", "an integer", 1, 100, 0, NULL, 0 },
    { "--x", NULL, KB_OPT_DOUBLE, offsetof(fake_opts, x), "X", "a number", 0, 10, 1, NULL, 0 },
    { "--s", NULL, KB_OPT_STR, offsetof(fake_opts, s), "S", "a string", 0, 0, 0, NULL, 0 },
    { "--colour", NULL, KB_OPT_CHOICE, offsetof(fake_opts, choice), "red|green", "a choice", 0, 0, 0, colours, 0 },
    { "--arch", NULL, KB_OPT_ARCH, offsetof(fake_opts, arch), "sm_XX", "an arch", 0, 0, 0, NULL, 0 },
    { "--item", NULL, KB_OPT_LIST, offsetof(fake_opts, list), "T", "a list", 0, 0, 0, NULL,
      offsetof(fake_opts, n_list) },
};

static const kb_command fake = {
    "fake", "A [B]", 1, 2, offsetof(fake_opts, pos), "a fake command", "more text\n",
    rows, (int)(sizeof rows / sizeof rows[0]), sizeof(fake_opts), fake_defaults, fake_run,
};

static char errlog[64];

/* Parse args (NULL-terminated) with stderr captured into errlog; returns the parser's code. */
static int parse(fake_opts *o, const char *const *args)
{
    int argc = 0;
    while (args[argc])
        argc++;
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(errlog, "w");
    dup2(fileno(f), 2);
    int rc = kb_opts_parse(&fake, argc, (char **)args, o);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    fclose(f);
    return rc;
}

static int err_has(const char *needle)
{
    char *s = slurp(errlog);
    int ok = s && strstr(s, needle) && strstr(s, "(kbench fake --help lists the options)");
    if (!ok)
        fprintf(stderr, "stderr was: %s\n", s ? s : "(none)");
    free(s);
    return ok;
}

static void test_values_and_forms(void)
{
    fake_opts o;
    const char *a[] = { "one", "--flag", "--set", "--n", "42", "--x=2.5", "--s", "hello", "--colour=green",
                        "--arch", "sm_90a", "--item", "p", "--item=q", "two", NULL };
    CHECK(parse(&o, a) == -1);
    CHECK(!strcmp(o.pos[0], "one") && !strcmp(o.pos[1], "two"));
    CHECK(o.flag == 1 && o.set == 3 && o.n == 42 && o.x == 2.5 && !strcmp(o.s, "hello"));
    CHECK(!strcmp(o.choice, "green") && o.arch == 90 + KB_ARCH_SPECIFIC);   /* sm_90a's code (core/arch.h) */
    CHECK(o.n_list == 2 && !strcmp(o.list[0], "p") && !strcmp(o.list[1], "q"));
    kb_opts_free(&fake, &o);
    CHECK(o.list == NULL);
    /* defaults, the short alias, -- ends the options */
    const char *b[] = { "-f", "--", "--n", NULL };
    CHECK(parse(&o, b) == -1);
    CHECK(o.flag == 1 && o.n == 7 && !strcmp(o.choice, "red") && !strcmp(o.pos[0], "--n"));
    /* a short option's value attached, as make's -j4 */
    const char *c[] = { "-n42", "x", NULL };
    CHECK(parse(&o, c) == -1);
    CHECK(o.n == 42 && !strcmp(o.pos[0], "x"));
}

static void test_every_error(void)
{
    fake_opts o;
    struct { const char *args[5]; const char *want; } cases[] = {
        { { "a", "--nope", NULL }, "kbench fake: unknown option '--nope'" },
        { { "a", "--nope=3", NULL }, "unknown option '--nope'" },
        { { "a", "--n", NULL }, "kbench fake: --n: needs a value (N)" },
        { { "a", "--n", "x", NULL }, "--n: expected an integer in [1, 100], got 'x'" },
        { { "a", "--n", "101", NULL }, "expected an integer in [1, 100], got '101'" },
        { { "a", "--n", "3x", NULL }, "got '3x'" },
        { { "a", "--n", "99999999999999999999", NULL }, "got '99999999999999999999'" },
        { { "a", "--x", "0", NULL }, "--x: expected a number in (0, 10], got '0'" },
        { { "a", "--x", "inf", NULL }, "got 'inf'" },
        { { "a", "--x", "nan", NULL }, "got 'nan'" },
        { { "a", "--x", "1e308", NULL }, "got '1e308'" },
        { { "a", "--colour", "blue", NULL }, "--colour: expected one of red, green, got 'blue'" },
        { { "a", "--arch", "sm_75", NULL }, "--arch: expected one of kbench's architectures (sm_80, sm_86, sm_89, "
                                            "sm_90, sm_90a, sm_100, sm_100a, sm_103, sm_103a, sm_120, sm_120a, sm_121, "
                                            "sm_121a), got 'sm_75'" },
        { { "a", "--arch", "sm_90A", NULL }, "got 'sm_90A'" },
        { { "a", "--flag=1", NULL }, "--flag: takes no value, got '1'" },
        { { "a", "-n0", NULL }, "--n: expected an integer in [1, 100], got '0'" },
        { { "a", "-fx", NULL }, "unknown option '-fx'" },
        { { NULL }, "kbench fake: expected A [B] (usage: kbench fake A [B])" },
        { { "a", "b", "c", NULL }, "unexpected argument 'c'" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        CHECK_MSG(parse(&o, cases[i].args) == 2, "case %zu", i);
        CHECK_MSG(err_has(cases[i].want), "case %zu: want '%s'", i, cases[i].want);
        kb_opts_free(&fake, &o);
    }
}

static void test_help_and_run(void)
{
    char path[] = "/tmp/kb_test_opts_help.XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    kb_opts_help(&fake, f);
    fclose(f);
    char *h = slurp(path);
    CHECK(h && strstr(h, "usage: kbench fake A [B] [options]") && strstr(h, "a fake command"));
    for (size_t i = 0; h && i < sizeof rows / sizeof rows[0]; i++)
        CHECK_MSG(strstr(h, rows[i].name) && strstr(h, rows[i].help), "%s", rows[i].name);
    CHECK(h && strstr(h, "-f, --flag") && strstr(h, "(in [1, 100])") && strstr(h, "(repeatable)"));
    CHECK(h && strstr(h, "more text"));
    free(h);
    unlink(path);
    /* kb_command_main: --help does not run; a good line runs once; an error does not */
    ran = 0;
    char *good[] = { "x", NULL }, *bad[] = { "x", "--n", "0", NULL };
    CHECK(kb_command_main(&fake, 1, good) == 0 && ran == 1);
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    dup2(null, 2);
    CHECK(kb_command_main(&fake, 3, bad) == 2 && ran == 1);
    dup2(saved, 2);
    close(saved);
    close(null);
}

/* The real commands through the binary. */
static void expect(int want, const char *needle, const char *const *argv)
{
    char log[80];
    snprintf(log, sizeof log, "%s.bin", errlog);
    int rc = run_kbench(argv, log);
    char *out = slurp(log);
    CHECK_MSG(rc == want, "%s %s: exit %d, want %d", argv[1], argv[2] ? argv[2] : "", rc, want);
    CHECK_MSG(out && (!needle || strstr(out, needle)), "missing '%s' in: %s", needle, out ? out : "");
    free(out);
    unlink(log);
}

static void test_binary(void)
{
    const char *a[] = { "kbench", "run", "--nope", NULL };
    expect(2, "kbench run: unknown option '--nope'", a);
    const char *b[] = { "kbench", "run", "x.yaml", "--timeout", "inf", NULL };
    expect(2, "kbench run: --timeout: expected a number in (0, 86400], got 'inf'", b);
    const char *c[] = { "kbench", "run", "x.yaml", "--threads", "1000000000", NULL };
    expect(2, "--threads: expected an integer in [1, 1024]", c);
    const char *d[] = { "kbench", "report", "--format", NULL };
    expect(2, "kbench report: --format: needs a value", d);
    const char *e[] = { "kbench", "compare", NULL };
    expect(2, "kbench compare: expected A B", e);
    const char *f[] = { "kbench", "run", "--help", NULL };
    expect(0, "--backend auto|cuda|emu", f);
    const char *g[] = { "kbench", "help", "query", NULL };
    expect(0, "--import FILE.jsonl", g);
    const char *h[] = { "kbench", "--help", NULL };
    expect(0, "compare A B", h);
    /* report --out onto its own input: refused, the records untouched */
    const char *run = "tests/data/run_gpu.jsonl";
    char *before = slurp(run);
    const char *i[] = { "kbench", "report", run, "--out", run, "--format", "csv", NULL };
    expect(2, "kbench does not write over its own input", i);
    char *after = slurp(run);
    CHECK(before && after && !strcmp(before, after));
    free(before);
    free(after);
    /* a path longer than KB_PATH_ARG_MAX, as an option or a positional argument: named, exit 2 */
    char longp[600];
    memset(longp, 'a', sizeof longp - 1);
    longp[sizeof longp - 1] = '\0';
    const char *j[] = { "kbench", "report", run, "--out", longp, NULL };
    expect(2, "kbench report: --out: a path of 599 bytes; kbench takes paths of at most 400", j);
    const char *k[] = { "kbench", "run", longp, NULL };
    expect(2, "kbench run: SUITE: a path of 599 bytes", k);
    /* query's argument is SQL, not a path: a long statement is not refused for its length */
    char sql[700];
    snprintf(sql, sizeof sql, "SELECT '%.*s'", 600, longp);
    const char *l[] = { "kbench", "query", sql, NULL };
    char log[80];
    snprintf(log, sizeof log, "%s.bin", errlog);
    run_kbench(l, log);
    char *out = slurp(log);
    CHECK_MSG(out && !strstr(out, "kbench takes paths"), "query refused its SQL: %s", out ? out : "");
    free(out);
    unlink(log);
}

/* A near miss gets "did you mean": commands, options, choices, GPU and model names. */
static void test_did_you_mean(void)
{
    const char *a[] = { "kbench", "rnu", NULL };
    expect(2, "unknown command 'rnu' - did you mean 'run'?", a);
    const char *b[] = { "kbench", "run", "suites/smoke.yaml", "--fitler", "gelu", NULL };
    expect(2, "unknown option '--fitler' - did you mean '--filter'?", b);
    const char *c[] = { "kbench", "run", "suites/smoke.yaml", "--backend", "emx", NULL };
    expect(2, "got 'emx' - did you mean 'emu'?", c);
    const char *d[] = { "kbench", "estimate", "suites/smoke.yaml", "--gpu", "h100", NULL };
    expect(2, "got 'h100' - did you mean 'h100-sxm'?", d);
    const char *e[] = { "kbench", "model", "tests/data/run_gpu.jsonl", "--model", "llama7b", NULL };
    expect(2, "--model llama7b: no model of that name - did you mean 'llama-7b-like'? (the models: gpt-style, "
              "llama-70b-like, llama-7b-like;", e);
    const char *f[] = { "kbench", "report", "tests/data/run_gpu.jsonl", "--section", "tile", NULL };
    expect(2, "got 'tile' - did you mean 'tiles'?", f);
    const char *g[] = { "kbench", "xyzzy", NULL };   /* nothing close: no guess */
    expect(2, "unknown command 'xyzzy' (kbench --help lists them)", g);
}

int main(void)
{
    snprintf(errlog, sizeof errlog, "/tmp/kb_test_opts.%d.log", (int)getpid());
    RUN(test_values_and_forms);
    RUN(test_every_error);
    RUN(test_help_and_run);
    RUN(test_binary);
    RUN(test_did_you_mean);
    unlink(errlog);
    TEST_MAIN_END();
}
