/* coll_data.h - the data of a collective: deterministic per-rank inputs, the result every
 * output element must hold, its tolerance, and the element-by-element check (what
 * nccl-tests' -c does), identical on every backend.
 *
 * Input element i of rank r is a pure function of (seed, r, i, dtype, redop, n), so each
 * rank computes the expected result of the whole collective from the inputs of all ranks
 * without receiving them. Values:
 *   - sum, avg, max, min and the copying ops: uniform in [-1, 1) with 24 random bits,
 *     rounded to the dtype (fp16/bf16: round to nearest even); int8: any of the 256 values;
 *   - prod: exact whatever the order: for each element one rank contributes +-m, m in
 *     [1, 2) at the dtype's precision, up to three pairs of other ranks +-2 and +-0.5, the
 *     rest +-1, so every partial product is m x 2^k with |k| <= 3 (nccl-tests' float
 *     product inputs are built on the same idea: verifiable/verifiable.cu genInOutFloatProd).
 *
 * Expected values and tolerances (u = unit roundoff: fp32 2^-24, bf16 2^-8, fp16 2^-11;
 * gamma(k) = k u / (1 - k u), Higham's bound for k roundings):
 *   - sum: the exact sum s (in double). NCCL reduces in the dtype in an order it chooses
 *     (ring: a chain of n-1 additions; tree: log2 n levels; NVLS: in the switch), so the
 *     bound must hold for every order: |got - s| <= gamma(n-1) x sum |x_r|, the worst-case
 *     bound of any summation tree of n terms (its height is at most n-1), plus (n-1) x the
 *     dtype's smallest subnormal for underflow;
 *   - avg (floats): NCCL multiplies each input by (1/n) rounded to the dtype, then sums:
 *     |got - s/n| <= gamma(n+1) x sum |x_r| / n + n x subnormal;
 *   - prod, max, min and every int8 result: exact (tolerance 0); int8 sums and products
 *     wrap modulo 256 as NCCL's int8 arithmetic does, int8 avg is that sum / n truncated;
 *   - the copying ops (all_gather, broadcast, alltoall, sendrecv): the source's input, bit
 *     for bit.
 * nccl-tests instead builds inputs whose sums are exact in any order and compares at
 * 0 ulp (2 for avg); kbench draws general inputs, so that rounding is exercised, and
 * derives the bound.
 */
#ifndef KB_COLL_DATA_H
#define KB_COLL_DATA_H

#include "collective/coll_def.h"

/* One collective call as every rank sees it. */
typedef struct {
    kb_coll_op op;
    kb_dtype dtype;          /* kb_coll_dtype_ok */
    kb_coll_redop redop;     /* for all_reduce and reduce_scatter; ignored otherwise */
    int nranks;              /* >= 1 */
    int root;                /* broadcast's root, in [0, nranks) */
    size_t count;            /* the API count (coll_def.h) */
    uint64_t seed;           /* inputs' seed: the same on every rank */
} kb_coll_desc;

/* The element type's storage size [bytes] (fp32 4, fp16/bf16 2, int8 1). */
size_t kb_coll_esz(kb_dtype dt);

/* Unit roundoff u of a float dtype as above; 0 for int8. */
double kb_coll_unit_roundoff(kb_dtype dt);

/* Storage <-> double for one element of dt (fp16/bf16 rounded to nearest even, int8
 * saturated; NaN stays NaN). */
double kb_coll_load(kb_dtype dt, const void *buf, size_t i);
void kb_coll_store(kb_dtype dt, void *buf, size_t i, double v);

/* Input element i of rank for d (a value representable in d->dtype). */
double kb_coll_input(const kb_coll_desc *d, int rank, size_t i);

/* Fill buf with rank's whole send buffer for d (send_count elements of coll_def.h). */
void kb_coll_fill(const kb_coll_desc *d, int rank, void *buf);

/* What element j of rank's receive buffer must hold: *want, the tolerance *tol (0 =
 * exact) and *src, the rank the element comes from (-1 for a reduction of every rank's). */
void kb_coll_expect(const kb_coll_desc *d, int rank, size_t j, double *want, double *tol, int *src);

#define KB_COLL_MAX_SUSPECTS 8

/* The outcome of checking one receive buffer. */
typedef struct {
    int64_t checked, wrong;          /* elements */
    int64_t first_wrong;             /* index of the first wrong element, -1 none */
    double got_at_first, want_at_first;
    double max_err;                  /* largest |got - want| over the checked elements */
    double max_tol;                  /* largest tolerance applied */
    int n_suspects;                  /* distinct source ranks of wrong copied elements */
    int suspects[KB_COLL_MAX_SUSPECTS]; /* the first of them, ascending */
} kb_coll_check;

/* Check rank's receive buffer recv (recv_count elements) against kb_coll_expect. An
 * element passes when |got - want| <= tol (a NaN fails; copied elements are compared bit
 * for bit). Returns the number of wrong elements. */
int64_t kb_coll_verify(const kb_coll_desc *d, int rank, const void *recv, kb_coll_check *out);

/* Record src as a suspect in c (kept ascending and distinct, at most KB_COLL_MAX_SUSPECTS). */
void kb_coll_add_suspect(kb_coll_check *c, int src);

#endif /* KB_COLL_DATA_H */
