/* cuda_build.c - the cuda backend's builds: NVRTC to a CUBIN or PTX file (see cuda_build.h). */
#include "backend/cuda/cuda_build.h"

#include "backend/cuda/kb_nvrtc.h"
#include "core/fsutil.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- toolchain ---- */

/* The NVRTC in use (kb_nvrtc_lib_current), so the compile cache's key names it. */
static _Thread_local char toolchain[32];   /* compile workers hash keys concurrently */
static pthread_mutex_t toolchain_lock = PTHREAD_MUTEX_INITIALIZER;

const char *kb_cuda_toolchain_id(kb_backend_ctx *x)
{
    (void)x;
    int major, minor;
    pthread_mutex_lock(&toolchain_lock);
    if (kb_nvrtc_version(&major, &minor) == 0)
        snprintf(toolchain, sizeof toolchain, "nvrtc %d.%d", major, minor);
    else
        snprintf(toolchain, sizeof toolchain, "nvrtc ?");
    pthread_mutex_unlock(&toolchain_lock);
    return toolchain;
}

/* Write bytes to path; KB_ERR_IO with the reason in log. */
static kb_status write_file(const char *path, const void *bytes, size_t n, kb_sb *log)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(bytes, 1, n, f) != n) {
        kb_sb_printf(log, "cuda: cannot write %s: %s\n", path, strerror(errno));
        if (f)
            fclose(f);
        return KB_ERR_IO;
    }
    if (fclose(f) != 0) {
        kb_sb_printf(log, "cuda: cannot write %s: %s\n", path, strerror(errno));
        return KB_ERR_IO;
    }
    return KB_OK;
}

/* Compile req with NVRTC into out_path: its CUBIN, or its PTX when ptx. */
static kb_status build_image(const kb_compile_req *req, const char *out_path, kb_sb *log, int ptx)
{
    kb_status st;
    char *src = NULL, *dir = NULL;
    void *image = NULL;
    size_t image_bytes = 0;
    const char *inc[2];
    int n_inc = 0;

    if (!kb_arch_get(req->sm)) {
        kb_sb_printf(log, "cuda: no target architecture for %s\n", req->source_path);
        return KB_ERR_INPUT;
    }
    if (kb_fs_read_all(req->source_path, &src, NULL) != KB_OK) {
        kb_sb_printf(log, "cuda: cannot read %s: %s\n", req->source_path, strerror(errno));
        return KB_ERR_IO;
    }
    /* Quoted includes resolve against the source's own directory first, then
     * include_dir - the order a C compiler (and the compile cache's key) uses. */
    const char *slash = strrchr(req->source_path, '/');
    if (slash) {
        dir = strndup(req->source_path, (size_t)(slash - req->source_path) + 1);
        if (!dir) {
            st = KB_ERR_OOM;
            goto fail;
        }
        inc[n_inc++] = dir;
    }
    if (req->include_dir && *req->include_dir)
        inc[n_inc++] = req->include_dir;

    if (ptx)
        st = kb_nvrtc_compile_ptx(src, req->source_path, inc, n_inc, req->defines, req->n_defines, req->sm,
                                  (char **)&image, &image_bytes, log);
    else
        st = kb_nvrtc_compile(src, req->source_path, inc, n_inc, req->defines, req->n_defines, req->sm, &image,
                              &image_bytes, log);
    if (st == KB_OK)
        st = write_file(out_path, image, image_bytes, log);
fail:
    free(image);
    free(dir);
    free(src);
    return st;
}

kb_status kb_cuda_build(kb_backend_ctx *x, const kb_compile_req *req, const char *out_path, kb_sb *log)
{
    (void)x; /* NVRTC needs no driver (cuda_build.h) */
    return build_image(req, out_path, log, 0);
}

kb_status kb_cuda_build_ptx(kb_backend_ctx *x, const kb_compile_req *req, const char *out_path, kb_sb *log)
{
    (void)x;
    return build_image(req, out_path, log, 1);
}
