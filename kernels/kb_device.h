/* kb_device.h - the one header every kernel includes. Kernel code never names a backend.
 *
 * The same source is compiled two ways:
 *   - NVRTC for the GPU (__CUDACC_RTC__): this header maps the names below onto CUDA;
 *   - the host C++ compiler with -DKB_EMU for the CPU emulator: kb_device_emu.h maps
 *     them onto the emulator runtime (blocks on worker threads, threads as fibers).
 *
 * What a kernel may use, spelled the same on both:
 *   entries        extern "C" __global__ void name(...)  (found by name on both backends);
 *                  __device__, __host__, __forceinline__, __noinline__, __restrict__,
 *                  __launch_bounds__(...), __align__(n)
 *   geometry       threadIdx, blockIdx, blockDim, gridDim (.x/.y/.z, unsigned), warpSize
 *   barriers       __syncthreads(), __syncwarp(mask), __threadfence(), __threadfence_block();
 *                  __trap() fails the launch
 *   warp           __shfl_sync, __shfl_xor_sync, __shfl_down_sync, __shfl_up_sync (optional
 *                  width), __ballot_sync, __any_sync, __all_sync, __reduce_{add,min,max}_sync
 *                  Lanes are threads 32k..32k+31 in linear order x + y*bx + z*bx*by.
 *   shared memory  KB_SHARED(type, name, dims);   e.g. KB_SHARED(float, tile, [32][33]);
 *                  KB_DYN_SHARED(type, name);     a `type *name` on the dynamic shared memory
 *                                                 of the launch, 16-byte aligned.
 *                  Both only inside functions (kernel or __device__).
 *   atomics        atomicAdd (float, int, unsigned, unsigned long long), atomicMax/atomicMin
 *                  (int), atomicCAS (int, unsigned)
 *   narrow types   kb_half, kb_bf16, kb_fp8e4m3, kb_fp8e5m2 (storage types; do arithmetic in
 *                  float): float kb_to_float(x) for float, the four narrow types, int8_t, int;
 *                  T kb_from_float<T>(float) for the same: round to nearest even, fp8
 *                  saturates to the largest finite value, int8_t/int round to nearest even
 *                  and saturate (NaN -> 0).
 *   vectors        kb_vec<T, N> (aligned to sizeof(T)*N, members T v[N]); kb_load_vec<N>(p),
 *                  kb_store_vec<N>(p, v): one 2/4/8/16-byte access on the GPU; the emulator
 *                  reports a misaligned pointer as a fault, as the GPU would.
 *                  CUDA's float2/float4/int2/int4/uint2/uint4 (+ make_*) exist on both too.
 *   math           expf logf erff tanhf sqrtf rsqrtf fmaxf fminf fabsf fmaf __expf __logf
 *                  __fdividef __saturatef __float2int_rn __int_as_float __float_as_int
 *                  __uint_as_float __float_as_uint __popc __clz __ffs, min/max, __ldg(p),
 *                  INFINITY, NAN, FLT_MAX, KB_FLT_MAX
 *   KB_ARCH        target compute capability x10 (80, 89, 90, 100, 120); usable in #if.
 *   KB_ARCH_SPECIFIC  1 for an arch-specific `a` target (sm_90a, sm_100a, sm_120a), else 0.
 *                  Both come from the build (-D, harness/core/arch.h) on both backends; the
 *                  feature macros KB_HAS_TMA, KB_HAS_WGMMA, KB_HAS_SETMAXNREG: kb_arch.h.
 *   sm_90          mbarrier (kb_mbarrier.h), TMA tensor copies (kb_tma.h), fence.proxy.async,
 *                  named barriers, elect.sync, setmaxnreg (kb_sync90.h), wgmma (kb_wgmma.h).
 *   integer types  int8_t ... uint64_t, uintptr_t (NVRTC has no standard headers).
 *
 * Not available: a bare __shared__ (write KB_SHARED / KB_DYN_SHARED, which the emulator
 * can give per-block storage), and arithmetic operators on the narrow types (convert to
 * float). One kernel source is one translation unit: include this header once per module.
 *
 * Under the emulator (see kb_device_emu.h): threads of a block run one after another
 * until they wait, device and shared memory start as 0xFF bytes (NaN), and a barrier
 * or warp collective that not every thread reaches, a misaligned vector access, a bad
 * pointer, an integer division by zero or __trap() fails the launch with a message
 * naming the block and thread.
 */
#ifndef KB_DEVICE_H
#define KB_DEVICE_H

#include "kb_arch.h"   /* KB_ARCH, KB_ARCH_SPECIFIC and the KB_HAS_* feature macros */

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* ===================================== CUDA ===================================== */

#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef unsigned char uint8_t;
typedef short int16_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned long long uintptr_t;
#else
#include <stdint.h>
#endif

#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>

#define KB_SHARED(type, name, dims) __shared__ type name dims
/* One extern array for the whole module: every KB_DYN_SHARED views the same bytes. */
extern __shared__ __align__(16) unsigned char kb_dyn_shared_[];
#define KB_DYN_SHARED(type, name) type *name = reinterpret_cast<type *>(kb_dyn_shared_)

#ifndef INFINITY
#define INFINITY __int_as_float(0x7f800000)
#endif
#ifndef NAN
#define NAN __int_as_float(0x7fffffff)
#endif
#ifndef FLT_MAX
#define FLT_MAX 3.402823466e+38f
#endif

typedef __half kb_half;
typedef __nv_bfloat16 kb_bf16;
typedef __nv_fp8_e4m3 kb_fp8e4m3;
typedef __nv_fp8_e5m2 kb_fp8e5m2;

__device__ __forceinline__ float kb_to_float(float x) { return x; }
__device__ __forceinline__ float kb_to_float(kb_half x) { return __half2float(x); }
__device__ __forceinline__ float kb_to_float(kb_bf16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float kb_to_float(kb_fp8e4m3 x) { return static_cast<float>(x); }
__device__ __forceinline__ float kb_to_float(kb_fp8e5m2 x) { return static_cast<float>(x); }
__device__ __forceinline__ float kb_to_float(int8_t x) { return (float)x; }
__device__ __forceinline__ float kb_to_float(int x) { return (float)x; }

template <class T> __device__ T kb_from_float(float x);
template <> __device__ __forceinline__ float kb_from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ kb_half kb_from_float<kb_half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ kb_bf16 kb_from_float<kb_bf16>(float x) { return __float2bfloat16_rn(x); }
/* The fp8 constructors convert with cvt.rn.satfinite. */
template <> __device__ __forceinline__ kb_fp8e4m3 kb_from_float<kb_fp8e4m3>(float x) { return kb_fp8e4m3(x); }
template <> __device__ __forceinline__ kb_fp8e5m2 kb_from_float<kb_fp8e5m2>(float x) { return kb_fp8e5m2(x); }
template <> __device__ __forceinline__ int kb_from_float<int>(float x) { return __float2int_rn(x); }
template <> __device__ __forceinline__ int8_t kb_from_float<int8_t>(float x)
{
    int r = __float2int_rn(x);  /* NaN -> 0, saturates to int range */
    return (int8_t)(r < -128 ? -128 : r > 127 ? 127 : r);
}

/* The word type of one N-byte access: the load below is a single ld.v2/v4 / ld.b32 ... */
template <int B> struct kb_vec_word_;
template <> struct kb_vec_word_<2> { typedef unsigned short type; };
template <> struct kb_vec_word_<4> { typedef unsigned int type; };
template <> struct kb_vec_word_<8> { typedef uint2 type; };
template <> struct kb_vec_word_<16> { typedef uint4 type; };

#define KB_VEC_CHECK_ALIGN_(p, bytes, what) ((void)0)
#define KB_MEMCPY_ memcpy

#elif defined(KB_EMU)
/* ================================ CPU emulator ================================== */
#include "kb_device_emu.h"

#else
#error "kb_device.h: compile with NVRTC or with -DKB_EMU (the emulator backend)"
#endif

/* ============================ both backends ============================ */

#define KB_FLT_MAX 3.402823466e+38f

/* N elements of T, aligned so that one access moves the whole vector. */
template <class T, int N> struct __align__(sizeof(T) * N) kb_vec {
    T v[N];
};

template <int N, class T> __device__ __forceinline__ kb_vec<T, N> kb_load_vec(const T *p)
{
    static_assert(sizeof(T) * N == 2 || sizeof(T) * N == 4 || sizeof(T) * N == 8 ||
                  sizeof(T) * N == 16, "kb_load_vec: a vector access is 2, 4, 8 or 16 bytes");
    typedef typename kb_vec_word_<(int)sizeof(T) * N>::type word;
    KB_VEC_CHECK_ALIGN_(p, sizeof(T) * N, "load");
    word w = *reinterpret_cast<const word *>(p);
    kb_vec<T, N> r;
    KB_MEMCPY_(&r, &w, sizeof r);
    return r;
}

template <int N, class T> __device__ __forceinline__ void kb_store_vec(T *p, const kb_vec<T, N> &x)
{
    static_assert(sizeof(T) * N == 2 || sizeof(T) * N == 4 || sizeof(T) * N == 8 ||
                  sizeof(T) * N == 16, "kb_store_vec: a vector access is 2, 4, 8 or 16 bytes");
    typedef typename kb_vec_word_<(int)sizeof(T) * N>::type word;
    KB_VEC_CHECK_ALIGN_(p, sizeof(T) * N, "store");
    word w;
    KB_MEMCPY_(&w, &x, sizeof w);
    *reinterpret_cast<word *>(p) = w;
}

#include "kb_mma.h"   /* mma.sync, ldmatrix, cp.async (both backends) */
#include "kb_mbarrier.h"
#include "kb_tma.h"
#include "kb_sync90.h"
#include "kb_wgmma.h"

#endif /* KB_DEVICE_H */
