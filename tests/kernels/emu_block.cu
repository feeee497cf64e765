/* emu_block.cu - test kernels for block-level emulation: barriers, static and dynamic
 * shared memory, 2D/3D geometry, poison, divergent barriers, limits and faults.
 * Valid for both backends (test_emu compiles it with g++ -DKB_EMU and with NVRTC). */
#include "kb_device.h"

/* Each block reverses its blockDim.x values through shared memory. Thread t reads what
 * thread n-1-t wrote, so without the barrier (use_barrier = 0) the emulator, which runs
 * threads in order, hands the first half poison (NaN). */
extern "C" __global__ void reverse_block(float *out, const float *in, int use_barrier)
{
    KB_SHARED(float, s, [1024]);
    unsigned t = threadIdx.x, base = blockIdx.x * blockDim.x;
    s[t] = in[base + t];
    if (use_barrier)
        __syncthreads();
    out[base + t] = s[blockDim.x - 1 - t];
}

/* Classic tiled transpose, blocks of 32x8 threads over 32x32 tiles: every thread reads
 * values written by three other warps. out is cols x rows. */
extern "C" __global__ void transpose(float *out, const float *in, int rows, int cols)
{
    KB_SHARED(float, tile, [32][33]);
    int x = blockIdx.x * 32 + threadIdx.x, y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < cols && y + j < rows)
            tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < rows && y + j < cols)
            out[(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
}

/* Block sum by tree reduction in dynamic shared memory (blockDim.x floats, a power of
 * two). A static array written in between must not overlap the dynamic one. */
extern "C" __global__ void dyn_sum(float *out, const float *in)
{
    KB_DYN_SHARED(float, buf);
    KB_SHARED(int, marks, [4]);
    unsigned t = threadIdx.x;
    buf[t] = in[blockIdx.x * blockDim.x + t];
    if (t < 4)
        marks[t] = 5;     /* not -1: that is what the poison reads as */
    __syncthreads();
    for (unsigned s = blockDim.x / 2; s > 0; s /= 2) {
        if (t < s)
            buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0)
        out[blockIdx.x] = buf[0] + (float)(marks[0] + marks[3] - 10);
}

static __device__ unsigned kb_pack3(unsigned x, unsigned y, unsigned z) { return x | y << 10 | z << 20; }

/* Every thread of a 3D grid of 3D blocks records what it sees, at its global linear id. */
extern "C" __global__ void geom3d(unsigned *out)
{
    unsigned block = (blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;
    unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    unsigned g = block * blockDim.x * blockDim.y * blockDim.z + thread;
    out[4 * g + 0] = kb_pack3(threadIdx.x, threadIdx.y, threadIdx.z);
    out[4 * g + 1] = kb_pack3(blockIdx.x, blockIdx.y, blockIdx.z);
    out[4 * g + 2] = kb_pack3(blockDim.x, blockDim.y, blockDim.z);
    out[4 * g + 3] = kb_pack3(gridDim.x, gridDim.y, gridDim.z) + (unsigned)(warpSize << 26);
}

/* Only the first half of the block writes shared memory; everyone reads its own slot. */
extern "C" __global__ void read_unwritten(float *out)
{
    KB_SHARED(float, s, [1024]);
    if (threadIdx.x < blockDim.x / 2)
        s[threadIdx.x] = 1.0f;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = s[threadIdx.x];
}

/* Threads at or past n_live leave before the barrier: divergent unless n_live == blockDim.x. */
extern "C" __global__ void divergent_barrier(float *out, int n_live)
{
    if ((int)threadIdx.x >= n_live)
        return;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f;
}

/* 40 KiB of static shared memory plus whatever dynamic memory the launch asks for. */
extern "C" __global__ void static_40k(float *out)
{
    KB_SHARED(float, s, [10240]);
    KB_DYN_SHARED(float, d);
    s[threadIdx.x] = (float)threadIdx.x;
    d[threadIdx.x] = 2.0f;
    __syncthreads();
    out[threadIdx.x] = s[blockDim.x - 1 - threadIdx.x] + d[threadIdx.x];
}

/* One thread writes through a bad pointer (the test passes a small integer). */
extern "C" __global__ void bad_pointer(float *p, int block, int thread)
{
    if ((int)blockIdx.x == block && (int)threadIdx.x == thread)
        *(volatile float *)p = 1.0f;
}

/* Integer division by a runtime zero (traps on the CPU), or __trap() when b < 0. */
extern "C" __global__ void div_or_trap(int *out, int a, int b)
{
    if (b < 0)
        __trap();
    out[threadIdx.x] = a / b;
}

/* Recursion deep enough to overflow an emulated thread's stack. */
__device__ __noinline__ int deep_recursion(int n)
{
    volatile char frame[1024];
    frame[n % 1024] = (char)n;
    return n <= 0 ? 0 : deep_recursion(n - 1) + frame[n % 1024];
}
extern "C" __global__ void stack_hog(int *out, int depth)
{
    out[threadIdx.x] = deep_recursion(depth);
}

/* One frame larger than an emulated thread's whole stack: its first access lies far
 * below the guard page unless the frame is probed page by page on the way down. */
extern "C" __global__ void big_frame(int *out, int i)
{
    volatile char frame[300 * 1024];
    frame[i] = 1;
    out[threadIdx.x] = frame[i];
}

/* x[i] += v, for graph capture. */
extern "C" __global__ void add_scalar(float *x, float v, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        x[i] += v;
}
