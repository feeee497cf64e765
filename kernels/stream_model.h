/* stream_model.h - the traffic model of a streaming kernel (elementwise or row-wise:
 * gelu, embedding, layernorm, softmax) for `kbench estimate` (docs/estimate.md). Each of
 * those families' traffic hooks describes its launch and its accesses; this turns them
 * and the family's work model into a kb_traffic. */
#ifndef KB_STREAM_MODEL_H
#define KB_STREAM_MODEL_H

#include "engine/family.h"

/* ASSUMPTION: loads in flight per thread in a strided loop whose loads are independent
 * (ptxas unrolls such loops; layernorm_warp's PTX holds 85 ld.global). */
#define KB_STREAM_UNROLL 4.0

typedef struct {
    int64_t blocks;             /* grid */
    int threads;                /* per block */
    int64_t dyn_smem_bytes;     /* [bytes] per block */
    double access_bytes;        /* [bytes] one global access of a thread: esz, or VEC x esz */
    double in_flight;           /* independent loads one thread keeps outstanding (a strided loop:
                                 * KB_STREAM_UNROLL, what ptxas's unrolling gives at least) */
} kb_stream_shape;

/* Fill *t for case c of family f launched as s: DRAM = the work model's compulsory bytes
 * (re-reads of a row hit L2), L2 = its bytes_moved (the variant's reads) when larger, FP32
 * work = its flops, warp instructions = per access 4 (access, address, predicate, loop)
 * plus 2 per element (conversion, use) plus flops/2, in_flight x access_bytes in flight per
 * thread. Returns 1 (for `return kb_stream_traffic(...)` in a hook). */
int kb_stream_traffic(const kb_family *f, const kb_case *c, const kb_stream_shape *s, kb_traffic *t);

#endif
