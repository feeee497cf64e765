/* kb_mbarrier.h - mbarrier, the asynchronous transaction barrier of sm_90 (PTX ISA 9.7.13.15,
 * "Parallel Synchronization and Communication Instructions: mbarrier"), for NVRTC and the
 * emulator. Included by kb_device.h; every function needs KB_HAS_TMA (sm_90+).
 *
 * An mbarrier is a uint64_t in shared memory, 8-byte aligned (KB_SHARED(uint64_t, b, [S])).
 * Its state (9.7.13.15.1): the current phase, the pending arrival count, the expected
 * arrival count (1 .. 2^20 - 1) and the transaction count (tx-count, -(2^20 - 1) ..
 * 2^20 - 1 bytes). A phase completes when the pending arrivals and the tx-count are both
 * zero; the barrier then moves to the next phase with pending = expected.
 *
 *   kb_mbar_init(b, count)              mbarrier.init: phase 0, pending = expected = count
 *   kb_mbar_inval(b)                    mbarrier.inval: before the memory is reused
 *   st = kb_mbar_arrive(b)              one arrival; returns the phase's state token
 *   st = kb_mbar_arrive_cnt(b, n)       n arrivals at once (.arrive with count, sm_90)
 *   st = kb_mbar_arrive_expect_tx(b, B) expect B more bytes, then arrive
 *   kb_mbar_expect_tx(b, B)             expect B more bytes (no arrival)
 *   kb_mbar_complete_tx(b, B)           B bytes arrived (what a TMA load does itself)
 *   kb_mbar_test_wait(b, st)            1 when the phase of st completed; never blocks
 *   kb_mbar_try_wait(b, st)             the same, but may suspend the thread a while first
 *   kb_mbar_test_wait_parity(b, p), kb_mbar_try_wait_parity(b, p)
 *                                       the phase of parity p: the current phase when p is
 *                                       its parity, else the one before it (completed)
 *   kb_mbar_wait_parity(b, p)           loops on try_wait.parity until it returns 1
 *
 * The emulator checks, each by name (harness/backend/emu/emu_mbar.h): use before init,
 * tx-count out of range, more arrivals than pending, a wait on a stale phase (a state token
 * older than the previous phase; a parity wait for a phase this thread already saw
 * complete), a write over a live barrier's memory, and a deadlock (every live thread
 * waiting), naming the barrier, its phase and the arrivals or bytes still missing.
 */
#ifndef KB_MBARRIER_H
#define KB_MBARRIER_H

#define KB_MBAR_NEEDS_ template <bool kb_ok_ = (KB_HAS_TMA != 0)>
#define KB_MBAR_CHECK_(what) \
    static_assert(kb_ok_, what " needs sm_90 or later (KB_ARCH >= 90): PTX ISA 9.7.13.15")

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* ===================================== CUDA ===================================== */
__device__ __forceinline__ uint32_t kb_smem_u32_(const void *p) { return (uint32_t)__cvta_generic_to_shared(p); }

KB_MBAR_NEEDS_ __device__ __forceinline__ void kb_mbar_init(uint64_t *b, unsigned count)
{
    KB_MBAR_CHECK_("mbarrier.init");
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(kb_smem_u32_(b)), "r"(count) : "memory");
}
KB_MBAR_NEEDS_ __device__ __forceinline__ void kb_mbar_inval(uint64_t *b)
{
    KB_MBAR_CHECK_("mbarrier.inval");
    asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(kb_smem_u32_(b)) : "memory");
}
KB_MBAR_NEEDS_ __device__ __forceinline__ uint64_t kb_mbar_arrive_cnt(uint64_t *b, unsigned count)
{
    KB_MBAR_CHECK_("mbarrier.arrive");
    uint64_t st;
    asm volatile("mbarrier.arrive.shared::cta.b64 %0, [%1], %2;\n" : "=l"(st) : "r"(kb_smem_u32_(b)), "r"(count) : "memory");
    return st;
}
KB_MBAR_NEEDS_ __device__ __forceinline__ uint64_t kb_mbar_arrive(uint64_t *b) { return kb_mbar_arrive_cnt<kb_ok_>(b, 1u); }
KB_MBAR_NEEDS_ __device__ __forceinline__ uint64_t kb_mbar_arrive_expect_tx(uint64_t *b, unsigned bytes)
{
    KB_MBAR_CHECK_("mbarrier.arrive.expect_tx");
    uint64_t st;
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 %0, [%1], %2;\n"
                 : "=l"(st) : "r"(kb_smem_u32_(b)), "r"(bytes) : "memory");
    return st;
}
KB_MBAR_NEEDS_ __device__ __forceinline__ void kb_mbar_expect_tx(uint64_t *b, unsigned bytes)
{
    KB_MBAR_CHECK_("mbarrier.expect_tx");
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(kb_smem_u32_(b)), "r"(bytes) : "memory");
}
KB_MBAR_NEEDS_ __device__ __forceinline__ void kb_mbar_complete_tx(uint64_t *b, unsigned bytes)
{
    KB_MBAR_CHECK_("mbarrier.complete_tx");
    asm volatile("mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(kb_smem_u32_(b)), "r"(bytes) : "memory");
}
#define KB_MBAR_WAIT_(name, op, T, cons)                                                          \
    KB_MBAR_NEEDS_ __device__ __forceinline__ int name(uint64_t *b, T arg)                        \
    {                                                                                             \
        KB_MBAR_CHECK_("mbarrier." op);                                                           \
        uint32_t done;                                                                            \
        asm volatile("{\n.reg .pred p;\nmbarrier." op ".shared::cta.b64 p, [%1], %2;\n"           \
                     "selp.u32 %0, 1, 0, p;\n}\n"                                                  \
                     : "=r"(done) : "r"(kb_smem_u32_(b)), cons(arg) : "memory");                  \
        return (int)done;                                                                         \
    }
KB_MBAR_WAIT_(kb_mbar_test_wait, "test_wait", uint64_t, "l")
KB_MBAR_WAIT_(kb_mbar_try_wait, "try_wait", uint64_t, "l")
KB_MBAR_WAIT_(kb_mbar_test_wait_parity, "test_wait.parity", uint32_t, "r")
KB_MBAR_WAIT_(kb_mbar_try_wait_parity, "try_wait.parity", uint32_t, "r")
#undef KB_MBAR_WAIT_

#elif defined(KB_EMU)
/* ================================ CPU emulator ================================== */
KB_MBAR_NEEDS_ inline void kb_mbar_init(uint64_t *b, unsigned count)
{
    KB_MBAR_CHECK_("mbarrier.init");
    kb_emu_rt_->mbar_init(kb_emu_self_, b, count);
}
KB_MBAR_NEEDS_ inline void kb_mbar_inval(uint64_t *b)
{
    KB_MBAR_CHECK_("mbarrier.inval");
    kb_emu_rt_->mbar_inval(kb_emu_self_, b);
}
KB_MBAR_NEEDS_ inline uint64_t kb_mbar_arrive_cnt(uint64_t *b, unsigned count)
{
    KB_MBAR_CHECK_("mbarrier.arrive");
    return kb_emu_rt_->mbar_arrive(kb_emu_self_, b, count, 0);
}
KB_MBAR_NEEDS_ inline uint64_t kb_mbar_arrive(uint64_t *b) { return kb_mbar_arrive_cnt<kb_ok_>(b, 1u); }
KB_MBAR_NEEDS_ inline uint64_t kb_mbar_arrive_expect_tx(uint64_t *b, unsigned bytes)
{
    KB_MBAR_CHECK_("mbarrier.arrive.expect_tx");
    return kb_emu_rt_->mbar_arrive(kb_emu_self_, b, 1u, bytes);
}
KB_MBAR_NEEDS_ inline void kb_mbar_expect_tx(uint64_t *b, unsigned bytes)
{
    KB_MBAR_CHECK_("mbarrier.expect_tx");
    kb_emu_rt_->mbar_tx(kb_emu_self_, b, 1, bytes);
}
KB_MBAR_NEEDS_ inline void kb_mbar_complete_tx(uint64_t *b, unsigned bytes)
{
    KB_MBAR_CHECK_("mbarrier.complete_tx");
    kb_emu_rt_->mbar_tx(kb_emu_self_, b, -1, bytes);
}
KB_MBAR_NEEDS_ inline int kb_mbar_test_wait(uint64_t *b, uint64_t st)
{
    KB_MBAR_CHECK_("mbarrier.test_wait");
    return kb_emu_rt_->mbar_wait(kb_emu_self_, b, KB_EMU_MBAR_TEST, st);
}
KB_MBAR_NEEDS_ inline int kb_mbar_try_wait(uint64_t *b, uint64_t st)
{
    KB_MBAR_CHECK_("mbarrier.try_wait");
    return kb_emu_rt_->mbar_wait(kb_emu_self_, b, KB_EMU_MBAR_TRY, st);
}
KB_MBAR_NEEDS_ inline int kb_mbar_test_wait_parity(uint64_t *b, uint32_t parity)
{
    KB_MBAR_CHECK_("mbarrier.test_wait.parity");
    return kb_emu_rt_->mbar_wait(kb_emu_self_, b, KB_EMU_MBAR_TEST | KB_EMU_MBAR_PARITY, parity);
}
KB_MBAR_NEEDS_ inline int kb_mbar_try_wait_parity(uint64_t *b, uint32_t parity)
{
    KB_MBAR_CHECK_("mbarrier.try_wait.parity");
    return kb_emu_rt_->mbar_wait(kb_emu_self_, b, KB_EMU_MBAR_TRY | KB_EMU_MBAR_PARITY, parity);
}
#endif /* backend */

KB_MBAR_NEEDS_ __device__ __forceinline__ void kb_mbar_wait_parity(uint64_t *b, uint32_t parity)
{
    while (!kb_mbar_try_wait_parity<kb_ok_>(b, parity)) {
    }
}

#endif /* KB_MBARRIER_H */
