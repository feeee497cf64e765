/* paths.c - the run-time data root (see paths.h). */
#include "core/paths.h"

#include <limits.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifndef KB_SOURCE_KERNELS_DIR
#define KB_SOURCE_KERNELS_DIR "kernels"
#endif
#ifndef KB_BUILD_DIR
#define KB_BUILD_DIR "."
#endif
#ifndef KB_INSTALL_DATA_SUFFIX
#define KB_INSTALL_DATA_SUFFIX "share/kbench"
#endif

static char root[2 * PATH_MAX];
static pthread_once_t once = PTHREAD_ONCE_INIT;

/* The directory of the running binary into dir; 0 on success. */
static int exe_dir(char *dir, size_t n)
{
    ssize_t k = readlink("/proc/self/exe", dir, n - 1);
    if (k <= 0)
        return -1;
    dir[k] = 0;
    char *slash = strrchr(dir, '/');
    if (!slash)
        return -1;
    *slash = 0;
    return 0;
}

static void find_root(void)
{
    char exe[PATH_MAX], build[PATH_MAX];
    /* a binary of the build tree (kbench, the tests): the source tree it was built from */
    if (exe_dir(exe, sizeof exe) != 0 || !realpath(KB_BUILD_DIR, build) || strcmp(exe, build) == 0) {
        snprintf(root, sizeof root, "%s/..", KB_SOURCE_KERNELS_DIR);
        return;
    }
    /* an installed one: <prefix>/bin/kbench reads <prefix>/share/kbench */
    snprintf(root, sizeof root, "%s/../%s", exe, KB_INSTALL_DATA_SUFFIX);
}

const char *kb_data_root(void)
{
    pthread_once(&once, find_root);
    return root;
}
