/* list.h - `kbench list`. */
#ifndef KB_LIST_H
#define KB_LIST_H

#include "cli/run.h"

/* Without o->suite_path: every family with its variants, dtypes, dims and params. With
 * it: every planned case id after the plan walk (filters, dedupe), each invalid one
 * with valid()'s reason for the target (--arch, default sm_90). A process exit code. */
int kb_cmd_list(const kb_run_opts *o);

extern const kb_command kb_command_list;

#endif
