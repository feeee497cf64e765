/* tmap.c - the tensor-map description and its one validation (see tmap.h). The rules are
 * cuTensorMapEncodeTiled's, as the CUDA Driver API documents them ("Tensor Map Object
 * Management"); each message names the field and the rule. */
#include "backend/tmap.h"

#include <stdio.h>

size_t kb_tmap_elem_bytes(kb_tmap_dtype t)
{
    static const unsigned char bytes[KB_TMAP_N_DTYPES] = { 1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4 };
    return (unsigned)t < KB_TMAP_N_DTYPES ? bytes[t] : 0;
}

unsigned kb_tmap_swizzle_bytes(kb_tmap_swizzle s)
{
    return s == KB_TMAP_SWIZZLE_32B ? 32 : s == KB_TMAP_SWIZZLE_64B ? 64 : s == KB_TMAP_SWIZZLE_128B ? 128 : 0;
}

#define WHY(...) (snprintf(why, whylen, __VA_ARGS__), -1)

/* The enum fields and the rank. */
static int check_kinds(const kb_tmap_desc *d, char *why, size_t whylen)
{
    if (!kb_tmap_elem_bytes(d->dtype))
        return WHY("tensor map: dtype %d is not a CUtensorMapDataType", (int)d->dtype);
    if ((unsigned)d->interleave > KB_TMAP_INTERLEAVE_32B || (unsigned)d->swizzle > KB_TMAP_SWIZZLE_128B ||
        (unsigned)d->l2_promotion > KB_TMAP_L2_256B || (unsigned)d->oob_fill > KB_TMAP_OOB_NAN_REQUEST_ZERO_FMA)
        return WHY("tensor map: interleave %d, swizzle %d, l2 promotion %d or oob fill %d out of range",
                   (int)d->interleave, (int)d->swizzle, (int)d->l2_promotion, (int)d->oob_fill);
    if (d->rank < 1 || d->rank > KB_TMAP_MAX_RANK)
        return WHY("tensor map: rank %u, tensorRank must be 1..5", d->rank);
    if (d->interleave != KB_TMAP_INTERLEAVE_NONE && d->rank < 3)
        return WHY("tensor map: rank %u with interleave, tensorRank must be at least 3 when interleave is used",
                   d->rank);
    int is_float = d->dtype >= KB_TMAP_F16;
    if (d->oob_fill == KB_TMAP_OOB_NAN_REQUEST_ZERO_FMA && !is_float)
        return WHY("tensor map: oob fill NAN_REQUEST_ZERO_FMA needs a floating-point dtype");
    return 0;
}

/* globalAddress, globalDim, globalStrides. */
static int check_global(const kb_tmap_desc *d, char *why, size_t whylen)
{
    unsigned align = d->interleave == KB_TMAP_INTERLEAVE_32B ? 32 : 16;
    if (d->base % align)
        return WHY("tensor map: global address 0x%llx not %u-byte aligned (globalAddress: 16 bytes, 32 with "
                   "32-byte interleave)", (unsigned long long)d->base, align);
    for (unsigned i = 0; i < d->rank; i++)
        if (d->dims[i] == 0 || d->dims[i] > (1ull << 32))
            return WHY("tensor map: dims[%u] = %llu, globalDim must be in 1..2^32", i, (unsigned long long)d->dims[i]);
    for (unsigned i = 0; i + 1 < d->rank; i++) {
        if (d->strides[i] % align)
            return WHY("tensor map: strides[%u] = %llu bytes, globalStrides must be a multiple of %u", i,
                       (unsigned long long)d->strides[i], align);
        if (d->strides[i] >= (1ull << 40))
            return WHY("tensor map: strides[%u] = %llu bytes, globalStrides must be below 2^40", i,
                       (unsigned long long)d->strides[i]);
    }
    return 0;
}

/* boxDim, elementStrides and the swizzle's span. */
static int check_box(const kb_tmap_desc *d, char *why, size_t whylen)
{
    size_t es = kb_tmap_elem_bytes(d->dtype);
    for (unsigned i = 0; i < d->rank; i++) {
        if (d->box[i] == 0 || d->box[i] > 256)
            return WHY("tensor map: box[%u] = %u, boxDim must be in 1..256", i, d->box[i]);
        unsigned e = d->elem_strides[i] ? d->elem_strides[i] : 1;
        if (e > 8)
            return WHY("tensor map: elem_strides[%u] = %u, elementStrides must be in 1..8", i, e);
    }
    size_t inner = d->box[0] * es;
    if (d->interleave == KB_TMAP_INTERLEAVE_NONE && inner % 16)
        return WHY("tensor map: inner box of %zu bytes (box[0] %u x %zu), boxDim[0] * element size must be a "
                   "multiple of 16 bytes", inner, d->box[0], es);
    unsigned span = kb_tmap_swizzle_bytes(d->swizzle);
    if (d->interleave == KB_TMAP_INTERLEAVE_NONE && span && inner > span)
        return WHY("tensor map: inner box of %zu bytes exceeds the %u-byte swizzle span (boxDim[0] * element size "
                   "must be at most the swizzle size)", inner, span);
    if (d->interleave == KB_TMAP_INTERLEAVE_32B && d->swizzle != KB_TMAP_SWIZZLE_32B)
        return WHY("tensor map: swizzle %d with 32-byte interleave, swizzle must be 32B when interleave is 32B",
                   (int)d->swizzle);
    return 0;
}

int kb_tmap_validate(const kb_tmap_desc *d, char *why, size_t whylen)
{
    if (check_kinds(d, why, whylen) || check_global(d, why, whylen) || check_box(d, why, whylen))
        return -1;
    return 0;
}
