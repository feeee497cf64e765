/* launch_overhead.h - what launching costs, eager vs CUDA Graph, for one case.
 *
 * N executions of the case are timed back to back, eagerly (N x the family's launches,
 * one call each) and as one replay of a graph captured from those N executions
 * (captured and instantiated once, replayed after a warm-up replay). The difference,
 * divided by the launches, is the per-launch cost a graph removes:
 *     per_launch_us = (t_eager - t_graph) / (N x launches per execution)
 * For a kernel longer than a launch, launches overlap the previous kernel and the
 * difference tends to zero: it is the overhead the user actually pays, not the API's.
 * The floor is the same measurement with an empty kernel (kernels/kb_empty.cu, a
 * module like any other) at a fixed KB_OVERHEAD_EMPTY_N launches whatever the case's N,
 * and host_enqueue_us the CPU wall time of one launch call. Every window opens behind the
 * backend's timer (on cuda: behind the blocking kernel, so the eager launches and the
 * graph's submission are queued before the GPU starts, and the window holds GPU time
 * only). Each timing is the median of KB_OVERHEAD_REPS repetitions; per_launch_us comes
 * with the quartiles of the per-repetition differences. With fewer than
 * KB_OVERHEAD_MIN_N executions per window (a case so long that few fit in the budget,
 * and every case on the emulator), per_launch_us is NAN (null in the record) with the
 * reason in null_reason: the difference of two long windows over a handful of launches is
 * noise, not overhead. On a backend without KB_CAP_FULL_SPEED (the emulator) a window holds
 * one execution (kb_launch_overhead_n) and is repeated KB_OVERHEAD_FEW_REPS times (the
 * record's `reps`): four executions and nine repetitions were a third of the emulator's
 * main job for CPU medians nothing derives a per-launch figure from (issue 26).
 *
 * On the emu backend every number is CPU time (its launches run to completion and
 * its graphs replay the recorded launches); the caller labels them so.
 */
#ifndef KB_LAUNCH_OVERHEAD_H
#define KB_LAUNCH_OVERHEAD_H

#include "engine/exec.h"

#define KB_OVERHEAD_REPS 9       /* repetitions of every window: median and quartiles */
#define KB_OVERHEAD_FEW_REPS 3   /* the same on a backend without KB_CAP_FULL_SPEED (the
                                  * emulator: n = 1, so per_launch_us is always null) */
#define KB_OVERHEAD_EMPTY_N 128  /* empty-kernel launches per floor window, fixed */
#define KB_OVERHEAD_MIN_N 10     /* fewer executions per window: per_launch_us is null */
#define KB_OVERHEAD_MAX_QUEUED 256 /* launches one window queues at most (see kb_launch_overhead) */
#define KB_EMPTY_SOURCE "kb_empty.cu"   /* relative to the kernels directory */
#define KB_EMPTY_ENTRY "kb_empty"

typedef struct {
    kb_module *empty;        /* IN: the loaded kb_empty.cu module for the floor; NULL: no floor */
    int n;                   /* executions timed back to back */
    int launches;            /* kernel launches in one execution of the case */
    double eager_us;         /* [us] per execution: N executions enqueued one by one, / N */
    double graph_us;         /* [us] per execution: one replay of a graph of N executions, / N */
    double per_launch_us;    /* [us] (t_eager - t_graph) / (N x launches) */
    double empty_eager_us;   /* [us] per empty-kernel launch, eager; NAN without a floor */
    double empty_graph_us;   /* [us] per empty-kernel launch within a graph; NAN without a floor */
    double host_enqueue_us;  /* [us] CPU wall time of one launch call of the case */
    double empty_host_us;    /* [us] CPU wall time of one empty-kernel launch call; NAN without a floor */
    int reps;                /* repetitions each figure is the median of */
    double per_launch_q1_us; /* [us] quartiles of the per-repetition per-launch differences; */
    double per_launch_q3_us; /*      NAN with per_launch_us */
    int empty_n;             /* empty-kernel launches per floor window; 0 without a floor */
    char null_reason[160];   /* why per_launch_us is NAN; "" when it is not */
} kb_overhead;

/* Measure the launch overhead of the case in r (state from the family's setup; the
 * case's buffers are reused, so the family's enqueue must be repeatable, as it is for
 * sampling). out->empty is read, every other field written. n >= 1, lowered so that one
 * window queues at most KB_OVERHEAD_MAX_QUEUED launches (a driver blocks the host after
 * about a thousand launches queued behind a held stream; nvbench's blocking_kernel warns
 * to queue few); out->n says how many ran. 100 is a good number on a GPU, 1 on
 * the emulator, whose executions are slow. Needs the
 * backend's graph slots: KB_ERR_LAUNCH without them. Returns KB_OK or the failing
 * status with the case's error set in r. */
kb_status kb_launch_overhead(kb_run *r, void *state, int n, kb_overhead *out);

/* What one empty-kernel launch costs when launches go back to back [us]: the larger of the
 * host's enqueue time and the GPU's per-launch time (the windows behind the blocking kernel
 * hold the GPU's only). NAN without a floor. */
double kb_overhead_floor_us(const kb_overhead *o);

/* A good n for a case whose median execution takes median_us: as many executions as fit
 * in about 20 ms per timing, at most 100 (1 without KB_CAP_FULL_SPEED in caps: the
 * emulator's executions are CPU work, and no number of them it could afford reaches the
 * KB_OVERHEAD_MIN_N a per-launch figure needs), at least 1. So a tiny kernel gets 100
 * launches and an 8192^3 GEMM a few. */
int kb_launch_overhead_n(double median_us, unsigned caps);

#endif /* KB_LAUNCH_OVERHEAD_H */
