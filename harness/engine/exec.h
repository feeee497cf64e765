/* exec.h - the execution context a family sees while one case runs.
 *
 * Families allocate, upload, launch and download only through these calls, so the
 * same family code drives the cuda backend, the emulator and a CUDA Graph capture.
 */
#ifndef KB_EXEC_H
#define KB_EXEC_H

#include "engine/family.h"

#define KB_RUN_MAX_BUFS 32
#define KB_RUN_MAX_ARRAYS 12
#define KB_RUN_MAX_CONSTS 8
#define KB_RUN_MAX_PLANS 4
/* Every allocation is followed by this many guard bytes holding KB_RUN_GUARD_BYTE; the
 * verify stage checks them untouched, so a kernel writing past the end of any buffer is
 * wrong whatever the family's check reads. */
#define KB_RUN_GUARD_BYTES 256
#define KB_RUN_GUARD_BYTE 0xa5

/* A host array a family exposes for --dump (inputs, output, reference), as fp32. */
typedef struct {
    const char *name;        /* file name stem: "x", "out", "ref" */
    const float *data;       /* owned by the family state, valid until teardown */
    int64_t shape[4];
    int ndim;
} kb_run_array;

/* A scalar a case's result depends on beyond its inputs (alpha, beta, an fp8 per-tensor
 * scale, eps, the attention scale): recorded and dumped so the case can be recomputed. */
typedef struct {
    const char *name;        /* static storage: "alpha", "scale_a", "eps" */
    double value;
} kb_run_const;

struct kb_run {
    const kb_backend *be;
    kb_backend_ctx *bx;
    kb_module *mod;              /* the module compiled for this case's defines */
    const kb_family *f;
    const kb_case *c;
    kb_target target;
    kb_dptr bufs[KB_RUN_MAX_BUFS]; /* allocations, freed by kb_run_free_all */
    size_t buf_bytes[KB_RUN_MAX_BUFS]; /* what each was asked for; the guard follows */
    int n_bufs;
    char err[1024];              /* first error message of the case */
    kb_run_array arrays[KB_RUN_MAX_ARRAYS]; /* exposed for --dump */
    int n_arrays;
    kb_run_const consts[KB_RUN_MAX_CONSTS]; /* recorded ("constants") and dumped (constants.json) */
    int n_consts;
    kb_vendor_plan *plans[KB_RUN_MAX_PLANS]; /* vendor library calls, freed by kb_run_free_all */
    int n_plans;
    kb_vendor_info vendor;       /* what the last planned vendor call runs (have_vendor) */
    int have_vendor;
    int skipped;                 /* setup found the case cannot run here (kb_run_skip): skipped, not failed */
    int dumping;                 /* --dump is on: a family may keep host copies only a dump needs */
};

/* The case and its variant, for family code. */
static inline const kb_case *kb_run_case(const kb_run *r) { return r->c; }

/* Allocate device memory tracked by the run (freed when the case ends), followed by its
 * guard bytes. */
kb_status kb_run_alloc(kb_run *r, size_t bytes, kb_dptr *out);
/* Check every buffer's guard bytes: *bad 0 when all are intact, else 1 with the first
 * changed byte described in why. A failed download's status (message in the case). */
kb_status kb_run_check_guards(kb_run *r, int *bad, char *why, size_t whylen);
kb_status kb_run_upload(kb_run *r, kb_dptr dst, const void *src, size_t bytes);
kb_status kb_run_download(kb_run *r, void *dst, kb_dptr src, size_t bytes);
/* Launch entry of the case's module. */
kb_status kb_run_launch(kb_run *r, const char *entry, const kb_geom *g, const kb_arg *args, int nargs);
/* Plan a vendor library call (backend.h, kb_vendor_op), tracked by the run; its description
 * goes to r->vendor (the record's "vendor" block). KB_ERR_SETUP when the backend has no
 * vendor slots or the library is not loaded; the backend's message in the case. */
kb_status kb_run_vendor_plan(kb_run *r, const kb_vendor_op *op, kb_vendor_plan **out);
/* Enqueue a planned vendor call on the backend's stream. */
kb_status kb_run_vendor_run(kb_run *r, kb_vendor_plan *p);
/* Setup found that the case cannot run on this target for a reason only known at run time
 * (a vendor heuristic offers fewer algorithms than the rank asked for): the case is recorded
 * as skipped with this reason, not as a failure. Returns KB_ERR_INPUT for `return kb_run_skip(...)`. */
kb_status kb_run_skip(kb_run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Record the first error message of the case and return st (for `return kb_run_fail(...)`). */
kb_status kb_run_fail(kb_run *r, kb_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Expose a host fp32 array (inputs, the downloaded output, the reference) so that
 * `kbench run --dump DIR` can write it as DIR/<case>/<name>.npy when the case fails or
 * is chosen. data must stay valid until the family's teardown; shape has ndim (1..4)
 * dims. Extra arrays beyond KB_RUN_MAX_ARRAYS are ignored. */
void kb_run_expose(kb_run *r, const char *name, const float *data, const int64_t *shape, int ndim);
/* Name a constant of the case (name in static storage); a second call with the same name
 * replaces the value; extra names beyond KB_RUN_MAX_CONSTS are ignored. */
void kb_run_constant(kb_run *r, const char *name, double value);
/* Write every exposed array under dir/<id with '/' as '__'>/, and the constants as
 * constants.json there; KB_OK or KB_ERR_IO (message in r). */
kb_status kb_run_dump(kb_run *r, const char *dir, const char *case_id);
/* Free every tracked allocation and vendor plan. */
void kb_run_free_all(kb_run *r);

#endif /* KB_EXEC_H */
