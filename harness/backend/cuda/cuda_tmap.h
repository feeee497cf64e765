/* cuda_tmap.h - tensor maps on the cuda backend: cuTensorMapEncodeTiled (Driver API, "Tensor
 * Map Object Management"), resolved through the driver's entry-point table (cuGetProcAddress,
 * CUDA 12.0+), encoding the neutral description of backend/tmap.h into the 128-byte CUtensorMap
 * a TMA kernel takes as `const __grid_constant__ kb_tmap` (kernels/kb_tma.h). Not for use
 * outside backend/cuda/. Written from NVIDIA's documentation; no GPU has run it. */
#ifndef KB_CUDA_TMAP_H
#define KB_CUDA_TMAP_H

#include "backend/cuda/cuda_ctx.h"

/* Decide whether this device and driver can encode tensor maps, after the device is described
 * (x->info.sm, x->driver_version): a device of compute capability 9.0 or newer (the TMA path of
 * core/arch.h) and a driver whose entry-point table has cuTensorMapEncodeTiled. Otherwise
 * KB_CAP_TMA is dropped from x->info.caps and the reason is kept (x->tmap_why) and shown
 * (x->info.tma_note). Never fails: a device without TMA is still a device. */
void kb_cuda_tmap_open(kb_backend_ctx *x);

/* The tmap_encode slot (backend.h): d (validated by kb_tmap_validate) encoded by the driver
 * into out. KB_ERR_INPUT with the reason in x->err where the device has no TMA (the reason
 * kb_cuda_tmap_open found); a driver's refusal of a map kbench's validation passed is
 * KB_ERR_INTERNAL (a rule backend/tmap.c lacks), with the driver's error. */
kb_status kb_cuda_tmap_encode(kb_backend_ctx *x, const kb_tmap_desc *d, unsigned char out[KB_TMAP_BYTES]);

#endif /* KB_CUDA_TMAP_H */
