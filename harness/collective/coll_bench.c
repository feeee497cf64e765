/* coll_bench.c - one size measured and verified (see coll_bench.h). */
#include "collective/coll_bench.h"

#include "collective/rdv_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What each rank reports to the others after a size. */
typedef struct {
    double time_us, busy_us;
    int64_t wrong;
    int32_t n_suspects, suspects[KB_COLL_MAX_SUSPECTS];
} summary;

static void corrupt(void *buf, size_t bytes) { memset(buf, 0xFF, bytes < 4 ? bytes : 4); }

/* Every rank sends its send buffer (up to KB_COLL_CHECK_BYTES) straight to every other;
 * each checks what it received, and its own, against the generator. */
static kb_status check_contributions(kb_coll_comm *c, const kb_coll_desc *d, const void *send, size_t bytes,
                                     kb_coll_check *chk)
{
    size_t m = bytes < KB_COLL_CHECK_BYTES ? bytes : KB_COLL_CHECK_BYTES, esz = kb_coll_esz(d->dtype);
    char *got = malloc((size_t)c->size * m + 1), *want = malloc(bytes + 1);
    kb_coll_io *ios = calloc(2 * (size_t)c->size, sizeof *ios);
    kb_status st = got && want && ios ? KB_OK : KB_ERR_OOM;
    int k = 0;
    for (int q = 0; st == KB_OK && q < c->size; q++) {
        if (q == c->rank) {
            memcpy(got + (size_t)q * m, send, m);
            continue;
        }
        ios[k++] = (kb_coll_io){ q, 1, (void *)send, m, 0 };
        ios[k++] = (kb_coll_io){ q, 0, got + (size_t)q * m, m, 0 };
    }
    if (st == KB_OK)
        st = kb_coll_xfer(c, ios, k);
    for (int q = 0; st == KB_OK && q < c->size; q++) {
        kb_coll_fill(d, q, want);
        for (size_t i = 0; i < m / esz; i++)
            if (memcmp(got + (size_t)q * m + i * esz, want + i * esz, esz)) {
                kb_coll_add_suspect(chk, q);
                break;
            }
    }
    if (st == KB_ERR_OOM)
        snprintf(c->err, sizeof c->err, "emu transport: out of memory (checking contributions)");
    free(got);
    free(want);
    free(ios);
    return st;
}

/* The ranks' summaries into out (time averaged, wrong summed, suspects joined). */
static kb_status gather_summaries(kb_coll_comm *c, summary *mine, kb_coll_result *out)
{
    summary *all = calloc((size_t)c->size, sizeof *all);
    if (!all)
        return KB_ERR_OOM;
    kb_status st = kb_coll_allgather_ctl(c, mine, sizeof *mine, all);
    out->time_us = out->time_us_max = out->busy_us_max = 0;
    out->wrong_all = 0;
    kb_coll_check joined = { 0 };
    for (int q = 0; st == KB_OK && q < c->size; q++) {
        out->time_us += all[q].time_us / c->size;
        out->time_us_max = all[q].time_us > out->time_us_max ? all[q].time_us : out->time_us_max;
        if (all[q].busy_us > out->busy_us_max) {
            out->busy_us_max = all[q].busy_us;
            out->busiest = q;
        }
        out->wrong_all += all[q].wrong;
        for (int i = 0; i < all[q].n_suspects && i < KB_COLL_MAX_SUSPECTS; i++)
            kb_coll_add_suspect(&joined, all[q].suspects[i]);
    }
    out->n_suspects = joined.n_suspects;
    memcpy(out->suspects, joined.suspects, sizeof out->suspects);
    free(all);
    return st;
}

/* Warm-up, then the timed calls: the mean time and busy time per call on this rank. */
static kb_status timed(kb_coll_comm *c, const kb_coll_desc *d, const void *send, void *recv, int warmup, int iters,
                       summary *mine)
{
    char one = 1, *sync = malloc((size_t)c->size);
    kb_status st = sync ? KB_OK : KB_ERR_OOM;
    for (int i = 0; st == KB_OK && i < warmup; i++)
        st = kb_coll_emu_run(c, d, send, recv);
    if (st == KB_OK)
        st = kb_coll_allgather_ctl(c, &one, 1, sync);   /* start together */
    double t0 = kb_rdv_now(), w0 = c->wait_s;
    for (int i = 0; st == KB_OK && i < iters; i++)
        st = kb_coll_emu_run(c, d, send, recv);
    double t = kb_rdv_now() - t0, w = c->wait_s - w0;
    mine->time_us = t / iters * 1e6;
    mine->busy_us = (t - w) / iters * 1e6;
    free(sync);
    return st;
}

kb_status kb_coll_bench(kb_coll_comm *c, const kb_coll_desc *d, int warmup, int iters, kb_coll_result *out)
{
    memset(out, 0, sizeof *out);
    out->desc = *d;
    out->warmup = warmup;
    out->iters = iters < 1 ? 1 : iters;
    out->clock = "cpu";
    out->launch = "eager";   /* the emu transport is host calls: there is no launch to capture */
    kb_coll_counts cn;
    kb_coll_counts_of(d->op, d->count, d->nranks, &cn);
    size_t esz = kb_coll_esz(d->dtype), sb = cn.send_count * esz, rb = cn.recv_count * esz;
    out->size_bytes = kb_coll_size_bytes(&cn, esz);
    char *send = malloc(sb + 1), *recv = malloc(rb + 1);
    if (!send || !recv) {
        free(send);
        free(recv);
        snprintf(c->err, sizeof c->err, "emu transport: out of memory (%zu + %zu bytes)", sb, rb);
        return KB_ERR_OOM;
    }
    kb_coll_fill(d, c->rank, send);
    if (c->corrupt)
        corrupt(send, sb);
    memset(recv, 0xFF, rb);   /* poison: an element never written reads as NaN / -1 */
    summary mine = { 0 };
    kb_status st = timed(c, d, send, recv, warmup, out->iters, &mine);
    if (st == KB_OK) {
        mine.wrong = kb_coll_verify(d, c->rank, recv, &out->check);
        mine.n_suspects = out->check.n_suspects;   /* sources of wrong copies */
        memcpy(mine.suspects, out->check.suspects, sizeof mine.suspects);
        st = gather_summaries(c, &mine, out);
    }
    if (st == KB_OK && out->wrong_all > 0) {
        st = check_contributions(c, d, send, sb, &out->check);
        mine.n_suspects = out->check.n_suspects;
        memcpy(mine.suspects, out->check.suspects, sizeof mine.suspects);
        if (st == KB_OK)
            st = gather_summaries(c, &mine, out);
    }
    out->busy_us = mine.busy_us;
    kb_coll_bandwidth(d->op, d->nranks, out->size_bytes, out->time_us, &out->algbw_gbs, &out->busbw_gbs);
    free(send);
    free(recv);
    return st;
}
