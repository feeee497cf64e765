/* setup.h - what a command that compiles and runs kernels needs from its environment,
 * checked once before the first case, so that a bad setting is one clear setup error
 * (exit 3) naming the variable and the reason, not the same failure recorded for every
 * case: a writable compile cache, a kernels directory, a readable peaks file. The host
 * compiler is the emulator's own check (backend/emu/emu_build.c, at init). */
#ifndef KB_SETUP_H
#define KB_SETUP_H

#include "core/kb.h"

/* Check the compile cache (cache_dir: the --cache-dir value, NULL for the default:
 * $KBENCH_CACHE_DIR, $XDG_CACHE_HOME/kbench, ~/.cache/kbench) is a directory kbench
 * can create and write to; that the kernels directory (kb_kernels_dir) holds the
 * kernel sources; and that $KBENCH_PEAKS, when set, is a readable peaks file.
 * KB_OK, or KB_ERR_SETUP with one message in err naming where the setting came from. */
kb_status kb_setup_check(const char *cache_dir, kb_sb *err);

#endif /* KB_SETUP_H */
