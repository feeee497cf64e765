/* attention_decode_tma.h - the host side of attention/decode_tma (attention_decode_tma.c):
 * decode's split-KV flash-decoding with the K/V stream through TMA into an mbarrier ring
 * (kernel: attention_decode_tma.cu, included by attention_decode.cu). The rest of the host
 * side - inputs, reference, launch, check - is attention_decode.c's, which calls these. */
#ifndef KB_ATTENTION_DECODE_TMA_H
#define KB_ATTENTION_DECODE_TMA_H

#include "engine/exec.h"

/* What decode_tma adds to decode's valid(): 1, or 0 with the reason in why (n bytes) - the
 * target must be sm_90a, the head dim 64, 128 or 256 (whole 128-byte boxes), the boxes' rows
 * (the block's query rows, the keys of a tile) at most 256, and the tensors within what a
 * tensor map can describe (16-byte strides, at most 2^32 elements per dimension). */
int kb_attn_decode_tma_valid(const kb_case *c, const kb_target *t, char *why, size_t n);

/* The three tensor maps (Q, K, V: the kernel's argument order) of case r->c over the buffers
 * q, k, v: Q as {d, group x q_len, b x h_kv}, K and V as {d, s, b x h_kv}, 64-element boxes of
 * the head dim with the 128-byte swizzle, the block's query rows (Q) and a tile's keys (K, V)
 * per box. KB_OK, or the backend's status with the message in the case. */
kb_status kb_attn_decode_tma_maps(kb_run *r, kb_dptr q, kb_dptr k, kb_dptr v, kb_arg out[3]);

#endif
