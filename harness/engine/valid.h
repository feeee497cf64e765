/* valid.h - legality checks of the parameters many families share, so that every
 * family refuses an illegal BLOCK or VEC in the same words. */
#ifndef KB_VALID_H
#define KB_VALID_H

#include "engine/family.h"

/* Threads per block: a multiple of the warp size, 32..1024. 1 when legal; else 0 with
 * the reason in why. */
int kb_valid_block(int64_t block, char *why, size_t n);

/* Elements per vector access: 1, 2, 4 or 8, and at most 16 bytes (one 128-bit access)
 * of dtype. 1 when legal; else 0 with the reason in why. */
int kb_valid_vec(int64_t vec, kb_dtype dt, char *why, size_t n);

/* A variant that calls a vendor library (cap: KB_CAP_CUBLASLT or KB_CAP_CUDNN): refused on
 * a target that cannot run vendor libraries, "<lib> needs a GPU" (the emulator), and on a
 * GPU where the library did not load or does not fit the driver, "<lib> could not be loaded or
 * does not fit this driver (<soname>): kbench devices says why; <env> names its path". 1 when
 * it can run. */
int kb_valid_vendor(const kb_target *t, unsigned cap, const char *lib, const char *soname, const char *env,
                    char *why, size_t n);

/* A variant whose kernel takes tensor maps (TMA, cp.async.bulk.tensor): refused on a target
 * below sm_90, "TMA needs sm_90 or newer (cp.async.bulk.tensor); the target is sm_80", and on a
 * backend or device that cannot encode tensor maps (caps without KB_CAP_TMA: a device or driver
 * without them; `kbench devices` says which), before anything runs. 1 when it can run. */
int kb_valid_tma(const kb_target *t, char *why, size_t n);

#endif
