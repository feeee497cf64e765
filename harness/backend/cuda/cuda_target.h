/* cuda_target.h - the architecture the cuda backend compiles for, and the NVRTC it compiles
 * with, chosen at init once the device is described (docs/gpu-readiness.md "Architectures").
 * Not for use outside backend/cuda/. */
#ifndef KB_CUDA_TARGET_H
#define KB_CUDA_TARGET_H

#include "backend/cuda/cuda_ctx.h"

/* After x->info describes the device (sm, name) and x->driver_version is known: select the
 * NVRTC whose CUBINs this driver loads, then x->info.target_sm: sm_override (--arch; 0: none)
 * when its CUBIN loads on the device and NVRTC compiles for it, else the first of the
 * device's defaults (core/arch.h kb_arch_defaults: sm_90a on a 9.0 device) that NVRTC
 * compiles for. Returns KB_OK (also when no NVRTC fits or compiles for any default: then
 * x->info.toolchain_unusable is set with the reason in toolchain_note, and run stops with
 * exit 3); KB_ERR_INPUT with the reason in x->err for an --arch the device cannot load or
 * NVRTC cannot compile; KB_ERR_SETUP for a device kbench has no target for. */
kb_status kb_cuda_choose_target(kb_backend_ctx *x, int sm_override);

#endif /* KB_CUDA_TARGET_H */
