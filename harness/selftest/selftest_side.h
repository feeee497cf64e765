/* selftest_side.h - one side of `kbench selftest`: a session (session/session.h) on one
 * backend (the emulator or the GPU) that runs a plan like `kbench run` - the same
 * pipeline, compile workers, cold-L2 flush and records (<dir>/records.jsonl) - dumping
 * every case's arrays (inputs, output, reference) so the two sides can be compared, and
 * keeping per case what the checks need. */
#ifndef KB_SELFTEST_SIDE_H
#define KB_SELFTEST_SIDE_H

#include "session/session.h"

/* What one case left for the checks. */
typedef struct {
    char id[256];
    kb_case_status status;
    char reason[256];
    double atol, rtol;      /* the tolerance its reference check used */
    int graph;              /* launched as a graph (verified from a replay) */
} kb_st_case;

typedef struct {
    kb_session *s;          /* the backend, its pipeline and the records (NULL: a side made by hand) */
    int begun;              /* the session's pipeline and records are open */
    kb_device_info dev;     /* the session's device */
    char dir[512];          /* where its cases are dumped: <dir>/<case id with / as __>/out.npy,
                             * and recorded: <dir>/records.jsonl */
    kb_st_case *cases;      /* in plan order */
    int n, cap;
    int n_ok, n_failed, n_skipped;
    int oom;                /* a case could not be kept (out of memory) */
    int telemetry_ok;       /* a case read telemetry (NVML) */
    char telemetry_why[256];
    double floor_us;        /* [us] the lowest empty-kernel launch cost seen (kb_overhead_floor_us:
                             * host enqueue or GPU, the larger); NAN none */
    double copy_gbps, peak_gbps; /* [GB/s] a copy case's rate and the device's peak; 0 none */
} kb_st_side;

/* Open a session on backend `name` ("emu" or "cuda") for the selftest, compiling for
 * sm_override (a code of core/arch.h; 0: the device's own), dumping into dir (created). A
 * device whose toolchain fits no driver is opened (the selftest judges it). KB_OK, or the
 * backend's status with err filled (KB_ERR_SETUP: no such device; KB_ERR_INPUT: an arch the
 * device cannot load). */
kb_status kb_st_side_open(kb_st_side *s, const char *name, const char *cache_dir, int device_index, int sm_override,
                          const char *dir, char *err, size_t n);

/* Run every case of plan (borrowed until the next run or close) whose id contains filter
 * (NULL: all) on this side, each recorded in <dir>/records.jsonl (a records file that
 * cannot be opened is reported, and the side runs without it). Returns 0, or -1 when out
 * of memory or interrupted. */
int kb_st_side_run(kb_st_side *s, const kb_plan *plan, const char *filter);

/* The case called id, or NULL. */
const kb_st_case *kb_st_side_find(const kb_st_side *s, const char *id);

void kb_st_side_close(kb_st_side *s);

#endif /* KB_SELFTEST_SIDE_H */
