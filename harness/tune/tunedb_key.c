/* tunedb_key.c - the key of a tuning-database row (see tunedb_key.h). */
#include "tune/tunedb_key.h"

#include <stdio.h>
#include <string.h>

void kb_tune_key_to_emulator(kb_tune_key *k)
{
    char silicon[sizeof k->silicon];
    k->arch = k->sm;
    snprintf(k->device, sizeof k->device, "kbench emulator (sm_%d)", k->arch);
    snprintf(silicon, sizeof silicon, "%.40s|%.270s", k->device, k->silicon);
    memcpy(k->silicon, silicon, sizeof silicon);
    k->sm = 0;
    k->sm_count = 0;
    k->emulator = 1;
}

void kb_tune_key_make(const kb_device_info *d, const char *toolchain, kb_tune_key *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->device, sizeof out->device, "%s", d->name);
    out->sm = d->sm;
    out->arch = d->sm;
    out->sm_count = d->sm_count;
    snprintf(out->silicon, sizeof out->silicon, "%.200s|sm_%d|%d SMs|%llu MiB|L2 %d KiB|%d MHz", d->name, d->sm,
             d->sm_count, (unsigned long long)(d->total_mem_bytes >> 20), d->l2_bytes >> 10, d->clock_khz / 1000);
    if (d->driver_version > 0)
        snprintf(out->driver, sizeof out->driver, "%d.%d", d->driver_version / 1000, d->driver_version % 1000 / 10);
    else
        snprintf(out->driver, sizeof out->driver, "none");
    snprintf(out->toolchain, sizeof out->toolchain, "%s", toolchain ? toolchain : "");
    if (!(d->caps & KB_CAP_GPU_TIMER))
        kb_tune_key_to_emulator(out);
}
