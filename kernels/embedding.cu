/* embedding.cu - embedding lookup (row gather), out[t, :] = table[ids[t], :].
 *
 * Layout: table is [vocab x ld] and out is [tokens x ld] with ld = dim + pad (the pad
 * axis is row-stride padding; pad = 1 leaves rows misaligned for vector accesses).
 * ids are int32 and were checked against [0, vocab) on the host before the launch:
 * the kernels trust them. A gather is a copy: the bits of each element move unchanged,
 * no conversion through float.
 *
 * Variants (naive first):
 *   embedding_scalar  one element per thread over the flattened [tokens x dim] output
 *                     (a grid-stride loop): the baseline, one narrow load and store per
 *                     element plus a 64-bit division to find the token.
 *   embedding_vec     one row per warp (BLOCK/32 rows per block, grid-stride over the
 *                     tokens): the warp reads the id once and copies the row in 128-bit
 *                     accesses (VEC = 16 / sizeof(KB_T) elements), consecutive lanes on
 *                     consecutive vectors, so a warp moves 512 contiguous bytes per
 *                     instruction. A scalar head brings the source row to 16-byte
 *                     alignment and a scalar tail finishes it; when the source and the
 *                     destination rows are misaligned differently (ld * sizeof(KB_T) not
 *                     a multiple of 16) that row is copied with scalar accesses, so every
 *                     dim and pad is correct rather than skipped. The 128-bit copy is
 *                     a plain uint4 assignment: one ld.global.v4 and one st.global.v4.
 *
 * Defines (from the harness): KB_T storage type, BLOCK threads per block.
 */
#include "kb_device.h"

#ifndef BLOCK
#define BLOCK 256
#endif

#define NWARPS (BLOCK / 32)
#define VEC (16 / (int)sizeof(KB_T))

static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024,
              "BLOCK must be a multiple of the warp size (32), at most 1024: embedding_vec gives each warp a row");
static_assert(16 % sizeof(KB_T) == 0, "a 128-bit access must hold a whole number of elements");

/* grid-stride over tokens * dim elements; grid.x = min(ceil(tokens * dim / BLOCK), cap) */
extern "C" __global__ void __launch_bounds__(BLOCK)
embedding_scalar(const int *__restrict__ ids, const KB_T *__restrict__ table, KB_T *__restrict__ out,
                 long long tokens, long long dim, long long ld)
{
    long long n = tokens * dim;
    long long stride = (long long)gridDim.x * BLOCK;
    for (long long i = (long long)blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride) {
        long long t = i / dim, j = i - t * dim;
        out[t * ld + j] = table[(long long)ids[t] * ld + j];
    }
}

/* Elements before p reaches 16-byte alignment. */
__device__ __forceinline__ long long align_head(const void *p)
{
    unsigned long long mis = (unsigned long long)(uintptr_t)p % 16u;
    return mis ? (long long)((16u - mis) / sizeof(KB_T)) : 0;
}

/* grid-stride over tokens, one per warp; grid.x = min(ceil(tokens / NWARPS), cap) */
extern "C" __global__ void __launch_bounds__(BLOCK)
embedding_vec(const int *__restrict__ ids, const KB_T *__restrict__ table, KB_T *__restrict__ out,
              long long tokens, long long dim, long long ld)
{
    const int lane = threadIdx.x % 32;
    long long stride = (long long)gridDim.x * NWARPS;
    for (long long t = (long long)blockIdx.x * NWARPS + threadIdx.x / 32; t < tokens; t += stride) {
        const KB_T *src = table + (long long)ids[t] * ld;
        KB_T *dst = out + t * ld;
        long long head = align_head(src);
        if (head != align_head(dst) || head > dim)
            head = dim; /* differently misaligned rows: the whole row scalar */
        for (long long i = lane; i < head; i += 32)
            dst[i] = src[i];
        long long nvec = (dim - head) / VEC;
        /* a plain uint4 copy: one 128-bit load and one 128-bit store (kb_vec's copy through
         * memcpy made ptxas split every store into four st.global.u32, tests/test_ptx.c) */
        const uint4 *s4 = reinterpret_cast<const uint4 *>(src + head);
        uint4 *d4 = reinterpret_cast<uint4 *>(dst + head);
        for (long long v = lane; v < nvec; v += 32)
            d4[v] = s4[v];
        for (long long i = head + nvec * VEC + lane; i < dim; i += 32)
            dst[i] = src[i];
    }
}
