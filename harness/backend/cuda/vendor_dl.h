/* vendor_dl.h - opening a vendor library (cuBLASLt, cuDNN) at run time and resolving a
 * table of its entry points, the way cuda_api.c opens the driver: kbench links none of
 * them, so it starts and explains itself where they are missing. */
#ifndef KB_VENDOR_DL_H
#define KB_VENDOR_DL_H

#include "core/kb.h"

/* One entry point: its exported symbol and the offset of its function pointer in the table. */
typedef struct {
    const char *sym;
    size_t offset;
} kb_dl_sym;

/* Open the library and fill table: the path in $env when set, else soname on the loader's
 * path, else soname in the lib64 (then lib) folder beside the CUDA toolkit kbench was built
 * with. *lib receives the handle. KB_OK; or KB_ERR_SETUP with err "<what> not found
 * (<soname>: <dlerror>)", or "<what>: <path> has no <symbol>" (the library is closed again
 * and *lib is NULL). */
kb_status kb_dl_load(void **lib, void *table, const kb_dl_sym *syms, size_t n_syms, const char *env,
                     const char *soname, const char *what, char *err, size_t n);

/* Forget a library's table. The library stays loaded (no dlclose): CUDA libraries run
 * their teardown at exit, and the allocations they keep (cuBLASLt and cuDNN keep some
 * after a failed handle creation) stay attributed to them for LeakSanitizer, whose
 * suppressions (__lsan_default_suppressions in vendor_dl.c) name them. */
void kb_dl_forget(void **lib, void *table, size_t table_bytes);

/* The toolkit folder candidate i (0: lib64, 1: lib) holding soname, as a path into buf;
 * -1 when there is no such candidate (pure: does not look at the file system). */
int kb_dl_toolkit_path(int i, const char *soname, char *buf, size_t n);

#endif /* KB_VENDOR_DL_H */
