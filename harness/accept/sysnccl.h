/* sysnccl.h - the collectives' sweep through NCCL on the cuda backend, for `kbench accept
 * --system` (written from NVIDIA's NCCL and Driver API documentation; it has run only against
 * the driver and NCCL doubles): this rank's device (its primary context, one non-blocking
 * stream, two events), NCCL loaded and gated (collective/coll_nccl.h), the unique id through the
 * rendezvous (collective/rendezvous.h), then per op and size: inputs generated on the host
 * (collective/coll_data.h) and uploaded, one warm-up call, `iters` calls between two events
 * (this rank's mean time per call, nccl-tests' BenchTime without the average over the ranks),
 * the output read back and verified element by element; then (NCCL >= 2.9, CUDA >= 11.3) the
 * same call captured into a CUDA graph on that stream, timed per cuGraphLaunch and verified
 * (the result's launch "graph"). On cuda a wrong result is this rank's output: contributions
 * are not cross-checked, so no culprit is named. */
#ifndef KB_ACCEPT_SYSNCCL_H
#define KB_ACCEPT_SYSNCCL_H

#include "collective/coll_bench.h"
#include "core/identity.h"

/* Where each result goes (the caller records, prints and folds it). */
typedef void (*kb_acc_coll_sink)(void *user, const kb_coll_result *r);

/* Run every op at every size of sizes[0..ns) (fp32 sum; all_reduce also bf16 and int8), eager
 * and, when capture is supported, as a graph, on CUDA
 * device `device` as rank id. 0 when the sweep ran (each result through sink); -1 with why when
 * it could not start (no driver or NCCL, NCCL gated out, a rendezvous or communicator error:
 * named); -2 with why when it failed after the communicator was up (the results before the
 * failure went through sink). */
int kb_acc_nccl_sweep(const kb_identity *id, int device, const uint64_t *sizes, int ns, kb_acc_coll_sink sink,
                      void *user, char *why, size_t n);

#endif /* KB_ACCEPT_SYSNCCL_H */
