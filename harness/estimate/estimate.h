/* estimate.h - the static performance model of one case (docs/estimate.md): occupancy
 * from the kernel's own resources, SM use over the GPU, the time each roof allows, and
 * the estimate = the largest of them. Pure arithmetic: no compile, no device, testable
 * by hand. Everything it returns is an ESTIMATE, never a measurement. */
#ifndef KB_ESTIMATE_H
#define KB_ESTIMATE_H

#include "engine/family.h"
#include "estimate/gpu.h"

/* The roofs, one name table (kb_est_roof_name). */
typedef enum {
    KB_ROOF_TENSOR = 0,   /* mma.sync at the path dtype's datasheet rate */
    KB_ROOF_SIMT,         /* FP32 pipe (FMA) at the fp32 datasheet rate */
    KB_ROOF_ISSUE,        /* warp instructions at 4 per clock per SM */
    KB_ROOF_SMEM,         /* shared memory at 128 bytes per clock per SM */
    KB_ROOF_L2,           /* L2 bandwidth (assumption outside A100) */
    KB_ROOF_DRAM,         /* DRAM bandwidth (datasheet) */
    KB_ROOF_LATENCY,      /* bytes in flight / latency (Little's law) */
    KB_ROOF_COUNT
} kb_est_roof;

const char *kb_est_roof_name(kb_est_roof r);   /* "tensor", "simt", ... never NULL */

/* Occupancy of one SM: resident blocks and what limits them. */
typedef struct {
    int blocks;                 /* resident blocks per SM (0: the block does not fit) */
    const char *limit;          /* "threads", "blocks", "registers", "smem" */
} kb_est_occ;

/* Resident blocks per SM of a block of threads using regs registers per thread and
 * smem_bytes of shared memory (static + dynamic) on arch a. */
kb_est_occ kb_est_occupancy(const kb_est_arch *a, int threads, int regs, int64_t smem_bytes);

/* What the model needs of the GPU: its table rows and the datasheet peaks. */
typedef struct {
    const kb_est_gpu *gpu;
    const kb_est_arch *arch;
    const kb_peaks *peaks;
} kb_est_target;

/* The estimate of one case. */
typedef struct {
    kb_est_occ occ;
    double waves;               /* blocks / (resident blocks per SM x SMs) */
    double sm_use;              /* blocks / (SMs x blocks on the busiest SM), 0..1 */
    double roof_us[KB_ROOF_COUNT]; /* [us] time each roof allows (0: the case does not use it) */
    kb_est_roof limit;          /* the largest */
    double est_us;              /* [us] the estimate: roof_us[limit] */
    double roofline_us;         /* [us] compulsory work at the datasheet roofline */
    double pct_roofline;        /* 100 x roofline_us / est_us */
    int modelled;               /* 1: from the family's traffic hook; 0: work model only */
} kb_estimate;

/* Estimate case c of family f compiled for arch sm to regs registers (<= 0: unknown) and
 * static_smem bytes, on target x. The traffic comes from the family's hook (asked once for
 * the geometry, then again with the resident blocks), else from f->work alone (compulsory
 * bytes, one block per SM). path: the dtype whose rate bounds its tensor work (the
 * family's path hook, else c->dtype). Returns 0 and fills *e; -1 with a reason in why when
 * the block cannot be resident or the GPU has no figure for the case's work. */
int kb_estimate_case(const kb_family *f, const kb_case *c, int sm, int regs, int static_smem, kb_dtype path,
                     const kb_est_target *x, kb_estimate *e, char *why, size_t whylen);

/* kb_estimate_case for a kernel built for sm with resources r (ptxas's report), on the
 * dtype path the family says its loop issues (f->path, else c->dtype). */
int kb_estimate_built(const kb_family *f, const kb_case *c, int sm, const kb_resources *r, const kb_est_target *x,
                      kb_estimate *e, char *why, size_t whylen);

#endif /* KB_ESTIMATE_H */
