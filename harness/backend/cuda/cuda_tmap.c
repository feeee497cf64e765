/* cuda_tmap.c - tensor maps on the cuda backend (see cuda_tmap.h). */
#include "backend/cuda/cuda_tmap.h"

#include <stdio.h>
#include <string.h>

/* The CUDA version that introduced cuTensorMapEncodeTiled (the Driver API's "Tensor Map Object
 * Management" first appears in CUDA 12.0). */
#define KB_TMAP_SINCE 12000

_Static_assert(sizeof(CUtensorMap) == KB_TMAP_BYTES, "KB_TMAP_BYTES is sizeof(CUtensorMap)");

/* kb_tmap_desc's enums have the values of the driver's (tmap.h): check the ones kbench uses. */
_Static_assert((int)KB_TMAP_TF32_FTZ == (int)CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ &&
               (int)KB_TMAP_BF16 == (int)CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 &&
               (int)KB_TMAP_INTERLEAVE_32B == (int)CU_TENSOR_MAP_INTERLEAVE_32B &&
               (int)KB_TMAP_SWIZZLE_128B == (int)CU_TENSOR_MAP_SWIZZLE_128B &&
               (int)KB_TMAP_L2_256B == (int)CU_TENSOR_MAP_L2_PROMOTION_L2_256B &&
               (int)KB_TMAP_OOB_NAN_REQUEST_ZERO_FMA == (int)CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA,
               "kb_tmap_desc's enums must have the driver's values");

void kb_cuda_tmap_open(kb_backend_ctx *x)
{
    const kb_arch *dev = kb_arch_of_cc(x->info.sm);
    char why[200] = "";
    x->api.TensorMapEncodeTiled = NULL;
    if (!dev || !(dev->paths & KB_PATH_TMA)) {
        /* "Tensor map objects are only supported on devices of compute capability 9.0 or higher." */
        snprintf(why, sizeof why, "TMA needs compute capability 9.0 or newer; this device is %d.%d", x->info.sm / 10,
                 x->info.sm % 10);
    } else {
        kb_cuda_api_resolve(&x->api, x->driver_version, "cuTensorMapEncodeTiled", KB_TMAP_SINCE,
                            &x->api.TensorMapEncodeTiled, why, sizeof why);
    }
    x->tmap_why[0] = 0;
    if (!x->api.TensorMapEncodeTiled) {
        x->info.caps &= ~(unsigned)KB_CAP_TMA;
        snprintf(x->tmap_why, sizeof x->tmap_why, "cannot encode tensor maps: %s", why);
        snprintf(x->info.tma_note, sizeof x->info.tma_note, "none: %s", why);
    } else {
        snprintf(x->info.tma_note, sizeof x->info.tma_note, "cuTensorMapEncodeTiled (the driver's entry-point "
                 "table, CUDA %d.%d)", KB_TMAP_SINCE / 1000, KB_TMAP_SINCE % 1000 / 10);
    }
}

kb_status kb_cuda_tmap_encode(kb_backend_ctx *x, const kb_tmap_desc *d, unsigned char out[KB_TMAP_BYTES])
{
    if (!(x->info.caps & KB_CAP_TMA) || !x->api.TensorMapEncodeTiled) {
        snprintf(x->err, sizeof x->err, "cuda: %s", x->tmap_why[0] ? x->tmap_why : "tensor maps are unavailable");
        return KB_ERR_INPUT;
    }
    /* room for 8: a rank the validation refuses (the slot called past it) reads zeros, not the stack */
    cuuint64_t dims[8] = { 0 }, strides[8] = { 0 };
    cuuint32_t box[8] = { 0 }, estr[8] = { 0 };
    unsigned rank = d->rank <= KB_TMAP_MAX_RANK ? d->rank : KB_TMAP_MAX_RANK;
    for (unsigned i = 0; i < rank; i++) {
        dims[i] = d->dims[i];
        box[i] = d->box[i];
        estr[i] = d->elem_strides[i] ? d->elem_strides[i] : 1;   /* the driver takes 1..8; tmap.h: 0 is 1 */
        if (i + 1 < rank)
            strides[i] = d->strides[i];
    }
    /* "tensorMap address must be aligned to 64 bytes": CUtensorMap carries its own alignment */
    CUtensorMap map;
    kb_status st = CU(x, x->api.TensorMapEncodeTiled(&map, (CUtensorMapDataType)d->dtype, d->rank,
                                                      (void *)(uintptr_t)d->base, dims, strides, box, estr,
                                                      (CUtensorMapInterleave)d->interleave,
                                                      (CUtensorMapSwizzle)d->swizzle,
                                                      (CUtensorMapL2promotion)d->l2_promotion,
                                                      (CUtensorMapFloatOOBfill)d->oob_fill));
    if (st != KB_OK) {   /* kb_tmap_validate passed it: the driver knows a rule kbench does not */
        size_t len = strlen(x->err);
        snprintf(x->err + len, sizeof x->err - len, " (a tensor map backend/tmap.c accepted: a rule its validation "
                 "lacks)");
        return st;   /* CUDA_ERROR_INVALID_VALUE: KB_ERR_INTERNAL, a bug in kbench */
    }
    memcpy(out, &map, KB_TMAP_BYTES);
    return KB_OK;
}
