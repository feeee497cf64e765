/* nvtx.h - named NVTX ranges around each case, so `nsys profile kbench run ...` shows
 * which case every kernel belongs to.
 *
 * Built on the CUDA Toolkit's header-only NVTX v3 (nvtx3/nvToolsExt.h): without a
 * profiler attached (no NVTX_INJECTION64_PATH) each call is a cheap no-op and nothing
 * is linked or loaded. Ranges nest; push and pop must pair on the same thread.
 */
#ifndef KB_NVTX_H
#define KB_NVTX_H

/* Open a range named name (the case id; copied by NVTX). NULL is treated as "". */
void kb_nvtx_push(const char *name);
/* Close the innermost open range of this thread. */
void kb_nvtx_pop(void);

#endif /* KB_NVTX_H */
