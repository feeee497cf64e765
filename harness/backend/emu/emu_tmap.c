/* emu_tmap.c - the emulator's tensor-map bytes (see emu_tmap.h). Layout (little endian):
 *   0 magic "KBTM"   4 rank, elem bytes, swizzle bytes/8, oob_nan   8 base
 *  16 dims[5]        56 strides[1..4]   88 box[5] - 1   93 estride[5] - 1
 * 124 checksum (FNV-1a of bytes 0..123) */
#include "backend/emu/emu_tmap.h"

#include <stdio.h>
#include <string.h>

#define MAGIC 0x4d54424bu   /* "KBTM" */

static uint32_t fnv(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

int kb_emu_tmap_encode(const kb_tmap_desc *d, unsigned char out[KB_TMAP_BYTES], char *why, size_t whylen)
{
    if (d->interleave != KB_TMAP_INTERLEAVE_NONE) {
        snprintf(why, whylen, "tensor map: interleaved layouts are not modelled by the emulator");
        return -1;
    }
    uint32_t magic = MAGIC, sum;
    memset(out, 0, KB_TMAP_BYTES);
    memcpy(out, &magic, 4);
    out[4] = (unsigned char)d->rank;
    out[5] = (unsigned char)kb_tmap_elem_bytes(d->dtype);
    out[6] = (unsigned char)(kb_tmap_swizzle_bytes(d->swizzle) / 8);
    out[7] = d->oob_fill == KB_TMAP_OOB_NAN_REQUEST_ZERO_FMA;
    memcpy(out + 8, &d->base, 8);
    for (unsigned i = 0; i < KB_TMAP_MAX_RANK; i++) {
        uint64_t dim = i < d->rank ? d->dims[i] : 1, st = i >= 1 && i < d->rank ? d->strides[i - 1] : 0;
        memcpy(out + 16 + 8 * i, &dim, 8);
        if (i >= 1)
            memcpy(out + 56 + 8 * (i - 1), &st, 8);
        out[88 + i] = (unsigned char)((i < d->rank ? d->box[i] : 1) - 1);
        out[93 + i] = (unsigned char)((i < d->rank && d->elem_strides[i] ? d->elem_strides[i] : 1) - 1);
    }
    sum = fnv(out, 124);
    memcpy(out + 124, &sum, 4);
    return 0;
}

int kb_emu_tmap_decode(const unsigned char in[KB_TMAP_BYTES], kb_emu_tmap *o)
{
    uint32_t magic, sum;
    memcpy(&magic, in, 4);
    memcpy(&sum, in + 124, 4);
    if (magic != MAGIC || sum != fnv(in, 124) || in[4] < 1 || in[4] > KB_TMAP_MAX_RANK || !in[5])
        return -1;
    memset(o, 0, sizeof *o);
    o->rank = in[4];
    o->elem_bytes = in[5];
    o->swizzle_bytes = in[6] * 8u;
    o->oob_nan = in[7];
    memcpy(&o->base, in + 8, 8);
    o->strides[0] = o->elem_bytes;
    for (unsigned i = 0; i < KB_TMAP_MAX_RANK; i++) {
        memcpy(&o->dims[i], in + 16 + 8 * i, 8);
        if (i >= 1)
            memcpy(&o->strides[i], in + 56 + 8 * (i - 1), 8);
        o->box[i] = in[88 + i] + 1u;
        o->estride[i] = in[93 + i] + 1u;
    }
    return 0;
}
