/* emu_warp.cu - test kernels for warp collectives: every shuffle (with widths), votes,
 * reductions, and a divergent collective. Valid for both backends. */
#include "kb_device.h"

#define FULL 0xffffffffu
#define N_OUT 12  /* results per thread */

/* Each thread writes N_OUT results; the test recomputes them from the CUDA semantics. */
extern "C" __global__ void shuffles(int *out, int width)
{
    unsigned t = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    unsigned gid = blockIdx.x * blockDim.x * blockDim.y * blockDim.z + t;
    int lane = (int)(t & 31);
    int v = (int)gid * 7 + 3;
    int *o = out + (size_t)gid * N_OUT;
    o[0] = __shfl_sync(FULL, v, (lane * 5 + 3) & 31);
    o[1] = __shfl_sync(FULL, v, lane + 1, width);
    o[2] = __shfl_up_sync(FULL, v, 3, width);
    o[3] = __shfl_down_sync(FULL, v, 3, width);
    o[4] = __shfl_xor_sync(FULL, v, 5, width);
    o[5] = (int)__ballot_sync(FULL, v % 3 == 0);
    o[6] = __any_sync(FULL, gid == 37) | __any_sync(FULL, 0) << 1 | __all_sync(FULL, v > 0) << 2 |
           __all_sync(FULL, lane != 7) << 3;
    float f = (float)gid * 0.5f;
    o[7] = (int)(__shfl_xor_sync(FULL, f, 16) * 2.0f);
    double d = (double)gid + 0.25;
    o[8] = (int)(__shfl_down_sync(FULL, d, 1) * 4.0);
    long long ll = ((long long)gid << 33) | 5;
    o[9] = (int)(__shfl_sync(FULL, ll, 0) >> 33);
    unsigned u = gid | 0x80000000u;
    o[10] = (int)(__shfl_up_sync(FULL, u, 1) & 0xffffu);
    __syncwarp();
    o[11] = __reduce_add_sync(FULL, v) + __reduce_max_sync(FULL, lane);
}

/* Warp sum with xor butterflies: every lane ends with the sum of its warp. */
extern "C" __global__ void warp_sum(float *out, const float *in)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    float v = in[i];
    for (int m = 16; m > 0; m /= 2)
        v += __shfl_xor_sync(FULL, v, m);
    out[i] = v;
}

/* The upper half of each warp leaves before a full-mask shuffle: a divergent collective. */
extern "C" __global__ void warp_divergent(int *out)
{
    if ((threadIdx.x & 31) >= 16)
        return;
    out[threadIdx.x] = __shfl_down_sync(FULL, (int)threadIdx.x, 1);
}

/* A full-warp broadcast from lane 0, then lanes 0 and 31 alone run two more exchanges
 * before the others have read the broadcast (the emulator resumes lanes in order, and
 * lane 31, the last to arrive, runs on). out[3 lane .. 3 lane + 2] = broadcast value,
 * the partner's lane, the partner's second value (0 for lanes outside the pair). */
extern "C" __global__ void warp_subset(int *out)
{
    int lane = (int)(threadIdx.x & 31);
    int v = __shfl_sync(FULL, 1000 + lane, 0), a = 0, b = 0;
    if (lane == 0 || lane == 31) {
        a = __shfl_xor_sync(0x80000001u, lane, 31);
        b = __shfl_xor_sync(0x80000001u, -lane - 7, 31);
    }
    int *o = out + 3 * threadIdx.x;
    o[0] = v;
    o[1] = a;
    o[2] = b;
}
