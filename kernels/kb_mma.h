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
 *   kb_cvt_f16x2_lowp<E, M, BIAS>(x) (every arch): the same for two fp6 / fp4 codes (the low
 *   E+M+1 bits of each byte, kbench's storage), exact: every e2m3, e3m2, e2m1 value is an
 *   f16 value. kb_lowp_to_float<E, M, BIAS>(code), kb_ue8m0_to_float(code),
 *   kb_ue4m3_to_float(code): one code decoded (fp6/fp4 elements, the MX and NVFP4 scales).
 *
 *   Block-scaled mma.sync (PTX ISA 9.7.14.3 "Block Scaling for mma.sync"; sm_120a/sm_121a:
 *   KB_MMA_BLOCK_SCALE is 1 there), D = (A x scale_A) (B x scale_B) + C, fp32 accumulators:
 *     kb_mma_m16n8k32_mx_<t><BIDA, TIDA, BIDB, TIDB>(d, a, b, c, sa, sb), t = e4m3, e5m2, e2m3,
 *       e3m2, e2m1: kind::mxf8f6f4 scale_vec::1X, UE8M0 scales, one per row of A / column of B
 *       for the 32 K. Fragments as m16n8k32 8-bit above, one element per byte: fp6 in the low
 *       6 bits, e2m1 in bits 5..2 (the PTX container; kbench stores e2m1 in bits 3..0 and
 *       shifts it in registers: kb_e2m1_container).
 *     kb_mma_m16n8k64_mxf4_ue8m0<...>: kind::mxf4nvf4 scale_vec::2X (MXFP4, UE8M0 per 32 K);
 *     kb_mma_m16n8k64_nvf4_ue4m3<...>: kind::mxf4nvf4 scale_vec::4X (NVFP4, UE4M3 per 16 K).
 *       m16n8k64 fragments: e2m1 packed 8 per register, element e in bits 4e..4e+3:
 *       a[r]: row g (+8 for odd r), cols 8t+e (+32 for r >= 2); b[r]: rows 8t+e (+32 for r = 1), col g.
 *     Scale operands: sa and sb are 32-bit registers of scale bytes. Of each quad (lanes 4g..4g+3)
 *     the pair picked by TIDA (0: lanes t = 0, 1; 1: t = 2, 3) gives A's scales, its lower lane
 *     row g's, its upper lane row g+8's; the lane t = TIDB gives column g's of B. Byte BIDA (BIDB)
 *     of that register is the scale of the first K chunk (32 K for 1X and 2X, 16 for 4X), the
 *     next byte the next chunk's: 1X one byte (BID 0..3), 2X two (BID 0 or 2), 4X all four
 *     (BID 0). Other values are undefined in PTX: the emulator faults on them.
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

/* Block-scaled mma.sync: an arch-specific sm_12x target only (ptxas refuses it for sm_100a and
 * sm_90a). Under NVRTC its feature macro for sm_120a / sm_121a says so (a test's own compile
 * has no KB_ARCH_SPECIFIC, and kb_arch.h then defaults it to 0); on the emulator the build's
 * KB_ARCH and KB_ARCH_SPECIFIC. */
#if defined(__CUDA_ARCH_FEAT_SM120_ALL) || defined(__CUDA_ARCH_FEAT_SM121_ALL)
#define KB_MMA_BLOCK_SCALE 1
#else
#define KB_MMA_BLOCK_SCALE (KB_ARCH_SPECIFIC && KB_ARCH / 10 == 12)
#endif

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

#if KB_MMA_BLOCK_SCALE
/* The selectors are immediates: {byte-id, thread-id} of A, then of B (PTX ISA: u16 values). */
#define KB_MMA_BS_(name, shape_kind_types)                                                                       \
    template <int BIDA_, int TIDA_, int BIDB_, int TIDB_>                                                        \
    __device__ __forceinline__ void name(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4], \
                                         uint32_t sa, uint32_t sb)                                                \
    {                                                                                                             \
        asm volatile("mma.sync.aligned." shape_kind_types " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "             \
                     "{%10,%11,%12,%13}, %14, {%15, %16}, %17, {%18, %19};\n"                                   \
                     : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                                             \
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),     \
                       "f"(c[2]), "f"(c[3]), "r"(sa), "n"(BIDA_), "n"(TIDA_), "r"(sb), "n"(BIDB_), "n"(TIDB_));    \
    }
#define KB_MX_1X_ "m16n8k32.row.col.kind::mxf8f6f4.block_scale.scale_vec::1X.f32."
KB_MMA_BS_(kb_mma_m16n8k32_mx_e4m3, KB_MX_1X_ "e4m3.e4m3.f32.ue8m0")
KB_MMA_BS_(kb_mma_m16n8k32_mx_e5m2, KB_MX_1X_ "e5m2.e5m2.f32.ue8m0")
KB_MMA_BS_(kb_mma_m16n8k32_mx_e2m3, KB_MX_1X_ "e2m3.e2m3.f32.ue8m0")
KB_MMA_BS_(kb_mma_m16n8k32_mx_e3m2, KB_MX_1X_ "e3m2.e3m2.f32.ue8m0")
KB_MMA_BS_(kb_mma_m16n8k32_mx_e2m1, KB_MX_1X_ "e2m1.e2m1.f32.ue8m0")
KB_MMA_BS_(kb_mma_m16n8k64_mxf4_ue8m0, "m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::2X.f32.e2m1.e2m1.f32.ue8m0")
KB_MMA_BS_(kb_mma_m16n8k64_nvf4_ue4m3, "m16n8k64.row.col.kind::mxf4nvf4.block_scale.scale_vec::4X.f32.e2m1.e2m1.f32.ue4m3")
#undef KB_MX_1X_
#undef KB_MMA_BS_
#endif

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

#if KB_MMA_BLOCK_SCALE
/* Block-scaled mma.sync (PTX ISA 9.7.14.3): every lane publishes its A, B and scale registers;
 * each lane then forms its four accumulators from the exact products of the decoded elements
 * and their selected scales, summed in double and rounded once to fp32 (as above: the tensor
 * core's order is unspecified). A NaN scale makes its products NaN (MX v1.0: a NaN scale
 * marks the block NaN). */
struct kb_emu_mma_bs_frag_ {
    uint32_t a[4];
    uint32_t b[2];
    uint32_t sa, sb;
};

/* m16n8k64, packed e2m1 (element e of a register in bits 4e..4e+3). */
inline uint32_t kb_emu_a_at_k64_(const kb_emu_mma_bs_frag_ *f, int row, int k)
{
    return f[(row % 8) * 4 + (k % 32) / 8].a[row / 8 + 2 * (k / 32)] >> (4 * (k % 8)) & 15u;
}
inline uint32_t kb_emu_b_at_k64_(const kb_emu_mma_bs_frag_ *f, int k, int col)
{
    return f[col * 4 + (k % 32) / 8].b[k / 32] >> (4 * (k % 8)) & 15u;
}
/* Decoders of the block-scaled element types (PTX containers: fp6 in the low 6 bits, e2m1
 * of mxf8f6f4 in bits 5..2; mxf4nvf4's packed nibbles come in as 4-bit codes). */
template <float (*DEC)(uint8_t), int SHIFT, unsigned MASK> inline float kb_emu_dec_tab_(uint32_t x)
{
    static const kb_emu_tab8_ tab([](uint8_t c) { return DEC((uint8_t)((c >> SHIFT) & MASK)); });
    return tab.v[x & 255u];
}
inline float kb_emu_e2m3_c_(uint32_t x) { return kb_emu_dec_tab_<kb_e2m3_bits_to_f32, 0, 0x3fu>(x); }
inline float kb_emu_e3m2_c_(uint32_t x) { return kb_emu_dec_tab_<kb_e3m2_bits_to_f32, 0, 0x3fu>(x); }
inline float kb_emu_e2m1_c_(uint32_t x) { return kb_emu_dec_tab_<kb_e2m1_bits_to_f32, 2, 0x0fu>(x); }
inline float kb_emu_e2m1_n_(uint32_t x) { return kb_emu_dec_tab_<kb_e2m1_bits_to_f32, 0, 0x0fu>(x); }
inline float kb_emu_ue8m0_(uint32_t x) { return kb_ue8m0_to_f32((uint8_t)x); }
inline float kb_emu_ue4m3_(uint32_t x) { return kb_ue4m3_to_f32((uint8_t)x); }

/* K_ products per accumulator in VEC_ chunks of K_ / VEC_ (names with a trailing _: a
 * family's macros - VEC, K - must not rename them), each with its own scale byte. */
template <int K_, int VEC_, int BIDA_, int TIDA_, int BIDB_, int TIDB_, class AT_, class BT_, class DEC_, class SDEC_>
inline void kb_emu_mma_bs_(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4], uint32_t sa,
                           uint32_t sb, AT_ a_at, BT_ b_at, DEC_ dec, SDEC_ sdec)
{
    static_assert(VEC_ == 1 ? BIDA_ >= 0 && BIDA_ <= 3 && BIDB_ >= 0 && BIDB_ <= 3
                           : VEC_ == 2 ? (BIDA_ == 0 || BIDA_ == 2) && (BIDB_ == 0 || BIDB_ == 2) : BIDA_ == 0 && BIDB_ == 0,
                  "block-scaled mma: byte-id must be 0..3 (1X), 0 or 2 (2X), 0 (4X) - PTX ISA Table 37");
    static_assert(TIDA_ >= 0 && TIDA_ <= 1 && TIDB_ >= 0 && TIDB_ <= 3,
                  "block-scaled mma: thread-id-a must be 0 or 1, thread-id-b 0..3 - PTX ISA Table 37");
    kb_emu_mma_bs_frag_ mine;
    unsigned members;
    memcpy(mine.a, a, sizeof mine.a);
    memcpy(mine.b, b, sizeof mine.b);
    mine.sa = sa, mine.sb = sb;
    const kb_emu_mma_bs_frag_ *f =
        reinterpret_cast<const kb_emu_mma_bs_frag_ *>(kb_emu_xchg_(0xffffffffu, mine, &members));
    int g = (int)kb_emu_self_->lane >> 2, t = (int)kb_emu_self_->lane & 3;
    double av[2][K_], bv[2][K_], out[4];
    for (int h = 0; h < 2; h++) {
        int row = g + 8 * h, col = 2 * t + h;
        uint32_t rs = f[(row % 8) * 4 + 2 * TIDA_ + row / 8].sa, cs = f[col * 4 + TIDB_].sb;
        for (int k = 0; k < K_; k++) {
            int v = k / (K_ / VEC_);
            av[h][k] = (double)dec(a_at(f, row, k)) * sdec(rs >> (8 * (BIDA_ + v)) & 255u);
            bv[h][k] = (double)dec(b_at(f, k, col)) * sdec(cs >> (8 * (BIDB_ + v)) & 255u);
        }
    }
    for (int i = 0; i < 4; i++) {
        double acc = c[i];
        for (int k = 0; k < K_; k++)
            acc += av[i / 2][k] * bv[i % 2][k];
        out[i] = acc;
    }
    for (int i = 0; i < 4; i++)
        d[i] = (float)out[i];
}

/* m16n8k32 8-bit positions of the bs fragment (the unscaled table: kb_emu_a_at_k32_). */
inline uint32_t kb_emu_bs_a32_(const kb_emu_mma_bs_frag_ *f, int row, int k)
{
    return kb_emu_frag_bits_(f[(row % 8) * 4 + (k % 16) / 4].a[row / 8 + 2 * (k / 16)], k % 4, 1);
}
inline uint32_t kb_emu_bs_b32_(const kb_emu_mma_bs_frag_ *f, int k, int col)
{
    return kb_emu_frag_bits_(f[col * 4 + (k % 16) / 4].b[k / 16], k % 4, 1);
}

#define KB_EMU_MMA_BS_(name, K, VEC, AT, BT, DEC, SDEC)                                                            \
    template <int BIDA_, int TIDA_, int BIDB_, int TIDB_>                                                          \
    inline void name(float d[4], const uint32_t a[4], const uint32_t b[2], const float c[4], uint32_t sa, uint32_t sb) \
    {                                                                                                              \
        kb_emu_mma_bs_<K, VEC, BIDA_, TIDA_, BIDB_, TIDB_>(d, a, b, c, sa, sb, AT, BT, DEC, SDEC);                 \
    }
KB_EMU_MMA_BS_(kb_mma_m16n8k32_mx_e4m3, 32, 1, kb_emu_bs_a32_, kb_emu_bs_b32_, kb_emu_e4m3_bits_, kb_emu_ue8m0_)
KB_EMU_MMA_BS_(kb_mma_m16n8k32_mx_e5m2, 32, 1, kb_emu_bs_a32_, kb_emu_bs_b32_, kb_emu_e5m2_bits_, kb_emu_ue8m0_)
KB_EMU_MMA_BS_(kb_mma_m16n8k32_mx_e2m3, 32, 1, kb_emu_bs_a32_, kb_emu_bs_b32_, kb_emu_e2m3_c_, kb_emu_ue8m0_)
KB_EMU_MMA_BS_(kb_mma_m16n8k32_mx_e3m2, 32, 1, kb_emu_bs_a32_, kb_emu_bs_b32_, kb_emu_e3m2_c_, kb_emu_ue8m0_)
KB_EMU_MMA_BS_(kb_mma_m16n8k32_mx_e2m1, 32, 1, kb_emu_bs_a32_, kb_emu_bs_b32_, kb_emu_e2m1_c_, kb_emu_ue8m0_)
KB_EMU_MMA_BS_(kb_mma_m16n8k64_mxf4_ue8m0, 64, 2, kb_emu_a_at_k64_, kb_emu_b_at_k64_, kb_emu_e2m1_n_, kb_emu_ue8m0_)
KB_EMU_MMA_BS_(kb_mma_m16n8k64_nvf4_ue4m3, 64, 4, kb_emu_a_at_k64_, kb_emu_b_at_k64_, kb_emu_e2m1_n_, kb_emu_ue4m3_)
#undef KB_EMU_MMA_BS_
#endif /* KB_MMA_BLOCK_SCALE */

#endif /* backend */


/* ===================== both backends: fp6 / fp4 and scale codes ===================== */

/* One fp6/fp4 code (its low 1+E+M bits; exponent bias BIAS, no inf or NaN) as a float. */
template <int E, int M, int BIAS> __device__ __forceinline__ float kb_lowp_to_float(uint32_t x)
{
    const uint32_t s = x >> (E + M) & 1u, e = x >> M & ((1u << E) - 1u), m = x & ((1u << M) - 1u);
    const float v = e ? __uint_as_float((e + 127u - BIAS) << 23 | m << (23 - M))
                      : (float)m * __uint_as_float((uint32_t)(128 - BIAS - M) << 23);   /* m 2^(1-BIAS-M) */
    return s ? -v : v;
}

/* The two codes in the low 16 bits of x as an f16x2 word, low byte to low half: exact (every
 * e2m3, e3m2 and e2m1 value is a normal f16 or zero), the float's bits moved into f16's. */
template <int E, int M, int BIAS> __device__ __forceinline__ uint32_t kb_cvt_f16x2_lowp(uint32_t x)
{
    uint32_t r = 0;
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const uint32_t fb = __float_as_uint(kb_lowp_to_float<E, M, BIAS>(x >> (8 * h) & 255u));
        uint32_t hb = fb >> 16 & 0x8000u;
        if (fb & 0x7fffffffu)
            hb |= ((fb >> 23 & 255u) - 112u) << 10 | (fb >> 13 & 0x3ffu);
        r |= hb << (16 * h);
    }
    return r;
}

/* UE8M0: 2^(x - 127), x = 255 NaN (2^-127 is a float subnormal). UE4M3: the E4M3 value of
 * x with its sign bit clear, 0x7f NaN. */
__device__ __forceinline__ float kb_ue8m0_to_float(uint32_t x)
{
    x &= 255u;
    return x == 255u ? __uint_as_float(0x7fc00000u) : x ? __uint_as_float(x << 23) : __uint_as_float(0x00400000u);
}
__device__ __forceinline__ float kb_ue4m3_to_float(uint32_t x)
{
    x &= 127u;
    return x == 127u ? __uint_as_float(0x7fc00000u) : kb_lowp_to_float<4, 3, 7>(x);
}

/* Four e2m1 codes kept in bits 3..0 of each byte moved to bits 5..2, mxf8f6f4's container. */
__device__ __forceinline__ uint32_t kb_e2m1_container(uint32_t w) { return (w & 0x0f0f0f0fu) << 2; }

/* Eight e2m1 codes, one per byte of lo (elements 0..3) and hi (4..7), packed into the
 * nibbles of one register for mxf4nvf4 (element e in bits 4e..4e+3). */
__device__ __forceinline__ uint32_t kb_e2m1_pack8(uint32_t lo, uint32_t hi)
{
    uint32_t r = 0;
#pragma unroll
    for (int e = 0; e < 4; e++)
        r |= (lo >> (8 * e) & 15u) << (4 * e) | (hi >> (8 * e) & 15u) << (4 * e + 16);
    return r;
}

#endif /* KB_MMA_H */
