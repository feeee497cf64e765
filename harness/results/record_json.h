/* record_json.h - the record format: one JSON object per case, built from the typed
 * case result by a pure serialiser (no clock read, no I/O), and the few readers the
 * reports share. The JSON Lines file (record.h) and the SQLite store (store.h) both take
 * the one object kb_record_json builds for a case.
 *
 * Record, schema_version 1 (units in the field names; absent blocks are null):
 *   schema_version, run_id, suite (the suite's name), time (ISO-8601 UTC,
 *   "2026-01-31T12:00:00Z"), case_id,
 *   family, variant, dtype, dims {<dim name>: n}, params {<param name>: int or choice
 *   name; only params that apply to the variant}, pad, launch, seed, check_shape,
 *   shape (the suite's shape preset the dims come from, "qkv_prefill"; null for inline dims),
 *   backend, device {name, uuid, pci_bus_id, sm (the device's own compute capability x10),
 *   emulator, target_sm (the compute capability the kernels were compiled for: --arch,
 *   else sm) and target_arch (its name in the architecture table: "sm_90a", "sm_100"),
 *   driver_version (cuDriverGetVersion, e.g. 13000; null on the emulator)},
 *   status (a kb_case_status name: "ok", "skipped", "compile_error", "launch_error",
 *   "input_error", "wrong", "fault", "timeout"), error (kb_status_name of the error code
 *   behind it), reason,
 *   vendor {library "cuBLASLt"|"cuDNN", version, candidates, workspace_bytes, engine,
 *   algo (the cublasLtMatmulAlgo_t as 8 hex words "w0:w1:...:w7", replayable with the same
 *   library version; backend/cuda/cublaslt.h parses it), algo_id, tile, stages, splitk,
 *   reduction, swizzle, custom (its CUBLASLT_ALGO_CONFIG_* values), waves} (null for
 *   kbench's own kernels),
 *   constants {name: number} (what the result depends on beyond the inputs: gemm alpha,
 *   beta, scale_a, scale_b (fp8 per-tensor scales, else 1); attention scale; layernorm eps;
 *   null when the family names none),
 *   verify {n, n_bad, first_bad, max_abs_err, max_rel_err, max_err_ratio, atol, rtol,
 *   got_at_bad, want_at_bad, guard_bad (bytes of the output's padding written)},
 *   accuracy {n (elements compared, where both are finite), rel_fro_err (||D - T||_F / ||T||_F),
 *   max_rel_err (max |D - T| / max |T|), snr_db (10 log10(sum T^2 / sum (D - T)^2); null when
 *   D equals T), reference} - the output D against T, the fp64 result of the unquantised
 *   real-valued inputs: what the precision costs, reported, never a pass/fail (gemm; null
 *   for families that do not measure it),
 *   resources {registers, spill_store_bytes, spill_load_bytes,
 *   stack_bytes, static_shmem_bytes, max_threads; null where unknown},
 *   timing {clock "cpu"|"gpu", timing_method (how the window was timed: "cuda events behind a
 *   blocking kernel", "cuda events (no blocking kernel: why)", ...), samples, median_us, mean_us, min_us, max_us, p10_us,
 *   p90_us, cv, noise, timed_out, l2 "cold"|"hot", flush_bytes, stop
 *   "noise"|"timeout"|"max_samples", discarded (samples dropped: the SM clock read after them
 *   was under throttle_threshold, default 75%, of the clock the GPU should run at),
 *   throttled_samples (samples taken throttled), throttled (true: at the timeout the throttled
 *   samples were kept, discarded is then 0), sm_clock_ref_mhz (that clock: the maximum, or the
 *   locked/application clock the user set; null where none is read), sm_clock_min_mhz,
 *   sm_clock_max_mhz (over the unthrottled samples; null where no clock is read per sample),
 *   samples_us [...], samples_start_us [...]
 *   (when each kept sample's timer was started: [us] after the measure stage began, host
 *   monotonic clock)},
 *   work {flops, bytes_read, bytes_written, bytes_moved (what this variant moves:
 *   read + written unless the family's work model says more)}, derived {clock, tflops,
 *   gbps, ai, bound "compute"|"memory", roof_tflops, pct_roof, peak_tflops, peak_gbps,
 *   peak_source "datasheet"|"clock", measured_gbps, measured_roof_tflops, pct_measured,
 *   measured_source "measured"|"measured bandwidth, datasheet compute", path (the
 *   instruction path, e.g. "mma/fp8e4m3/widened"; named on the emulator too), path_tflops,
 *   pct_path, path_source "measured"|"datasheet"|"clock"; see engine/derive.h: roofline
 *   fields null without a GPU peak, the measured ones without a ceilings run}, launch_overhead {n, launches, eager_us, graph_us, per_launch_us,
 *   empty_eager_us, empty_graph_us, host_enqueue_us, clock, reps (each figure a median of),
 *   per_launch_q1_us, per_launch_q3_us, empty_n (floor launches per window), null_reason
 *   (why per_launch_us is null: too few executions per window)}, telemetry {available,
 *   sm_clock_mhz, sm_clock_max_mhz, mem_clock_mhz, power_w, temperature_c, reasons
 *   [names], throttled} or {available: false, why}, compile_ms, wall_ms,
 *   stage_ms {valid, compile, setup, verify, measure, derive, overhead, telemetry: [ms]
 *   spent in each stage that ran},
 *   compile_log (a longer log keeps its first 3/4 and last 1/4 of KB_RECORD_LOG_MAX
 *   bytes around a "[... N bytes cut ...]" line: first errors and final summaries).
 * JSON has no NaN or infinity: a non-finite number is written as null, except
 * got_at_bad / want_at_bad, written as the strings "nan", "inf", "-inf" (a NaN output
 * is the usual reason a case is wrong, so it is worth keeping). Strings that are not
 * valid UTF-8 (compiler logs) have the offending bytes replaced by '?'.
 */
#ifndef KB_RECORD_JSON_H
#define KB_RECORD_JSON_H

#include <jansson.h>

#include "engine/case.h"

#define KB_RECORD_SCHEMA_VERSION 1
#define KB_RECORD_LOG_MAX 4096   /* [bytes] of compile log kept in a record */

/* Who produced a record and when: passed in, so that the serialiser is pure. */
typedef struct {
    const char *run_id;
    const char *suite;           /* the suite's name (NULL: null) */
    const char *time;            /* ISO-8601 UTC (kb_record_time_now) */
    const char *backend;         /* "cuda", "emu" */
    const kb_device_info *dev;   /* NULL: device null */
    const char *shape;           /* the case's named shape preset ("qkv_prefill"), NULL: inline dims */
} kb_record_ctx;

/* The current UTC time as "2026-01-31T12:00:00Z". */
void kb_record_time_now(char out[32]);

/* The record of result r as a new JSON object (caller json_decref's). NULL only when
 * out of memory. */
json_t *kb_record_json(const kb_record_ctx *ctx, const kb_case_result *r);

/* The derived rates of a record: its "derived" block when present, else derived here
 * from its "work" and "timing" blocks without ceilings (records written before the
 * block existed). Returns 1 when out holds rates, 0 when the record has none. */
int kb_record_derived(json_t *rec, kb_derived *out);

/* The status of a record (its "status" word); -1 when absent or not a known word. */
int kb_record_status(json_t *rec, kb_case_status *out);

#endif /* KB_RECORD_JSON_H */
