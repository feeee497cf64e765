/* ceiling.cu - small verified kernels that measure what a device can do: the measured
 * ceilings a kbench kernel is scored against beside the datasheet (engine/derive.h).
 *
 * Variants (each one launch; every result is checked, so none can be optimised away):
 *   ceil_copy    device-to-device copy, one 16-byte load and one 16-byte store per
 *                thread and step of a grid-stride loop: the achievable read+write bandwidth.
 *   ceil_read    read-only: the same loads, summed as 32-bit words (wrapping, so exact in
 *                any order) into one partial per block; the host checks every partial.
 *   ceil_write   write-only: 16-byte stores of a value computed from the index.
 *   ceil_fma     SIMT fp32 FMA: CHAINS independent chains per thread, each iteration two
 *                dependent fmaf with runtime a = 1, b = +1, c = -1 (no compiler can fold
 *                them), so a chain returns to its start: checked exactly. kbench's SIMT
 *                kernels compute in fp32 whatever their storage dtype (gemm smem, attention
 *                fused), so FFMA is their instruction ceiling.
 *   ceil_mma     mma.sync (kb_mma.h) of the dtype's shape: tf32 m16n8k8, fp16/bf16
 *                m16n8k16, int8 and fp8 m16n8k32, CHAINS independent accumulators per warp.
 *                Every A element is 1 and every B element 1/K (int8: 1), so each mma adds
 *                exactly 1 (int8: 32) to every accumulator: the result counts the mmas.
 *                MMA_WIDENED (fp8): the path kbench's fp8 GEMM takes on sm_90 - each fp8
 *                fragment widened to f16 (cvt.rn.f16x2.e4m3x2/e5m2x2) and two m16n8k16 f16
 *                mmas per k32 step; the fragments are XORed with (iteration & zero), a
 *                runtime 0, so the conversions stay inside the loop as they do in the GEMM.
 *   ceil_launch  an almost empty kernel (one thread writes one word): launch cost.
 *
 * Defines (from the harness): BLOCK threads per block; the mma dtype by KB_DTYPE_<X>; PATH
 * (PATH_NATIVE | PATH_WIDENED) for mma. The iteration count is a kernel argument.
 */
#include "kb_device.h"

#ifndef BLOCK
#define BLOCK 256
#endif
static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of the warp size, at most 1024");

#define FMA_CHAINS 8
#define MMA_CHAINS 4

/* ================================ memory ================================ */

extern "C" __global__ void __launch_bounds__(BLOCK)
ceil_copy(const float *__restrict__ in, float *__restrict__ out, long long nvec)
{
    long long nthreads = (long long)gridDim.x * BLOCK;
    for (long long v = (long long)blockIdx.x * BLOCK + threadIdx.x; v < nvec; v += nthreads)
        kb_store_vec<4>(out + 4 * v, kb_load_vec<4>(in + 4 * v));
}

extern "C" __global__ void __launch_bounds__(BLOCK)
ceil_read(const float *__restrict__ in, unsigned *__restrict__ partial, long long nvec)
{
    long long nthreads = (long long)gridDim.x * BLOCK;
    unsigned acc = 0;
    for (long long v = (long long)blockIdx.x * BLOCK + threadIdx.x; v < nvec; v += nthreads) {
        kb_vec<float, 4> x = kb_load_vec<4>(in + 4 * v);
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc += __float_as_uint(x.v[j]);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    KB_SHARED(unsigned, warp_sums, [BLOCK / 32]);
    if (threadIdx.x % 32 == 0)
        warp_sums[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned s = 0;
        for (int w = 0; w < BLOCK / 32; w++)
            s += warp_sums[w];
        partial[blockIdx.x] = s;
    }
}

extern "C" __global__ void __launch_bounds__(BLOCK)
ceil_write(float *__restrict__ out, long long nvec)
{
    long long nthreads = (long long)gridDim.x * BLOCK;
    for (long long v = (long long)blockIdx.x * BLOCK + threadIdx.x; v < nvec; v += nthreads) {
        kb_vec<float, 4> x;
#pragma unroll
        for (int j = 0; j < 4; j++)
            x.v[j] = (float)((4 * v + j) & 0xffffff);
        kb_store_vec<4>(out + 4 * v, x);
    }
}

/* ================================ SIMT FMA ================================ */

extern "C" __global__ void __launch_bounds__(BLOCK)
ceil_fma(float *__restrict__ out, float a, float b, float c, int iters)
{
    float x[FMA_CHAINS];
#pragma unroll
    for (int ch = 0; ch < FMA_CHAINS; ch++)
        x[ch] = (float)((threadIdx.x + ch) & 7);
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int ch = 0; ch < FMA_CHAINS; ch++) {
            x[ch] = fmaf(x[ch], a, b);
            x[ch] = fmaf(x[ch], a, c);
        }
    }
    long long g = (long long)blockIdx.x * BLOCK + threadIdx.x;
#pragma unroll
    for (int ch = 0; ch < FMA_CHAINS; ch++)
        out[g * FMA_CHAINS + ch] = x[ch];
}

/* ================================ mma.sync ================================ */

#if defined(KB_DTYPE_FP16)
#define MMA_OP kb_mma_m16n8k16_f32_f16
#elif defined(KB_DTYPE_BF16)
#define MMA_OP kb_mma_m16n8k16_f32_bf16
#elif defined(KB_DTYPE_TF32)
#define MMA_OP kb_mma_m16n8k8_f32_tf32
#elif defined(KB_DTYPE_INT8)
#define MMA_OP kb_mma_m16n8k32_s32_s8
#define MMA_ACC int
#elif defined(KB_DTYPE_FP8E4M3) && KB_ARCH >= 89
#define MMA_OP kb_mma_m16n8k32_f32_e4m3
#define FP8_WIDEN kb_cvt_f16x2_e4m3x2
#elif defined(KB_DTYPE_FP8E5M2) && KB_ARCH >= 89
#define MMA_OP kb_mma_m16n8k32_f32_e5m2
#define FP8_WIDEN kb_cvt_f16x2_e5m2x2
#endif
#ifndef MMA_ACC
#define MMA_ACC float
#endif
/* the family's `path` param: native (the dtype's own mma) or widened (fp8 via f16) */
#if defined(PATH_WIDENED) && PATH == PATH_WIDENED
#define MMA_WIDENED 1
#else
#define MMA_WIDENED 0
#endif
#if MMA_WIDENED && !defined(FP8_WIDEN)
#error "MMA_WIDENED is the fp8 path (sm_89+): compile it for fp8e4m3 or fp8e5m2"
#endif

#ifdef MMA_OP
/* One iteration: every chain's accumulators take one mma of the dtype's shape (widened:
 * two f16 mmas covering the same k32 step, as kernels/gemm.cu's FP8_VIA_F16). */
__device__ __forceinline__ void mma_step(MMA_ACC d[MMA_CHAINS][4], const uint32_t a[4], const uint32_t b[2],
                                         uint32_t salt)
{
#if MMA_WIDENED
    uint32_t ah[2][4], bh[2][2];
#pragma unroll
    for (int h = 0; h < 2; h++) {
#pragma unroll
        for (int r = 0; r < 2; r++) {
            ah[h][r] = FP8_WIDEN(a[2 * h + r] ^ salt);
            ah[h][r + 2] = FP8_WIDEN((a[2 * h + r] ^ salt) >> 16);
        }
        bh[h][0] = FP8_WIDEN(b[h] ^ salt);
        bh[h][1] = FP8_WIDEN((b[h] ^ salt) >> 16);
    }
#pragma unroll
    for (int ch = 0; ch < MMA_CHAINS; ch++)
#pragma unroll
        for (int h = 0; h < 2; h++)
            kb_mma_m16n8k16_f32_f16(d[ch], ah[h], bh[h], d[ch]);
#else
    (void)salt;
#pragma unroll
    for (int ch = 0; ch < MMA_CHAINS; ch++)
        MMA_OP(d[ch], a, b, d[ch]);
#endif
}

/* a_bits / b_bits: one register of A / B fragments (every element the same value);
 * zero: a runtime 0. out: [threads][MMA_CHAINS][4] accumulators. */
extern "C" __global__ void __launch_bounds__(BLOCK)
ceil_mma(MMA_ACC *__restrict__ out, unsigned a_bits, unsigned b_bits, unsigned zero, int iters)
{
    const uint32_t a[4] = { a_bits, a_bits, a_bits, a_bits }, b[2] = { b_bits, b_bits };
    MMA_ACC d[MMA_CHAINS][4];
#pragma unroll
    for (int ch = 0; ch < MMA_CHAINS; ch++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            d[ch][r] = 0;
    for (int i = 0; i < iters; i++)
        mma_step(d, a, b, (uint32_t)i & zero);
    long long g = (long long)blockIdx.x * BLOCK + threadIdx.x;
#pragma unroll
    for (int ch = 0; ch < MMA_CHAINS; ch++)
#pragma unroll
        for (int r = 0; r < 4; r++)
            out[(g * MMA_CHAINS + ch) * 4 + r] = d[ch][r];
}
#endif /* MMA_OP */

/* ================================ launch ================================ */

extern "C" __global__ void ceil_launch(unsigned *__restrict__ out, unsigned magic)
{
    if (blockIdx.x == 0 && threadIdx.x == 0)
        out[0] = magic;
}
