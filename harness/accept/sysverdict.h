/* sysverdict.h - a node's acceptance verdict (`kbench accept --system NAME`): what one rank
 * measured of the collectives and, on the cuda backend, of the node's GPU pairs, judged
 * against the system spec (accept/system.h). Pure: no I/O, no clock.
 *
 *   collectives      every result of the sweep verified element by element on every rank.
 *                    FAIL when this rank's own contribution was named wrong (every rank
 *                    checks every contribution against the generator when any output was
 *                    wrong: collective/coll_bench.h), or when outputs were wrong and no rank
 *                    could be named (then every rank FAILs: the fault is in the transport);
 *                    PASS with the culprit named when another rank's contribution was wrong
 *                    and this rank's verified
 *   allreduce_busbw  busbw at the sweep's largest all_reduce >= reference x fraction (GPU
 *                    clock; a CPU timing is SKIP with its value kept, unknown figure SKIP)
 *   coll_busy        this rank's busy time per call at that size (time not spent waiting for
 *                    its peers): no threshold, its value is for `kbench fleet`, which flags
 *                    a rank whose peers waited for it (a node outlier)
 *   p2p_bandwidth    the slowest pair's unidirectional copy-engine bandwidth >= ref x fraction,
 *                    the pair named; FAIL naming the pair whose copy read back wrong, or the pairs
 *                    whose copies failed (the driver's error; the other pairs still measured)
 *   nvlink           every GPU has the system's count of active NVLink links; the GPU and
 *                    its inactive links named
 *   topology         every pair connected as the system says (NVLink for nvswitch, no NVLink
 *                    for pcie); the first pair that is not named; FAIL when a CUDA device is
 *                    not in NVML (its bus id named: the tables could not be paired)
 * GPUs are named by CUDA ordinal with NVML's index and the PCI bus id ("GPU 3 (NVML 5,
 * 00000000:3B:00.0)"); a GPU CUDA does not show by NVML's index.
 * A test that could not run is SKIP with the reason, never PASS.
 */
#ifndef KB_ACCEPT_SYSVERDICT_H
#define KB_ACCEPT_SYSVERDICT_H

#include "accept/system.h"
#include "accept/verdict.h"
#include "collective/coll_data.h"

#define KB_SYS_MAX_GPUS 16

/* How a GPU pair is connected, as nvidia-smi topo -m says it. One name table. */
typedef enum {
    KB_PAIR_UNKNOWN = 0,
    KB_PAIR_X,        /* the GPU itself */
    KB_PAIR_NV,       /* NVLink (nvidia-smi "NV<n>": n links) */
    KB_PAIR_PIX,      /* at most one PCIe bridge */
    KB_PAIR_PXB,      /* several PCIe bridges, no host bridge */
    KB_PAIR_PHB,      /* a PCIe host bridge (the CPU) */
    KB_PAIR_NODE,     /* host bridges within one NUMA node */
    KB_PAIR_SYS,      /* across NUMA nodes (SMP interconnect) */
    KB_PAIR_COUNT
} kb_sys_pair;

const char *kb_sys_pair_name(kb_sys_pair l);   /* "?", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS" */

/* What the node's GPUs showed (the cuda backend: NVML and peer copies). Every table is indexed
 * by CUDA ordinal (entry i < cuda_n is CUDA device i; by_cuda 0: NVML's order, map_note says why),
 * then the GPUs CUDA does not show; gpu_nvml and gpu_bus name each entry. */
typedef struct {
    int n;                                   /* GPUs read; 0: nothing read (why) */
    char why[512];
    int by_cuda;                             /* 1: entries < cuda_n are CUDA's ordinals */
    int cuda_n;                              /* CUDA's devices among the n */
    int map_failed;                          /* a CUDA device is not in NVML, or two are one GPU (MIG):
                                              * why names it; NVLink and topology are SKIP */
    char map_note[512];                      /* GPUs hidden from CUDA, or why NVML's order */
    int gpu_nvml[KB_SYS_MAX_GPUS];           /* NVML's index of entry i */
    char gpu_bus[KB_SYS_MAX_GPUS][32];       /* its PCI bus id, NVML's form ("00000000:3B:00.0") */
    int links_read;                          /* NVLink state was read (else links_why) */
    char links_why[256];
    int links[KB_SYS_MAX_GPUS];              /* active NVLink links per GPU */
    int links_max[KB_SYS_MAX_GPUS];          /* links the GPU has */
    char links_down[KB_SYS_MAX_GPUS][64];    /* its inactive links ("3, 7"; "" none) */
    int topo_read;                           /* the pair table was read (else topo_why) */
    char topo_why[256];
    kb_sys_pair topo[KB_SYS_MAX_GPUS][KB_SYS_MAX_GPUS];
    int nv_counts_read;                      /* nv_links read from NVML (else nv_counts_why) */
    char nv_counts_why[256];
    int nv_links[KB_SYS_MAX_GPUS][KB_SYS_MAX_GPUS];   /* active NVLink links between a pair (NV<n>) */
    int p2p_read;                            /* the bandwidth matrix was measured (else p2p_why) */
    int p2p_n;                               /* GPUs in it (CUDA's devices; n is NVML's count) */
    char p2p_why[256];
    double bw_uni[KB_SYS_MAX_GPUS][KB_SYS_MAX_GPUS];    /* [GB/s] row -> column, copy engine */
    double bw_bidir[KB_SYS_MAX_GPUS][KB_SYS_MAX_GPUS];  /* [GB/s] both directions at once, summed */
    double lat_us[KB_SYS_MAX_GPUS][KB_SYS_MAX_GPUS];    /* [us] a small copy row -> column */
    int p2p_wrong_a, p2p_wrong_b;            /* the first pair whose copy read back wrong (only when p2p_read) */
    int no_peer[KB_SYS_MAX_GPUS][KB_SYS_MAX_GPUS];   /* 1: no peer access, the pair was not measured */
    char p2p_failed[KB_SYS_MAX_GPUS][KB_SYS_MAX_GPUS][40];   /* "" measured, else the driver's error name */
    int p2p_n_failed;                        /* cells failed */
    char p2p_fail_why[256];                  /* the first failure in full */
    int p2p_bidir_gated;                     /* 1: both directions' windows started together */
    char p2p_gate_why[160];                  /* else why not */
    int p2p_one_way[KB_SYS_MAX_GPUS][KB_SYS_MAX_GPUS];   /* 1: no peer access column -> row: the pair's
                                                          * directions were queued one after the other */
    const char *clock;                       /* "gpu" */
} kb_sys_node;

/* What this rank measured of the collectives. */
typedef struct {
    int ran;                                 /* 0: why says why not */
    int failed;                              /* the sweep started (communicator up) then failed: why */
    char why[256];
    const char *clock;                       /* "cpu" (emu) or "gpu" */
    int rank, nranks;
    int n_results;                           /* sizes measured, every op */
    int n_wrong;                             /* results with a wrong element on some rank */
    int64_t wrong_elements;                  /* summed over ranks and results */
    char first_wrong[256];                   /* the first wrong result, in words */
    int culprits_checked;                    /* 1: contributions cross-checked when wrong (emu); 0: NCCL */
    int n_suspects;                          /* ranks named: wrong contributions, wrong copies' sources */
    int suspects[KB_COLL_MAX_SUSPECTS];
    uint64_t large_bytes;                    /* the sweep's largest all_reduce [bytes] */
    double busbw_large;                      /* [GB/s] its busbw */
    double busy_us_large;                    /* [us] this rank's busy time per call there */
    int busiest;                             /* the busiest rank there */
} kb_sys_coll;

/* Judge what was measured against s: out->system = 1, every system test set, out->worst. */
void kb_acc_system_judge(const kb_acc_system *s, const kb_sys_coll *c, const kb_sys_node *node, kb_acc_verdict *out);

#endif /* KB_ACCEPT_SYSVERDICT_H */
