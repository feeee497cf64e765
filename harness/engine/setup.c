/* setup.c - the environment checks before the first case (see setup.h). */
#include "engine/setup.h"

#include "core/fsutil.h"
#include "engine/modules.h"
#include "engine/peaks.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The cache directory's name and where it came from (for messages), as kb_cache_dir
 * resolves it. KB_ERR_SETUP when nothing names one. */
static kb_status cache_name(const char *cache_dir, kb_sb *dir, kb_sb *src)
{
    const char *env = getenv("KBENCH_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (cache_dir) {
        kb_sb_printf(dir, "%s", cache_dir);
        kb_sb_printf(src, "--cache-dir %s", cache_dir);
    } else if (env && *env) {
        kb_sb_printf(dir, "%s", env);
        kb_sb_printf(src, "KBENCH_CACHE_DIR=%s", env);
    } else if (xdg && *xdg) {
        kb_sb_printf(dir, "%s/kbench", xdg);
        kb_sb_printf(src, "XDG_CACHE_HOME=%s", xdg);
    } else if (home && *home) {
        kb_sb_printf(dir, "%s/.cache/kbench", home);
        kb_sb_printf(src, "HOME=%s", home);
    } else {
        kb_sb_printf(src, "none of KBENCH_CACHE_DIR, XDG_CACHE_HOME, HOME is set: the compile cache has no home");
        return KB_ERR_SETUP;
    }
    return KB_OK;
}

/* dir exists (created when missing), is a directory, and a file can be made in it. */
static int dir_writable(const char *dir, int *why)
{
    struct stat st;
    if (kb_fs_mkdir_p(dir) != KB_OK || stat(dir, &st) != 0) {
        *why = errno;
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        *why = ENOTDIR;
        return 0;
    }
    kb_sb probe;
    kb_sb_init(&probe);
    kb_sb_printf(&probe, "%s/.kbench-probe.XXXXXX", dir);
    int fd = mkstemp(probe.s);
    *why = errno;
    if (fd >= 0) {
        close(fd);
        unlink(probe.s);
    }
    kb_sb_free(&probe);
    return fd >= 0;
}

static kb_status check_cache(const char *cache_dir, kb_sb *err)
{
    kb_sb dir, src;
    kb_sb_init(&dir);
    kb_sb_init(&src);
    int why = 0;
    kb_status st = cache_name(cache_dir, &dir, &src);
    if (st != KB_OK) {
        kb_sb_printf(err, "%s", src.s);
    } else if (!dir_writable(dir.s, &why)) {
        kb_sb_printf(err, "%s: the compile cache %s is not a writable directory: %s", src.s, dir.s, strerror(why));
        st = KB_ERR_SETUP;
    }
    kb_sb_free(&dir);
    kb_sb_free(&src);
    return st;
}

static kb_status check_kernels(kb_sb *err)
{
    const char *dir = kb_kernels_dir(), *env = getenv("KBENCH_KERNELS_DIR");
    kb_sb probe;
    kb_sb_init(&probe);
    kb_sb_printf(&probe, "%s/kb_device.h", dir);
    kb_status st = KB_OK;
    if (access(probe.s, R_OK) != 0) {
        int e = errno;
        if (env && *env)
            kb_sb_printf(err, "KBENCH_KERNELS_DIR=%s: no kernel sources there (%s: %s)", env, probe.s, strerror(e));
        else
            kb_sb_printf(err, "the kernel sources are missing (%s: %s); set KBENCH_KERNELS_DIR", probe.s,
                         strerror(e));
        st = KB_ERR_SETUP;
    }
    kb_sb_free(&probe);
    return st;
}

kb_status kb_setup_check(const char *cache_dir, kb_sb *err)
{
    kb_status st = check_cache(cache_dir, err);
    if (st == KB_OK)
        st = check_kernels(err);
    const char *peaks = getenv("KBENCH_PEAKS");
    if (st == KB_OK && peaks && *peaks) {
        kb_sb why;
        kb_sb_init(&why);
        if ((st = kb_peaks_check_file(peaks, &why)) != KB_OK)
            kb_sb_printf(err, "KBENCH_PEAKS=%s", why.s);
        kb_sb_free(&why);
    }
    return st;
}
