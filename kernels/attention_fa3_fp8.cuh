/* attention_fa3_fp8.cuh - the fp8 e4m3 path of attention/fa3 (attention_fa3.cu includes it when
 * KB_DTYPE_FP8E4M3 is defined). Written from the PTX ISA (9.7.15.5.1 wgmma shapes: m64nNk32
 * .e4m3 takes both operands K-major, no transpose immediate; 9.7.14.5.x the m16n8k32 A fragment
 * the register-A wgmma uses) and the FA3 paper (Shah et al. 2024, section 3.3: fp8 needs V
 * K-major over the keys, and the S accumulator and the fp8 A fragment differ in layout).
 *
 * V's layout, by a stated pre-pass: attn_fa3_vt writes Vt [b*h][d][sp] (sp = s rounded up to
 * 32, the rest zero) from V [b*h][s][d] before attn_fa3 runs, in the same enqueue (timed with
 * it). Vt's rows are K-major over the keys, as the k32 wgmma of P V needs.
 *
 * P's fragment, without a shuffle: a thread's S accumulator holds, for 32-key k-step kk, row g
 * (and g+8) at keys 32kk + 8i + 2t + {0, 1}, i = 0..3; the k32 A fragment wants keys
 * 32kk + 4t + {0..3} (registers 0, 1: rows g, g+8) and 32kk + 16 + 4t + {0..3} (registers 2, 3).
 * Rather than exchange values across the quad (FA3 permutes registers), each thread packs its
 * own scores in A column order c = 16h + 4t + e <- key fa_fp8_key(c) = 16h + 8(e >> 1) + 2t +
 * (e & 1), and the pre-pass stores V's keys in the same order within every 32 keys: P V sums
 * over the keys, so a permutation applied to both P's columns and V's rows leaves O unchanged.
 * The mask and the softmax see the true keys (the S fragment is unchanged).
 *
 * P is offset by 2^FA_P_OFFSET (exp2 of S - m + 8), so the tile's largest p is 256 of e4m3's
 * 448 and p down to 2^-14 keeps 3 mantissa bits; l carries the same factor, O / l cancels it.
 */
#define FA_P_OFFSET 8.0f
#define FA_PA_STEPS (BKV / 32)

/* A column c (0..31) of a k32 step holds key fa_fp8_key(c) of the step's 32 keys. */
__device__ __forceinline__ int fa_fp8_key(int c)
{
    const int h = c / 16, t = c % 16 / 4, e = c % 4;
    return 16 * h + 8 * (e >> 1) + 2 * t + (e & 1);
}

/* Four floats as one register of four e4m3, the first in the low byte (RN, saturating). */
__device__ __forceinline__ uint32_t fa_pack4(float a, float b, float c, float d)
{
    kb_vec<KB_T, 4> p;
    p.v[0] = kb_from_float<KB_T>(a);
    p.v[1] = kb_from_float<KB_T>(b);
    p.v[2] = kb_from_float<KB_T>(c);
    p.v[3] = kb_from_float<KB_T>(d);
    uint32_t w;
    memcpy(&w, &p, sizeof w);
    return w;
}

/* V_j (from Vt: BKV/64 boxes of 64 keys x HEAD_D rows, 64 bytes a row, 64-byte swizzle). */
__device__ __forceinline__ void fa_load_v(unsigned char *vs, const kb_tmap *tv, uint64_t *bar, int j, int bh)
{
#pragma unroll
    for (int b = 0; b < BKV / 64; b++)
        kb_tma_load(vs + b * HEAD_D * 64, tv, bar, j * BKV + 64 * b, 0, bh);
}

/* P (after fa_softmax) as the k32 A fragments: step kk's S words are sc[16kk .. 16kk+15]
 * (i = 4kk..4kk+3, e: rows g, g, g+8, g+8); register 0 = row g keys {2t, 2t+1, 8+2t, 9+2t},
 * 1 = row g+8 the same, 2 and 3 the same 16 keys further (fa_fp8_key's order). */
__device__ __forceinline__ void fa_pack_p(uint32_t (&pa)[FA_PA_STEPS][4], const float (&sc)[BKV / 2])
{
#pragma unroll
    for (int kk = 0; kk < FA_PA_STEPS; kk++) {
        const float *w = sc + 16 * kk;
        pa[kk][0] = fa_pack4(w[0], w[1], w[4], w[5]);
        pa[kk][1] = fa_pack4(w[2], w[3], w[6], w[7]);
        pa[kk][2] = fa_pack4(w[8], w[9], w[12], w[13]);
        pa[kk][3] = fa_pack4(w[10], w[11], w[14], w[15]);
    }
}

/* O += P V: BKV/32 k32 steps, A = P from registers, B = the Vt tile K-major (64-byte rows of
 * 64 keys, 8-row groups 512 bytes apart, the step's 32 keys at byte 32 (kk % 2) of box kk / 2). */
__device__ __forceinline__ void fa_pv(float (&o)[HEAD_D / 2], const uint32_t (&pa)[FA_PA_STEPS][4],
                                      const unsigned char *vs)
{
#pragma unroll
    for (int kk = 0; kk < FA_PA_STEPS; kk++) {
        const uint64_t db = kb_wgmma_desc(vs + kk / 2 * HEAD_D * 64 + kk % 2 * 32, KB_WG_SW_64B, 16, 512);
        FA_MMA_RS<HEAD_D>(o, pa[kk], db, 1);
    }
}

/* The pre-pass: keys 64 blockIdx.x .. +63 of head blockIdx.y, 256 threads. Vt[n][k0 + c] =
 * V[k0 + 32 (c / 32) + fa_fp8_key(c % 32)][n], zero for keys past s; columns < sp written. */
extern "C" __global__ void __launch_bounds__(256) attn_fa3_vt(const KB_T *v, KB_T *vt, int s, int sp)
{
    KB_SHARED(KB_T, tile, [64][HEAD_D + 4]);
    const int k0 = 64 * (int)blockIdx.x;
    const KB_T *src = v + (long long)blockIdx.y * s * HEAD_D;
    KB_T *dst = vt + (long long)blockIdx.y * HEAD_D * sp;
    for (int i = (int)threadIdx.x; i < 64 * HEAD_D; i += 256) {
        const int r = i / HEAD_D, n = i % HEAD_D;
        tile[r][n] = k0 + r < s ? src[(long long)(k0 + r) * HEAD_D + n] : kb_from_float<KB_T>(0.0f);
    }
    __syncthreads();
    for (int i = (int)threadIdx.x; i < 64 * HEAD_D; i += 256) {
        const int n = i / 64, c = i % 64;
        if (k0 + c < sp)
            dst[(long long)n * sp + k0 + c] = tile[c / 32 * 32 + fa_fp8_key(c % 32)][n];
    }
}
