/* cuda_p2p.h - the copy-engine bandwidth and latency between every pair of the node's GPUs, as
 * nvbandwidth's device_to_device_memcpy_{read,write}_ce and _bidirectional_ tests measure them
 * (written from the CUDA Driver API reference; no GPU has run it): per device its primary
 * context, a stream, a buffer and two events; peer access enabled both ways
 * (cuDeviceCanAccessPeer, cuCtxEnablePeerAccess); for each ordered pair (a, b):
 *   - verified: a 4 KiB pattern copied a -> b with cuMemcpyPeerAsync and read back equal;
 *   - unidirectional: reps copies of `bytes` a -> b on a's stream between two events:
 *     reps x bytes / time [GB/s];
 *   - bidirectional: the same a -> b on a's stream while b -> a runs on b's: the two rates summed;
 *   - latency: reps 4-byte copies a -> b, time per copy [us] (a copy's whole cost, not a load's).
 * The SM-driven copies nvbandwidth also runs (a kernel reading the peer) are not measured.
 */
#ifndef KB_CUDA_P2P_H
#define KB_CUDA_P2P_H

#include "core/kb.h"

#define KB_P2P_MAX_GPUS 16

typedef struct {
    int n;                                           /* devices measured; 0: nothing (why) */
    char why[512];
    double uni[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS];    /* [GB/s] row -> column */
    double bidir[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS];  /* [GB/s] both ways at once, summed */
    double lat_us[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS]; /* [us] a 4-byte copy */
    int no_peer[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS];   /* 1: cuDeviceCanAccessPeer said no (rates 0) */
    int wrong_a, wrong_b;                            /* the first pair whose copy read back wrong; -1 none */
} kb_p2p_matrix;

/* Measure every pair of the driver's devices (at most KB_P2P_MAX_GPUS) with copies of bytes,
 * reps times each. KB_OK with *out filled; KB_ERR_SETUP with out->why when there is no driver,
 * it lacks the peer entry points, or a call fails (the call named, as KB_CU_CHECK does). */
kb_status kb_cuda_p2p_measure(size_t bytes, int reps, kb_p2p_matrix *out);

#endif /* KB_CUDA_P2P_H */
