/* ceilings.h - a device's measured ceilings: the best ok result per device, kind and
 * timing clock of the ceiling family (kernels/ceiling.c, suites/ceilings.yaml) in the
 * results store, as the view `ceilings`:
 *
 *   device, device_uuid, device_id, kind ("copy", "read", "write", "fma/fp32", "mma/fp16",
 *   "mma/fp8e4m3/widened", "launch"), unit ("GB/s", "TFLOPS" - TOPS for int8 -,
 *   "launches/s"), value (the best), clock ("gpu" or "cpu": emulator figures are CPU
 *   figures), sm_clock_mhz (NVML's SM clock when it was measured; null without), run_id,
 *   time, case_id.
 *
 * A run loads its device's GPU ceilings into its peaks (the measured and path roofs of
 * engine/derive.h); `kbench devices` prints them.
 */
#ifndef KB_CEILINGS_H
#define KB_CEILINGS_H

#include <stdio.h>

#include "engine/peaks.h"

#define KB_CEILINGS_VIEW_SQL                                                                                      \
    "CREATE VIEW IF NOT EXISTS ceilings AS"                                                                       \
    " SELECT device, device_uuid, device_id, kind, unit, max(value) AS value, clock, sm_clock_mhz, run_id, time," \
    " case_id FROM (SELECT d.name AS device, d.uuid AS device_uuid, c.device_id,"                              \
    "  CASE WHEN c.variant IN ('copy', 'read', 'write', 'launch') THEN c.variant"                               \
    "   ELSE c.variant || '/' || c.dtype ||"                                                                      \
    "    CASE WHEN json_extract(c.params, '$.path') = 'widened' THEN '/widened' ELSE '' END END AS kind,"         \
    "  CASE WHEN c.variant IN ('copy', 'read', 'write') THEN 'GB/s'"                                            \
    "   WHEN c.variant = 'launch' THEN 'launches/s' ELSE 'TFLOPS' END AS unit,"                                 \
    "  CASE WHEN c.variant IN ('copy', 'read', 'write') THEN c.gbps"                                             \
    "   WHEN c.variant = 'launch' THEN 1e6 / c.median_us ELSE c.tflops END AS value,"                           \
    "  c.clock, json_extract(c.record, '$.telemetry.sm_clock_mhz') AS sm_clock_mhz, c.run_id, c.time, c.case_id" \
    "  FROM cases c JOIN devices d USING (device_id)"                                                             \
    "  WHERE c.family = 'ceiling' AND c.status = 'ok' AND c.median_us > 0)"                                     \
    " GROUP BY device_id, kind, clock;"

/* Add the GPU ceilings (clock "gpu") of device d found in the store at db_path to p
 * (kb_peaks_add_measured), with p->measured_note saying where they come from. Returns the
 * number of ceilings added; 0 when the store or a ceilings run of d is absent (not an
 * error: the measured roofs are then left out). */
int kb_ceilings_load(const char *db_path, const kb_device_info *d, kb_peaks *p);

/* Print the measured ceilings of device d in the store at db_path, each labelled with the
 * clock it was timed on (and the SM clock where NVML read one); CPU (emulator) figures say
 * so. Returns the number printed (0: none, and nothing is printed). */
int kb_ceilings_print(const char *db_path, const kb_device_info *d, FILE *out);

#endif /* KB_CEILINGS_H */
