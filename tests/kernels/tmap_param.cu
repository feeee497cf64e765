/* tmap_param.cu - kernels that take a tensor map three ways, for the driver double's check of
 * how a map reaches a kernel (tests/test_cuda_tmap.c): by value as kbench's kb_tmap (128 bytes,
 * 64-byte aligned like CUtensorMap: right), by value as a 128-byte type aligned to 8 (lands at
 * parameter offset 8: misaligned), and by pointer (8 bytes: the map's head read as an address).
 * They only read the map; the double executes nothing. */
#include "kb_device.h"

struct tmap_align8 { unsigned long long q[16]; };

extern "C" __global__ void k_tmap(int n, const __grid_constant__ kb_tmap tm, float *out)
{
    if (threadIdx.x == 0 && n > 0)
        out[0] = (float)tm.opaque[n & 15];
}

extern "C" __global__ void k_tmap_align8(int n, const __grid_constant__ tmap_align8 tm, float *out)
{
    if (threadIdx.x == 0 && n > 0)
        out[0] = (float)tm.q[n & 15];
}

extern "C" __global__ void k_tmap_ptr(int n, const kb_tmap *tm, float *out)
{
    if (threadIdx.x == 0 && n > 0)
        out[0] = (float)tm->opaque[n & 15];
}
