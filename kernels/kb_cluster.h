/* kb_cluster.h - thread block clusters (sm_90+), for NVRTC and the emulator. Included by
 * kb_device.h; every function needs KB_HAS_CLUSTER. PTX ISA: 5.2.1 (clusters), 10 (special
 * registers), 9.7.13.2 (barrier.cluster), 9.7.9.21 (mapa), 9.7.13.15.11 (mbarrier.arrive on a
 * shared::cluster address). The launch gives the cluster shape (kb_geom.cluster).
 *
 *   kb_cluster_ctarank()        %cluster_ctarank: this CTA's rank in its cluster (x fastest)
 *   kb_cluster_nctarank()       %cluster_nctarank: CTAs per cluster
 *   kb_cluster_ctaid_x/y/z()    %cluster_ctaid: this CTA's position in its cluster
 *   kb_clusterid_x/y/z()        %clusterid: the cluster's position in the grid
 *   kb_cluster_arrive()         barrier.cluster.arrive (release)
 *   kb_cluster_wait()           barrier.cluster.wait (acquire): every non-exited thread of
 *                               the cluster arrived
 *   kb_cluster_sync()           both
 *   kb_mapa(p, rank)            the generic address of p's shared-memory offset in the CTA of
 *                               that rank (distributed shared memory): loads and stores through
 *                               it reach the peer's shared memory
 *   kb_mbar_arrive_remote(b, r) one arrival on the mbarrier at b's offset in CTA r
 *
 * The emulator co-schedules a cluster's CTAs and checks (harness/backend/emu/emu_cluster.h):
 * an arrive twice or a wait without an arrive, a deadlock at the barrier naming the CTAs that
 * have not arrived, a mapa outside the cluster, a wait on a peer's mbarrier, and a peer's
 * shared memory used after that CTA exited.
 */
#ifndef KB_CLUSTER_H
#define KB_CLUSTER_H

#define KB_CLUSTER_NEEDS_ template <bool kb_ok_ = (KB_HAS_CLUSTER != 0)>
#define KB_CLUSTER_CHECK_(what) \
    static_assert(kb_ok_, what " needs sm_90 or later (KB_ARCH >= 90): PTX ISA 5.2.1")

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* ===================================== CUDA ===================================== */
#define KB_CLUSTER_SREG_(name, reg)                                                  \
    KB_CLUSTER_NEEDS_ __device__ __forceinline__ unsigned name(void)                 \
    {                                                                                \
        KB_CLUSTER_CHECK_(reg);                                                      \
        unsigned v;                                                                  \
        asm volatile("mov.u32 %0, " reg ";\n" : "=r"(v));                            \
        return v;                                                                    \
    }
KB_CLUSTER_SREG_(kb_cluster_ctarank, "%%cluster_ctarank")
KB_CLUSTER_SREG_(kb_cluster_nctarank, "%%cluster_nctarank")
KB_CLUSTER_SREG_(kb_cluster_ctaid_x, "%%cluster_ctaid.x")
KB_CLUSTER_SREG_(kb_cluster_ctaid_y, "%%cluster_ctaid.y")
KB_CLUSTER_SREG_(kb_cluster_ctaid_z, "%%cluster_ctaid.z")
KB_CLUSTER_SREG_(kb_clusterid_x, "%%clusterid.x")
KB_CLUSTER_SREG_(kb_clusterid_y, "%%clusterid.y")
KB_CLUSTER_SREG_(kb_clusterid_z, "%%clusterid.z")
#undef KB_CLUSTER_SREG_

KB_CLUSTER_NEEDS_ __device__ __forceinline__ void kb_cluster_arrive(void)
{
    KB_CLUSTER_CHECK_("barrier.cluster.arrive");
    asm volatile("barrier.cluster.arrive;\n" ::: "memory");
}
KB_CLUSTER_NEEDS_ __device__ __forceinline__ void kb_cluster_wait(void)
{
    KB_CLUSTER_CHECK_("barrier.cluster.wait");
    asm volatile("barrier.cluster.wait;\n" ::: "memory");
}
template <class T, bool kb_ok_ = (KB_HAS_CLUSTER != 0)> __device__ __forceinline__ T *kb_mapa(T *p, unsigned rank)
{
    KB_CLUSTER_CHECK_("mapa");
    uint64_t d;
    asm volatile("mapa.u64 %0, %1, %2;\n" : "=l"(d) : "l"((uint64_t)p), "r"(rank));
    return (T *)d;
}
KB_CLUSTER_NEEDS_ __device__ __forceinline__ void kb_mbar_arrive_remote(uint64_t *b, unsigned rank)
{
    KB_CLUSTER_CHECK_("mbarrier.arrive.shared::cluster");
    uint32_t a;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(a) : "r"((uint32_t)__cvta_generic_to_shared(b)), "r"(rank));
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(a) : "memory");
}

#elif defined(KB_EMU)
/* ================================ CPU emulator ================================== */
#define KB_CLUSTER_SREG_(name, reg, field)                                            \
    KB_CLUSTER_NEEDS_ inline unsigned name(void)                                      \
    {                                                                                 \
        KB_CLUSTER_CHECK_(reg);                                                       \
        return kb_emu_self_->block->field;                                            \
    }
KB_CLUSTER_SREG_(kb_cluster_ctarank, "%cluster_ctarank", cluster_rank)
KB_CLUSTER_SREG_(kb_cluster_nctarank, "%cluster_nctarank", cluster_size)
KB_CLUSTER_SREG_(kb_cluster_ctaid_x, "%cluster_ctaid", cluster_ctaid.x)
KB_CLUSTER_SREG_(kb_cluster_ctaid_y, "%cluster_ctaid", cluster_ctaid.y)
KB_CLUSTER_SREG_(kb_cluster_ctaid_z, "%cluster_ctaid", cluster_ctaid.z)
KB_CLUSTER_SREG_(kb_clusterid_x, "%clusterid", cluster_id.x)
KB_CLUSTER_SREG_(kb_clusterid_y, "%clusterid", cluster_id.y)
KB_CLUSTER_SREG_(kb_clusterid_z, "%clusterid", cluster_id.z)
#undef KB_CLUSTER_SREG_

KB_CLUSTER_NEEDS_ inline void kb_cluster_arrive(void)
{
    KB_CLUSTER_CHECK_("barrier.cluster.arrive");
    kb_emu_rt_->cluster_barrier(kb_emu_self_, 0);
}
KB_CLUSTER_NEEDS_ inline void kb_cluster_wait(void)
{
    KB_CLUSTER_CHECK_("barrier.cluster.wait");
    kb_emu_rt_->cluster_barrier(kb_emu_self_, 1);
}
template <class T, bool kb_ok_ = (KB_HAS_CLUSTER != 0)> inline T *kb_mapa(T *p, unsigned rank)
{
    KB_CLUSTER_CHECK_("mapa");
    return (T *)kb_emu_rt_->mapa(kb_emu_self_, (const void *)p, rank);
}
KB_CLUSTER_NEEDS_ inline void kb_mbar_arrive_remote(uint64_t *b, unsigned rank)
{
    KB_CLUSTER_CHECK_("mbarrier.arrive.shared::cluster");
    kb_emu_rt_->mbar_arrive(kb_emu_self_, kb_emu_rt_->mapa(kb_emu_self_, b, rank), 1, 0);
}
#endif /* backend */

KB_CLUSTER_NEEDS_ inline __device__ void kb_cluster_sync(void)
{
    kb_cluster_arrive<kb_ok_>();
    kb_cluster_wait<kb_ok_>();
}

#endif /* KB_CLUSTER_H */
