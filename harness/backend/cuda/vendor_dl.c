/* vendor_dl.c - dlopen a vendor library and resolve its table (see vendor_dl.h). */
#include "backend/cuda/vendor_dl.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef KB_CUDA_INCLUDE_DIR
#define KB_CUDA_INCLUDE_DIR ""
#endif

void kb_dl_forget(void **lib, void *table, size_t table_bytes)
{
    memset(table, 0, table_bytes);
    *lib = NULL;
}

/* Under LeakSanitizer: what the vendor libraries allocate and keep is theirs, not kbench's
 * (a weak hook LSan looks up in the executable; unused otherwise). */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
    return "leak:libcublasLt.so\nleak:libcublas.so\nleak:libcudnn\n";
}

int kb_dl_toolkit_path(int i, const char *soname, char *buf, size_t n)
{
    static const char *const rel[] = { "/../lib64/", "/../lib/" };
    const char *inc = KB_CUDA_INCLUDE_DIR;
    size_t len = strcspn(inc, ";");   /* CMake may list several include folders */
    if (i < 0 || i >= 2 || len == 0)
        return -1;
    snprintf(buf, n, "%.*s%s%s", (int)len, inc, rel[i], soname);
    return 0;
}

/* dlopen with RTLD_LOCAL: the library's symbols stay out of the global namespace. */
static void *open_first(const char *env, const char *soname, char *path, size_t n, char *why, size_t wn)
{
    const char *e = env ? getenv(env) : NULL;
    if (e && *e) {
        snprintf(path, n, "%s", e);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h)
            snprintf(why, wn, "%s", dlerror());
        return h;
    }
    snprintf(path, n, "%s", soname);
    void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
    if (h)
        return h;
    const char *first = dlerror();
    snprintf(why, wn, "%s", first ? first : "dlopen failed");
    for (int i = 0; kb_dl_toolkit_path(i, soname, path, n) == 0; i++)
        if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) != NULL)
            return h;
    snprintf(path, n, "%s", soname);
    return NULL;
}

kb_status kb_dl_load(void **lib, void *table, const kb_dl_sym *syms, size_t n_syms, const char *env,
                     const char *soname, const char *what, char *err, size_t n)
{
    char path[1024], why[512] = "";
    *lib = open_first(env, soname, path, sizeof path, why, sizeof why);
    if (!*lib) {
        snprintf(err, n, "%s not found (%s: %s)", what, soname, why);
        return KB_ERR_SETUP;
    }
    for (size_t i = 0; i < n_syms; i++) {
        void *fn = dlsym(*lib, syms[i].sym);
        if (!fn) {
            snprintf(err, n, "%s: %s has no %s (too old)", what, path, syms[i].sym);
            dlclose(*lib);
            *lib = NULL;
            return KB_ERR_SETUP;
        }
        /* POSIX guarantees a dlsym result converts to a function pointer. */
        memcpy((char *)table + syms[i].offset, &fn, sizeof fn);
    }
    return KB_OK;
}
