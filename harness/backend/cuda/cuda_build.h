/* cuda_build.h - the cuda backend's build slots: NVRTC compiles a kernel source for an
 * architecture of the table (core/arch.h) into the CUBIN (kb_backend_cuda) or the PTX
 * (kb_backend_cuda_ptx) file the compile cache asked for. NVRTC needs no driver, so these
 * accept a NULL context and work on any machine. Private to backend/cuda/. */
#ifndef KB_CUDA_BUILD_H
#define KB_CUDA_BUILD_H

#include "backend/backend.h"

/* The toolchain id for the compile cache's key: "nvrtc 13.0" (the NVRTC selected,
 * kb_nvrtc_lib_current), "nvrtc ?" when none loads. Thread-safe; never NULL. */
const char *kb_cuda_toolchain_id(kb_backend_ctx *x);

/* The build slot: compile req with NVRTC and write its CUBIN to out_path; the compiler log
 * is appended to log. KB_ERR_INPUT for a code the architecture table lacks, KB_ERR_IO when
 * the source cannot be read or out_path written, else kb_nvrtc_compile's status. */
kb_status kb_cuda_build(kb_backend_ctx *x, const kb_compile_req *req, const char *out_path, kb_sb *log);

/* The same, writing the module's PTX (text, no NUL) to out_path. */
kb_status kb_cuda_build_ptx(kb_backend_ctx *x, const kb_compile_req *req, const char *out_path, kb_sb *log);

#endif /* KB_CUDA_BUILD_H */
