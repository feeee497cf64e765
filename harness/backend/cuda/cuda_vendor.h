/* cuda_vendor.h - the cuda backend's vendor library calls (backend.h, vendor_* slots):
 * cuBLASLt matmuls (cublaslt_plan.h) and cuDNN SDPA graphs (cudnn_sdpa.h) on the backend's
 * context and stream. Not for use outside backend/cuda/. */
#ifndef KB_CUDA_VENDOR_H
#define KB_CUDA_VENDOR_H

#include "backend/cuda/cuda_ctx.h"

/* Load cuBLASLt and cuDNN (neither is required): clear the device's KB_CAP_CUBLASLT /
 * KB_CAP_CUDNN for a library that does not load, and say in info.vendor_note what loaded
 * (with its version) or why not. Handles are created on first use. */
void kb_cuda_vendor_open(kb_backend_ctx *x);
/* Destroy the handles and unload the libraries; safe when nothing was opened. */
void kb_cuda_vendor_close(kb_backend_ctx *x);

kb_status kb_cuda_vendor_plan(kb_backend_ctx *x, const kb_vendor_op *op, kb_vendor_plan **out, kb_vendor_info *info);
kb_status kb_cuda_vendor_run(kb_backend_ctx *x, kb_vendor_plan *p);
void kb_cuda_vendor_free(kb_backend_ctx *x, kb_vendor_plan *p);

#endif /* KB_CUDA_VENDOR_H */
