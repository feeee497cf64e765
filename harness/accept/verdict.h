/* verdict.h - the acceptance verdict of one GPU: each test of spec.h judged from the
 * records an accept run wrote (results/record_json.h), against the spec's thresholds.
 * Pure: no I/O, no clock.
 *
 *   correctness        every case verified: FAIL when any case is wrong, faulted or failed
 *                      to compile/launch; PASS when at least one ran and none failed
 *   memory_bandwidth   best ok ceiling/copy GB/s >= reference x fraction
 *   gemm_<dtype>       best ok gemm TFLOPS (any variant: kbench's or cuBLASLt) >= ref x fraction
 *   launch_latency     ceiling/launch: per-execution time of back-to-back eager launches <= limit,
 *                      the host's enqueue time or the GPU's, the larger (kb_acc_launch_us)
 *   clocks             the gemm cases' telemetry: WARN when a reading was throttled (thermal or
 *                      hardware-slowdown reason, or SM clock under 75% of max), PASS otherwise
 *   ecc, row_remap, pcie_link  SKIP here; judged from an NVML health reading by
 *                      kb_acc_verdict_health (accept/health.h)
 * A test that cannot run is SKIP with its reason, never PASS. Timings of a CPU clock (the
 * emulator) are never compared with a GPU threshold: SKIP "emulator: CPU timings".
 */
#ifndef KB_ACCEPT_VERDICT_H
#define KB_ACCEPT_VERDICT_H

#include <jansson.h>

#include "accept/spec.h"
#include "engine/peaks.h"

/* A test's status, ordered by severity (SKIP counts only when nothing ran: see
 * kb_acc_verdict.worst). NOT_CHECKED is a verdict, never a test's status: nothing could be
 * checked (no usable GPU, or every test SKIP); it exits 3 and never reads as a pass. */
typedef enum {
    KB_ACC_PASS = 0,
    KB_ACC_SKIP,
    KB_ACC_WARN,
    KB_ACC_FAIL,
    KB_ACC_NOT_CHECKED,
    KB_ACC_STATUS_COUNT
} kb_acc_status;

const char *kb_acc_status_name(kb_acc_status s);     /* "PASS", "SKIP", "WARN", "FAIL", "NOT CHECKED" */
int kb_acc_status_parse(const char *s);              /* -1 when unknown */

typedef struct {
    kb_acc_status status;
    int have_value;
    double value;           /* [the test's unit] what the GPU reached (a CPU figure on the emulator) */
    char clock[8];          /* "gpu", "cpu" or "" : the timing clock behind value */
    int have_threshold;
    double threshold;       /* [unit] reference x fraction (FLOOR) or the limit (LIMIT) */
    double reference;       /* [unit] (FLOOR) */
    double fraction;        /* (FLOOR) */
    char source[256];       /* the reference's source, from the spec (or the peak used) */
    char reason[384];       /* why this status, in words */
    char detail[256];       /* the case behind the value, or the first failing case */
} kb_acc_result;

typedef struct {
    kb_acc_result r[KB_ACC_TEST_COUNT];
    int gpu_thresholds;     /* 1 when GPU thresholds were applied (a GPU clock); 0 on the emulator */
    kb_acc_status worst;    /* the worst of the tests that ran (FAIL > WARN > PASS); NOT_CHECKED when none ran */
    char not_checked[768];  /* why nothing was checked ("no usable GPU: ..."); "" otherwise */
} kb_acc_verdict;

/* Judge the records (a JSON array of record objects) of one GPU against spec s. peaks
 * (may be NULL) give the references of `reference: peak`. */
void kb_acc_evaluate(const kb_acc_spec *s, const kb_peaks *peaks, json_t *records, kb_acc_verdict *out);

/* What one execution of a record's case costs when launched back to back [us], from its
 * launch_overhead block: the larger of the host's enqueue time (host_enqueue_us x launches)
 * and the GPU's (eager_us; behind the blocking kernel the windows hold GPU time only, so a
 * slow host shows in the first alone). NAN when the block has neither. */
double kb_acc_launch_us(json_t *launch_overhead);

/* The verdict of a GPU that could not be checked at all (no usable GPU: no driver, no
 * device, no toolchain that fits the driver): every test SKIP with why, worst NOT_CHECKED,
 * out->not_checked = why. Nothing ran, so nothing passes. */
void kb_acc_verdict_not_checked(const char *why, kb_acc_verdict *out);

/* Recompute out->worst and out->gpu_thresholds from the tests' results (after a test
 * was judged again, e.g. by kb_acc_verdict_health). */
void kb_acc_verdict_finish(kb_acc_verdict *out);

/* The tests whose FAIL means wrong results or a hardware error (correctness, ecc,
 * row_remap, pcie_link), as opposed to a performance floor: 1 or 0. */
int kb_acc_test_is_health(kb_acc_test t);

/* The process exit code of a set of test statuses (status[i] for test i; n tests):
 * KB_EXIT_INCORRECT when a health test failed, else KB_EXIT_SLOW when a performance
 * test failed, else KB_EXIT_SETUP when every test was SKIP (NOT CHECKED), else 0. */
int kb_acc_exit_code(const kb_acc_status *status, const kb_acc_test *test, int n);

#endif /* KB_ACCEPT_VERDICT_H */
