/* kb_nvrtc_lib.c - the NVRTC chosen at run time (see kb_nvrtc_lib.h). */
#include "backend/cuda/kb_nvrtc_lib.h"

#include "backend/cuda/vendor_dl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the pure rules ---- */

int kb_nvrtc_min_driver(int nvrtc_major)
{
    return nvrtc_major * 1000;
}

int kb_nvrtc_min_branch(int nvrtc_major)
{
    /* CUDA Compatibility guide, "Minor Version Compatibility", table 1 (Linux). */
    switch (nvrtc_major) {
    case 13: return 580;
    case 12: return 525;
    case 11: return 450;
    default: return 0;
    }
}

int kb_nvrtc_fits(int nvrtc_major, int driver_version)
{
    return nvrtc_major > 0 && driver_version >= kb_nvrtc_min_driver(nvrtc_major);
}

void kb_nvrtc_unfit_message(char *buf, size_t n, int nvrtc_major, int driver_version)
{
    char branch[48] = "";
    int b = kb_nvrtc_min_branch(nvrtc_major);
    if (b)
        snprintf(branch, sizeof branch, " (driver branch >= %d)", b);
    snprintf(buf, n,
             "the driver supports CUDA %d.%d (%d); NVRTC %d output needs CUDA >= %d.0%s: install the "
             "cuda-compat-%d package (forward compatibility, data-centre GPUs) or a newer driver, or point "
             "KBENCH_LIBNVRTC at a CUDA %d libnvrtc.so.%d",
             driver_version / 1000, driver_version % 1000 / 10, driver_version, nvrtc_major, nvrtc_major, branch,
             nvrtc_major, driver_version / 1000, driver_version / 1000);
}

int kb_nvrtc_arch_listed(const int *archs, int n_archs, int code)
{
    int cc = kb_arch_cc(code);
    for (int i = 0; cc && i < n_archs; i++)
        if (archs[i] == cc)
            return 1;
    return 0;
}

/* ---- loading one candidate ---- */

#define SYM(name, field) { "nvrtc" name, offsetof(kb_nvrtc_lib, field) }
static const kb_dl_sym nvrtc_syms[] = {
    SYM("GetErrorString", GetErrorString), SYM("Version", Version),
    SYM("CreateProgram", CreateProgram),   SYM("DestroyProgram", DestroyProgram),
    SYM("CompileProgram", CompileProgram), SYM("GetCUBINSize", GetCUBINSize),
    SYM("GetCUBIN", GetCUBIN),             SYM("GetProgramLogSize", GetProgramLogSize),
    SYM("GetProgramLog", GetProgramLog),   SYM("GetPTXSize", GetPTXSize),
    SYM("GetPTX", GetPTX),                 SYM("GetNumSupportedArchs", GetNumSupportedArchs),
    SYM("GetSupportedArchs", GetSupportedArchs),
};
#undef SYM

/* Open path and fill *l. 0, or -1 with why filled (nothing stays open). */
static int load_one(const char *path, kb_nvrtc_lib *l, char *why, size_t wn)
{
    memset(l, 0, sizeof *l);
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        const char *e = dlerror();
        snprintf(why, wn, "%.400s", e ? e : path);
        return -1;
    }
    for (size_t i = 0; i < sizeof nvrtc_syms / sizeof nvrtc_syms[0]; i++) {
        void *fn = dlsym(h, nvrtc_syms[i].sym);
        if (!fn) {
            snprintf(why, wn, "%.400s has no %s (too old)", path, nvrtc_syms[i].sym);
            dlclose(h);
            return -1;
        }
        memcpy((char *)l + nvrtc_syms[i].offset, &fn, sizeof fn);
    }
    if (l->Version(&l->major, &l->minor) != NVRTC_SUCCESS) {
        snprintf(why, wn, "%.400s: nvrtcVersion failed", path);
        dlclose(h);
        return -1;
    }
    l->lib = h;
    snprintf(l->path, sizeof l->path, "%.500s", path);
    return 0;
}

/* The candidate paths, in order; *n_out of them in cand[]. */
static int candidates(char cand[][512], int max)
{
    static const char *const sonames[] = { "libnvrtc.so.13", "libnvrtc.so.12" };
    const char *env = getenv("KBENCH_LIBNVRTC");
    int n = 0;
    if (env && *env) {
        snprintf(cand[n++], 512, "%s", env);
        return n;
    }
    for (int i = 0; i < 2 && n < max; i++)
        snprintf(cand[n++], 512, "%s", sonames[i]);
    for (int d = 0; d < 2; d++)
        for (int i = 0; i < 2 && n < max; i++)
            if (kb_dl_toolkit_path(d, sonames[i], cand[n], 512) == 0)
                n++;
    return n;
}

/* ---- the selection ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kb_nvrtc_lib cur;     /* the selected NVRTC (lib NULL: none) */
static int selected;         /* a selection was made (successful or not) */

static int newer(const kb_nvrtc_lib *a, const kb_nvrtc_lib *b)
{
    return !b->lib || a->major > b->major || (a->major == b->major && a->minor > b->minor);
}

/* Keep l in *slot when it is newer; close whichever is not kept (a handle may be shared:
 * dlopen counts references). */
static void keep_newer(kb_nvrtc_lib *slot, kb_nvrtc_lib *l)
{
    if (newer(l, slot)) {
        if (slot->lib)
            dlclose(slot->lib);
        *slot = *l;
    } else {
        dlclose(l->lib);
    }
}

static kb_status select_locked(int driver_version, char *note, size_t n)
{
    char cand[6][512], why[512] = "", first_why[512] = "";
    kb_nvrtc_lib best = { 0 }, newest = { 0 }, l;
    int nc = candidates(cand, 6);
    for (int i = 0; i < nc; i++) {
        if (load_one(cand[i], &l, why, sizeof why) != 0) {
            if (!first_why[0])
                snprintf(first_why, sizeof first_why, "%s", why);
            continue;
        }
        kb_nvrtc_lib copy = l;
        if (driver_version == 0 || kb_nvrtc_fits(l.major, driver_version)) {
            copy.lib = dlopen(l.path, RTLD_NOW | RTLD_LOCAL); /* one reference each slot */
            keep_newer(&best, &copy);
        }
        keep_newer(&newest, &l);
    }
    selected = 1;
    memset(&cur, 0, sizeof cur); /* an earlier selection stays loaded: a compile may hold it */
    if (best.lib) {
        cur = best;
        if (newest.lib)
            dlclose(newest.lib);
        snprintf(note, n, "NVRTC %d.%d (%s)", cur.major, cur.minor, cur.path);
        return KB_OK;
    }
    if (newest.lib) {
        kb_nvrtc_unfit_message(note, n, newest.major, driver_version);
        dlclose(newest.lib);
    } else {
        snprintf(note, n, "NVRTC not found (%s%s; set KBENCH_LIBNVRTC to a libnvrtc.so.13 or .so.12)",
                 getenv("KBENCH_LIBNVRTC") && *getenv("KBENCH_LIBNVRTC") ? "KBENCH_LIBNVRTC " : "", first_why);
    }
    return KB_ERR_SETUP;
}

kb_status kb_nvrtc_lib_select(int driver_version, char *note, size_t n)
{
    pthread_mutex_lock(&lock);
    kb_status st = select_locked(driver_version, note, n);
    pthread_mutex_unlock(&lock);
    return st;
}

const kb_nvrtc_lib *kb_nvrtc_lib_current(void)
{
    char note[1024];
    pthread_mutex_lock(&lock);
    if (!selected)
        select_locked(0, note, sizeof note);
    const kb_nvrtc_lib *l = cur.lib ? &cur : NULL;
    pthread_mutex_unlock(&lock);
    return l;
}

/* The accepts() of kb_arch_list: cc is in NVRTC's list (user: the list, its count first). */
static int listed_cc(int cc, void *user)
{
    const int *v = user;
    return kb_nvrtc_arch_listed(v + 1, v[0], cc);
}

int kb_nvrtc_supports(int code, char *why, size_t n)
{
    const kb_nvrtc_lib *nv = kb_nvrtc_lib_current();
    int count = 0, v[65];
    if (!nv) {
        snprintf(why, n, "no NVRTC could be loaded (set KBENCH_LIBNVRTC to a libnvrtc.so.13 or .so.12)");
        return -1;
    }
    if (nv->GetNumSupportedArchs(&count) != NVRTC_SUCCESS || count < 0 || count > 64 ||
        nv->GetSupportedArchs(v + 1) != NVRTC_SUCCESS) {
        snprintf(why, n, "NVRTC %d.%d (%s) did not list the architectures it supports", nv->major, nv->minor, nv->path);
        return -1;
    }
    v[0] = count;
    if (kb_nvrtc_arch_listed(v + 1, count, code))
        return 1;
    char names[512];
    snprintf(why, n, "NVRTC %d.%d (%s) cannot compile for %s; of kbench's architectures it supports %s",
             nv->major, nv->minor, nv->path, kb_arch_name(code), kb_arch_list(names, sizeof names, listed_cc, v));
    return 0;
}
