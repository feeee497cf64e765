/* emu_symbol.c - code addresses to source lines (see emu_symbol.h). */
#include "backend/emu/emu_symbol.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "func at file:line" from addr2line for offset off in the shared object path; 0 on success. */
static int addr2line(const char *path, uintptr_t off, char *buf, size_t n)
{
    char cmd[1200];
    if (strchr(path, '\'') || snprintf(cmd, sizeof cmd, "addr2line -f -C -e '%s' 0x%lx 2>/dev/null", path,
                                        (unsigned long)off) >= (int)sizeof cmd)
        return -1;
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char fn[256] = "", loc[768] = "";
    int ok = fgets(fn, sizeof fn, p) && fgets(loc, sizeof loc, p);
    pclose(p);
    fn[strcspn(fn, "\n")] = 0;
    loc[strcspn(loc, " \n")] = 0;              /* drop " (discriminator N)" */
    if (!ok || loc[0] == '?' || !loc[0])
        return -1;
    char real[PATH_MAX];
    char *colon = strrchr(loc, ':');
    if (colon) {                                 /* kernels/../tests/x.cu:12 -> its real path */
        *colon = 0;
        if (realpath(loc, real)) {
            snprintf(buf, n, "%s at %s:%s", fn, real, colon + 1);
            return 0;
        }
        *colon = ':';
    }
    snprintf(buf, n, "%s at %s", fn, loc);
    return 0;
}

void kb_emu_symbolize(const void *pc, char *buf, size_t n)
{
    Dl_info info;
    if (!pc || !dladdr(pc, &info) || !info.dli_fname) {
        snprintf(buf, n, "%p", pc);
        return;
    }
    /* the return address is the instruction after the access: step back into it */
    uintptr_t off = (uintptr_t)pc - (uintptr_t)info.dli_fbase - 1;
    if (addr2line(info.dli_fname, off, buf, n) == 0)
        return;
    if (info.dli_sname)
        snprintf(buf, n, "%s+0x%lx in %s", info.dli_sname, (unsigned long)((uintptr_t)pc - (uintptr_t)info.dli_saddr),
                 info.dli_fname);
    else
        snprintf(buf, n, "0x%lx in %s", (unsigned long)off, info.dli_fname);
}
