/* export.h - `kbench export`: the tuning database's current choices as deployment files
 * (tune/export.h): JSON, a C header, or Kernel Tuner's cache of one problem. Choices
 * measured on the emulator are CPU timings: refused unless --allow-cpu, then marked. */
#ifndef KB_CLI_EXPORT_H
#define KB_CLI_EXPORT_H

#include "cli/opts.h"

typedef struct {
    const char *format;            /* json, header, kerneltuner */
    const char *db_path;           /* NULL: results/tune.db */
    const char *out_path;          /* NULL: stdout */
    int allow_cpu;
    const char **problems;         /* only problems whose key contains any of these */
    int n_problems;
    int gpu_sm, gpu_sm_count;      /* --gpu: one choice per problem for this GPU (0: every GPU) */
} kb_export_opts;

extern const kb_command kb_command_export;

#endif /* KB_CLI_EXPORT_H */
