/* kb_sync90.h - the sm_90 synchronisation a warp-specialised kernel needs besides mbarrier,
 * for NVRTC and the emulator. Included by kb_device.h.
 *
 *   kb_fence_proxy_async()      fence.proxy.async.shared::cta (PTX ISA 9.7.13.4, membar/fence):
 *                               this thread's earlier generic-proxy writes of shared memory
 *                               become visible to the async proxy. Needed between writing
 *                               shared memory with ordinary stores and a TMA store or a wgmma
 *                               that reads those bytes. sm_90+.
 *   kb_bar_sync(id, n)          bar.sync id, n (9.7.13.1, bar/barrier): named barrier id (0..15)
 *   kb_bar_arrive(id, n)        for n threads (a multiple of 32); arrive does not wait (a
 *                               producer signalling consumers). Barrier 0 is __syncthreads'.
 *   kb_elect_one()              elect.sync (9.7.13.9) over the full warp: 1 on one lane (the
 *                               lowest active lane), 0 on the others. sm_90+.
 *   kb_setmaxnreg_inc<R>(), kb_setmaxnreg_dec<R>()
 *                               setmaxnreg (9.7.19.5): the warpgroup's registers per thread
 *                               become R (a multiple of 8 in 24..256), taken from or given
 *                               back to the block's pool. Every thread of the warpgroup runs
 *                               it with the same R. sm_90a.
 *
 * The emulator checks each (emu_sync90.h, emu_proxy.h): a generic write read by TMA or
 * wgmma without the fence (under --emu-check, which sees the writes), barrier ids and
 * counts, counts disagreeing within one barrier, setmaxnreg's range, uniformity, direction
 * and the register file (65536 registers per block: the SM's file, one block per SM).
 */
#ifndef KB_SYNC90_H
#define KB_SYNC90_H

#define KB_SYNC_NEEDS_(cond) template <bool kb_ok_ = ((cond) != 0)>

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* ===================================== CUDA ===================================== */
KB_SYNC_NEEDS_(KB_HAS_TMA) __device__ __forceinline__ void kb_fence_proxy_async(void)
{
    static_assert(kb_ok_, "fence.proxy.async needs sm_90 or later (KB_ARCH >= 90): PTX ISA 9.7.13.4");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void kb_bar_sync(unsigned id, unsigned n)
{
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void kb_bar_arrive(unsigned id, unsigned n)
{
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
KB_SYNC_NEEDS_(KB_HAS_TMA) __device__ __forceinline__ int kb_elect_one(void)
{
    static_assert(kb_ok_, "elect.sync needs sm_90 or later (KB_ARCH >= 90): PTX ISA 9.7.13.9");
    uint32_t pred;
    asm volatile("{\n.reg .b32 r;\n.reg .pred p;\nelect.sync r|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(pred));
    return (int)pred;
}
template <int R, bool kb_ok_ = (KB_HAS_SETMAXNREG != 0)> __device__ __forceinline__ void kb_setmaxnreg_inc(void)
{
    static_assert(kb_ok_, "setmaxnreg needs sm_90a (KB_ARCH=90 with KB_ARCH_SPECIFIC=1): PTX ISA 9.7.19.5");
    static_assert(R % 8 == 0 && R >= 24 && R <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R));
}
template <int R, bool kb_ok_ = (KB_HAS_SETMAXNREG != 0)> __device__ __forceinline__ void kb_setmaxnreg_dec(void)
{
    static_assert(kb_ok_, "setmaxnreg needs sm_90a (KB_ARCH=90 with KB_ARCH_SPECIFIC=1): PTX ISA 9.7.19.5");
    static_assert(R % 8 == 0 && R >= 24 && R <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R));
}

#elif defined(KB_EMU)
/* ================================ CPU emulator ================================== */
KB_SYNC_NEEDS_(KB_HAS_TMA) inline void kb_fence_proxy_async(void)
{
    static_assert(kb_ok_, "fence.proxy.async needs sm_90 or later (KB_ARCH >= 90): PTX ISA 9.7.13.4");
    kb_emu_rt_->fence_proxy_async(kb_emu_self_);
}
inline void kb_bar_sync(unsigned id, unsigned n) { kb_emu_rt_->named_barrier(kb_emu_self_, id, n, 0); }
inline void kb_bar_arrive(unsigned id, unsigned n) { kb_emu_rt_->named_barrier(kb_emu_self_, id, n, 1); }
KB_SYNC_NEEDS_(KB_HAS_TMA) inline int kb_elect_one(void)
{
    static_assert(kb_ok_, "elect.sync needs sm_90 or later (KB_ARCH >= 90): PTX ISA 9.7.13.9");
    unsigned members;
    kb_emu_rt_->warp_exchange(kb_emu_self_, 0xffffffffu, NULL, 0, &members);
    return (int)kb_emu_self_->lane == __builtin_ctz(members);
}
/* The range check is the same static_assert as NVRTC's; the runtime checks the rest. Its
 * range check stays for a value that reaches it some other way. */
template <int R, bool kb_ok_ = (KB_HAS_SETMAXNREG != 0)> inline void kb_setmaxnreg_inc(void)
{
    static_assert(kb_ok_, "setmaxnreg needs sm_90a (KB_ARCH=90 with KB_ARCH_SPECIFIC=1): PTX ISA 9.7.19.5");
    static_assert(R % 8 == 0 && R >= 24 && R <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
    kb_emu_rt_->setmaxnreg(kb_emu_self_, 1, (unsigned)R);
}
template <int R, bool kb_ok_ = (KB_HAS_SETMAXNREG != 0)> inline void kb_setmaxnreg_dec(void)
{
    static_assert(kb_ok_, "setmaxnreg needs sm_90a (KB_ARCH=90 with KB_ARCH_SPECIFIC=1): PTX ISA 9.7.19.5");
    static_assert(R % 8 == 0 && R >= 24 && R <= 256, "setmaxnreg: a multiple of 8 in [24, 256]");
    kb_emu_rt_->setmaxnreg(kb_emu_self_, 0, (unsigned)R);
}
#endif /* backend */

#endif /* KB_SYNC90_H */
