/* attention_decode.h - the host side of attention/decode (split-KV flash-decoding with
 * grouped-query heads), called by attention.c's hooks for cases of the decode variant.
 * Device code: attention_decode.cu; geometry and traffic model: attention_decode_model.c.
 *
 * Layout: Q, O [b, h, q_len, d] and K, V [b, h / group, s, d], contiguous, in the dtype
 * (fp16 or bf16); the family's dims b, h (query heads), s (the KV length), d; the params
 * q_len (query rows per sequence, 1..16) and group (query heads per KV head). */
#ifndef KB_ATTENTION_DECODE_H
#define KB_ATTENTION_DECODE_H

#include "engine/exec.h"

/* valid() for the decode and decode_tma variants: 1, or 0 with the reason in why (decode_tma:
 * also attention_decode_tma.h's rules). */
int kb_attn_decode_valid(const kb_case *c, const kb_target *t, char *why, size_t n);

/* Its defines: ATTN_DECODE, HEAD_D and the block geometry (DEC_MT, DEC_RG); DEC_TMA=1 for
 * decode_tma. */
void kb_attn_decode_defines(const kb_case *c, kb_sb *out);

/* Its work model: 4 d FLOPs per kept score (b h q_len s scores; causal keeps
 * q_len s - q_len (q_len - 1) / 2 per head), bytes Q + K + V (K and V per KV head) read and
 * O written; bytes_moved adds the split partials written and read back when splits > 1. */
kb_work kb_attn_decode_work(const kb_case *c);

/* The pipeline hooks (engine/family.h contracts), for decode and decode_tma: setup allocates
 * and uploads the inputs, computes the reference rows and (decode_tma) encodes the Q, K, V
 * tensor maps (*state owned until teardown); enqueue launches attn_decode (decode_tma:
 * attn_decode_tma) and, with several splits, attn_decode_combine; check compares the
 * reference rows. */
kb_status kb_attn_decode_setup(kb_run *r, void **state);
kb_status kb_attn_decode_enqueue(kb_run *r, void *state);
kb_status kb_attn_decode_check(kb_run *r, void *state, kb_verify *v);
void kb_attn_decode_teardown(kb_run *r, void *state);

/* Tolerance of a decode case (the mma variant's: O's rounding, the fp32 sums over s and d,
 * P rounded to the dtype). */
void kb_attn_decode_tolerance(const kb_case *c, double *atol, double *rtol);

#endif
