/* cuda_block.h - timing without host latency: a blocking kernel holds the backend's stream
 * while a timed window's launches are queued behind it (nvbench's blocking_kernel,
 * measure_cold/measure_hot), so the events around them stamp GPU time only, never the
 * host's cost of cuLaunchKernel/cuGraphLaunch.
 *
 * kb_block_stream(volatile int *flag, int *timed_out, u64 timeout_ns) spins on a flag in
 * host-mapped memory (cuMemHostAlloc DEVICEMAP) until the host sets it, reading
 * %globaltimer; after timeout_ns (500 ms) it gives up and sets *timed_out, so a broken
 * flag (or a host that blocks while the stream is held) cannot hang the run. It is compiled
 * by NVRTC at first use for the device's own architecture and kept for the context's life.
 * Where it cannot be built, loaded or given its flag, timing falls back to plain events
 * and the method says why. Not for use outside backend/cuda/. */
#ifndef KB_CUDA_BLOCK_H
#define KB_CUDA_BLOCK_H

#include "backend/backend.h"

#define KB_BLOCK_TIMEOUT_NS 500000000ull /* [ns] the blocking kernel's give-up time */

/* Queue the blocking kernel on the stream (building it on first use). KB_OK also when the
 * kernel is unavailable (then nothing is queued); an error only when its launch failed. */
kb_status kb_cuda_block_hold(kb_backend_ctx *x);

/* Let the held stream go (the host writes the flag). Call after the stop event is queued
 * and before waiting for it; then kb_cuda_block_done. */
void kb_cuda_block_release(kb_backend_ctx *x);

/* A window that failed before its stop event was queued (the start event failed): let the
 * held stream go and forget the hold, counting no window. Safe when nothing is held. */
void kb_cuda_block_abandon(kb_backend_ctx *x);

/* After the stop event completed: 1 when the kernel had timed out (counted), else 0. */
int kb_cuda_block_done(kb_backend_ctx *x);

/* How the timer measures, for the records: "cuda events behind a blocking kernel (...)",
 * or "cuda events (no blocking kernel: <why>)". */
const char *kb_cuda_timing_method(kb_backend_ctx *x);

/* Release what kb_cuda_block_hold built. */
void kb_cuda_block_free(kb_backend_ctx *x);

#endif /* KB_CUDA_BLOCK_H */
