/* health.h - the NVML health tests of `kbench accept`, judged from one health reading of
 * the GPU (backend/health.h), taken right after the accept suite ran:
 *
 *   ecc        FAIL when an uncorrected (double-bit) ECC error was counted since the driver
 *              loaded (volatile), as DCGM's health watch does; the aggregate (lifetime) count
 *              is reported, not judged; WARN when ECC is disabled (memory errors are then
 *              neither corrected nor counted); PASS otherwise; SKIP when the volatile count
 *              cannot be read
 *   row_remap  FAIL when a page retirement or a row remapping is pending (the GPU needs a
 *              reset) or a row remapping ever failed (the board needs service); PASS
 *              otherwise, with the retired pages and remapped rows counted in the reason
 *   pcie_link  WARN when the link runs below the maximum generation or width of this GPU in
 *              this system ("gen 3 x8 of max gen 5 x16"); PASS otherwise
 * A value NVML cannot give (unsupported by the GPU, not exported by an older driver, no
 * permission, no NVML) leaves its test SKIP with NVML's error string, never PASS; a test
 * passes only on values that were read.
 */
#ifndef KB_ACCEPT_HEALTH_H
#define KB_ACCEPT_HEALTH_H

#include "accept/verdict.h"
#include "backend/health.h"

/* Judge ecc, row_remap and pcie_link of v from h, then recompute v's worst status. */
void kb_acc_verdict_health(const kb_health *h, kb_acc_verdict *v);

#endif /* KB_ACCEPT_HEALTH_H */
