/* attention.cu - forward attention, O = softmax(Q K^T * scale [+ causal mask]) V.
 *
 * Q, K, V, O are [b, h, s, d] contiguous in the storage type KB_T (fp16/bf16; fp32 too);
 * scores, softmax and accumulation are fp32. The grid's y index is the (batch, head)
 * pair, so every kernel sees one [s, d] slice per block row.
 *
 * Variants (naive first):
 *   naive   materialised, llm.c's attention_forward1 in three launches:
 *             attn_naive_scores   S = Q K^T * scale into a global fp32 [b,h,s,s] buffer,
 *                                 one thread per score, operands straight from global;
 *             attn_naive_softmax  one thread per row, three passes over S (max, sum of
 *                                 exp, normalise in place), so S becomes P;
 *             attn_naive_pv       O = P V, one thread per output element.
 *           The baseline: the s x s matrix goes to memory and back four more times,
 *           which is the traffic the fused variant exists to remove. With the causal
 *           mask only the lower triangle is written or read.
 *   fused   FlashAttention-2 style, one launch: a block owns BQ query rows of one
 *           (batch, head) and streams K/V through shared memory in tiles of BKV rows.
 *           Each query row is handled by TPR adjacent lanes that split the head dim:
 *           a lane keeps d/TPR elements of its row's q (pre-scaled) and of its output
 *           accumulator in registers, forms partial dot products with each key and
 *           completes them with an xor-butterfly over the TPR lanes, so every lane of
 *           the row holds the scores of a chunk of KC keys. The online softmax (running
 *           max m, running sum l, accumulator rescaled by exp(m_old - m_new), once per
 *           chunk) then needs no communication and no shared-memory score tile. A thread owns RQ rows, so a
 *           K/V element read from shared memory feeds RQ rows (register blocking, as in
 *           a SIMT GEMM). O is written once, divided by l. With the causal mask a block
 *           stops at its last row's key: the K/V tiles it would fully mask are skipped.
 *           SIMT fp32 math, exp through __expf as FlashAttention does.
 *
 * Defines (from the harness): KB_T storage type; CAUSAL (CAUSAL_NO | CAUSAL_YES);
 * naive: BLOCK threads per block; fused: HEAD_D head dim, BQ query rows per block,
 * BKV key rows per K/V tile, KC keys per register chunk, TPR lanes per query row, RQ
 * query rows per thread.
 */
#include "kb_device.h"

#ifndef CAUSAL
#define CAUSAL 0
#define CAUSAL_NO 0
#define CAUSAL_YES 1
#endif

/* ================================ naive ================================ */

#ifndef BLOCK
#define BLOCK 256
#endif
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of the warp size, at most 1024");

/* S[i][j] = scale * sum_c Q[i][c] K[j][c]; thread (i, j) = blockIdx.x * BLOCK + threadIdx.x
 * in row-major order, so adjacent threads read adjacent K rows (strided, uncoalesced: the
 * naive baseline). Masked scores (j > i) are never written: nothing reads them. */
extern "C" __global__ void __launch_bounds__(BLOCK)
attn_naive_scores(const KB_T *__restrict__ q, const KB_T *__restrict__ k, float *__restrict__ sc, int s, int d,
                  float scale)
{
    long long idx = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (idx >= (long long)s * s)
        return;
    int i = (int)(idx / s), j = (int)(idx % s);
#if CAUSAL == CAUSAL_YES
    if (j > i)
        return;
#endif
    long long bh = blockIdx.y;
    const KB_T *qi = q + (bh * s + i) * d;
    const KB_T *kj = k + (bh * s + j) * d;
    float acc = 0.0f;
    for (int c = 0; c < d; c++)
        acc += kb_to_float(qi[c]) * kb_to_float(kj[c]);
    sc[(bh * s + i) * s + j] = acc * scale;
}

/* Row i of S becomes softmax(row), in place: pass 1 max, pass 2 sum of exp(x - max),
 * pass 3 write exp(x - max) / sum. One thread per row; the row ends at i when causal. */
extern "C" __global__ void __launch_bounds__(BLOCK)
attn_naive_softmax(float *__restrict__ sc, int s)
{
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= s)
        return;
    float *row = sc + ((long long)blockIdx.y * s + i) * s;
#if CAUSAL == CAUSAL_YES
    int n = i + 1;
#else
    int n = s;
#endif
    float mx = -INFINITY;
    for (int j = 0; j < n; j++)
        mx = fmaxf(mx, row[j]);
    float sum = 0.0f;
    for (int j = 0; j < n; j++)
        sum += expf(row[j] - mx);
    float inv = 1.0f / sum;
    for (int j = 0; j < n; j++)
        row[j] = expf(row[j] - mx) * inv;
}

/* O[i][c] = sum_j P[i][j] V[j][c]; adjacent threads take adjacent c, so the P element is
 * a broadcast and the V row a coalesced read. */
extern "C" __global__ void __launch_bounds__(BLOCK)
attn_naive_pv(const float *__restrict__ p, const KB_T *__restrict__ v, KB_T *__restrict__ o, int s, int d)
{
    long long idx = (long long)blockIdx.x * BLOCK + threadIdx.x;
    if (idx >= (long long)s * d)
        return;
    int i = (int)(idx / d), c = (int)(idx % d);
    long long bh = blockIdx.y;
    const float *pi = p + (bh * s + i) * s;
    const KB_T *vc = v + bh * s * d + c;
#if CAUSAL == CAUSAL_YES
    int n = i + 1;
#else
    int n = s;
#endif
    float acc = 0.0f;
    for (int j = 0; j < n; j++)
        acc += pi[j] * kb_to_float(vc[(long long)j * d]);
    o[(bh * s + i) * d + c] = kb_from_float<KB_T>(acc);
}

/* ================================ fused ================================ */

/* The host defines HEAD_D for fused cases only, so a naive module does not pay for
 * compiling (and checking) a fused kernel it never launches. */
#ifdef HEAD_D
#ifndef BQ
#define BQ 32
#endif
#ifndef BKV
#define BKV 32
#endif
#ifndef KC
#define KC 8
#endif
#ifndef TPR
#define TPR 4
#endif
#ifndef RQ
#define RQ 1
#endif

#define FUSED_THREADS (BQ / RQ * TPR)
#define FUSED_DPT (HEAD_D / TPR)           /* head-dim columns per lane */
#define FUSED_LVEC (16 / (int)sizeof(KB_T)) /* elements per 16-byte K/V load */

static_assert(TPR == 1 || TPR == 2 || TPR == 4 || TPR == 8 || TPR == 16 || TPR == 32,
              "TPR must be a power of two <= 32: a row's lanes reduce with an xor-butterfly inside one warp");
static_assert(HEAD_D % TPR == 0, "HEAD_D must be a multiple of TPR: each lane of a row owns HEAD_D/TPR columns");
static_assert(HEAD_D % FUSED_LVEC == 0, "HEAD_D x sizeof(KB_T) must be a multiple of 16 bytes (128-bit K/V loads)");
static_assert(BQ % RQ == 0, "BQ must be a multiple of RQ: every thread owns RQ whole query rows");
static_assert(BKV % KC == 0, "BKV must be a multiple of KC: a K/V tile is consumed in whole chunks of KC keys");
static_assert(FUSED_THREADS % 32 == 0 && FUSED_THREADS <= 1024,
              "BQ/RQ*TPR threads must be a multiple of the warp size (full-mask shuffles), at most 1024");
static_assert(RQ * (2 * FUSED_DPT + KC) <= 255,
              "RQ*(2*HEAD_D/TPR + KC) per-thread floats (q, accumulator, scores) exceed the 255-register file");

extern "C" __global__ void __launch_bounds__(FUSED_THREADS)
attn_fused(const KB_T *__restrict__ q, const KB_T *__restrict__ k, const KB_T *__restrict__ v,
           KB_T *__restrict__ o, int s, float scale)
{
    KB_DYN_SHARED(float, smem);
    float *ks = smem;                  /* [BKV][HEAD_D] key tile, fp32 */
    float *vs = smem + BKV * HEAD_D;   /* [BKV][HEAD_D] value tile, fp32 */

    const int tid = threadIdx.x;
    const int t = tid % TPR;           /* lane within the row group: columns t, t+TPR, ... */
    const int row0 = blockIdx.x * BQ + (tid / TPR) * RQ;
    const long long base = (long long)blockIdx.y * s * HEAD_D;
    q += base;
    k += base;
    v += base;
    o += base;

    float qr[RQ][FUSED_DPT], acc[RQ][FUSED_DPT], m[RQ], l[RQ];
#pragma unroll
    for (int r = 0; r < RQ; r++) {
        int row = row0 + r;
#pragma unroll
        for (int i = 0; i < FUSED_DPT; i++) {
            /* rows past s compute with q = 0 (they must join the shuffles) and never store */
            qr[r][i] = row < s ? kb_to_float(q[(long long)row * HEAD_D + t + TPR * i]) * scale : 0.0f;
            acc[r][i] = 0.0f;
        }
        m[r] = -INFINITY;
        l[r] = 0.0f;
    }

    int kv_end = s;
#if CAUSAL == CAUSAL_YES
    /* keys after the block's last row are masked for every row of the block */
    kv_end = min(s, (int)(blockIdx.x * BQ + BQ));
#endif
    for (int kv0 = 0; kv0 < kv_end; kv0 += BKV) {
        /* K/V tile: BKV consecutive rows are one contiguous run of BKV*HEAD_D elements,
         * loaded 16 bytes per thread per step (coalesced); rows past s become zeros. */
        for (int e = tid; e < BKV * HEAD_D / FUSED_LVEC; e += FUSED_THREADS) {
            int r = e / (HEAD_D / FUSED_LVEC), c = (e % (HEAD_D / FUSED_LVEC)) * FUSED_LVEC;
            float *kd = ks + r * HEAD_D + c, *vd = vs + r * HEAD_D + c;
            if (kv0 + r < s) {
                long long off = (long long)(kv0 + r) * HEAD_D + c;
                kb_vec<KB_T, FUSED_LVEC> kx = kb_load_vec<FUSED_LVEC>(k + off);
                kb_vec<KB_T, FUSED_LVEC> vx = kb_load_vec<FUSED_LVEC>(v + off);
#pragma unroll
                for (int j = 0; j < FUSED_LVEC; j++) {
                    kd[j] = kb_to_float(kx.v[j]);
                    vd[j] = kb_to_float(vx.v[j]);
                }
            } else {
#pragma unroll
                for (int j = 0; j < FUSED_LVEC; j++)
                    kd[j] = vd[j] = 0.0f;
            }
        }
        __syncthreads();

        /* The tile is consumed KC keys at a time: KC scores per row live in registers
         * (fully unrolled), while the chunk loop stays rolled, so code size and compile
         * time grow with KC, not with BKV. The online softmax works per chunk; its
         * rescale costs 1/(2*KC) of the chunk's multiply-adds. The bound is the same
         * for the whole block, so the early exit cannot split a warp's shuffles. */
#pragma unroll 1
        for (int j0 = 0; j0 < BKV && kv0 + j0 < kv_end; j0 += KC) {
            /* scores: partial dots over the lane's columns, completed across the row's
             * TPR lanes by an xor-butterfly; every lane ends with the chunk's full row */
            float sc[RQ][KC];
#pragma unroll
            for (int j = 0; j < KC; j++) {
                const float *kr = ks + (j0 + j) * HEAD_D + t;
#pragma unroll
                for (int r = 0; r < RQ; r++) {
                    float part = 0.0f;
#pragma unroll
                    for (int i = 0; i < FUSED_DPT; i++)
                        part = fmaf(qr[r][i], kr[TPR * i], part);
#pragma unroll
                    for (int off = TPR / 2; off > 0; off /= 2)
                        part += __shfl_xor_sync(0xffffffffu, part, off);
                    int key = kv0 + j0 + j;
                    bool masked = key >= s;
#if CAUSAL == CAUSAL_YES
                    masked = masked || key > row0 + r;
#endif
                    sc[r][j] = masked ? -INFINITY : part;
                }
            }

            /* online softmax: new running max, rescale what was accumulated, add the chunk */
#pragma unroll
            for (int r = 0; r < RQ; r++) {
                float mt = m[r];
#pragma unroll
                for (int j = 0; j < KC; j++)
                    mt = fmaxf(mt, sc[r][j]);
                /* mt is finite: the first chunk holds key 0, which no row masks, so alpha
                 * is exp(-inf) = 0 there and never exp(-inf - -inf) = NaN */
                float alpha = __expf(m[r] - mt);
                float sum = 0.0f;
#pragma unroll
                for (int j = 0; j < KC; j++) {
                    sc[r][j] = __expf(sc[r][j] - mt);
                    sum += sc[r][j];
                }
                l[r] = l[r] * alpha + sum;
                m[r] = mt;
#pragma unroll
                for (int i = 0; i < FUSED_DPT; i++)
                    acc[r][i] *= alpha;
            }
#pragma unroll
            for (int j = 0; j < KC; j++) {
                const float *vr = vs + (j0 + j) * HEAD_D + t;
#pragma unroll
                for (int i = 0; i < FUSED_DPT; i++) {
                    float vv = vr[TPR * i];
#pragma unroll
                    for (int r = 0; r < RQ; r++)
                        acc[r][i] = fmaf(sc[r][j], vv, acc[r][i]);
                }
            }
        }
        __syncthreads();   /* the tile is consumed: the next iteration may overwrite it */
    }

#pragma unroll
    for (int r = 0; r < RQ; r++) {
        int row = row0 + r;
        if (row >= s)
            continue;
        float inv = 1.0f / l[r];
#pragma unroll
        for (int i = 0; i < FUSED_DPT; i++)
            o[(long long)row * HEAD_D + t + TPR * i] = kb_from_float<KB_T>(acc[r][i] * inv);
    }
}

#endif /* HEAD_D */
