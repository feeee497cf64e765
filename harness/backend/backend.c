/* backend.c - choosing and opening a backend (auto: cuda when a device is present). */
#include "backend/backend.h"

#include <stdio.h>
#include <string.h>

const kb_backend *kb_backend_find(const char *name)
{
    if (!strcmp(name, "cuda"))
        return &kb_backend_cuda;
    if (!strcmp(name, "emu"))
        return &kb_backend_emu;
    return NULL;
}

unsigned kb_backend_caps_of(const char *name)
{
    if (!strcmp(name, "auto"))
        return kb_backend_emu.caps;
    const kb_backend *b = kb_backend_find(name);
    return b ? b->caps : 0;
}

kb_status kb_backend_open(const char *name, const kb_backend_opts *bo, const kb_backend **be,
                          kb_backend_ctx **bx, char *err, size_t errlen)
{
    int is_auto = !strcmp(name, "auto");
    const kb_backend *b = is_auto ? &kb_backend_cuda : kb_backend_find(name);
    if (!b) {
        snprintf(err, errlen, "unknown backend '%s' (expected auto, cuda or emu)", name);
        return KB_ERR_INPUT;
    }
    kb_status st = b->init(bo, bx, err, errlen);
    /* auto falls back only where no GPU can be used (KB_ERR_SETUP: no driver, no device);
     * a GPU that refuses the request (an --arch it cannot run) is the user's to fix */
    if (st == KB_OK || !is_auto || st != KB_ERR_SETUP) {
        *be = b;
        return st;
    }
    /* auto: no usable GPU, so the emulator, and one line that says so */
    fprintf(stderr, "kbench: %s; using the CPU emulator (timings are CPU time, not GPU numbers)\n", err);
    b = &kb_backend_emu;
    st = b->init(bo, bx, err, errlen);
    *be = b;
    return st;
}

kb_status kb_backend_tmap_encode(const kb_backend *b, kb_backend_ctx *x, const kb_tmap_desc *d, kb_arg *out,
                                 char *err, size_t errlen)
{
    unsigned char map[KB_TMAP_BYTES];
    if (kb_tmap_validate(d, err, errlen) != 0)
        return KB_ERR_INPUT;
    if (!(b->caps & KB_CAP_TMA) || !b->tmap_encode) {
        snprintf(err, errlen, "the %s backend cannot encode tensor maps (no KB_CAP_TMA)", b->name);
        return KB_ERR_INPUT;
    }
    kb_status st = b->tmap_encode(x, d, map);
    if (st != KB_OK) {
        snprintf(err, errlen, "%s", b->last_error(x));
        return st;
    }
    *out = kb_arg_tmap(map);
    return KB_OK;
}
