/* valid.c - shared parameter legality checks (see valid.h). */
#include "engine/valid.h"

#include <stdio.h>

int kb_valid_block(int64_t block, char *why, size_t n)
{
    if (block >= 32 && block <= 1024 && block % 32 == 0)
        return 1;
    snprintf(why, n, "BLOCK=%lld: must be a multiple of 32 between 32 and 1024", (long long)block);
    return 0;
}

int kb_valid_vec(int64_t vec, kb_dtype dt, char *why, size_t n)
{
    if (vec != 1 && vec != 2 && vec != 4 && vec != 8) {
        snprintf(why, n, "VEC=%lld: must be 1, 2, 4 or 8", (long long)vec);
        return 0;
    }
    size_t bytes = (size_t)vec * kb_dtype_size(dt);
    if (bytes > 16) {
        snprintf(why, n, "VEC=%lld x %s = %zu bytes exceeds the 16-byte (128-bit) maximum vector access",
                 (long long)vec, kb_dtype_name(dt), bytes);
        return 0;
    }
    return 1;
}

int kb_valid_vendor(const kb_target *t, unsigned cap, const char *lib, const char *soname, const char *env,
                    char *why, size_t n)
{
    if (!(t->caps & KB_CAP_VENDOR_LIBS)) {
        snprintf(why, n, "%s needs a GPU", lib);
        return 0;
    }
    if (!(t->caps & cap)) {
        snprintf(why, n, "%s could not be loaded or does not fit this driver (%s): kbench devices says why; %s names "
                 "its path", lib, soname, env);
        return 0;
    }
    return 1;
}

int kb_valid_tma(const kb_target *t, char *why, size_t n)
{
    if (!kb_arch_has(t->sm, KB_PATH_TMA)) {
        snprintf(why, n, "TMA needs sm_90 or newer (cp.async.bulk.tensor); the target is %s", kb_arch_name(t->sm));
        return 0;
    }
    if (!(t->caps & KB_CAP_TMA)) {
        snprintf(why, n, "tensor maps cannot be encoded here (a driver without cuTensorMapEncodeTiled, CUDA 12.0+, "
                 "or a backend without KB_CAP_TMA): kbench devices says why");
        return 0;
    }
    return 1;
}
