/* coll_emu.c - ring collectives over the emu transport (see coll_emu.h). */
#include "collective/coll_emu.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PIECE (64u << 10)   /* broadcast pipeline piece [bytes] */

typedef struct {
    kb_coll_comm *c;
    const kb_coll_desc *d;
    size_t esz;
    int next, prev;
} ctx;

/* ---- reductions, element by element in the dtype ---- */

static double apply(kb_coll_redop op, kb_dtype dt, double a, double b)
{
    switch (op) {
    case KB_REDOP_PROD: return dt == KB_DT_FP32 ? (double)((float)a * (float)b) : a * b;
    case KB_REDOP_MAX: return a > b ? a : b;
    case KB_REDOP_MIN: return a < b ? a : b;
    default: return dt == KB_DT_FP32 ? (double)((float)a + (float)b) : a + b;   /* sum, avg */
    }
}

/* dst[i] = dst[i] op src[i] for m elements, rounded to the dtype (int8 wraps). */
static void reduce_into(const kb_coll_desc *d, void *dst, const void *src, size_t m)
{
    for (size_t i = 0; i < m; i++) {
        double v = apply(d->redop, d->dtype, kb_coll_load(d->dtype, dst, i), kb_coll_load(d->dtype, src, i));
        if (d->dtype == KB_DT_INT8)
            ((int8_t *)dst)[i] = (int8_t)(uint8_t)(((int64_t)v % 256 + 256) % 256);
        else
            kb_coll_store(d->dtype, dst, i, v);
    }
}

/* avg's pre-operation on floats: x * (1/n rounded to the dtype), rounded. */
static void avg_pre(const kb_coll_desc *d, void *buf, size_t m)
{
    unsigned char s[4];
    kb_coll_store(d->dtype, s, 0, 1.0 / d->nranks);
    double inv = kb_coll_load(d->dtype, s, 0);
    for (size_t i = 0; i < m; i++)
        kb_coll_store(d->dtype, buf, i, apply(KB_REDOP_PROD, d->dtype, kb_coll_load(d->dtype, buf, i), inv));
}

/* avg's post-operation on int8: the wrapped sum / n, truncated. */
static void avg_post(const kb_coll_desc *d, void *buf, size_t m)
{
    for (size_t i = 0; i < m; i++)
        ((int8_t *)buf)[i] = (int8_t)(((int8_t *)buf)[i] / d->nranks);
}

/* ---- transfers ---- */

static kb_status exchange(ctx *x, const void *out, size_t out_bytes, void *in, size_t in_bytes)
{
    kb_coll_io io[2] = { { x->next, 1, (void *)out, out_bytes, 0 }, { x->prev, 0, in, in_bytes, 0 } };
    return kb_coll_xfer(x->c, io, 2);
}

/* Chunk i of count elements split n ways: its first element and length. */
static void chunk(size_t count, int n, int i, size_t *off, size_t *len)
{
    size_t a = count * (size_t)i / (size_t)n, b = count * (size_t)(i + 1) / (size_t)n;
    *off = a;
    *len = b - a;
}

/* Ring reduce-scatter over buf in n pieces (blocks of count elements, or count split into
 * chunks): step s sends piece rank + shift - s - 1 and reduces the received piece
 * rank + shift - s - 2 into its own copy, so after n - 1 steps this rank holds the whole
 * reduction of piece (rank + shift) mod n. */
static kb_status ring_reduce(ctx *x, char *buf, size_t count, int blocks, int shift, char *tmp)
{
    int n = x->c->size, r = x->c->rank;
    for (int s = 0; s < n - 1; s++) {
        int out = ((r - s + shift - 1) % n + n) % n, in = ((r - s + shift - 2) % n + n) % n;
        size_t oo, ol, io, il;
        if (blocks) {
            oo = (size_t)out * count, ol = count, io = (size_t)in * count, il = count;
        } else {
            chunk(count, n, out, &oo, &ol);
            chunk(count, n, in, &io, &il);
        }
        kb_status st = exchange(x, buf + oo * x->esz, ol * x->esz, tmp, il * x->esz);
        if (st != KB_OK)
            return st;
        reduce_into(x->d, buf + io * x->esz, tmp, il);
    }
    return KB_OK;
}

/* Ring all-gather of the n chunks of buf, this rank holding chunk (rank + shift) mod n. */
static kb_status ring_gather(ctx *x, char *buf, size_t count, int blocks, int shift)
{
    int n = x->c->size, r = x->c->rank;
    for (int s = 0; s < n - 1; s++) {
        int out = ((r + shift - s) % n + n) % n, in = ((r + shift - s - 1) % n + n) % n;
        size_t oo, ol, io, il;
        if (blocks) {
            oo = (size_t)out * count, ol = count, io = (size_t)in * count, il = count;
        } else {
            chunk(count, n, out, &oo, &ol);
            chunk(count, n, in, &io, &il);
        }
        kb_status st = exchange(x, buf + oo * x->esz, ol * x->esz, buf + io * x->esz, il * x->esz);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

static kb_status all_reduce(ctx *x, const void *send, void *recv)
{
    const kb_coll_desc *d = x->d;
    int n = x->c->size;
    size_t own_off, own_len;
    memcpy(recv, send, d->count * x->esz);
    if (d->redop == KB_REDOP_AVG && d->dtype != KB_DT_INT8)
        avg_pre(d, recv, d->count);
    char *tmp = malloc((d->count / (size_t)n + 1) * x->esz);
    if (!tmp)
        return KB_ERR_OOM;
    kb_status st = ring_reduce(x, recv, d->count, 0, 1, tmp);   /* owns chunk rank + 1 */
    free(tmp);
    chunk(d->count, n, (x->c->rank + 1) % n, &own_off, &own_len);
    if (st == KB_OK && d->redop == KB_REDOP_AVG && d->dtype == KB_DT_INT8)
        avg_post(d, (char *)recv + own_off * x->esz, own_len);
    return st == KB_OK ? ring_gather(x, recv, d->count, 0, 1) : st;
}

static kb_status reduce_scatter(ctx *x, const void *send, void *recv)
{
    const kb_coll_desc *d = x->d;
    size_t all = d->count * (size_t)x->c->size;
    char *work = malloc(all * x->esz + 1), *tmp = malloc(d->count * x->esz + 1);
    kb_status st = work && tmp ? KB_OK : KB_ERR_OOM;
    if (st == KB_OK) {
        memcpy(work, send, all * x->esz);
        if (d->redop == KB_REDOP_AVG && d->dtype != KB_DT_INT8)
            avg_pre(d, work, all);
        st = ring_reduce(x, work, d->count, 1, 0, tmp);   /* owns block rank */
    }
    if (st == KB_OK) {
        memcpy(recv, work + (size_t)x->c->rank * d->count * x->esz, d->count * x->esz);
        if (d->redop == KB_REDOP_AVG && d->dtype == KB_DT_INT8)
            avg_post(d, recv, d->count);
    }
    free(work);
    free(tmp);
    return st;
}

/* Bytes of broadcast piece i (i < the number of pieces). */
static size_t piece_len(size_t bytes, size_t i) { return bytes - i * PIECE < PIECE ? bytes - i * PIECE : PIECE; }

static kb_status broadcast(ctx *x, const void *send, void *recv)
{
    size_t bytes = x->d->count * x->esz;
    int n = x->c->size, k = (x->c->rank - x->d->root + n) % n;   /* position after the root */
    if (k == 0) {
        memcpy(recv, send, bytes);
        kb_coll_io io = { x->next, 1, recv, bytes, 0 };
        return n > 1 ? kb_coll_xfer(x->c, &io, 1) : KB_OK;
    }
    size_t pieces = (bytes + PIECE - 1) / PIECE;
    for (size_t i = 0; i <= pieces; i++) {   /* receive piece i while forwarding piece i - 1 */
        kb_coll_io io[2];
        int m = 0;
        if (i < pieces)
            io[m++] = (kb_coll_io){ x->prev, 0, (char *)recv + i * PIECE, piece_len(bytes, i), 0 };
        if (i > 0 && k < n - 1)
            io[m++] = (kb_coll_io){ x->next, 1, (char *)recv + (i - 1) * PIECE, piece_len(bytes, i - 1), 0 };
        kb_status st = m ? kb_coll_xfer(x->c, io, m) : KB_OK;
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

static kb_status alltoall(ctx *x, const void *send, void *recv)
{
    int n = x->c->size, r = x->c->rank;
    size_t b = x->d->count * x->esz;
    memcpy((char *)recv + (size_t)r * b, (const char *)send + (size_t)r * b, b);
    for (int s = 1; s < n; s++) {
        int to = (r + s) % n, from = (r - s + n) % n;
        kb_coll_io io[2] = { { to, 1, (char *)send + (size_t)to * b, b, 0 },
                             { from, 0, (char *)recv + (size_t)from * b, b, 0 } };
        kb_status st = kb_coll_xfer(x->c, io, 2);
        if (st != KB_OK)
            return st;
    }
    return KB_OK;
}

kb_status kb_coll_emu_run(kb_coll_comm *c, const kb_coll_desc *d, const void *send, void *recv)
{
    if (!kb_coll_dtype_ok(d->dtype) || d->nranks != c->size || (unsigned)d->op >= KB_COLL_OP_COUNT ||
        (unsigned)d->redop >= KB_REDOP_COUNT || d->root < 0 || d->root >= c->size) {
        snprintf(c->err, sizeof c->err, "emu transport: %s of %s over %d ranks (root %d) on a communicator of %d",
                 kb_coll_op_name(d->op), kb_dtype_name(d->dtype), d->nranks, d->root, c->size);
        return KB_ERR_INPUT;
    }
    ctx x = { c, d, kb_coll_esz(d->dtype), (c->rank + 1) % c->size, (c->rank + c->size - 1) % c->size };
    kb_status st;
    switch (d->op) {
    case KB_COLL_ALL_REDUCE: st = all_reduce(&x, send, recv); break;
    case KB_COLL_REDUCE_SCATTER: st = reduce_scatter(&x, send, recv); break;
    case KB_COLL_ALL_GATHER:
        memcpy((char *)recv + (size_t)c->rank * d->count * x.esz, send, d->count * x.esz);
        st = ring_gather(&x, recv, d->count, 1, 0);
        break;
    case KB_COLL_BROADCAST: st = broadcast(&x, send, recv); break;
    case KB_COLL_ALLTOALL: st = alltoall(&x, send, recv); break;
    default:
        if (c->size == 1) {
            memcpy(recv, send, d->count * x.esz);
            st = KB_OK;
        } else {
            st = exchange(&x, send, d->count * x.esz, recv, d->count * x.esz);
        }
        break;
    }
    if (st == KB_ERR_OOM)
        snprintf(c->err, sizeof c->err, "emu transport: out of memory (%s of %zu elements)", kb_coll_op_name(d->op),
                 d->count);
    return st;
}
