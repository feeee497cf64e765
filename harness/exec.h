/* exec.h - the execution context a family sees while one case runs.
 *
 * Families allocate, upload, launch and download only through these calls, so the
 * same family code drives the cuda backend, the emulator and a CUDA Graph capture.
 */
#ifndef KB_EXEC_H
#define KB_EXEC_H

#include "family.h"

#define KB_RUN_MAX_BUFS 32

struct kb_run {
    const kb_backend *be;
    kb_backend_ctx *bx;
    kb_module *mod;              /* the module compiled for this case's defines */
    const kb_family *f;
    const kb_case *c;
    kb_target target;
    kb_dptr bufs[KB_RUN_MAX_BUFS]; /* allocations, freed by kb_run_free_all */
    int n_bufs;
    char err[1024];              /* first error message of the case */
};

/* The case and its variant, for family code. */
static inline const kb_case *kb_run_case(const kb_run *r) { return r->c; }

/* Allocate device memory tracked by the run (freed when the case ends). */
kb_status kb_run_alloc(kb_run *r, size_t bytes, kb_dptr *out);
kb_status kb_run_upload(kb_run *r, kb_dptr dst, const void *src, size_t bytes);
kb_status kb_run_download(kb_run *r, void *dst, kb_dptr src, size_t bytes);
/* Launch entry of the case's module. */
kb_status kb_run_launch(kb_run *r, const char *entry, const kb_geom *g, const kb_arg *args, int nargs);
/* Record the first error message of the case and return st (for `return kb_run_fail(...)`). */
kb_status kb_run_fail(kb_run *r, kb_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Free every tracked allocation. */
void kb_run_free_all(kb_run *r);

#endif /* KB_EXEC_H */
