/* kb_wgmma.h - warpgroup matrix multiply-accumulate (PTX ISA 9.7.15, "Asynchronous Warpgroup
 * Level Matrix Multiply-Accumulate Instructions"), for NVRTC and the emulator. Included by
 * kb_device.h; needs KB_HAS_WGMMA (sm_90a): elsewhere every function fails to compile with a
 * static_assert saying so.
 *
 * A warpgroup is 4 consecutive warps (threads 128w .. 128w+127); every one of its threads
 * executes each wgmma instruction. One wgmma computes D (64 x N) = A (64 x K) * B (K x N)
 * [+ D], K = 32 bytes of the operand type: m64nNk16 f16/bf16, m64nNk8 tf32, m64nNk32
 * e4m3/e5m2/s8 (9.7.15.5.1). B always, and A in the SS form, come from shared memory through
 * a 64-bit matrix descriptor (9.7.15.5.1.2):
 *   bits  0-13 start address >> 4      bits 16-29 leading dimension byte offset >> 4 (LBO)
 *   bits 32-45 stride dimension byte offset >> 4 (SBO)   bits 49-51 base offset
 *   bits 62-63 swizzle: 0 none (interleave), 1 128B, 2 64B, 3 32B
 * made by kb_wgmma_desc(smem, KB_WG_SW_*, lbo_bytes, sbo_bytes). The canonical layouts, in
 * 16-byte units (T = 16 / element size elements), as CUTLASS's make_gmma_desc states them
 * (cute/atom/mma_traits_sm90_gmma.hpp), each composed with the swizzle of the shared address
 * (bits 4.. XOR bits 7..: Swizzle<B,4,3>, B = 0/1/2/3 for none/32B/64B/128B):
 *   K-major  none: ((8,m),2):((1,SBO),LBO)   swizzled: ((8,m),2):((W,SBO),1)   W = 2/4/8
 *   MN-major none: ((1,m),(8,k)):((-,SBO),(1,LBO))   swizzled: ((W,m),(8,k)):((1,LBO),(W,SBO))
 * MN-major (the transpose immediates) exists for f16/bf16 only.
 *
 * Accumulators (9.7.15.5.1.1, "Register fragments"): thread 32w' + 4g + t of the warpgroup
 * (warp w' = 0..3, g = 0..7, t = 0..3) holds, for each 8-column block j, d[4j+0..1] = row
 * 16w'+g, cols 8j+2t, 8j+2t+1 and d[4j+2..3] = row 16w'+g+8, same cols (f32, s32: N/2
 * registers); f16 accumulators pack the pairs: d[2j] row 16w'+g, d[2j+1] row 16w'+g+8 (N/4).
 * A in registers (the RS form) is the mma.sync m16n8k{16,8,32} A fragment of the warp's 16
 * rows (kb_mma.h's table).
 *
 *   kb_wgmma_fence()        wgmma.fence: before the first wgmma, and after touching the
 *                           accumulator or A registers
 *   kb_wgmma_<acc>_<ab><_rs><N, NEG_A, NEG_B[, TRANS_A], [TRANS_B]>(d, a_desc | a_regs,
 *                           b_desc, scale_d)   one wgmma.mma_async (scale_d = 0: D = A*B)
 *   kb_wgmma_commit()       wgmma.commit_group: the wgmmas since the last commit form a group
 *   kb_wgmma_wait<N>()      wgmma.wait_group N: all but the N newest groups have completed;
 *                           only then may their accumulators and A registers be touched
 *
 * The emulator (harness/backend/emu/emu_wgmma.h) meets the 128 threads at each wgmma, decodes
 * the descriptors as above, poisons the accumulators from issue until the wait that retires
 * their group, and reports operand shared memory written (or accumulator / A registers
 * touched) before that wait, a wgmma without a wgmma.fence since the thread's last wait, and
 * a generic write of an operand without fence.proxy.async.
 */
#ifndef KB_WGMMA_H
#define KB_WGMMA_H

enum { KB_WG_SW_NONE = 0, KB_WG_SW_128B = 1, KB_WG_SW_64B = 2, KB_WG_SW_32B = 3 };

#define KB_WG_NEEDS_MSG_ "wgmma needs sm_90a (KB_ARCH=90 with KB_ARCH_SPECIFIC=1): PTX ISA 9.7.15"

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* ===================================== CUDA ===================================== */
__device__ __forceinline__ uint32_t kb_wg_saddr_(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }
#if KB_HAS_WGMMA
#include "kb_wgmma_ptx.h"
#define KB_WG_SS_(name, DT, NA_, NB_, TA_, TB_)                                                  \
    kb_wgmma_##name##_ss_<N>::template run<NA_, NB_, TA_, TB_>(d, da, db, scale_d)
#define KB_WG_RS_(name, DT, NA_, NB_, TB_)                                                       \
    kb_wgmma_##name##_rs_<N>::template run<NA_, NB_, 0, TB_>(d, a, db, scale_d)
#define KB_WG_ASM_(s) asm volatile(s ::: "memory")
#else
#define KB_WG_SS_(name, DT, NA_, NB_, TA_, TB_) (void)0
#define KB_WG_RS_(name, DT, NA_, NB_, TB_) (void)0
#define KB_WG_ASM_(s) (void)0
#endif
__device__ __forceinline__ void kb_wgmma_fence_(void) { KB_WG_ASM_("wgmma.fence.sync.aligned;\n"); }
__device__ __forceinline__ void kb_wgmma_commit_(void) { KB_WG_ASM_("wgmma.commit_group.sync.aligned;\n"); }
template <int N> __device__ __forceinline__ void kb_wgmma_wait_(void)
{
#if KB_HAS_WGMMA
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
#endif
}

#elif defined(KB_EMU)
/* ================================ CPU emulator ================================== */
inline uint32_t kb_wg_saddr_(const void *p)
{
    return (uint32_t)(static_cast<const unsigned char *>(p) - kb_emu_self_->block->dyn_shared);
}
/* A template, so that only a module that issues a wgmma instantiates the flag's note. */
template <int I = 0> inline void kb_emu_wgmma_(int type, int acc, int n, int na, int nb, int ta, int tb, void *d,
                          const uint32_t *a, uint64_t da, uint64_t db, int scale_d)
{
    KB_EMU_SM90_USER_();
    kb_emu_wgmma_op op = { type, acc, n, na, nb, ta, tb, scale_d, da, db, a, d };
    kb_emu_rt_->wgmma(kb_emu_self_, &op);
}
#define KB_WG_SS_(name, DT, NA_, NB_, TA_, TB_) \
    kb_emu_wgmma_(KB_EMU_WG_##DT, kb_wg_acc_##name##_, N, NA_, NB_, TA_, TB_, d, NULL, da, db, scale_d)
#define KB_WG_RS_(name, DT, NA_, NB_, TB_) \
    kb_emu_wgmma_(KB_EMU_WG_##DT, kb_wg_acc_##name##_, N, NA_, NB_, 0, TB_, d, a, 0, db, scale_d)
inline void kb_wgmma_fence_(void) { kb_emu_rt_->wgmma_fence(kb_emu_self_); }
inline void kb_wgmma_commit_(void) { kb_emu_rt_->wgmma_commit(kb_emu_self_); }
template <int N> inline void kb_wgmma_wait_(void) { kb_emu_rt_->wgmma_wait(kb_emu_self_, N); }
enum {
    kb_wg_acc_f32_f16_ = KB_EMU_WG_ACC_F32, kb_wg_acc_f32_bf16_ = KB_EMU_WG_ACC_F32,
    kb_wg_acc_f16_f16_ = KB_EMU_WG_ACC_F16, kb_wg_acc_f32_tf32_ = KB_EMU_WG_ACC_F32,
    kb_wg_acc_f32_e4m3_ = KB_EMU_WG_ACC_F32, kb_wg_acc_f32_e5m2_ = KB_EMU_WG_ACC_F32,
    kb_wg_acc_s32_s8_ = KB_EMU_WG_ACC_S32
};
#endif /* backend */

/* ============================ both backends ============================ */
/* The descriptor (9.7.15.5.1.2); base offset 0: operands sit on their swizzle pattern's
 * repeat (1024 / 512 / 256 bytes for 128B / 64B / 32B). */
__device__ __forceinline__ uint64_t kb_wgmma_desc(const void *smem, int swizzle, uint32_t lbo_bytes, uint32_t sbo_bytes)
{
    return (uint64_t)((kb_wg_saddr_(smem) & 0x3ffffu) >> 4) | (uint64_t)((lbo_bytes >> 4) & 0x3fffu) << 16 |
           (uint64_t)((sbo_bytes >> 4) & 0x3fffu) << 32 | (uint64_t)(swizzle & 3) << 62;
}

template <bool kb_ok_ = (KB_HAS_WGMMA != 0)> __device__ __forceinline__ void kb_wgmma_fence(void)
{
    static_assert(kb_ok_, "wgmma.fence: " KB_WG_NEEDS_MSG_);
    kb_wgmma_fence_();
}
template <bool kb_ok_ = (KB_HAS_WGMMA != 0)> __device__ __forceinline__ void kb_wgmma_commit(void)
{
    static_assert(kb_ok_, "wgmma.commit_group: " KB_WG_NEEDS_MSG_);
    kb_wgmma_commit_();
}
template <int N, bool kb_ok_ = (KB_HAS_WGMMA != 0)> __device__ __forceinline__ void kb_wgmma_wait(void)
{
    static_assert(kb_ok_, "wgmma.wait_group: " KB_WG_NEEDS_MSG_);
    static_assert(N >= 0 && N <= 7, "wgmma.wait_group: N is 0..7");
    kb_wgmma_wait_<N>();
}

/* f16/bf16: negate and transpose immediates for both shared operands. */
#define KB_WG_API_FT_(name, DT, ACC_T, NREG)                                                                   \
    template <int N, int NEG_A = 0, int NEG_B = 0, int TRANS_A = 0, int TRANS_B = 0,                            \
              bool kb_ok_ = (KB_HAS_WGMMA != 0)>                                                               \
    __device__ __forceinline__ void kb_wgmma_##name(ACC_T (&d)[NREG], uint64_t da, uint64_t db, int scale_d)   \
    {                                                                                                          \
        static_assert(kb_ok_, "wgmma.mma_async: " KB_WG_NEEDS_MSG_);                                           \
        static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma: N is a multiple of 8 in [8, 256]");           \
        KB_WG_SS_(name, DT, NEG_A, NEG_B, TRANS_A, TRANS_B);                                                   \
    }                                                                                                          \
    template <int N, int NEG_A = 0, int NEG_B = 0, int TRANS_B = 0, bool kb_ok_ = (KB_HAS_WGMMA != 0)>         \
    __device__ __forceinline__ void kb_wgmma_##name##_rs(ACC_T (&d)[NREG], const uint32_t (&a)[4], uint64_t db, \
                                                         int scale_d)                                          \
    {                                                                                                          \
        static_assert(kb_ok_, "wgmma.mma_async: " KB_WG_NEEDS_MSG_);                                           \
        static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma: N is a multiple of 8 in [8, 256]");           \
        KB_WG_RS_(name, DT, NEG_A, NEG_B, TRANS_B);                                                            \
    }
/* tf32, fp8: negate immediates only, both operands K-major. s8: neither (NEG_* must be 0). */
#define KB_WG_API_F_(name, DT, ACC_T, NOK)                                                                      \
    template <int N, int NEG_A = 0, int NEG_B = 0, bool kb_ok_ = (KB_HAS_WGMMA != 0)>                          \
    __device__ __forceinline__ void kb_wgmma_##name(ACC_T (&d)[N / 2], uint64_t da, uint64_t db, int scale_d)  \
    {                                                                                                          \
        static_assert(kb_ok_, "wgmma.mma_async: " KB_WG_NEEDS_MSG_);                                           \
        static_assert(NOK, "wgmma: N not offered for this type (PTX ISA 9.7.15.5.1, shapes)");                 \
        KB_WG_SS_(name, DT, NEG_A, NEG_B, 0, 0);                                                               \
    }                                                                                                          \
    template <int N, int NEG_A = 0, int NEG_B = 0, bool kb_ok_ = (KB_HAS_WGMMA != 0)>                          \
    __device__ __forceinline__ void kb_wgmma_##name##_rs(ACC_T (&d)[N / 2], const uint32_t (&a)[4], uint64_t db, \
                                                         int scale_d)                                          \
    {                                                                                                          \
        static_assert(kb_ok_, "wgmma.mma_async: " KB_WG_NEEDS_MSG_);                                           \
        static_assert(NOK, "wgmma: N not offered for this type (PTX ISA 9.7.15.5.1, shapes)");                 \
        KB_WG_RS_(name, DT, NEG_A, NEG_B, 0);                                                                  \
    }
#define KB_WG_N_ALL_ (N % 8 == 0 && N >= 8 && N <= 256)
KB_WG_API_FT_(f32_f16, F16, float, N / 2)
KB_WG_API_FT_(f32_bf16, BF16, float, N / 2)
KB_WG_API_FT_(f16_f16, F16, uint32_t, N / 4)
KB_WG_API_F_(f32_tf32, TF32, float, KB_WG_N_ALL_)
KB_WG_API_F_(f32_e4m3, E4M3, float, KB_WG_N_ALL_)
KB_WG_API_F_(f32_e5m2, E5M2, float, KB_WG_N_ALL_)
KB_WG_API_F_(s32_s8, S8, int, (N == 8 || N == 16 || N == 24 || (N % 16 == 0 && N >= 32 && N <= 256)) && \
             NEG_A == 0 && NEG_B == 0)
#undef KB_WG_API_FT_
#undef KB_WG_API_F_
#undef KB_WG_SS_
#undef KB_WG_RS_

#endif /* KB_WGMMA_H */
