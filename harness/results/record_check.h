/* record_check.h - the numbers of a record checked as it is read (issue 28): a record file
 * is user input (edited, cut, from another tool), and a report, a comparison or a roll-up
 * of nonsense numbers is worse than a refusal. Every numeric field a reader uses must be
 * finite and within its range when present (null, or absent, is always allowed):
 *   dims values          integers in [1, 2^40] (as a suite's), at most 16 of them
 *   pad                  an integer in [0, 4096]
 *   timing times [us]    median_us, mean_us, min_us, max_us, p10_us, p90_us and every
 *                        entry of samples_us / samples_start_us: numbers in [0, 1e15]
 *   timing.samples       an integer in [0, 1e9]; timing.cv a number in [0, 1e6]
 *   work [flops, bytes]  flops, bytes_read, bytes_written, bytes_moved: numbers in [0, 1e30]
 *   wall_ms, compile_ms, stage_ms.*   numbers in [0, 1e12]
 *   verify.n, verify.n_bad           integers in [0, 2^62]
 *   schema_version       an integer in [1, KB_RECORD_SCHEMA_VERSION]
 * Objects that are not kbench records are left to the readers that need one. */
#ifndef KB_RECORD_CHECK_H
#define KB_RECORD_CHECK_H

#include <jansson.h>

#include "core/kb.h"

/* Check the numeric fields of rec (above). KB_OK, or KB_ERR_INPUT with why = "FIELD: VALUE
 * is not ...; expected ..." (the caller adds file:line). */
kb_status kb_record_check(json_t *rec, kb_sb *why);

#endif /* KB_RECORD_CHECK_H */
