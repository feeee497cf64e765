/* family.h - the host-side descriptor of a kernel family.
 *
 * A family is kernels/<family>.cu (device code, variants naive first) plus
 * kernels/<family>.c (this descriptor). The harness knows nothing family-specific:
 * it plans cases over the descriptor's axes, asks valid() for legality, compiles the
 * source with defines(), and runs setup -> enqueue -> check -> teardown through the
 * kb_run context below. Rates are derived by the harness from work(); no family
 * computes its own GB/s.
 */
#ifndef KB_FAMILY_H
#define KB_FAMILY_H

#include "backend/backend.h"
#include "engine/traffic.h"

typedef struct {
    const char *name;      /* "naive", "vec" — appears in case ids */
    const char *entry;     /* extern "C" kernel symbol of the main launch */
    uint32_t dtypes;       /* KB_DT_BIT mask of supported dtypes */
    const char *about;     /* one line: what this variant changes and why */
} kb_variant;

typedef struct {
    const char *name;             /* "BLOCK", "VEC", "form" — as written in suites */
    int64_t def;                  /* default value (choice index for choice params) */
    const char *const *choices;   /* NULL-terminated names for a choice param, or NULL for an integer */
    uint32_t variants;            /* bit i set: the param applies to variant i (0 = all variants) */
    const char *about;
    int64_t min, max;             /* the values a suite may give an integer param; both 0:
                                   * [0, KB_PARAM_MAX]. Checked at load (file:line:col), so that a
                                   * family's size arithmetic never sees an absurd value. */
    int problem;                  /* 1: the param changes what is computed (the reference: gemm's
                                   * layout, alpha, beta; layernorm's kind; gelu's form; attention's
                                   * causal), not how - cases that differ in it are different
                                   * problems, never ranked against each other (the run summary,
                                   * the report). 0: a configuration knob (tiles, BLOCK, VEC, ...) */
} kb_param;

/* The default range of an integer param: tile sizes, vector widths, stage counts. With
 * dims at most 2^40 (2^56 together, suite_loader.h), products of a few params, a dim and
 * an element size stay inside int64. A param that needs more (a byte count) says so. */
#define KB_PARAM_MAX (1 << 16)

/* The legal range [*lo, *hi] of integer param p. */
static inline void kb_param_range(const kb_param *p, int64_t *lo, int64_t *hi)
{
    *lo = p->min == 0 && p->max == 0 ? 0 : p->min;
    *hi = p->min == 0 && p->max == 0 ? KB_PARAM_MAX : p->max;
}

/* Work model: what the operation needs, not what an implementation moves. */
typedef struct {
    double flops;          /* algorithmic operations (2*M*N*K for GEMM) */
    double bytes_read;     /* compulsory [bytes] */
    double bytes_written;  /* compulsory [bytes] */
    double bytes_moved;    /* [bytes] actually moved by this variant when larger (naive attention's S x S); 0 = same */
} kb_work;

/* Target the case is planned for: validity can depend on the architecture. */
typedef struct {
    int sm;                /* 80, 89, 90 */
    unsigned caps;         /* KB_CAP_* of the backend that will run it (0 when planned offline) */
    int max_shmem_per_block; /* [bytes] opt-in limit */
} kb_target;

/* Verification summary (filled by kb_verify_* in verify.h). */
typedef struct {
    int64_t n;             /* elements compared */
    int64_t n_bad;         /* elements outside tolerance (non-finite got counts as bad) */
    int64_t first_bad;     /* index of the first bad element, -1 if none */
    double got_at_bad, want_at_bad;
    double max_abs_err;
    double max_rel_err;    /* over elements with |want| > atol (elsewhere relative error says nothing) */
    double max_err_ratio;  /* max of |got - want| / (atol + rtol * |want|): <= 1 passes; the one number to read */
    double atol, rtol;     /* tolerance used: |got - want| <= atol + rtol * |want| */
    int64_t guard_bad;     /* bytes of an output's padding (kb_verify_guard) the kernel changed */
    int64_t guard_first;   /* byte offset of the first, in the output buffer; -1 if none */
    /* accuracy (kb_accuracy_finish; acc_n 0: not measured): the output against the fp64
     * result of the unquantised real-valued inputs - what the precision costs, reported,
     * never a pass/fail. Over the elements where both are finite. */
    int64_t acc_n;
    double acc_rel_fro;    /* ||got - true||_F / ||true||_F */
    double acc_max_rel;    /* max |got - true| / max |true| */
    double acc_snr_db;     /* 10 log10(sum true^2 / sum (got - true)^2); INFINITY when exact */
} kb_verify;

/* The instruction a case's inner loop is bounded by: the measured-ceiling kind it is scored
 * against (a ceiling family kind: "fma/fp32", "mma/fp16", "mma/fp8e4m3/widened") and the
 * dtype whose datasheet (else clock-based) peak bounds that instruction where no ceiling
 * was measured - fp16 for fp8 widened to f16, so an fp8 kernel on that path is scored
 * against the f16 rate it can reach as well as the fp8 datasheet figure. */
typedef struct {
    char kind[40];
    kb_dtype dtype;
} kb_path;

typedef struct kb_run kb_run;  /* execution context of one case (exec.h) */

typedef struct kb_family {
    const char *name;                 /* "gelu" */
    const char *source;               /* "gelu.cu", relative to the kernels directory */
    const char *about;
    const kb_variant *variants; int n_variants;
    const char *const *dims; int n_dims;       /* shape dims, e.g. {"n"}; {"m","n","k"} */
    const kb_param *params; int n_params;
    int n_id_params;       /* 0: every param that applies is in case ids; else params from this
                            * index on (added after ids were recorded, at the table's end) are
                            * in ids only when they differ from their default: old ids stay */
    uint32_t host_params;  /* bit p: param p shapes the inputs only (gemm's dist): it is no
                            * compile-time define, so one module serves every value */

    /* Static legality. Returns 1 when valid; 0 and a reason in why otherwise. */
    int (*valid)(const kb_case *c, const kb_target *t, char *why, size_t whylen);
    /* OPTIONAL extra compile-time defines, "NAME=VALUE" lines appended to out. The harness
     * already defines, for every case (kb_case_defines in engine/defines.c): KB_T=<storage ctype>,
     * KB_DTYPE_<FP32|TF32|FP16|BF16|INT8|FP8E4M3|FP8E5M2|FP6E2M3|FP6E3M2|FP4E2M1>=1, and every
     * param of the family but the host_params ones as <UPPERCASE NAME>=<value> (its default
     * where it does not apply to the variant);
     * a choice param as its index, plus <NAME>_<CHOICE>=<index> for each of its choices. */
    void (*defines)(const kb_case *c, kb_sb *out);
    kb_work (*work)(const kb_case *c);

    /* Execution. setup allocates through kb_run_alloc (freed by the harness), makes
     * inputs with a seeded kb_rng, uploads them and computes the reference; enqueue
     * issues the launches of one execution (several launches are one case); check
     * downloads outputs and fills v. State is family-private, freed by teardown. */
    kb_status (*setup)(kb_run *r, void **state);
    kb_status (*enqueue)(kb_run *r, void *state);
    kb_status (*check)(kb_run *r, void *state, kb_verify *v);
    void (*teardown)(kb_run *r, void *state);

    /* OPTIONAL: the instruction path of case c compiled for arch sm; 1 with *out filled, 0
     * where the family does not say (a vendor library: its instructions are its own). */
    int (*path)(const kb_case *c, int sm, kb_path *out);

    /* OPTIONAL: the static traffic model of case c at its shape on GPU g, for `kbench
     * estimate` (engine/traffic.h; kernels/<family>_model.c); 1 with *out filled, 0 where
     * the family does not say (a vendor library). */
    int (*traffic)(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *out);

    /* OPTIONAL: bit v set when variant v computes another operation over the family's dims
     * (attention's decode and decode_tma: s is the KV length, the queries q_len rows), so that
     * `kbench model` gives its records only to an op that names the variant. The variants set
     * here compute one and the same other operation (reports rank them together). 0: every
     * variant computes the family's operation. */
    uint32_t other_op_variants;
} kb_family;

/* Fill *out with the path "<unit>/<dtype>" ("mma/fp16", "fma/fp32"), or "<unit>/<dtype>/widened"
 * bounded by the f16 rate when widened (fp8 fragments widened to f16). Returns 1, for
 * `return kb_path_set(...)` in a family's path hook. */
int kb_path_set(kb_path *out, const char *unit, kb_dtype dt, int widened);

/* The number of elements of array a, for a descriptor's counts (.n_variants = KB_COUNT(variants)):
 * counted, never written, so a row added to a table is never left out of its count. An array
 * only (GCC's -Wsizeof-pointer-div refuses a pointer). */
#define KB_COUNT(a) ((int)(sizeof (a) / sizeof (a)[0]))

/* Lookups in one descriptor (the registry of families, kb_families[], is kernels/families.h). */
int kb_family_variant_find(const kb_family *f, const char *name); /* index or -1 */
int kb_family_param_find(const kb_family *f, const char *name);   /* index or -1 */
int kb_param_applies(const kb_family *f, int param, int variant); /* 1 when the param is an axis of the variant */

/* Self-describing id: "gelu/vec(VEC=4,form=tanh)/bf16/1000003/pad1/eager". Params that
 * do not apply to the variant are left out, and so are params from n_id_params on at their
 * default; dims joined by 'x'. Writes into b (cleared first). kb_case_id (kernels/families.h)
 * is this with c's family taken from the registry. */
void kb_case_id_of(const kb_family *f, const kb_case *c, kb_sb *b);

#endif /* KB_FAMILY_H */
