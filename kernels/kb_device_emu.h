/* kb_device_emu.h - the KB_EMU side of kb_device.h: the CUDA names kernels use, mapped
 * onto the CPU emulator. Included only by kb_device.h, only under -DKB_EMU (g++).
 *
 * How it works: the runtime calls every kernel entry once per emulated thread. Before it
 * does, it stores that thread's kb_emu_thread in kb_emu_self_ (thread-local to the worker
 * OS thread; a block never leaves its worker), so threadIdx & co are two loads. Barriers,
 * warp collectives, static shared memory and faults go through the kb_emu_rt table the
 * runtime hands over in kb_emu_bind(). See kernels/kb_emu_abi.h for the contract.
 */
#ifndef KB_DEVICE_EMU_H
#define KB_DEVICE_EMU_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi/kb_convert.h"
#include "abi/kb_emu_abi.h"

/* ---- CUDA qualifiers ---- */
#define __global__ __attribute__((visibility("default")))
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

/* KB_ARCH and the feature macros: kb_arch.h (from -DKB_ARCH, else KB_EMU_ARCH). */

/* ---- the binding to the runtime (one per module) ---- */
static const kb_emu_rt *kb_emu_rt_;
static thread_local kb_emu_thread *kb_emu_self_;

extern "C" {
__attribute__((visibility("default"))) extern const unsigned kb_emu_abi_version = KB_EMU_ABI_VERSION;
__attribute__((visibility("default"))) void kb_emu_bind(const kb_emu_rt *rt) { kb_emu_rt_ = rt; }
__attribute__((visibility("default"))) kb_emu_thread **kb_emu_tls_slot(void) { return &kb_emu_self_; }
/* 1 when a kernel of the module reads shared memory through the async proxy (TMA stores,
 * wgmma): set at dlopen by the initialiser below, which exists only where such a call was
 * instantiated; a checked launch then records generic writes for the fence.proxy.async rule. */
__attribute__((visibility("default"))) int kb_emu_sm90_user_ = 0;
}
template <int I> struct kb_emu_sm90_note_ { static const int v; };
template <int I> const int kb_emu_sm90_note_<I>::v = (kb_emu_sm90_user_ = 1);
#define KB_EMU_SM90_USER_() ((void)kb_emu_sm90_note_<0>::v)

#ifdef KB_EMU_CHECKED
#include "kb_emu_check.h"
#endif

[[noreturn]] inline void kb_emu_fault_(int kind, const char *msg)
{
    kb_emu_rt_->fault(kb_emu_self_, kind, msg);
    __builtin_unreachable();
}

/* ---- geometry (read-only, as in CUDA) ---- */
#define threadIdx (static_cast<const kb_emu_dim3 &>(kb_emu_self_->thread_idx))
#define blockIdx (static_cast<const kb_emu_dim3 &>(kb_emu_self_->block->block_idx))
#define blockDim (static_cast<const kb_emu_dim3 &>(kb_emu_self_->block->block_dim))
#define gridDim (static_cast<const kb_emu_dim3 &>(kb_emu_self_->block->grid_dim))
static constexpr int warpSize = KB_EMU_WARP_SIZE;

/* ---- barriers and fences ---- */
inline void __syncthreads(void) { kb_emu_rt_->syncthreads(kb_emu_self_); }
/* Blocks run on several OS threads: device-wide fences are real fences. */
inline void __threadfence(void) { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void __threadfence_block(void) { __atomic_signal_fence(__ATOMIC_SEQ_CST); }
/* Fails the launch (the runtime catches the SIGILL), as __trap() does on the GPU. */
[[noreturn]] inline void __trap(void) { __builtin_trap(); }

/* ---- shared memory ---- */
/* The address of a static local identifies the declaration (and each template
 * instantiation of it); the runtime maps it to this block's storage. */
#define KB_SHARED(type, name, dims)                                                       \
    typedef type kb_shared_type_##name dims;                                              \
    static char kb_shared_key_##name;                                                     \
    kb_shared_type_##name &name = *static_cast<kb_shared_type_##name *>(                  \
        kb_emu_rt_->shared_static(kb_emu_self_, &kb_shared_key_##name,                     \
                                  sizeof(kb_shared_type_##name), alignof(kb_shared_type_##name)))
#define KB_DYN_SHARED(type, name) type *name = reinterpret_cast<type *>(kb_emu_self_->block->dyn_shared)

/* ---- warp collectives: all built on the runtime's warp exchange ---- */
template <class T> inline const unsigned char *kb_emu_xchg_(unsigned mask, const T &v, unsigned *members)
{
    static_assert(sizeof(T) <= KB_EMU_XCHG_MAX_BYTES, "warp exchange payload too large");
    return static_cast<const unsigned char *>(
        kb_emu_rt_->warp_exchange(kb_emu_self_, mask, &v, (unsigned)sizeof(T), members));
}
template <class T> inline T kb_emu_lane_(const unsigned char *area, unsigned lane)
{
    T r;
    memcpy(&r, area + (size_t)lane * sizeof(T), sizeof(T));
    return r;
}

inline void __syncwarp(unsigned mask = 0xffffffffu)
{
    unsigned members;
    kb_emu_rt_->warp_exchange(kb_emu_self_, mask, NULL, 0, &members);
}

/* Source lanes follow PTX shfl.sync: width splits the warp into segments; a source
 * outside the caller's segment (up/down/xor) returns the caller's own value. */
template <class T> inline T __shfl_sync(unsigned mask, T var, int src_lane, int width = warpSize)
{
    unsigned members, lane = kb_emu_self_->lane, w = (unsigned)width;
    const unsigned char *a = kb_emu_xchg_(mask, var, &members);
    return kb_emu_lane_<T>(a, (lane & ~(w - 1)) | ((unsigned)src_lane & (w - 1)));
}
template <class T> inline T __shfl_up_sync(unsigned mask, T var, unsigned delta, int width = warpSize)
{
    unsigned members, lane = kb_emu_self_->lane, w = (unsigned)width;
    const unsigned char *a = kb_emu_xchg_(mask, var, &members);
    return (lane & (w - 1)) >= delta ? kb_emu_lane_<T>(a, lane - delta) : var;
}
template <class T> inline T __shfl_down_sync(unsigned mask, T var, unsigned delta, int width = warpSize)
{
    unsigned members, lane = kb_emu_self_->lane, w = (unsigned)width;
    const unsigned char *a = kb_emu_xchg_(mask, var, &members);
    return (lane & (w - 1)) + delta < w ? kb_emu_lane_<T>(a, lane + delta) : var;
}
template <class T> inline T __shfl_xor_sync(unsigned mask, T var, int lane_mask, int width = warpSize)
{
    unsigned members, lane = kb_emu_self_->lane, w = (unsigned)width;
    const unsigned char *a = kb_emu_xchg_(mask, var, &members);
    unsigned j = lane ^ ((unsigned)lane_mask & 31u);
    return j <= ((lane & ~(w - 1)) | (w - 1)) ? kb_emu_lane_<T>(a, j) : var;
}

inline unsigned __ballot_sync(unsigned mask, int pred)
{
    int p = pred != 0;
    unsigned members, r = 0;
    const unsigned char *a = kb_emu_xchg_(mask, p, &members);
    for (unsigned l = 0; l < 32; l++)
        if (((members >> l) & 1u) && kb_emu_lane_<int>(a, l))
            r |= 1u << l;
    return r;
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred)
{
    int p = pred != 0;
    unsigned members;
    const unsigned char *a = kb_emu_xchg_(mask, p, &members);
    for (unsigned l = 0; l < 32; l++)
        if (((members >> l) & 1u) && !kb_emu_lane_<int>(a, l))
            return 0;
    return 1;
}

#define KB_EMU_REDUCE_(name, T, init, op)                                                 \
    inline T name(unsigned mask, T v)                                                      \
    {                                                                                      \
        unsigned members;                                                                  \
        const unsigned char *a = kb_emu_xchg_(mask, v, &members);                          \
        T r = init;                                                                        \
        for (unsigned l = 0; l < 32; l++)                                                  \
            if ((members >> l) & 1u) { T x = kb_emu_lane_<T>(a, l); r = op; }             \
        return r;                                                                          \
    }
KB_EMU_REDUCE_(__reduce_add_sync, unsigned, 0u, r + x)
KB_EMU_REDUCE_(__reduce_add_sync, int, 0, (int)((unsigned)r + (unsigned)x))
KB_EMU_REDUCE_(__reduce_min_sync, unsigned, 0xffffffffu, x < r ? x : r)
KB_EMU_REDUCE_(__reduce_min_sync, int, 0x7fffffff, x < r ? x : r)
KB_EMU_REDUCE_(__reduce_max_sync, unsigned, 0u, x > r ? x : r)
KB_EMU_REDUCE_(__reduce_max_sync, int, (int)0x80000000u, x > r ? x : r)
#undef KB_EMU_REDUCE_

/* ---- atomics: real ones, blocks run on several OS threads ---- */
#define KB_EMU_RLX_ __ATOMIC_RELAXED
inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, KB_EMU_RLX_); }
inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, KB_EMU_RLX_); }
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    return __atomic_fetch_add(p, v, KB_EMU_RLX_);
}
inline int atomicSub(int *p, int v) { return __atomic_fetch_sub(p, v, KB_EMU_RLX_); }
inline unsigned atomicSub(unsigned *p, unsigned v) { return __atomic_fetch_sub(p, v, KB_EMU_RLX_); }
inline int atomicExch(int *p, int v) { return __atomic_exchange_n(p, v, KB_EMU_RLX_); }
inline unsigned atomicExch(unsigned *p, unsigned v) { return __atomic_exchange_n(p, v, KB_EMU_RLX_); }
inline int atomicCAS(int *p, int compare, int v)
{
    __atomic_compare_exchange_n(p, &compare, v, false, KB_EMU_RLX_, KB_EMU_RLX_);
    return compare; /* the old value whether or not the swap happened */
}
inline unsigned atomicCAS(unsigned *p, unsigned compare, unsigned v)
{
    __atomic_compare_exchange_n(p, &compare, v, false, KB_EMU_RLX_, KB_EMU_RLX_);
    return compare;
}
inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long compare, unsigned long long v)
{
    __atomic_compare_exchange_n(p, &compare, v, false, KB_EMU_RLX_, KB_EMU_RLX_);
    return compare;
}
/* Read-modify-write of any 4/8-byte value through a compare-and-swap loop. */
template <class T, class U, class F> inline T kb_emu_rmw_(T *p, F f)
{
    static_assert(sizeof(T) == sizeof(U), "kb_emu_rmw_: word size");
    U *w = reinterpret_cast<U *>(p);
    U old = __atomic_load_n(w, KB_EMU_RLX_), nw;
    T o, n;
    do {
        memcpy(&o, &old, sizeof o);
        n = f(o);
        memcpy(&nw, &n, sizeof nw);
    } while (!__atomic_compare_exchange_n(w, &old, nw, true, KB_EMU_RLX_, KB_EMU_RLX_));
    return o;
}
inline float atomicAdd(float *p, float v) { return kb_emu_rmw_<float, uint32_t>(p, [v](float o) { return o + v; }); }
inline double atomicAdd(double *p, double v) { return kb_emu_rmw_<double, uint64_t>(p, [v](double o) { return o + v; }); }
inline float atomicExch(float *p, float v) { return kb_emu_rmw_<float, uint32_t>(p, [v](float) { return v; }); }
inline int atomicMax(int *p, int v) { return kb_emu_rmw_<int, uint32_t>(p, [v](int o) { return o > v ? o : v; }); }
inline int atomicMin(int *p, int v) { return kb_emu_rmw_<int, uint32_t>(p, [v](int o) { return o < v ? o : v; }); }
inline unsigned atomicMax(unsigned *p, unsigned v) { return kb_emu_rmw_<unsigned, uint32_t>(p, [v](unsigned o) { return o > v ? o : v; }); }
inline unsigned atomicMin(unsigned *p, unsigned v) { return kb_emu_rmw_<unsigned, uint32_t>(p, [v](unsigned o) { return o < v ? o : v; }); }

/* ---- narrow types: the bits, converted by kb_convert.h exactly as the GPU rounds ---- */
struct kb_half { uint16_t bits; };
struct kb_bf16 { uint16_t bits; };
struct kb_fp8e4m3 { uint8_t bits; };
struct kb_fp8e5m2 { uint8_t bits; };

inline float kb_to_float(float x) { return x; }
inline float kb_to_float(kb_half x) { return kb_f16_bits_to_f32(x.bits); }
inline float kb_to_float(kb_bf16 x) { return kb_bf16_bits_to_f32(x.bits); }
inline float kb_to_float(kb_fp8e4m3 x) { return kb_e4m3_bits_to_f32(x.bits); }
inline float kb_to_float(kb_fp8e5m2 x) { return kb_e5m2_bits_to_f32(x.bits); }
inline float kb_to_float(int8_t x) { return (float)x; }
inline float kb_to_float(int x) { return (float)x; }

template <class T> T kb_from_float(float x);
template <> inline float kb_from_float<float>(float x) { return x; }
template <> inline kb_half kb_from_float<kb_half>(float x) { kb_half r; r.bits = kb_f32_to_f16_bits(x); return r; }
template <> inline kb_bf16 kb_from_float<kb_bf16>(float x) { kb_bf16 r; r.bits = kb_f32_to_bf16_bits(x); return r; }
template <> inline kb_fp8e4m3 kb_from_float<kb_fp8e4m3>(float x) { kb_fp8e4m3 r; r.bits = kb_f32_to_e4m3_bits(x); return r; }
template <> inline kb_fp8e5m2 kb_from_float<kb_fp8e5m2>(float x) { kb_fp8e5m2 r; r.bits = kb_f32_to_e5m2_bits(x); return r; }
/* cvt.rni.s32.f32: round to nearest even, saturate, NaN -> 0. */
inline int __float2int_rn(float x)
{
    if (isnan(x)) return 0;
    if (x >= 2147483648.0f) return 2147483647;
    if (x <= -2147483648.0f) return (int)0x80000000u;
    return (int)nearbyintf(x);
}
template <> inline int kb_from_float<int>(float x) { return __float2int_rn(x); }
template <> inline int8_t kb_from_float<int8_t>(float x)
{
    int r = __float2int_rn(x);
    return (int8_t)(r < -128 ? -128 : r > 127 ? 127 : r);
}

/* ---- vectors: the emulator checks the alignment a GPU would fault on ---- */
struct __align__(16) kb_emu_word16_ { uint64_t lo, hi; };
template <int B> struct kb_vec_word_;
template <> struct kb_vec_word_<2> { typedef uint16_t type; };
template <> struct kb_vec_word_<4> { typedef uint32_t type; };
template <> struct kb_vec_word_<8> { typedef uint64_t type; };
template <> struct kb_vec_word_<16> { typedef kb_emu_word16_ type; };

inline void kb_emu_check_align_(const void *p, size_t bytes, const char *what)
{
    if ((uintptr_t)p % bytes) {
        char msg[160];
        snprintf(msg, sizeof msg, "misaligned %zu-byte vector %s at %p", bytes, what, p);
        kb_emu_fault_(KB_EMU_FAULT_MEMORY, msg);
    }
}
#define KB_VEC_CHECK_ALIGN_(p, bytes, what) kb_emu_check_align_((const void *)(p), (bytes), (what))
#define KB_MEMCPY_ memcpy

/* CUDA's built-in vector types, for kernels that spell them. */
struct __align__(8) float2 { float x, y; };
struct __align__(16) float4 { float x, y, z, w; };
struct __align__(8) int2 { int x, y; };
struct __align__(16) int4 { int x, y, z, w; };
struct __align__(8) uint2 { unsigned x, y; };
struct __align__(16) uint4 { unsigned x, y, z, w; };
inline float2 make_float2(float x, float y) { return float2{x, y}; }
inline float4 make_float4(float x, float y, float z, float w) { return float4{x, y, z, w}; }
inline int4 make_int4(int x, int y, int z, int w) { return int4{x, y, z, w}; }
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }

/* ---- math: <math.h> has the rest (expf, logf, erff, tanhf, sqrtf, fmaxf, ...) ---- */
inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline float __expf(float x) { return expf(x); }
inline float __logf(float x) { return logf(x); }
inline float __fdividef(float a, float b) { return a / b; }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : x > 1.0f ? 1.0f : x; }
inline float __int_as_float(int x) { float f; memcpy(&f, &x, 4); return f; }
inline int __float_as_int(float x) { int i; memcpy(&i, &x, 4); return i; }
inline float __uint_as_float(unsigned x) { float f; memcpy(&f, &x, 4); return f; }
inline unsigned __float_as_uint(float x) { unsigned u; memcpy(&u, &x, 4); return u; }
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __clz(int x) { return x ? __builtin_clz((unsigned)x) : 32; }
inline int __ffs(int x) { return __builtin_ffs(x); }
template <class T> inline T __ldg(const T *p) { return *p; }

#define KB_EMU_MINMAX_(T)                                   \
    inline T min(T a, T b) { return b < a ? b : a; }        \
    inline T max(T a, T b) { return a < b ? b : a; }
KB_EMU_MINMAX_(int)
KB_EMU_MINMAX_(unsigned)
KB_EMU_MINMAX_(long long)
KB_EMU_MINMAX_(unsigned long long)
#undef KB_EMU_MINMAX_
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

#endif /* KB_DEVICE_EMU_H */
