/* fake_tmap.c - the driver double's tensor maps (contract: fake_cuda.h): cuGetProcAddress, the
 * entry-point table a CUDA 12.0+ driver resolves cuTensorMapEncodeTiled through, and
 * cuTensorMapEncodeTiled itself with every requirement its documentation lists.
 *
 * Written from the CUDA Driver API reference, "Tensor Map Object Management"
 * (docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TENSOR__MEMORY.html; the same text is the
 * doc comment of cuTensorMapEncodeTiled in CUDA 13.0's cuda.h) and "Driver Entry Point Access"
 * (cuGetProcAddress). Each check quotes the sentence it enforces. This file is independent of
 * kbench's own validation (harness/backend/tmap.c) on purpose: a rule kbench forgets is
 * refused here, as a real driver would refuse it. */
#include "fake_state.h"

#include <string.h>

_Static_assert(sizeof(fake_tmap) <= sizeof(CUtensorMap), "the double's map must fit a CUtensorMap");

/* ---- cuGetProcAddress ---- */

/* The entry points the table knows, with the CUDA version that introduced each. */
static const struct {
    const char *name;
    int since;
} procs[] = {
    { "cuTensorMapEncodeTiled", 12000 },
    { "cuLaunchKernelEx", 11080 },
};

static void proc_fn(const char *name, void **pfn)
{
    /* POSIX: a function pointer converts through void * (as dlsym's result does) */
    if (!strcmp(name, "cuTensorMapEncodeTiled")) {
        __typeof__(&cuTensorMapEncodeTiled) fn = cuTensorMapEncodeTiled;
        memcpy(pfn, &fn, sizeof *pfn);
    } else if (!strcmp(name, "cuLaunchKernelEx")) {
        __typeof__(&cuLaunchKernelEx) fn = cuLaunchKernelEx;
        memcpy(pfn, &fn, sizeof *pfn);
    }
}

/* cuda.h binds cuGetProcAddress to cuGetProcAddress_v2 (CUDA 12.0+), which this defines. */
CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                          CUdriverProcAddressQueryResult *symbolStatus)
{
    ENTER();
    if (!symbol || !pfn || (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM |
                                                  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        return CUDA_ERROR_INVALID_VALUE;
    /* "If the specified CUDA version is greater than the driver version, the API will return
     * CUDA_ERROR_INVALID_VALUE." */
    if (cudaVersion > driver())
        return CUDA_ERROR_INVALID_VALUE;
    /* "The API will return CUDA_SUCCESS and set the returned pfn to NULL if the requested driver
     * function is not supported ..." with symbolStatus SYMBOL_NOT_FOUND or VERSION_NOT_SUFFICIENT. */
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    *pfn = NULL;
    for (size_t i = 0; i < sizeof procs / sizeof procs[0]; i++) {
        if (strcmp(procs[i].name, symbol) || missing(symbol) || procs[i].since > driver())
            continue;
        if (cudaVersion < procs[i].since) {
            st = CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT;
        } else {
            st = CU_GET_PROC_ADDRESS_SUCCESS;
            proc_fn(symbol, pfn);
        }
    }
    if (symbolStatus)
        *symbolStatus = st;
    return CUDA_SUCCESS;
}

/* ---- cuTensorMapEncodeTiled ---- */

/* Bytes of one element of the unpacked CUtensorMapDataType values (the enum's comments). */
static unsigned elem_bytes(CUtensorMapDataType t)
{
    static const unsigned char bytes[] = { 1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4 };
    return (unsigned)t < sizeof bytes ? bytes[t] : 0;
}

/* The enum arguments. INVALID_VALUE out of range; NOT_SUPPORTED for what the double does not
 * model (the packed types and the 128B_ATOM swizzles, which kbench never encodes). */
static CUresult check_enums(CUtensorMapDataType t, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
                            CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
    /* "tensorDataType has to be an enum from CUtensorMapDataType"; "swizzle ... has to be of type
     * CUtensorMapSwizzle"; l2Promotion and oobFill "must be of type" their enums. */
    if ((unsigned)t > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B || (unsigned)il > CU_TENSOR_MAP_INTERLEAVE_32B ||
        (unsigned)sw > CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B || (unsigned)l2 > CU_TENSOR_MAP_L2_PROMOTION_L2_256B ||
        (unsigned)oob > CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA)
        return CUDA_ERROR_INVALID_VALUE;
    if (!elem_bytes(t) || (unsigned)sw > CU_TENSOR_MAP_SWIZZLE_128B)
        return CUDA_ERROR_NOT_SUPPORTED;
    /* "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA can only be used when tensorDataType
     * represents a floating-point data type" */
    if (oob == CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA && t < CU_TENSOR_MAP_DATA_TYPE_FLOAT16)
        return CUDA_ERROR_INVALID_VALUE;
    /* "When interleave is CU_TENSOR_MAP_INTERLEAVE_32B, swizzle must be CU_TENSOR_MAP_SWIZZLE_32B." */
    if (il == CU_TENSOR_MAP_INTERLEAVE_32B && sw != CU_TENSOR_MAP_SWIZZLE_32B)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* globalAddress, globalDim, globalStrides. */
static CUresult check_global(cuuint32_t rank, const void *addr, const cuuint64_t *dim, const cuuint64_t *stride,
                             CUtensorMapInterleave il)
{
    /* "globalAddress ... must be 16 byte aligned ... When interleave is CU_TENSOR_MAP_INTERLEAVE_32B,
     * globalAddress must be 32 byte aligned." */
    uint64_t align = il == CU_TENSOR_MAP_INTERLEAVE_32B ? 32 : 16;
    if ((uintptr_t)addr % align || !dim || (rank > 1 && !stride))
        return CUDA_ERROR_INVALID_VALUE;
    /* "globalDim array ... must be non-zero and less than or equal to 2^32" */
    for (cuuint32_t i = 0; i < rank; i++)
        if (dim[i] == 0 || dim[i] > (1ull << 32))
            return CUDA_ERROR_INVALID_VALUE;
    /* "globalStrides array ... of each of the lower tensorRank - 1 dimensions in bytes, must be a
     * multiple of 16 and less than 2^40 ... When interleave is CU_TENSOR_MAP_INTERLEAVE_32B, the
     * strides must be a multiple of 32." */
    for (cuuint32_t i = 0; i + 1 < rank; i++)
        if (stride[i] % align || stride[i] >= (1ull << 40))
            return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

/* boxDim, elementStrides, the swizzle's span. */
static CUresult check_box(cuuint32_t rank, const cuuint32_t *box, const cuuint32_t *estride, unsigned es,
                          CUtensorMapInterleave il, CUtensorMapSwizzle sw)
{
    if (!box || !estride)
        return CUDA_ERROR_INVALID_VALUE;
    for (cuuint32_t i = 0; i < rank; i++) {
        /* "boxDim array ... must be non-zero and less than or equal to 256" */
        if (box[i] == 0 || box[i] > 256)
            return CUDA_ERROR_INVALID_VALUE;
        /* "elementStrides array ... must be non-zero and less than or equal to 8" */
        if (estride[i] == 0 || estride[i] > 8)
            return CUDA_ERROR_INVALID_VALUE;
    }
    uint64_t inner = (uint64_t)box[0] * es;
    /* "When interleave is CU_TENSOR_MAP_INTERLEAVE_NONE, { boxDim[0] * elementSizeInBytes(
     * tensorDataType) } must be a multiple of 16 bytes." */
    if (il == CU_TENSOR_MAP_INTERLEAVE_NONE && inner % 16)
        return CUDA_ERROR_INVALID_VALUE;
    /* "When interleave is CU_TENSOR_MAP_INTERLEAVE_NONE and swizzle is not CU_TENSOR_MAP_SWIZZLE_NONE,
     * the bounding box inner dimension ... must be less than or equal to the swizzle size" (32, 64, 128). */
    uint64_t span = sw == CU_TENSOR_MAP_SWIZZLE_32B ? 32 : sw == CU_TENSOR_MAP_SWIZZLE_64B ? 64 : 128;
    if (il == CU_TENSOR_MAP_INTERLEAVE_NONE && sw != CU_TENSOR_MAP_SWIZZLE_NONE && inner > span)
        return CUDA_ERROR_INVALID_VALUE;
    return CUDA_SUCCESS;
}

CUresult cuTensorMapEncodeTiled(CUtensorMap *tensorMap, CUtensorMapDataType tensorDataType, cuuint32_t tensorRank,
                                void *globalAddress, const cuuint64_t *globalDim, const cuuint64_t *globalStrides,
                                const cuuint32_t *boxDim, const cuuint32_t *elementStrides,
                                CUtensorMapInterleave interleave, CUtensorMapSwizzle swizzle,
                                CUtensorMapL2promotion l2Promotion, CUtensorMapFloatOOBfill oobFill)
{
    NEED_CTX();
    /* "Tensor map objects are only supported on devices of compute capability 9.0 or higher." */
    if (arch() < 90)
        return CUDA_ERROR_NOT_SUPPORTED;
    /* "tensorMap address must be aligned to 64 bytes." */
    if (!tensorMap || (uintptr_t)tensorMap % 64)
        return CUDA_ERROR_INVALID_VALUE;
    /* "tensorRank must be non-zero and less than or equal to the maximum supported dimensionality
     * of 5. If interleave is not CU_TENSOR_MAP_INTERLEAVE_NONE, then tensorRank must additionally
     * be greater than or equal to 3." */
    if (tensorRank == 0 || tensorRank > 5 || (interleave != CU_TENSOR_MAP_INTERLEAVE_NONE && tensorRank < 3))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = check_enums(tensorDataType, interleave, swizzle, l2Promotion, oobFill);
    if (r == CUDA_SUCCESS)
        r = check_global(tensorRank, globalAddress, globalDim, globalStrides, interleave);
    if (r == CUDA_SUCCESS)
        r = check_box(tensorRank, boxDim, elementStrides, elem_bytes(tensorDataType), interleave, swizzle);
    if (r != CUDA_SUCCESS)
        return r;
    fake_tmap m;
    memset(&m, 0, sizeof m);
    m.magic = FAKE_TMAP_MAGIC;
    m.address = (uint64_t)(uintptr_t)globalAddress;
    for (cuuint32_t i = 0; i < tensorRank; i++) {
        m.dim[i] = globalDim[i];
        m.box[i] = (uint16_t)boxDim[i];
        m.estride[i] = (uint8_t)elementStrides[i];
        if (i + 1 < tensorRank)
            m.stride[i] = globalStrides[i];
    }
    m.dtype = (uint8_t)tensorDataType, m.rank = (uint8_t)tensorRank, m.interleave = (uint8_t)interleave;
    m.swizzle = (uint8_t)swizzle, m.l2 = (uint8_t)l2Promotion, m.oob = (uint8_t)oobFill;
    memset(tensorMap, 0, sizeof *tensorMap);
    memcpy(tensorMap, &m, sizeof m);
    return CUDA_SUCCESS;
}

/* ---- a launch given a map ---- */

CUresult tmap_param_fault(const fake_entry *e, void **params)
{
    for (int i = 0; i < e->n_params && i < FAKE_MAX_PARAMS; i++) {
        uint64_t head;
        if (e->param_size[i] < (int)sizeof head)
            continue;   /* a 4-byte parameter cannot hold a map's head: nothing to read it by */
        memcpy(&head, params[i], sizeof head);
        if (head != FAKE_TMAP_MAGIC)
            continue;
        /* The CUDA Programming Guide passes a map "as a const __grid_constant__ parameter" of
         * type CUtensorMap: 128 bytes by value. A pointer parameter receives the map's first
         * bytes as an address, which the kernel's TMA then dereferences. */
        if (e->param_size[i] != (int)sizeof(CUtensorMap))
            return CUDA_ERROR_ILLEGAL_ADDRESS;
        /* A map lives 64-byte aligned ("tensorMap address must be aligned to 64 bytes"; cuda.h
         * declares CUtensorMap alignas(64) in CUDA 12, alignas(128) in 13): a 128-byte parameter
         * of a type aligned less lands wherever the parameter buffer puts it. The address that
         * counts is the parameter's in constant bank 0 (fake_cubin.h: EIATTR_PARAM_CBANK). */
        if ((e->param_cbank + e->param_offset[i]) % 64)
            return CUDA_ERROR_MISALIGNED_ADDRESS;
    }
    return CUDA_SUCCESS;
}
