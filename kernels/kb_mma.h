/* kb_mma.h - tensor-core and asynchronous-copy primitives, for NVRTC and the emulator.
 * Included once, at the end of kb_device.h; kernels never include it themselves.
 *
 * What a kernel may use, spelled the same on both backends:
 *   mma.sync (one warp, every lane; D = A * B + C on one tile, A row-major, B column-major)
 *     kb_mma_m16n8k16_f32_f16 (float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
 *     kb_mma_m16n8k16_f32_bf16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
 *     kb_mma_m16n8k8_f32_tf32 (float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
 *     kb_mma_m16n8k32_s32_s8  (int d[4],   const uint32_t a[4], const uint32_t b[2], const int c[4])
 *     kb_mma_m16n8k32_f32_e4m3(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])  sm_89+
 *     kb_mma_m16n8k32_f32_e5m2(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])  sm_89+
 *   The registers hold the PTX ISA fragments ("Warp-level matrix fragments", 9.7.14.5),
 *   with g = lane >> 2 and t = lane & 3 (elements low bits first in a register):
 *     m16n8k16 f16/bf16  a[r]: rows g (r = 0, 2) / g+8 (r = 1, 3), cols 2t, 2t+1 (+8 for r >= 2)
 *                        b[r]: rows (k) 2t, 2t+1 (+8 for r = 1), col g
 *     m16n8k8 tf32       a[r]: row g (r = 0, 2) / g+8 (r = 1, 3), col t (+4 for r >= 2)
 *                        b[r]: row (k) t (+4 for r = 1), col g
 *     m16n8k32 s8/fp8    a[r]: rows g (r = 0, 2) / g+8 (r = 1, 3), cols 4t..4t+3 (+16 for r >= 2)
 *                        b[r]: rows (k) 4t..4t+3 (+16 for r = 1), col g
 *     accumulators       c[0], c[1]: row g, cols 2t, 2t+1;  c[2], c[3]: row g+8, same cols
 *   kb_cvt_f16x2_e4m3x2(x), kb_cvt_f16x2_e5m2x2(x) (sm_89+): the two fp8 values in the low
 *   16 bits of x widened (exactly) to an f16x2 word, low byte to low half.
 *   tf32 operands are fp32 bit patterns whose low 13 mantissa bits the tensor core ignores:
 *   round them first with kb_cvt_tf32 (cvt.rna) when they are not already tf32 values.
 *   s8 accumulation wraps modulo 2^32 as the hardware's (no .satfinite).
 *
 *   ldmatrix (one warp, every lane): kb_ldmatrix_x{1,2,4}[_trans](uint32_t r[N], const void *row)
 *     loads N 8x8 matrices of 16-bit elements from shared memory. Lane 8j+i passes the
 *     address of row i of matrix j (16 bytes, 16-byte aligned). r[j] receives row g,
 *     elements 2t, 2t+1 of matrix j; with _trans, elements (2t, g) and (2t+1, g), i.e.
 *     the matrix transposed. Rows of other element sizes load as 16 bytes each: a 32-bit
 *     lane word is then element t of row g, an 8-bit quad elements 4t..4t+3.
 *
 *   cp.async (sm_80+): kb_cp_async_16(smem, gmem) copies 16 bytes, both 16-byte aligned;
 *     kb_cp_async_16_zfill(smem, gmem, src_bytes) copies src_bytes (0..16) and zero-fills
 *     the rest (gmem is not read when src_bytes is 0 but must still be a valid address);
 *     kb_cp_async_commit() closes a group; kb_cp_async_wait<N>() waits until at most N
 *     groups are pending. The copies become visible to other threads after the wait and a
 *     __syncthreads(). The emulator models them: a copy is pending (its destination
 *     poisoned) until a wait retires its group, and an ldmatrix of a pending destination
 *     fails the case (harness/backend/emu/emu_async.h).
 */
#ifndef KB_MMA_H
#define KB_MMA_H

#if defined(__CUDACC_RTC__) || defined(__CUDACC__)
/* ===================================== CUDA ===================================== */

__device__ __forceinline__ uint32_t kb_smem_addr_(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

#define KB_MMA_F32_(name, shape_types)                                                                   \
    __device__ __forceinline__ void name(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4]) \
    {                                                                                                    \
        asm volatile("mma.sync.aligned." shape_types " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "          \
                     "{%10,%11,%12,%13};\n"                                                              \
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                    \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]),      \
                       "f"(c[1]), "f"(c[2]), "f"(c[3]));                                                 \
    }

KB_MMA_F32_(kb_mma_m16n8k16_f32_f16, "m16n8k16.row.col.f32.f16.f16.f32")
KB_MMA_F32_(kb_mma_m16n8k16_f32_bf16, "m16n8k16.row.col.f32.bf16.bf16.f32")
KB_MMA_F32_(kb_mma_m16n8k8_f32_tf32, "m16n8k8.row.col.f32.tf32.tf32.f32")
/* fp8 mma.sync exists from sm_89 on; below it the family's valid() refuses fp8, so the
 * wrappers are not even declared and a stray use fails to compile. */
#if KB_ARCH >= 89
KB_MMA_F32_(kb_mma_m16n8k32_f32_e4m3, "m16n8k32.row.col.f32.e4m3.e4m3.f32")
KB_MMA_F32_(kb_mma_m16n8k32_f32_e5m2, "m16n8k32.row.col.f32.e5m2.e5m2.f32")
#endif
#undef KB_MMA_F32_

#if KB_ARCH >= 89
__device__ __forceinline__ uint32_t kb_cvt_f16x2_e4m3x2(uint32_t x)
{
    uint32_t r;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(r) : "h"((unsigned short)x));
    return r;
}
__device__ __forceinline__ uint32_t kb_cvt_f16x2_e5m2x2(uint32_t x)
{
    uint32_t r;
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;\n" : "=r"(r) : "h"((unsigned short)x));
    return r;
}
#endif

__device__ __forceinline__ void kb_mma_m16n8k32_s32_s8(int d[4], const uint32_t a[4], const uint32_t b[2], const int c[4])
{
    asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%10,%11,%12,%13};\n"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]),
                   "r"(c[2]), "r"(c[3]));
}

/* cvt.rna.tf32.f32: round to nearest, ties away from zero, to a tf32 value in fp32 bits. */
__device__ __forceinline__ uint32_t kb_cvt_tf32(uint32_t x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(__uint_as_float(x)));
    return r;
}

__device__ __forceinline__ void kb_ldmatrix_x1(uint32_t r[1], const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(kb_smem_addr_(row)));
}
__device__ __forceinline__ void kb_ldmatrix_x2(uint32_t r[2], const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(kb_smem_addr_(row)));
}
__device__ __forceinline__ void kb_ldmatrix_x4(uint32_t r[4], const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(kb_smem_addr_(row)));
}
__device__ __forceinline__ void kb_ldmatrix_x1_trans(uint32_t r[1], const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n" : "=r"(r[0]) : "r"(kb_smem_addr_(row)));
}
__device__ __forceinline__ void kb_ldmatrix_x2_trans(uint32_t r[2], const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(kb_smem_addr_(row)));
}
__device__ __forceinline__ void kb_ldmatrix_x4_trans(uint32_t r[4], const void *row)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(kb_smem_addr_(row)));
}

/* .cg: cache in L2 only; a tile is read once per block, L1 would only be polluted. */
__device__ __forceinline__ void kb_cp_async_16(void *smem, const void *gmem)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(kb_smem_addr_(smem)), "l"(gmem) : "memory");
}
__device__ __forceinline__ void kb_cp_async_16_zfill(void *smem, const void *gmem, int src_bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(kb_smem_addr_(smem)), "l"(gmem),
                 "r"(src_bytes) : "memory");
}
__device__ __forceinline__ void kb_cp_async_commit(void) { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N> __device__ __forceinline__ void kb_cp_async_wait(void)
{
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

#elif defined(KB_EMU)
/* ================================ CPU emulator ================================== */
/* mma.sync: every lane publishes its A and B registers through one warp exchange, then
 * computes its own four accumulators, reading each element of A and B from the lane and
 * register the PTX layout puts it in (the *_at_ functions below invert the table above).
 * Products and sums are formed in double and rounded once to fp32: the tensor core's
 * internal order is unspecified, an exact sum is the most neutral model of it. */

struct kb_emu_mma_frag_ {
    uint32_t a[4];
    uint32_t b[2];
};

inline const kb_emu_mma_frag_ *kb_emu_mma_xchg_(const uint32_t a[4], const uint32_t b[2])
{
    kb_emu_mma_frag_ f;
    unsigned members;
    memcpy(f.a, a, sizeof f.a);
    memcpy(f.b, b, sizeof f.b);
    return reinterpret_cast<const kb_emu_mma_frag_ *>(kb_emu_xchg_(0xffffffffu, f, &members));
}

/* Element e (of esize bytes) of register r of lane l, as raw bits. */
inline uint32_t kb_emu_frag_bits_(uint32_t reg, int e, int esize)
{
    return esize == 4 ? reg : (reg >> (8 * esize * e)) & ((1u << (8 * esize)) - 1u);
}

/* m16n8k16, 16-bit elements: A(row, k) and B(k, col). */
inline uint32_t kb_emu_a_at_k16_(const kb_emu_mma_frag_ *f, int row, int k)
{
    int lane = (row % 8) * 4 + (k % 8) / 2, reg = row / 8 + 2 * (k / 8);
    return kb_emu_frag_bits_(f[lane].a[reg], k % 2, 2);
}
inline uint32_t kb_emu_b_at_k16_(const kb_emu_mma_frag_ *f, int k, int col)
{
    return kb_emu_frag_bits_(f[col * 4 + (k % 8) / 2].b[k / 8], k % 2, 2);
}
/* m16n8k8, tf32. */
inline uint32_t kb_emu_a_at_k8_(const kb_emu_mma_frag_ *f, int row, int k)
{
    return f[(row % 8) * 4 + k % 4].a[row / 8 + 2 * (k / 4)];
}
inline uint32_t kb_emu_b_at_k8_(const kb_emu_mma_frag_ *f, int k, int col) { return f[col * 4 + k % 4].b[k / 4]; }
/* m16n8k32, 8-bit elements. */
inline uint32_t kb_emu_a_at_k32_(const kb_emu_mma_frag_ *f, int row, int k)
{
    int lane = (row % 8) * 4 + (k % 16) / 4, reg = row / 8 + 2 * (k / 16);
    return kb_emu_frag_bits_(f[lane].a[reg], k % 4, 1);
}
inline uint32_t kb_emu_b_at_k32_(const kb_emu_mma_frag_ *f, int k, int col)
{
    return kb_emu_frag_bits_(f[col * 4 + (k % 16) / 4].b[k / 16], k % 4, 1);
}

/* Operand decoders (the emulator runs millions of them: bit operations and tables, not
 * the generic kb_fmt_decode). The tensor core reads only sign, exponent and the top 10
 * mantissa bits of a tf32 operand. */
inline float kb_emu_tf32_bits_(uint32_t x) { return __uint_as_float(x & 0xffffe000u); }
inline float kb_emu_bf16_bits_(uint32_t x) { return __uint_as_float(x << 16); }
inline float kb_emu_f16_bits_(uint32_t h)
{
    uint32_t s = (h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
    if (e == 0) {   /* zero or subnormal: m * 2^-24, exact in fp32 */
        float v = (float)m * 5.9604644775390625e-8f;
        return s ? -v : v;
    }
    return __uint_as_float(s | (e == 31 ? 0x7f800000u : (e + 112u) << 23) | m << 13);
}
struct kb_emu_tab8_ {
    float v[256];
    explicit kb_emu_tab8_(float (*dec)(uint8_t)) { for (int i = 0; i < 256; i++) v[i] = dec((uint8_t)i); }
};
inline float kb_emu_e4m3_bits_(uint32_t x)
{
    static const kb_emu_tab8_ tab(kb_e4m3_bits_to_f32);
    return tab.v[x & 255u];
}
inline float kb_emu_e5m2_bits_(uint32_t x)
{
    static const kb_emu_tab8_ tab(kb_e5m2_bits_to_f32);
    return tab.v[x & 255u];
}

/* This lane's four accumulators: (g, 2t), (g, 2t+1), (g+8, 2t), (g+8, 2t+1), from the
 * two rows of A and two columns of B it needs, decoded once. */
template <int K, class AT, class BT, class DEC>
inline void kb_emu_mma_f32_(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4], AT a_at,
                            BT b_at, DEC dec)
{
    const kb_emu_mma_frag_ *f = kb_emu_mma_xchg_(a, b);
    int g = (int)kb_emu_self_->lane >> 2, t = (int)kb_emu_self_->lane & 3;
    double av[2][K], bv[2][K], out[4];
    for (int k = 0; k < K; k++)
        for (int h = 0; h < 2; h++) {
            av[h][k] = dec(a_at(f, g + 8 * h, k));
            bv[h][k] = dec(b_at(f, k, 2 * t + h));
        }
    for (int i = 0; i < 4; i++) {
        double s = c[i];
        for (int k = 0; k < K; k++)
            s += av[i / 2][k] * bv[i % 2][k];
        out[i] = s;
    }
    for (int i = 0; i < 4; i++)
        d[i] = (float)out[i];   /* after every read of c: d may alias it */
}

inline void kb_mma_m16n8k16_f32_f16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
{
    kb_emu_mma_f32_<16>(d, a, b, c, kb_emu_a_at_k16_, kb_emu_b_at_k16_, kb_emu_f16_bits_);
}
inline void kb_mma_m16n8k16_f32_bf16(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
{
    kb_emu_mma_f32_<16>(d, a, b, c, kb_emu_a_at_k16_, kb_emu_b_at_k16_, kb_emu_bf16_bits_);
}
inline void kb_mma_m16n8k8_f32_tf32(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
{
    kb_emu_mma_f32_<8>(d, a, b, c, kb_emu_a_at_k8_, kb_emu_b_at_k8_, kb_emu_tf32_bits_);
}
#if KB_ARCH >= 89
inline void kb_mma_m16n8k32_f32_e4m3(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
{
    kb_emu_mma_f32_<32>(d, a, b, c, kb_emu_a_at_k32_, kb_emu_b_at_k32_, kb_emu_e4m3_bits_);
}
inline void kb_mma_m16n8k32_f32_e5m2(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4])
{
    kb_emu_mma_f32_<32>(d, a, b, c, kb_emu_a_at_k32_, kb_emu_b_at_k32_, kb_emu_e5m2_bits_);
}
#endif

inline void kb_mma_m16n8k32_s32_s8(int d[4], const uint32_t a[4], const uint32_t b[2], const int c[4])
{
    const kb_emu_mma_frag_ *f = kb_emu_mma_xchg_(a, b);
    int g = (int)kb_emu_self_->lane >> 2, t = (int)kb_emu_self_->lane & 3;
    int out[4];
    for (int i = 0; i < 4; i++) {
        int row = g + 8 * (i / 2), col = 2 * t + i % 2;
        uint32_t s = (uint32_t)c[i];   /* unsigned: wraps as the hardware does, no UB */
        for (int k = 0; k < 32; k++)
            s += (uint32_t)((int)(int8_t)kb_emu_a_at_k32_(f, row, k) * (int)(int8_t)kb_emu_b_at_k32_(f, k, col));
        out[i] = (int)s;
    }
    memcpy(d, out, sizeof out);
}

#if KB_ARCH >= 89
/* Every e4m3 and e5m2 value is an fp16 value: the widening is exact. */
inline uint32_t kb_cvt_f16x2_e4m3x2(uint32_t x)
{
    return (uint32_t)kb_f32_to_f16_bits(kb_e4m3_bits_to_f32((uint8_t)x)) |
           (uint32_t)kb_f32_to_f16_bits(kb_e4m3_bits_to_f32((uint8_t)(x >> 8))) << 16;
}
inline uint32_t kb_cvt_f16x2_e5m2x2(uint32_t x)
{
    return (uint32_t)kb_f32_to_f16_bits(kb_e5m2_bits_to_f32((uint8_t)x)) |
           (uint32_t)kb_f32_to_f16_bits(kb_e5m2_bits_to_f32((uint8_t)(x >> 8))) << 16;
}
#endif

/* cvt.rna.tf32.f32, bit-exact (kb_convert.h). */
inline uint32_t kb_cvt_tf32(uint32_t x) { return __float_as_uint(kb_f32_round_tf32(__uint_as_float(x))); }

/* ldmatrix: lanes publish their row addresses; each lane then reads its words directly
 * (shared memory is host memory here). Only the lanes whose address is used are checked. */
template <int N, bool TRANS> inline void kb_emu_ldmatrix_(uint32_t *r, const void *row)
{
    unsigned members, lane = kb_emu_self_->lane;
    if (lane < 8u * N && (uintptr_t)row % 16u)
        kb_emu_fault_(KB_EMU_FAULT_MEMORY, "ldmatrix: row address not 16-byte aligned");
    const unsigned char *area = kb_emu_xchg_(0xffffffffu, row, &members);
    unsigned g = lane >> 2, t = lane & 3u;
    if (lane < 8u * N)   /* each row once: no pending cp.async may cover it */
        kb_emu_rt_->shared_read(kb_emu_self_, kb_emu_lane_<const void *>(area, lane), 16);
    for (int j = 0; j < N; j++) {
        const unsigned char *p;
        if (!TRANS) {
            p = static_cast<const unsigned char *>(kb_emu_lane_<const void *>(area, 8u * j + g));
            memcpy(&r[j], p + 4 * t, 4);
        } else {
            uint16_t lo, hi;
            p = static_cast<const unsigned char *>(kb_emu_lane_<const void *>(area, 8u * j + 2 * t));
            memcpy(&lo, p + 2 * g, 2);
            p = static_cast<const unsigned char *>(kb_emu_lane_<const void *>(area, 8u * j + 2 * t + 1));
            memcpy(&hi, p + 2 * g, 2);
            r[j] = (uint32_t)lo | (uint32_t)hi << 16;
        }
    }
}
inline void kb_ldmatrix_x1(uint32_t r[1], const void *row) { kb_emu_ldmatrix_<1, false>(r, row); }
inline void kb_ldmatrix_x2(uint32_t r[2], const void *row) { kb_emu_ldmatrix_<2, false>(r, row); }
inline void kb_ldmatrix_x4(uint32_t r[4], const void *row) { kb_emu_ldmatrix_<4, false>(r, row); }
inline void kb_ldmatrix_x1_trans(uint32_t r[1], const void *row) { kb_emu_ldmatrix_<1, true>(r, row); }
inline void kb_ldmatrix_x2_trans(uint32_t r[2], const void *row) { kb_emu_ldmatrix_<2, true>(r, row); }
inline void kb_ldmatrix_x4_trans(uint32_t r[4], const void *row) { kb_emu_ldmatrix_<4, true>(r, row); }

/* cp.async: the GPU's alignment rules, then a pending copy the runtime lands at the
 * thread's wait_group (see kb_emu_rt.cp_async). */
inline void kb_cp_async_16_zfill(void *smem, const void *gmem, int src_bytes)
{
    if ((uintptr_t)smem % 16u || (uintptr_t)gmem % 16u)
        kb_emu_fault_(KB_EMU_FAULT_MEMORY, "cp.async: 16-byte copy with a misaligned address");
    if (src_bytes < 0 || src_bytes > 16)
        kb_emu_fault_(KB_EMU_FAULT_MEMORY, "cp.async: src-size outside 0..16");
    kb_emu_rt_->cp_async(kb_emu_self_, smem, gmem, src_bytes);
}
inline void kb_cp_async_16(void *smem, const void *gmem) { kb_cp_async_16_zfill(smem, gmem, 16); }
inline void kb_cp_async_commit(void) { kb_emu_rt_->cp_async_commit(kb_emu_self_); }
template <int N> inline void kb_cp_async_wait(void) { kb_emu_rt_->cp_async_wait(kb_emu_self_, N); }

#endif /* backend */

#endif /* KB_MMA_H */
