/* attention_model.h - what attention.c (the family) and attention_model.c (its launch
 * geometry and traffic model for `kbench estimate`) share: variant and param indices. */
#ifndef KB_ATTENTION_MODEL_H
#define KB_ATTENTION_MODEL_H

#include "engine/family.h"

enum { V_NAIVE, V_FUSED, V_MMA, V_CUDNN, V_FA2 };
enum { P_CAUSAL, P_BLOCK, P_BQ, P_BKV, P_KC, P_TPR, P_RQ };
enum { CAUSAL_NO, CAUSAL_YES };
enum { D_B, D_H, D_S, D_D };

/* The tensor-core kernel attn_mma: variant mma (16 query rows per warp) or fa2 (32). */
int kb_attn_is_mma(const kb_case *c);

/* Query rows per warp of attn_mma: 16 (mma) or 32 (fa2, FlashAttention-2's configuration). */
int64_t kb_attn_rows_per_warp(const kb_case *c);

/* Threads per block of the fused or tensor-core kernel. */
int64_t kb_attn_threads(const kb_case *c);

/* Dynamic shared memory [bytes]: fused, fp32 K and V tiles; attn_mma, the Q tile and two
 * stages of K and V tiles in the input dtype, rows padded by 8 elements (16 bytes). */
int64_t kb_attn_shmem_bytes(const kb_case *c);

/* The family's traffic hook (engine/traffic.h): the tiles' L2, shared-memory and DRAM
 * bytes, tensor or FP32 work, instructions per K/V tile (docs/estimate.md). */
int kb_attn_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t);

/* For attention_fa3.c's model, attn_mma's counts at the case's BQ and BKV: the K/V tiles all
 * blocks of one head visit and of them those masked (causal diagonal or past s); the busiest
 * SM's work over equal blocks' for causal (>= 1); the FP32 softmax work per score (FMA-slot
 * flops; compare at its rate on g's architecture, 2 when g is NULL). */
void kb_attn_tile_counts(const kb_case *c, double *tiles, double *masked);
double kb_attn_causal_imbalance(const kb_case *c, double bh, int sms);
double kb_attn_softmax_per_score(const kb_case *c, double masked_frac, const kb_traffic_gpu *g);

#endif
