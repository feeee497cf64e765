/* exec.c - the execution context of one case: tracked allocations and launches
 * routed to the selected backend (see exec.h). */
#include "engine/exec.h"

#include "core/fsutil.h"
#include "core/npy.h"
#include "core/output.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

kb_status kb_run_fail(kb_run *r, kb_status st, const char *fmt, ...)
{
    if (r->err[0] == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, sizeof r->err, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* Copy the backend's last error into the case, once. */
static kb_status backend_fail(kb_run *r, kb_status st, const char *what)
{
    return kb_run_fail(r, st, "%s: %s", what, r->be->last_error(r->bx));
}

kb_status kb_run_alloc(kb_run *r, size_t bytes, kb_dptr *out)
{
    static unsigned char guard[KB_RUN_GUARD_BYTES];
    if (!guard[0])
        memset(guard, KB_RUN_GUARD_BYTE, sizeof guard);
    if (r->n_bufs == KB_RUN_MAX_BUFS)
        return kb_run_fail(r, KB_ERR_INTERNAL, "more than %d buffers in one case", KB_RUN_MAX_BUFS);
    if (bytes > SIZE_MAX - KB_RUN_GUARD_BYTES)
        return kb_run_fail(r, KB_ERR_OOM, "a buffer of %zu bytes cannot be addressed", bytes);
    kb_status st = r->be->alloc(r->bx, bytes + KB_RUN_GUARD_BYTES, out);
    if (st != KB_OK)
        return backend_fail(r, st, "device allocation");
    r->bufs[r->n_bufs] = *out;
    r->buf_bytes[r->n_bufs++] = bytes;
    return kb_run_upload(r, *out + bytes, guard, sizeof guard);
}

kb_status kb_run_check_guards(kb_run *r, int *bad, char *why, size_t whylen)
{
    unsigned char got[KB_RUN_GUARD_BYTES];
    *bad = 0;
    for (int i = 0; i < r->n_bufs; i++) {
        kb_status st = kb_run_download(r, got, r->bufs[i] + r->buf_bytes[i], sizeof got);
        if (st != KB_OK)
            return st;
        for (int k = 0; k < KB_RUN_GUARD_BYTES; k++)
            if (got[k] != KB_RUN_GUARD_BYTE) {
                snprintf(why, whylen, "wrote past the end of the case's buffer %d (of %zu bytes): the guard "
                         "byte %d past its end changed from 0x%02x to 0x%02x", i, r->buf_bytes[i], k,
                         KB_RUN_GUARD_BYTE, got[k]);
                *bad = 1;
                return KB_OK;
            }
    }
    return KB_OK;
}

kb_status kb_run_upload(kb_run *r, kb_dptr dst, const void *src, size_t bytes)
{
    kb_status st = r->be->upload(r->bx, dst, src, bytes);
    return st == KB_OK ? KB_OK : backend_fail(r, st, "upload");
}

kb_status kb_run_download(kb_run *r, void *dst, kb_dptr src, size_t bytes)
{
    kb_status st = r->be->download(r->bx, dst, src, bytes);
    return st == KB_OK ? KB_OK : backend_fail(r, st, "download");
}

kb_status kb_run_launch(kb_run *r, const char *entry, const kb_geom *g, const kb_arg *args, int nargs)
{
    kb_status st = r->be->launch(r->bx, r->mod, entry, g, args, nargs);
    if (st == KB_OK)
        return KB_OK;
    return kb_run_fail(r, st, "launch of %s grid(%u,%u,%u) block(%u,%u,%u) shmem %zu B: %s", entry,
                       g->grid[0], g->grid[1], g->grid[2], g->block[0], g->block[1], g->block[2],
                       g->shmem_bytes, r->be->last_error(r->bx));
}

kb_status kb_run_vendor_plan(kb_run *r, const kb_vendor_op *op, kb_vendor_plan **out)
{
    *out = NULL;
    if (!(r->be->caps & KB_CAP_VENDOR_LIBS))
        return kb_run_fail(r, KB_ERR_SETUP, "the %s backend has no vendor library calls", r->be->name);
    if (r->n_plans == KB_RUN_MAX_PLANS)
        return kb_run_fail(r, KB_ERR_INTERNAL, "more than %d vendor plans in one case", KB_RUN_MAX_PLANS);
    kb_vendor_info info;
    memset(&info, 0, sizeof info);
    kb_status st = r->be->vendor_plan(r->bx, op, out, &info);
    if (st == KB_ERR_INPUT)   /* the library offers nothing for this problem here: not kbench's failure */
        return kb_run_skip(r, "%s", r->be->last_error(r->bx));
    if (st != KB_OK)
        return backend_fail(r, st, "vendor plan");
    r->plans[r->n_plans++] = *out;
    r->vendor = info;
    r->have_vendor = 1;
    return KB_OK;
}

kb_status kb_run_vendor_run(kb_run *r, kb_vendor_plan *p)
{
    kb_status st = r->be->vendor_run(r->bx, p);
    return st == KB_OK ? KB_OK : backend_fail(r, st, "vendor call");
}

kb_status kb_run_skip(kb_run *r, const char *fmt, ...)
{
    if (r->err[0] == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->err, sizeof r->err, fmt, ap);
        va_end(ap);
    }
    r->skipped = 1;
    return KB_ERR_INPUT;
}

void kb_run_free_all(kb_run *r)
{
    while (r->n_plans > 0)
        r->be->vendor_free(r->bx, r->plans[--r->n_plans]);
    while (r->n_bufs > 0)
        r->be->free(r->bx, r->bufs[--r->n_bufs]);
}

void kb_run_expose(kb_run *r, const char *name, const float *data, const int64_t *shape, int ndim)
{
    if (r->n_arrays == KB_RUN_MAX_ARRAYS || ndim < 1 || ndim > 4)
        return;
    kb_run_array *a = &r->arrays[r->n_arrays++];
    a->name = name;
    a->data = data;
    a->ndim = ndim;
    memcpy(a->shape, shape, (size_t)ndim * sizeof *shape);
}

void kb_run_constant(kb_run *r, const char *name, double value)
{
    for (int i = 0; i < r->n_consts; i++)
        if (strcmp(r->consts[i].name, name) == 0) {
            r->consts[i].value = value;
            return;
        }
    if (r->n_consts < KB_RUN_MAX_CONSTS)
        r->consts[r->n_consts++] = (kb_run_const){ name, value };
}

/* constants.json in the case's dump folder (path ends in '/'). */
static kb_status dump_constants(kb_run *r, kb_sb *path)
{
    if (r->n_consts == 0)
        return KB_OK;
    kb_sb_printf(path, "constants.json");
    kb_sb err;
    kb_sb_init(&err);
    kb_out out;
    kb_status st = kb_out_open(&out, path->s, &err);   /* the output rule: core/output.h */
    if (st == KB_OK) {
        fputc('{', out.f);
        for (int i = 0; i < r->n_consts; i++)
            fprintf(out.f, "%s\"%s\": %.17g", i ? ", " : "", r->consts[i].name, r->consts[i].value);
        fputs("}\n", out.f);
        st = kb_out_commit(&out, &err);
    }
    kb_sb_free(&err);
    return st == KB_OK ? KB_OK : KB_ERR_IO;
}

kb_status kb_run_dump(kb_run *r, const char *dir, const char *case_id)
{
    kb_sb path;
    kb_sb_init(&path);
    kb_sb_printf(&path, "%s/", dir);
    for (const char *p = case_id; *p; p++) {
        if (*p == '/')
            kb_sb_append(&path, "__", 2);
        else
            kb_sb_append(&path, p, 1);
    }
    kb_status st = kb_fs_mkdir_p(path.s);
    size_t base = path.len;
    for (int i = 0; i < r->n_arrays && st == KB_OK; i++) {
        path.len = base;
        path.s[base] = 0;
        kb_sb_printf(&path, "/%s.npy", r->arrays[i].name);
        st = kb_npy_write_f32(path.s, r->arrays[i].data, r->arrays[i].shape, r->arrays[i].ndim);
    }
    if (st == KB_OK) {
        path.len = base;
        path.s[base] = 0;
        kb_sb_printf(&path, "/");
        st = dump_constants(r, &path);
    }
    if (st != KB_OK)
        kb_run_fail(r, st, "--dump: cannot write %s", path.s);
    kb_sb_free(&path);
    return st;
}
