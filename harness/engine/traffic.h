/* traffic.h - what a family tells `kbench estimate` (harness/estimate) about one case at
 * its full shape: the main launch's geometry and what the kernel moves and issues.
 *
 * A family fills it in its OPTIONAL traffic hook (kernels/<family>_model.c, the `traffic`
 * slot of kb_family). Every figure is a static count from the source's tiling, not a
 * measurement; docs/estimate.md says how each family counts. A family without the hook
 * is estimated from its work model alone (compulsory bytes, full occupancy).
 */
#ifndef KB_TRAFFIC_H
#define KB_TRAFFIC_H

#include <stdint.h>

/* The tensor-core instruction a kernel's mma_flops go through; the estimator charges each
 * at its per-architecture efficiency (harness/estimate/calib.h). Name table in calib.c. */
typedef enum {
    KB_TENSOR_MMA_SYNC = 0,    /* warp-level mma.sync fed by ldmatrix (every kbench kernel so far) */
    KB_TENSOR_WGMMA,           /* warpgroup wgmma.mma_async, operands from shared memory (sm_90a) */
    KB_TENSOR_PATH_COUNT
} kb_tensor_path;

typedef struct {
    /* geometry of the main launch (the one that dominates; others go into the totals) */
    int64_t blocks;            /* blocks in the grid */
    int threads;               /* threads per block */
    int64_t dyn_smem_bytes;    /* [bytes] dynamic shared memory per block */
    int launches;              /* kernel launches per execution (>= 1) */

    /* totals over every launch of one execution */
    double mma_flops;          /* tensor-core operations (2 per multiply-add) */
    double simt_flops;         /* FP32 pipe operations (an FMA counts 2; exp, tanh as their FP32 ops) */
    double warp_insts;         /* warp instructions issued (estimate from the loop body) */
    double smem_bytes;         /* [bytes] shared memory read + written */
    double l2_bytes;           /* [bytes] requested from L2 by every block (global loads + stores) */
    double dram_bytes;         /* [bytes] to and from DRAM: compulsory + re-reads the L2 cannot hold */
    double write_bytes;        /* [bytes] of dram_bytes that are stores (they hold no load's slot) */
    double inflight_bytes;     /* [bytes] global loads one thread keeps in flight (latency bound) */

    /* added by issue 24 (calibration); a hook that memsets its kb_traffic gets the defaults */
    double sfu_ops;            /* special-function-unit (MUFU) operations: ex2, rsqrt, rcp, tanh.approx;
                                * one per thread-level call (not counted in simt_flops) */
    kb_tensor_path tensor_path; /* the instruction of mma_flops (0: mma.sync) */
    int serial_pipes;          /* 1: the SIMT and SFU work of a warp depends on its tensor work and feeds
                                * the next (attention's softmax between its two products): the tensor
                                * time and the softmax's (max of SIMT and SFU, then the conversions) add
                                * up, and the products run at the path's attention efficiency */
    double cvt_ops;            /* fp32 -> 16-bit conversions (cvt.rn.bf16x2.f32: one per two values), at the
                                * conversion rate; added by issue 24's one-sided calibration */
    double imbalance;          /* >= 1: the busiest SM's work over what equal blocks would give it
                                * (causal attention's uneven blocks); 0 or 1: blocks of equal work */
    int attention_products;    /* 1: the products are attention's (a softmax between them in every warp)
                                * even where serial_pipes is 0 (fa3 overlaps the softmax with them): they
                                * run at the path's attention efficiency, not a GEMM's (serial_pipes
                                * implies it) */
    double serial_dram_bytes;  /* [bytes] moved by a memory-bound launch that must finish before the main
                                * one starts (fa3 fp8's V pre-pass), not in dram_bytes: its time at the
                                * DRAM rate adds to the estimate, as the launches' costs do */
} kb_traffic;

/* What the hook may know of the GPU. */
typedef struct {
    int sm;                    /* compute capability x10 */
    int64_t resident_blocks;   /* blocks of this case the whole GPU holds at once; 0: not known yet
                                * (the estimate asks twice: once for the geometry, then with it) */
    double l2_bytes;           /* [bytes] L2 capacity */
    int sms;                   /* SMs of the GPU (0: not known; the hook then assumes balance) */
} kb_traffic_gpu;

#endif /* KB_TRAFFIC_H */
