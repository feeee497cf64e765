/* attention_fa3_fp8.h - attention/fa3 in fp8 e4m3 (attention_fa3_fp8.c): inputs quantised
 * per tensor, the V pre-pass and the kernel in one enqueue, the double reference and the check.
 * attention.c hands a case over when kb_attn_fa3_is_fp8 says so. Q, K, V are e4m3 [b, h, s, d],
 * O is bf16 [b, h, s, d] (as FlashAttention-3's fp8 forward), the log-sum-exp fp32 [b, h, s]. */
#ifndef KB_ATTENTION_FA3_FP8_H
#define KB_ATTENTION_FA3_FP8_H

#include "engine/exec.h"
#include "engine/verify.h"

/* The family's setup hook for an fp8 fa3 case: Q, K, V drawn as attention.c draws them (with
 * fa3's adversarial rows), each quantised to e4m3 with one FP32 scale per tensor (engine/quant.h,
 * recipe tensor: 2^ceil(log2(amax / 448))), uploaded with Vt, O and the tensor maps; the
 * reference in double from the dequantised values. KB_OK with *state (free with the teardown
 * hook), or a status with the message in the case (nothing left allocated). */
kb_status kb_attn_fa3_fp8_setup(kb_run *r, void **state);

/* The pre-pass attn_fa3_vt (V to the key-major, key-permuted Vt) and then attn_fa3, both on
 * the run's stream: a measured repetition times both. KB_OK or the launch's status. */
kb_status kb_attn_fa3_fp8_enqueue(kb_run *r, void *state);

/* O (and the log-sum-exp when asked) against the reference, at the tolerance docs/precision.md
 * derives for fp8 attention (fp8_tolerance in the .c). KB_OK or the download's status. */
kb_status kb_attn_fa3_fp8_check(kb_run *r, void *state, kb_verify *v);

/* Frees what the setup hook made (the run frees the device buffers). NULL is a no-op. */
void kb_attn_fa3_fp8_teardown(kb_run *r, void *state);

#endif
