/* npy.c - NumPy .npy v1.0 writer (see npy.h). */
#include "core/npy.h"
#include "core/fsutil.h"
#include "core/output.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "npy.c writes host memory as little-endian ('<') data");

#define NPY_MAX_DIMS 32

kb_status kb_npy_write_raw(const char *path, const char *descr, const void *data,
                           size_t elem_bytes, const int64_t *shape, int ndim)
{
    kb_status st = KB_ERR_INPUT;
    FILE *f;
    kb_sb hdr;
    kb_sb_init(&hdr);

    if (!descr || !*descr || ndim < 0 || ndim > NPY_MAX_DIMS || elem_bytes == 0)
        goto fail;
    size_t count = 1;
    kb_sb_printf(&hdr, "{'descr': '%s', 'fortran_order': False, 'shape': (", descr);
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            goto fail;
        count *= (size_t)shape[i];
        /* a one-element tuple needs its trailing comma: (5,) */
        kb_sb_printf(&hdr, "%lld%s", (long long)shape[i], ndim == 1 ? "," : i + 1 < ndim ? ", " : "");
    }
    kb_sb_printf(&hdr, "), }");
    /* magic (6) + version (2) + length (2) + header, '\n' included, is a multiple of 64 */
    size_t total = 10 + hdr.len + 1;
    size_t pad = (64 - total % 64) % 64;
    for (size_t i = 0; i < pad; i++)
        kb_sb_append(&hdr, " ", 1);
    kb_sb_append(&hdr, "\n", 1);
    if (hdr.len > 65535)
        goto fail;

    st = KB_ERR_IO;
    kb_sb err;
    kb_sb_init(&err);
    kb_out out;
    /* its folder is kbench's (a case's under --dump DIR): made; then the output rule */
    if (kb_fs_mkdir_parent(path) != KB_OK || kb_out_open(&out, path, &err) != KB_OK) {
        kb_sb_free(&err);
        goto fail;
    }
    f = out.f;
    unsigned char pre[10] = { 0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0,
                              (unsigned char)(hdr.len & 0xff), (unsigned char)(hdr.len >> 8) };
    int ok = fwrite(pre, 1, sizeof pre, f) == sizeof pre && fwrite(hdr.s, 1, hdr.len, f) == hdr.len &&
             (!count || fwrite(data, elem_bytes, count, f) == count);
    if (!ok)
        kb_out_abort(&out);
    else if (kb_out_commit(&out, &err) == KB_OK)
        st = KB_OK;
    kb_sb_free(&err);
fail:
    kb_sb_free(&hdr);
    return st;
}

kb_status kb_npy_write_f32(const char *path, const float *data, const int64_t *shape, int ndim)
{
    return kb_npy_write_raw(path, "<f4", data, sizeof(float), shape, ndim);
}

kb_status kb_npy_read_f32(const char *path, float **data, int64_t *n)
{
    char *buf = NULL;
    size_t len = 0;
    *data = NULL;
    *n = 0;
    if (kb_fs_read_all(path, &buf, &len) != KB_OK)
        return KB_ERR_IO;
    kb_status st = KB_ERR_INPUT;
    if (len < 10 || memcmp(buf, "\x93NUMPY\x01\x00", 8) != 0)
        goto done;
    size_t hlen = (size_t)(unsigned char)buf[8] | (size_t)(unsigned char)buf[9] << 8;
    if (10 + hlen > len)
        goto done;
    char *hdr = strndup(buf + 10, hlen);
    int ok = hdr && strstr(hdr, "'descr': '<f4'") && strstr(hdr, "'fortran_order': False");
    free(hdr);
    size_t bytes = len - 10 - hlen;
    if (!ok || bytes % sizeof(float))
        goto done;
    if (!(*data = malloc(bytes ? bytes : 1))) {
        st = KB_ERR_OOM;
        goto done;
    }
    memcpy(*data, buf + 10 + hlen, bytes);
    *n = (int64_t)(bytes / sizeof(float));
    st = KB_OK;
done:
    free(buf);
    return st;
}
