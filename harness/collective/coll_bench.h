/* coll_bench.h - one size of a collective sweep, measured and verified the way nccl-tests
 * does (src/common.cu BenchTime): inputs filled, warm-up calls, `iters` timed calls, the
 * mean time per call averaged over the ranks (nccl-tests' default -a 1), algbw and busbw
 * from it, then the last call's output checked element by element on every rank and the
 * wrong elements summed over the ranks.
 *
 * When any rank saw a wrong element, every rank also checks every other rank's
 * contribution - its send buffer, sent directly (not through the ring, where a relay would
 * hide the origin) - against the inputs the generator says it must hold: a rank whose
 * contribution differs is named (suspects), as are the source ranks of wrong copied
 * elements. With the corrupt hook (coll_comm.h) a rank's first 4 bytes of input become
 * 0xFF (NaN, -1), as KBENCH_EMU_CORRUPT does to the emulator's downloads.
 *
 * Emulator timings are CPU timings (clock "cpu"): the transport's own speed, never a GPU's.
 */
#ifndef KB_COLL_BENCH_H
#define KB_COLL_BENCH_H

#include "collective/coll_emu.h"

#define KB_COLL_CHECK_BYTES (4u << 20)   /* contributions are checked up to this many bytes each */

typedef struct {
    kb_coll_desc desc;          /* what ran (nranks, count, seed ...) */
    uint64_t size_bytes;        /* nccl-tests' size: max(send, recv) bytes */
    int warmup, iters;
    double time_us;             /* mean time per call, averaged over the ranks [us] */
    double time_us_max;         /* the slowest rank's mean [us] */
    double algbw_gbs, busbw_gbs; /* [GB/s] from time_us */
    double busy_us;             /* this rank: time per call not spent waiting for peers [us] */
    double busy_us_max;         /* the busiest rank's [us], and which rank it is */
    int busiest;
    kb_coll_check check;        /* this rank's output */
    int64_t wrong_all;          /* wrong elements summed over the ranks */
    int n_suspects;             /* ranks named by any rank: wrong copies' sources, corrupt contributions */
    int suspects[KB_COLL_MAX_SUSPECTS];
    const char *clock;          /* "cpu" */
    const char *launch;         /* "eager" (each call launched), or "graph" (cuda: one call captured
                                 * into a CUDA graph, time per cuGraphLaunch) */
} kb_coll_result;

/* Run d (d->nranks == c->size; every rank passes the same d) warmup + iters times and
 * verify. KB_OK (wrong elements are a result, in out); else the transport's error with
 * c->err, or KB_ERR_OOM. iters >= 1, warmup >= 0. */
kb_status kb_coll_bench(kb_coll_comm *c, const kb_coll_desc *d, int warmup, int iters, kb_coll_result *out);

#endif /* KB_COLL_BENCH_H */
