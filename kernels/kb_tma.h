/* kb_tma.h - the Tensor Memory Accelerator: cp.async.bulk.tensor tile-mode loads and stores
 * (PTX ISA 9.7.9.25.5.1) and bulk async-groups (9.7.9.25.6, cp.async.bulk.commit_group /
 * wait_group), for NVRTC and the emulator. Included by kb_device.h; needs KB_HAS_TMA (sm_90+).
 *
 * A tensor map is made on the host (harness/backend/tmap.h: kb_tmap_desc, validated once,
 * encoded by the backend: cuTensorMapEncodeTiled on a GPU, the emulator's own format on emu)
 * and passed to the kernel by value as a kb_arg_tmap argument:
 *     extern "C" __global__ void k(const __grid_constant__ kb_tmap tm_a, ...)
 * Coordinates are in elements, innermost dimension first (c0 is the contiguous one), and may
 * lie outside the tensor: elements out of bounds load as zeros and are not stored.
 *
 *   kb_tma_load(smem, &tm, bar, c0[, c1 .. c4])   global -> shared, box of the map's rank;
 *        the bytes complete on mbarrier bar (complete_tx); smem 128-byte aligned, 1024 for
 *        the 128B swizzle. Wait for the barrier's phase before reading smem.
 *   kb_tma_store(&tm, smem, c0[, c1 .. c4])       shared -> global, in this thread's open
 *        bulk async-group. Make the shared writes visible first: kb_fence_proxy_async().
 *   kb_bulk_commit()                              close the thread's open bulk group
 *   kb_bulk_wait<N>()                             all but the N newest groups complete
 *   kb_bulk_wait_read<N>()                        ... have finished reading shared memory
 *
 * The emulator (harness/backend/emu/emu_tma.h) lays boxes out with the map's swizzle exactly as
 * the hardware does, fills out-of-bounds elements with zeros, keeps a load's destination
 * poisoned until it lands (at a scheduling point of the schedule's choosing), and reports a
 * store whose shared source changed before the read was waited for.
 */
#ifndef KB_TMA_H
#define KB_TMA_H

#define KB_TMA_NEEDS_ template <bool kb_ok_ = (KB_HAS_TMA != 0)>
#define KB_TMA_CHECK_(what) \
    static_assert(kb_ok_, what " needs sm_90 or later (KB_ARCH >= 90): PTX ISA 9.7.9.25")

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* ===================================== CUDA ===================================== */
/* CUtensorMap's size and alignment (cuda.h): 128 bytes, 64-byte aligned. */
struct __align__(64) kb_tmap { uint64_t opaque[16]; };

#define KB_TMA_LOAD_(rank, coords, ...)                                                                 \
    KB_TMA_NEEDS_ __device__ __forceinline__ void kb_tma_load(void *smem, const kb_tmap *tm, uint64_t *bar, \
                                                              __VA_ARGS__)                             \
    {                                                                                                  \
        KB_TMA_CHECK_("cp.async.bulk.tensor");                                                         \
        asm volatile("cp.async.bulk.tensor." #rank "d.shared::cluster.global.tile.mbarrier::complete_tx::bytes" \
                     " [%0], [%1, {" coords "}], [%2];\n" ::"r"(kb_smem_u32_(smem)), "l"(tm),           \
                     "r"(kb_smem_u32_(bar)), KB_TMA_OPS_##rank : "memory");                           \
    }
#define KB_TMA_STORE_(rank, coords, ...)                                                                \
    KB_TMA_NEEDS_ __device__ __forceinline__ void kb_tma_store(const kb_tmap *tm, const void *smem, __VA_ARGS__) \
    {                                                                                                  \
        KB_TMA_CHECK_("cp.async.bulk.tensor");                                                         \
        asm volatile("cp.async.bulk.tensor." #rank "d.global.shared::cta.tile.bulk_group"              \
                     " [%0, {" coords "}], [%1];\n" ::"l"(tm), "r"(kb_smem_u32_(smem)),                \
                     KB_TMA_OPS_##rank : "memory");                                                   \
    }
#define KB_TMA_OPS_1 "r"(c0)
#define KB_TMA_OPS_2 "r"(c0), "r"(c1)
#define KB_TMA_OPS_3 "r"(c0), "r"(c1), "r"(c2)
#define KB_TMA_OPS_4 "r"(c0), "r"(c1), "r"(c2), "r"(c3)
#define KB_TMA_OPS_5 "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(c4)
KB_TMA_LOAD_(1, "%3", int c0)
KB_TMA_LOAD_(2, "%3, %4", int c0, int c1)
KB_TMA_LOAD_(3, "%3, %4, %5", int c0, int c1, int c2)
KB_TMA_LOAD_(4, "%3, %4, %5, %6", int c0, int c1, int c2, int c3)
KB_TMA_LOAD_(5, "%3, %4, %5, %6, %7", int c0, int c1, int c2, int c3, int c4)
KB_TMA_STORE_(1, "%2", int c0)
KB_TMA_STORE_(2, "%2, %3", int c0, int c1)
KB_TMA_STORE_(3, "%2, %3, %4", int c0, int c1, int c2)
KB_TMA_STORE_(4, "%2, %3, %4, %5", int c0, int c1, int c2, int c3)
KB_TMA_STORE_(5, "%2, %3, %4, %5, %6", int c0, int c1, int c2, int c3, int c4)
#undef KB_TMA_LOAD_
#undef KB_TMA_STORE_

KB_TMA_NEEDS_ __device__ __forceinline__ void kb_bulk_commit(void)
{
    KB_TMA_CHECK_("cp.async.bulk.commit_group");
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
template <int N, bool kb_ok_ = (KB_HAS_TMA != 0)> __device__ __forceinline__ void kb_bulk_wait(void)
{
    KB_TMA_CHECK_("cp.async.bulk.wait_group");
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
template <int N, bool kb_ok_ = (KB_HAS_TMA != 0)> __device__ __forceinline__ void kb_bulk_wait_read(void)
{
    KB_TMA_CHECK_("cp.async.bulk.wait_group.read");
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

#elif defined(KB_EMU)
/* ================================ CPU emulator ================================== */
/* The kernel parameter: the runtime keeps the launch's 128 bytes of each map (read-only, as
 * a __grid_constant__ parameter is) and passes their address, so the direct call and libffi
 * pass one pointer-sized argument. */
#define __grid_constant__
struct kb_tmap { const unsigned char *map; };

#define KB_TMA_LOAD_(rank, ...)                                                                  \
    KB_TMA_NEEDS_ inline void kb_tma_load(void *smem, const kb_tmap *tm, uint64_t *bar, __VA_ARGS__) \
    {                                                                                            \
        KB_TMA_CHECK_("cp.async.bulk.tensor");                                                   \
        const int c[5] = { KB_TMA_C_##rank };                                                    \
        kb_emu_rt_->tma_load(kb_emu_self_, smem, tm->map, c, bar);                               \
    }
#define KB_TMA_STORE_(rank, ...)                                                                 \
    KB_TMA_NEEDS_ inline void kb_tma_store(const kb_tmap *tm, const void *smem, __VA_ARGS__)     \
    {                                                                                            \
        KB_TMA_CHECK_("cp.async.bulk.tensor");                                                   \
        KB_EMU_SM90_USER_();                                                                     \
        const int c[5] = { KB_TMA_C_##rank };                                                    \
        kb_emu_rt_->tma_store(kb_emu_self_, tm->map, smem, c);                                   \
    }
#define KB_TMA_C_1 c0, 0, 0, 0, 0
#define KB_TMA_C_2 c0, c1, 0, 0, 0
#define KB_TMA_C_3 c0, c1, c2, 0, 0
#define KB_TMA_C_4 c0, c1, c2, c3, 0
#define KB_TMA_C_5 c0, c1, c2, c3, c4
KB_TMA_LOAD_(1, int c0)
KB_TMA_LOAD_(2, int c0, int c1)
KB_TMA_LOAD_(3, int c0, int c1, int c2)
KB_TMA_LOAD_(4, int c0, int c1, int c2, int c3)
KB_TMA_LOAD_(5, int c0, int c1, int c2, int c3, int c4)
KB_TMA_STORE_(1, int c0)
KB_TMA_STORE_(2, int c0, int c1)
KB_TMA_STORE_(3, int c0, int c1, int c2)
KB_TMA_STORE_(4, int c0, int c1, int c2, int c3)
KB_TMA_STORE_(5, int c0, int c1, int c2, int c3, int c4)
#undef KB_TMA_LOAD_
#undef KB_TMA_STORE_

KB_TMA_NEEDS_ inline void kb_bulk_commit(void)
{
    KB_TMA_CHECK_("cp.async.bulk.commit_group");
    kb_emu_rt_->bulk_commit(kb_emu_self_);
}
template <int N, bool kb_ok_ = (KB_HAS_TMA != 0)> inline void kb_bulk_wait(void)
{
    KB_TMA_CHECK_("cp.async.bulk.wait_group");
    kb_emu_rt_->bulk_wait(kb_emu_self_, N, 0);
}
template <int N, bool kb_ok_ = (KB_HAS_TMA != 0)> inline void kb_bulk_wait_read(void)
{
    KB_TMA_CHECK_("cp.async.bulk.wait_group.read");
    kb_emu_rt_->bulk_wait(kb_emu_self_, N, 1);
}
#endif /* backend */

#endif /* KB_TMA_H */
