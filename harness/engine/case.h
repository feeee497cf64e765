/* case.h - the case pipeline: one planned case through its stages into one typed
 * result, the single thing every later step (record, store, console, tune, accept)
 * reads.
 *
 * Stages, in order (case.c, table `stages`): valid -> compile -> setup -> verify ->
 * measure -> derive -> overhead -> telemetry. Each stage fills its own block of
 * kb_case_result and either lets the case go on or ends it with a status. Adding a
 * stage is: its block here, its function and table row in case.c, its serialiser in
 * results/record.c. Adding a status is one row in the kb_case_status table below.
 */
#ifndef KB_CASE_H
#define KB_CASE_H

#include "engine/derive.h"
#include "engine/exec.h"
#include "engine/launch_overhead.h"
#include "engine/measure.h"
#include "engine/modules.h"
#include "engine/peaks.h"

/* ---- case statuses: one enum, one name table (case.c), checked by a static assert ---- */
typedef enum {
    KB_CASE_OK = 0,          /* verified, measured */
    KB_CASE_SKIPPED,         /* valid() refused it for the target; reason says why */
    KB_CASE_COMPILE_ERROR,   /* did not compile or load (log in the record) */
    KB_CASE_LAUNCH_ERROR,    /* could not be run: launch rejected, out of memory, setup, io */
    KB_CASE_INPUT_ERROR,     /* the case's own data is invalid (e.g. an embedding id out of range) */
    KB_CASE_WRONG,           /* ran, but outputs outside tolerance */
    KB_CASE_FAULT,           /* kernel fault, divergent barrier, emulator-detected error */
    KB_CASE_TIMEOUT,         /* kernel or case exceeded its time budget */
    KB_CASE_STATUS_COUNT
} kb_case_status;

const char *kb_case_status_name(kb_case_status s);          /* "ok", "skipped", ...; "?" out of range */
int kb_case_status_parse(const char *s, kb_case_status *out); /* 0, or -1 for an unknown word */
/* 1 for the statuses that make a run exit 1 (everything but ok and skipped). */
int kb_case_status_failed(kb_case_status s);
/* The status of a case that ended with error code st before or during execution. */
kb_case_status kb_case_status_of(kb_status st);

/* ---- the result, a block per stage ---- */

/* Stages, for per-stage timings (NVTX ranges and trace slices use these names). */
typedef enum {
    KB_STAGE_VALID = 0, KB_STAGE_COMPILE, KB_STAGE_SETUP, KB_STAGE_VERIFY, KB_STAGE_MEASURE,
    KB_STAGE_DERIVE, KB_STAGE_OVERHEAD, KB_STAGE_TELEMETRY, KB_STAGE_COUNT
} kb_stage;
const char *kb_stage_name(kb_stage s);   /* "valid", "compile", ... */

typedef struct {
    /* identity (borrowed from the plan) */
    const kb_family *family;
    const kb_case *c;
    const char *case_id;
    int check_shape;              /* 1: the emulator's small check shape was run */

    kb_case_status status;
    kb_status error;              /* the exact error code behind a failure (KB_OK otherwise) */
    char reason[1200];            /* one line; "" when none */

    kb_work work;                 /* the family's work model of the case (always) */

    struct {                      /* compile: module and resources */
        int done;                 /* a module was asked for */
        double compile_ms;        /* [ms] build + load, 0 on a cache hit within the run */
        const char *log;          /* compiler log, borrowed from the run's module table */
        const char *note;         /* "" or the compile stage's note for the operator (borrowed) */
        int have_resources;
        kb_resources res;         /* fields -1 where unknown */
    } compile;

    struct {                      /* setup: the vendor library call the case runs, if any */
        int done;
        kb_vendor_info info;
    } vendor;

    struct {                      /* setup: the case's constants (alpha, beta, fp8 scales, eps, ...) */
        int n;
        kb_run_const c[KB_RUN_MAX_CONSTS];
    } constants;

    struct {                      /* verify: one execution against the reference */
        int done;
        kb_verify v;
    } verify;

    struct {                      /* measure: every sample and their statistics */
        int done;
        kb_measurement m;         /* owned: kb_case_result_free */
        const char *clock;        /* "gpu" or "cpu" */
        char method[320];         /* how the timer measured (the backend's timing_method) */
    } measure;

    struct {                      /* derive: rates and roofline from work + median */
        int done;
        kb_derived d;
    } derived;

    struct {                      /* overhead: eager vs graph launch cost */
        int done;
        kb_overhead ov;
        char error[1024];         /* why it was not measured, "" otherwise (the case stays ok) */
    } overhead;

    struct {                      /* telemetry: read after measuring */
        int done;
        kb_telemetry t;
    } telemetry;

    double stage_ms[KB_STAGE_COUNT]; /* [ms] wall time spent in each stage */
    double wall_ms;               /* [ms] the whole case */
} kb_case_result;

/* Release what r owns (the samples) and zero it. */
void kb_case_result_free(kb_case_result *r);

/* ---- the pipeline ---- */

/* What every case of a run shares; filled by the command that runs cases. */
typedef struct {
    const kb_backend *be;
    kb_backend_ctx *bx;
    const kb_device_info *dev;
    kb_modules *mods;             /* the run's module table */
    const kb_module_ref *empty;   /* kb_empty.cu for the launch-overhead floor, or NULL */
    const kb_l2_flush *flush;     /* run-wide cold-L2 scratch, or NULL (each case allocates) */
    const kb_peaks *peaks;        /* GPU ceilings, or NULL (no roofline) */
    const kb_measure_overrides *overrides; /* command-line measurement overrides, or NULL */
    const char *dump_dir;         /* --dump, or NULL */
    int dump_all;                 /* dump every case (a filter chose them), not only wrong ones */
    char dump_err[1024];           /* OUT: the last --dump failure, "" when none */
    /* OPTIONAL static pruning, asked after the compile stage with the kernel's resources
     * (NULL when the backend reports none): return 0 with a reason in why to end the case
     * before anything runs (status skipped, reason "pruned: <why>"). The tuner plugs its
     * spill/limit rules here (tune/prune.h); a static performance model could too. */
    int (*prune)(void *user, const kb_case *c, const kb_resources *res, char *why, size_t n);
    void *prune_user;
} kb_pipeline;

/* Run case c (id, the suite's measurement settings ms) through every stage into *out
 * (zeroed first; free with kb_case_result_free). Never fails as a function: a case's
 * failure is its status. A case abandoned on a signal ends with error
 * KB_ERR_INTERRUPTED: it is not a result, and the caller does not record it. */
void kb_case_run(kb_pipeline *p, const kb_case *c, const char *id, const kb_measure_settings *ms,
                 kb_case_result *out);

/* valid()'s answer for a case, from a walk that already asked (session/cases.h). */
typedef struct {
    int valid;                    /* 1: valid() accepted the case for the pipeline's target */
    const char *why;              /* its reason when not ("" otherwise) */
} kb_case_verdict;

/* kb_case_run for a case of family f (the plan's own table; kb_case_run passes
 * kb_families[c->family]) whose verdict the caller holds: the valid stage takes *verdict
 * instead of asking f->valid() again (NULL: it asks), so a case is judged once per run.
 * The verdict must be for the pipeline's target (kb_target_sm, caps, shared memory of
 * p->dev). The memory check of the valid stage still runs. As kb_case_run otherwise. */
void kb_case_run_judged(kb_pipeline *p, const kb_family *f, const kb_case *c, const char *id,
                        const kb_measure_settings *ms, const kb_case_verdict *verdict, kb_case_result *out);

#endif /* KB_CASE_H */
