/* nvrtc_include.cu - checks that -D defines and -I include directories reach
 * NVRTC: the static shared array is sized by KB_T_BLOCK (a -D define), the
 * scale comes from a project header, and a toolkit header is included too. */
#include <cuda_fp16.h>

#include "nvrtc_include.h"

#ifndef KB_T_BLOCK
#error "KB_T_BLOCK must be defined (-DKB_T_BLOCK=...)"
#endif

extern "C" __global__ void k_scale(float *y, const __half *x)
{
    __shared__ float tile[KB_T_BLOCK];
    tile[threadIdx.x] = KB_T_SCALE * __half2float(x[blockIdx.x * KB_T_BLOCK + threadIdx.x]);
    __syncthreads();
    y[blockIdx.x * KB_T_BLOCK + threadIdx.x] = tile[KB_T_BLOCK - 1 - threadIdx.x];
}
