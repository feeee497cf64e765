/* coll_def.c - ops, counts, bandwidths and the sweep as nccl-tests defines them (see
 * coll_def.h for the sources). */
#include "collective/coll_def.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const op_names[] = { "all_reduce", "all_gather", "reduce_scatter", "broadcast", "alltoall",
                                        "sendrecv" };
_Static_assert(sizeof op_names / sizeof op_names[0] == KB_COLL_OP_COUNT, "one name per kb_coll_op");
static const char *const redop_names[] = { "sum", "prod", "max", "min", "avg" };
_Static_assert(sizeof redop_names / sizeof redop_names[0] == KB_REDOP_COUNT, "one name per kb_coll_redop");

const char *kb_coll_op_name(kb_coll_op op) { return (unsigned)op < KB_COLL_OP_COUNT ? op_names[op] : "?"; }
const char *kb_coll_redop_name(kb_coll_redop r) { return (unsigned)r < KB_REDOP_COUNT ? redop_names[r] : "?"; }

static int lookup(const char *const *names, int count, const char *s)
{
    for (int i = 0; s && i < count; i++)
        if (!strcmp(names[i], s))
            return i;
    return -1;
}

int kb_coll_op_parse(const char *s, kb_coll_op *out)
{
    int i = lookup(op_names, KB_COLL_OP_COUNT, s);
    if (i >= 0)
        *out = (kb_coll_op)i;
    return i >= 0 ? 0 : -1;
}

int kb_coll_redop_parse(const char *s, kb_coll_redop *out)
{
    int i = lookup(redop_names, KB_REDOP_COUNT, s);
    if (i >= 0)
        *out = (kb_coll_redop)i;
    return i >= 0 ? 0 : -1;
}

int kb_coll_op_reduces(kb_coll_op op) { return op == KB_COLL_ALL_REDUCE || op == KB_COLL_REDUCE_SCATTER; }

int kb_coll_dtype_ok(kb_dtype dt)
{
    return dt == KB_DT_FP32 || dt == KB_DT_BF16 || dt == KB_DT_FP16 || dt == KB_DT_INT8;
}

void kb_coll_counts_of(kb_coll_op op, size_t count, int n, kb_coll_counts *out)
{
    size_t all = count * (size_t)(n > 0 ? n : 1);
    out->count = count;
    out->send_count = op == KB_COLL_REDUCE_SCATTER || op == KB_COLL_ALLTOALL ? all : count;
    out->recv_count = op == KB_COLL_ALL_GATHER || op == KB_COLL_ALLTOALL ? all : count;
}

size_t kb_coll_count_of_size(kb_coll_op op, uint64_t size_bytes, size_t esz, int n)
{
    size_t count = (size_t)(size_bytes / (esz ? esz : 1));
    if (op != KB_COLL_ALL_GATHER && op != KB_COLL_REDUCE_SCATTER && op != KB_COLL_ALLTOALL)
        return count;
    /* (count / nranks) & ~(16 / eltSize - 1): a multiple of 16 bytes per rank */
    size_t align = 16 / (esz ? esz : 1);
    return (count / (size_t)(n > 0 ? n : 1)) & ~(align - 1);
}

uint64_t kb_coll_size_bytes(const kb_coll_counts *c, size_t esz)
{
    size_t m = c->send_count > c->recv_count ? c->send_count : c->recv_count;
    return (uint64_t)m * esz;
}

double kb_coll_busbw_factor(kb_coll_op op, int n)
{
    if (n < 1)
        return 0;
    switch (op) {
    case KB_COLL_ALL_REDUCE: return 2.0 * (n - 1) / n;
    case KB_COLL_ALL_GATHER: case KB_COLL_REDUCE_SCATTER: case KB_COLL_ALLTOALL: return (double)(n - 1) / n;
    default: return 1.0;   /* broadcast, sendrecv (and reduce): the root's or the pair's link */
    }
}

void kb_coll_bandwidth(kb_coll_op op, int n, uint64_t size_bytes, double time_us, double *algbw_gbs,
                       double *busbw_gbs)
{
    double alg = time_us > 0 ? (double)size_bytes / 1e9 / (time_us * 1e-6) : 0;
    *algbw_gbs = alg;
    *busbw_gbs = alg * kb_coll_busbw_factor(op, n);
}

/* ---- the size sweep ---- */

int kb_coll_parse_size(const char *s, const char *what, uint64_t *out, char *err, size_t n)
{
    char *end;
    errno = 0;
    unsigned long long v = s && *s >= '0' && *s <= '9' ? strtoull(s, &end, 10) : 0;
    if (!s || !(*s >= '0' && *s <= '9') || errno) {
        snprintf(err, n, "%s '%.40s': expected a size in bytes (a number with an optional K, M or G)", what,
                 s ? s : "");
        return -1;
    }
    int shift = 0;
    switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
    }
    if (*end || v > (KB_COLL_MAX_BYTES >> shift)) {
        snprintf(err, n, "%s '%.40s': expected a size in bytes up to 1T (a number with an optional K, M or G)", what,
                 s);
        return -1;
    }
    *out = (uint64_t)v << shift;
    return 0;
}

int kb_coll_sweep_sizes(const kb_coll_sweep *s, uint64_t *out, int max, char *err, size_t n)
{
    if (s->min_bytes > s->max_bytes) {
        snprintf(err, n, "the sweep's minimum size %llu is above its maximum %llu", (unsigned long long)s->min_bytes,
                 (unsigned long long)s->max_bytes);
        return -1;
    }
    int k = 0;
    for (uint64_t size = s->min_bytes;;) {
        if (k >= max) {
            snprintf(err, n, "the sweep from %llu to %llu bytes holds more than %d sizes",
                     (unsigned long long)s->min_bytes, (unsigned long long)s->max_bytes, max);
            return -1;
        }
        out[k++] = size;
        uint64_t next = s->factor > 1 ? size * s->factor : size + s->step_bytes;
        if (size == s->max_bytes || (s->factor > 1 && size && next / s->factor != size))
            break;      /* done, or the next size would overflow */
        if (next == size) {
            snprintf(err, n, "the sweep never advances from %llu bytes (factor %llu, step %llu)",
                     (unsigned long long)size, (unsigned long long)s->factor, (unsigned long long)s->step_bytes);
            return -1;
        }
        if (next > s->max_bytes)
            break;
        size = next;
    }
    return k;
}
