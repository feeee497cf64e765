/* attention_fa3.h - host side of attention/fa3 (attention_fa3.c), FlashAttention-3's forward
 * structure on sm_90a: legality, defines, shared memory, TMA tensor maps and the launch. The
 * kernel: attention_fa3.cu. Q, K, V, O are the family's dense [b, h, s, d]. */
#ifndef KB_ATTENTION_FA3_H
#define KB_ATTENTION_FA3_H

#include "attention_decode_model.h"
#include "engine/exec.h"

/* The variant and its params, after attention_decode_model.h's (V_DECODE, P_STAGES). */
enum { V_FA3 = V_DECODE + 1 };
_Static_assert(V_DECODE_TMA == V_FA3 + 1, "decode_tma follows fa3 in attention.c's variant table");
enum { P_LSE = P_STAGES + 1, P_SCHED };
enum { LSE_NO, LSE_YES };
enum { SCHED_GRID, SCHED_PERSISTENT };   /* param sched: a block per work tile; SM-count blocks, longest first */

#define KB_FA3_BM 128        /* query rows per block: 64 per consumer warpgroup */
#define KB_FA3_THREADS 384   /* a producer and two consumer warpgroups */

/* 1 when c is attention/fa3 in fp8 e4m3 (attention_fa3_fp8.c's path), else 0. */
int kb_attn_fa3_is_fp8(const kb_case *c);

/* fp8: the key extent sp of the transposed V the pre-pass writes, Vt [b*h][d][sp]: s rounded
 * up to 32 (whole k32 steps; a 16-byte row stride for the TMA). */
int64_t kb_attn_fa3_vt_len(const kb_case *c);

/* 1 when case c may run on target t, else 0 with the reason in why (n bytes): sm_90a, head
 * dim 64/128/256, BKV a multiple of 16 in [16, 256] (fp8: of 64), the consumers' fragments
 * within their 240 registers, shared memory within the target's limit, b*h <= 65535. */
int kb_attn_fa3_valid(const kb_case *c, const kb_target *t, char *why, size_t n);

/* The kernel's defines beyond the params' own (BKV, STAGES, LSE): ATTN_FA3, HEAD_D. */
void kb_attn_fa3_defines(const kb_case *c, kb_sb *out);

/* Dynamic shared memory [bytes]: 1024 of alignment slack, the 128 x d Q tile, STAGES K and V
 * tiles of BKV x d, (fp8) the 128 x d bf16 O tile, 6 + 3 STAGES mbarriers (8 bytes each) and two
 * 8-byte tile-index slots. */
int64_t kb_attn_fa3_smem(const kb_case *c);

/* (batch, head)s per L2 section of the persistent schedule: K and V of a section's heads
 * within 32 MiB (FlashAttention-3's hopper/tile_scheduler.hpp rule), a power of two, >= 1. */
int kb_attn_fa3_section(const kb_case *c);

/* The four tensor maps (Q, K, V, O: the kernel's argument order) of case r->c over the
 * buffers q, k, v, o: rank 3 {d, s, b*h}, 64-element (128-byte) boxes of the head dim with
 * the 128-byte swizzle; Q 128 rows, K and V BKV rows, O 64 rows per box. fp8: Q and K in
 * 64-byte boxes with the 64-byte swizzle, v is Vt {sp, d, b*h} in boxes of 64 keys x d rows,
 * O bf16. KB_OK, or the backend's status with the message in the case. */
kb_status kb_attn_fa3_maps(kb_run *r, kb_dptr q, kb_dptr k, kb_dptr v, kb_dptr o, kb_arg out[4]);

/* The launch on a device of sms SMs: sched grid, ceil(s / 128) x (b*h) blocks; persistent,
 * min(sms, ceil(s / 128) * b*h) blocks (one per SM: a block takes the whole register file), at
 * least 1; 384 threads, kb_attn_fa3_smem bytes. */
kb_geom kb_attn_fa3_geom(const kb_case *c, int sms);

/* The tile counter of the persistent schedule: one int32 in *out, allocated through the run
 * and set to 0 (the kernel puts it back to 0 at the end of every launch). KB_OK, or the
 * allocation's / upload's status. */
kb_status kb_attn_fa3_counter(kb_run *r, kb_dptr *out);

/* Enqueue the kernel: the maps (Q, K, V, O; fp8: Vt as V), lse (0 without), the counter ctr
 * (0 under sched grid); the grid from the backend's SM count (1 when it reports none). descale:
 * NULL for 16-bit types; fp8, the per-tensor {q, k, v} scales (the softmax scale times q x k,
 * and v as the kernel's o_scale). kb_run_launch's status. */
kb_status kb_attn_fa3_launch(kb_run *r, const kb_arg maps[4], kb_dptr lse, kb_dptr ctr, const float *descale);

/* The log-sum-exp's tolerance (lse: yes; both dtypes): atol from l's fp32 sum and the
 * exponentials, rtol the fp32 rounding; the score error is the caller's per-row extra. */
void kb_attn_fa3_lse_tolerance(const kb_case *c, double *atol, double *rtol);

/* After a launch: the counter must be back at 0, or the next launch (a CUDA Graph replay)
 * would skip tiles. Adds one element to v (got: the counter, want: 0) after those checked so
 * far. KB_OK or the download's status. */
kb_status kb_attn_fa3_check_counter(kb_run *r, kb_dptr ctr, kb_verify *v);

/* The traffic hook for fa3 (engine/traffic.h; docs/estimate.md): attn_mma's tile counts at
 * BQ = 128, both products on the wgmma path, the softmax overlapped with them (serial_pipes 0);
 * the causal imbalance of the hardware's block order (grid) or of the longest-first dynamic
 * schedule (persistent). Returns 1 (modelled). */
int kb_attn_fa3_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t);

#endif
