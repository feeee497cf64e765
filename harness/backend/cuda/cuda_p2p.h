/* cuda_p2p.h - the copy-engine bandwidth and latency between every pair of the node's GPUs, as
 * nvbandwidth's device_to_device_memcpy_{read,write}_ce and _bidirectional_ tests measure them
 * (written from the CUDA Driver API reference; no GPU has run it): per device its primary
 * context, a stream, a buffer and two events; peer access enabled both ways
 * (cuDeviceCanAccessPeer, cuCtxEnablePeerAccess); for each ordered pair (a, b):
 *   - verified: a 4 KiB pattern copied a -> b with cuMemcpyPeerAsync and read back equal;
 *   - unidirectional: reps copies of `bytes` a -> b on a's stream between two events:
 *     reps x bytes / time [GB/s];
 *   - bidirectional: the same a -> b on a's stream while b -> a runs on b's: the two rates summed
 *     (each direction timed by its own stream's events); both streams wait on a host-mapped word
 *     (cuStreamWaitValue32) until both directions are queued, so the two windows start together
 *     as nvbandwidth's spin kernel makes them. The gate is probed once on every device's stream
 *     (a wait already satisfied); if any device refuses it, no pair is gated (gate_why names the
 *     device). A pair with peer access one way only (b -> a none) is never gated: that copy is
 *     staged through the host and may block the host while a's stream is held, a hang (one_way).
 *     Ungated, the directions are queued one after the other and overlap only as far as queuing
 *     is faster than the copies;
 *   - latency: reps 4-byte copies a -> b, time per copy [us] (a copy's whole cost, not a load's).
 * An error on one pair (a copy, an event) marks that cell failed with the driver's error name and
 * the rest of the matrix is still measured. The SM-driven copies nvbandwidth also runs (a kernel
 * reading the peer) are not measured.
 *
 * Devices are CUDA's ordinals, in the order CUDA_DEVICE_ORDER and CUDA_VISIBLE_DEVICES give them;
 * kb_cuda_devices_read and the matrix carry each one's PCI bus id (cuDeviceGetPCIBusId: "[domain]:
 * [bus]:[device].[function]", hex, 13 bytes with the NUL: "0000:3b:00.0"), by which
 * backend/cuda/nvml_topo.h finds the same GPU in NVML.
 */
#ifndef KB_CUDA_P2P_H
#define KB_CUDA_P2P_H

#include "core/kb.h"

#define KB_P2P_MAX_GPUS 16
#define KB_P2P_BUS_ID_LEN 32   /* room for CUDA's 13 bytes and NVML's 16 + NUL */

/* CUDA's devices and their PCI bus ids, by ordinal. */
typedef struct {
    int n;                                             /* devices; 0: none or not read (why) */
    char why[256];
    char bus_id[KB_P2P_MAX_GPUS][KB_P2P_BUS_ID_LEN];   /* cuDeviceGetPCIBusId's text */
} kb_cuda_devices;

/* The driver's devices (at most KB_P2P_MAX_GPUS) with their bus ids into *out. KB_OK, or
 * KB_ERR_SETUP with out->why (no driver, or the failing call named) and out->n = 0. */
kb_status kb_cuda_devices_read(kb_cuda_devices *out);

typedef struct {
    int n;                                           /* devices measured; 0: nothing (why) */
    char why[512];
    char bus_id[KB_P2P_MAX_GPUS][KB_P2P_BUS_ID_LEN]; /* each ordinal's PCI bus id (CUDA's text) */
    double uni[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS];    /* [GB/s] row -> column */
    double bidir[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS];  /* [GB/s] both ways at once, summed */
    double lat_us[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS]; /* [us] a 4-byte copy */
    int no_peer[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS];   /* 1: cuDeviceCanAccessPeer said no (rates 0) */
    char failed[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS][40]; /* "" measured, else the error's name ("CUDA_ERROR_...") */
    int n_failed;                                    /* cells failed */
    char fail_why[256];                              /* the first failure in full (the call named) */
    int wrong_a, wrong_b;                            /* the first pair whose copy read back wrong; -1 none */
    int bidir_gated;                                 /* 1: the gate held (probed on every device's stream) */
    char gate_why[160];                              /* else why not (the device that refused named) */
    int one_way[KB_P2P_MAX_GPUS][KB_P2P_MAX_GPUS];   /* 1: measured, but no peer access column -> row:
                                                      * its directions queued one after the other */
} kb_p2p_matrix;

/* Measure every pair of the driver's devices (at most KB_P2P_MAX_GPUS) with copies of bytes,
 * reps times each. KB_OK with *out filled (a pair whose calls failed is a failed cell, rates 0);
 * KB_ERR_SETUP with out->why when there is no driver, it lacks the peer entry points, or a call
 * that is no pair's fails (opening a device, enabling peer access; the call named, as
 * KB_CU_CHECK does). */
kb_status kb_cuda_p2p_measure(size_t bytes, int reps, kb_p2p_matrix *out);

#endif /* KB_CUDA_P2P_H */
