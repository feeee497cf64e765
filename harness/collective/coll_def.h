/* coll_def.h - what a collective is, as nccl-tests defines it: the ops, dtypes and
 * reduction ops kbench benchmarks, each op's buffer counts and reported size, the
 * algorithm and bus bandwidth, and the size sweep (-b/-e/-f/-i).
 *
 * Sources (NVIDIA/nccl-tests at NCCL_TESTS_VERSION 2.19.6, docs/collectives.md):
 *   - counts and sizes: src/<op>.cu, <Op>GetCollByteCount; the size printed per line is
 *     max(sendBytes, recvBytes) (src/common.cu, TimeTest); the sweep turns a size in bytes
 *     into count = size / sizeof(dtype), and all_gather, reduce_scatter and alltoall take
 *     count / nranks per rank rounded down to a multiple of 16 bytes;
 *   - bandwidths: src/<op>.cu, <Op>GetBw, and doc/PERFORMANCE.md: algbw = size / time,
 *     busbw = algbw x factor with factor all_reduce 2(n-1)/n, all_gather, reduce_scatter and
 *     alltoall (n-1)/n, broadcast (and reduce) 1, sendrecv 1;
 *   - sweep: src/common.cu: sizes from -b (minbytes) to -e (maxbytes), multiplied by -f
 *     (stepfactor) when it is > 1, else increased by -i (stepbytes); sizes parsed with K, M,
 *     G suffixes (powers of 1024).
 */
#ifndef KB_COLL_DEF_H
#define KB_COLL_DEF_H

#include "core/kb.h"

typedef enum {
    KB_COLL_ALL_REDUCE = 0,
    KB_COLL_ALL_GATHER,
    KB_COLL_REDUCE_SCATTER,
    KB_COLL_BROADCAST,
    KB_COLL_ALLTOALL,
    KB_COLL_SENDRECV,     /* ring neighbour: send to rank + 1, receive from rank - 1 */
    KB_COLL_OP_COUNT
} kb_coll_op;

typedef enum {
    KB_REDOP_SUM = 0,
    KB_REDOP_PROD,
    KB_REDOP_MAX,
    KB_REDOP_MIN,
    KB_REDOP_AVG,         /* ncclAvg, NCCL >= 2.10 */
    KB_REDOP_COUNT
} kb_coll_redop;

const char *kb_coll_op_name(kb_coll_op op);          /* "all_reduce", ... ; "?" out of range */
int kb_coll_op_parse(const char *s, kb_coll_op *out); /* 0, or -1 for an unknown name */
const char *kb_coll_redop_name(kb_coll_redop r);     /* "sum", "prod", "max", "min", "avg" */
int kb_coll_redop_parse(const char *s, kb_coll_redop *out);
/* 1 when op reduces (all_reduce, reduce_scatter): the redop applies. */
int kb_coll_op_reduces(kb_coll_op op);
/* 1 for the dtypes the collectives carry: fp32, bf16, fp16, int8. */
int kb_coll_dtype_ok(kb_dtype dt);

/* The element counts of one call, from the API's count argument (NCCL's: count for
 * all_reduce, broadcast and sendrecv; sendcount for all_gather; recvcount for
 * reduce_scatter; the count per peer for alltoall). */
typedef struct {
    size_t count;         /* the API's argument [elements] */
    size_t send_count;    /* elements of the send buffer */
    size_t recv_count;    /* elements of the receive buffer */
} kb_coll_counts;

/* The counts of op over n ranks for the API count (n >= 1). */
void kb_coll_counts_of(kb_coll_op op, size_t count, int n, kb_coll_counts *out);

/* The API count nccl-tests runs for a sweep size: size / esz, and for all_gather,
 * reduce_scatter and alltoall that / n rounded down to a multiple of 16 bytes. */
size_t kb_coll_count_of_size(kb_coll_op op, uint64_t size_bytes, size_t esz, int n);

/* The size nccl-tests reports for a call: max(send, recv) elements x esz [bytes]. */
uint64_t kb_coll_size_bytes(const kb_coll_counts *c, size_t esz);

/* The bus bandwidth factor of op over n ranks (all_reduce 2(n-1)/n ...; 0 for n < 1). */
double kb_coll_busbw_factor(kb_coll_op op, int n);

/* algbw = size / time [GB/s, 1e9 bytes]; busbw = algbw x factor. time_us > 0. */
void kb_coll_bandwidth(kb_coll_op op, int n, uint64_t size_bytes, double time_us, double *algbw_gbs,
                       double *busbw_gbs);

/* ---- the size sweep ---- */

#define KB_COLL_MAX_SIZES 4096                 /* sizes one sweep may hold */
#define KB_COLL_MAX_BYTES (1ull << 40)         /* the largest size accepted [bytes] */

typedef struct {
    uint64_t min_bytes, max_bytes;   /* -b, -e */
    uint64_t step_bytes;             /* -i: used when factor <= 1 */
    uint64_t factor;                 /* -f */
} kb_coll_sweep;

/* nccl-tests' size syntax: a decimal number with an optional K, M or G (x 1024^k, either
 * case), up to KB_COLL_MAX_BYTES. 0, or -1 with the reason in err (which names what). */
int kb_coll_parse_size(const char *s, const char *what, uint64_t *out, char *err, size_t n);

/* The sizes of a sweep into out (room for max entries): the number written, or -1 with the
 * reason in err when min > max, the sweep never advances (factor <= 1 and step 0), or it
 * holds more than max sizes. */
int kb_coll_sweep_sizes(const kb_coll_sweep *s, uint64_t *out, int max, char *err, size_t n);

#endif /* KB_COLL_DEF_H */
