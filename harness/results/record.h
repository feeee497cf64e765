/* record.h - the results stream: one JSON object per case in a JSON Lines file.
 *
 * Crash safety: each record is one line written with a single write() on an O_APPEND
 * descriptor and made durable (fsync) before kb_record_write returns, so a crash or
 * Ctrl-C loses nothing that finished. A crash in the middle of a write can leave only
 * a truncated last line: kb_record_load skips it with a warning, and kb_record_open
 * cuts it off before appending. Writers serialise on an flock of the file, so several
 * processes may append to the same file.
 *
 * Record, schema_version 1 (units in the field names; absent blocks are null):
 *   schema_version, run_id, time (ISO-8601 UTC, "2026-01-31T12:00:00Z"), case_id,
 *   family, variant, dtype, dims {<dim name>: n}, params {<param name>: int or choice
 *   name; only params that apply to the variant}, pad, launch, seed, check_shape,
 *   backend, device {name, uuid, pci_bus_id, sm, emulator},
 *   status ("ok", "skipped", "compile_error", "launch_error", "input_error", "wrong", "fault",
 *   "timeout"), error (kb_status_name of the status code), reason,
 *   verify {n, n_bad, first_bad, max_abs_err, max_rel_err, atol, rtol, got_at_bad,
 *   want_at_bad}, resources {registers, spill_store_bytes, spill_load_bytes,
 *   stack_bytes, static_shmem_bytes, max_threads; null where unknown},
 *   timing {clock "cpu"|"gpu", samples, median_us, mean_us, min_us, max_us, p10_us,
 *   p90_us, cv, noise, timed_out, samples_us [...]},
 *   work {flops, bytes_read, bytes_written, bytes_moved (what this variant moves:
 *   read + written unless the family's work model says more)}, derived {clock, tflops,
 *   gbps, ai, bound "compute"|"memory", roof_tflops, pct_roof, peak_tflops, peak_gbps,
 *   peak_source "datasheet"|"clock"; see derive.h: roofline fields null without a GPU
 *   peak}, compile_ms, wall_ms,
 *   compile_log (a longer log keeps its first 3/4 and last 1/4 of KB_RECORD_LOG_MAX
 *   bytes around a "[... N bytes cut ...]" line: first errors and final summaries).
 * JSON has no NaN or infinity: a non-finite number is written as null, except
 * got_at_bad / want_at_bad, written as the strings "nan", "inf", "-inf" (a NaN output
 * is the usual reason a case is wrong, so it is worth keeping). Strings that are not
 * valid UTF-8 (compiler logs) have the offending bytes replaced by '?'.
 */
#ifndef KB_RECORD_H
#define KB_RECORD_H

#include <jansson.h>

#include "engine/derive.h"
#include "engine/family.h"

#define KB_RECORD_SCHEMA_VERSION 1
#define KB_RECORD_LOG_MAX 4096   /* [bytes] of compile log kept in a record */

/* Everything the run stage knows about one finished case. Zero-initialise, then fill
 * what applies; the have_* flags say which blocks are meaningful. Pointers are
 * borrowed for the duration of kb_record_write. */
typedef struct {
    char run_id[40];
    const kb_family *family;
    const kb_case *c;
    const char *case_id;          /* kb_case_id() text */
    const char *backend;          /* "cuda", "emu" */
    const kb_device_info *dev;    /* may be NULL (device block null) */
    int check_shape;              /* 1: the emulator's small check shape was run */

    kb_status status;             /* KB_OK, or why the case did not complete */
    const char *status_name_override; /* "skipped" etc.; NULL: derived (kb_result_status) */
    const char *reason;           /* one line, may be NULL */
    const char *compile_log;      /* may be NULL; cut to KB_RECORD_LOG_MAX in the record */

    int verified;                 /* verify is meaningful */
    kb_verify verify;

    int have_resources;
    kb_resources res;             /* fields < 0 are written as null (unknown) */

    int have_timing;
    const char *clock;            /* "cpu" on emu, "gpu" on cuda */
    int n_samples;
    double median_us, mean_us, min_us, max_us, p10_us, p90_us, cv;
    double noise;                 /* relative standard error of the median at the stop */
    int timed_out;                /* sampling stopped by the timeout, not the noise target */
    const double *samples_us;     /* [n_samples_kept], may be NULL */
    int n_samples_kept;

    int have_work;
    kb_work work;

    double compile_ms;            /* [ms] cache lookup + build, 0 on a hit */
    double wall_ms;               /* [ms] the whole case */

    int have_derived;             /* derived is meaningful (kb_derive from work + median) */
    kb_derived derived;           /* written with the timing clock as its label */

    /* measurement context, written in the timing block when have_timing */
    const char *l2_mode;          /* "cold" | "hot", NULL: not written */
    double flush_bytes;           /* [bytes] L2 flush buffer per sample (cold) */
    const char *stop_reason;      /* why sampling stopped ("noise", "timeout", "max_samples"), NULL: not written */

    /* optional blocks, borrowed (the record takes its own reference); NULL: null */
    json_t *launch_overhead;      /* kb_overhead_json: eager vs graph per-launch cost */
    json_t *telemetry;            /* kb_nvml_json: clocks, power, temperature, throttling */
} kb_result;

typedef struct kb_recorder kb_recorder;

/* The status word of a result: status_name_override when set; else "wrong" for KB_OK
 * with verified && verify.n_bad > 0; else by status: KB_OK "ok", KB_ERR_COMPILE
 * "compile_error", KB_ERR_FAULT "fault", KB_ERR_TIMEOUT "timeout", KB_ERR_INPUT
 * "input_error" (the case's own data is invalid, e.g. an embedding id out of range,
 * caught on the host before launch), and every other failure (launch, out of memory,
 * setup, io, internal) "launch_error": the case
 * could not be run; the record's "error" field keeps the exact code. */
const char *kb_result_status(const kb_result *r);

/* Build the record of r as a new JSON object (caller json_decref's); time is the
 * current UTC time. NULL only when out of memory. */
json_t *kb_record_json(const kb_result *r);

/* Open path for appending (created with its parent directories). A truncated last
 * line left by a crash is cut off first, with a warning on stderr. KB_ERR_IO with a
 * message on stderr when the file cannot be opened. */
kb_status kb_record_open(const char *path, kb_recorder **out);

/* Append the record of r as one line and fsync it. KB_ERR_IO when the write fails. */
kb_status kb_record_write(kb_recorder *w, const kb_result *r);

/* Close (NULL is fine). */
void kb_record_close(kb_recorder *w);

/* Read every record of a JSON Lines file into *objs (a malloc'ed array of *n owned
 * objects; free with kb_record_free_all). Blank lines are ignored; a malformed last
 * line without its newline (a crash mid-write) is skipped with a warning on stderr.
 * Any other malformed line, or a line that is not an object, is KB_ERR_INPUT with
 * "path:line: message" in err; an unreadable file is KB_ERR_IO. On error nothing is
 * returned (*objs NULL, *n 0). err may be NULL. */
kb_status kb_record_load(const char *path, json_t ***objs, size_t *n, kb_sb *err);
void kb_record_free_all(json_t **objs, size_t n);

/* ---- a set of strings (finished case ids for --resume) ----
 * Open addressing with linear probing, resized at half load; strings are copied. */
typedef struct {
    char **slots;      /* [cap], NULL = empty */
    size_t cap;        /* power of two, or 0 before the first add */
    size_t n;
} kb_strset;

void kb_strset_init(kb_strset *s);
void kb_strset_free(kb_strset *s);
/* Add a copy of str; 1 when added, 0 when already present, -1 when out of memory. */
int kb_strset_add(kb_strset *s, const char *str);
/* 1 when str is in the set. */
int kb_strset_has(const kb_strset *s, const char *str);

/* Add the case_id of every record in objs to s (records without one are ignored).
 * Every recorded case counts as finished, whatever its status: rerunning a wrong or
 * failed case with the same build gives the same answer. KB_ERR_OOM on allocation
 * failure. */
kb_status kb_record_case_ids(json_t *const *objs, size_t n, kb_strset *s);

/* Load path and collect its case ids into s (kb_record_load + kb_record_case_ids).
 * A file that does not exist yet adds nothing and is KB_OK. */
kb_status kb_record_finished(const char *path, kb_strset *s, kb_sb *err);

#endif /* KB_RECORD_H */
