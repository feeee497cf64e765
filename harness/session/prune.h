/* prune.h - static pruning from compile output, before a configuration is timed: the
 * session plugs it into the pipeline when a command asks (run --prune, tune).
 *
 * A configuration whose kernel spills registers to local memory, needs more registers
 * than a thread may have (255), more static shared memory than a block may opt in to,
 * or cannot be launched with any block size (max threads 0) is not worth measuring: it
 * cannot run, or it is slow for a reason the compiler already told. Plugged into the
 * case pipeline's prune hook (engine/case.h), it ends the case as "skipped" with the
 * reason "pruned: ..." before setup, so it is recorded and never a winner. Resources the
 * backend does not know (-1: the emulator) prune nothing.
 */
#ifndef KB_TUNE_PRUNE_H
#define KB_TUNE_PRUNE_H

#include "backend/backend.h"

/* The rules above for a device (user: const kb_device_info *). 1 keeps the case; 0 with
 * the reason in why prunes it. res NULL keeps it. */
int kb_tune_prune(void *user, const kb_case *c, const kb_resources *res, char *why, size_t n);

#endif /* KB_TUNE_PRUNE_H */
