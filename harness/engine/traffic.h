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
} kb_traffic;

/* What the hook may know of the GPU. */
typedef struct {
    int sm;                    /* compute capability x10 */
    int64_t resident_blocks;   /* blocks of this case the whole GPU holds at once; 0: not known yet
                                * (the estimate asks twice: once for the geometry, then with it) */
    double l2_bytes;           /* [bytes] L2 capacity */
} kb_traffic_gpu;

#endif /* KB_TRAFFIC_H */
