/* emu_wgmma.c - wgmma issue, retirement and numerics (see emu_wgmma.h). */
#include "backend/emu/emu_wgmma.h"

#include "kernels/abi/kb_convert.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One warpgroup's wgmma: the operand values and the chunks they were read from. */
struct kb_emu_wg_op {
    kb_emu_wgmma_op p;            /* the first thread's fields (shape, types, immediates) */
    unsigned K;                   /* elements of K */
    double a[64][32];             /* A (rows x k), negation applied */
    double *b;                    /* [n][K] B (column n, k), negation applied */
    uint32_t *chunks;             /* shared chunks read (offsets), and their bytes at issue */
    unsigned char *snap;
    unsigned n_chunks;
    unsigned refs;                /* threads that have not retired it */
    unsigned issuer;              /* a thread of the warpgroup (reports) */
};

int kb_emu_wg_init(kb_emu_wg *g, size_t arena_bytes)
{
    memset(g, 0, sizeof *g);
    g->stamp = calloc(arena_bytes / 16 + 1, sizeof *g->stamp);
    return g->stamp ? 0 : -1;
}

static void op_free(kb_emu_wg_op *op)
{
    free(op->chunks);
    free(op->snap);
    free(op->b);
    free(op);
}

static void op_release(kb_emu_tma *tma, kb_emu_wg_op *op)
{
    if (--op->refs)
        return;
    for (unsigned i = 0; i < op->n_chunks; i++)
        tma->reading[op->chunks[i] / 16]--;
    op_free(op);
}

static void drop_thread(kb_emu_wg *g, kb_emu_tma *tma, unsigned i)
{
    kb_emu_wg_thread *th = &g->th[i];
    for (unsigned k = 0; k < th->n; k++)
        op_release(tma, th->rec[k].op);
    th->n = 0;
    th->committed = 0;
    th->fenced = 0;
}

void kb_emu_wg_reset(kb_emu_wg *g, kb_emu_tma *tma)
{
    if (g->forming) {            /* a rule failed it while it was built: it reads nothing yet */
        op_free(g->forming);
        g->forming = NULL;
    }
    for (unsigned i = 0; i < KB_EMU_MAX_THREADS; i++)
        if (g->th[i].n || g->th[i].committed || g->th[i].fenced)
            drop_thread(g, tma, i);
}

void kb_emu_wg_fini(kb_emu_wg *g)
{
    for (unsigned i = 0; i < KB_EMU_MAX_THREADS; i++)
        free(g->th[i].rec);
    free(g->stamp);
    memset(g, 0, sizeof *g);
}

uint32_t kb_emu_wg_offset(int swizzle, int mn_major, unsigned es, uint32_t lbo, uint32_t sbo, unsigned row, unsigned k)
{
    unsigned w = swizzle == 1 ? 8 : swizzle == 2 ? 4 : swizzle == 3 ? 2 : 1;
    if (!mn_major) {
        unsigned ok = k * es, kc = ok / 16, kb = ok % 16;
        if (w == 1)
            return (row % 8) * 16 + (row / 8) * sbo + kc * lbo + kb;
        return (row % 8) * 16 * w + (row / 8) * sbo + kc * 16 + kb;
    }
    unsigned orow = row * es, rc = orow / 16, rb = orow % 16;
    if (w == 1)
        return rc * sbo + (k % 8) * 16 + (k / 8) * lbo + rb;
    return (rc % w) * 16 + (rc / w) * lbo + (k % 8) * 16 * w + (k / 8) * sbo + rb;
}

static unsigned elem_size(int type) { return type == KB_EMU_WG_F16 || type == KB_EMU_WG_BF16 ? 2 : type == KB_EMU_WG_TF32 ? 4 : 1; }

static double decode(int type, const unsigned char *p)
{
    uint16_t h;
    uint32_t u;
    float f;
    switch (type) {
    case KB_EMU_WG_F16: memcpy(&h, p, 2); return kb_f16_bits_to_f32(h);
    case KB_EMU_WG_BF16: memcpy(&h, p, 2); return kb_bf16_bits_to_f32(h);
    case KB_EMU_WG_TF32: memcpy(&u, p, 4); u &= 0xffffe000u; memcpy(&f, &u, 4); return f;   /* tf32 reads 10 mantissa bits */
    case KB_EMU_WG_E4M3: return kb_e4m3_bits_to_f32(*p);
    case KB_EMU_WG_E5M2: return kb_e5m2_bits_to_f32(*p);
    default: return (int8_t)*p;
    }
}

/* Read operand X (rows x K) through descriptor desc into out[row * K + k], recording the
 * chunks it occupies (the rules of a read by the async proxy checked on each). */
static void read_operand(kb_emu_wg *g, kb_emu_tma *tma, const kb_emu_proxy *proxy, kb_emu_thr *t, kb_emu_wg_op *op,
                         uint64_t desc, int mn_major, unsigned rows, double *out, double sign, const char *which)
{
    kb_emu_worker *w = t->w;
    unsigned es = elem_size(op->p.type), K = op->K;
    uint32_t start = (uint32_t)(desc & 0x3fffu) << 4, lbo = (uint32_t)((desc >> 16) & 0x3fffu) << 4;
    uint32_t sbo = (uint32_t)((desc >> 32) & 0x3fffu) << 4, base_off = (uint32_t)((desc >> 49) & 7u);
    int sw = (int)(desc >> 62);
    unsigned span = sw == 1 ? 128 : sw == 2 ? 64 : sw == 3 ? 32 : 0;
    if (base_off)
        kb_emu_thread_failf(t, "wgmma: the %s descriptor has base offset %u, which the emulator does not model: place the operand "
             "on its swizzle pattern's repeat (1024/512/256 bytes) and use base offset 0", which, base_off);
    for (unsigned r = 0; r < rows; r++)
        for (unsigned k = 0; k < K; k++) {
            uint32_t a = kb_emu_swizzle(start + kb_emu_wg_offset(sw, mn_major, es, lbo, sbo, r, k), span);
            if ((size_t)a + es > w->sink->shmem_limit_bytes)
                kb_emu_thread_failf(t, "wgmma: the %s operand's element (%u, %u) lies at shared offset %u, outside shared memory "
                     "(descriptor 0x%016llx)", which, r, k, a, (unsigned long long)desc);
            out[r * K + k] = sign * decode(op->p.type, w->smem + a);
            uint32_t c = a / 16;
            if (g->stamp[c] == g->serial)
                continue;
            g->stamp[c] = g->serial;
            unsigned wr;
            uint32_t where;
            if (tma->pending[c])
                kb_emu_thread_failf(t, "wgmma reads shared offset %u (%s operand), where a TMA load has not landed: wait on its "
                     "mbarrier first", c * 16, which);
            if (w->async.pending[c])
                kb_emu_thread_failf(t, "wgmma reads shared offset %u (%s operand), where a cp.async has not landed", c * 16, which);
            /* the layout rule needs the generic stores that re-lay bytes: a checked launch (proxy) */
            if (proxy && tma->laid[c] && tma->laid[c] != kb_emu_laid_of_span(span))
                kb_emu_thread_failf(t, "wgmma descriptor swizzle disagrees with the TMA layout: the %s operand's descriptor says %s, "
                     "but shared offset %u was laid out by a TMA load with the %u-byte swizzle (the tensor map's "
                     "swizzle and the descriptor's must be the same)", which, span ? (span == 128 ? "the 128-byte "
                     "swizzle" : span == 64 ? "the 64-byte swizzle" : "the 32-byte swizzle") : "no swizzle", c * 16,
                     16u << tma->laid[c]);
            if (proxy && kb_emu_proxy_unfenced(proxy, c * 16, 16, &wr, &where))
                kb_emu_thread_failf(t, "async proxy read without fence.proxy.async: wgmma reads shared offset %u (%s operand), which "
                     "thread %u wrote with an ordinary store and did not follow with fence.proxy.async (PTX ISA "
                     "9.7.13.4)", where, which, wr);
            op->chunks[op->n_chunks++] = c * 16;
        }
}

/* The ISA's shapes and immediates (9.7.15.5.1, 9.7.15.5.2). */
static void check_shape(kb_emu_thr *t, const kb_emu_wgmma_op *p)
{
    int ft = p->type == KB_EMU_WG_F16 || p->type == KB_EMU_WG_BF16, n = p->n;
    int n_ok = p->type == KB_EMU_WG_S8 ? (n == 8 || n == 16 || n == 24 || (n % 16 == 0 && n >= 32 && n <= 256))
                                       : (n % 8 == 0 && n >= 8 && n <= 256);
    int acc_ok = p->type == KB_EMU_WG_S8 ? p->acc == KB_EMU_WG_ACC_S32
               : p->type == KB_EMU_WG_F16 || p->type == KB_EMU_WG_E4M3 || p->type == KB_EMU_WG_E5M2
                   ? p->acc == KB_EMU_WG_ACC_F32 || p->acc == KB_EMU_WG_ACC_F16 : p->acc == KB_EMU_WG_ACC_F32;
    if (p->type < KB_EMU_WG_F16 || p->type > KB_EMU_WG_S8 || !n_ok || !acc_ok)
        kb_emu_thread_failf(t, "wgmma: type %d with accumulator %d and N = %d is not a shape the ISA offers (PTX ISA 9.7.15.5.1)",
             p->type, p->acc, n);
    if (!ft && (p->trans_a || p->trans_b))
        kb_emu_thread_failf(t, "wgmma: the transpose immediates exist for f16/bf16 only (PTX ISA 9.7.15.5.2)");
    if (p->type == KB_EMU_WG_S8 && (p->neg_a || p->neg_b))
        kb_emu_thread_failf(t, "wgmma: integer wgmma has no scale-a/scale-b immediates (PTX ISA 9.7.15.5.2)");
    if (p->a_regs && p->trans_a)
        kb_emu_thread_failf(t, "wgmma: A from registers cannot be transposed (PTX ISA 9.7.15.5.2)");
}

/* The last thread of the warpgroup in: agreement, then the operands (A from the 128 threads'
 * registers in the RS form). */
static kb_emu_wg_op *build_op(kb_emu_wg *g, kb_emu_tma *tma, const kb_emu_proxy *proxy, kb_emu_thr *t,
                              const void *const *slots)
{
    const kb_emu_wgmma_op *p0 = slots[0];
    for (unsigned i = 1; i < 128; i++) {
        const kb_emu_wgmma_op *q = slots[i];
        if (q->type != p0->type || q->acc != p0->acc || q->n != p0->n || q->neg_a != p0->neg_a ||
            q->neg_b != p0->neg_b || q->trans_a != p0->trans_a || q->trans_b != p0->trans_b ||
            !q->scale_d != !p0->scale_d || (!q->a_regs) != (!p0->a_regs) || q->desc_b != p0->desc_b ||
            (!q->a_regs && q->desc_a != p0->desc_a))
            kb_emu_thread_failf(t, "wgmma: the threads of warpgroup %u disagree (thread %u vs thread 0 of the warpgroup: shape, "
                 "types, immediates, scale-d or descriptors): wgmma.mma_async is .sync.aligned, every thread "
                 "executes the same one", t->pub.linear / 128, i);
    }
    check_shape(t, p0);
    kb_emu_wg_op *op = calloc(1, sizeof *op);
    unsigned K = 32 / elem_size(p0->type), n = (unsigned)p0->n;
    g->forming = op;
    if (!op || !(op->b = calloc((size_t)n * K, sizeof *op->b)) ||
        !(op->chunks = malloc((64 + n) * K * sizeof *op->chunks)))
        kb_emu_thread_fail(t, KB_ERR_OOM, "wgmma: out of memory");
    op->p = *p0;
    op->K = K;
    op->refs = 128;
    op->issuer = t->pub.linear;
    g->serial++;
    if (p0->a_regs) {
        unsigned es = elem_size(p0->type), epr = 4 / es;
        for (unsigned i = 0; i < 128; i++)
            for (unsigned r = 0; r < 4; r++)
                for (unsigned e = 0; e < epr; e++) {
                    unsigned row = 16 * (i / 32) + (i % 32) / 4 + 8 * (r & 1), col = epr * (i % 4) + e + K / 2 * (r >> 1);
                    uint32_t v = ((const kb_emu_wgmma_op *)slots[i])->a_regs[r] >> (8 * es * e);
                    unsigned char bytes[4];
                    memcpy(bytes, &v, 4);
                    op->a[row][col] = (p0->neg_a ? -1.0 : 1.0) * decode(p0->type, bytes);
                }
    } else {
        double tmp[64 * 32];
        read_operand(g, tma, proxy, t, op, p0->desc_a, p0->trans_a, 64, tmp, p0->neg_a ? -1.0 : 1.0, "A");
        for (unsigned r = 0; r < 64; r++)
            memcpy(op->a[r], tmp + r * K, K * sizeof(double));
    }
    read_operand(g, tma, proxy, t, op, p0->desc_b, p0->trans_b, n, op->b, p0->neg_b ? -1.0 : 1.0, "B");
    op->snap = malloc((size_t)op->n_chunks * 16 + 1);
    if (!op->snap)
        kb_emu_thread_fail(t, KB_ERR_OOM, "wgmma: out of memory");
    for (unsigned i = 0; i < op->n_chunks; i++) {
        memcpy(op->snap + 16 * i, t->w->smem + op->chunks[i], 16);
        tma->reading[op->chunks[i] / 16]++;
    }
    g->issued++;
    g->forming = NULL;
    return op;
}

static unsigned acc_words(const kb_emu_wgmma_op *p) { return p->acc == KB_EMU_WG_ACC_F16 ? (unsigned)p->n / 4 : (unsigned)p->n / 2; }

void kb_emu_wg_fence(kb_emu_wg *g, kb_emu_thr *t) { g->th[t->pub.linear].fenced = 1; }

void kb_emu_wg_mma(kb_emu_wg *g, kb_emu_tma *tma, const kb_emu_proxy *proxy, kb_emu_thr *t, const kb_emu_wgmma_op *op)
{
    kb_emu_wg_thread *th = &g->th[t->pub.linear];
    if ((t->pub.linear / 128 + 1) * 128 > t->w->n)
        kb_emu_thread_failf(t, "wgmma.mma_async by a warpgroup of %u threads: a warpgroup is 4 whole warps, 128 threads (PTX ISA "
             "9.7.15.1), and the block has %u", t->w->n - t->pub.linear / 128 * 128, t->w->n);
    if (!th->fenced)
        kb_emu_thread_failf(t, "wgmma.mma_async without a wgmma.fence since this thread's last wgmma.wait_group: the fence orders "
             "the thread's register accesses before the asynchronous wgmma (PTX ISA 9.7.15.7.1)");
    if (!th->rec && !(th->rec = calloc(KB_EMU_WG_MAX_INFLIGHT, sizeof *th->rec)))
        kb_emu_thread_fail(t, KB_ERR_OOM, "wgmma: out of memory");
    if (th->n == KB_EMU_WG_MAX_INFLIGHT)
        kb_emu_thread_failf(t, "more than %d wgmma in flight in one thread (an emulator limit)", KB_EMU_WG_MAX_INFLIGHT);
    kb_emu_wg_rec *r = &th->rec[th->n];
    memset(r, 0, sizeof *r);
    r->d = op->d;
    r->words = acc_words(op);
    r->scale_d = op->scale_d;
    for (unsigned k = 0; k < th->n; k++)
        r->chained |= th->rec[k].d == op->d;
    if (r->scale_d && !r->chained && r->words <= 128)
        memcpy(r->saved, op->d, r->words * 4);
    if (op->a_regs) {
        r->a_ptr = op->a_regs;
        memcpy(r->a_snap, op->a_regs, sizeof r->a_snap);
    }
    const void *const *slots;
    if (kb_emu_wg_rendezvous(t, op, &slots, "wgmma.mma_async")) {
        kb_emu_wg_op *o = build_op(g, tma, proxy, t, slots);
        for (unsigned i = 0; i < 128; i++) {   /* every thread's newest record gets the op */
            kb_emu_wg_thread *x = &g->th[t->pub.linear / 128 * 128 + i];
            x->rec[x->n].op = o;
            x->rec[x->n].group = x->committed;
            memset(x->rec[x->n].d, 0xff, x->rec[x->n].words * 4);   /* poisoned until retired */
            x->n++;
        }
    }
}

void kb_emu_wg_commit(kb_emu_wg *g, kb_emu_thr *t) { g->th[t->pub.linear].committed++; }

/* D = A*B + D_in rounded to the accumulator type; fp8 into f32 keeps 13 mantissa bits. */
static uint32_t finish(const kb_emu_wgmma_op *p, double s)
{
    uint32_t u;
    if (p->acc == KB_EMU_WG_ACC_S32)
        return (uint32_t)(int64_t)s;   /* wraps modulo 2^32, as the hardware's integer accumulation */
    float f = (float)s;
    memcpy(&u, &f, 4);
    if ((p->type == KB_EMU_WG_E4M3 || p->type == KB_EMU_WG_E5M2) && isfinite(f))
        u &= ~0x3ffu;
    return u;
}

static double din(const kb_emu_wgmma_op *p, const uint32_t *src, unsigned idx)
{
    if (p->acc == KB_EMU_WG_ACC_F16)
        return kb_f16_bits_to_f32((uint16_t)(src[idx / 2] >> (16 * (idx % 2))));
    if (p->acc == KB_EMU_WG_ACC_S32)
        return (int32_t)src[idx];
    float f;
    memcpy(&f, &src[idx], 4);
    return f;
}

/* This thread's elements of record r: out (words as the registers hold them). Element e of
 * 8-column block j: row 16w + g + 8*(e >> 1), col 8j + 2t + (e & 1) (9.7.15.5.1.1). */
static void compute(const kb_emu_wg_rec *r, unsigned i, const uint32_t *in, uint32_t *out)
{
    const kb_emu_wg_op *op = r->op;
    const kb_emu_wgmma_op *p = &op->p;
    unsigned g = (i % 32) / 4, t = i % 4, K = op->K;
    for (unsigned j = 0; j < (unsigned)p->n / 8; j++)
        for (unsigned e = 0; e < 4; e++) {
            unsigned row = 16 * (i / 32) + g + 8 * (e >> 1), col = 8 * j + 2 * t + (e & 1), idx = 4 * j + e;
            double s = r->scale_d ? din(p, in, idx) : 0.0;   /* f16: half idx of the packed words */
            const double *b = op->b + (size_t)col * K;
            for (unsigned k = 0; k < K; k++)
                s += op->a[row][k] * b[k];
            uint32_t v = finish(p, s);
            if (p->acc == KB_EMU_WG_ACC_F16) {
                unsigned w = 2 * j + (e >> 1), half = e & 1;
                float f;
                memcpy(&f, &v, 4);
                out[w] = (out[w] & ~(0xffffu << (16 * half))) | (uint32_t)kb_f32_to_f16_bits(f) << (16 * half);
            } else {
                out[idx] = v;
            }
        }
}

static int all_poison(const void *d, unsigned words)
{
    const unsigned char *p = d;
    for (unsigned i = 0; i < words * 4; i++)
        if (p[i] != 0xff)
            return 0;
    return 1;
}

/* Retire this thread's record k (the oldest of those being retired). */
static void retire(kb_emu_wg *g, kb_emu_tma *tma, kb_emu_thr *t, unsigned k)
{
    kb_emu_wg_thread *th = &g->th[t->pub.linear];
    kb_emu_wg_rec r = th->rec[k];
    kb_emu_wg_op *op = r.op;
    if (!r.chained && !all_poison(r.d, r.words))
        kb_emu_thread_failf(t, "accumulator registers written while a wgmma was in flight: the registers of a wgmma.mma_async "
             "changed before the wgmma.wait_group that retires it (PTX ISA 9.7.15.7.3: accessing them first is "
             "undefined)");
    if (r.a_ptr && memcmp(r.a_ptr, r.a_snap, sizeof r.a_snap))
        kb_emu_thread_failf(t, "A registers written while a wgmma was in flight: the A fragment of a register-A wgmma.mma_async "
             "changed before the wgmma.wait_group that retires it (PTX ISA 9.7.15.7.3)");
    if (op->refs == 1)
        for (unsigned c = 0; c < op->n_chunks; c++)
            if (memcmp(t->w->smem + op->chunks[c], op->snap + 16 * c, 16))
                kb_emu_thread_failf(t, "shared memory of a wgmma operand written between issue and retirement: shared offset %u "
                     "changed after the wgmma.mma_async was issued, before wgmma.wait_group retired it",
                     op->chunks[c]);
    uint32_t out[128];
    memset(out, 0, sizeof out);
    compute(&r, t->pub.linear % 128, r.saved, out);
    memmove(&th->rec[k], &th->rec[k + 1], (th->n - k - 1) * sizeof *th->rec);
    th->n--;
    /* a later wgmma into the same registers takes this result as its D; they stay poisoned */
    int handed = 0;
    for (unsigned q = k; q < th->n && !handed; q++)
        if (th->rec[q].d == r.d && th->rec[q].chained) {
            th->rec[q].chained = 0;
            memcpy(th->rec[q].saved, out, r.words * 4);
            handed = 1;
        }
    if (!handed)
        memcpy(r.d, out, r.words * 4);
    op_release(tma, op);
}

void kb_emu_wg_wait(kb_emu_wg *g, kb_emu_tma *tma, kb_emu_thr *t, unsigned n)
{
    kb_emu_wg_thread *th = &g->th[t->pub.linear];
    /* wgmma.wait_group is .sync.aligned: the warpgroup meets (with the same N). Then a
     * scheduling point: the wgmmas run while others do, so a producer the warpgroup released
     * too early (an mbarrier arrive before this wait) issues its copy into the operands first. */
    const void *const *slots;
    if (kb_emu_wg_rendezvous(t, (const void *)(uintptr_t)(n + 1), &slots, "wgmma.wait_group")) {
        for (unsigned i = 0; i < 128; i++)
            if ((uintptr_t)slots[i] != n + 1)
                kb_emu_thread_failf(t, "wgmma.wait_group: the threads of warpgroup %u disagree on N (%u vs %u): it is .sync.aligned",
                     t->pub.linear / 128, n, (unsigned)(uintptr_t)slots[i] - 1);
        kb_emu_block_yield(t);
    }
    if (th->committed > n)
        while (th->n && th->rec[0].group < th->committed - n)
            retire(g, tma, t, 0);
    th->fenced = 0;
}

void kb_emu_wg_exit(kb_emu_wg *g, kb_emu_tma *tma, kb_emu_thr *t) { drop_thread(g, tma, t->pub.linear); }
