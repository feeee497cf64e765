/* export.h - deployment files from the tuning database's choices (tunedb.h).
 *
 *   json         {"kbench_tuning": 1, "choices": [{problem, family, op, dtype, dims, pad,
 *                launch, variant, params {...}, case_id, median_us, interval_us [lo, hi],
 *                confidence "clear"|"tie"|"noise", within_noise, runners_up, timing "gpu"|"cpu",
 *                emulator, gpu {name, sm, sm_count, silicon}, driver, toolchain,
 *                source_hash, strategy, evaluations, space, time}, ...]}
 *   header       a C header: a table of kbench_tuned entries grouped per GPU (compute
 *                capability, SM count), provenance in comments and fields, and
 *                kbench_tuned_lookup(op, dtype, dims, n_dims, sm, sm_count, flags, &match):
 *                the exact shape, else the nearest tuned one within
 *                KBENCH_TUNED_MAX_SHAPE_DISTANCE (1.0; else NULL, match saying how far the
 *                nearest was); the same sm first, nearest SM count; any GPU as the default;
 *                emulator entries (cpu_timing) only with KBENCH_TUNED_ALLOW_CPU
 *   kerneltuner  Kernel Tuner's cache file for one problem: schema_version, device_name,
 *                kernel_name, problem_size, tune_params_keys, tune_params, objective "time",
 *                cache {"v1,v2,...": {params..., time [ms] or "InvalidConfig" /
 *                "CompilationFailedConfig" / "RuntimeFailedConfig"}} - the winner's variant
 *                only (a Kernel Tuner kernel is one kernel)
 * Rows measured on the emulator carry their CPU label in every format. Everything is read
 * from the rows' typed fields (tune/tunedb_types.h): no id is parsed here. A problem
 * without a winner (verdict noise, winner.h) is never a choice: in JSON its variant and
 * params are null (the leader in leader_variant and leader_params, "no_winner" says why),
 * in the header a comment; a header of nothing but such problems is refused
 * (KB_ERR_INPUT; no rows at all: an empty table).
 */
#ifndef KB_TUNE_EXPORT_H
#define KB_TUNE_EXPORT_H

#include "tune/tunedb.h"

#include <stdio.h>

/* Write rows[0..n) in the format. KB_OK, or KB_ERR_IO for a write error (message in err). */
kb_status kb_tune_export_json(const kb_tune_choice_row *rows, int n, FILE *out, kb_sb *err);
kb_status kb_tune_export_header(const kb_tune_choice_row *rows, int n, FILE *out, kb_sb *err);
/* Kernel Tuner's cache of one problem: its choice c and entries e[0..n). */
kb_status kb_tune_export_kerneltuner(const kb_tune_choice_row *c, const kb_tune_entry *e, int n, FILE *out,
                                     kb_sb *err);

#endif /* KB_TUNE_EXPORT_H */
