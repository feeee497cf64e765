/* cuda_vendor.h - the cuda backend's vendor library calls (backend.h, vendor_* slots):
 * cuBLASLt matmuls (cublaslt_plan.h) and cuDNN SDPA graphs (cudnn_sdpa.h) on the backend's
 * context and stream. Not for use outside backend/cuda/. */
#ifndef KB_CUDA_VENDOR_H
#define KB_CUDA_VENDOR_H

#include "backend/cuda/cuda_ctx.h"

/* Load cuBLASLt and cuDNN (neither is required): clear the device's KB_CAP_CUBLASLT /
 * KB_CAP_CUDNN for a library that does not load, is not cuBLASLt 13 (kbench's header), or
 * links a CUDA runtime this driver does not run (cublasLtGetCudartVersion /
 * cudnnGetCudartVersion against cuDriverGetVersion, the rule of kb_nvrtc_fits), and say in
 * info.vendor_note what loaded (with its version) or why not. Handles are created on first
 * use; a handle that cannot be created makes every case of its library skipped with the
 * library's words (vendor_plan: KB_ERR_INPUT), never a failure of the case. */
void kb_cuda_vendor_open(kb_backend_ctx *x);
/* Destroy the handles and unload the libraries; safe when nothing was opened. */
void kb_cuda_vendor_close(kb_backend_ctx *x);

kb_status kb_cuda_vendor_plan(kb_backend_ctx *x, const kb_vendor_op *op, kb_vendor_plan **out, kb_vendor_info *info);
kb_status kb_cuda_vendor_run(kb_backend_ctx *x, kb_vendor_plan *p);
void kb_cuda_vendor_free(kb_backend_ctx *x, kb_vendor_plan *p);

#endif /* KB_CUDA_VENDOR_H */
