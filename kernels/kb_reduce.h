/* kb_reduce.h - warp and block reductions of one float (sum, max), written once for the
 * families that need them. Include after kb_device.h (it uses only what that header
 * provides, so it compiles the same under NVRTC and the emulator).
 *
 *   kb_warp_sum<W>(v), kb_warp_max<W>(v)
 *       xor butterfly over aligned groups of W lanes (W a power of two, 1..32, default 32:
 *       the whole warp). Every lane returns its group's result, and since + and fmaxf
 *       are commutative, partners compute bitwise the same value. Full-mask shuffles:
 *       all 32 lanes of the warp must call.
 *   kb_block_sum<BLOCK, TAIL>(v), kb_block_max<BLOCK, TAIL>(v)
 *       block-wide result (blockDim.x == BLOCK, a multiple of 32, at most 1024) returned
 *       to every thread: each warp reduces, lane 0 parks the warp's partial in shared
 *       memory, a barrier, then every warp reduces the BLOCK/32 partials itself (no
 *       second barrier to broadcast). Every thread of the block must call.
 *       The partials array is static shared memory, one per (op, BLOCK): a second call of
 *       the same function would overwrite partials other warps may still be reading, so
 *         KB_REDUCE_TAIL_BARRIER  ends with __syncthreads(): the caller may reduce again;
 *         KB_REDUCE_TAIL_NONE     no trailing barrier: for a function called once per
 *                                 kernel (a sum and a max use different arrays).
 *
 * Each reduction combines in the same order as the hand-written loops it replaced, so
 * results are bitwise unchanged.
 */
#ifndef KB_REDUCE_H
#define KB_REDUCE_H

enum kb_reduce_tail { KB_REDUCE_TAIL_NONE, KB_REDUCE_TAIL_BARRIER };

/* The combining operations, with the identity that pads the partials of absent warps. */
struct kb_reduce_op_sum {
    static __device__ __forceinline__ float apply(float a, float b) { return a + b; }
    static __device__ __forceinline__ float identity() { return 0.0f; }
};
struct kb_reduce_op_max {
    static __device__ __forceinline__ float apply(float a, float b) { return fmaxf(a, b); }
    static __device__ __forceinline__ float identity() { return -INFINITY; }
};

template <class OP, int W>
__device__ __forceinline__ float kb_warp_reduce(float v)
{
    static_assert(W >= 1 && W <= 32 && (W & (W - 1)) == 0,
                  "W must be a power of two <= 32: the butterfly pairs lanes inside one warp");
#pragma unroll
    for (int o = W / 2; o > 0; o >>= 1)
        v = OP::apply(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

template <int W = 32>
__device__ __forceinline__ float kb_warp_sum(float v) { return kb_warp_reduce<kb_reduce_op_sum, W>(v); }
template <int W = 32>
__device__ __forceinline__ float kb_warp_max(float v) { return kb_warp_reduce<kb_reduce_op_max, W>(v); }

template <class OP, int BLOCK_THREADS, kb_reduce_tail TAIL>
__device__ float kb_block_reduce(float v)
{
    static_assert(BLOCK_THREADS % 32 == 0 && BLOCK_THREADS >= 32 && BLOCK_THREADS <= 1024,
                  "BLOCK_THREADS must be a multiple of 32, at most 1024: one partial per warp, "
                  "reduced again by one warp");
    const int nwarps = BLOCK_THREADS / 32;
    KB_SHARED(float, kb_reduce_part, [BLOCK_THREADS / 32]);
    v = kb_warp_reduce<OP, 32>(v);
    if (threadIdx.x % 32 == 0)
        kb_reduce_part[threadIdx.x / 32] = v;
    __syncthreads();
    v = threadIdx.x % 32 < nwarps ? kb_reduce_part[threadIdx.x % 32] : OP::identity();
    v = kb_warp_reduce<OP, 32>(v);
    if (TAIL == KB_REDUCE_TAIL_BARRIER)
        __syncthreads();
    return v;
}

template <int BLOCK_THREADS, kb_reduce_tail TAIL>
__device__ __forceinline__ float kb_block_sum(float v) { return kb_block_reduce<kb_reduce_op_sum, BLOCK_THREADS, TAIL>(v); }
template <int BLOCK_THREADS, kb_reduce_tail TAIL>
__device__ __forceinline__ float kb_block_max(float v) { return kb_block_reduce<kb_reduce_op_max, BLOCK_THREADS, TAIL>(v); }

#endif /* KB_REDUCE_H */
