/* verdict_io.h - the files `kbench accept` writes and `kbench fleet` reads.
 *
 * Verdict file (JSON), "schema": "kbench-accept", "schema_version": 1:
 *   time, kbench_version, backend,
 *   identity {launcher, rank, local_rank, node_id (-1 unknown), world_size (-1 unknown),
 *             job_id, step_id, host, cuda_visible_devices ("" unset)},
 *   gpu {name, uuid, pci_bus_id (CUDA's), serial (NVML's; null: not read), nvml_pci_bus_id
 *        (null: not read), sm, sm_count, emulator},
 *   health {available, why, values {ecc_mode, ecc_uncorrected_volatile, ...: number, null
 *           when not read}, unread {name: why}} (backend/health.h; absent without a reading),
 *   spec {name, sku, file, matched_by},
 *   gpu_thresholds_applied (false on the emulator: CPU timings), note,
 *   records (the JSON Lines records behind the verdict), check_records [the kernel check
 *   suites' records files, when they ran], verdict (PASS|WARN|FAIL: the worst test
 *   that ran; NOT CHECKED when none ran: exit 3), not_checked (why nothing was checked, null
 *   otherwise: no usable GPU, or every test SKIP), exit_code,
 *   tests [{name, status, unit, value (null: none), clock "gpu"|"cpu"|"", comparison
 *           ">="|"<="|"", threshold, reference, fraction (null where they do not apply),
 *           source, reason, case}]
 * Written atomically (a temporary file in the same directory, fsync, rename), so a
 * reader of a shared directory never sees half a file.
 *
 * JUnit XML: one <testsuite> per GPU (name "kbench.accept.<host>.<uuid>"), one <testcase>
 * per test; FAIL is <failure>, SKIP <skipped>, WARN passes with the reason in
 * <system-out>; a NOT CHECKED verdict adds a testcase "checked" holding an <error> (so a CI
 * that gates on JUnit does not pass a GPU nobody checked).
 */
#ifndef KB_ACCEPT_VERDICT_IO_H
#define KB_ACCEPT_VERDICT_IO_H

#include <jansson.h>
#include <stdio.h>

#include "accept/identity.h"
#include "accept/verdict.h"
#include "backend/backend.h"
#include "backend/health.h"

#define KB_ACC_SCHEMA "kbench-accept"
#define KB_ACC_SCHEMA_VERSION 1

/* Where a verdict came from. */
typedef struct {
    const kb_acc_identity *id;
    const kb_device_info *dev;
    const char *backend;        /* "cuda", "emu" */
    const kb_acc_spec *spec;
    const char *matched_by;     /* "pci device id", "--spec", "generic: ..." */
    const char *records;        /* the records file */
    const char *time;           /* ISO-8601 UTC */
    const char *const *checks;  /* the kernel check suites' records files (may be NULL) */
    int n_checks;
    const kb_health *health;    /* the NVML health reading (NULL: none) */
} kb_acc_context;

/* The verdict file's object (caller json_decref's); NULL when out of memory. */
json_t *kb_acc_verdict_json(const kb_acc_context *c, const kb_acc_verdict *v);

/* Write o to path by the output rule (core/output.h: a file atomically, a device or FIFO
 * through). KB_OK, or core/output.h's statuses (KB_ERR_INPUT, KB_ERR_SETUP, KB_ERR_OOM)
 * with "path: why" in err. */
kb_status kb_acc_write_json(const char *path, json_t *o, kb_sb *err);

/* JUnit XML of verdict objects (an array of kb_acc_verdict_json objects, or of fleet GPU
 * objects of the same shape) to out, under the <testsuites> name. KB_ERR_IO when the
 * stream fails. */
kb_status kb_acc_junit(FILE *out, json_t *verdicts, const char *name);

/* kb_acc_junit into path by the output rule (as kb_acc_write_json). */
kb_status kb_acc_junit_file(const char *path, json_t *verdicts, const char *name, kb_sb *err);

#endif /* KB_ACCEPT_VERDICT_IO_H */
