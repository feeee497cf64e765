/* verify.h - comparing a kernel's output with the CPU reference, the project's one
 * tolerance policy, and host-side conversions between float and the storage dtypes.
 *
 * An element passes when |got - want| <= atol + rtol * |want| (llm.c's rule, written
 * so that a NaN got fails). A non-finite want is matched exactly: the same infinity,
 * or NaN for NaN, passes; anything else fails. Errors are accumulated in a kb_verify
 * (family.h), so outputs can be checked chunk by chunk.
 */
#ifndef KB_VERIFY_H
#define KB_VERIFY_H

#include "engine/family.h"

/* Start a comparison with the given tolerance: counts zero, first_bad -1. */
void kb_verify_init(kb_verify *v, double atol, double rtol);

/* Compare n more elements. Indices continue from the elements already compared, so
 * first_bad is the index in the whole output. max_abs_err / max_rel_err are taken
 * over elements where both values are finite (max_rel_err only where want != 0);
 * bad elements are included. got_at_bad / want_at_bad are those of the first bad one. */
void kb_verify_f32(kb_verify *v, const float *got, const float *want, int64_t n);

/* The same with a per-element allowance added: element i passes when
 * |got - want| <= atol + rtol * |want| + extra[i]. For an error model whose terms scale
 * with an input rather than the output (gelu: 0.5 x (1 + tanh(...)) loses accuracy in
 * proportion to |x| where the output is near 0). */
void kb_verify_f32_scaled(kb_verify *v, const float *got, const float *want, const float *extra, int64_t n);

/* Fold w, a comparison of a second output checked with its own tolerance (attention's
 * log-sum-exp beside O), into v as if w's elements had been compared after v's: n, n_bad
 * and guard_bad add; when v had no bad element and w has, first_bad is w's first_bad + v's
 * n (v's n before the merge) with w's got_at_bad / want_at_bad; guard_first is v's, else
 * w's; max_abs_err, max_rel_err and max_err_ratio are the larger of the two (each relative
 * to its own tolerance). v's atol, rtol and acc_* stay: they describe the main output. */
void kb_verify_merge(kb_verify *v, const kb_verify *w);

/* Padding of an output the kernel must not write (the gap columns of a padded leading
 * dimension): n bytes at offset off of the output buffer, which started as sentinel.
 * Each changed byte counts in guard_bad; a case with any is wrong. */
void kb_verify_guard(kb_verify *v, const unsigned char *bytes, size_t n, unsigned char sentinel, int64_t off);

/* Accuracy of an output against the fp64 result of the unquantised inputs (family.h
 * kb_verify acc_*): running sums over chunks, then kb_accuracy_finish. */
typedef struct {
    double se, st;             /* sum (got - true)^2, sum true^2 */
    double max_e, max_t;       /* max |got - true|, max |true| */
    int64_t n;                 /* elements where got and true are both finite */
} kb_accuracy;

void kb_accuracy_init(kb_accuracy *a);
/* n more elements: got (the output, as float) against truth. Non-finite pairs are skipped. */
void kb_accuracy_add(kb_accuracy *a, const float *got, const double *truth, int64_t n);
/* v's acc_n, acc_rel_fro (0 when true and got are all zero, INFINITY when only true is),
 * acc_max_rel (likewise) and acc_snr_db (INFINITY when exact, -INFINITY when true is all
 * zero and got is not). Leaves v's verification fields alone. */
void kb_accuracy_finish(const kb_accuracy *a, kb_verify *v);

/* 1 when every compared element passed and no padding was written. */
static inline int kb_verify_ok(const kb_verify *v) { return v->n_bad == 0 && v->guard_bad == 0; }

/* The default tolerance policy (kb_tolerance), for an output whose error is a sum
 * kept in the dtype. A family whose error has other sources derives its tolerance from
 * them instead, with a test switch proving it tight: gemm (fp32 accumulation over K plus
 * D's rounding), softmax and layernorm (fp32 statistics plus the output's rounding).
 *
 *   u     unit roundoff of the dtype of the inputs/output: fp32 2^-24; tf32 and fp16
 *         2^-11; bf16 2^-8; fp8 e4m3 2^-4; e5m2 2^-3; fp6 e2m3 2^-4, e3m2 2^-3; fp4 2^-2.
 *   rtol  = 4u:  the output's own rounding (at most u relative) plus a few roundings
 *         of intermediates kept in the dtype.
 *   atol  = 2u * sqrt(K) for a reduction of K terms (K = 1 for elementwise ops): a
 *         sum of K terms each carrying a relative error <= u has an error that grows
 *         like sqrt(K) * u with high probability (the probabilistic bound of Higham
 *         and Mary), not like the worst-case K * u; the families' inputs are O(1)
 *         ([-1, 1]), so that error is absolute. The factor 2 is several standard
 *         deviations for such inputs.
 *   floor atol >= 1e-5 for fp32: llm.c's fp32 elementwise tolerance (docs/references.md,
 *         layernorm/gelu 1e-5), which absorbs libm differences in erf/tanh/exp that a
 *         u-based bound would not.
 *   int8  with int32 accumulation is exact: atol = rtol = 0.
 *
 * Resulting numbers, compared with docs/references.md: fp32 elementwise 1e-5 (llm.c 1e-5);
 * bf16 elementwise atol 7.8e-3, rtol 1.6e-2 (llm.c gelu bf16 1e-2); tf32 GEMM with
 * K = 4096: atol 0.0625, rtol 2e-3 (llm.c matmul with TF32 1e-1). reduction_len <= 0
 * counts as 1. */
void kb_tolerance(kb_dtype dt, int64_t reduction_len, double *atol, double *rtol);

/* Unit roundoff u of a dtype as above (0 for int8). */
double kb_dtype_unit_roundoff(kb_dtype dt);

/* Host conversions of n elements between a dtype's storage and float.
 * to_f32: fp16/bf16/fp8/fp6/fp4 decoded exactly (fp6, fp4: the low 6 / 4 bits of each
 * byte); tf32 is fp32 storage (copied); int8 widened.
 * from_f32: round to nearest even (kernels/kb_convert.h: fp16/bf16 overflow to inf,
 * fp8, fp6 and fp4 saturate to the largest finite value, fp6/fp4 take NaN as +max); tf32 rounded with kb_f32_round_tf32 (as
 * the tensor cores' cvt.rna does); int8 saturating round-to-nearest-even, NaN -> 0 (as
 * cvt.rni.sat.s8.f32). src and dst must not overlap. */
void kb_host_to_f32(kb_dtype dt, const void *src, float *dst, int64_t n);
void kb_host_from_f32(kb_dtype dt, const float *src, void *dst, int64_t n);

#endif /* KB_VERIFY_H */
