/* opts.c - the command-line parser (see opts.h). */
#include "cli/opts.h"

#include "core/kb.h"
#include "core/output.h"
#include "core/suggest.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void vfail(const kb_command *cmd, const char *what, const char *fmt, va_list ap)
{
    fprintf(stderr, "kbench %s: ", cmd->name);
    if (what)
        fprintf(stderr, "%s: ", what);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n(kbench %s --help lists the options)\n", cmd->name);
}

int kb_opts_fail(const kb_command *cmd, const char *what, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfail(cmd, what, fmt, ap);
    va_end(ap);
    return KB_EXIT_INPUT;
}

int kb_opts_arch(const char *s, int *sm)
{
    const kb_arch *a = kb_arch_find(s);
    if (!a)
        return -1;
    *sm = a->code;
    return 0;
}

/* "an integer in [1, 1000000]" / "a number in (0, 86400]" */
static void range_text(const kb_opt *op, char *buf, size_t n)
{
    snprintf(buf, n, "%s in %c%.15g, %.15g]", op->kind == KB_OPT_INT ? "an integer" : "a number",
             op->min_open ? '(' : '[', op->min, op->max);
}

/* A number in op's range from text v; 0 with *out set, or 2 after the error. */
static int parse_number(const kb_command *cmd, const kb_opt *op, const char *v, double *out)
{
    char *end;
    errno = 0;
    double d;
    if (op->kind == KB_OPT_INT) {
        long long x = strtoll(v, &end, 10);
        d = (double)x;
    } else {
        d = strtod(v, &end);
    }
    int ok = *v && !*end && errno == 0 && isfinite(d) && d >= op->min && d <= op->max &&
             !(op->min_open && d == op->min);
    if (!ok) {
        char want[96];
        range_text(op, want, sizeof want);
        return kb_opts_fail(cmd, op->name, "expected %s, got '%s'", want, v);
    }
    *out = d;
    return 0;
}

static int parse_choice(const kb_command *cmd, const kb_opt *op, const char *v, const char **out)
{
    for (int i = 0; op->choices[i]; i++)
        if (strcmp(op->choices[i], v) == 0) {
            *out = op->choices[i];
            return 0;
        }
    kb_sb list;
    kb_sb_init(&list);
    for (int i = 0; op->choices[i]; i++)
        kb_sb_printf(&list, "%s%s", i ? ", " : "", op->choices[i]);
    const char *close = kb_suggest(v, op->choices, -1);
    int rc = close ? kb_opts_fail(cmd, op->name, "expected one of %s, got '%s' - did you mean '%s'?", list.s, v, close)
                   : kb_opts_fail(cmd, op->name, "expected one of %s, got '%s'", list.s, v);
    kb_sb_free(&list);
    return rc;
}

/* Store value v of op into o (LIST: append; argc bounds the list). 0, or 2. */
static int store(const kb_command *cmd, const kb_opt *op, const char *v, void *o, int argc)
{
    char *field = (char *)o + op->offset;
    double d;
    int rc = 0;
    switch (op->kind) {
    case KB_OPT_FLAG: *(int *)field = 1; break;
    case KB_OPT_SET: *(int *)field = (int)op->min; break;
    case KB_OPT_STR:
    case KB_OPT_IN:
    case KB_OPT_OUT:
    case KB_OPT_OUTDIR:
    case KB_OPT_OUTDB: *(const char **)field = v; break;
    case KB_OPT_CHOICE: rc = parse_choice(cmd, op, v, (const char **)field); break;
    case KB_OPT_INT:
        if ((rc = parse_number(cmd, op, v, &d)) == 0)
            *(int *)field = (int)d;
        break;
    case KB_OPT_DOUBLE:
        if ((rc = parse_number(cmd, op, v, &d)) == 0)
            *(double *)field = d;
        break;
    case KB_OPT_ARCH:
        if (kb_opts_arch(v, (int *)field) != 0) {
            char names[512];
            rc = kb_opts_fail(cmd, op->name, "expected one of kbench's architectures (%s), got '%s'",
                              kb_arch_list(names, sizeof names, NULL, NULL), v);
        }
        break;
    case KB_OPT_LIST: {
        const char ***list = (const char ***)field;
        int *count = (int *)((char *)o + op->count_offset);
        if (!*list && !(*list = calloc((size_t)argc + 1, sizeof **list)))
            return kb_opts_fail(cmd, op->name, "out of memory");
        (*list)[(*count)++] = v;
        break;
    }
    }
    return rc;
}

static const kb_opt *find_opt(const kb_command *cmd, const char *arg, size_t len)
{
    for (int i = 0; i < cmd->n_opts; i++) {
        const kb_opt *op = &cmd->opts[i];
        if ((strlen(op->name) == len && strncmp(op->name, arg, len) == 0) ||
            (op->alias && strlen(op->alias) == len && strncmp(op->alias, arg, len) == 0))
            return op;
    }
    return NULL;
}

/* "unknown option '--fitler' - did you mean '--filter'?"; 2. */
static int unknown_option(const kb_command *cmd, const char *arg, size_t len)
{
    const char *names[2 * 64];
    int n = 0;
    for (int i = 0; i < cmd->n_opts && n + 2 <= (int)(sizeof names / sizeof names[0]); i++) {
        names[n++] = cmd->opts[i].name;
        if (cmd->opts[i].alias)
            names[n++] = cmd->opts[i].alias;
    }
    char word[128];
    snprintf(word, sizeof word, "%.*s", (int)(len < sizeof word ? len : sizeof word - 1), arg);
    const char *close = kb_suggest(word, names, n);
    if (close)
        return kb_opts_fail(cmd, NULL, "unknown option '%s' - did you mean '%s'?", word, close);
    return kb_opts_fail(cmd, NULL, "unknown option '%s'", word);
}

static int takes_value(const kb_opt *op) { return op->kind != KB_OPT_FLAG && op->kind != KB_OPT_SET; }

/* One option at argv[*i] ("--name", "--name=value", "--name value"). 0, or 2. */
static int parse_option(const kb_command *cmd, int argc, char **argv, int *i, void *o)
{
    const char *arg = argv[*i], *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
    const kb_opt *op = find_opt(cmd, arg, len);
    if (!op && arg[1] != '-' && strlen(arg) > 2) {   /* "-j4": a short option with its value attached */
        op = find_opt(cmd, arg, 2);
        if (op && takes_value(op))
            return store(cmd, op, arg + 2, o, argc);
        op = NULL;
    }
    if (!op)
        return unknown_option(cmd, arg, len);
    if (!takes_value(op)) {
        if (eq)
            return kb_opts_fail(cmd, op->name, "takes no value, got '%s'", eq + 1);
        return store(cmd, op, NULL, o, argc);
    }
    const char *v = eq ? eq + 1 : NULL;
    if (!v) {
        if (*i + 1 >= argc)
            return kb_opts_fail(cmd, op->name, "needs a value (%s)", op->metavar ? op->metavar : "a value");
        v = argv[++*i];
    }
    return store(cmd, op, v, o, argc);
}

int kb_opts_parse(const kb_command *cmd, int argc, char **argv, void *o)
{
    memset(o, 0, cmd->opts_size);
    if (cmd->defaults)
        cmd->defaults(o);
    int n_pos = 0, only_pos = 0;
    const char **pos = (const char **)((char *)o + cmd->pos_offset);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!only_pos && (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0)) {
            kb_opts_help(cmd, stdout);
            return KB_EXIT_OK;
        }
        if (!only_pos && strcmp(a, "--") == 0) {
            only_pos = 1;
        } else if (!only_pos && a[0] == '-' && a[1]) {
            if (parse_option(cmd, argc, argv, &i, o) != 0)
                return KB_EXIT_INPUT;
        } else if (n_pos == cmd->max_pos) {
            return kb_opts_fail(cmd, NULL, "unexpected argument '%s' (usage: kbench %s %s)", a, cmd->name,
                                cmd->args);
        } else {
            pos[n_pos++] = a;
        }
    }
    if (n_pos < cmd->min_pos)
        return kb_opts_fail(cmd, NULL, "expected %s (usage: kbench %s %s)", cmd->args, cmd->name, cmd->args);
    return -1;
}

void kb_opts_free(const kb_command *cmd, void *o)
{
    for (int i = 0; i < cmd->n_opts; i++)
        if (cmd->opts[i].kind == KB_OPT_LIST) {
            const char ***list = (const char ***)((char *)o + cmd->opts[i].offset);
            free(*list);
            *list = NULL;
        }
}

void kb_opts_help(const kb_command *cmd, FILE *out)
{
    fprintf(out, "usage: kbench %s%s%s [options]\n\n  %s\n\n", cmd->name, cmd->args[0] ? " " : "", cmd->args,
            cmd->about);
    for (int i = 0; i < cmd->n_opts; i++) {
        const kb_opt *op = &cmd->opts[i];
        char left[96], range[96] = "";
        snprintf(left, sizeof left, "%s%s%s%s%s", op->alias ? op->alias : "", op->alias ? ", " : "", op->name,
                 op->metavar ? " " : "", op->metavar ? op->metavar : "");
        if (op->kind == KB_OPT_INT || op->kind == KB_OPT_DOUBLE) {
            char r[80];
            range_text(op, r, sizeof r);
            snprintf(range, sizeof range, " (%s)", strchr(r, ' ') ? strstr(r, "in ") : r);
        }
        char names[512] = "";
        if (op->kind == KB_OPT_ARCH)   /* the architecture table's names, never a copy of them */
            kb_arch_list(names, sizeof names, NULL, NULL);
        fprintf(out, "  %-28s %s%s%s%s%s\n", left, op->help, range, op->kind == KB_OPT_LIST ? " (repeatable)" : "",
                names[0] ? "; one of " : "", names);
    }
    if (cmd->more)
        fprintf(out, "\n%s", cmd->more);
}

/* ---- the paths ---- */

int kb_opt_is_output(kb_opt_kind kind)
{
    return kind == KB_OPT_OUT || kind == KB_OPT_OUTDIR || kind == KB_OPT_OUTDB;
}

static const char *path_of(const kb_opt *op, const void *o)
{
    return *(const char *const *)((const char *)o + op->offset);
}

/* One message in the parser's shape for a path refusal; the exit code. */
static int path_fail(const kb_command *cmd, const char *what, kb_status st, const char *msg)
{
    if (st == KB_ERR_INPUT)
        return kb_opts_fail(cmd, what, "%s", msg);
    fprintf(stderr, "kbench %s: %s: %s\n", cmd->name, what, msg);
    return kb_out_exit(st);
}

/* Output op (value out) against the inputs, the positionals and the other outputs. */
static kb_status not_an_input(const kb_command *cmd, const kb_opt *op, const void *o, kb_sb *err)
{
    const char *out = path_of(op, o);
    kb_sb what;
    kb_sb_init(&what);
    kb_status st = KB_OK;
    for (int i = 0; i < cmd->n_opts && st == KB_OK; i++) {
        const kb_opt *in = &cmd->opts[i];
        int is_out = in->kind == KB_OPT_OUT || in->kind == KB_OPT_OUTDB;
        if ((in->kind != KB_OPT_IN && !is_out) || in->offset == op->offset || (is_out && in < op))
            continue;
        kb_sb_clear(&what);
        kb_sb_printf(&what, "%s %s", is_out ? "the output of" : "the input of", in->name);
        st = kb_out_not_input(out, path_of(in, o), what.s, err);
    }
    const char *const *pos = (const char *const *)((const char *)o + cmd->pos_offset);
    const char *word = cmd->args;
    for (int k = 0; k < cmd->max_pos && st == KB_OK; k++) {
        word += strspn(word, " [");
        size_t n = strcspn(word, " ]");
        kb_sb_clear(&what);
        kb_sb_printf(&what, "the %.*s argument", (int)n, word);
        word += n;
        st = kb_out_not_input(out, pos[k], what.s, err);
    }
    kb_sb_free(&what);
    return st;
}

static int is_path(kb_opt_kind k) { return k == KB_OPT_IN || kb_opt_is_output(k); }

/* Paths longer than KB_PATH_ARG_MAX: refused naming the option. -1, or 2. */
static int path_lengths(const kb_command *cmd, const void *o)
{
    for (int i = 0; i < cmd->n_opts; i++) {
        const char *p = is_path(cmd->opts[i].kind) ? path_of(&cmd->opts[i], o) : NULL;
        if (p && strlen(p) > KB_PATH_ARG_MAX)
            return kb_opts_fail(cmd, cmd->opts[i].name, "a path of %zu bytes; kbench takes paths of at most %d",
                                strlen(p), KB_PATH_ARG_MAX);
    }
    const char *const *pos = (const char *const *)((const char *)o + cmd->pos_offset);
    int text = strstr(cmd->args, "SQL") != NULL;   /* query's argument is SQL, not a path */
    for (int k = 0; k < cmd->max_pos && !text; k++)
        if (pos[k] && strlen(pos[k]) > KB_PATH_ARG_MAX)
            return kb_opts_fail(cmd, NULL, "%s: a path of %zu bytes; kbench takes paths of at most %d",
                                cmd->args, strlen(pos[k]), KB_PATH_ARG_MAX);
    return -1;
}

int kb_opts_check_files(const kb_command *cmd, const void *o)
{
    kb_sb err;
    kb_sb_init(&err);
    int rc = path_lengths(cmd, o);
    for (int i = 0; i < cmd->n_opts && rc < 0; i++) {
        const kb_opt *op = &cmd->opts[i];
        if (!kb_opt_is_output(op->kind) || !path_of(op, o))
            continue;
        const char *p = path_of(op, o);
        kb_status st = op->kind == KB_OPT_OUT ? kb_out_check(p, &err)
                     : op->kind == KB_OPT_OUTDB ? kb_out_db_check(p, &err) : kb_out_dir_check(p, &err);
        if (st == KB_OK && op->kind != KB_OPT_OUTDIR)
            st = not_an_input(cmd, op, o, &err);
        if (st != KB_OK)
            rc = path_fail(cmd, op->name, st, err.s);
    }
    kb_sb_free(&err);
    return rc;
}

int kb_command_main(const kb_command *cmd, int argc, char **argv)
{
    void *o = calloc(1, cmd->opts_size);
    if (!o) {
        fprintf(stderr, "kbench %s: out of memory\n", cmd->name);
        return KB_EXIT_SETUP;
    }
    int rc = kb_opts_parse(cmd, argc, argv, o);
    if (rc < 0)
        rc = kb_opts_check_files(cmd, o);
    if (rc < 0)
        rc = cmd->run(o);
    kb_opts_free(cmd, o);
    free(o);
    return rc;
}
