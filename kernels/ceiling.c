/* ceiling.c - host side of the ceiling family: the measured ceilings of a device (copy,
 * read and write bandwidth, SIMT FMA and mma.sync rates, launch cost), each with a work
 * model so the harness derives its rate like any kernel's, and a check that every
 * result is what the kernel must have computed. Device code and the reasoning: ceiling.cu.
 *
 * dims: n = fp32 elements (copy, read, write; a multiple of 4: one 16-byte access each
 * 4), or threads (fma, mma; a multiple of BLOCK), or 1 (launch); iters = loop iterations
 * per thread (fma, mma; 1 for the others). iters is a dim, not a param, so that a suite's
 * check shape can shorten the loop for the emulator.
 * The best ok result per device and kind ("copy", "fma/fp32", "mma/fp16",
 * "mma/fp8e4m3/widened", ...) is the device's measured ceiling (results/ceilings.h).
 */
#include "engine/exec.h"
#include "engine/valid.h"
#include "engine/verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { V_COPY, V_READ, V_WRITE, V_FMA, V_MMA, V_LAUNCH };
enum { P_BLOCK, P_PATH };
enum { D_N, D_ITERS };
enum { PATH_NATIVE, PATH_WIDENED };

#define FMA_CHAINS 8   /* as ceiling.cu */
#define MMA_CHAINS 4
#define F32 KB_DT_BIT(KB_DT_FP32)
#define MMA_DTYPES (KB_DT_BIT(KB_DT_TF32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16) | \
                    KB_DT_BIT(KB_DT_INT8) | KB_DT_BIT(KB_DT_FP8E4M3) | KB_DT_BIT(KB_DT_FP8E5M2))
#define MAX_GRID (65535LL * 16)   /* blocks of the grid-stride memory kernels */

static const kb_variant variants[] = {
    [V_COPY] = { "copy", "ceil_copy", F32, "device-to-device copy, 16-byte loads and stores: read+write bandwidth" },
    [V_READ] = { "read", "ceil_read", F32, "16-byte loads summed per block (checked): read bandwidth" },
    [V_WRITE] = { "write", "ceil_write", F32, "16-byte stores of an index pattern: write bandwidth" },
    [V_FMA] = { "fma", "ceil_fma", F32, "8 chains of dependent fp32 FMAs per thread: the SIMT (FFMA) rate" },
    [V_MMA] = { "mma", "ceil_mma", MMA_DTYPES,
                "4 accumulator chains of mma.sync per warp (path widened: fp8 as f16, as gemm's sm_90 path)" },
    [V_LAUNCH] = { "launch", "ceil_launch", F32, "one block, one thread writes one word: the cost of a launch" },
};

static const char *const paths[] = { "native", "widened", NULL };
static const char *const dims[] = { "n", "iters" };

static const kb_param params[] = {
    [P_BLOCK] = { "BLOCK", 256, NULL, 0, "threads per block (multiple of 32, <= 1024)" },
    [P_PATH] = { "path", PATH_NATIVE, paths, 1u << V_MMA,
                 "native: the dtype's own mma; widened: fp8 fragments widened to f16, two m16n8k16 mmas",
                 .problem = 1 },
};

/* The mma shape's K (the accumulators gain K products of 1 x 1/K per mma). */
static int mma_k(kb_dtype dt) { return dt == KB_DT_TF32 ? 8 : dt == KB_DT_FP16 || dt == KB_DT_BF16 ? 16 : 32; }
static int is_fp8(kb_dtype dt) { return dt == KB_DT_FP8E4M3 || dt == KB_DT_FP8E5M2; }

#define REFUSE(...) do { snprintf(why, n, __VA_ARGS__); return 0; } while (0)

static int ceil_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t len = c->dims[D_N], block = c->params[P_BLOCK], iters = c->dims[D_ITERS];
    if (!kb_valid_block(block, why, n))
        return 0;
    if (c->pad != 0)
        REFUSE("pad=%d: the ceiling kernels have no padding axis", c->pad);
    if (len < 1)
        REFUSE("n=%lld: need at least one element", (long long)len);
    if (c->variant != V_FMA && c->variant != V_MMA && iters != 1)
        REFUSE("iters=%lld: %s has no loop (iters=1)", (long long)iters, variants[c->variant].name);
    switch (c->variant) {
    case V_COPY: case V_READ: case V_WRITE:
        if (len % 4)
            REFUSE("n=%lld: a multiple of 4 fp32 elements (one 16-byte access each)", (long long)len);
        return 1;
    case V_LAUNCH:
        if (len != 1)
            REFUSE("n=%lld: the launch ceiling takes n=1", (long long)len);
        return 1;
    default:
        break;
    }
    if (len % block || len / block > 2147483647LL)
        REFUSE("n=%lld threads: a multiple of BLOCK=%lld, at most 2^31-1 blocks", (long long)len, (long long)block);
    /* results count exactly in fp32 (mma: iters per accumulator, int8 32 per mma) */
    if (iters < 1 || iters > (1 << 19))
        REFUSE("iters=%lld: 1..2^19 (the mma count must stay exact in an fp32 accumulator)", (long long)iters);
    if (c->variant == V_MMA) {
        if (is_fp8(c->dtype) && !kb_arch_has(t->sm, KB_PATH_MMA_FP8))
            REFUSE("fp8 mma.sync and the fp8->f16 conversion need sm_89 or newer; the target is %s",
                   kb_arch_name(t->sm));
        if (c->params[P_PATH] == PATH_WIDENED && !is_fp8(c->dtype))
            REFUSE("path=widened is the fp8 path (fp8 widened to f16); %s has its own mma", kb_dtype_name(c->dtype));
    }
    return 1;
}

/* Blocks of the grid-stride memory kernels: one 16-byte vector per thread, capped. */
static int64_t mem_blocks(const kb_case *c)
{
    int64_t nvec = c->dims[0] / 4, block = c->params[P_BLOCK], b = (nvec + block - 1) / block;
    return b < 1 ? 1 : b > MAX_GRID ? MAX_GRID : b;
}

static kb_work ceil_work(const kb_case *c)
{
    double len = (double)c->dims[D_N], iters = (double)c->dims[D_ITERS];
    kb_work w = { 0 };
    switch (c->variant) {
    case V_COPY: w.bytes_read = w.bytes_written = 4.0 * len; break;
    case V_READ: w.bytes_read = 4.0 * len; w.bytes_written = 4.0 * (double)mem_blocks(c); break;
    case V_WRITE: w.bytes_written = 4.0 * len; break;
    case V_FMA:  /* two FMAs (2 flops each) per chain and iteration */
        w.flops = len * iters * FMA_CHAINS * 4.0;
        w.bytes_written = 4.0 * len * FMA_CHAINS;
        break;
    case V_MMA:  /* per warp, chain and iteration one m16n8kK mma (widened: the same k32 step in two) */
        w.flops = len / 32.0 * iters * MMA_CHAINS * 2.0 * 16 * 8 * mma_k(c->dtype);
        w.bytes_written = 4.0 * len * MMA_CHAINS * 4;
        break;
    default: w.bytes_written = 4.0; break;
    }
    return w;
}

typedef struct {
    kb_dptr d_in, d_out;
    int64_t n_out;           /* output words */
    uint32_t *h_in;          /* copy/read: the input words */
    uint32_t *h_out;         /* downloaded output words */
    float *got, *want;       /* [n_check] compared as floats (read: 16-bit halves, exact) */
    int64_t n_check;
    uint32_t a_bits, b_bits; /* mma: one fragment register of A (all 1) and of B (all 1/K; int8 1) */
} ceil_state;

static void state_free(ceil_state *s)
{
    if (!s)
        return;
    free(s->h_in);
    free(s->h_out);
    free(s->got);
    free(s->want);
    free(s);
}

/* One fragment register holding v in every element of the dtype's storage. */
static uint32_t replicate(kb_dtype dt, float v)
{
    uint32_t bits = 0;
    size_t esz = kb_dtype_size(dt);
    kb_host_from_f32(dt, &v, &bits, 1);
    for (size_t b = esz; b < 4; b += esz)
        bits |= bits << (8 * b);
    return bits;
}

static int64_t out_words(const kb_case *c)
{
    switch (c->variant) {
    case V_COPY: case V_WRITE: return c->dims[0];
    case V_READ: return mem_blocks(c);
    case V_FMA: return c->dims[0] * FMA_CHAINS;
    case V_MMA: return c->dims[0] * MMA_CHAINS * 4;
    default: return 1;
    }
}

/* Inputs: finite floats with varied bits (copy, read), the fragment registers (mma). */
static kb_status make_inputs(kb_run *r, ceil_state *s)
{
    const kb_case *c = r->c;
    if (c->variant == V_MMA) {
        s->a_bits = replicate(c->dtype, 1.0f);
        s->b_bits = replicate(c->dtype, c->dtype == KB_DT_INT8 ? 1.0f : 1.0f / (float)mma_k(c->dtype));
        return KB_OK;
    }
    if (c->variant != V_COPY && c->variant != V_READ)
        return KB_OK;
    int64_t len = c->dims[0];
    if (!(s->h_in = malloc((size_t)len * 4)))
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of %lld input words", (long long)len);
    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    for (int64_t i = 0; i < len; i++) {
        float f = kb_rng_uniform(&rng, -1.0f, 1.0f);
        memcpy(&s->h_in[i], &f, 4);
    }
    kb_status st = kb_run_alloc(r, (size_t)len * 4, &s->d_in);
    return st == KB_OK ? kb_run_upload(r, s->d_in, s->h_in, (size_t)len * 4) : st;
}

static kb_status ceil_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    ceil_state *s = calloc(1, sizeof *s);
    if (!s)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the ceiling state");
    s->n_out = out_words(c);
    s->n_check = c->variant == V_READ ? 2 * s->n_out : s->n_out;
    s->h_out = malloc((size_t)s->n_out * 4);
    s->got = malloc((size_t)s->n_check * sizeof(float));
    s->want = malloc((size_t)s->n_check * sizeof(float));
    kb_status st = KB_ERR_OOM;
    if (!s->h_out || !s->got || !s->want) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation of %lld output words", (long long)s->n_out);
        goto fail;
    }
    if ((st = make_inputs(r, s)) != KB_OK || (st = kb_run_alloc(r, (size_t)s->n_out * 4, &s->d_out)) != KB_OK)
        goto fail;
    *state = s;
    return KB_OK;
fail:
    state_free(s);
    return st;
}

static kb_status ceil_enqueue(kb_run *r, void *state)
{
    const kb_case *c = r->c;
    ceil_state *s = state;
    unsigned block = (unsigned)c->params[P_BLOCK];
    int64_t len = c->dims[0];
    int32_t iters = (int32_t)c->dims[D_ITERS];
    const char *entry = r->f->variants[c->variant].entry;
    kb_geom g = { { (unsigned)(len / block), 1, 1 }, { block, 1, 1 }, 0, { 1, 1, 1 } };
    if (c->variant <= V_WRITE) {
        g.grid[0] = (unsigned)mem_blocks(c);
        kb_arg copy[] = { kb_arg_ptr(s->d_in), kb_arg_ptr(s->d_out), kb_arg_i64(len / 4) };
        kb_arg write[] = { kb_arg_ptr(s->d_out), kb_arg_i64(len / 4) };
        return c->variant == V_WRITE ? kb_run_launch(r, entry, &g, write, 2) : kb_run_launch(r, entry, &g, copy, 3);
    }
    if (c->variant == V_FMA) {
        kb_arg a[] = { kb_arg_ptr(s->d_out), kb_arg_f32(1.0f), kb_arg_f32(1.0f), kb_arg_f32(-1.0f), kb_arg_i32(iters) };
        return kb_run_launch(r, entry, &g, a, 5);
    }
    if (c->variant == V_MMA) {
        kb_arg a[] = { kb_arg_ptr(s->d_out), kb_arg_i32((int32_t)s->a_bits), kb_arg_i32((int32_t)s->b_bits),
                       kb_arg_i32(0), kb_arg_i32(iters) };
        return kb_run_launch(r, entry, &g, a, 5);
    }
    kb_geom one = { { 1, 1, 1 }, { 32, 1, 1 }, 0, { 1, 1, 1 } };
    kb_arg a[] = { kb_arg_ptr(s->d_out), kb_arg_i32((int32_t)0x6b62u) };
    return kb_run_launch(r, entry, &one, a, 2);
}

/* What every output word must be, and the output as compared (floats: exact values).
 * KB_ERR_OOM when the read variant's sums cannot be allocated. */
static kb_status expected(const kb_case *c, ceil_state *s)
{
    int64_t block = c->params[P_BLOCK], nthreads = mem_blocks(c) * block;
    for (int64_t i = 0; i < s->n_out && c->variant != V_READ; i++) {
        float w = 0, g;
        switch (c->variant) {
        case V_COPY: memcpy(&w, &s->h_in[i], 4); break;
        case V_WRITE: w = (float)(i & 0xffffff); break;
        case V_FMA: w = (float)(((i / FMA_CHAINS) % block + i % FMA_CHAINS) & 7); break;
        case V_MMA: w = (float)c->dims[D_ITERS] * (c->dtype == KB_DT_INT8 ? 32.0f : 1.0f); break;
        default: w = (float)0x6b62u; break;
        }
        s->want[i] = w;
        if (c->dtype == KB_DT_INT8 || c->variant == V_LAUNCH) {
            int32_t v;
            memcpy(&v, &s->h_out[i], 4);
            g = (float)v;
        } else {
            memcpy(&g, &s->h_out[i], 4);
        }
        s->got[i] = g;
    }
    if (c->variant != V_READ)
        return KB_OK;
    /* read: each block's wrapping sum of the words its threads visited (v -> thread v mod nthreads) */
    uint32_t *sum = calloc((size_t)s->n_out, 4);
    if (!sum)
        return KB_ERR_OOM;
    for (int64_t v = 0; v < c->dims[0] / 4; v++)
        for (int j = 0; j < 4; j++)
            sum[v % nthreads / block] += s->h_in[4 * v + j];
    for (int64_t b = 0; b < s->n_out; b++) {
        s->want[2 * b] = (float)(sum[b] & 0xffff), s->want[2 * b + 1] = (float)(sum[b] >> 16);
        s->got[2 * b] = (float)(s->h_out[b] & 0xffff), s->got[2 * b + 1] = (float)(s->h_out[b] >> 16);
    }
    free(sum);
    return KB_OK;
}

static kb_status ceil_check(kb_run *r, void *state, kb_verify *v)
{
    ceil_state *s = state;
    kb_status st = kb_run_download(r, s->h_out, s->d_out, (size_t)s->n_out * 4);
    if (st != KB_OK)
        return st;
    if ((st = expected(r->c, s)) != KB_OK)
        return kb_run_fail(r, st, "out of memory for the expected block sums");
    kb_verify_init(v, 0.0, 0.0);   /* every result is exact */
    kb_verify_f32(v, s->got, s->want, s->n_check);
    kb_run_expose(r, "out", s->got, &s->n_check, 1);
    kb_run_expose(r, "ref", s->want, &s->n_check, 1);
    return KB_OK;
}

static void ceil_teardown(kb_run *r, void *state) { state_free(state); }

/* The instruction each variant's loop issues: the ceiling kind it measures. */
static int ceil_path(const kb_case *c, int sm, kb_path *out)
{
    if (c->variant != V_FMA && c->variant != V_MMA)
        return 0;
    int widened = c->variant == V_MMA && c->params[P_PATH] == PATH_WIDENED;
    return kb_path_set(out, c->variant == V_FMA ? "fma" : "mma", c->dtype, widened);
}

const kb_family kb_family_ceiling = {
    .name = "ceiling",
    .source = "ceiling.cu",
    .about = "measured ceilings: copy/read/write bandwidth, SIMT FMA and mma.sync rates, launch cost (verified)",
    .variants = variants, .n_variants = KB_COUNT(variants),
    .dims = dims, .n_dims = KB_COUNT(dims),
    .params = params, .n_params = KB_COUNT(params),
    .valid = ceil_valid,
    .defines = NULL,
    .work = ceil_work,
    .setup = ceil_setup,
    .enqueue = ceil_enqueue,
    .check = ceil_check,
    .teardown = ceil_teardown,
    .path = ceil_path,
};
