/* softmax.cu - row softmax, y[r, :] = exp(x[r, :] - max) / sum(exp(x[r, :] - max)).
 *
 * Layout: x and y are [rows x ld] with ld = cols + pad (the pad axis is row-stride
 * padding, so pad = 1 leaves every other row misaligned for vector accesses). Math is
 * fp32 for every storage type, as llm.c's softmax kernels do.
 *
 * Variants (naive first):
 *   softmax_naive   one row per block, three passes over the row: max, sum of
 *                   exp(x - max), normalise. Each pass ends in a block reduction (warp
 *                   shuffles, then one partial per warp through shared memory). The
 *                   baseline: the row is read three times.
 *   softmax_online  a single statistics pass keeps the running max m and the running
 *                   sum s rescaled to it (Milakov & Gimelshein, "Online normalizer
 *                   calculation for softmax", 2018): when a larger element arrives,
 *                   s *= exp(m_old - m_new). Partial (m, s) pairs merge the same way,
 *                   so the reduction needs one pass; then the normalising pass. Two
 *                   reads of the row instead of three. Loads are VEC elements wide
 *                   (one 32/64/128-bit access) with a scalar head up to the vector
 *                   alignment and a scalar tail, so any cols and pad are correct.
 *                   SCOPE picks who owns a row:
 *                     SCOPE_BLOCK  one row per block of BLOCK threads, a block
 *                                  reduction: long rows (vocabulary-sized) keep many
 *                                  threads busy on one row;
 *                     SCOPE_WARP   one row per warp (BLOCK/32 rows per block), a warp
 *                                  reduction only, no shared memory, no barrier: short
 *                                  rows would leave most of a block idle otherwise.
 *   softmax_reg     a row (SPLIT > 1: a SPLIT-th of it) per block held in registers:
 *                   NVEC 16-byte loads per thread issued before any use, the thread's max
 *                   and sum of exp from the registers, one block merge of (max, sum), y
 *                   from the registers with 16-byte stores; x read once. exp as exp2 with
 *                   log2(e) folded into one FFMA: exp(x - m) = exp2(x * log2e - m * log2e).
 *                   SPLIT > 1 adds a statistics kernel (softmax_reg_stats) so that the
 *                   decode's 16 rows of 32000 use the GPU. Details above the kernels.
 * naive and online never cache a row, every pass loops over it, so rows of any length
 * (128k vocabularies) work with the same code; reg holds at most BLOCK x NVEC x 16 bytes
 * of a row per block (valid() refuses longer parts).
 *
 * Defines (from the harness): KB_T storage type, BLOCK threads per block, VEC elements
 * per vector access (online only), SCOPE (SCOPE_BLOCK | SCOPE_WARP, online only), NVEC
 * vectors per thread and SPLIT blocks per row (reg only).
 */
#include "kb_device.h"
#include "kb_reduce.h"
#include "kb_rowvec.h"

#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef VEC
#define VEC 4
#endif
#ifndef NVEC
#define NVEC 4
#endif
#ifndef SPLIT
#define SPLIT 1
#endif
#ifndef SCOPE_BLOCK
#define SCOPE_BLOCK 0
#define SCOPE_WARP 1
#endif
#ifndef SCOPE
#define SCOPE SCOPE_BLOCK
#endif

#define NWARPS (BLOCK / 32)
#define FULL_MASK 0xffffffffu

static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024,
              "BLOCK must be a multiple of the warp size (32), at most 1024: the reductions work warp by warp");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8 elements");
static_assert(sizeof(KB_T) * VEC <= 16, "VEC x sizeof(KB_T) must fit one 128-bit access");
static_assert(NVEC >= 1 && NVEC <= 16, "NVEC (16-byte vectors of a row per thread, in registers) must be 1..16");
static_assert(SPLIT >= 1 && SPLIT <= 64, "SPLIT (blocks per row) must be 1..64");

/* ---------------------------------- reductions ---------------------------------- */

/* Max and sum come from kb_reduce.h. softmax_naive calls each block reduction once,
 * and the max and the sum have separate partials arrays, so no trailing barrier
 * (KB_REDUCE_TAIL_NONE). */

/* ------------------------------- online normaliser ------------------------------- */

/* The empty state is (m, s) = (-FLT_MAX, 0), not -INFINITY: exp(-inf - -inf) is NaN,
 * while exp(-FLT_MAX - m) is 0 for any finite m, and a -inf element (a mask) adds 0. */
#define ONLINE_EMPTY_M (-KB_FLT_MAX)

/* Add one element. The max rarely moves after the first few elements, so the branch
 * is mostly uniform across a warp and each element costs one exp. */
__device__ __forceinline__ void online_add(float &m, float &s, float v)
{
    if (v > m) {
        s = s * expf(m - v) + 1.0f;
        m = v;
    } else {
        s += expf(v - m);
    }
}

/* Merge a partial (m2, s2) into (m, s): both sums rescaled to the larger max.
 * Symmetric in its two operands, so butterfly partners agree bitwise. */
__device__ __forceinline__ void online_merge(float &m, float &s, float m2, float s2)
{
    float mn = fmaxf(m, m2);
    s = s * expf(m - mn) + s2 * expf(m2 - mn);
    m = mn;
}

__device__ __forceinline__ void warp_online(float &m, float &s)
{
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(FULL_MASK, m, o);
        float s2 = __shfl_xor_sync(FULL_MASK, s, o);
        online_merge(m, s, m2, s2);
    }
}

/* Block-wide merge of (m, s), same shape as kb_block_max. Called once per kernel. */
__device__ void block_online(float &m, float &s)
{
    KB_SHARED(float, part_m, [NWARPS]);
    KB_SHARED(float, part_s, [NWARPS]);
    warp_online(m, s);
    if (threadIdx.x % 32 == 0) {
        part_m[threadIdx.x / 32] = m;
        part_s[threadIdx.x / 32] = s;
    }
    __syncthreads();
    int lane = threadIdx.x % 32;
    m = lane < NWARPS ? part_m[lane] : ONLINE_EMPTY_M;
    s = lane < NWARPS ? part_s[lane] : 0.0f;
    warp_online(m, s);
}

/* Elements before p reaches the VEC-element vector alignment. */
__device__ __forceinline__ long long align_head(const void *p)
{
    const unsigned long long vbytes = sizeof(KB_T) * VEC;
    unsigned long long mis = (unsigned long long)(uintptr_t)p % vbytes;
    return mis ? (long long)((vbytes - mis) / sizeof(KB_T)) : 0;
}

/* Thread t of nt accumulates its share of the row into (m, s): scalar head, VEC-wide
 * body, scalar tail. In the body the vector's own max moves m at most once, so a
 * vector costs VEC exps plus at most one rescale. */
__device__ __forceinline__ void row_stats(const KB_T *xr, long long cols, int t, int nt, float &m, float &s)
{
    long long head = align_head(xr);
    if (head > cols)
        head = cols;
    for (long long i = t; i < head; i += nt)
        online_add(m, s, kb_to_float(xr[i]));
    long long nvec = (cols - head) / VEC;
    for (long long v = t; v < nvec; v += nt) {
        kb_vec<KB_T, VEC> in = kb_load_vec<VEC>(xr + head + v * VEC);
        float f[VEC], mv = m;
#pragma unroll
        for (int j = 0; j < VEC; j++) {
            f[j] = kb_to_float(in.v[j]);
            mv = fmaxf(mv, f[j]);
        }
        if (mv > m) {
            s *= expf(m - mv);
            m = mv;
        }
#pragma unroll
        for (int j = 0; j < VEC; j++)
            s += expf(f[j] - m);
    }
    for (long long i = head + nvec * VEC + t; i < cols; i += nt)
        online_add(m, s, kb_to_float(xr[i]));
}

/* One VEC-wide store of out at p. A 16-byte vector of 16-bit elements goes out as one
 * st.global.v4 of its packed words: through kb_store_vec NVVM split it into four 4-byte
 * stores (tests/test_ptx.c). */
__device__ __forceinline__ void store_out(KB_T *p, const kb_vec<KB_T, VEC> &out)
{
#if !defined(KB_EMU)
    if (sizeof(KB_T) == 2 && VEC == 8) {
        uint32_t w[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            unsigned short lo, hi;
            memcpy(&lo, &out.v[2 * k], 2);
            memcpy(&hi, &out.v[2 * k + 1], 2);
            w[k] = lo | (uint32_t)hi << 16;
        }
        asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)), "r"(w[0]),
                     "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
        return;
    }
#endif
    kb_store_vec<VEC>(p, out);
}

/* y = exp(x - m) * inv over the row, same head/body/tail split. x and y rows must share
 * their misalignment for the vector body; when they do not, the row goes scalar. */
__device__ __forceinline__ void row_normalise(const KB_T *xr, KB_T *yr, long long cols, int t, int nt, float m,
                                              float inv)
{
    long long head = align_head(xr);
    if (head != align_head(yr) || head > cols)
        head = cols;
    for (long long i = t; i < head; i += nt)
        yr[i] = kb_from_float<KB_T>(expf(kb_to_float(xr[i]) - m) * inv);
    long long nvec = (cols - head) / VEC;
    for (long long v = t; v < nvec; v += nt) {
        long long i = head + v * VEC;
        kb_vec<KB_T, VEC> in = kb_load_vec<VEC>(xr + i), out;
#pragma unroll
        for (int j = 0; j < VEC; j++)
            out.v[j] = kb_from_float<KB_T>(expf(kb_to_float(in.v[j]) - m) * inv);
        store_out(yr + i, out);
    }
    for (long long i = head + nvec * VEC + t; i < cols; i += nt)
        yr[i] = kb_from_float<KB_T>(expf(kb_to_float(xr[i]) - m) * inv);
}

/* ------------------------------------ kernels ------------------------------------ */

/* grid.x = rows, block = BLOCK. */
extern "C" __global__ void __launch_bounds__(BLOCK)
softmax_naive(const KB_T *__restrict__ x, KB_T *__restrict__ y, long long rows, long long cols, long long ld)
{
    const KB_T *xr = x + (long long)blockIdx.x * ld;
    KB_T *yr = y + (long long)blockIdx.x * ld;

    float m = -INFINITY;
    for (long long i = threadIdx.x; i < cols; i += BLOCK)
        m = fmaxf(m, kb_to_float(xr[i]));
    m = kb_block_max<BLOCK, KB_REDUCE_TAIL_NONE>(m);

    float s = 0.0f;
    for (long long i = threadIdx.x; i < cols; i += BLOCK)
        s += expf(kb_to_float(xr[i]) - m);
    s = kb_block_sum<BLOCK, KB_REDUCE_TAIL_NONE>(s);

    float inv = 1.0f / s;
    for (long long i = threadIdx.x; i < cols; i += BLOCK)
        yr[i] = kb_from_float<KB_T>(expf(kb_to_float(xr[i]) - m) * inv);
}

/* SCOPE_BLOCK: grid.x = rows. SCOPE_WARP: grid.x = ceil(rows / NWARPS). block = BLOCK. */
extern "C" __global__ void __launch_bounds__(BLOCK)
softmax_online(const KB_T *__restrict__ x, KB_T *__restrict__ y, long long rows, long long cols, long long ld)
{
#if SCOPE == SCOPE_WARP
    long long row = (long long)blockIdx.x * NWARPS + threadIdx.x / 32;
    if (row >= rows)
        return; /* the whole warp leaves: it takes part in no barrier and no shuffle */
    int t = threadIdx.x % 32, nt = 32;
#else
    long long row = blockIdx.x;
    int t = threadIdx.x, nt = BLOCK;
#endif
    const KB_T *xr = x + row * ld;
    KB_T *yr = y + row * ld;

    float m = ONLINE_EMPTY_M, s = 0.0f;
    row_stats(xr, cols, t, nt, m, s);
#if SCOPE == SCOPE_WARP
    warp_online(m, s);
#else
    block_online(m, s);
#endif
    row_normalise(xr, yr, cols, t, nt, m, 1.0f / s);
}

/* ------------------------- reg: the row in registers, SPLIT ------------------------- */

/* softmax_reg: thread t holds vectors k = 0..NVEC-1 of its block's part at columns begin +
 * (k * BLOCK + t) * 16 / sizeof(KB_T) (kb_rowvec.h), loaded before any use. One pass over
 * the registers keeps the running (m, s) vector by vector: the vector's max moves m at most
 * once (rescaling s), then s adds exp2(x * L2E - m * L2E) - one FFMA and one ex2 per
 * element, log2(e) folded in, no separate subtract and multiply. (A max pass, then a sum
 * pass, kept every converted element live across both: 64 registers and spills at 1024
 * threads.) The pair (m, s) is merged once across the block (reg_merge, the exp2 form of
 * online_merge). With SPLIT > 1,
 * softmax_reg_stats writes each part's (m, s) to part[rows x SPLIT x 2] and softmax_reg
 * loads its part again (from L2), merges the row's SPLIT pairs in part order - so every
 * block of a row normalises with bitwise the same (m, s) - and writes its part. Rows whose
 * x or y start is not 16-byte aligned (pad) go element by element into the same
 * registers; elements past the part count in neither statistic. */

#define L2E 1.4426950408889634f   /* log2(e) */

typedef kb_rowvec<KB_T> rvec_t;

/* (m2, s2) into (m, s), both sums rescaled to the larger max, in the exp2 form. */
__device__ __forceinline__ void reg_merge(float &m, float &s, float m2, float s2)
{
    float mn = fmaxf(m, m2);
    s = s * exp2f((m - mn) * L2E) + s2 * exp2f((m2 - mn) * L2E);
    m = mn;
}

/* The block's (max, sum of exp(x - max)) of its part, returned to every thread. Called
 * once per kernel. Elements past the part read as -inf (exp2 gives 0); a thread with no
 * element holds (ONLINE_EMPTY_M, 0), and its m * L2E (-inf) is clamped to -FLT_MAX so
 * that -inf * L2E - m * L2E stays -inf, not NaN. */
__device__ __forceinline__ void reg_block_stats(const uint4 (&w)[NVEC], const kb_row_span &sp, float &m, float &s)
{
    m = ONLINE_EMPTY_M;
    s = 0.0f;
#pragma unroll
    for (int k = 0; k < NVEC; k++) {
        rvec_t v = kb_row_unpack<KB_T>(w[k]);
        int c0 = kb_row_col<KB_T, BLOCK>(sp, k);
        float f[KB_ROWVEC(KB_T)], mv = m;
#pragma unroll
        for (int j = 0; j < KB_ROWVEC(KB_T); j++) {
            f[j] = c0 + j < sp.end ? kb_to_float(v.v[j]) : -INFINITY;
            mv = fmaxf(mv, f[j]);
        }
        if (mv > m) {
            s *= exp2f((m - mv) * L2E);
            m = mv;
        }
        float ml = fmaxf(m * L2E, -KB_FLT_MAX);   /* finite even for a thread with no element yet */
#pragma unroll
        for (int j = 0; j < KB_ROWVEC(KB_T); j++)
            s += exp2f(fmaf(f[j], L2E, -ml));
    }
    KB_SHARED(float, part_ms, [2][NWARPS]);
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(FULL_MASK, m, o);
        float s2 = __shfl_xor_sync(FULL_MASK, s, o);
        reg_merge(m, s, m2, s2);
    }
    if (threadIdx.x % 32 == 0) {
        part_ms[0][threadIdx.x / 32] = m;
        part_ms[1][threadIdx.x / 32] = s;
    }
    __syncthreads();
    int lane = threadIdx.x % 32;
    m = lane < NWARPS ? part_ms[0][lane] : ONLINE_EMPTY_M;
    s = lane < NWARPS ? part_ms[1][lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) {
        float m2 = __shfl_xor_sync(FULL_MASK, m, o);
        float s2 = __shfl_xor_sync(FULL_MASK, s, o);
        reg_merge(m, s, m2, s2);
    }
}

/* SPLIT > 1 only: grid.x = rows * SPLIT, block = BLOCK; part[(row * SPLIT + p) * 2 ..] =
 * (max, sum of exp(x - max)) of part p. */
extern "C" __global__ void __launch_bounds__(BLOCK)
softmax_reg_stats(const KB_T *__restrict__ x, float *__restrict__ part, long long rows, long long cols, long long ld)
{
    kb_row_span sp = kb_row_span_of<KB_T, SPLIT>((int)cols);
    const KB_T *xr = x + sp.row * ld;
    uint4 w[NVEC];
    kb_row_load_part<BLOCK, NVEC>(xr, sp, (uintptr_t)xr % 16 == 0, w);
    float m, s;
    reg_block_stats(w, sp, m, s);
    if (threadIdx.x == 0) {
        part[(sp.row * SPLIT + sp.part) * 2] = m;
        part[(sp.row * SPLIT + sp.part) * 2 + 1] = s;
    }
}

/* grid.x = rows * SPLIT, block = BLOCK; part: the workspace softmax_reg_stats filled
 * (SPLIT > 1), unused (null) for SPLIT = 1. */
extern "C" __global__ void __launch_bounds__(BLOCK)
softmax_reg(const KB_T *__restrict__ x, KB_T *__restrict__ y, const float *__restrict__ part, long long rows,
            long long cols, long long ld)
{
    kb_row_span sp = kb_row_span_of<KB_T, SPLIT>((int)cols);
    const KB_T *xr = x + sp.row * ld;
    KB_T *yr = y + sp.row * ld;
    bool aligned = ((uintptr_t)xr | (uintptr_t)yr) % 16 == 0;
    uint4 w[NVEC];
    kb_row_load_part<BLOCK, NVEC>(xr, sp, aligned, w);
    float m, s;
#if SPLIT == 1
    reg_block_stats(w, sp, m, s);
#else
    m = ONLINE_EMPTY_M;
    s = 0.0f;
    for (int i = 0; i < SPLIT; i++)
        reg_merge(m, s, part[(sp.row * SPLIT + i) * 2], part[(sp.row * SPLIT + i) * 2 + 1]);
#endif
    float inv = 1.0f / s, ml = m * L2E;
#pragma unroll
    for (int k = 0; k < NVEC; k++) {
        int c0 = kb_row_col<KB_T, BLOCK>(sp, k);
        rvec_t v = kb_row_unpack<KB_T>(w[k]), out;
#pragma unroll
        for (int j = 0; j < KB_ROWVEC(KB_T); j++)
            out.v[j] = kb_from_float<KB_T>(exp2f(fmaf(kb_to_float(v.v[j]), L2E, -ml)) * inv);
        kb_row_store(yr, c0, sp.end, aligned, out);
    }
}
