/* tmap.h - a TMA tensor map, described neutrally on the host and validated once, by the rules
 * of the CUDA Driver API's cuTensorMapEncodeTiled ("Tensor Map Object Management"). A backend
 * with KB_CAP_TMA encodes it into the 128-byte, 64-byte aligned opaque map a kernel takes as
 * `const __grid_constant__ kb_tmap` (kernels/kb_tma.h): kb_backend_tmap_encode (backend.h).
 *
 * Fields map 1:1 onto cuTensorMapEncodeTiled(tensorMap, tensorDataType, tensorRank,
 * globalAddress, globalDim, globalStrides, boxDim, elementStrides, interleave, swizzle,
 * l2Promotion, oobFill):
 *   dtype        -> tensorDataType   (kb_tmap_dtype has CUtensorMapDataType's order and values)
 *   rank         -> tensorRank       1..5 (3..5 with interleave)
 *   base         -> globalAddress    device address
 *   dims[r]      -> globalDim        elements per dimension, innermost first
 *   strides[r-1] -> globalStrides    bytes between consecutive indices of dims 1..rank-1
 *                                    (dim 0 is contiguous: the driver takes rank-1 strides)
 *   box[r]       -> boxDim           elements the box spans per dimension
 *   elem_strides -> elementStrides   traversal step per dimension (1 = every element)
 *   interleave   -> interleave       (CUtensorMapInterleave values)
 *   swizzle      -> swizzle          (CUtensorMapSwizzle values)
 *   l2_promotion -> l2Promotion      (CUtensorMapL2promotion values)
 *   oob_fill     -> oobFill          (CUtensorMapFloatOOBfill values)
 * So the cuda backend's slot (backend/cuda/cuda_tmap.c) passes each field through unchanged
 * (elem_strides 0 as 1).
 */
#ifndef KB_TMAP_H
#define KB_TMAP_H

#include <stddef.h>
#include <stdint.h>

#define KB_TMAP_BYTES 128         /* sizeof(CUtensorMap) */
#define KB_TMAP_MAX_RANK 5

typedef enum {
    KB_TMAP_U8 = 0, KB_TMAP_U16, KB_TMAP_U32, KB_TMAP_I32, KB_TMAP_U64, KB_TMAP_I64,
    KB_TMAP_F16, KB_TMAP_F32, KB_TMAP_F64, KB_TMAP_BF16, KB_TMAP_F32_FTZ, KB_TMAP_TF32, KB_TMAP_TF32_FTZ,
    KB_TMAP_N_DTYPES
} kb_tmap_dtype;
typedef enum { KB_TMAP_INTERLEAVE_NONE = 0, KB_TMAP_INTERLEAVE_16B, KB_TMAP_INTERLEAVE_32B } kb_tmap_interleave;
typedef enum { KB_TMAP_SWIZZLE_NONE = 0, KB_TMAP_SWIZZLE_32B, KB_TMAP_SWIZZLE_64B, KB_TMAP_SWIZZLE_128B } kb_tmap_swizzle;
typedef enum { KB_TMAP_L2_NONE = 0, KB_TMAP_L2_64B, KB_TMAP_L2_128B, KB_TMAP_L2_256B } kb_tmap_l2;
typedef enum { KB_TMAP_OOB_ZERO = 0, KB_TMAP_OOB_NAN_REQUEST_ZERO_FMA } kb_tmap_oob;

typedef struct {
    kb_tmap_dtype dtype;
    unsigned rank;                         /* 1..5 */
    uint64_t base;                         /* device address of element (0, ..., 0) */
    uint64_t dims[KB_TMAP_MAX_RANK];       /* [elements] */
    uint64_t strides[KB_TMAP_MAX_RANK - 1];/* [bytes] of dims 1..rank-1 */
    uint32_t box[KB_TMAP_MAX_RANK];        /* [elements] */
    uint32_t elem_strides[KB_TMAP_MAX_RANK]; /* [elements] 1..8; 0 is taken as 1 */
    kb_tmap_interleave interleave;
    kb_tmap_swizzle swizzle;
    kb_tmap_l2 l2_promotion;
    kb_tmap_oob oob_fill;
} kb_tmap_desc;

/* Bytes of one element of t ("u8" is also how fp8 and int8 tensors are described); 0 unknown. */
size_t kb_tmap_elem_bytes(kb_tmap_dtype t);
/* The swizzle's span [bytes]: 0 (none), 32, 64, 128. */
unsigned kb_tmap_swizzle_bytes(kb_tmap_swizzle s);

/* Every documented requirement of cuTensorMapEncodeTiled on d. Returns 0 when d may be
 * encoded; -1 with the first broken rule in why (naming the field, its value and the rule). */
int kb_tmap_validate(const kb_tmap_desc *d, char *why, size_t whylen);

#endif /* KB_TMAP_H */
