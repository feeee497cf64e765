/* attention.c - host side of the attention family: descriptor, legality, work model,
 * inputs, CPU reference and verification. Device code: attention.cu; launch geometry and
 * traffic model (kbench estimate): attention_model.c. The decode variant's host side is
 * attention_decode.c (its geometry and traffic model attention_decode_model.c): the hooks
 * below hand its cases over.
 *
 * O = softmax(Q K^T / sqrt(d) [+ causal mask]) V with Q, K, V, O laid out [b, h, s, d]
 * contiguous (dims b, h, s, d in that order; queries and keys share the length s). decode:
 * Q, O [b, h, q_len, d] against K, V [b, h / group, s, d] (s the KV length).
 */
#include "engine/exec.h"
#include "engine/valid.h"
#include "engine/verify.h"
#include "attention_decode.h"
#include "attention_decode_model.h"
#include "attention_fa3.h"
#include "attention_fa3_fp8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ATTN_DTYPES (KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16))
#define MMA_DTYPES (KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16))
#define FA3_DTYPES (MMA_DTYPES | KB_DT_BIT(KB_DT_FP8E4M3))   /* fp8: attention_fa3_fp8.c */

/* The fused kernel holds RQ*(2*d/TPR + KC) floats per thread (q, accumulator, a chunk
 * of scores), the mma kernel d/4 + d/2 + BKV/2 words at 16 rows per warp (Q fragments, O
 * accumulators, the S tile), d + BKV + 8 at 32 (mma_words); past the register file they would live in local memory, which defeats the
 * point of the variants. Same bounds as the device-side static_asserts. */
#define MAX_THREAD_WORDS 255

/* The CPU reference costs b*h*s*s*d multiply-adds in double. Up to this many it covers
 * every row (every check shape does); beyond, an evenly spaced sample of rows, so a
 * full-size GPU case verifies in about a second instead of minutes. */
#define REF_BUDGET_MADDS (256.0 * 1024 * 1024)

static const kb_variant variants[] = {
    [V_NAIVE] = { "naive", "attn_naive_scores", ATTN_DTYPES,
                  "materialised: S = QK^T*scale to global fp32, 3-pass row softmax in place, O = PV (3 launches)" },
    [V_FUSED] = { "fused", "attn_fused", ATTN_DTYPES,
                  "FlashAttention-2 style: K/V tiles through shared memory, online softmax in registers, one launch" },
    [V_MMA] = { "mma", "attn_mma", MMA_DTYPES,
                "FlashAttention-2 on tensor cores: mma.sync QK^T and PV per warp, cp.async double-buffered K/V" },
    [V_CUDNN] = { "cudnn", NULL, MMA_DTYPES,
                  "the vendor baseline: cuDNN 9's fused SDPA, an operation graph through its backend API" },
    [V_FA2] = { "fa2", "attn_mma", MMA_DTYPES,
                "mma at FlashAttention-2's configuration: 32 query rows per warp (Q re-read from shared memory), "
                "e.g. 128x64 tiles with 4 warps" },
    [V_DECODE] = { "decode", "attn_decode", MMA_DTYPES,
                   "split-KV flash-decoding: q_len <= 16 rows against a long KV cache, a KV head's GQA group in one "
                   "block (K/V read once), key warps and splits merged by log-sum-exp (mma.sync, cp.async ring)" },
    [V_FA3] = { "fa3", "attn_fa3", FA3_DTYPES,
                "sm_90a, FlashAttention-3's structure: TMA K/V ring with mbarriers, a producer and two ping-ponging "
                "consumer warpgroups (setmaxnreg), wgmma Q K^T from shared memory and P V with P in registers" },
    [V_DECODE_TMA] = { "decode_tma", "attn_decode_tma", MMA_DTYPES,
                       "sm_90a decode: decode's split-KV flash-decoding (mma.sync) with K/V through TMA into a "
                       "full/empty mbarrier ring, filled by a producer warp; the same split combine" },
};

static const char *const causal_choices[] = { "no", "yes", NULL };
static const char *const lse_choices[] = { "no", "yes", NULL };
static const char *const sched_choices[] = { "grid", "persistent", NULL };
static const char *const dims[] = { "b", "h", "s", "d" };

#define FUSED_ONLY (1u << V_FUSED)
#define FUSED_MMA ((1u << V_FUSED) | (1u << V_MMA) | (1u << V_FA2))
#define FA3_ONLY (1u << V_FA3)
#define DECODE_ONLY ((1u << V_DECODE) | (1u << V_DECODE_TMA))
static const kb_param params[] = {
    [P_CAUSAL] = { "causal", CAUSAL_NO, causal_choices, 0,
                   "yes: query i attends to keys j <= i only (decode: j <= s - q_len + i, aligned bottom-right)",
                   .problem = 1 },
    [P_BLOCK] = { "BLOCK", 256, NULL, 1u << V_NAIVE, "threads per block of the three naive kernels" },
    [P_BQ] = { "BQ", 32, NULL, FUSED_MMA, "query rows per block (mma: 16 per warp, fa2: 32 per warp)" },
    [P_BKV] = { "BKV", 32, NULL, FUSED_MMA | FA3_ONLY,
                "key/value rows per shared-memory tile (mma, fa2, fa3: multiple of 16; fa3: the wgmma N of QK^T)" },
    [P_KC] = { "KC", 8, NULL, FUSED_ONLY, "keys per register chunk (online-softmax step; divides BKV)" },
    [P_TPR] = { "TPR", 4, NULL, FUSED_ONLY, "lanes per query row, splitting the head dim (power of two <= 32)" },
    [P_RQ] = { "RQ", 1, NULL, FUSED_ONLY, "query rows per thread (register blocking: a K/V element feeds RQ rows)" },
    [P_QLEN] = { "q_len", 1, NULL, DECODE_ONLY,
                 "query rows per sequence: the newest q_len positions of the KV cache (causal: bottom-right)", 1, 16,
                 .problem = 1 },
    [P_GROUP] = { "group", 1, NULL, DECODE_ONLY,
                  "query heads per KV head (h = h_kv x group): 1 multi-head, 8 Llama-70B's GQA, h multi-query", 1,
                  KB_PARAM_MAX, .problem = 1 },
    [P_CHUNK] = { "CHUNK", 0, NULL, DECODE_ONLY,
                  "keys per split (a multiple of 16 x key warps); 0: the fewest splits of >= 256 keys giving 264 "
                  "blocks", 0, 1 << 30 },
    [P_WARPS] = { "WARPS", 4, NULL, DECODE_ONLY,
                  "warps per block (1, 2, 4, 8): row warps for the group's rows x key warps (16 keys of each tile)", 1,
                  8 },
    [P_STAGES] = { "STAGES", 2, NULL, DECODE_ONLY | FA3_ONLY, "K/V tiles in the cp.async (fa3, decode_tma: TMA) ring (2..4)", 2,
                   4 },
    [P_LSE] = { "lse", LSE_NO, lse_choices, FA3_ONLY,
                "yes: also write each row's log-sum-exp m*scale + ln(l) as fp32 [b, h, s] (what a backward pass reads)",
                .problem = 1 },
    [P_SCHED] = { "sched", SCHED_PERSISTENT, sched_choices, FA3_ONLY,
                  "work order: grid, a block per 128-row tile in the hardware's order; persistent, one block per SM "
                  "taking tiles longest-first from a global counter (FlashAttention-3's scheduler)" },
};

/* Elements per 16-byte K/V load of the fused kernel. */
static int64_t fused_lvec(kb_dtype dt) { return 16 / (int64_t)kb_dtype_size(dt); }

static int shmem_fits(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t smem = kb_attn_shmem_bytes(c);
    if (smem <= t->max_shmem_per_block)
        return 1;
    snprintf(why, n, "%s needs %lld bytes of shared memory, over the %d-byte limit of %s",
             kb_attn_is_mma(c) ? "(BQ + 4*BKV)*(d+8)*2 (Q tile, two K/V stages)" : "2*BKV*d*4 (K/V tiles)",
             (long long)smem, t->max_shmem_per_block, kb_arch_name(t->sm));
    return 0;
}

static int valid_naive(const kb_case *c, char *why, size_t n)
{
    int64_t block = c->params[P_BLOCK], s = c->dims[D_S], d = c->dims[D_D];
    if (!kb_valid_block(block, why, n))
        return 0;
    /* the score kernel has one thread per element of the s x s matrix in grid.x */
    if ((s * s + block - 1) / block > 2147483647LL || (s * d + block - 1) / block > 2147483647LL) {
        snprintf(why, n, "s=%lld: s*s scores need more than 2^31-1 blocks of %lld threads", (long long)s,
                 (long long)block);
        return 0;
    }
    return 1;
}

static int valid_fused(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t bq = c->params[P_BQ], bkv = c->params[P_BKV], kc = c->params[P_KC];
    int64_t tpr = c->params[P_TPR], rq = c->params[P_RQ];
    int64_t d = c->dims[D_D], lvec = fused_lvec(c->dtype);
    if (d % lvec || d > 256) {
        snprintf(why, n, "d=%lld: the fused variant takes head dims that are multiples of %lld (16-byte %s K/V "
                 "loads) up to 256", (long long)d, (long long)lvec, kb_dtype_name(c->dtype));
        return 0;
    }
    if (bq < 1 || bkv < 1 || kc < 1 || rq < 1) {
        snprintf(why, n, "BQ=%lld, BKV=%lld, KC=%lld, RQ=%lld: tile sizes must be >= 1", (long long)bq,
                 (long long)bkv, (long long)kc, (long long)rq);
        return 0;
    }
    if (bkv % kc) {
        snprintf(why, n, "BKV=%lld is not a multiple of KC=%lld (a K/V tile is consumed in whole chunks)",
                 (long long)bkv, (long long)kc);
        return 0;
    }
    if (tpr < 1 || tpr > 32 || (tpr & (tpr - 1))) {
        snprintf(why, n, "TPR=%lld: must be a power of two <= 32 (a row's lanes reduce inside one warp)",
                 (long long)tpr);
        return 0;
    }
    if (d % tpr) {
        snprintf(why, n, "d=%lld is not a multiple of TPR=%lld (each lane owns d/TPR columns)", (long long)d,
                 (long long)tpr);
        return 0;
    }
    if (bq % rq) {
        snprintf(why, n, "BQ=%lld is not a multiple of RQ=%lld (each thread owns RQ whole rows)", (long long)bq,
                 (long long)rq);
        return 0;
    }
    int64_t threads = bq / rq * tpr;
    if (threads % 32 || threads > 1024) {
        snprintf(why, n, "BQ/RQ*TPR = %lld threads: must be a multiple of 32 (full-warp shuffles) and <= 1024",
                 (long long)threads);
        return 0;
    }
    int64_t floats = rq * (2 * d / tpr + kc);
    if (floats > MAX_THREAD_WORDS) {
        snprintf(why, n, "RQ*(2*d/TPR + KC) = %lld floats per thread exceed the %d-register file", (long long)floats,
                 MAX_THREAD_WORDS);
        return 0;
    }
    return shmem_fits(c, t, why, n);
}

/* Fragment words per thread of attn_mma: O accumulators and the S tile per 16 query rows
 * (d/2 + BKV/2), plus the Q fragments: all of them at 16 rows per warp (d/4), one k-step's
 * (8) at 32, where Q is re-read from shared memory. Same bound as the device static_assert. */
static int64_t mma_words(const kb_case *c)
{
    int64_t d = c->dims[D_D], bkv = c->params[P_BKV], mt = kb_attn_rows_per_warp(c) / 16;
    return mt * (d / 2 + bkv / 2) + (mt == 1 ? d / 4 : 8);
}

static int valid_mma(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t bq = c->params[P_BQ], bkv = c->params[P_BKV], d = c->dims[D_D], rw = kb_attn_rows_per_warp(c);
    const char *v = c->variant == V_FA2 ? "fa2" : "mma";
    if (d % 16) {
        snprintf(why, n, "d=%lld: the %s variant takes head dims that are multiples of 16 (the mma k-step)",
                 (long long)d, v);
        return 0;
    }
    if (bq < rw || bq % rw || bq > 512) {
        snprintf(why, n, "BQ=%lld: must be a multiple of %lld (one warp per %lld query rows) up to 512", (long long)bq,
                 (long long)rw, (long long)rw);
        return 0;
    }
    if (bkv < 16 || bkv % 16) {
        snprintf(why, n, "BKV=%lld: must be a multiple of 16 (the k-step of P V)", (long long)bkv);
        return 0;
    }
    int64_t words = mma_words(c);
    if (words > MAX_THREAD_WORDS) {
        snprintf(why, n, "%s = %lld fragment words per thread exceed the %d-register file",
                 rw == 16 ? "d/4 + d/2 + BKV/2" : "d + BKV + 8", (long long)words, MAX_THREAD_WORDS);
        return 0;
    }
    return shmem_fits(c, t, why, n);
}

/* cuDNN: a GPU with the library. Head dims or lengths its engines do not take are skipped at
 * setup with cuDNN's own reason (its heuristic offers no engine). */
static int valid_cudnn(const kb_target *t, char *why, size_t n)
{
    return kb_valid_vendor(t, KB_CAP_CUDNN, "cuDNN", "libcudnn.so.9", "KBENCH_LIBCUDNN", why, n);
}

static int attn_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t bh = c->dims[D_B] * c->dims[D_H], s = c->dims[D_S], d = c->dims[D_D];
    if (c->pad != 0) {
        snprintf(why, n, "pad=%d: attention has no padding axis (Q, K, V, O are dense [b,h,s,d])", c->pad);
        return 0;
    }
    if (KB_DEC_VARIANT(c->variant))
        return kb_attn_decode_valid(c, t, why, n);
    if (c->variant == V_FA3)
        return kb_attn_fa3_valid(c, t, why, n);
    if (bh > 65535) {
        snprintf(why, n, "b*h=%lld: one (batch, head) per grid.y, limited to 65535", (long long)bh);
        return 0;
    }
    if (s > 2147483647LL || d > 2147483647LL) {
        snprintf(why, n, "s=%lld, d=%lld: the kernels take s and d as 32-bit ints", (long long)s, (long long)d);
        return 0;
    }
    if (kb_attn_is_mma(c))
        return valid_mma(c, t, why, n);
    if (c->variant == V_CUDNN)
        return valid_cudnn(t, why, n);
    return c->variant == V_NAIVE ? valid_naive(c, why, n) : valid_fused(c, t, why, n);
}

static void attn_defines(const kb_case *c, kb_sb *out)
{
    if (KB_DEC_VARIANT(c->variant)) {
        kb_attn_decode_defines(c, out);
        return;
    }
    if (c->variant == V_FA3) {
        kb_attn_fa3_defines(c, out);
        return;
    }
    /* each tiled kernel is compiled only into its own variant's modules; naive modules
     * do not depend on d */
    if (c->variant != V_NAIVE)
        kb_sb_printf(out, "%s=1\nHEAD_D=%lld\n", kb_attn_is_mma(c) ? "ATTN_MMA" : "ATTN_FUSED",
                     (long long)c->dims[D_D]);
    if (c->variant == V_FA2)
        kb_sb_printf(out, "RW=32\n");
}

/* Scores the causal mask keeps, per (batch, head): s*(s+1)/2 of s*s. */
static double n_scores(const kb_case *c)
{
    double s = (double)c->dims[D_S];
    return c->params[P_CAUSAL] == CAUSAL_YES ? s * (s + 1) / 2 : s * s;
}

/* FLOPs 4*b*h*s*s*d (QK^T and PV, 2 each per multiply-add), halved for causal, as the
 * CUTLASS profiler counts; bytes Q+K+V read and O written. The naive variant also moves
 * the fp32 score matrix: written by the score kernel (1), read three times and written
 * once by the 3-pass softmax (3 + 1), read by PV (1): 6 x 4 bytes per kept score. Its
 * repeated reads of Q and K rows from cache are not counted. The fused variants re-read
 * K and V once per block of BQ queries, mostly from L2; bytes_moved stays 0 (= the
 * compulsory traffic) for them. */
static kb_work attn_work(const kb_case *c)
{
    double b = (double)c->dims[D_B], h = (double)c->dims[D_H], s = (double)c->dims[D_S];
    double d = (double)c->dims[D_D], esz = (double)kb_dtype_size(c->dtype);
    if (KB_DEC_VARIANT(c->variant))
        return kb_attn_decode_work(c);
    kb_work w = { 0 };
    w.flops = 4.0 * b * h * s * s * d;
    if (c->params[P_CAUSAL] == CAUSAL_YES)
        w.flops /= 2;
    w.bytes_read = 3.0 * b * h * s * d * esz;
    w.bytes_written = b * h * s * d * (kb_attn_fa3_is_fp8(c) ? 2.0 : esz);   /* fp8 fa3: O in bf16 */
    if (c->variant == V_NAIVE)
        w.bytes_moved = w.bytes_read + w.bytes_written + 6.0 * 4.0 * b * h * n_scores(c);
    return w;
}

typedef struct {
    kb_dptr d_q, d_k, d_v, d_o;
    kb_dptr d_s;        /* naive: fp32 [b,h,s,s] scores, then probabilities */
    int64_t n;          /* elements of each of Q, K, V, O */
    int64_t *rows;      /* [n_rows] flattened (bh*s + i) query rows the reference covers */
    int64_t n_rows;
    int64_t n_rows_all; /* b*h*s */
    float *want;        /* [n_rows * d] reference rows */
    float *got;         /* [n_rows * d] the same rows of the downloaded output */
    float *o_f32;       /* [n] downloaded output, dequantised */
    void *h_io;         /* [n] storage-typed host buffer */
    float *q, *k, *v;   /* [b,h,s,d] the inputs as the kernel reads them, for --dump */
    float *rows_f;      /* [n_rows] the checked rows (b*h*s flattened) as float, for --dump */
    kb_vendor_plan *plan; /* cudnn: the planned SDPA graph */
    kb_arg maps[4];     /* fa3: the tensor maps of Q, K, V, O */
    kb_dptr d_lse;      /* fa3 with lse: fp32 [b,h,s] log-sum-exp; else 0 */
    kb_dptr d_ctr;      /* fa3 persistent: the int32 tile counter; else 0 */
    float *lse_want, *lse_got, *lse_all; /* [n_rows] reference and downloaded, [b*h*s] downloaded */
    float *lse_extra;   /* [n_rows] each row's score-error allowance on its lse (kb_attn_fa3_lse_tolerance) */
} attn_state;

static int64_t gcd64(int64_t a, int64_t b)
{
    while (b) {
        int64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Rows of the output the reference covers: all of them within REF_BUDGET_MADDS,
 * otherwise every stride-th flattened row plus the last one, with the stride coprime
 * to s so that the sample walks through every query position rather than one. */
static kb_status pick_rows(attn_state *st, int64_t total_rows, int64_t s, int64_t d)
{
    double per_row = (double)s * (double)d;
    int64_t max_rows = (int64_t)(REF_BUDGET_MADDS / per_row);
    if (max_rows < 2)
        max_rows = 2;
    int64_t stride = 1;
    if (total_rows > max_rows) {
        stride = (total_rows + max_rows - 2) / (max_rows - 1);
        while (gcd64(stride, s) != 1)
            stride++;
    }
    int64_t n = (total_rows - 1) / stride + 1;
    int last_extra = (total_rows - 1) % stride != 0;
    st->rows = malloc((size_t)(n + last_extra) * sizeof *st->rows);
    if (!st->rows)
        return KB_ERR_OOM;
    for (int64_t k = 0; k < n; k++)
        st->rows[k] = k * stride;
    if (last_extra)
        st->rows[n++] = total_rows - 1;
    st->n_rows = n;
    return KB_OK;
}

/* One output row in double: softmax over the kept keys of q.k * scale, times V; its
 * log-sum-exp (natural log of the sum of exp of the scaled scores) in *lse, and in *sabs
 * max_j sum_c |q_c k_jc| x scale over the kept keys (the scale of the scores' fp32 error). */
static void ref_row(const float *q, const float *k, const float *v, int64_t s, int64_t d, int64_t i, int causal,
                    double *p, float *out, float *lse, double *sabs)
{
    int64_t nk = causal ? i + 1 : s;
    double scale = 1.0 / sqrt((double)d), mx = -INFINITY, sum = 0.0;
    *sabs = 0.0;
    for (int64_t j = 0; j < nk; j++) {
        double dot = 0.0, dabs = 0.0;
        for (int64_t c = 0; c < d; c++) {
            dot += (double)q[c] * (double)k[j * d + c];
            dabs += fabs((double)q[c] * (double)k[j * d + c]);
        }
        p[j] = dot * scale;
        *sabs = fmax(*sabs, dabs * scale);
        if (p[j] > mx)
            mx = p[j];
    }
    for (int64_t j = 0; j < nk; j++) {
        p[j] = exp(p[j] - mx);
        sum += p[j];
    }
    for (int64_t c = 0; c < d; c++) {
        double acc = 0.0;
        for (int64_t j = 0; j < nk; j++)
            acc += p[j] * (double)v[j * d + c];
        out[c] = (float)(acc / sum);
    }
    *lse = (float)(mx + log(sum));
}

/* Quantise n uniform values in [lo, hi) plus bias (and bias4 more in every fourth row of d
 * elements) to the dtype, upload them, and keep the dequantised values (exactly what the
 * kernel reads) in f. */
static kb_status make_input(kb_run *r, kb_rng *rng, float lo, float hi, float bias, float bias4, int64_t d,
                            int64_t n, void *h_io, float *f, kb_dptr dst)
{
    kb_dtype dt = r->c->dtype;
    for (int64_t i = 0; i < n; i++)
        f[i] = kb_rng_uniform(rng, lo, hi) + bias + (i / d % 4 == 3 ? bias4 : 0.0f);
    kb_host_from_f32(dt, f, h_io, n);
    kb_host_to_f32(dt, h_io, f, n);
    return kb_run_upload(r, dst, h_io, (size_t)n * kb_dtype_size(dt));
}

/* fa3's adversarial rows (as attention_decode.c's): every third query row has q[0] = 64 and
 * channel 0 of every K row ramps from -16 to +16 along the sequence, so those rows' scores
 * rise by 2 x 64 x 16 / sqrt(d) along the keys (256 at d = 64, 181 at 128, 128 at 256: more
 * than 80 in the exponent) and every K/V tile raises the running max: an O not rescaled when
 * the max moves is wrong by orders of magnitude. Other rows' q[0] in [-2, 2] only tilts
 * their softmax by at most 64 / sqrt(d). The values are exact in fp16 and bf16 up to the
 * ramp's rounding, which the reference sees too. */
static kb_status make_adversarial(kb_run *r, attn_state *a, float *fq, float *fk)
{
    const kb_case *c = r->c;
    int64_t s = c->dims[D_S], d = c->dims[D_D], rows = a->n_rows_all;
    for (int64_t i = 0; i < rows; i++) {
        if (i % 3 == 0)
            fq[i * d] = 64.0f;
        fk[i * d] = s > 1 ? -16.0f + 32.0f * (float)(i % s) / (float)(s - 1) : 16.0f;
    }
    kb_dtype dt = c->dtype;
    kb_status st;
    kb_host_from_f32(dt, fq, a->h_io, a->n);
    kb_host_to_f32(dt, a->h_io, fq, a->n);
    if ((st = kb_run_upload(r, a->d_q, a->h_io, (size_t)a->n * kb_dtype_size(dt))) != KB_OK)
        return st;
    kb_host_from_f32(dt, fk, a->h_io, a->n);
    kb_host_to_f32(dt, a->h_io, fk, a->n);
    return kb_run_upload(r, a->d_k, a->h_io, (size_t)a->n * kb_dtype_size(dt));
}

static void state_free(attn_state *s)
{
    if (!s)
        return;
    free(s->h_io);
    free(s->o_f32);
    free(s->got);
    free(s->want);
    free(s->rows);
    free(s->q);
    free(s->k);
    free(s->v);
    free(s->rows_f);
    free(s->lse_want);
    free(s->lse_got);
    free(s->lse_all);
    free(s->lse_extra);
    free(s);
}

/* For --dump and the record: Q, K, V [b, h, s, d] (the state takes them) and the constants
 * O depends on: the score scale 1/sqrt(d) and whether the mask is causal. */
static void expose_inputs(kb_run *r, attn_state *a, float *fq, float *fk, float *fv)
{
    const kb_case *c = r->c;
    int64_t shape[4] = { c->dims[D_B], c->dims[D_H], c->dims[D_S], c->dims[D_D] };
    a->q = fq, a->k = fk, a->v = fv;
    kb_run_expose(r, "q", fq, shape, 4);
    kb_run_expose(r, "k", fk, shape, 4);
    kb_run_expose(r, "v", fv, shape, 4);
    kb_run_constant(r, "scale", 1.0 / sqrt((double)c->dims[D_D]));
    kb_run_constant(r, "causal", c->params[P_CAUSAL] == CAUSAL_YES);
}

/* The cuDNN SDPA call on the uploaded Q, K, V and O: same layout, scale and mask. */
static kb_status plan_cudnn(kb_run *r, attn_state *a)
{
    const kb_case *c = r->c;
    kb_vendor_op op = { .kind = KB_VOP_SDPA, .u.sdpa = {
        .dtype = c->dtype, .b = c->dims[D_B], .h = c->dims[D_H], .s = c->dims[D_S], .d = c->dims[D_D],
        .causal = c->params[P_CAUSAL] == CAUSAL_YES, .scale = (float)(1.0 / sqrt((double)c->dims[D_D])),
        .q = a->d_q, .k = a->d_k, .v = a->d_v, .o = a->d_o } };
    return kb_run_vendor_plan(r, &op, &a->plan);
}

/* The device buffers of a (Q, K, V, O; naive's scores, fa3's log-sum-exp) and fa3's tensor
 * maps over them. KB_OK, or kb_run_alloc's / the maps' status. */
static kb_status alloc_device(kb_run *r, attn_state *a)
{
    const kb_case *c = r->c;
    int64_t bh = c->dims[D_B] * c->dims[D_H], s = c->dims[D_S];
    size_t bytes = (size_t)a->n * kb_dtype_size(c->dtype);
    kb_status st;
    if ((st = kb_run_alloc(r, bytes, &a->d_q)) != KB_OK || (st = kb_run_alloc(r, bytes, &a->d_k)) != KB_OK ||
        (st = kb_run_alloc(r, bytes, &a->d_v)) != KB_OK || (st = kb_run_alloc(r, bytes, &a->d_o)) != KB_OK)
        return st;
    if (c->variant == V_NAIVE && (st = kb_run_alloc(r, (size_t)(bh * s * s) * sizeof(float), &a->d_s)) != KB_OK)
        return st;
    if (c->variant == V_FA3 && c->params[P_LSE] == LSE_YES &&
        (st = kb_run_alloc(r, (size_t)(bh * s) * sizeof(float), &a->d_lse)) != KB_OK)
        return st;
    if (c->variant == V_FA3 && c->params[P_SCHED] == SCHED_PERSISTENT &&
        (st = kb_attn_fa3_counter(r, &a->d_ctr)) != KB_OK)
        return st;
    if (c->variant == V_FA3)
        st = kb_attn_fa3_maps(r, a->d_q, a->d_k, a->d_v, a->d_o, a->maps);
    return st;
}

static kb_status attn_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    if (KB_DEC_VARIANT(c->variant))
        return kb_attn_decode_setup(r, state);
    if (kb_attn_fa3_is_fp8(c))
        return kb_attn_fa3_fp8_setup(r, state);
    int64_t bh = c->dims[D_B] * c->dims[D_H], s = c->dims[D_S], d = c->dims[D_D], n = bh * s * d;
    size_t esz = kb_dtype_size(c->dtype);
    kb_status st = KB_ERR_OOM;
    float *fq = NULL, *fk = NULL, *fv = NULL;
    double *p = NULL;
    attn_state *a = calloc(1, sizeof *a);
    if (!a)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the attention state");
    a->n = n;
    a->n_rows_all = bh * s;
    fq = malloc((size_t)n * sizeof(float));
    fk = malloc((size_t)n * sizeof(float));
    fv = malloc((size_t)n * sizeof(float));
    p = malloc((size_t)s * sizeof(double));
    a->o_f32 = malloc((size_t)n * sizeof(float));
    a->h_io = malloc((size_t)n * esz);
    if (!fq || !fk || !fv || !p || !a->o_f32 || !a->h_io || pick_rows(a, bh * s, s, d) != KB_OK) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation for %lld elements per tensor", (long long)n);
        goto fail;
    }
    a->want = malloc((size_t)(a->n_rows * d) * sizeof(float));
    a->got = malloc((size_t)(a->n_rows * d) * sizeof(float));
    a->lse_want = malloc((size_t)a->n_rows * sizeof(float));
    a->lse_got = malloc((size_t)a->n_rows * sizeof(float));
    a->lse_all = malloc((size_t)(bh * s) * sizeof(float));
    a->lse_extra = malloc((size_t)a->n_rows * sizeof(float));
    if (!a->want || !a->got || !a->lse_want || !a->lse_got || !a->lse_all || !a->lse_extra) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation of %lld reference rows", (long long)a->n_rows);
        goto fail;
    }
    if ((st = alloc_device(r, a)) != KB_OK)
        goto fail;

    /* Q and K span [-2, 2], so scores q.k/sqrt(d) have a standard deviation near 1.3 and
     * each softmax row is far from uniform: a missed rescale or a mask off by one key
     * moves the output well past the tolerance. V spans [-1, 1]. K carries +2 in every
     * element and every fourth query row +4: those rows' scores sit near 8 sqrt(d) (90 at
     * d = 128), where exp overflows fp32 unless the row max is subtracted first. */
    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    if ((st = make_input(r, &rng, -2.0f, 2.0f, 0.0f, 4.0f, d, n, a->h_io, fq, a->d_q)) != KB_OK ||
        (st = make_input(r, &rng, -2.0f, 2.0f, 2.0f, 0.0f, d, n, a->h_io, fk, a->d_k)) != KB_OK ||
        (st = make_input(r, &rng, -1.0f, 1.0f, 0.0f, 0.0f, d, n, a->h_io, fv, a->d_v)) != KB_OK)
        goto fail;
    if (c->variant == V_FA3 && (st = make_adversarial(r, a, fq, fk)) != KB_OK)
        goto fail;
    if (c->variant == V_CUDNN && (st = plan_cudnn(r, a)) != KB_OK)
        goto fail;

    int causal = c->params[P_CAUSAL] == CAUSAL_YES;
    for (int64_t k = 0; k < a->n_rows; k++) {
        int64_t row = a->rows[k], head = row / s, i = row % s;
        const float *base_k = fk + head * s * d, *base_v = fv + head * s * d;
        double sabs;
        ref_row(fq + row * d, base_k, base_v, s, d, i, causal, p, a->want + k * d, a->lse_want + k, &sabs);
        a->lse_extra[k] = (float)((double)(d + 8) * ldexp(sabs, -24));   /* the lse's gamma_{d+8} term */
    }
    free(p);
    expose_inputs(r, a, fq, fk, fv);
    *state = a;
    return KB_OK;
fail:
    free(p);
    free(fv);
    free(fk);
    free(fq);
    state_free(a);
    return st;
}

static kb_status attn_enqueue(kb_run *r, void *state)
{
    const kb_case *c = r->c;
    attn_state *a = state;
    int64_t s = c->dims[D_S], d = c->dims[D_D];
    unsigned bh = (unsigned)(c->dims[D_B] * c->dims[D_H]);
    float scale = (float)(1.0 / sqrt((double)d));
    kb_status st;
    if (KB_DEC_VARIANT(c->variant))
        return kb_attn_decode_enqueue(r, state);
    if (kb_attn_fa3_is_fp8(c))
        return kb_attn_fa3_fp8_enqueue(r, state);
    if (c->variant == V_CUDNN)
        return kb_run_vendor_run(r, a->plan);
    if (c->variant == V_FA3)
        return kb_attn_fa3_launch(r, a->maps, a->d_lse, a->d_ctr, NULL);
    if (c->variant != V_NAIVE) {
        int64_t bq = c->params[P_BQ];
        unsigned threads = (unsigned)kb_attn_threads(c);
        kb_geom g = { { (unsigned)((s + bq - 1) / bq), bh, 1 }, { threads, 1, 1 },
            (size_t)kb_attn_shmem_bytes(c), { 1, 1, 1 } };
        kb_arg args[] = { kb_arg_ptr(a->d_q), kb_arg_ptr(a->d_k), kb_arg_ptr(a->d_v), kb_arg_ptr(a->d_o),
                          kb_arg_i32((int32_t)s), kb_arg_f32(scale) };
        return kb_run_launch(r, r->f->variants[c->variant].entry, &g, args, 6);
    }
    /* naive: three launches, one case */
    int64_t block = c->params[P_BLOCK];
    kb_geom g1 = { { (unsigned)((s * s + block - 1) / block), bh, 1 }, { (unsigned)block, 1, 1 }, 0, { 1, 1, 1 } };
    kb_arg a1[] = { kb_arg_ptr(a->d_q), kb_arg_ptr(a->d_k), kb_arg_ptr(a->d_s), kb_arg_i32((int32_t)s),
                    kb_arg_i32((int32_t)d), kb_arg_f32(scale) };
    if ((st = kb_run_launch(r, "attn_naive_scores", &g1, a1, 6)) != KB_OK)
        return st;
    kb_geom g2 = { { (unsigned)((s + block - 1) / block), bh, 1 }, { (unsigned)block, 1, 1 }, 0, { 1, 1, 1 } };
    kb_arg a2[] = { kb_arg_ptr(a->d_s), kb_arg_i32((int32_t)s) };
    if ((st = kb_run_launch(r, "attn_naive_softmax", &g2, a2, 2)) != KB_OK)
        return st;
    kb_geom g3 = { { (unsigned)((s * d + block - 1) / block), bh, 1 }, { (unsigned)block, 1, 1 }, 0, { 1, 1, 1 } };
    kb_arg a3[] = { kb_arg_ptr(a->d_s), kb_arg_ptr(a->d_v), kb_arg_ptr(a->d_o), kb_arg_i32((int32_t)s),
                    kb_arg_i32((int32_t)d) };
    return kb_run_launch(r, "attn_naive_pv", &g3, a3, 5);
}

/* Tolerance: inputs are exact in the dtype and every intermediate is fp32, so the dtype
 * enters once, in the rounding of O (kb_tolerance(dtype, 1): fp16 atol 9.8e-4, bf16
 * 7.8e-3, within docs/references.md's 1e-3..1e-2 for attention). The fp32 sums over d (QK^T)
 * and s (PV), and __expf, add kb_tolerance(fp32, max(s, d)) (1e-5 at these sizes). The
 * mma variant also rounds P to the dtype before P V: each p_j gains a relative error
 * <= u, which moves O = sum p_j v_j / l by at most u * max|v| = u (V is in [-1, 1]),
 * so its atol grows by u. cuDNN's flash engines round P the same way (P in the I/O type). */
static void attn_tolerance(const kb_case *c, double *atol, double *rtol)
{
    double a1, r1, a2, r2;
    int64_t s = c->dims[D_S], d = c->dims[D_D];
    kb_tolerance(c->dtype, 1, &a1, &r1);
    kb_tolerance(KB_DT_FP32, s > d ? s : d, &a2, &r2);
    *atol = a1 + a2 + (kb_attn_is_mma(c) || c->variant == V_CUDNN || c->variant == V_FA3
                           ? kb_dtype_unit_roundoff(c->dtype) : 0.0);
    *rtol = r1 + r2;
}

/* fa3 with lse: the checked rows' log-sum-exp at kb_attn_fa3_lse_tolerance in a comparison of
 * their own, merged into O's v (its indices follow O's). */
static kb_status check_lse(kb_run *r, attn_state *a, kb_verify *v)
{
    kb_status st = kb_run_download(r, a->lse_all, a->d_lse, (size_t)a->n_rows_all * sizeof(float));
    if (st != KB_OK)
        return st;
    for (int64_t k = 0; k < a->n_rows; k++)
        a->lse_got[k] = a->lse_all[a->rows[k]];
    double atol, rtol;
    kb_verify w;
    kb_attn_fa3_lse_tolerance(r->c, &atol, &rtol);
    kb_verify_init(&w, atol, rtol);
    kb_verify_f32_scaled(&w, a->lse_got, a->lse_want, a->lse_extra, a->n_rows);
    kb_verify_merge(v, &w);
    kb_run_expose(r, "lse", a->lse_got, &a->n_rows, 1);
    return KB_OK;
}

static kb_status attn_check(kb_run *r, void *state, kb_verify *v)
{
    const kb_case *c = r->c;
    attn_state *a = state;
    int64_t d = c->dims[D_D];
    if (KB_DEC_VARIANT(c->variant))
        return kb_attn_decode_check(r, state, v);
    if (kb_attn_fa3_is_fp8(c))
        return kb_attn_fa3_fp8_check(r, state, v);
    kb_status st = kb_run_download(r, a->h_io, a->d_o, (size_t)a->n * kb_dtype_size(c->dtype));
    if (st != KB_OK)
        return st;
    kb_host_to_f32(c->dtype, a->h_io, a->o_f32, a->n);
    for (int64_t k = 0; k < a->n_rows; k++)
        for (int64_t e = 0; e < d; e++)
            a->got[k * d + e] = a->o_f32[a->rows[k] * d + e];
    double atol, rtol;
    attn_tolerance(c, &atol, &rtol);
    kb_verify_init(v, atol, rtol);
    kb_verify_f32(v, a->got, a->want, a->n_rows * d);
    if (a->d_lse && (st = check_lse(r, a, v)) != KB_OK)
        return st;
    if (a->d_ctr && (st = kb_attn_fa3_check_counter(r, a->d_ctr, v)) != KB_OK)   /* after O and lse */
        return st;
    /* for --dump: the checked rows of O (every row at emulator sizes) and their reference */
    int64_t shape[2] = { a->n_rows, d };
    kb_run_expose(r, "out", a->got, shape, 2);
    kb_run_expose(r, "ref", a->want, shape, 2);
    if (!a->rows_f && (a->rows_f = malloc((size_t)a->n_rows * sizeof(float))))
        for (int64_t k = 0; k < a->n_rows; k++) a->rows_f[k] = (float)a->rows[k];
    if (a->rows_f)
        kb_run_expose(r, "rows", a->rows_f, &a->n_rows, 1);
    return KB_OK;
}

static void attn_teardown(kb_run *r, void *state)
{
    if (KB_DEC_VARIANT(r->c->variant))
        kb_attn_decode_teardown(r, state);
    else if (kb_attn_fa3_is_fp8(r->c))
        kb_attn_fa3_fp8_teardown(r, state);
    else
        state_free(state);
}

/* The instruction each variant's inner loop issues: fp32 FMA (naive, fused), the dtype's
 * mma.sync (mma, fa2, decode); cuDNN's own instructions are not kbench's to name. */
static int attn_path(const kb_case *c, int sm, kb_path *out)
{
    if (c->variant == V_CUDNN)
        return 0;
    if (c->variant == V_FA3)
        return kb_path_set(out, "wgmma", c->dtype, 0);
    if (kb_attn_is_mma(c) || KB_DEC_VARIANT(c->variant))
        return kb_path_set(out, "mma", c->dtype, 0);
    return kb_path_set(out, "fma", KB_DT_FP32, 0);
}

/* The traffic hook: decode's model is its own (attention_decode_model.c), fa3's too (attention_fa3.c). */
static int attn_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t)
{
    if (c->variant == V_FA3)
        return kb_attn_fa3_traffic(c, g, t);
    return KB_DEC_VARIANT(c->variant) ? kb_dec_traffic(c, g, t) : kb_attn_traffic(c, g, t);
}

const kb_family kb_family_attention = {
    .name = "attention",
    .source = "attention.cu",
    .about = "forward attention softmax(QK^T/sqrt(d) [+causal]) V: materialised vs fused online softmax "
             "(SIMT, mma), cuDNN; split-KV decode with grouped-query heads",
    .variants = variants, .n_variants = KB_COUNT(variants),
    .dims = dims, .n_dims = KB_COUNT(dims),
    .params = params, .n_params = KB_COUNT(params),
    .valid = attn_valid,
    .defines = attn_defines,
    .work = attn_work,
    .setup = attn_setup,
    .enqueue = attn_enqueue,
    .check = attn_check,
    .teardown = attn_teardown,
    .path = attn_path,
    .traffic = attn_traffic,
    .other_op_variants = DECODE_ONLY,   /* q_len rows against s keys: not the square operation */
};
