/* emu_tmap.h - the emulator's own encoding of a tensor map (the 128 opaque bytes of a
 * CUtensorMap; backend/tmap.h describes the fields): written by the emu backend's tmap_encode
 * slot, read back by the TMA model (emu_tma.c) from the kernel's __grid_constant__ argument.
 * A magic word and a checksum let the model refuse bytes that are not such a map.
 */
#ifndef KB_EMU_TMAP_H
#define KB_EMU_TMAP_H

#include "backend/tmap.h"

/* The decoded map, as the TMA model uses it. */
typedef struct {
    unsigned rank;
    unsigned elem_bytes;
    uint64_t base;
    uint64_t dims[KB_TMAP_MAX_RANK];     /* [elements] */
    uint64_t strides[KB_TMAP_MAX_RANK];  /* [bytes], strides[0] = elem_bytes */
    uint32_t box[KB_TMAP_MAX_RANK];      /* [elements] */
    uint32_t estride[KB_TMAP_MAX_RANK];  /* [elements] 1..8 */
    unsigned swizzle_bytes;              /* 0, 32, 64, 128 */
    int oob_nan;                         /* OOB_NAN_REQUEST_ZERO_FMA: out-of-bounds elements are NaN */
} kb_emu_tmap;

/* Encode a validated d into out. 0; -1 with why for what the emulator does not model
 * (interleaved layouts). */
int kb_emu_tmap_encode(const kb_tmap_desc *d, unsigned char out[KB_TMAP_BYTES], char *why, size_t whylen);
/* Decode in. 0; -1 when the bytes are not a map kb_emu_tmap_encode wrote. */
int kb_emu_tmap_decode(const unsigned char in[KB_TMAP_BYTES], kb_emu_tmap *out);

#endif /* KB_EMU_TMAP_H */
