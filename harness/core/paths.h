/* paths.h - where kbench finds what it reads at run time (kernel sources, suites,
 * data/peaks.json): a binary in the build directory (kbench, the tests) reads the source
 * tree it was built from; any other (an installed one: <prefix>/bin/kbench) reads the
 * install tree beside it, <prefix>/share/kbench, so an installed kbench uses its own
 * files and works after the build and source trees are gone. Environment variables
 * (KBENCH_KERNELS_DIR, KBENCH_PEAKS) override both, at their call sites. */
#ifndef KB_PATHS_H
#define KB_PATHS_H

/* The directory holding kernels/, suites/ and data/ (static storage, never NULL). */
const char *kb_data_root(void);

#endif /* KB_PATHS_H */
