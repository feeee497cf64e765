/* opts.h - one command-line parser for every command: a table of options per command,
 * from which the parsing, the checks and the --help text all come.
 *
 * A command describes its options struct (defaults, the function that runs it), its
 * positional arguments and a row per option: the name, an optional short alias, the
 * kind, where in the struct the value goes (offsetof), a metavar and one line of help.
 * Values are checked as they are read: integers and numbers against [min, max] (no
 * trailing junk, no inf/nan, no overflow), choices against their list, architectures
 * against the architecture table (core/arch.h). Every error has one shape, on stderr,
 * and exit code 2:
 *     kbench run: --min-samples: expected an integer in [1, 1000000], got 'x'
 *     (kbench run --help lists the options)
 * Both `--name value` and `--name=value` are accepted; `--` ends the options. Options
 * that name files say what they are (KB_OPT_IN, _OUT, _OUTDIR, _OUTDB): outputs are
 * checked by core/output.h's rule, and against the inputs, before the command runs.
 */
#ifndef KB_OPTS_H
#define KB_OPTS_H

#include <stddef.h>
#include <stdio.h>

typedef enum {
    KB_OPT_FLAG,      /* int field set to 1 */
    KB_OPT_SET,       /* int field set to the row's min (e.g. --csv selects a format) */
    KB_OPT_STR,       /* const char * field */
    KB_OPT_LIST,      /* repeatable: const char ** field (allocated) + int count at count_offset */
    KB_OPT_INT,       /* int field in [min, max] */
    KB_OPT_DOUBLE,    /* double field in [min, max], (min, max] with min_open; finite */
    KB_OPT_CHOICE,    /* const char * field, one of choices */
    KB_OPT_ARCH,      /* int field: an architecture's code (core/arch.h): sm_80 -> 80, sm_90a -> 1090 */
    /* paths (const char * fields, read as STR) whose role the parser checks before the
     * command runs (kb_opts_check_files) and the hostile-target test walks: */
    KB_OPT_IN,        /* a file the command reads */
    KB_OPT_OUT,       /* a file the command writes (core/output.h's rule) */
    KB_OPT_OUTDIR,    /* a directory the command writes files into (made when missing) */
    KB_OPT_OUTDB      /* an SQLite database the command writes (a regular file or a new path) */
} kb_opt_kind;

typedef struct {
    const char *name;           /* "--backend" */
    const char *alias;          /* "-q", or NULL */
    kb_opt_kind kind;
    size_t offset;              /* of the value's field in the command's options struct */
    const char *metavar;        /* "N", "FILE", "auto|cuda|emu" (NULL for flags) */
    const char *help;           /* one line */
    double min, max;            /* INT, DOUBLE: the range; SET: the value */
    int min_open;               /* DOUBLE: min itself is refused */
    const char *const *choices; /* CHOICE: NULL-terminated */
    size_t count_offset;        /* LIST: the int count's field */
} kb_opt;

typedef struct kb_command {
    const char *name;           /* "run" */
    const char *args;           /* positional arguments for the usage line: "SUITE", "[SUITE]", "A B" */
    int min_pos, max_pos;       /* how many positional arguments */
    size_t pos_offset;          /* they go to consecutive const char * fields from here */
    const char *about;          /* one line for `kbench --help` */
    const char *more;           /* a paragraph after the options in `kbench CMD --help`, or NULL */
    const kb_opt *opts;
    int n_opts;
    size_t opts_size;           /* sizeof the options struct */
    void (*defaults)(void *o);  /* OPTIONAL: fill the struct's defaults (it is zeroed first) */
    int (*run)(void *o);        /* run the command; a process exit code */
} kb_command;

/* The longest path kbench takes on its command line [bytes] (a path option or a
 * positional argument): paths are joined with file names in fixed buffers below. */
#define KB_PATH_ARG_MAX 400

/* Parse argv[0..argc) (the arguments after the command's name) into o (opts_size bytes,
 * zeroed and given its defaults here). Returns -1 when the command should run; 0 after
 * printing the help (-h, --help); 2 after printing an error (the one shape above). */
int kb_opts_parse(const kb_command *cmd, int argc, char **argv, void *o);

/* The paths of parsed options o checked before cmd runs: every path option and positional
 * argument (but SQL: a usage line naming SQL) at most KB_PATH_ARG_MAX bytes; every KB_OPT_OUT, _OUTDB and
 * _OUTDIR by core/output.h's rule (touching nothing), and every output against every
 * KB_OPT_IN, every positional argument and every other output (the same file twice).
 * -1 when all is well; else the exit code after one message in the parser's shape
 * naming the option and the path: 2 for an argument error, 3 for the environment's. */
int kb_opts_check_files(const kb_command *cmd, const void *o);

/* 1 when kind names a path the command writes (KB_OPT_OUT, _OUTDIR, _OUTDB). */
int kb_opt_is_output(kb_opt_kind kind);

/* Parse argv[0..argc) for cmd and run it: the command's exit code, 0 after --help, 2
 * after a usage error. */
int kb_command_main(const kb_command *cmd, int argc, char **argv);

/* Release what kb_opts_parse allocated in o (LIST fields). */
void kb_opts_free(const kb_command *cmd, void *o);

/* The command's help, generated from its table. */
void kb_opts_help(const kb_command *cmd, FILE *out);

/* Report a bad value found after parsing, in the one error shape, and return 2:
 *     kbench CMD: WHAT: MESSAGE   (kbench CMD --help lists the options) */
int kb_opts_fail(const kb_command *cmd, const char *what, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Parse an architecture of the table ("sm_90a", "sm_90" or "90"): 0 and *sm set to its code,
 * or -1 for a name the table lacks. Whether the installed NVRTC can compile for it is
 * checked where NVRTC is used (the cuda backend's init, `kbench compile`). */
int kb_opts_arch(const char *s, int *sm);

#endif /* KB_OPTS_H */
