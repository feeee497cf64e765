/* gelu.cu - GELU activation, y = gelu(x), elementwise.
 *
 * Variants (naive first):
 *   gelu_naive  one element per thread, scalar loads. The baseline: every thread
 *               issues one narrow load and one narrow store.
 *   gelu_vec    VEC elements per thread through one 32/64/128-bit access (kb_vec):
 *               fewer, wider memory transactions and fewer instructions per byte,
 *               which is what moves an elementwise kernel towards the bandwidth
 *               roofline. The base may be misaligned (the pad axis offsets it by
 *               k elements): a scalar head brings the pointer to the vector
 *               alignment, a scalar tail finishes what is left, so every pad is
 *               correct rather than skipped.
 *
 * Defines (from the harness): KB_T storage type, FORM (FORM_ERF | FORM_TANH),
 * BLOCK threads per block, VEC elements per thread (gelu_vec only).
 * Math is in fp32 for every storage type, as llm.c's gelu kernels do.
 */
#include "kb_device.h"

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 4
#endif

static_assert(BLOCK % 32 == 0 && BLOCK <= 1024, "BLOCK must be a multiple of the warp size, at most 1024");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8 elements");
static_assert(sizeof(KB_T) * VEC <= 16, "VEC x sizeof(KB_T) must fit one 128-bit access");

__device__ __forceinline__ float gelu_f(float x)
{
#if FORM == FORM_TANH
    /* tanh approximation (GPT-2, llm.c): 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) */
    const float k = 0.7978845608028654f;
    return 0.5f * x * (1.0f + tanhf(k * (x + 0.044715f * x * x * x)));
#else
    /* exact form: 0.5 x (1 + erf(x / sqrt(2))) */
    return 0.5f * x * (1.0f + erff(x * 0.7071067811865476f));
#endif
}

extern "C" __global__ void __launch_bounds__(BLOCK)
gelu_naive(const KB_T *__restrict__ x, KB_T *__restrict__ y, long long n)
{
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = kb_from_float<KB_T>(gelu_f(kb_to_float(x[i])));
}

extern "C" __global__ void __launch_bounds__(BLOCK)
gelu_vec(const KB_T *__restrict__ x, KB_T *__restrict__ y, long long n)
{
    const unsigned long long vbytes = sizeof(KB_T) * VEC;
    long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    long long nthreads = (long long)gridDim.x * blockDim.x;

    /* Elements before x reaches vector alignment. y must share x's misalignment for
     * the vector body; when it does not, the whole range takes the scalar path. */
    unsigned long long xmis = (unsigned long long)(uintptr_t)x % vbytes;
    unsigned long long ymis = (unsigned long long)(uintptr_t)y % vbytes;
    long long head = xmis ? (long long)((vbytes - xmis) / sizeof(KB_T)) : 0;
    if (xmis != ymis || head > n)
        head = n;

    for (long long i = tid; i < head; i += nthreads)
        y[i] = kb_from_float<KB_T>(gelu_f(kb_to_float(x[i])));

    long long nvec = (n - head) / VEC;
    for (long long v = tid; v < nvec; v += nthreads) {
        long long i = head + v * VEC;
        kb_vec<KB_T, VEC> in = kb_load_vec<VEC>(x + i), out;
#pragma unroll
        for (int j = 0; j < VEC; j++)
            out.v[j] = kb_from_float<KB_T>(gelu_f(kb_to_float(in.v[j])));
        kb_store_vec<VEC>(y + i, out);
    }

    for (long long i = head + nvec * VEC + tid; i < n; i += nthreads)
        y[i] = kb_from_float<KB_T>(gelu_f(kb_to_float(x[i])));
}
