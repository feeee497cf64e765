/* emu_data.cu - test kernels for atomics across blocks, narrow-type conversions and
 * vector accesses. Valid for both backends. */
#include "kb_device.h"

extern "C" __global__ void atomics(int *ci, unsigned *cu, unsigned long long *cull, float *cf, int *mx,
                                   int *mn, int *cas_i, unsigned *cas_u)
{
    int gid = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    atomicAdd(ci, 1);
    atomicAdd(cu, 2u);
    atomicAdd(cull, 1ull << 33);
    atomicAdd(cf, 0.5f);
    atomicMax(mx, gid);
    atomicMin(mn, -gid);
    /* increments through compare-and-swap loops */
    int old = *(volatile int *)cas_i, assumed;
    do {
        assumed = old;
        old = atomicCAS(cas_i, assumed, assumed + 1);
    } while (old != assumed);
    unsigned uold = *(volatile unsigned *)cas_u, uassumed;
    do {
        uassumed = uold;
        uold = atomicCAS(cas_u, uassumed, uassumed + 3u);
    } while (uold != uassumed);
}

/* Every conversion of in[i]: narrow bits out, and each narrow value back to float. */
extern "C" __global__ void convert(const float *in, kb_half *h, kb_bf16 *b, kb_fp8e4m3 *e4, kb_fp8e5m2 *e5,
                                   int8_t *i8, int *i32, float *back, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    float x = in[i];
    h[i] = kb_from_float<kb_half>(x);
    b[i] = kb_from_float<kb_bf16>(x);
    e4[i] = kb_from_float<kb_fp8e4m3>(x);
    e5[i] = kb_from_float<kb_fp8e5m2>(x);
    i8[i] = kb_from_float<int8_t>(x);
    i32[i] = kb_from_float<int>(x);
    back[6 * i + 0] = kb_to_float(h[i]);
    back[6 * i + 1] = kb_to_float(b[i]);
    back[6 * i + 2] = kb_to_float(e4[i]);
    back[6 * i + 3] = kb_to_float(e5[i]);
    back[6 * i + 4] = kb_to_float(i8[i]);
    back[6 * i + 5] = kb_to_float(kb_from_float<float>(x)) + kb_to_float(0);
}

/* Vector copies of 16, 8 and 4 bytes; offset (elements) shifts the source pointer. */
extern "C" __global__ void vec_copy_f4(float *out, const float *in, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    kb_vec<float, 4> v = kb_load_vec<4>(in + offset + 4 * i);
    kb_store_vec<4>(out + 4 * i, v);
}
extern "C" __global__ void vec_copy_h8(kb_half *out, const kb_half *in, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    kb_store_vec<8>(out + 8 * i, kb_load_vec<8>(in + offset + 8 * i));
}
extern "C" __global__ void vec_copy_b2(kb_bf16 *out, const kb_bf16 *in, int offset)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    kb_store_vec<2>(out + 2 * i, kb_load_vec<2>(in + offset + 2 * i));
}
/* A misaligned store (out shifted by offset elements). */
extern "C" __global__ void vec_store_f2(float *out, int offset)
{
    kb_vec<float, 2> v;
    v.v[0] = 1.0f;
    v.v[1] = 2.0f;
    kb_store_vec<2>(out + offset + 2 * threadIdx.x, v);
}

/* Math spellings shared by both backends. */
extern "C" __global__ void math_funcs(float *out, const float *in)
{
    int i = threadIdx.x;
    float x = in[i];
    float *o = out + 12 * i;
    o[0] = expf(x);
    o[1] = logf(fabsf(x) + 1.0f);
    o[2] = erff(x);
    o[3] = tanhf(x);
    o[4] = sqrtf(fabsf(x));
    o[5] = rsqrtf(fabsf(x) + 1.0f);
    o[6] = fmaxf(x, 0.0f) + fminf(x, 0.0f);
    o[7] = fmaf(x, 2.0f, 1.0f);
    o[8] = __expf(x) + __logf(fabsf(x) + 1.0f);
    o[9] = __fdividef(x, 4.0f) + __ldg(in + i);
    o[10] = x > 100.0f ? INFINITY : x < -100.0f ? -KB_FLT_MAX : FLT_MAX;
    o[11] = (float)(KB_ARCH + min(i, 3) + max(i, 3));
}

/* Argument passing: more integer-class arguments than registers hold, mixed with floats
 * and 64-bit values; and more floats than SSE registers. out gets every value back. */
extern "C" __global__ void many_args(double *out, int a, float b, long long c, int d, float e, int f, int g,
                                     int h, float i, long long j, int k)
{
    double v[11] = { (double)a, (double)b, (double)c, (double)d, (double)e, (double)f,
                     (double)g, (double)h, (double)i, (double)j, (double)k };
    for (int n = 0; n < 11; n++)
        out[threadIdx.x * 11 + n] = v[n];
}
extern "C" __global__ void nine_floats(float *out, float a0, float a1, float a2, float a3, float a4, float a5,
                                       float a6, float a7, float a8)
{
    out[threadIdx.x] = a0 + 2 * a1 + 3 * a2 + 4 * a3 + 5 * a4 + 6 * a5 + 7 * a6 + 8 * a7 + 9 * a8;
}

/* The stack alignment the ABI promises at a function's entry (16 bytes on x86-64), seen
 * from a kernel entry with stack arguments: the compiler aligns a 16-byte local by it,
 * so out[t] = the local's address mod 16 is 0 unless the fiber's first frame or the call
 * into the entry broke it. The volatile pointer keeps the compiler from folding it. */
extern "C" __global__ void stack_align(unsigned *out, int a, int b, int c, int d, int e, void *f, void *g)
{
    __align__(16) volatile char buf[16];
    volatile char *volatile p = buf;
    buf[0] = (char)(a + b + c + d + e);
    out[threadIdx.x] = (unsigned)((uintptr_t)p % 16u) + (f == g ? 0u : 100u) + (buf[0] == 15 ? 0u : 1000u);
}
