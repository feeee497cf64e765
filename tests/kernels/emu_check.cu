/* emu_check.cu - test kernels for what the emulator checks beyond running the code:
 * asynchronous copies (cp.async groups and wait counts), schedules, shared-memory races
 * and reads of memory never written. Valid for both backends (test_emu_check compiles
 * it with g++ -DKB_EMU; NVRTC must accept it too). */
#include "kb_device.h"
#include "kb_mma.h"

/* Every thread copies two 16-byte chunks of in into shared memory with cp.async, each
 * its own group, waits with wait_group<wait_n>, then copies shared memory to out. With
 * wait_n 0 both groups have landed; with wait_n 1 the second group may still be in
 * flight: on the emulator its destination holds poison (NaN). */
extern "C" __global__ void async_two_groups(float *out, const float *in, int wait_n)
{
    KB_SHARED(float, s, [2][64 * 4]);
    unsigned t = threadIdx.x;
    kb_cp_async_16(&s[0][4 * t], &in[4 * t]);
    kb_cp_async_commit();
    kb_cp_async_16(&s[1][4 * t], &in[256 + 4 * t]);
    kb_cp_async_commit();
    if (wait_n == 0)
        kb_cp_async_wait<0>();
    else
        kb_cp_async_wait<1>();
    __syncthreads();
    for (int g = 0; g < 2; g++)
        for (int i = 0; i < 4; i++)
            out[g * 256 + 4 * t + i] = s[g][4 * t + i];
}

/* One warp loads an 8x8 b16 tile with cp.async and reads it with ldmatrix. With
 * wait_n 1 the tile's group is still pending when ldmatrix reads it: the emulator fails
 * the launch and names the copy. */
extern "C" __global__ void async_ldmatrix(unsigned *out, const unsigned short *in, int wait_n)
{
    KB_SHARED(unsigned short, tile, [8 * 8]);
    unsigned lane = threadIdx.x;
    if (lane < 8)
        kb_cp_async_16(&tile[8 * lane], &in[8 * lane]);
    kb_cp_async_commit();
    if (wait_n == 0)
        kb_cp_async_wait<0>();
    else
        kb_cp_async_wait<1>();
    __syncthreads();
    uint32_t r[1];
    kb_ldmatrix_x1(r, &tile[8 * (lane % 8)]);
    out[lane] = r[0];
}

/* Two block sums of 64 values through one shared array, as two reductions in a row
 * often share their partials. With barrier 0 the second round's writes are not separated
 * from thread 0's reads of the first round: a race between warps (write after read). */
extern "C" __global__ void race_two_sums(float *out, const float *in, int barrier)
{
    KB_SHARED(float, s, [64]);
    unsigned t = threadIdx.x;
    for (int round = 0; round < 2; round++) {
        s[t] = in[t] * (float)(round + 1);
        __syncthreads();
        if (t == 0) {
            float sum = 0.f;
            for (int i = 0; i < 64; i++)
                sum += s[i];
            out[round] = sum;
        }
        if (barrier)
            __syncthreads();
    }
}

/* Every thread writes its slot of shared memory, except thread skip; then each reads its
 * neighbour's. With skip in range, one thread reads a byte nothing wrote. */
extern "C" __global__ void uninit_neighbour(int *out, int skip)
{
    KB_SHARED(int, s, [64]);
    int t = (int)threadIdx.x;
    if (t != skip)
        s[t] = t;
    __syncthreads();
    out[t] = s[(t + 1) % 64];
}

/* The order warps of a block reach a point, as tickets: order[warp] = how many warps got
 * there first. Shows the emulator's schedule (--emu-schedule). */
extern "C" __global__ void warp_order(int *order, int *counter)
{
    unsigned warp = threadIdx.x / 32;
    __syncwarp();
    if (threadIdx.x % 32 == 0)
        order[blockIdx.x * (blockDim.x / 32) + warp] = atomicAdd(&counter[blockIdx.x], 1);
}

/* out[t] = in[t] for 64 threads; the test uploads only part of in. */
extern "C" __global__ void copy_in(int *out, const int *in)
{
    out[threadIdx.x] = in[threadIdx.x];
}

/* A shared counter every thread bumps with an atomic, read after a barrier: atomics are
 * neither races nor uninitialised writes. */
extern "C" __global__ void shared_atomic_count(int *out)
{
    KB_SHARED(int, count, [1]);
    if (threadIdx.x == 0)
        count[0] = 0;
    __syncthreads();
    atomicAdd(&count[0], 1);
    __syncthreads();
    if (threadIdx.x == 0)
        out[blockIdx.x] = count[0];
}

/* Threads at or past n_live leave before the barrier: divergent unless n_live == blockDim.x. */
extern "C" __global__ void divergent_barrier2(float *out, int n_live)
{
    if ((int)threadIdx.x >= n_live)
        return;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}
