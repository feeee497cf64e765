/* gpu.h - the GPUs `kbench estimate --gpu NAME` models: per SKU the SM count and clocks
 * (datasheets), the datasheet peaks from data/peaks.json (engine/peaks.h), and per
 * architecture the occupancy limits (CUDA C++ Programming Guide) and the bandwidths and
 * latencies no datasheet publishes, which are ASSUMPTIONS and say so (docs/estimate.md). */
#ifndef KB_EST_GPU_H
#define KB_EST_GPU_H

#include "engine/peaks.h"

/* Per-architecture limits and assumptions. */
typedef struct {
    int sm;                     /* compute capability x10 */
    int max_threads_sm;         /* resident threads per SM */
    int max_blocks_sm;          /* resident blocks per SM */
    int regs_sm;                /* 32-bit registers per SM */
    int smem_sm_bytes;          /* [bytes] shared memory per SM usable by blocks */
    int smem_reserved_bytes;    /* [bytes] reserved by the system per resident block */
    int smem_bytes_clk;         /* [bytes/clk/SM] shared memory bandwidth (32 banks x 4 bytes) */
    int issue_per_clk;          /* warp instructions per clock per SM (4 schedulers) */
    double l2_bytes_clk;        /* [bytes/clk] L2 bandwidth, whole GPU (ASSUMPTION outside A100) */
    double l2_latency_ns;       /* [ns] ASSUMPTION: a global load that hits L2 */
    double dram_latency_ns;     /* [ns] ASSUMPTION: a global load that misses L2 (loaded) */
    const char *source;         /* where the limits come from */
    const char *assumption;     /* what is assumed, in one line */
} kb_est_arch;

/* One modelled GPU. */
typedef struct {
    const char *name;           /* --gpu: "h100-sxm" */
    const char *device;         /* a device name data/peaks.json matches: "H100 SXM5" */
    int sm;
    int sms;                    /* SMs (datasheet); 0: unpublished (no estimate) */
    double boost_mhz;           /* [MHz] SM boost clock (datasheet); 0: unpublished (per-clock roofs left out) */
    double l2_mb;               /* [MB] L2 capacity (datasheet); 0: unpublished */
    const char *source;
} kb_est_gpu;

/* The table of GPUs, NULL-terminated names for an option's choices. */
extern const kb_est_gpu kb_est_gpus[];
extern const int kb_est_n_gpus;
extern const char *const kb_est_gpu_names[];

/* The GPU called name, or NULL. */
const kb_est_gpu *kb_est_gpu_find(const char *name);
/* The reference GPU of an architecture (a code of core/arch.h; an `a` target's is its cc's):
 * the first row of the table for it (sm_90: H100 SXM, sm_80: A100 SXM, sm_89: L40S, sm_100:
 * B200, sm_120: RTX 5090); NULL when the table has none (sm_86). */
const kb_est_gpu *kb_est_gpu_reference(int sm);

/* The architecture table's row for sm (sm_86 and sm_89 share one row), or NULL. */
const kb_est_arch *kb_est_arch_find(int sm);

/* The datasheet peaks of g from the peaks file at path (NULL: the default): KB_OK with
 * *out filled (sheet_* set when the file has the SKU); else the error in err. */
kb_status kb_est_gpu_peaks(const kb_est_gpu *g, const char *path, kb_peaks *out, kb_sb *err);

#endif /* KB_EST_GPU_H */
