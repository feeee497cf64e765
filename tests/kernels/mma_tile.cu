/* mma_tile.cu - test kernels for kb_mma.h (tests/test_mma.c): one mma.sync of each shape
 * on a single 16 x 8 x K tile, ldmatrix in every form, cp.async with zero fill, and the
 * tf32/fp8 conversions. Valid for both backends; one warp per launch.
 *
 * The fragments are built here from the PTX ISA tables in their generic form, written
 * independently of kb_mma.h's emulator (which inverts them per shape). With EPR elements
 * per 32-bit register (4 / element size) and mma depth K, lane = 4g + t:
 *   A register r, element e:  row g + 8*(r & 1),  col EPR*t + e + (K/2)*(r >> 1)
 *   B register r, element e:  row EPR*t + e + (K/2)*r,  col g
 *   C/D element i:            row g + 8*(i >> 1),  col 2t + (i & 1)
 * A is 16 x K row-major, B is K x 8 row-major, C and D are 16 x 8 row-major.
 */
#include "kb_device.h"

template <int K, class T>
__device__ __forceinline__ void make_frags(const T *A, const T *B, uint32_t a[4], uint32_t b[2])
{
    const int EPR = 4 / (int)sizeof(T), lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int r = 0; r < 4; r++) {
        uint32_t w = 0;
        for (int e = 0; e < EPR; e++)
            w |= (uint32_t)A[(g + 8 * (r & 1)) * K + EPR * t + e + (K / 2) * (r >> 1)] << (8 * (int)sizeof(T) * e);
        a[r] = w;
    }
    for (int r = 0; r < 2; r++) {
        uint32_t w = 0;
        for (int e = 0; e < EPR; e++)
            w |= (uint32_t)B[(EPR * t + e + (K / 2) * r) * 8 + g] << (8 * (int)sizeof(T) * e);
        b[r] = w;
    }
}

template <class U> __device__ __forceinline__ void load_c(const U *C, U c[4])
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; i++)
        c[i] = C[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)];
}

template <class U> __device__ __forceinline__ void store_d(U *D, const U d[4])
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int i = 0; i < 4; i++)
        D[(g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
}

#define MMA_ENTRY(name, K, T, U, op)                                                          \
    extern "C" __global__ void name(const T *A, const T *B, const U *C, U *D)                 \
    {                                                                                         \
        uint32_t a[4], b[2];                                                                  \
        U c[4], d[4];                                                                         \
        make_frags<K>(A, B, a, b);                                                            \
        load_c(C, c);                                                                         \
        op(d, a, b, c);                                                                       \
        store_d(D, d);                                                                        \
    }

MMA_ENTRY(mma_f16, 16, uint16_t, float, kb_mma_m16n8k16_f32_f16)
MMA_ENTRY(mma_bf16, 16, uint16_t, float, kb_mma_m16n8k16_f32_bf16)
MMA_ENTRY(mma_tf32, 8, uint32_t, float, kb_mma_m16n8k8_f32_tf32)
MMA_ENTRY(mma_s8, 32, uint8_t, int, kb_mma_m16n8k32_s32_s8)
#if KB_ARCH >= 89
MMA_ENTRY(mma_e4m3, 32, uint8_t, float, kb_mma_m16n8k32_f32_e4m3)
MMA_ENTRY(mma_e5m2, 32, uint8_t, float, kb_mma_m16n8k32_f32_e5m2)

/* out[i] = the f16x2 widening of the fp8 pair in[i] (e4m3 for i < n/2, then e5m2). */
extern "C" __global__ void cvt_fp8x2(const uint16_t *in, uint32_t *out, int n)
{
    for (int i = (int)threadIdx.x; i < n; i += (int)blockDim.x)
        out[i] = i < n / 2 ? kb_cvt_f16x2_e4m3x2(in[i]) : kb_cvt_f16x2_e5m2x2(in[i]);
}
#endif

/* out[i] for the code pair in[i] (both bytes i % 64 and i % 64 + 1): the f16x2 widening of
 * e2m3 (i < 64), e3m2 (i < 128), e2m1 (i < 192); then the decoded UE8M0 (i - 192 as the code,
 * in bits) and UE4M3 for i >= 192 in out[256 + ...]. */
extern "C" __global__ void cvt_lowp(uint32_t *out)
{
    for (int i = (int)threadIdx.x; i < 256; i += (int)blockDim.x) {
        const uint32_t c = (uint32_t)(i % 64) | (uint32_t)((i + 1) % 64) << 8;
        out[i] = i < 64 ? kb_cvt_f16x2_lowp<2, 3, 1>(c) : i < 128 ? kb_cvt_f16x2_lowp<3, 2, 3>(c)
               : kb_cvt_f16x2_lowp<2, 1, 1>(c & 0x0f0fu);
        out[256 + i] = __float_as_uint(kb_ue8m0_to_float((uint32_t)i));
        out[512 + i] = __float_as_uint(kb_ue4m3_to_float((uint32_t)i));
    }
}

extern "C" __global__ void cvt_tf32(const uint32_t *in, uint32_t *out, int n)
{
    for (int i = (int)threadIdx.x; i < n; i += (int)blockDim.x)
        out[i] = kb_cvt_tf32(in[i]);
}

/* src: 4 matrices of 8 x 8 16-bit values, row-major. Each lane gives the row of the
 * matrix the ldmatrix table assigns it; out[(mode * 32 + lane) * 4 + j] = register j of
 * mode x1, x2, x4, x1.trans, x2.trans, x4.trans (unwritten registers stay 0). */
extern "C" __global__ void ldsm(const uint16_t *src, uint32_t *out)
{
    KB_SHARED(uint16_t, s, [4][8][16]);   /* 32-byte rows: 16-byte aligned, upper half junk */
    const int lane = (int)threadIdx.x & 31;
    for (int i = lane; i < 4 * 8 * 16; i += 32) {
        int m = i / 128, r = i / 16 % 8, c = i % 16;
        s[m][r][c] = c < 8 ? src[(m * 8 + r) * 8 + c] : (uint16_t)0xEEEE;
    }
    __syncthreads();
    const void *row = &s[lane >> 3][lane & 7][0];
    uint32_t r[6][4] = {};
    kb_ldmatrix_x1(r[0], row);
    kb_ldmatrix_x2(r[1], row);
    kb_ldmatrix_x4(r[2], row);
    kb_ldmatrix_x1_trans(r[3], row);
    kb_ldmatrix_x2_trans(r[4], row);
    kb_ldmatrix_x4_trans(r[5], row);
    for (int m = 0; m < 6; m++)
        for (int j = 0; j < 4; j++)
            out[(m * 32 + lane) * 4 + j] = r[m][j];
}

/* Lane l copies 16 bytes at src + 16 l with src-size l % 17 into shared memory (the rest
 * zero-filled), then the block writes the shared bytes to out. Shared memory starts as
 * poison (emulator) or garbage, so only the copy can make the result right. */
extern "C" __global__ void cp_async(const uint8_t *src, uint8_t *out)
{
    KB_SHARED(uint4, s, [32]);
    const int lane = (int)threadIdx.x & 31;
    if (lane % 17 == 16)
        kb_cp_async_16(&s[lane], src + 16 * lane);
    else
        kb_cp_async_16_zfill(&s[lane], src + 16 * lane, lane % 17);
    kb_cp_async_commit();
    kb_cp_async_wait<0>();
    __syncthreads();
    const uint8_t *b = reinterpret_cast<const uint8_t *>(&s[0]);
    for (int i = lane; i < 32 * 16; i += 32)
        out[i] = b[i];
}

#if KB_MMA_BLOCK_SCALE
/* Block-scaled mma.sync (sm_120a): one tile, the fragments built from the PTX tables as
 * above (8-bit containers for m16n8k32; packed nibbles for m16n8k64), and the scale registers
 * built from the PTX text of the selectors (9.7.14.3), independently of the emulator:
 *   A: of each quad, lane t = 2 TIDA holds row g's scale bytes, t = 2 TIDA + 1 row g+8's;
 *   B: lane t = TIDB holds column g's; chunk v's byte at byte BID + v.
 * SA[16][VEC] and SB[8][VEC] are the scale codes per row / column and K chunk; every byte the
 * selectors do not pick is junk (0xA5), to show it is ignored. CODES: element codes as
 * kbench stores them (e2m1 in bits 3..0; SHIFT2: the kernel moves them to bits 5..2). */
template <int K, int VEC, int BIDA, int TIDA, int BIDB, int TIDB>
__device__ __forceinline__ void make_scales(const uint8_t *SA, const uint8_t *SB, uint32_t &sa, uint32_t &sb)
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    sa = sb = 0xa5a5a5a5u;
    for (int v = 0; v < VEC; v++) {
        if (t == 2 * TIDA || t == 2 * TIDA + 1) {
            const uint32_t code = SA[(g + 8 * (t - 2 * TIDA)) * VEC + v];
            sa = (sa & ~(255u << (8 * (BIDA + v)))) | code << (8 * (BIDA + v));
        }
        if (t == TIDB)
            sb = (sb & ~(255u << (8 * (BIDB + v)))) | (uint32_t)SB[g * VEC + v] << (8 * (BIDB + v));
    }
}

template <int SHIFT2>
__device__ __forceinline__ void frags_k32(const uint8_t *A, const uint8_t *B, uint32_t a[4], uint32_t b[2])
{
    make_frags<32>(A, B, a, b);
    if (SHIFT2) {
        for (int r = 0; r < 4; r++) a[r] = kb_e2m1_container(a[r]);
        for (int r = 0; r < 2; r++) b[r] = kb_e2m1_container(b[r]);
    }
}

/* m16n8k64 e2m1: A register r holds row g (+8 for odd r), cols 8t + e (+32 for r >= 2) in
 * nibble e; B register r rows 8t + e (+32 for r = 1) of column g. */
__device__ __forceinline__ void frags_k64(const uint8_t *A, const uint8_t *B, uint32_t a[4], uint32_t b[2])
{
    const int lane = (int)threadIdx.x & 31, g = lane >> 2, t = lane & 3;
    for (int r = 0; r < 4; r++) {
        a[r] = 0;
        for (int e = 0; e < 8; e++)
            a[r] |= (uint32_t)(A[(g + 8 * (r & 1)) * 64 + 8 * t + e + 32 * (r >> 1)] & 15u) << (4 * e);
    }
    for (int r = 0; r < 2; r++) {
        b[r] = 0;
        for (int e = 0; e < 8; e++)
            b[r] |= (uint32_t)(B[(8 * t + e + 32 * r) * 8 + g] & 15u) << (4 * e);
    }
}

#define BS_ENTRY(name, K, VEC, FRAGS, op, BIDA, TIDA, BIDB, TIDB)                                                  \
    extern "C" __global__ void name(const uint8_t *A, const uint8_t *B, const float *C, float *D, const uint8_t *SA, \
                                    const uint8_t *SB)                                                             \
    {                                                                                                              \
        uint32_t a[4], b[2], sa, sb;                                                                               \
        float c[4], d[4];                                                                                          \
        FRAGS(A, B, a, b);                                                                                         \
        make_scales<K, VEC, BIDA, TIDA, BIDB, TIDB>(SA, SB, sa, sb);                                               \
        load_c(C, c);                                                                                              \
        op<BIDA, TIDA, BIDB, TIDB>(d, a, b, c, sa, sb);                                                            \
        store_d(D, d);                                                                                             \
    }

BS_ENTRY(bs_mx_e4m3, 32, 1, frags_k32<0>, kb_mma_m16n8k32_mx_e4m3, 0, 0, 0, 0)
BS_ENTRY(bs_mx_e4m3_sel, 32, 1, frags_k32<0>, kb_mma_m16n8k32_mx_e4m3, 3, 1, 2, 3)
BS_ENTRY(bs_mx_e5m2, 32, 1, frags_k32<0>, kb_mma_m16n8k32_mx_e5m2, 1, 1, 0, 2)
BS_ENTRY(bs_mx_e2m3, 32, 1, frags_k32<0>, kb_mma_m16n8k32_mx_e2m3, 2, 0, 1, 1)
BS_ENTRY(bs_mx_e3m2, 32, 1, frags_k32<0>, kb_mma_m16n8k32_mx_e3m2, 0, 1, 3, 0)
BS_ENTRY(bs_mx_e2m1, 32, 1, frags_k32<1>, kb_mma_m16n8k32_mx_e2m1, 1, 0, 1, 3)
BS_ENTRY(bs_mxf4, 64, 2, frags_k64, kb_mma_m16n8k64_mxf4_ue8m0, 2, 1, 0, 1)
BS_ENTRY(bs_nvf4, 64, 4, frags_k64, kb_mma_m16n8k64_nvf4_ue4m3, 0, 1, 0, 2)
BS_ENTRY(bs_nvf4_sel0, 64, 4, frags_k64, kb_mma_m16n8k64_nvf4_ue4m3, 0, 0, 0, 0)
#endif
