/* tunedb_key.h - the key a tuning-database row is measured under (tune/tunedb.h):
 * silicon, driver, toolchain (and the kernel source's hash, kept beside it), and the
 * emulator's own identity, which never takes the key of the GPU it compiles for.
 *
 *   a GPU        device = its name, sm = its compute capability x10, sm_count = its SMs,
 *                arch = sm; silicon "NAME|sm_90|132 SMs|81559 MiB|L2 51200 KiB|1980 MHz"
 *   the emulator device "kbench emulator (sm_90)", sm 0, sm_count 0 (no GPU), arch = its
 *                target (90), emulator (cpu_timing) 1; silicon "kbench emulator (sm_90)|"
 *                followed by the GPU-style string of its CPU device (name, target, workers,
 *                memory), so its timings stay apart per CPU and worker count
 */
#ifndef KB_TUNEDB_KEY_H
#define KB_TUNEDB_KEY_H

#include "backend/backend.h"
#include "tune/tunedb_types.h"

/* The key of device d with the backend's toolchain id. A device without a GPU timer (the
 * emulator) gets the emulator's identity. */
void kb_tune_key_make(const kb_device_info *d, const char *toolchain, kb_tune_key *out);

/* Give k, a key with a GPU-style silicon string and sm = the target arch (as kbench up to
 * schema 1 keyed the emulator), the emulator's identity: silicon prefixed, device named,
 * sm and sm_count 0, arch = the old sm, emulator 1. */
void kb_tune_key_to_emulator(kb_tune_key *k);

#endif /* KB_TUNEDB_KEY_H */
