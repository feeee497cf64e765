/* coll_emu.h - the collectives on the emu transport, with NCCL's semantics
 * (nccl.h: ncclAllReduce, ncclAllGather, ncclReduceScatter, ncclBroadcast, ncclAlltoAll,
 * and ncclSend/ncclRecv to the ring neighbours as nccl-tests' sendrecv does), out of place,
 * on host buffers of the counts coll_def.h gives.
 *
 * Algorithms (NCCL's ring, so that each element is reduced once, on one rank, and every rank
 * receives the same bits):
 *   all_reduce      ring reduce-scatter of n chunks, then ring all-gather of the reduced
 *                   chunks; uneven chunks when n does not divide count
 *   reduce_scatter  ring reduce-scatter of the n blocks; block r ends on rank r
 *   all_gather      ring: each step forwards the block received the step before
 *   broadcast       a pipeline along the ring from the root, in pieces of 64 KiB
 *   alltoall        n - 1 pairwise exchanges (rank + s, rank - s)
 *   sendrecv        send to rank + 1 while receiving from rank - 1
 * Reductions round each step to the dtype (fp16/bf16 sums exactly rounded, as __hadd),
 * int8 wraps; avg multiplies each input by (1/n) rounded to the dtype and sums (floats) or
 * divides the wrapped sum by n (int8), as NCCL does (coll_data.h's tolerances).
 */
#ifndef KB_COLL_EMU_H
#define KB_COLL_EMU_H

#include "collective/coll_comm.h"
#include "collective/coll_data.h"

/* Run d's collective on c (d->nranks == c->size): send holds send_count elements, recv
 * receives recv_count (coll_def.h); they must not overlap. KB_OK, or the transport's error
 * (c->err), KB_ERR_INPUT for a desc the transport cannot run (bad dtype, root), KB_ERR_OOM. */
kb_status kb_coll_emu_run(kb_coll_comm *c, const kb_coll_desc *d, const void *send, void *recv);

#endif /* KB_COLL_EMU_H */
