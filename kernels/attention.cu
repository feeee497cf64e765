/* attention.cu - forward attention, O = softmax(Q K^T * scale [+ causal mask]) V.
 *
 * Q, K, V, O are [b, h, s, d] contiguous in the storage type KB_T (fp16/bf16; fp32 too
 * for naive and fused); softmax and accumulation are fp32. The grid's y index is the
 * (batch, head) pair, so every kernel sees one [s, d] slice per block row.
 *
 * Variants (naive first):
 *   naive   materialised, llm.c's attention_forward1 in three launches:
 *             attn_naive_scores   S = Q K^T * scale into a global fp32 [b,h,s,s] buffer,
 *                                 one thread per score, operands straight from global;
 *             attn_naive_softmax  one thread per row, three passes over S (max, sum of
 *                                 exp, normalise in place), so S becomes P;
 *             attn_naive_pv       O = P V, one thread per output element.
 *           The baseline: the s x s matrix goes to memory and back four more times,
 *           which is the traffic the fused variants exist to remove. With the causal
 *           mask only the lower triangle is written or read.
 *   fused   FlashAttention-2 style in one launch, SIMT fp32: a block owns BQ query rows
 *           of one (batch, head) and streams K/V through shared memory in tiles of BKV
 *           rows, so S never leaves the chip. Each query row is handled by TPR adjacent
 *           lanes that split the head dim: a lane keeps d/TPR elements of its row's q
 *           (pre-scaled) and of its output accumulator in registers, forms partial dot
 *           products with each key and completes them with an xor-butterfly over the
 *           TPR lanes, so every lane of the row holds the scores of a chunk of KC keys.
 *           The online softmax (running max m, running sum l, accumulator rescaled by
 *           exp(m_old - m_new) once per chunk) then needs no further communication and
 *           no shared-memory score tile. A thread owns RQ rows, so a K/V element read
 *           from shared memory feeds RQ rows (register blocking, as in a SIMT GEMM), and
 *           a lane's columns come in runs of 4 adjacent ones where d/TPR allows, so one
 *           16-byte shared load feeds 4 x RQ multiply-adds. O
 *           is written once, divided by l. With the causal mask a block stops at its
 *           last row's key: the K/V tiles it would fully mask are never loaded.
 *   mma     the same algorithm on the tensor cores (fp16/bf16): one warp per 16 query
 *           rows, S = Q K^T and O += P V by mma.sync m16n8k16 with fp32 accumulation,
 *           operands by ldmatrix, K/V tiles double-buffered by cp.async (K and V in
 *           separate groups, so S starts when K has landed) so the next tile loads while
 *           the current one is consumed. P is rounded to the input dtype for the second
 *           product, as FlashAttention does. The mask is applied only to tiles that cross
 *           the diagonal (or end past s); exp is exp2 of one FFMA (scale * log2 e folded
 *           in); O leaves through shared memory in 16-byte stores.
 *   fa2     the mma kernel at FlashAttention-2's configuration (RW = 32): one warp per 32
 *           query rows, so each ldmatrix of K or V feeds two m16 row tiles (half the shared
 *           bytes per FLOP), Q re-read from shared memory per k-step to leave the registers
 *           to the doubled accumulators; 128x64 or 128x32 tiles with 4 warps.
 *   decode  split-KV flash-decoding: a few query rows (q_len <= 16) against a long KV cache,
 *           grouped-query heads sharing K/V reads, the splits combined by their log-sum-exp
 *           (kernels/attention_decode.cu, included below when ATTN_DECODE is defined: its own
 *           file keeps this one readable; the family keeps one source).
 * exp is __expf in the fused variant (FlashAttention's exp2f fast path), exp2f in attn_mma.
 *
 * Defines (from the harness): KB_T storage type; KB_DTYPE_<X>; CAUSAL (CAUSAL_NO |
 * CAUSAL_YES); naive: BLOCK threads per block; fused (ATTN_FUSED): HEAD_D head dim, BQ
 * query rows per block, BKV key rows per K/V tile, KC keys per register chunk, TPR lanes
 * per query row, RQ query rows per thread; mma, fa2 (ATTN_MMA): HEAD_D, BQ, BKV, RW query rows
 * per warp (16 or 32).
 */
#include "kb_device.h"
#include "kb_reduce.h"

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

/* The host defines ATTN_FUSED (and HEAD_D) for fused cases only, so no other module pays
 * for compiling (and checking) a kernel it never launches. */
#ifdef ATTN_FUSED
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
/* A lane's columns come in runs of FUSED_CW adjacent ones, run u at FUSED_CW*(t + TPR*u):
 * one shared-memory load of FUSED_CW floats (16 bytes at 4) feeds FUSED_CW x RQ FMAs. */
#define FUSED_CW (FUSED_DPT % 4 == 0 ? 4 : FUSED_DPT % 2 == 0 ? 2 : 1)
#define FUSED_COL(i) (FUSED_CW * (t + TPR * ((i) / FUSED_CW)) + (i) % FUSED_CW)
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

/* On sm_10x ptxas (NVRTC 13.0) holds the register-blocked fused kernel (RQ > 1) to 168
 * registers and spills (seen with kbench compile --arch sm_100 at BQ=32, TPR=4, RQ=2, d=128);
 * one resident block per SM as the minimum lets it use the 214 it needs. Other archs keep
 * ptxas's own choice (sm_90: 186 registers, no spill). */
#if KB_ARCH / 10 == 10
#define FUSED_BOUNDS __launch_bounds__(FUSED_THREADS, 1)
#else
#define FUSED_BOUNDS __launch_bounds__(FUSED_THREADS)
#endif

extern "C" __global__ void FUSED_BOUNDS
attn_fused(const KB_T *__restrict__ q, const KB_T *__restrict__ k, const KB_T *__restrict__ v,
           KB_T *__restrict__ o, int s, float scale)
{
    KB_DYN_SHARED(float, smem);
    float *ks = smem;                  /* [BKV][HEAD_D] key tile, fp32 */
    float *vs = smem + BKV * HEAD_D;   /* [BKV][HEAD_D] value tile, fp32 */

    const int tid = threadIdx.x;
    const int t = tid % TPR;           /* lane within the row group: columns FUSED_COL(i) */
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
            qr[r][i] = row < s ? kb_to_float(q[(long long)row * HEAD_D + FUSED_COL(i)]) * scale : 0.0f;
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
         * loaded 16 bytes per thread per step (coalesced) and stored as 16-byte float4s
         * (scalar stores at a lane stride of 8 floats would conflict 8 ways); rows past
         * s become zeros. */
        for (int e = tid; e < BKV * HEAD_D / FUSED_LVEC; e += FUSED_THREADS) {
            int r = e / (HEAD_D / FUSED_LVEC), c = (e % (HEAD_D / FUSED_LVEC)) * FUSED_LVEC;
            kb_vec<float, 4> kf[FUSED_LVEC / 4], vf[FUSED_LVEC / 4];
            if (kv0 + r < s) {
                long long off = (long long)(kv0 + r) * HEAD_D + c;
                kb_vec<KB_T, FUSED_LVEC> kx = kb_load_vec<FUSED_LVEC>(k + off);
                kb_vec<KB_T, FUSED_LVEC> vx = kb_load_vec<FUSED_LVEC>(v + off);
#pragma unroll
                for (int j = 0; j < FUSED_LVEC; j++) {
                    kf[j / 4].v[j % 4] = kb_to_float(kx.v[j]);
                    vf[j / 4].v[j % 4] = kb_to_float(vx.v[j]);
                }
            } else {
#pragma unroll
                for (int j = 0; j < FUSED_LVEC; j++)
                    kf[j / 4].v[j % 4] = vf[j / 4].v[j % 4] = 0.0f;
            }
#pragma unroll
            for (int j = 0; j < FUSED_LVEC / 4; j++) {
                kb_store_vec<4>(ks + r * HEAD_D + c + 4 * j, kf[j]);
                kb_store_vec<4>(vs + r * HEAD_D + c + 4 * j, vf[j]);
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
                /* i outer, rows inner: each K load feeds the RQ rows (register blocking) */
                const float *kr = ks + (j0 + j) * HEAD_D + FUSED_CW * t;
                float part[RQ];
#pragma unroll
                for (int r = 0; r < RQ; r++)
                    part[r] = 0.0f;
#pragma unroll
                for (int u = 0; u < FUSED_DPT / FUSED_CW; u++) {
                    kb_vec<float, FUSED_CW> kv = kb_load_vec<FUSED_CW>(kr + FUSED_CW * TPR * u);
#pragma unroll
                    for (int e = 0; e < FUSED_CW; e++)
#pragma unroll
                        for (int r = 0; r < RQ; r++)
                            part[r] = fmaf(qr[r][u * FUSED_CW + e], kv.v[e], part[r]);
                }
#pragma unroll
                for (int r = 0; r < RQ; r++) {
                    float dot = kb_warp_sum<TPR>(part[r]);
                    int key = kv0 + j0 + j;
                    bool masked = key >= s;
#if CAUSAL == CAUSAL_YES
                    masked = masked || key > row0 + r;
#endif
                    sc[r][j] = masked ? -INFINITY : dot;
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
                const float *vr = vs + (j0 + j) * HEAD_D + FUSED_CW * t;
#pragma unroll
                for (int u = 0; u < FUSED_DPT / FUSED_CW; u++) {
                    kb_vec<float, FUSED_CW> vv = kb_load_vec<FUSED_CW>(vr + FUSED_CW * TPR * u);
#pragma unroll
                    for (int e = 0; e < FUSED_CW; e++)
#pragma unroll
                        for (int r = 0; r < RQ; r++)
                            acc[r][u * FUSED_CW + e] = fmaf(sc[r][j], vv.v[e], acc[r][u * FUSED_CW + e]);
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
        for (int u = 0; u < FUSED_DPT / FUSED_CW; u++) {
            kb_vec<KB_T, FUSED_CW> w;
#pragma unroll
            for (int e = 0; e < FUSED_CW; e++)
                w.v[e] = kb_from_float<KB_T>(acc[r][u * FUSED_CW + e] * inv);
            kb_store_vec<FUSED_CW>(o + (long long)row * HEAD_D + FUSED_CW * (t + TPR * u), w);
        }
    }
}

#endif /* ATTN_FUSED */

/* ================================= mma ================================= */

#ifdef ATTN_MMA
#ifndef BQ
#define BQ 64
#endif
#ifndef BKV
#define BKV 32
#endif
#ifndef RW
#define RW 16
#endif

#define MMA_MT (RW / 16)             /* m16 row tiles per warp */
#define MMA_THREADS (BQ / RW * 32)   /* one warp per RW query rows */
#define MMA_LD (HEAD_D + 8)          /* shared row stride [elements]: +16 bytes puts the 8 rows of an
                                      * ldmatrix on 8 different 4-bank groups */
#define MMA_DK (HEAD_D / 16)         /* k-steps of S = Q K^T */
#define MMA_DN (HEAD_D / 8)          /* n-tiles of O = P V */
#define MMA_NT (BKV / 8)             /* n-tiles of S */
#define MMA_QREG (RW == 16)          /* Q fragments live in registers; at 32 rows per warp they are
                                      * re-read from shared memory per k-step (FlashAttention-2) to
                                      * leave the registers to the doubled accumulators */
#define MMA_LOG2E 1.4426950408889634f

static_assert(sizeof(KB_T) == 2, "the mma variant takes fp16 or bf16 operands (m16n8k16)");
static_assert(RW == 16 || RW == 32, "RW (query rows per warp) must be 16 or 32");
static_assert(HEAD_D % 16 == 0, "HEAD_D must be a multiple of 16: the k-step of Q K^T and a pair of PV n-tiles");
static_assert(BQ % RW == 0 && BQ / RW <= 32, "BQ must be a multiple of RW (one warp per RW rows), at most 32 warps");
static_assert(BKV % 16 == 0, "BKV must be a multiple of 16: the k-step of P V");
static_assert(MMA_MT * (MMA_DN * 4 + MMA_NT * 4) + (MMA_QREG ? MMA_DK * 4 : 8) <= 255,
              "Q fragments + O accumulators + S tile per thread exceed the 255-register file");

#if defined(KB_DTYPE_BF16)
#define MMA_OP kb_mma_m16n8k16_f32_bf16
#else
#define MMA_OP kb_mma_m16n8k16_f32_f16
#endif

/* Two floats as one 32-bit register of two KB_T, low half first (an A-fragment word). */
__device__ __forceinline__ uint32_t mma_pack2(float lo, float hi)
{
    kb_vec<KB_T, 2> p;
    p.v[0] = kb_from_float<KB_T>(lo);
    p.v[1] = kb_from_float<KB_T>(hi);
    uint32_t w;
    memcpy(&w, &p, sizeof w);
    return w;
}

/* Rows [r0, r0 + nrows) of one [s, HEAD_D] slice into shared rows of stride MMA_LD, 16
 * bytes per cp.async; rows past s are zero-filled (src is then not read). */
__device__ __forceinline__ void mma_load_rows(KB_T *dst, const KB_T *src, int r0, int nrows, int s)
{
    const int chunks = HEAD_D / 8;   /* 16-byte chunks per row */
    for (int e = threadIdx.x; e < nrows * chunks; e += MMA_THREADS) {
        int r = e / chunks, c = (e % chunks) * 8;
        bool in = r0 + r < s;
        kb_cp_async_16_zfill(dst + r * MMA_LD + c, in ? src + (long long)(r0 + r) * HEAD_D + c : src, in ? 16 : 0);
    }
}

/* S = Q K^T for the warp's RW rows and the BKV keys of the tile in ks. The A fragments of
 * Q come from qf (16 rows per warp) or, per k-step, from the warp's rows of qs; every
 * ldmatrix of K feeds MMA_MT row tiles. */
__device__ __forceinline__ void mma_scores(float sc[MMA_MT][MMA_NT][4], const uint32_t (*qf)[4], const KB_T *qs,
                                           const KB_T *ks, int lane)
{
    const int lj = lane >> 3, li = lane & 7;   /* ldmatrix: this lane addresses row li of matrix lj */
#pragma unroll
    for (int mi = 0; mi < MMA_MT; mi++)
#pragma unroll
        for (int nt = 0; nt < MMA_NT; nt++)
            sc[mi][nt][0] = sc[mi][nt][1] = sc[mi][nt][2] = sc[mi][nt][3] = 0.0f;
#pragma unroll
    for (int kt = 0; kt < MMA_DK; kt++) {
        uint32_t a[MMA_MT][4];
#pragma unroll
        for (int mi = 0; mi < MMA_MT; mi++) {
#if MMA_QREG
            a[mi][0] = qf[kt][0], a[mi][1] = qf[kt][1], a[mi][2] = qf[kt][2], a[mi][3] = qf[kt][3];
#else
            kb_ldmatrix_x4(a[mi], qs + (mi * 16 + (lj & 1) * 8 + li) * MMA_LD + kt * 16 + (lj >> 1) * 8);
#endif
        }
#pragma unroll
        for (int nt = 0; nt < MMA_NT; nt += 2) {
            /* matrices: keys nt*8.. (d lo, d hi), keys nt*8+8.. (d lo, d hi) */
            uint32_t b[4];
            kb_ldmatrix_x4(b, ks + (nt * 8 + (lj >> 1) * 8 + li) * MMA_LD + kt * 16 + (lj & 1) * 8);
#pragma unroll
            for (int mi = 0; mi < MMA_MT; mi++) {
                MMA_OP(sc[mi][nt], a[mi], b, sc[mi][nt]);
                MMA_OP(sc[mi][nt + 1], a[mi], b + 2, sc[mi][nt + 1]);
            }
        }
    }
}

/* Masks the scores of keys past s or, causal, after their query row (c[0], c[1] are row g,
 * c[2], c[3] row g+8 of row tile mi; keys 2t, 2t+1 of each n-tile; r0 the warp's first
 * row). Called only for the tiles that cross the diagonal or end past s: the others skip
 * the compare-and-select work. */
__device__ __forceinline__ void mma_mask(float sc[MMA_MT][MMA_NT][4], int kv0, int r0, int s, int lane)
{
    const int g = lane >> 2, t = lane & 3;
    (void)g;   /* the row is read only when causal */
#pragma unroll
    for (int mi = 0; mi < MMA_MT; mi++)
#pragma unroll
        for (int e = 0; e < 4; e++) {
            int lim = s;
#if CAUSAL == CAUSAL_YES
            lim = min(s, r0 + mi * 16 + (e >> 1) * 8 + g + 1);
#endif
#pragma unroll
            for (int nt = 0; nt < MMA_NT; nt++)
                if (kv0 + nt * 8 + 2 * t + (e & 1) >= lim)
                    sc[mi][nt][e] = -INFINITY;
        }
}

/* Online softmax of one tile: new running max m (of the raw scores: scale > 0 keeps the
 * order), the accumulator and l rescaled by exp2((m_old - m) * scale * log2 e), and the
 * scores replaced by p = exp2(s * sl2 - m * sl2): one FFMA and one ex2 per score. */
__device__ __forceinline__ void mma_softmax(float sc[MMA_MT][MMA_NT][4], float oacc[MMA_MT][MMA_DN][4],
                                            float m[MMA_MT][2], float l[MMA_MT][2], float sl2)
{
#pragma unroll
    for (int mi = 0; mi < MMA_MT; mi++) {
        float mt[2] = { m[mi][0], m[mi][1] }, alpha[2], msl[2], rs[2] = { 0.0f, 0.0f };
#pragma unroll
        for (int nt = 0; nt < MMA_NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                mt[e >> 1] = fmaxf(mt[e >> 1], sc[mi][nt][e]);
#pragma unroll
        for (int h = 0; h < 2; h++) {
            mt[h] = fmaxf(mt[h], __shfl_xor_sync(0xffffffffu, mt[h], 1));
            mt[h] = fmaxf(mt[h], __shfl_xor_sync(0xffffffffu, mt[h], 2));
            /* mt is finite: the first tile holds key 0, which no row masks */
            alpha[h] = exp2f((m[mi][h] - mt[h]) * sl2);
            msl[h] = mt[h] * sl2;
            m[mi][h] = mt[h];
        }
#pragma unroll
        for (int nt = 0; nt < MMA_NT; nt++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                sc[mi][nt][e] = exp2f(fmaf(sc[mi][nt][e], sl2, -msl[e >> 1]));
                rs[e >> 1] += sc[mi][nt][e];
            }
        l[mi][0] = l[mi][0] * alpha[0] + rs[0];
        l[mi][1] = l[mi][1] * alpha[1] + rs[1];
#pragma unroll
        for (int dn = 0; dn < MMA_DN; dn++) {
            oacc[mi][dn][0] *= alpha[0];
            oacc[mi][dn][1] *= alpha[0];
            oacc[mi][dn][2] *= alpha[1];
            oacc[mi][dn][3] *= alpha[1];
        }
    }
}

/* The fp32 probabilities as fp16/bf16 A fragments of P V (the m16n8 accumulator layout of
 * two n-tiles is the m16k16 A layout): half the registers of the scores they replace. */
__device__ __forceinline__ void mma_pack_p(uint32_t pa[MMA_MT][BKV / 16][4], float sc[MMA_MT][MMA_NT][4])
{
#pragma unroll
    for (int mi = 0; mi < MMA_MT; mi++)
#pragma unroll
        for (int kk = 0; kk < BKV / 16; kk++) {
            pa[mi][kk][0] = mma_pack2(sc[mi][2 * kk][0], sc[mi][2 * kk][1]);
            pa[mi][kk][1] = mma_pack2(sc[mi][2 * kk][2], sc[mi][2 * kk][3]);
            pa[mi][kk][2] = mma_pack2(sc[mi][2 * kk + 1][0], sc[mi][2 * kk + 1][1]);
            pa[mi][kk][3] = mma_pack2(sc[mi][2 * kk + 1][2], sc[mi][2 * kk + 1][3]);
        }
}

/* O += P V, V by ldmatrix.trans, every ldmatrix feeding MMA_MT row tiles. */
__device__ __forceinline__ void mma_pv(float oacc[MMA_MT][MMA_DN][4], const uint32_t pa[MMA_MT][BKV / 16][4],
                                       const KB_T *vs, int lane)
{
    const int lj = lane >> 3, li = lane & 7;
#pragma unroll
    for (int kk = 0; kk < BKV / 16; kk++) {
#pragma unroll
        for (int dn = 0; dn < MMA_DN; dn += 2) {
            /* matrices: keys lo/hi of the k-step for d tile dn, then for dn+1; transposed */
            uint32_t b[4];
            kb_ldmatrix_x4_trans(b, vs + (kk * 16 + (lj & 1) * 8 + li) * MMA_LD + dn * 8 + (lj >> 1) * 8);
#pragma unroll
            for (int mi = 0; mi < MMA_MT; mi++) {
                MMA_OP(oacc[mi][dn], pa[mi][kk], b, oacc[mi][dn]);
                MMA_OP(oacc[mi][dn + 1], pa[mi][kk], b + 2, oacc[mi][dn + 1]);
            }
        }
    }
}

/* O of the warp's rows, divided by l, through the warp's own RW rows of shared memory
 * (its Q rows, which no other warp reads and it needs no more), then 16 bytes per lane
 * per store: st.global.v4 instead of 4-byte stores of two elements. */
__device__ __forceinline__ void mma_store(KB_T *o, KB_T *os, float oacc[MMA_MT][MMA_DN][4], float l[MMA_MT][2],
                                          int r0, int s, int lane)
{
    const int g = lane >> 2, t = lane & 3;
    __syncwarp();   /* every lane is past its last read of the warp's Q rows */
#pragma unroll
    for (int mi = 0; mi < MMA_MT; mi++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            float lh = l[mi][h];
            lh += __shfl_xor_sync(0xffffffffu, lh, 1);
            lh += __shfl_xor_sync(0xffffffffu, lh, 2);
            const float inv = 1.0f / lh;
            KB_T *row = os + (mi * 16 + h * 8 + g) * MMA_LD + 2 * t;
#pragma unroll
            for (int dn = 0; dn < MMA_DN; dn++) {
                kb_vec<KB_T, 2> w;
                w.v[0] = kb_from_float<KB_T>(oacc[mi][dn][2 * h] * inv);
                w.v[1] = kb_from_float<KB_T>(oacc[mi][dn][2 * h + 1] * inv);
                kb_store_vec<2>(row + dn * 8, w);
            }
        }
    }
    __syncwarp();
    const int chunks = HEAD_D / 8;   /* 16-byte chunks per row */
    for (int e = lane; e < RW * chunks; e += 32) {
        int r = e / chunks, c = (e % chunks) * 8;
        if (r0 + r < s)
            *reinterpret_cast<uint4 *>(o + (long long)(r0 + r) * HEAD_D + c) =
                *reinterpret_cast<const uint4 *>(os + r * MMA_LD + c);
    }
}

/* FlashAttention-2 on the tensor cores. A block owns BQ query rows, one warp per RW (16
 * or 32) of them. K and V tiles of BKV rows arrive by cp.async into two shared-memory
 * stages, K and V in separate commit groups: S = Q K^T starts as soon as K has landed
 * while V is still in flight, and the next tile's K and V load while this one is
 * consumed. Per tile each warp computes its RW x BKV scores with mma.sync (K read by
 * ldmatrix as the column-major B operand), masks them only where the tile crosses the
 * diagonal (or ends past s), updates the online softmax on the accumulator fragments (a
 * row's values sit in the 4 lanes of a quad: two shuffles per max), and accumulates P V
 * with mma.sync (V by ldmatrix.trans). The running sum l stays per lane and is summed
 * over the quad once, at the end. With the causal mask a block stops at its last row's
 * key and a warp skips the tiles past its own rows. */
extern "C" __global__ void __launch_bounds__(MMA_THREADS)
attn_mma(const KB_T *__restrict__ q, const KB_T *__restrict__ k, const KB_T *__restrict__ v,
         KB_T *__restrict__ o, int s, float scale)
{
    KB_DYN_SHARED(KB_T, smem);
    KB_T *kvs = smem + BQ * MMA_LD;   /* [2 stages][K, V][BKV][MMA_LD] after the Q tile [BQ][MMA_LD] */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int q0 = blockIdx.x * BQ, wr = warp * RW;
    KB_T *qs = smem + wr * MMA_LD;                  /* the warp's own Q rows */
    const long long base = (long long)blockIdx.y * s * HEAD_D;
    q += base;
    k += base;
    v += base;
    o += base;

    int kv_end = s;
#if CAUSAL == CAUSAL_YES
    kv_end = min(s, q0 + BQ);        /* keys after the block's last row are masked for every row */
#endif
    const int ntiles = (kv_end + BKV - 1) / BKV;
    const float sl2 = scale * MMA_LOG2E;

    /* groups in order: Q, K0, V0, then K(i+1), V(i+1) per tile */
    mma_load_rows(smem, q, q0, BQ, s);
    kb_cp_async_commit();
    mma_load_rows(kvs, k, 0, BKV, s);
    kb_cp_async_commit();
    mma_load_rows(kvs + BKV * MMA_LD, v, 0, BKV, s);
    kb_cp_async_commit();

    uint32_t qf[MMA_QREG ? MMA_DK : 1][4];
#if MMA_QREG
    kb_cp_async_wait<2>();           /* Q has landed; K0 and V0 may still be in flight */
    __syncthreads();
    const int lj = lane >> 3, li = lane & 7;
#pragma unroll
    for (int kt = 0; kt < MMA_DK; kt++)
        kb_ldmatrix_x4(qf[kt], qs + ((lj & 1) * 8 + li) * MMA_LD + kt * 16 + (lj >> 1) * 8);
#endif

    float oacc[MMA_MT][MMA_DN][4], m[MMA_MT][2], l[MMA_MT][2];
#pragma unroll
    for (int mi = 0; mi < MMA_MT; mi++) {
        m[mi][0] = m[mi][1] = -INFINITY;
        l[mi][0] = l[mi][1] = 0.0f;
#pragma unroll
        for (int dn = 0; dn < MMA_DN; dn++)
            oacc[mi][dn][0] = oacc[mi][dn][1] = oacc[mi][dn][2] = oacc[mi][dn][3] = 0.0f;
    }

    for (int it = 0; it < ntiles; it++) {
        const int kv0 = it * BKV;
        const KB_T *ks = kvs + (it & 1) * 2 * BKV * MMA_LD, *vs = ks + BKV * MMA_LD;
        kb_cp_async_wait<1>();       /* K(it) has landed (and Q); V(it) may be in flight */
        __syncthreads();             /* ... for every thread, and every warp is done with tile it-1 */
        if (it + 1 < ntiles) {       /* so its stage takes tile it+1 */
            KB_T *kn = kvs + ((it + 1) & 1) * 2 * BKV * MMA_LD;
            mma_load_rows(kn, k, kv0 + BKV, BKV, s);
            kb_cp_async_commit();
            mma_load_rows(kn + BKV * MMA_LD, v, kv0 + BKV, BKV, s);
            kb_cp_async_commit();
        }
        bool skip = false, need_mask = kv0 + BKV > s;
#if CAUSAL == CAUSAL_YES
        skip = kv0 > q0 + wr + RW - 1;                  /* every key is after the warp's last row */
        need_mask = need_mask || kv0 + BKV - 1 > q0 + wr; /* some key is after the warp's first row */
#endif
        uint32_t pa[MMA_MT][BKV / 16][4];
        if (!skip) {
            float sc[MMA_MT][MMA_NT][4];
            mma_scores(sc, qf, qs, ks, lane);
            if (need_mask)
                mma_mask(sc, kv0, q0 + wr, s, lane);
            mma_softmax(sc, oacc, m, l, sl2);
            mma_pack_p(pa, sc);
        }
        if (it + 1 < ntiles)
            kb_cp_async_wait<2>();   /* V(it) has landed; K(it+1), V(it+1) may be in flight */
        else
            kb_cp_async_wait<0>();
        __syncthreads();
        if (!skip)
            mma_pv(oacc, pa, vs, lane);
    }
    mma_store(o, qs, oacc, l, q0 + wr, s, lane);
}

#endif /* ATTN_MMA */

/* ================================ decode ================================ */

#include "attention_decode.cu"   /* empty unless ATTN_DECODE */
