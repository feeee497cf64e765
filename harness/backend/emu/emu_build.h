/* emu_build.h - the emulator's compiler: the host C++ compiler turns a kernel source
 * into a shared object (-DKB_EMU, kernels/kb_device.h maps CUDA onto the emulator).
 * Run through argv (posix_spawn), never a shell string, its output captured in the log.
 *
 * Each compiler runs in a process group of its own, so that the emulator can pause every
 * build in flight while it times a kernel (kb_emu_cxx_pause: SIGSTOP, then SIGCONT): the
 * compile workers build modules ahead of the cases on the machine's other cores without
 * their CPU time landing in a sample (issue 26). A group left stopped by a kbench that
 * died is orphaned, and the kernel sends an orphaned group with a stopped member SIGHUP
 * and SIGCONT, so no compiler stays stopped after kbench.
 */
#ifndef KB_EMU_BUILD_H
#define KB_EMU_BUILD_H

#include "backend/backend.h"

#define KB_EMU_CXX_MAX_WORDS 16

typedef struct kb_emu_builds kb_emu_builds;   /* the compilers in flight (emu_build.c) */

typedef struct {
    char *words;                          /* the command, split on blanks in place */
    char *argv[KB_EMU_CXX_MAX_WORDS];     /* e.g. {"ccache", "g++"} */
    int n;
    char id[512];                         /* kb_emu_cxx_id, once asked */
    unsigned checks;                      /* KB_EMU_CHECK_* built into every module */
    kb_emu_builds *builds;                /* the process groups of the builds in flight */
} kb_emu_cxx;

/* Take the compiler from $CXX, else KB_CXX_COMPILER (the one CMake found). KB_ERR_SETUP
 * with a message naming it when it cannot be found. Free with kb_emu_cxx_free. */
kb_status kb_emu_cxx_init(kb_emu_cxx *c, char *err, size_t errlen);
void kb_emu_cxx_free(kb_emu_cxx *c);

/* What a module's build depends on besides its source and defines: the first line of
 * `cxx --version` ("<cxx> (version unknown)" when it says nothing) followed by the flags
 * every build passes. Run once, then cached. Never NULL. */
const char *kb_emu_cxx_id(kb_emu_cxx *c);

/* Build every later module with the runtime checks of checks (KB_EMU_CHECK_*): the
 * kernel code's loads and stores are instrumented and reported to the runtime. Part of
 * the toolchain id, so checked and plain modules never share a cache entry. */
void kb_emu_cxx_set_checks(kb_emu_cxx *c, unsigned checks);

/* Compile req into the shared object out_path for arch req->sm (default_sm when 0), its
 * defines passed as -D. Appends the compiler's output to log. KB_ERR_COMPILE when the
 * compiler fails (log says why), KB_ERR_SETUP when it cannot be run; message in err. */
kb_status kb_emu_cxx_build(kb_emu_cxx *c, const kb_compile_req *req, int default_sm, const char *out_path,
                           kb_sb *log, char *err, size_t errlen);

/* Pause (pause 1) or resume (0) every build in flight and every one started while paused:
 * SIGSTOP / SIGCONT to each compiler's process group. Thread-safe; the emulator calls it
 * when a timing window opens and closes. Pausing twice is pausing once. */
void kb_emu_cxx_pause(kb_emu_cxx *c, int pause);

#endif /* KB_EMU_BUILD_H */
