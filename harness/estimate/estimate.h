/* estimate.h - the static performance model of one case (docs/estimate.md): occupancy
 * from the kernel's own resources, SM use over the GPU, the time each roof allows, and
 * the estimate = the largest of them. Pure arithmetic: no compile, no device, testable
 * by hand. Everything it returns is an ESTIMATE, never a measurement. */
#ifndef KB_ESTIMATE_H
#define KB_ESTIMATE_H

#include "engine/family.h"
#include "estimate/calib.h"
#include "estimate/gpu.h"

/* The roofs, one name table (kb_est_roof_name). All on-chip roofs run at the target's one
 * model clock (calib.h). */
typedef enum {
    KB_ROOF_TENSOR = 0,   /* the tensor path (mma.sync, wgmma) at its efficiency x the path dtype's datasheet rate */
    KB_ROOF_SIMT,         /* FP32 pipe (FMA) at the fp32 datasheet rate scaled to the model clock */
    KB_ROOF_SFU,          /* special-function unit (ex2, rsqrt, rcp, tanh): 16 per clock per SM */
    KB_ROOF_CVT,          /* type conversions (fp32 -> 16-bit): 16 per clock per SM */
    KB_ROOF_PIPES,        /* tensor + max(SIMT, SFU) + CVT in series (kb_traffic.serial_pipes; 0 otherwise) */
    KB_ROOF_ISSUE,        /* warp instructions at 4 per clock per SM */
    KB_ROOF_SMEM,         /* shared memory at 128 bytes per clock per SM */
    KB_ROOF_L2,           /* L2 bandwidth (assumption outside A100) */
    KB_ROOF_DRAM,         /* DRAM at the achievable bandwidth (measured ceiling, else 0.866 x datasheet) */
    KB_ROOF_LATENCY,      /* bytes in flight / latency (Little's law) */
    KB_ROOF_LAUNCH,       /* not a roof but a serial cost: launches x (launch cost + pipeline fill),
                           * added to the largest roof; the limit when it exceeds that roof */
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

/* What the model needs of the GPU: its table rows, the datasheet peaks and the calibrated
 * figures derived from them (kb_est_target_init). */
typedef struct {
    const kb_est_gpu *gpu;
    const kb_est_arch *arch;
    const kb_peaks *peaks;
    double clock_mhz;           /* [MHz] the one clock of every on-chip roof: the SKU's tensor clock */
    double dram_gbps;           /* [GB/s] achievable DRAM bandwidth */
    const char *dram_source;    /* "measured ceiling" or "datasheet x 0.866 (assumed)" */
    double launch_us[2];        /* [us] per launch, eager and graph */
    const char *launch_source;  /* "measured ceiling" or "assumed" */
} kb_est_target;

/* Fill *x for GPU g of peaks p (kb_est_gpu_peaks; measured ceilings in it, when a store had
 * them, replace the achievable DRAM bandwidth and the eager launch cost). */
void kb_est_target_init(kb_est_target *x, const kb_est_gpu *g, const kb_peaks *p);

/* The estimate of one case. */
typedef struct {
    kb_est_occ occ;
    double waves;               /* blocks / (resident blocks per SM x SMs) */
    double sm_use;              /* blocks / (SMs x blocks on the busiest SM), 0..1 */
    double imbalance;           /* >= 1: the busiest SM's work over equal blocks' (the traffic's) */
    double tensor_eff;          /* the tensor path's efficiency applied (1 when uncalibrated) */
    int tensor_calibrated;      /* 1: from the table; 0: uncalibrated (datasheet rate) */
    double roof_us[KB_ROOF_COUNT]; /* [us] time each roof allows (0: the case does not use it) */
    kb_est_roof limit;          /* the largest roof, or KB_ROOF_LAUNCH when the serial cost exceeds it */
    double est_us;              /* [us] the estimate: the largest roof + roof_us[KB_ROOF_LAUNCH] */
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
