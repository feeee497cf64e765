/* test_fake_cuda_tmap.c - the driver double's tensor maps (tests/fake_cuda/fake_cuda.h,
 * fake_tmap.c), driven directly, without kbench's validation in front: cuGetProcAddress's
 * documented answers, every documented rule of cuTensorMapEncodeTiled refused with
 * CUDA_ERROR_INVALID_VALUE, and a map reaching a kernel other than by value 64-byte aligned. */
#include "check.h"
#include "backend/cuda/cuda_api.h"
#include "../tests/fake_cuda/fake_cuda.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static kb_cuda_api api;
static CUcontext ctx;

/* The arguments of one cuTensorMapEncodeTiled call. */
typedef struct {
    CUtensorMapDataType dtype;
    cuuint32_t rank;
    uintptr_t address;
    cuuint64_t dim[5], stride[4];
    cuuint32_t box[5], estride[5];
    CUtensorMapInterleave il;
    CUtensorMapSwizzle sw;
    CUtensorMapL2promotion l2;
    CUtensorMapFloatOOBfill oob;
} args;

/* A bf16 64 x 64 tile of a 64 x 256 matrix, 128B swizzle: legal. */
static args good(void)
{
    args a = { CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, 0x10000, { 256, 64 }, { 512 }, { 64, 64 }, { 1, 1 },
               CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
               CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE };
    return a;
}

static CUresult encode_into(CUtensorMap *m, const args *a)
{
    return api.TensorMapEncodeTiled(m, a->dtype, a->rank, (void *)a->address, a->dim, a->stride, a->box, a->estride,
                                    a->il, a->sw, a->l2, a->oob);
}

static CUresult encode(const args *a)
{
    CUtensorMap m;
    return encode_into(&m, a);
}

/* Break rule k of the documentation in a; NULL past the last. */
static const char *break_rule(args *a, int k)
{
    switch (k) {
    case 0: a->address = 0x10008; return "globalAddress 16-byte aligned";
    case 1: a->stride[0] = 520; return "globalStrides a multiple of 16";
    case 2: a->stride[0] = 1ull << 40; return "globalStrides below 2^40";
    case 3: a->dim[1] = (1ull << 32) + 1; return "globalDim at most 2^32";
    case 4: a->dim[0] = 0; return "globalDim non-zero";
    case 5: a->box[1] = 257; return "boxDim at most 256";
    case 6: a->box[1] = 0; return "boxDim non-zero";
    case 7: a->box[0] = 4; a->sw = CU_TENSOR_MAP_SWIZZLE_NONE; return "boxDim[0] x 2 bytes a multiple of 16";
    case 8: a->sw = CU_TENSOR_MAP_SWIZZLE_64B; return "128-byte inner box over the 64B swizzle span";
    case 9: a->box[0] = 32; a->sw = CU_TENSOR_MAP_SWIZZLE_32B; return "64-byte inner box over the 32B span";
    case 10: a->estride[1] = 9; return "elementStrides at most 8";
    case 11: a->estride[0] = 0; return "elementStrides non-zero (kbench's 0 means 1; the driver's does not)";
    case 12: a->rank = 6; return "tensorRank at most 5";
    case 13: a->rank = 0; return "tensorRank non-zero";
    case 14: a->il = CU_TENSOR_MAP_INTERLEAVE_16B; return "tensorRank >= 3 with interleave";
    case 15: a->il = CU_TENSOR_MAP_INTERLEAVE_32B; a->rank = 3; a->dim[2] = 2; a->box[2] = 1; a->stride[1] = 65536;
             a->sw = CU_TENSOR_MAP_SWIZZLE_32B; a->address = 0x10010; return "globalAddress 32-byte aligned with 32B interleave";
    case 16: a->il = CU_TENSOR_MAP_INTERLEAVE_32B; a->rank = 3; a->dim[2] = 2; a->box[2] = 1; a->stride[1] = 65536;
             a->sw = CU_TENSOR_MAP_SWIZZLE_32B; a->stride[0] = 528; return "globalStrides multiples of 32 with 32B interleave";
    case 17: a->il = CU_TENSOR_MAP_INTERLEAVE_32B; a->rank = 3; a->dim[2] = 2; a->box[2] = 1; a->stride[1] = 65536;
             return "swizzle 32B with 32B interleave";
    case 18: a->dtype = (CUtensorMapDataType)16; return "tensorDataType a CUtensorMapDataType";
    case 19: a->sw = (CUtensorMapSwizzle)7; return "swizzle a CUtensorMapSwizzle";
    case 20: a->l2 = (CUtensorMapL2promotion)4; return "l2Promotion a CUtensorMapL2promotion";
    case 21: a->oob = (CUtensorMapFloatOOBfill)2; return "oobFill a CUtensorMapFloatOOBfill";
    case 22: a->il = (CUtensorMapInterleave)3; a->rank = 3; a->dim[2] = 2; a->box[2] = 1; a->stride[1] = 65536;
             return "interleave a CUtensorMapInterleave";
    case 23: a->dtype = CU_TENSOR_MAP_DATA_TYPE_INT32; a->box[0] = 32; a->oob = CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA;
             return "NaN fill only for a floating-point type";
    default: return NULL;
    }
}

static void test_init(void)
{
    CHECK(api.Init(0) == CUDA_SUCCESS);
    CHECK(api.DevicePrimaryCtxRetain(&ctx, 0) == CUDA_SUCCESS);
    CHECK(api.CtxSetCurrent(ctx) == CUDA_SUCCESS);
}

/* cuGetProcAddress as "Driver Entry Point Access" documents it. */
static void test_proc_address(void)
{
    void *p = NULL;
    CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
    CHECK(api.GetProcAddress != NULL);
    CHECK(api.GetProcAddress("cuTensorMapEncodeTiled", &p, 12000, 0, &st) == CUDA_SUCCESS);
    CHECK(p != NULL && st == CU_GET_PROC_ADDRESS_SUCCESS);
    memcpy(&api.TensorMapEncodeTiled, &p, sizeof p);
    /* a version older than the symbol's */
    CHECK(api.GetProcAddress("cuTensorMapEncodeTiled", &p, 11080, 0, &st) == CUDA_SUCCESS);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    /* a version newer than the driver's */
    CHECK(api.GetProcAddress("cuTensorMapEncodeTiled", &p, 13010, 0, &st) == CUDA_ERROR_INVALID_VALUE);
    CHECK(api.GetProcAddress("cuNoSuchThing", &p, 12000, 0, &st) == CUDA_SUCCESS);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(api.GetProcAddress("cuTensorMapEncodeTiled", &p, 12000, 1u << 5, &st) == CUDA_ERROR_INVALID_VALUE);
    /* a driver built without it, and one older than it */
    setenv("KBENCH_FAKE_CUDA_MISSING", "cuLaunchKernelEx,cuTensorMapEncodeTiled", 1);
    CHECK(api.GetProcAddress("cuTensorMapEncodeTiled", &p, 12000, 0, &st) == CUDA_SUCCESS);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    unsetenv("KBENCH_FAKE_CUDA_MISSING");
    setenv("KBENCH_FAKE_CUDA_DRIVER", "11080", 1);
    CHECK(api.GetProcAddress("cuTensorMapEncodeTiled", &p, 11080, 0, &st) == CUDA_SUCCESS);
    CHECK(p == NULL && st == CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    CHECK(api.GetProcAddress("cuLaunchKernelEx", &p, 11080, 0, &st) == CUDA_SUCCESS);
    CHECK(p != NULL && st == CU_GET_PROC_ADDRESS_SUCCESS);
    unsetenv("KBENCH_FAKE_CUDA_DRIVER");
}

/* A legal map is written as fake_tmap, every argument as given. */
static void test_encode_legal(void)
{
    if (!api.TensorMapEncodeTiled)
        return;
    args a = good();
    CUtensorMap m;
    memset(&m, 0xAB, sizeof m);
    CHECK(encode_into(&m, &a) == CUDA_SUCCESS);
    fake_tmap t;
    memcpy(&t, &m, sizeof t);
    CHECK(t.magic == FAKE_TMAP_MAGIC && t.address == 0x10000 && t.rank == 2 && t.dim[0] == 256 && t.dim[1] == 64);
    CHECK(t.stride[0] == 512 && t.box[0] == 64 && t.box[1] == 64 && t.estride[0] == 1 && t.estride[1] == 1);
    CHECK(t.dtype == CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 && t.swizzle == CU_TENSOR_MAP_SWIZZLE_128B && t.l2 == 2);
    CHECK(((unsigned char *)&m)[127] == 0);   /* the rest zero */
    /* the edges of each range are legal: 5 dims, box 256, element stride 8, 2^32 elements, interleave */
    a = good();
    a.dtype = CU_TENSOR_MAP_DATA_TYPE_UINT8, a.rank = 5, a.sw = CU_TENSOR_MAP_SWIZZLE_NONE;
    a.dim[0] = 1ull << 32, a.dim[2] = a.dim[3] = a.dim[4] = 2, a.box[0] = 256, a.box[2] = a.box[3] = a.box[4] = 1;
    a.stride[0] = (1ull << 40) - 16, a.stride[1] = a.stride[2] = a.stride[3] = 16;
    a.estride[1] = 8, a.estride[2] = a.estride[3] = a.estride[4] = 1;
    CHECK(encode(&a) == CUDA_SUCCESS);
    a = good();
    a.il = CU_TENSOR_MAP_INTERLEAVE_32B, a.rank = 3, a.dim[2] = 2, a.box[2] = 1, a.stride[1] = 65536;
    a.sw = CU_TENSOR_MAP_SWIZZLE_32B, a.box[0] = 4;   /* 8 bytes: interleave lifts the 16-byte inner box rule */
    a.estride[2] = 1;
    CHECK(encode(&a) == CUDA_SUCCESS);
}

/* Each documented rule broken once: CUDA_ERROR_INVALID_VALUE. */
static void test_encode_rules(void)
{
    if (!api.TensorMapEncodeTiled)
        return;
    for (int k = 0;; k++) {
        args a = good();
        const char *rule = break_rule(&a, k);
        if (!rule)
            break;
        CUresult r = encode(&a);
        CHECK_MSG(r == CUDA_ERROR_INVALID_VALUE, "rule %d (%s): %d", k, rule, (int)r);
    }
    /* the map itself 64-byte aligned */
    union { CUtensorMap m[2]; unsigned char b[2 * sizeof(CUtensorMap)]; } u;
    args a = good();
    CHECK(encode_into((CUtensorMap *)(u.b + 32), &a) == CUDA_ERROR_INVALID_VALUE);
    CHECK(encode_into((CUtensorMap *)(u.b + 64), &a) == CUDA_SUCCESS);
    CHECK(encode_into(NULL, &a) == CUDA_ERROR_INVALID_VALUE);
    /* what the double does not model, and a device without tensor maps */
    a.dtype = CU_TENSOR_MAP_DATA_TYPE_16U4_ALIGN8B;
    CHECK(encode(&a) == CUDA_ERROR_NOT_SUPPORTED);
    a = good();
    a.sw = CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B;
    CHECK(encode(&a) == CUDA_ERROR_NOT_SUPPORTED);
    a = good();
    setenv("KBENCH_FAKE_CUDA_ARCH", "80", 1);
    CHECK(encode(&a) == CUDA_ERROR_NOT_SUPPORTED);
    unsetenv("KBENCH_FAKE_CUDA_ARCH");
    CHECK(encode(&a) == CUDA_SUCCESS);
    /* a context first */
    CHECK(api.CtxSetCurrent(NULL) == CUDA_SUCCESS);
    CHECK(encode(&a) == CUDA_ERROR_INVALID_CONTEXT);
    CHECK(api.CtxSetCurrent(ctx) == CUDA_SUCCESS);
}

int main(void)
{
    const char *fake = getenv("KBENCH_FAKE_LIBCUDA");
    char err[512];
    if (!fake || access(fake, R_OK) != 0) {
        fprintf(stderr, "KBENCH_FAKE_LIBCUDA does not name the built driver double (run through ctest)\n");
        return 1;
    }
    setenv("KBENCH_LIBCUDA", fake, 1);
    if (kb_cuda_api_load(&api, err, sizeof err) != KB_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    RUN(test_init);
    RUN(test_proc_address);
    RUN(test_encode_legal);
    RUN(test_encode_rules);
    kb_cuda_api_unload(&api);
    TEST_MAIN_END();
}
