/* suite_load.h - load and validate a YAML suite (format: docs/suite-format.md) into a
 * kb_suite (suite.h). Every input error is KB_ERR_INPUT with one message
 * "file:line:column: what was expected". */
#ifndef KB_SUITE_LOAD_H
#define KB_SUITE_LOAD_H

#include "core/fsutil.h"
#include "suite/suite.h"

/* Limits of a suite file (docs/suite-format.md, "Limits"). */
#define KB_SUITE_MAX_BYTES KB_LIMIT_SUITE_BYTES   /* a suite is a regular file of at most 16 MiB */
#define KB_SUITE_MAX_DEPTH 64             /* nesting of mappings and lists */
#define KB_SUITE_MAX_NODES 2000000        /* scalars, aliases, mappings and lists */

/* Load and validate the suite in file path against fams[0..n_fams). On success *out
 * is filled (free with kb_suite_free). On failure: KB_ERR_INPUT for a path that is missing
 * or not a regular file or over KB_SUITE_MAX_BYTES (core/fsutil.h's kb_fs_read_input:
 * opened without blocking) and for any error in the suite (message "path:line:col: ..."),
 * KB_ERR_IO / KB_ERR_SETUP when it cannot be read or opened (message names the path), KB_ERR_INTERNAL for a family table the loader cannot hold;
 * *out is then empty (kb_suite_free on it is harmless). */
kb_status kb_suite_load(const char *path, const kb_family *const *fams, int n_fams,
                        kb_suite *out, kb_sb *err);

/* Same from text in memory; display_name is used in messages. */
kb_status kb_suite_load_text(const char *text, const char *display_name,
                             const kb_family *const *fams, int n_fams, kb_suite *out, kb_sb *err);

#endif /* KB_SUITE_LOAD_H */
