/* prune.c - what the compile output says cannot run or spills (prune.h). */
#include "session/prune.h"

#include <stdio.h>

int kb_tune_prune(void *user, const kb_case *c, const kb_resources *res, char *why, size_t n)
{
    const kb_device_info *d = user;
    (void)c;
    if (!res)
        return 1;
    if (res->spill_store_bytes > 0 || res->spill_load_bytes > 0) {
        snprintf(why, n, "spills registers (%d bytes stored, %d loaded)", res->spill_store_bytes > 0 ? res->spill_store_bytes : 0,
                 res->spill_load_bytes > 0 ? res->spill_load_bytes : 0);
        return 0;
    }
    if (res->registers > 255) {
        snprintf(why, n, "%d registers per thread (at most 255)", res->registers);
        return 0;
    }
    if (d && d->max_shmem_per_block_optin > 0 && res->static_shmem_bytes > d->max_shmem_per_block_optin) {
        snprintf(why, n, "%d bytes of static shared memory (the block limit is %d)", res->static_shmem_bytes,
                 d->max_shmem_per_block_optin);
        return 0;
    }
    if (res->max_threads == 0) {
        snprintf(why, n, "no block size can be launched (max threads per block 0)");
        return 0;
    }
    return 1;
}
