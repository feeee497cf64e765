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
