/* nvrtc_resources.cu - kernels with known resource profiles, compiled by
 * tests/test_nvrtc.c to check kb_nvrtc_compile and kb_ptxas_parse on real ptxas
 * logs. Plain CUDA (no kb_device.h), one entry per resource the parser reads. */

/* Light: a handful of registers, no stack, no shared memory. */
extern "C" __global__ void k_axpy(float *y, const float *x, float a, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

/* Register pressure: 64 accumulators stay live across the loop, so ptxas needs
 * far more registers than k_axpy (no launch bound caps it). */
#define KB_T_ACC 64
extern "C" __global__ void k_pressure(float *y, const float *x, int n)
{
    float acc[KB_T_ACC];
#pragma unroll
    for (int i = 0; i < KB_T_ACC; i++)
        acc[i] = x[i * 1024 + threadIdx.x];
    for (int it = 0; it < n; it++) {
#pragma unroll
        for (int i = 0; i < KB_T_ACC; i++)
            acc[i] = acc[i] * acc[(i + 1) % KB_T_ACC] + x[it * KB_T_ACC + i];
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < KB_T_ACC; i++)
        s += acc[i] * (float)i;
    y[threadIdx.x] = s;
}

/* Spills: the same live set as k_pressure under a launch bound that caps the
 * registers (768 threads x 2 blocks per SM: 65536 / 1536 -> at most 40 per
 * thread, legal on sm_80, sm_89 and sm_90), so ptxas must spill to local memory. */
extern "C" __global__ void __launch_bounds__(768, 2) k_spill(float *y, const float *x, int n)
{
    float acc[KB_T_ACC];
#pragma unroll
    for (int i = 0; i < KB_T_ACC; i++)
        acc[i] = x[i * 1024 + threadIdx.x];
    for (int it = 0; it < n; it++) {
#pragma unroll
        for (int i = 0; i < KB_T_ACC; i++)
            acc[i] = acc[i] * acc[(i + 1) % KB_T_ACC] + x[it * KB_T_ACC + i];
    }
    float s = 0.f;
#pragma unroll
    for (int i = 0; i < KB_T_ACC; i++)
        s += acc[i] * (float)i;
    y[threadIdx.x] = s;
}

/* Stack: a 1 KiB local array indexed by a runtime value cannot live in
 * registers, so it becomes a stack frame (not a spill). The helper is kept out
 * of line so the log also carries a "Function properties" block for a
 * non-entry function, which the parser must not mistake for an entry. */
__device__ __noinline__ float kb_t_pick(const float *a, int j)
{
    return a[j & 255];
}

extern "C" __global__ void k_stack(float *y, const float *x, int j)
{
    float a[256];
    for (int i = 0; i < 256; i++)
        a[i] = x[i * 7 + threadIdx.x];
    for (int i = 0; i < 256; i++)
        a[(i * j) & 255] += a[i];
    y[threadIdx.x] = kb_t_pick(a, j);
}

/* Static shared memory: 1024 floats = 4096 bytes. */
extern "C" __global__ void k_smem(float *y, const float *x)
{
    __shared__ float tile[1024];
    for (int i = threadIdx.x; i < 1024; i += blockDim.x)
        tile[i] = x[i];
    __syncthreads();
    y[threadIdx.x] = tile[1023 - threadIdx.x % 1024];
}
