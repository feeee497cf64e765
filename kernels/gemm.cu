/* gemm.cu - D = alpha * op(A) * op(B) + beta * C, with M, N, K.
 *
 * Operands (LAYOUT: nn, nt, tn, tt; first letter A, second B; "t" = stored transposed):
 *   A is M x K:  n: A(m,k) = A[m * lda + k] (row-major, K contiguous)
 *                t: A(m,k) = A[k * lda + m] (stored K x M, M contiguous)
 *   B is K x N:  n: B(k,n) = B[k * ldb + n] (row-major, N contiguous)
 *                t: B(k,n) = B[n * ldb + k] (stored N x K, K contiguous)
 *   C and D are M x N row-major with leading dimension ldc.
 *   "nn" is numpy's A @ B; "nt" (both K contiguous) is the tensor cores' native form.
 * Accumulation in fp32 (int32 for int8). C and D are stored in the case's dtype (fp32
 * for tf32, int32 for int8, bf16 for fp8, fp6 and fp4). fp8/fp6/fp4 are scaled by the
 * case's recipe (SCALE, docs/precision.md): D = alpha * scale_a * scale_b * sum_k
 * (A(m,k) sa(m,k)) (B(k,n) sb(k,n)) + beta * C, where scale_a / scale_b are per-tensor
 * scales (the tensor recipe's, NVFP4's second level; else 1) and sa, sb the block or
 * channel scales read from SA and SB (gemm.c: A's [M][KB], B's [N][KB], or [N/128][KB] for
 * block128x128's 128 x 128 weight blocks; channel: [M] and [N]; FP32 values, or UE8M0 (mx)
 * / UE4M3 (nv) codes; KB = ceil(K / SKB)). fp6 and fp4 are one code per byte (the low 6 / 4
 * bits). The other dtypes get scale_a = scale_b = 1 and no SA, SB.
 * Scaled recipes (naive: each element dequantised before its product; mma:):
 *   channel        the accumulators times sa(m) sb(n) before the epilogue;
 *   mx, nv         each K block's products (one m16n8k32, or one m16n8k16 half of a widened
 *                  one for nv's 16) in fresh registers, promoted: acc += p sa sb;
 *   block1x128, block128x128  a second accumulator set holds the current 128-K block's
 *                  partial sums, promoted to the FP32 accumulators at each block end
 *                  (DeepSeek-V3's promotion every 128 K, section 3.3.2);
 *   sm_120a, mx/nv the block-scaled mma.sync applies the scales in the tensor core
 *                  (GEMM_BS_MMA: kind::mxf8f6f4 for mx, kind::mxf4nvf4 4X for nv).
 * A partial last K block holds what is left of K; the tiles' zero fill adds nothing to it.
 *
 * Variants (naive first; the siboehm/SGEMM_CUDA progression, then tensor cores):
 *   gemm_naive  one thread per output element, K loop straight from global memory.
 *               Consecutive threads take consecutive n, so B ('n') and D accesses
 *               coalesce; A is a broadcast. Arithmetic intensity ~1 FMA per 2 loads:
 *               bandwidth-bound by a wide margin. Every dtype.
 *   gemm_smem   block tile BM x BN staged through shared memory in BK-deep slices,
 *               each thread computing a TM x TN micro-tile in registers (2D block
 *               tiling): a shared element feeds TM or TN FMAs from a register instead
 *               of one, and each global element is read by BN/TN or BM/TM fewer threads.
 *               Global loads are 16-byte vectors when the leading dimension and base
 *               allow, scalar (predicated) otherwise; the tile is stored as float, with
 *               A transposed to [k][m] so a thread reads its TM values contiguously.
 *               fp32/fp16/bf16 storage, fp32 math.
 *   gemm_mma    tensor cores through mma.sync (kb_mma.h): block tile BM x BN x BK, warp
 *               tile WM x WN made of 16 x 8 mma tiles, fragments loaded with ldmatrix,
 *               and a STAGES-deep cp.async pipeline: while the warps multiply tile k, tiles k+1..k+STAGES-1 are
 *               in flight, hiding global latency behind tensor-core work. Shared tiles
 *               are XOR-swizzled in 16-byte chunks (swz): ldmatrix reads and cp.async
 *               writes both conflict-free (before: a 16-byte row pad, 2-way write conflicts).
 *               fp16/bf16 m16n8k16, tf32 m16n8k8 (operands rounded with cvt.rna),
 *               int8 m16n8k32 (s32, exact), fp8 e4m3/e5m2 m16n8k32 (sm_89+).
 *               Fragments of K-contiguous tiles load with ldmatrix for every dtype;
 *               M/N-contiguous tiles use ldmatrix.trans for 16-bit types, but 8/32-bit
 *               elements have no transposing ldmatrix and are gathered with scalar
 *               shared loads: for tf32, int8 and fp8, "nt" is the fast layout.
 *               cp.async needs 16-byte aligned rows; when lda/ldb * element size is not
 *               a multiple of 16 (pad 1, odd K...; GEMM_ASYNC_A/B=0 from gemm.c) the tile
 *               k+STAGES-1 is register-staged instead: each thread loads its 16-byte
 *               chunks of it element by element (predicated) before the warps compute
 *               tile k, and stores them with 16-byte shared stores, a piece after each
 *               k-step, so the loads are in flight behind a k-tile of mma work as the
 *               cp.async ones are (before: every element a synchronous load and store).
 *               Fragment double buffering: the A fragments of k-step s+1 are loaded
 *               (ldmatrix) before the mmas of step s, within each k-tile (cp.async
 *               operands only: register-staged ones have no registers to spare).
 *               GROUP > 1 orders the blocks in groups of GROUP row bands (block_coords)
 *               for L2 reuse of B. SPLITK > 1 splits K into SPLITK slices (grid.z) that
 *               write 4-byte partial sums to a workspace W; gemm_splitk_reduce adds them
 *               in slice order (deterministic) and applies the epilogue: for decode
 *               shapes (m = 16), whose M x N tiles alone leave most SMs idle.
 *               Epilogue: when D's rows (and C's, beta != 0) are 16-byte aligned, each warp
 *               stages its accumulators through shared memory one 16-row band at a time
 *               and every lane reads C and writes D in 16-byte accesses (before: 4-byte
 *               pairs straight from the fragments, which stay for pad 1 and odd ldc).
 *   gemm_wgmma  sm_90a: TMA ring, mbarriers, producer/consumer warpgroups with setmaxnreg,
 *               wgmma.mma_async, persistent tiles, TMA-store epilogue; gemm_wgmma.cuh.
 * Edges: every variant predicates loads (zero fill) and stores, so M, N, K need not be
 * multiples of any tile.
 *
 * Defines (from the harness): KB_T, KB_DTYPE_<X>, LAYOUT (+ LAYOUT_NN..TT), BM, BN, BK,
 * TM, TN (smem), WM, WN, STAGES, GROUP (block rasterization, block_coords), SPLITK, GEMM_ASYNC_A, GEMM_ASYNC_B (mma; default 1); GEMM_VARIANT (gemm.c) selects the one kernel a
 * module holds, so only its tile constraints (static_asserts) apply; without it every
 * variant is compiled. BROKEN_NO_SYNC=1 (tests only) drops the smem variant's barrier
 * after the tile loads, to prove that verification catches the race; BROKEN_SHORT_K=1
 * (tests only) makes the naive variant skip the last product of each dot product, to
 * prove the tolerance is tight enough to see one missing term.
 */
#include "kb_device.h"

#ifndef LAYOUT
#define LAYOUT_NN 0
#define LAYOUT_NT 1
#define LAYOUT_TN 2
#define LAYOUT_TT 3
#define LAYOUT LAYOUT_NN
#endif
#ifndef BM
#define BM 128
#endif
#ifndef BN
#define BN 128
#endif
#ifndef BK
#define BK 32
#endif
#ifndef TM
#define TM 8
#endif
#ifndef TN
#define TN 8
#endif
#ifndef WM
#define WM 64
#endif
#ifndef WN
#define WN 64
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef GROUP
#define GROUP 1
#endif
#ifndef SPLITK
#define SPLITK 1
#endif
#ifndef BROKEN_NO_SYNC
#define BROKEN_NO_SYNC 0
#endif
#ifndef BROKEN_SHORT_K
#define BROKEN_SHORT_K 0
#endif

#define GEMM_V_NAIVE 0
#define GEMM_V_SMEM 1
#define GEMM_V_MMA 2
#define GEMM_V_WGMMA 4   /* gemm.c's variant index (3 is cuBLASLt, no kernel) */
#ifndef GEMM_ASYNC_A
#define GEMM_ASYNC_A 1
#endif
#ifndef GEMM_ASYNC_B
#define GEMM_ASYNC_B 1
#endif
#ifdef GEMM_VARIANT
#define GEMM_HAS(v) (GEMM_VARIANT == (v))
#else
#define GEMM_HAS(v) 1
#endif

#define A_T (LAYOUT == LAYOUT_TN || LAYOUT == LAYOUT_TT)
#define B_T (LAYOUT == LAYOUT_NT || LAYOUT == LAYOUT_TT)

#if defined(KB_DTYPE_INT8)
typedef int out_t;
typedef int acc_t;
__device__ __forceinline__ int to_acc(int8_t x) { return x; }
#elif defined(KB_DTYPE_FP8E4M3) || defined(KB_DTYPE_FP8E5M2)
/* fp8 operands, C and D in bf16 (the usual fp8 GEMM output, as cuBLASLt's): an fp8 D
 * would round away 6-12% of every result, hiding any error smaller than that */
typedef kb_bf16 out_t;
typedef float acc_t;
__device__ __forceinline__ float to_acc(KB_T x) { return kb_to_float(x); }
#elif defined(KB_DTYPE_FP6E2M3) || defined(KB_DTYPE_FP6E3M2) || defined(KB_DTYPE_FP4E2M1)
/* fp6 / fp4 codes (uint8_t, one per byte): decoded here; C and D in bf16 as for fp8 */
#if defined(KB_DTYPE_FP6E2M3)
#define LOWP_E 2
#define LOWP_M 3
#define LOWP_BIAS 1
#elif defined(KB_DTYPE_FP6E3M2)
#define LOWP_E 3
#define LOWP_M 2
#define LOWP_BIAS 3
#else
#define LOWP_E 2
#define LOWP_M 1
#define LOWP_BIAS 1
#endif
typedef kb_bf16 out_t;
typedef float acc_t;
__device__ __forceinline__ float to_acc(KB_T x) { return kb_lowp_to_float<LOWP_E, LOWP_M, LOWP_BIAS>(x); }
#else
typedef KB_T out_t;
typedef float acc_t;
__device__ __forceinline__ float to_acc(KB_T x) { return kb_to_float(x); }
#endif

#define GEMM_ARGS                                                                                   \
    const KB_T *__restrict__ A, const KB_T *__restrict__ B, const out_t *__restrict__ C,            \
        out_t *__restrict__ D, int M, int N, int K, int lda, int ldb, int ldc, float alpha, float beta, \
        float scale_a, float scale_b, const void *__restrict__ SA, const void *__restrict__ SB

/* ============================ scaling recipes ============================ */
#ifndef SCALE   /* a compile without the harness' defines: per tensor */
#define SCALE_TENSOR 0
#define SCALE_CHANNEL 1
#define SCALE_BLOCK1X128 2
#define SCALE_BLOCK128X128 3
#define SCALE_MX 4
#define SCALE_NV 5
#define SCALE SCALE_TENSOR
#endif
#define GEMM_SCALED (SCALE != SCALE_TENSOR)   /* block or channel scales in SA, SB */
#define SKB (SCALE == SCALE_NV ? 16 : SCALE == SCALE_MX ? 32 : 128)            /* K per scale block */
#define SBN (SCALE == SCALE_BLOCK128X128 ? 128 : 1)                           /* B columns per scale */
#define SCODE (SCALE == SCALE_MX ? 1 : SCALE == SCALE_NV ? 2 : 0)             /* 0 FP32, 1 UE8M0, 2 UE4M3 */

/* Scale i of a scale tensor, decoded. */
__device__ __forceinline__ float scale_at(const void *S, long long i)
{
#if SCODE == 1
    return kb_ue8m0_to_float(__ldg(reinterpret_cast<const uint8_t *>(S) + i));
#elif SCODE == 2
    return kb_ue4m3_to_float(__ldg(reinterpret_cast<const uint8_t *>(S) + i));
#else
    return __ldg(reinterpret_cast<const float *>(S) + i);
#endif
}

/* The scale of A(m, k) and of B(k, n); 0 outside the matrix (tile rows that are never stored). */
__device__ __forceinline__ float sa_of(const void *SA, int m, int k, int M, int K)
{
    if (m >= M || k >= K)
        return 0.0f;
    return SCALE == SCALE_CHANNEL ? scale_at(SA, m) : scale_at(SA, (long long)m * ((K + SKB - 1) / SKB) + k / SKB);
}
__device__ __forceinline__ float sb_of(const void *SB, int n, int k, int N, int K)
{
    if (n >= N || k >= K)
        return 0.0f;
    return SCALE == SCALE_CHANNEL ? scale_at(SB, n) : scale_at(SB, (long long)(n / SBN) * ((K + SKB - 1) / SKB) + k / SKB);
}

__device__ __forceinline__ long long a_off(int m, int k, int lda)
{
    return A_T ? (long long)k * lda + m : (long long)m * lda + k;
}
__device__ __forceinline__ long long b_off(int k, int n, int ldb)
{
    return B_T ? (long long)n * ldb + k : (long long)k * ldb + n;
}

/* D element from its accumulator. ab = alpha * scale_a * scale_b. int8: integral alpha
 * and beta stay in integer arithmetic, so the result is exact (wrapping like the mma). */
__device__ __forceinline__ out_t epilogue(acc_t acc, const out_t *C, long long ci, float alpha, float beta, float ab)
{
#if defined(KB_DTYPE_INT8)
    int ia = (int)alpha, ib = (int)beta;
    if ((float)ia == alpha && (float)ib == beta)
        return (int)((unsigned)ia * (unsigned)acc + (ib ? (unsigned)ib * (unsigned)C[ci] : 0u));
    float v = alpha * (float)acc;
    if (beta != 0.0f)
        v += beta * (float)C[ci];
    return __float2int_rn(v);
#else
    float v = ab * acc;
    if (beta != 0.0f)
        v += beta * kb_to_float(C[ci]);
    return kb_from_float<out_t>(v);
#endif
}

/* =============================== 1. naive ================================ */
#if GEMM_HAS(GEMM_V_NAIVE)
extern "C" __global__ void __launch_bounds__(256) gemm_naive(GEMM_ARGS)
{
    int n = blockIdx.x * blockDim.x + threadIdx.x;
    int m = blockIdx.y * blockDim.y + threadIdx.y;
    if (m >= M || n >= N)
        return;
    acc_t acc = 0;
    for (int k = 0; k < K - BROKEN_SHORT_K; k++)
#if GEMM_SCALED
        /* each element dequantised with its own scale (the naive way) */
        acc += (to_acc(A[a_off(m, k, lda)]) * sa_of(SA, m, k, M, K)) * (to_acc(B[b_off(k, n, ldb)]) * sb_of(SB, n, k, N, K));
#else
        acc += to_acc(A[a_off(m, k, lda)]) * to_acc(B[b_off(k, n, ldb)]);
#endif
    long long ci = (long long)m * ldc + n;
    D[ci] = epilogue(acc, C, ci, alpha, beta, alpha * scale_a * scale_b);
}
#endif

/* ============================ 2. smem (SIMT) ============================= */
#if GEMM_HAS(GEMM_V_SMEM)
#define SMEM_THREADS ((BM / TM) * (BN / TN))
static_assert(BM % TM == 0 && BN % TN == 0, "smem: BM must be a multiple of TM and BN of TN (threads own whole micro-tiles)");
static_assert(SMEM_THREADS % 32 == 0 && SMEM_THREADS <= 1024,
              "smem: (BM/TM)*(BN/TN) threads must be whole warps, at most 1024");
static_assert((BM + BN) * BK * 4 <= 48 * 1024, "smem: the float tiles (BM+BN)*BK*4 bytes exceed 48 KiB of static shared memory");

/* Widest vector (at most 16 bytes) whose element count divides the tile row length L. */
__host__ __device__ constexpr int vec_elems(int L)
{
    int v = 16 / (int)sizeof(KB_T);
    while (v > 1 && L % v)
        v /= 2;
    return v;
}

/* Copy an R x L tile (L contiguous in global memory, rows ld apart, `rows` x `cols` of it
 * inside the matrix) into float shared memory: element (r, j) goes to s[j*SLD + r] when
 * TRANS, else s[r*SLD + j]; outside the matrix it is zero. Consecutive threads take
 * consecutive chunks of a row, so global reads coalesce; the transposed store of A
 * ('n' layout) then conflicts in shared-memory banks, the price siboehm's kernel 6
 * pays too for reading A contiguously in the inner loop. */
template <int R, int L, bool TRANS, int SLD>
__device__ __forceinline__ void smem_load_tile(float *s, const KB_T *g, int ld, int rows, int cols)
{
    constexpr int V = vec_elems(L), CPR = L / V, CHUNKS = R * CPR;
    const bool vec_ok = (uintptr_t)g % (V * sizeof(KB_T)) == 0 && ((long long)ld * sizeof(KB_T)) % (V * sizeof(KB_T)) == 0;
#pragma unroll
    for (int i = 0; i < (CHUNKS + SMEM_THREADS - 1) / SMEM_THREADS; i++) {
        int c = (int)threadIdx.x + i * SMEM_THREADS;
        if (CHUNKS % SMEM_THREADS != 0 && c >= CHUNKS)
            break;
        int r = c / CPR, j = (c % CPR) * V;
        float v[V];
        if (V > 1 && vec_ok && r < rows && j + V <= cols) {
            kb_vec<KB_T, V> x = kb_load_vec<V>(g + (long long)r * ld + j);
#pragma unroll
            for (int e = 0; e < V; e++)
                v[e] = kb_to_float(x.v[e]);
        } else {
#pragma unroll
            for (int e = 0; e < V; e++)
                v[e] = r < rows && j + e < cols ? kb_to_float(g[(long long)r * ld + j + e]) : 0.0f;
        }
#pragma unroll
        for (int e = 0; e < V; e++)
            s[TRANS ? (j + e) * SLD + r : r * SLD + j + e] = v[e];
    }
}

/* The block's tiles, 16-byte aligned so that a thread's TM (TN) values load as float4s:
 * a quarter of the shared-load instructions of scalar reads (siboehm's kernel 6). b is
 * aligned on its own: when BM*BK is not a multiple of 4 (TM = 2, BM = 6, BK = 5) it
 * would otherwise start 8 bytes off, and TN % 4 == 0 still reads it as float4s. */
struct __align__(16) smem_tiles {
    float a[BK][BM];              /* A(m, k) at a[k][m] */
    alignas(16) float b[BK][BN];  /* B(k, n) at b[k][n] */
};

/* r[0..L) = p[0..L), shared memory, in 16-byte loads when L allows (p is then aligned:
 * BM and BN are multiples of TM and TN). */
template <int L> __device__ __forceinline__ void smem_read(float *r, const float *p)
{
    if constexpr (L % 4 == 0) {
#pragma unroll
        for (int i = 0; i < L; i += 4) {
            kb_vec<float, 4> v = kb_load_vec<4>(p + i);
#pragma unroll
            for (int e = 0; e < 4; e++)
                r[i + e] = v.v[e];
        }
    } else {
#pragma unroll
        for (int i = 0; i < L; i++)
            r[i] = p[i];
    }
}

/* min 1 block per SM: without it ptxas aims at more blocks than shared memory allows
 * anyway and spilled some small-tile configurations */
extern "C" __global__ void __launch_bounds__(SMEM_THREADS, 1) gemm_smem(GEMM_ARGS)
{
    KB_SHARED(smem_tiles, tile, );
    float(&As)[BK][BM] = tile.a;
    float(&Bs)[BK][BN] = tile.b;
    const int tx = (int)threadIdx.x % (BN / TN), ty = (int)threadIdx.x / (BN / TN);
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    float acc[TM][TN];
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            acc[i][j] = 0.0f;

    for (int k0 = 0; k0 < K; k0 += BK) {
#if A_T
        smem_load_tile<BK, BM, false, BM>(&As[0][0], A + (long long)k0 * lda + m0, lda, K - k0, M - m0);
#else
        smem_load_tile<BM, BK, true, BM>(&As[0][0], A + (long long)m0 * lda + k0, lda, M - m0, K - k0);
#endif
#if B_T
        smem_load_tile<BN, BK, true, BN>(&Bs[0][0], B + (long long)n0 * ldb + k0, ldb, N - n0, K - k0);
#else
        smem_load_tile<BK, BN, false, BN>(&Bs[0][0], B + (long long)k0 * ldb + n0, ldb, K - k0, N - n0);
#endif
#if !BROKEN_NO_SYNC
        __syncthreads();   /* the whole tile is in shared memory before anyone reads it */
#endif
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float ra[TM], rb[TN];
            smem_read<TM>(ra, &As[k][ty * TM]);
            smem_read<TN>(rb, &Bs[k][tx * TN]);
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
        }
        __syncthreads();   /* everyone is done with the tile before it is overwritten */
    }

    const float ab = alpha * scale_a * scale_b;
#pragma unroll
    for (int i = 0; i < TM; i++) {
        int m = m0 + ty * TM + i;
        if (m >= M)
            break;
#pragma unroll
        for (int j = 0; j < TN; j++) {
            int n = n0 + tx * TN + j;
            if (n < N) {
                long long ci = (long long)m * ldc + n;
                D[ci] = epilogue((acc_t)acc[i][j], C, ci, alpha, beta, ab);
            }
        }
    }
}
#endif /* smem */

/* ========================= 3. mma (tensor cores) ========================= */
#if defined(KB_DTYPE_FP16)
#define MMA_K 16
#define MMA_OP kb_mma_m16n8k16_f32_f16
#elif defined(KB_DTYPE_BF16)
#define MMA_K 16
#define MMA_OP kb_mma_m16n8k16_f32_bf16
#elif defined(KB_DTYPE_TF32)
#define MMA_K 8
#define MMA_OP kb_mma_m16n8k8_f32_tf32
#elif defined(KB_DTYPE_INT8)
#define MMA_K 32
#define MMA_OP kb_mma_m16n8k32_s32_s8
#elif defined(KB_DTYPE_FP8E4M3) && KB_ARCH >= 89
#define MMA_K 32
#define MMA_OP kb_mma_m16n8k32_f32_e4m3
#define FP8_WIDEN kb_cvt_f16x2_e4m3x2
#elif defined(KB_DTYPE_FP8E5M2) && KB_ARCH >= 89
#define MMA_K 32
#define MMA_OP kb_mma_m16n8k32_f32_e5m2
#define FP8_WIDEN kb_cvt_f16x2_e5m2x2
#elif defined(LOWP_E)   /* fp6 / fp4: 8-bit tiles as fp8's, widened to f16 below (no mma.sync of them) */
#define MMA_K 32
#define LOWP_WIDEN kb_cvt_f16x2_lowp<LOWP_E, LOWP_M, LOWP_BIAS>
#endif
/* sm_120a: mx and nv on the block-scaled mma.sync (kb_mma.h), the scales applied in the
 * tensor core: mx through kind::mxf8f6f4 (m16n8k32, one UE8M0 per row / column for its 32
 * K), nv through kind::mxf4nvf4 4X (m16n8k64, four UE4M3 of 16 K each; e2m1 packed). */
#if KB_MMA_BLOCK_SCALE && (SCALE == SCALE_MX || SCALE == SCALE_NV) && (defined(FP8_WIDEN) || defined(LOWP_WIDEN))
#define GEMM_BS_MMA 1
#if SCALE == SCALE_NV
#undef MMA_K
#define MMA_K 64
#define BS_OP kb_mma_m16n8k64_nvf4_ue4m3
#elif defined(KB_DTYPE_FP8E4M3)
#define BS_OP kb_mma_m16n8k32_mx_e4m3
#elif defined(KB_DTYPE_FP8E5M2)
#define BS_OP kb_mma_m16n8k32_mx_e5m2
#elif defined(KB_DTYPE_FP6E2M3)
#define BS_OP kb_mma_m16n8k32_mx_e2m3
#elif defined(KB_DTYPE_FP6E3M2)
#define BS_OP kb_mma_m16n8k32_mx_e3m2
#else
#define BS_OP kb_mma_m16n8k32_mx_e2m1
#endif
/* {byte-id, thread-id} of A's and of B's scale operand (bs_mma hands them over to match;
 * test_gemm_inputs defines another to prove a wrong selector is caught) */
#ifndef BS_SEL
#define BS_SEL 0, 0, 0, 0
#endif
#else
#define GEMM_BS_MMA 0
#endif
/* Where fp8 mma.sync is not the architecture's native fp8 path (the table's
 * KB_PATH_MMA_FP8_NATIVE, harness/core/arch.c: sm_90 runs it through the f16 pipe; on sm_90
 * and sm_100 ptxas spills the fp8 m16n8k32 form at the default 64x64 warp tile, seen with
 * kbench compile), the kernel widens each fp8 fragment once to f16 (exact for every
 * e4m3/e5m2 value, tests/test_mma.c) and issues two m16n8k16 f16 mmas; products and fp32
 * accumulation are the same. sm_89 and sm_12x keep the native form (no spill there). The
 * condition must agree with the table: test_ptx checks it for every architecture. fp6 and
 * fp4 take the widening path on every architecture but the block-scaled one (exact as
 * well; gemm_model.h kb_gemm_widened). */
#if GEMM_BS_MMA
#define FP8_VIA_F16 0
#elif defined(LOWP_WIDEN)
#define FP8_WIDEN LOWP_WIDEN
#define FP8_VIA_F16 1
#elif defined(FP8_WIDEN) && KB_ARCH >= 90 && KB_ARCH / 10 != 12
#define FP8_VIA_F16 1
#else
#define FP8_VIA_F16 0
#endif
/* How the recipe's block scales meet the products (the file comment): one block per step
 * (mx, nv: promoted at once), 128-K blocks (a second accumulator set), or in the tensor core. */
#define PROMOTE_EACH (!GEMM_BS_MMA && (SCALE == SCALE_MX || SCALE == SCALE_NV))
#define PROMOTE_BLOCK (SCALE == SCALE_BLOCK1X128 || SCALE == SCALE_BLOCK128X128)

/* fp32 has no mma form here (tf32 is the fp32 tensor-core path); fp8 needs sm_89. */
#if GEMM_HAS(GEMM_V_MMA) && defined(MMA_K)
#define MMA_WARPS_N (BN / WN)
#define MMA_THREADS ((BM / WM) * (BN / WN) * 32)
#define MT (WM / 16)                 /* mma tiles per warp along M */
#define NTL (WN / 8)                 /* mma tiles per warp along N */
#define ESZ ((int)sizeof(KB_T))
#define CHUNK (16 / ESZ)             /* elements per 16-byte chunk (cp.async, ldmatrix row) */
static_assert(BM % WM == 0 && BN % WN == 0, "mma: BM and BN must be multiples of the warp tile WM x WN");
static_assert(WM % 16 == 0, "mma: WM must be a multiple of the mma tile height 16");
static_assert(WN % 16 == 0, "mma: WN must be a multiple of 16 (B fragments of two n8 tiles per ldmatrix.x4)");
static_assert(BK % MMA_K == 0, "mma: BK must be a multiple of the mma depth (16 fp16/bf16, 8 tf32, 32 int8/fp8/fp6/fp4, "
              "64 nv on the block-scaled mma)");
static_assert(!PROMOTE_BLOCK || SKB % MMA_K == 0, "mma: a 128-K scale block is whole k-steps");
static_assert(MMA_THREADS <= 1024, "mma: (BM/WM)*(BN/WN) warps exceed 1024 threads");
static_assert(STAGES >= 2, "mma: the pipeline needs at least 2 stages (one computing, one loading)");

/* Shared tiles, one per stage. K-contiguous global layouts (A 'n', B 't') are kept K-major
 * ([m][k], [n][k]); the others M/N-major ([k][m], [k][n]). Rows are not padded: the 16-byte
 * chunks are XOR-swizzled instead (swz below). */
#define A_ROWS (A_T ? BK : BM)
#define A_LEN (A_T ? BM : BK)
#define B_ROWS (B_T ? BN : BK)
#define B_LEN (B_T ? BK : BN)
#define A_STAGE (A_ROWS * A_LEN)
#define B_STAGE (B_ROWS * B_LEN)
/* Epilogue staging (epilogue_staged): per warp a 16 x WN band of accumulators, rows
 * EPI_LD apart, in the pipeline's shared memory once the main loop is done (gemm_model.c
 * sizes the launch's shared memory as the larger of the two); OCH output elements make a
 * 16-byte chunk. */
#define EPI_LD (WN + 8)
#define EPI_WARP (16 * EPI_LD)
#define OCH (16 / (int)sizeof(out_t))

/* Where 16-byte chunk c of row r of a tile with CPR chunks per row is stored [chunks]: the
 * chunks of each aligned 128-byte line (8 chunks, all 32 banks) permuted by an XOR with a
 * row-dependent 3-bit value (CUTLASS's Swizzle<3,4,3> on byte addresses), so that
 *   - the 8 row addresses of an ldmatrix (8 consecutive rows, one chunk column) fall in 8
 *     distinct chunk positions of a line: conflict-free for CPR = 1, 2, 4 (2, 4 or 8 rows
 *     share a line: the line index, XORed in, differs) and for CPR a multiple of 8 (row
 *     r's chunks XORed with r & 7);
 *   - a warp's 32 consecutive cp.async chunks cover 4 whole lines: conflict-free writes
 *     (the 16-byte pad of 80-byte rows made them 2-way for BK = 32 16-bit tiles).
 * For other CPR (BM = 48, ...) the same permutation is still a bijection within each line
 * (every tile has a multiple of 8 rows), so only conflicts, not results, depend on it. */
template <int CPR> __device__ __forceinline__ int swz(int r, int c)
{
    const int i = r * CPR + c;
    return CPR % 8 == 0 ? i ^ (r & 7) : i ^ ((i >> 3) & 7);
}

/* Offset of element (r, col) of a tile with rows of LEN elements [elements]. */
template <int LEN> __device__ __forceinline__ int sidx(int r, int col)
{
    return swz<LEN / CHUNK>(r, col / CHUNK) * CHUNK + col % CHUNK;
}

/* The zero of a storage type (fp6 / fp4 codes are raw bytes: code 0 is +0). */
template <class T> __device__ __forceinline__ T zero_of() { return kb_from_float<T>(0.0f); }
template <> __device__ __forceinline__ uint8_t zero_of<uint8_t>() { return 0; }

/* Copy a ROWS x LEN tile (LEN contiguous; `rows` x `cols` inside the matrix) into shared
 * memory. async: 16-byte cp.async chunks, a chunk crossing the matrix edge copies only
 * its inside bytes and zero-fills the rest. Otherwise element by element. */
template <int ROWS, int LEN>
__device__ __forceinline__ void mma_load_tile(KB_T *s, const KB_T *g, int ld, int rows, int cols, bool async)
{
    constexpr int CPR = LEN / CHUNK, CHUNKS = ROWS * CPR;
    static_assert(LEN % CHUNK == 0, "mma: a tile row must be whole 16-byte chunks");
    if (async) {
#pragma unroll
        for (int i = 0; i < (CHUNKS + MMA_THREADS - 1) / MMA_THREADS; i++) {
            int c = (int)threadIdx.x + i * MMA_THREADS;
            if (CHUNKS % MMA_THREADS != 0 && c >= CHUNKS)
                break;
            int r = c / CPR, j = (c % CPR) * CHUNK, left = cols - j;
            int bytes = r >= rows || left <= 0 ? 0 : left >= CHUNK ? 16 : left * ESZ;
            kb_cp_async_16_zfill(s + sidx<LEN>(r, j), bytes ? g + (long long)r * ld + j : g, bytes);
        }
    } else {
        for (int e = (int)threadIdx.x; e < ROWS * LEN; e += MMA_THREADS) {
            int r = e / LEN, j = e % LEN;
            s[sidx<LEN>(r, j)] = r < rows && j < cols ? g[(long long)r * ld + j] : zero_of<KB_T>();
        }
    }
}

/* Rows that are not 16-byte aligned (pad 1, odd K ...; GEMM_ASYNC_A/B=0 from gemm.c):
 * register staging. A thread owns the same 16-byte chunks of the tile as with cp.async
 * (chunk c = thread + i x MMA_THREADS), loads it - as the aligned 32-bit words around it,
 * shifted into place, where those lie inside the row; else element by element, predicated,
 * zero outside the matrix - into a uint4 before
 * the warps compute a k-step, and stores it to shared memory with one 16-byte store after,
 * so the global latency hides behind mma work as it does with cp.async. */
template <int ROWS, int LEN> struct mma_regs {
    static constexpr int CPR = LEN / CHUNK, CHUNKS = ROWS * CPR;
    static constexpr int N = (CHUNKS + MMA_THREADS - 1) / MMA_THREADS;   /* chunks per thread */
};

/* Raw bits of global element i. */
__device__ __forceinline__ uint32_t gbits(const KB_T *g, long long i)
{
    if (ESZ == 4)
        return reinterpret_cast<const uint32_t *>(g)[i];
    if (ESZ == 2)
        return reinterpret_cast<const uint16_t *>(g)[i];
    return reinterpret_cast<const uint8_t *>(g)[i];
}

/* This thread's staged chunk i of a ROWS x LEN tile (`rows` x `cols` inside the matrix). */
template <int ROWS, int LEN>
__device__ __forceinline__ uint4 mma_fetch_chunk(const KB_T *g, int ld, int rows, int cols, int i)
{
    typedef mma_regs<ROWS, LEN> R;
    int c = (int)threadIdx.x + i * MMA_THREADS, r = c / R::CPR, j = c % R::CPR * CHUNK;
    uint32_t w[4] = { 0, 0, 0, 0 };
    if ((R::CHUNKS % MMA_THREADS == 0 || c < R::CHUNKS) && r < rows) {
        const KB_T *p = g + (long long)r * ld + j;
        const uintptr_t at = (uintptr_t)p, lo = at & ~(uintptr_t)3, sh = (at - lo) * 8;
        if (ESZ < 4 && j + CHUNK <= cols && ((at + 16 + 3) & ~(uintptr_t)3) <= (uintptr_t)(p - j + cols)) {
            /* 8/16-bit elements, the chunk inside the row, and the 4-byte words around it
             * too: 4 or 5 aligned 32-bit loads funnel-shifted into place (16 or 8 loads
             * otherwise) */
            const uint32_t *q = reinterpret_cast<const uint32_t *>(lo);
            uint32_t x[5];
#pragma unroll
            for (int k = 0; k < 5; k++)
                x[k] = k < 4 || sh ? q[k] : 0;
#pragma unroll
            for (int k = 0; k < 4; k++)
                w[k] = sh ? (x[k] >> sh) | (x[k + 1] << (32 - sh)) : x[k];
        } else {
#pragma unroll
            for (int e = 0; e < CHUNK; e++)
                if (j + e < cols)
                    w[e * ESZ / 4] |= gbits(p, e) << (8 * (e * ESZ % 4));
        }
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

template <int ROWS, int LEN>
__device__ __forceinline__ void mma_store_chunk(KB_T *s, int i, uint4 v)
{
    typedef mma_regs<ROWS, LEN> R;
    int c = (int)threadIdx.x + i * MMA_THREADS, r = c / R::CPR, j = c % R::CPR * CHUNK;
    if (R::CHUNKS % MMA_THREADS == 0 || c < R::CHUNKS)
        *reinterpret_cast<uint4 *>(s + sidx<LEN>(r, j)) = v;
}

/* Raw bits of shared element (r, c) of a tile with rows of LEN elements. */
template <int LEN> __device__ __forceinline__ uint32_t sbits(const KB_T *s, int r, int c)
{
    const unsigned char *p = reinterpret_cast<const unsigned char *>(s + sidx<LEN>(r, c));
    if (ESZ == 4)
        return *reinterpret_cast<const uint32_t *>(p);
    return *p;   /* only 8-bit tiles take the scalar path below */
}

#define NV_BS (GEMM_BS_MMA && SCALE == SCALE_NV)
#if NV_BS
/* m16n8k64 e2m1 fragments (kb_mma.h) from the 8-bit tiles, packed in registers: eight
 * consecutive K of a row of A / a column of B - two 32-bit words of one 16-byte chunk where K
 * is contiguous in the tile, else byte by byte - into the nibbles of one register. */
__device__ __forceinline__ uint32_t a8(const KB_T *s, int row, int k)
{
    uint32_t lo = 0, hi = 0;
    if (!A_T) {
        lo = *reinterpret_cast<const uint32_t *>(s + sidx<A_LEN>(row, k));
        hi = *reinterpret_cast<const uint32_t *>(s + sidx<A_LEN>(row, k + 4));
    } else {
#pragma unroll
        for (int e = 0; e < 4; e++)
            lo |= sbits<A_LEN>(s, k + e, row) << (8 * e), hi |= sbits<A_LEN>(s, k + 4 + e, row) << (8 * e);
    }
    return kb_e2m1_pack8(lo, hi);
}
__device__ __forceinline__ uint32_t b8(const KB_T *s, int k, int col)
{
    uint32_t lo = 0, hi = 0;
    if (B_T) {
        lo = *reinterpret_cast<const uint32_t *>(s + sidx<B_LEN>(col, k));
        hi = *reinterpret_cast<const uint32_t *>(s + sidx<B_LEN>(col, k + 4));
    } else {
#pragma unroll
        for (int e = 0; e < 4; e++)
            lo |= sbits<B_LEN>(s, k + e, col) << (8 * e), hi |= sbits<B_LEN>(s, k + 4 + e, col) << (8 * e);
    }
    return kb_e2m1_pack8(lo, hi);
}
#endif

/* A fragment of the 16 x MMA_K tile at (m, k) of this stage (layouts in kb_mma.h). */
__device__ __forceinline__ void load_a_frag(uint32_t a[4], const KB_T *s, int m, int k, int lane)
{
    const int g = lane >> 2, t = lane & 3;
#if NV_BS
#pragma unroll
    for (int r = 0; r < 4; r++)
        a[r] = a8(s, m + g + 8 * (r & 1), k + 8 * t + 32 * (r >> 1));
    return;
#endif
    if (!A_T) {
        /* [m][k]: matrix j of the x4 = rows m + 8*(j&1), 16 bytes at k + CHUNK*(j>>1) */
        kb_ldmatrix_x4(a, s + sidx<A_LEN>(m + (lane & 7) + 8 * ((lane >> 3) & 1), k + CHUNK * (lane >> 4)));
    } else if (ESZ == 2) {
        /* [k][m]: the transposed load hands each lane two k-neighbours of one m */
        kb_ldmatrix_x4_trans(a, s + sidx<A_LEN>(k + (lane & 7) + 8 * (lane >> 4), m + 8 * ((lane >> 3) & 1)));
    } else if (ESZ == 4) {
#pragma unroll
        for (int r = 0; r < 4; r++)
            a[r] = sbits<A_LEN>(s, k + t + 4 * (r >> 1), m + g + 8 * (r & 1));
    } else {
#pragma unroll
        for (int r = 0; r < 4; r++) {
            uint32_t w = 0;
#pragma unroll
            for (int e = 0; e < 4; e++)
                w |= sbits<A_LEN>(s, k + 4 * t + e + 16 * (r >> 1), m + g + 8 * (r & 1)) << (8 * e);
            a[r] = w;
        }
    }
}

/* B fragments of the two MMA_K x 8 tiles at (k, n) and (k, n + 8). */
__device__ __forceinline__ void load_b_frag2(uint32_t b0[2], uint32_t b1[2], const KB_T *s, int k, int n, int lane)
{
    const int g = lane >> 2, t = lane & 3;
#if NV_BS
#pragma unroll
    for (int r = 0; r < 2; r++)
        b0[r] = b8(s, k + 8 * t + 32 * r, n + g), b1[r] = b8(s, k + 8 * t + 32 * r, n + 8 + g);
    return;
#endif
    uint32_t r4[4];
    if (B_T) {
        /* [n][k]: matrices (n, k lo), (n, k hi), (n+8, k lo), (n+8, k hi) */
        kb_ldmatrix_x4(r4, s + sidx<B_LEN>(n + (lane & 7) + 8 * (lane >> 4), k + CHUNK * ((lane >> 3) & 1)));
    } else if (ESZ == 2) {
        kb_ldmatrix_x4_trans(r4, s + sidx<B_LEN>(k + (lane & 7) + 8 * ((lane >> 3) & 1), n + 8 * (lane >> 4)));
    } else {
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int r = 0; r < 2; r++) {
                uint32_t w = 0;
                if (ESZ == 4)
                    w = sbits<B_LEN>(s, k + t + 4 * r, n + 8 * h + g);
                else
#pragma unroll
                    for (int e = 0; e < 4; e++)
                        w |= sbits<B_LEN>(s, k + 4 * t + e + 16 * r, n + 8 * h + g) << (8 * e);
                r4[2 * h + r] = w;
            }
    }
    b0[0] = r4[0], b0[1] = r4[1], b1[0] = r4[2], b1[1] = r4[3];
}

/* Epilogue, 4-byte path (D rows not 16-byte aligned: pad 1, odd N): straight from the
 * accumulator fragments. c0,c1 are two adjacent columns of row g, c2,c3 the same of row
 * g+8; stored as one pair when ldc keeps pairs aligned. (wm, wn): the warp tile's origin. */
__device__ __forceinline__ void epilogue_direct(const acc_t (&acc)[MT][NTL][4], const out_t *C, out_t *D, int M, int N,
                                                int ldc, int wm, int wn, int lane, float alpha, float beta, float ab)
{
    const bool pair_ok = ldc % 2 == 0;
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            int m = wm + 16 * i + g + 8 * h;
            if (m >= M)
                continue;
#pragma unroll
            for (int j = 0; j < NTL; j++) {
                int n = wn + 8 * j + 2 * t;
                if (n >= N)
                    continue;
                long long ci = (long long)m * ldc + n;
                out_t v0 = epilogue(acc[i][j][2 * h], C, ci, alpha, beta, ab);
                if (pair_ok && n + 1 < N) {
                    kb_vec<out_t, 2> p;
                    p.v[0] = v0;
                    p.v[1] = epilogue(acc[i][j][2 * h + 1], C, ci + 1, alpha, beta, ab);
                    kb_store_vec<2>(D + ci, p);
                } else {
                    D[ci] = v0;
                    if (n + 1 < N)
                        D[ci + 1] = epilogue(acc[i][j][2 * h + 1], C, ci + 1, alpha, beta, ab);
                }
            }
        }
}

/* Epilogue, 16-byte path (D rows 16-byte aligned, and C's when beta != 0): one 16 x WN
 * band of the warp tile at a time, the accumulators written to the warp's own slice of
 * shared memory (st, EPI_WARP elements), read back as OCH consecutive columns per lane,
 * C read and D written with one 16-byte access each; a chunk crossing N goes element by
 * element. The row pitch EPI_LD = WN + 8 keeps the fragment writes free of bank conflicts
 * (8 rows g of 4 lanes t land on distinct banks). */
__device__ __forceinline__ void epilogue_staged(const acc_t (&acc)[MT][NTL][4], acc_t *st, const out_t *C, out_t *D,
                                                int M, int N, int ldc, int wm, int wn, int lane, float alpha,
                                                float beta, float ab)
{
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MT; i++) {
#pragma unroll
        for (int j = 0; j < NTL; j++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                kb_vec<acc_t, 2> p;
                p.v[0] = acc[i][j][2 * h], p.v[1] = acc[i][j][2 * h + 1];
                kb_store_vec<2>(st + (g + 8 * h) * EPI_LD + 8 * j + 2 * t, p);
            }
        __syncwarp();
#pragma unroll
        for (int q = 0; q < 16 * WN / OCH / 32; q++) {   /* whole: WN is a multiple of 16, OCH <= 8 */
            const int c = lane + 32 * q, r = c / (WN / OCH), col = c % (WN / OCH) * OCH, m = wm + 16 * i + r, n = wn + col;
            const long long ci = (long long)m * ldc + n;
            const acc_t *a = st + r * EPI_LD + col;
            if (m >= M || n >= N)
                continue;
            if (n + OCH <= N) {
                kb_vec<out_t, OCH> cv, dv;
                if (beta != 0.0f)
                    cv = kb_load_vec<OCH>(C + ci);
#pragma unroll
                for (int e = 0; e < OCH; e++)
                    dv.v[e] = epilogue(a[e], cv.v, e, alpha, beta, ab);
                kb_store_vec<OCH>(D + ci, dv);
            } else {
#pragma unroll 1
                for (int e = 0; n + e < N; e++)
                    D[ci + e] = epilogue(a[e], C, ci + e, alpha, beta, ab);
            }
        }
        __syncwarp();   /* the slice is read before the next band overwrites it */
    }
}

/* A-fragment buffers: 2 (double buffering) when both operands go by cp.async; register-
 * staged tiles (pad 1) already hold the next k-tile's chunks in registers, and the spare
 * buffer made tf32 128x128 spill on sm_80, so they load each k-step's fragments in it. */
#define NFB (GEMM_ASYNC_A && GEMM_ASYNC_B ? 2 : 1)

/* All MT A fragments of the warp tile (rows wm0..wm0+WM) at k-step kk of stage sa (tf32:
 * rounded with cvt.rna). */
__device__ __forceinline__ void load_a_step(uint32_t (&af)[MT][4], const KB_T *sa, int wm0, int kk, int lane)
{
#pragma unroll
    for (int i = 0; i < MT; i++) {
        load_a_frag(af[i], sa, wm0 + 16 * i, kk, lane);
#if defined(KB_DTYPE_TF32)
#pragma unroll
        for (int r = 0; r < 4; r++)
            af[i][r] = kb_cvt_tf32(af[i][r]);
#endif
    }
}

/* Split-K: this slice's accumulators of the warp tile at (wm, wn) into its M x N slice P of
 * the workspace (row-major, N apart), two columns at a time where N keeps pairs aligned. */
__device__ __forceinline__ void partial_store(const acc_t (&acc)[MT][NTL][4], acc_t *P, int M, int N, int wm, int wn,
                                              int lane)
{
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int m = wm + 16 * i + g + 8 * h;
#pragma unroll
            for (int j = 0; j < NTL; j++) {
                const int n = wn + 8 * j + 2 * t;
                acc_t *q = P + (long long)m * N + n;
                if (m >= M || n >= N)
                    continue;
                if (N % 2 == 0) {
                    kb_vec<acc_t, 2> v;
                    v.v[0] = acc[i][j][2 * h], v.v[1] = acc[i][j][2 * h + 1];
                    kb_store_vec<2>(q, v);
                } else {
                    q[0] = acc[i][j][2 * h];
                    if (n + 1 < N)
                        q[1] = acc[i][j][2 * h + 1];
                }
            }
        }
}

/* The (row, column) block this CTA computes. Blocks start in launch order, blockIdx.x
 * fastest: GROUP = 1 sweeps one row band of blocks after another, so a wave of resident
 * blocks reads a few A row bands and all of B's column blocks. GROUP > 1 (Triton's
 * grouped ordering) sweeps GROUP row bands together, column by column: a wave then reads
 * GROUP row bands and only 1/GROUP as many B column blocks, which L2 keeps for the
 * other bands. The last group has gridDim.y % GROUP bands when GROUP does not divide it. */
__device__ __forceinline__ void block_coords(int &bm, int &bn)
{
#if GROUP == 1
    bm = (int)blockIdx.y, bn = (int)blockIdx.x;
#else
    const int gn = (int)gridDim.x, gm = (int)gridDim.y, pid = (int)(blockIdx.y * gridDim.x + blockIdx.x);
    const int per = GROUP * gn, first = pid / per * GROUP, rows = min(gm - first, GROUP);
    bm = first + pid % per % rows, bn = pid % per / rows;
#endif
}

/* ---- the recipe's scales in the mma kernel (the file comment) ----
 * The hook for other mainloops: sa_of / sb_of (scale of an element) and promote (a block's
 * partial sums times their scales, into the fp32 accumulators) depend only on row, column and
 * K index, not on mma.sync's fragments. The Hopper wgmma GEMM (issue 21) is to run the FP8
 * recipes through them - per-128-K promotion of its accumulator fragments for block1x128 /
 * block128x128, as DeepSeek-V3 does on H800 - and valid() then refuses mx/nv there (Hopper has
 * no block-scaled MMA); not done here. sm_100a's tcgen05.mma block scaling (scales in tensor
 * memory) is not done either. */

/* Where the scales live: SA, SB and the matrix's extents (sa_of, sb_of). */
struct scale_ctx {
    const void *SA, *SB;
    int M, N, K;
};

/* acc += p sa sb for the mma tile at rows rb.., columns cb.. (this lane: rows rb + g, rb + g + 8,
 * columns cb + 2t, cb + 2t + 1) and the scale block of K index kg; (p sa) sb keeps a huge
 * and a tiny scale from meeting in one product. */
__device__ __forceinline__ void promote(acc_t (&c)[4], const acc_t (&p)[4], const scale_ctx &x, int rb, int cb, int kg,
                                        int lane)
{
    const int r0 = rb + (lane >> 2), c0 = cb + 2 * (lane & 3);
    const float a0 = sa_of(x.SA, r0, kg, x.M, x.K), a1 = sa_of(x.SA, r0 + 8, kg, x.M, x.K);
    const float b0 = sb_of(x.SB, c0, kg, x.N, x.K), b1 = sb_of(x.SB, c0 + 1, kg, x.N, x.K);
    c[0] += p[0] * a0 * b0;
    c[1] += p[1] * a0 * b1;
    c[2] += p[2] * a1 * b0;
    c[3] += p[3] * a1 * b1;
}

#if GEMM_BS_MMA
/* The scale codes of row (or column) r for the K blocks of the step at kg, one byte each
 * from byte 0 (0 outside the matrix). */
__device__ __forceinline__ uint32_t bs_codes(const void *S, int r, int rows, int kg, int K)
{
    const int KB = (K + SKB - 1) / SKB, kb0 = kg / SKB;
    uint32_t w = 0;
#pragma unroll
    for (int v = 0; v < MMA_K / SKB; v++)
        if (r < rows && kb0 + v < KB)
            w |= (uint32_t)__ldg(reinterpret_cast<const uint8_t *>(S) + (long long)r * KB + kb0 + v) << (8 * v);
    return w;
}

/* The block-scaled mma of one tile; the selectors BS_SEL = {0, 0} for A and B: of each quad,
 * lanes t = 0 and 1 hand over rows g and g + 8 of A, lane t = 0 column g of B (PTX ISA
 * 9.7.14.3); the other lanes' registers are not read. */
__device__ __forceinline__ void bs_mma(acc_t (&c)[4], const uint32_t (&a)[4], const uint32_t (&b)[2],
                                       const scale_ctx &x, int rb, int cb, int kg, int lane)
{
    const int g = lane >> 2, t = lane & 3;
    const uint32_t sa = t < 2 ? bs_codes(x.SA, rb + g + 8 * t, x.M, kg, x.K) : 0u;
    const uint32_t sb = t == 0 ? bs_codes(x.SB, cb + g, x.N, kg, x.K) : 0u;
#if defined(KB_DTYPE_FP4E2M1) && SCALE == SCALE_MX
    /* mxf8f6f4 reads e2m1 from bits 5..2 of its byte: kbench keeps it in 3..0 */
    const uint32_t a2[4] = { kb_e2m1_container(a[0]), kb_e2m1_container(a[1]), kb_e2m1_container(a[2]),
                             kb_e2m1_container(a[3]) };
    const uint32_t b2[2] = { kb_e2m1_container(b[0]), kb_e2m1_container(b[1]) };
    BS_OP<BS_SEL>(c, a2, b2, c, sa, sb);
#else
    BS_OP<BS_SEL>(c, a, b, c, sa, sb);
#endif
}
#endif

/* One k-step's products of one mma tile (fragments a, b) into its accumulators c, by the
 * recipe: straight (per tensor, channel), promoted at once (mx, nv), into the 128-K block's
 * partial sums part (block1x128, block128x128), or through the block-scaled mma. */
__device__ __forceinline__ void tile_step(acc_t (&c)[4], acc_t (&part)[4], const uint32_t (&a)[4],
                                          const uint32_t (&b)[2], const scale_ctx &x, int rb, int cb, int kg, int lane)
{
#if GEMM_BS_MMA
    bs_mma(c, a, b, x, rb, cb, kg, lane);
#elif !FP8_VIA_F16 && PROMOTE_EACH
    acc_t p[4] = { 0, 0, 0, 0 };
    MMA_OP(p, a, b, p);
    promote(c, p, x, rb, cb, kg, lane);
#elif !FP8_VIA_F16 && PROMOTE_BLOCK
    MMA_OP(part, a, b, part);
#elif !FP8_VIA_F16
    MMA_OP(c, a, b, c);
#endif
}

#if FP8_VIA_F16 && PROMOTE_EACH
/* mx / nv with the fragments widened to f16 (FP8_VIA_F16): two m16n8k16 halves, ah[h] and
 * bh[h] holding K 16h .. 16h + 15 of the step, into fresh registers promoted at once; nv's
 * 16-K blocks per half. (The other recipes widen one half of B at a time in the mainloop.) */
__device__ __forceinline__ void tile_step_f16(acc_t (&c)[4], const uint32_t (&ah)[2][4], const uint32_t (&bh)[2][2],
                                              const scale_ctx &x, int rb, int cb, int kg, int lane)
{
    acc_t p[4] = { 0, 0, 0, 0 };
#pragma unroll
    for (int h = 0; h < 2; h++) {
        kb_mma_m16n8k16_f32_f16(p, ah[h], bh[h], p);
        if (SKB == 16) {
            promote(c, p, x, rb, cb, kg + 16 * h, lane);
            p[0] = p[1] = p[2] = p[3] = 0;
        }
    }
    if (SKB == 32)
        promote(c, p, x, rb, cb, kg, lane);
}
#endif

/* The channel recipe's scales on the finished accumulators: sa(m) sb(n) per element. */
__device__ __forceinline__ void channel_scale(acc_t (&acc)[MT][NTL][4], const scale_ctx &x, int wm, int wn, int lane)
{
#if SCALE == SCALE_CHANNEL
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NTL; j++)
#pragma unroll
            for (int r = 0; r < 4; r++)
                acc[i][j][r] *= sa_of(x.SA, wm + 16 * i + g + 8 * (r >> 1), 0, x.M, x.K) *
                                sb_of(x.SB, wn + 8 * j + 2 * t + (r & 1), 0, x.N, x.K);
#endif
}

/* min 1 block per SM: lets ptxas keep the whole warp tile in registers (without it, NVRTC
 * aimed lower and spilled on sm_80 int8); 2 blocks still fit at the default tiles */
extern "C" __global__ void __launch_bounds__(MMA_THREADS, 1) gemm_mma(GEMM_ARGS, acc_t *__restrict__ W)
{
    KB_DYN_SHARED(KB_T, smem);
    KB_T *As = smem, *Bs = smem + STAGES * A_STAGE;
    const int lane = (int)threadIdx.x & 31, warp = (int)threadIdx.x >> 5;
    const int wm0 = warp / MMA_WARPS_N * WM, wn0 = warp % MMA_WARPS_N * WN;
    int bm, bn;
    block_coords(bm, bn);
    /* split-K: slice blockIdx.z takes k-tiles [KT0, KT) of the whole K's, whole tiles, so a
     * slice's edges are the matrix's; a slice past the last tile computes zeros */
    const int KT_ALL = (K + BK - 1) / BK, PER = (KT_ALL + SPLITK - 1) / SPLITK;
    const int KT0 = min(KT_ALL, (int)blockIdx.z * PER), KT = min(KT_ALL, KT0 + PER);
    const int m0 = bm * BM, n0 = bn * BN;
    /* GEMM_ASYNC_x (gemm.c: the rows are 16-byte aligned): cp.async, with element copies
     * should a row be misaligned after all; 0: register staging in the main loop */
    const bool a_async = GEMM_ASYNC_A && (uintptr_t)A % 16 == 0 && (long long)lda * ESZ % 16 == 0;
    const bool b_async = GEMM_ASYNC_B && (uintptr_t)B % 16 == 0 && (long long)ldb * ESZ % 16 == 0;
    /* staged chunks per thread (A's, then B's): all fetched before the tile's first k-step,
     * stored in STEPS pieces of NP, one after each k-step, which frees their registers */
    constexpr int NA = GEMM_ASYNC_A ? 0 : mma_regs<A_ROWS, A_LEN>::N, NB = GEMM_ASYNC_B ? 0 : mma_regs<B_ROWS, B_LEN>::N;
    constexpr int STEPS = BK / MMA_K, NP = (NA + NB + STEPS - 1) / STEPS;
    uint4 rs[NA + NB > 0 ? NA + NB : 1] = {};   /* every chunk is loaded before it is stored: {} only
                                                  * tells the host compiler so (-Wmaybe-uninitialized) */

    acc_t acc[MT][NTL][4];
    /* block1x128 / block128x128: the current 128-K block's partial sums (else one unused tile) */
    acc_t part[PROMOTE_BLOCK ? MT : 1][PROMOTE_BLOCK ? NTL : 1][4];
#define PART(i, j) part[PROMOTE_BLOCK ? (i) : 0][PROMOTE_BLOCK ? (j) : 0]
#pragma unroll
    for (int i = 0; i < MT; i++)
#pragma unroll
        for (int j = 0; j < NTL; j++)
#pragma unroll
            for (int r = 0; r < 4; r++)
                acc[i][j][r] = PART(i, j)[r] = 0;
    const scale_ctx sx = { SA, SB, M, N, K };

    /* Where k-tile kt of A and B starts, and how many of its rows and columns are inside. */
    auto a_at = [&](int kt, int &rows, int &cols) {
        int k0 = kt * BK;
        rows = A_T ? K - k0 : M - m0, cols = A_T ? M - m0 : K - k0;
        return A_T ? A + (long long)k0 * lda + m0 : A + (long long)m0 * lda + k0;
    };
    auto b_at = [&](int kt, int &rows, int &cols) {
        int k0 = kt * BK;
        rows = B_T ? N - n0 : K - k0, cols = B_T ? K - k0 : N - n0;
        return B_T ? B + (long long)n0 * ldb + k0 : B + (long long)k0 * ldb + n0;
    };
    /* Copy k-tile kt into stage st directly (nothing past the last tile): every operand in
     * the prologue, in the main loop only those that go by cp.async. */
    auto load_stage = [&](int st, int kt, bool prologue) {
        if (kt >= KT)
            return;
        int rows, cols;
        if (prologue || GEMM_ASYNC_A) {
            const KB_T *g = a_at(kt, rows, cols);
            mma_load_tile<A_ROWS, A_LEN>(As + st * A_STAGE, g, lda, rows, cols, a_async);
        }
        if (prologue || GEMM_ASYNC_B) {
            const KB_T *g = b_at(kt, rows, cols);
            mma_load_tile<B_ROWS, B_LEN>(Bs + st * B_STAGE, g, ldb, rows, cols, b_async);
        }
    };

    /* Prologue: STAGES-1 tiles in flight. One commit per tile slot, even an empty one,
     * keeps "groups pending" equal to "tiles ahead" for the wait below. */
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        load_stage(s, KT0 + s, true);
        kb_cp_async_commit();
    }

    for (int kt = KT0; kt < KT; kt++) {
        kb_cp_async_wait<STAGES - 2>();   /* tile kt has landed (this thread's copies) */
        __syncthreads();                  /* ... everyone's; and stage kt-1 is free again */
        const int nk = kt + STAGES - 1, ns = (nk - KT0) % STAGES;
        load_stage(ns, nk, false);
        kb_cp_async_commit();
        int ar, ac, br, bc;
        const KB_T *ga = a_at(nk, ar, ac), *gb = b_at(nk, br, bc);

        const KB_T *sa = As + (kt - KT0) % STAGES * A_STAGE, *sb = Bs + (kt - KT0) % STAGES * B_STAGE;
        uint32_t afb[NFB][MT][4];
        if (NFB == 2)
            load_a_step(afb[0], sa, wm0, 0, lane);
#pragma unroll
        for (int kk = 0; kk < BK; kk += MMA_K) {
            /* staged tile nk: its loads issued before the first k-step's math */
#pragma unroll
            for (int i = 0; i < NA + NB; i++) {
                if (kk == 0 && nk < KT && i < NA)
                    rs[i] = mma_fetch_chunk<A_ROWS, A_LEN>(ga, lda, ar, ac, i);
                else if (kk == 0 && nk < KT)
                    rs[i] = mma_fetch_chunk<B_ROWS, B_LEN>(gb, ldb, br, bc, i - NA);
            }
            /* all A fragments of the warp tile, then B two n8 tiles at a time: the A
             * fragments are reused across WN, only 4 B registers are live at once */
            /* fragment double buffering: the next k-step's A fragments are requested before
             * this step's mma, so their ldmatrix latency hides behind tensor-core work */
            uint32_t(&af)[MT][4] = afb[kk / MMA_K % NFB];
            if (NFB == 1)
                load_a_step(af, sa, wm0, kk, lane);
            else if (kk + MMA_K < BK)
                load_a_step(afb[(kk / MMA_K + 1) % NFB], sa, wm0, kk + MMA_K, lane);
#if FP8_VIA_F16
            uint32_t ah[MT][2][4];   /* real k = 4t + 2q + e sits at f16 k = 2t + e + 8q */
#pragma unroll
            for (int i = 0; i < MT; i++)
#pragma unroll
                for (int h = 0; h < 2; h++)
#pragma unroll
                    for (int r = 0; r < 2; r++) {
                        ah[i][h][r] = FP8_WIDEN(af[i][2 * h + r]);
                        ah[i][h][r + 2] = FP8_WIDEN(af[i][2 * h + r] >> 16);
                    }
#endif
            /* this step's first K index: steps past K (the last tile's zero fill) add nothing */
            const int kg = kt * BK + kk;
            if (!GEMM_SCALED || kg < K) {
#pragma unroll
                for (int j = 0; j < NTL; j += 2) {
                    uint32_t bf[2][2];
                    load_b_frag2(bf[0], bf[1], sb, kk, wn0 + 8 * j, lane);
#pragma unroll
                    for (int jj = 0; jj < 2; jj++) {
#if defined(KB_DTYPE_TF32)
                        bf[jj][0] = kb_cvt_tf32(bf[jj][0]), bf[jj][1] = kb_cvt_tf32(bf[jj][1]);
#endif
#if FP8_VIA_F16 && !PROMOTE_EACH
                        /* one widened half of B at a time (2 registers live, as before the recipes:
                         * the 64 x 64 warp tile of fp8 at pad 1 spilled with both halves live) */
#pragma unroll
                        for (int h = 0; h < 2; h++) {
                            uint32_t bh[2] = { FP8_WIDEN(bf[jj][h]), FP8_WIDEN(bf[jj][h] >> 16) };
#pragma unroll
                            for (int i = 0; i < MT; i++)
                                kb_mma_m16n8k16_f32_f16(PROMOTE_BLOCK ? PART(i, j + jj) : acc[i][j + jj], ah[i][h],
                                                        bh, PROMOTE_BLOCK ? PART(i, j + jj) : acc[i][j + jj]);
                        }
#elif FP8_VIA_F16
                        uint32_t bh[2][2];
#pragma unroll
                        for (int h = 0; h < 2; h++)
                            bh[h][0] = FP8_WIDEN(bf[jj][h]), bh[h][1] = FP8_WIDEN(bf[jj][h] >> 16);
#pragma unroll
                        for (int i = 0; i < MT; i++)
                            tile_step_f16(acc[i][j + jj], ah[i], bh, sx, m0 + wm0 + 16 * i, n0 + wn0 + 8 * (j + jj),
                                          kg, lane);
#else
#pragma unroll
                        for (int i = 0; i < MT; i++)
                            tile_step(acc[i][j + jj], PART(i, j + jj), af[i], bf[jj], sx, m0 + wm0 + 16 * i,
                                      n0 + wn0 + 8 * (j + jj), kg, lane);
#endif
                    }
                }
            }
#if PROMOTE_BLOCK
            /* a 128-K block ends (or K, or this split-K slice): its partial sums promoted with its scales */
            if (kg < K && ((kg + MMA_K) % SKB == 0 || kg + MMA_K >= K || kg + MMA_K >= KT * BK)) {
#pragma unroll
                for (int i = 0; i < MT; i++)
#pragma unroll
                    for (int j = 0; j < NTL; j++) {
                        promote(acc[i][j], PART(i, j), sx, m0 + wm0 + 16 * i, n0 + wn0 + 8 * j, kg, lane);
                        PART(i, j)[0] = PART(i, j)[1] = PART(i, j)[2] = PART(i, j)[3] = 0;
                    }
            }
#endif
            /* ... and piece kk/MMA_K stored after this one: stage ns was freed by this
             * iteration's barrier and is read after a later one */
#pragma unroll
            for (int t = 0; t < NP; t++) {
                int i = kk / MMA_K * NP + t;
                if (nk < KT && i < NA)
                    mma_store_chunk<A_ROWS, A_LEN>(As + ns * A_STAGE, i, rs[i]);
                else if (nk < KT && i < NA + NB)
                    mma_store_chunk<B_ROWS, B_LEN>(Bs + ns * B_STAGE, i - NA, rs[i]);
            }
        }
    }

    channel_scale(acc, sx, m0 + wm0, n0 + wn0, lane);
#if SPLITK > 1
    partial_store(acc, W + (long long)blockIdx.z * M * N, M, N, m0 + wm0, n0 + wn0, lane);   /* epilogue: gemm_splitk_reduce */
#else
    const float ab = alpha * scale_a * scale_b;
    /* 16-byte D (and C) rows: staged through shared memory; otherwise straight from the
     * fragments. The last tile's readers are done (barrier) before its bytes are reused. */
    const bool vec_ok = (long long)ldc * (int)sizeof(out_t) % 16 == 0 && (uintptr_t)D % 16 == 0 &&
                        (beta == 0.0f || (uintptr_t)C % 16 == 0);
    kb_cp_async_wait<0>();
    __syncthreads();
    if (vec_ok)
        epilogue_staged(acc, reinterpret_cast<acc_t *>(smem) + warp * EPI_WARP, C, D, M, N, ldc,
                        m0 + wm0, n0 + wn0, lane, alpha, beta, ab);
    else
        epilogue_direct(acc, C, D, M, N, ldc, m0 + wm0, n0 + wn0, lane, alpha, beta, ab);
#endif
}

#if SPLITK > 1
__device__ __forceinline__ float acc_add(float a, float b) { return a + b; }
__device__ __forceinline__ int acc_add(int a, int b) { return (int)((unsigned)a + (unsigned)b); }   /* wraps as the mma */

/* Split-K, second launch: one thread per element of D, the SPLITK partial sums of the
 * workspace W ([SPLITK][M][N]) added in slice order - deterministic, unlike atomics -
 * then the epilogue. ab = alpha * scale_a * scale_b. */
extern "C" __global__ void __launch_bounds__(256)
    gemm_splitk_reduce(const acc_t *__restrict__ W, const out_t *__restrict__ C, out_t *__restrict__ D, int M, int N,
                       int ldc, float alpha, float beta, float ab)
{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x, mn = (long long)M * N;
    if (i >= mn)
        return;
    acc_t s = W[i];
#pragma unroll
    for (int z = 1; z < SPLITK; z++)
        s = acc_add(s, W[z * mn + i]);
    const long long ci = i / N * ldc + i % N;
    D[ci] = epilogue(s, C, ci, alpha, beta, ab);
}
#endif
#endif /* mma */

/* ============================ 4. wgmma (sm_90a) ============================ */
/* Compiled when its module asks for it (a wrong arch then fails with wgmma's static_assert
 * naming sm_90a), or with every variant on sm_90a. */
#if GEMM_HAS(GEMM_V_WGMMA) && (KB_HAS_WGMMA || defined(GEMM_VARIANT)) && \
    (defined(KB_DTYPE_FP16) || defined(KB_DTYPE_BF16) || defined(KB_DTYPE_FP8E4M3) || defined(KB_DTYPE_FP8E5M2) || \
     defined(KB_DTYPE_INT8))
#include "gemm_wgmma.cuh"
#endif
