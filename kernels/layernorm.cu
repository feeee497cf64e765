/* layernorm.cu - LayerNorm and RMSNorm forward over the last dim of a rows x cols matrix.
 *
 *   KIND_LAYERNORM  y = (x - mean) * rstd * gamma + beta,  rstd = 1 / sqrt(var + eps),
 *                   var the biased variance of the row (as PyTorch and llm.c);
 *   KIND_RMSNORM    y = x * rstd * gamma,                  rstd = 1 / sqrt(mean(x^2) + eps).
 *
 * Layout: x and y are [rows x ld] with ld = cols + pad (the pad axis is row-stride
 * padding: pad = 1 leaves most rows misaligned for vector accesses); gamma and beta are
 * [cols] in the data dtype. Statistics are fp32 for every storage type, and each row's
 * mean (layernorm) and rstd (both kinds) are written as fp32 for the backward pass, as
 * llm.c's layernorm_forward does. eps is a kernel argument.
 *
 * Variants (naive first, after llm.c's layernorm_forward progression):
 *   layernorm_block  one row per block of BLOCK threads; two-pass statistics: the sum
 *                    gives the mean, then the sum of (x - mean)^2 gives the variance
 *                    (centred, so no cancellation as in E[x^2] - E[x]^2), then a third
 *                    pass writes y. Each statistic is a block reduction: warp shuffles,
 *                    one partial per warp through shared memory, then every warp reduces
 *                    the partials. The baseline: x is read three times (twice for
 *                    rmsnorm, which needs only the sum of squares) and short rows leave
 *                    most of the block idle.
 *   layernorm_warp   one row per warp, BLOCK/32 rows per block: no shared memory and no
 *                    __syncthreads, and short rows keep every lane busy. Layernorm
 *                    statistics in a single pass with Welford's update per lane
 *                    (count, mean, M2), merged across lanes with Chan et al.'s pairwise
 *                    formula over shuffles; so x is read twice (statistics, output).
 *   layernorm_vec    one row per warp as warp, with VEC-element (up to 128-bit) accesses
 *                    and the row cached in dynamic shared memory in its storage type
 *                    (llm.c's kernel 6): x is read from global memory exactly once, and
 *                    the statistics are two-pass again, now from the cache, at no extra
 *                    global traffic. A row whose start is not vector aligned (pad, or
 *                    cols not a multiple of VEC) takes a scalar head up to the alignment
 *                    and a scalar tail; the cache slice is offset so that it shares the
 *                    row's alignment, so its vector accesses line up with the global
 *                    ones. gamma/beta take vector loads when the row is aligned (then
 *                    column i of the row and of gamma share the alignment) and scalar
 *                    loads otherwise; they are shared by every row, so caches serve them.
 *
 *   layernorm_reg    a row (or, SPLIT > 1, a SPLIT-th of a row) per block held in
 *                    registers: NVEC 16-byte loads per thread issued before any use, one
 *                    pass of statistics over the registers, y stored from the registers
 *                    with 16-byte stores; x read from global memory once (SPLIT = 1).
 *                    SPLIT > 1 adds a statistics kernel (layernorm_reg_stats) so that
 *                    decode-sized inputs use the GPU. Details above the kernels.
 *
 * Defines (from the harness): KB_T storage type, KIND (KIND_LAYERNORM | KIND_RMSNORM),
 * BLOCK threads per block, VEC elements per vector access (layernorm_vec only), NVEC
 * vectors per thread and SPLIT blocks per row (layernorm_reg only).
 * BROKEN_Y_SCALE (tests only) scales every y, to prove that verification catches it.
 * Launch: block: grid.x = rows; warp and vec: grid.x = ceil(rows / (BLOCK / 32));
 * vec: dynamic shared memory = BLOCK / 32 * VEC_SLICE(cols) * sizeof(KB_T);
 * reg: grid.x = rows * SPLIT (layernorm_reg_stats first when SPLIT > 1).
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
#ifndef KIND_LAYERNORM
#define KIND_LAYERNORM 0
#define KIND_RMSNORM 1
#endif
#ifndef KIND
#define KIND KIND_LAYERNORM
#endif

#define NWARPS (BLOCK / 32)
#define FULL_MASK 0xffffffffu

static_assert(BLOCK % 32 == 0 && BLOCK >= 32 && BLOCK <= 1024,
              "BLOCK must be a multiple of the warp size (32), at most 1024: rows are owned by whole warps");
static_assert(VEC == 1 || VEC == 2 || VEC == 4 || VEC == 8, "VEC must be 1, 2, 4 or 8 elements");
static_assert(sizeof(KB_T) * VEC <= 16, "VEC x sizeof(KB_T) must fit one 128-bit access");
static_assert(NVEC >= 1 && NVEC <= 16, "NVEC (16-byte vectors of a row per thread, in registers) must be 1..16");
static_assert(SPLIT >= 1 && SPLIT <= 64, "SPLIT (blocks per row) must be 1..64");
static_assert(KIND == KIND_LAYERNORM || KIND == KIND_RMSNORM, "KIND must be KIND_LAYERNORM or KIND_RMSNORM");

/* Elements of one warp's cache slice in layernorm_vec: room for cols elements after an
 * offset of up to VEC-1 (the row's misalignment), rounded up to whole vectors so that
 * the next slice starts vector aligned. The host computes the same number. */
#define VEC_SLICE(cols) ((((long long)(cols) + 2 * VEC - 2) / VEC) * VEC)

/* ---------------------------------- reductions ---------------------------------- */

/* Sums come from kb_reduce.h. layernorm_block reduces twice through the same partials
 * array, so its block sums end with a barrier (KB_REDUCE_TAIL_BARRIER). */

/* Merge Welford states (n, mean, m2) across the warp (Chan, Golub and LeVeque's
 * pairwise update): n = na + nb, d = mb - ma, mean = ma + d * nb / n,
 * m2 = m2a + m2b + d^2 * na * nb / n. The update is not bitwise symmetric in its two
 * operands (nor under fma contraction), so lane 0's result is broadcast: every lane
 * of the row then normalises with the same statistics it writes. */
__device__ __forceinline__ void welford_merge(float &n, float &mean, float &m2, float nb, float mb, float m2b)
{
    float nn = n + nb;
    float wb = nn > 0.0f ? nb / nn : 0.0f; /* lanes past a short row hold n = 0 */
    float d = mb - mean;
    mean += d * wb;
    m2 += m2b + d * d * n * wb;
    n = nn;
}

__device__ __forceinline__ void warp_welford(float &n, float &mean, float &m2)
{
    for (int o = 16; o > 0; o >>= 1) {
        float nb = __shfl_xor_sync(FULL_MASK, n, o);
        float mb = __shfl_xor_sync(FULL_MASK, mean, o);
        float m2b = __shfl_xor_sync(FULL_MASK, m2, o);
        welford_merge(n, mean, m2, nb, mb, m2b);
    }
    mean = __shfl_sync(FULL_MASK, mean, 0);
    m2 = __shfl_sync(FULL_MASK, m2, 0);
}

/* --------------------------------- element math --------------------------------- */

/* What the first statistics pass accumulates: x (layernorm's mean) or x^2 (rmsnorm). */
__device__ __forceinline__ float stat_term(float v)
{
#if KIND == KIND_RMSNORM
    return v * v;
#else
    return v;
#endif
}

/* beta[i] as float; rmsnorm has no shift and never reads beta (the host passes null). */
__device__ __forceinline__ float beta_at(const KB_T *beta, int i)
{
#if KIND == KIND_RMSNORM
    return 0.0f;
#else
    return kb_to_float(beta[i]);
#endif
}

/* Tests only (tests/test_layernorm.c): a factor on every y, so a kernel a few percent off
 * can be shown to fail verification. 1 (the default) is folded away. */
#ifndef BROKEN_Y_SCALE
#define BROKEN_Y_SCALE 1.0f
#endif

/* One output element; rmsnorm ignores mean and b. */
__device__ __forceinline__ float norm_out(float v, float mean, float rstd, float g, float b)
{
#if KIND == KIND_RMSNORM
    return v * rstd * g * BROKEN_Y_SCALE;
#else
    return ((v - mean) * rstd * g + b) * BROKEN_Y_SCALE;
#endif
}

__device__ __forceinline__ void write_stats(float *mean_out, float *rstd_out, long long row, float mean, float rstd)
{
#if KIND == KIND_LAYERNORM
    mean_out[row] = mean;
#endif
    rstd_out[row] = rstd;
}

/* ------------------------------------ kernels ------------------------------------ */

/* grid.x = rows, block = BLOCK. */
extern "C" __global__ void __launch_bounds__(BLOCK)
layernorm_block(const KB_T *__restrict__ x, const KB_T *__restrict__ gamma, const KB_T *__restrict__ beta,
                KB_T *__restrict__ y, float *__restrict__ mean_out, float *__restrict__ rstd_out,
                long long rows, int cols, long long ld, float eps)
{
    long long row = blockIdx.x;
    const KB_T *xr = x + row * ld;
    KB_T *yr = y + row * ld;

    float s = 0.0f;
    for (int i = threadIdx.x; i < cols; i += BLOCK)
        s += stat_term(kb_to_float(xr[i]));
    s = kb_block_sum<BLOCK, KB_REDUCE_TAIL_BARRIER>(s);
#if KIND == KIND_RMSNORM
    float mean = 0.0f, var = s / cols;          /* var here is mean(x^2) */
#else
    float mean = s / cols, q = 0.0f;
    for (int i = threadIdx.x; i < cols; i += BLOCK) {
        float d = kb_to_float(xr[i]) - mean;
        q += d * d;
    }
    float var = kb_block_sum<BLOCK, KB_REDUCE_TAIL_BARRIER>(q) / cols;
#endif
    float rstd = rsqrtf(var + eps);

    for (int i = threadIdx.x; i < cols; i += BLOCK) {
        yr[i] = kb_from_float<KB_T>(norm_out(kb_to_float(xr[i]), mean, rstd, kb_to_float(gamma[i]), beta_at(beta, i)));
    }
    if (threadIdx.x == 0)
        write_stats(mean_out, rstd_out, row, mean, rstd);
}

/* grid.x = ceil(rows / NWARPS), block = BLOCK: warp w of block b owns row b * NWARPS + w. */
extern "C" __global__ void __launch_bounds__(BLOCK)
layernorm_warp(const KB_T *__restrict__ x, const KB_T *__restrict__ gamma, const KB_T *__restrict__ beta,
               KB_T *__restrict__ y, float *__restrict__ mean_out, float *__restrict__ rstd_out,
               long long rows, int cols, long long ld, float eps)
{
    long long row = (long long)blockIdx.x * NWARPS + threadIdx.x / 32;
    if (row >= rows)
        return; /* the whole warp leaves: it takes part in no shuffle */
    int lane = threadIdx.x % 32;
    const KB_T *xr = x + row * ld;
    KB_T *yr = y + row * ld;

#if KIND == KIND_RMSNORM
    float s = 0.0f;
    for (int i = lane; i < cols; i += 32)
        s += stat_term(kb_to_float(xr[i]));
    float mean = 0.0f, var = kb_warp_sum(s) / cols;
#else
    /* Welford: one pass, and each update is centred on the running mean. */
    float n = 0.0f, mean = 0.0f, m2 = 0.0f;
    for (int i = lane; i < cols; i += 32) {
        float v = kb_to_float(xr[i]);
        n += 1.0f;
        float d = v - mean;
        mean += d / n;
        m2 += d * (v - mean);
    }
    warp_welford(n, mean, m2);
    float var = m2 / cols;
#endif
    float rstd = rsqrtf(var + eps);

    for (int i = lane; i < cols; i += 32) {
        yr[i] = kb_from_float<KB_T>(norm_out(kb_to_float(xr[i]), mean, rstd, kb_to_float(gamma[i]), beta_at(beta, i)));
    }
    if (lane == 0)
        write_stats(mean_out, rstd_out, row, mean, rstd);
}

typedef kb_vec<KB_T, VEC> vec_t;

/* VEC elements from p: one vector access when p is aligned, else element by element. */
__device__ __forceinline__ vec_t load_vec_or_scalar(const KB_T *p, bool aligned)
{
    if (aligned)
        return kb_load_vec<VEC>(p);
    vec_t r;
#pragma unroll
    for (int k = 0; k < VEC; k++)
        r.v[k] = p[k];
    return r;
}

/* grid.x = ceil(rows / NWARPS), block = BLOCK, dynamic shared memory
 * NWARPS * VEC_SLICE(cols) * sizeof(KB_T). Each lane touches the same cache elements
 * in every pass (head element i: lane i; vector v: lane v % 32; tail element t:
 * lane t), so it only reads back what it wrote itself; the __syncwarp documents the
 * hand-over and keeps it correct if that ownership ever changes. */
extern "C" __global__ void __launch_bounds__(BLOCK)
layernorm_vec(const KB_T *__restrict__ x, const KB_T *__restrict__ gamma, const KB_T *__restrict__ beta,
              KB_T *__restrict__ y, float *__restrict__ mean_out, float *__restrict__ rstd_out,
              long long rows, int cols, long long ld, float eps)
{
    KB_DYN_SHARED(KB_T, cache);
    const unsigned long long vbytes = sizeof(KB_T) * VEC;
    int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    long long row = (long long)blockIdx.x * NWARPS + warp;
    if (row >= rows)
        return; /* the whole warp leaves: no barrier below spans warps */
    const KB_T *xr = x + row * ld;
    KB_T *yr = y + row * ld;

    /* head: elements before xr reaches the vector alignment. y must share x's
     * misalignment for the vector body; when it does not, the row goes scalar. */
    int off = (int)((uintptr_t)xr % vbytes / sizeof(KB_T));
    int head = off ? VEC - off : 0;
    if (head > cols || (uintptr_t)yr % vbytes != (uintptr_t)xr % vbytes)
        head = cols;
    int body_end = head + (cols - head) / VEC * VEC;
    /* element i of the row lives at c[i]; c + head is vector aligned like xr + head */
    KB_T *c = cache + warp * VEC_SLICE(cols) + off;
    /* column head + j*VEC of gamma/beta is aligned exactly when head is 0 */
    bool params_aligned = head == 0 && (uintptr_t)gamma % vbytes == 0 &&
                          (KIND == KIND_RMSNORM || (uintptr_t)beta % vbytes == 0);

    /* pass 1: the only read of x from global memory, into the cache */
    float s = 0.0f;
    for (int i = lane; i < head; i += 32) {
        c[i] = xr[i];
        s += stat_term(kb_to_float(c[i]));
    }
    for (int i = head + lane * VEC; i < body_end; i += 32 * VEC) {
        vec_t in = kb_load_vec<VEC>(xr + i);
        kb_store_vec<VEC>(c + i, in);
#pragma unroll
        for (int k = 0; k < VEC; k++)
            s += stat_term(kb_to_float(in.v[k]));
    }
    for (int i = body_end + lane; i < cols; i += 32) {
        c[i] = xr[i];
        s += stat_term(kb_to_float(c[i]));
    }
    __syncwarp();
    s = kb_warp_sum(s);

#if KIND == KIND_RMSNORM
    float mean = 0.0f, var = s / cols;
#else
    /* pass 2, from the cache: the centred sum of squares */
    float mean = s / cols, q = 0.0f;
    for (int i = lane; i < head; i += 32) {
        float d = kb_to_float(c[i]) - mean;
        q += d * d;
    }
    for (int i = head + lane * VEC; i < body_end; i += 32 * VEC) {
        vec_t in = kb_load_vec<VEC>(c + i);
#pragma unroll
        for (int k = 0; k < VEC; k++) {
            float d = kb_to_float(in.v[k]) - mean;
            q += d * d;
        }
    }
    for (int i = body_end + lane; i < cols; i += 32) {
        float d = kb_to_float(c[i]) - mean;
        q += d * d;
    }
    float var = kb_warp_sum(q) / cols;
#endif
    float rstd = rsqrtf(var + eps);

    /* pass 3, from the cache: y */
    for (int i = lane; i < head; i += 32) {
        yr[i] = kb_from_float<KB_T>(norm_out(kb_to_float(c[i]), mean, rstd, kb_to_float(gamma[i]), beta_at(beta, i)));
    }
    for (int i = head + lane * VEC; i < body_end; i += 32 * VEC) {
        vec_t in = kb_load_vec<VEC>(c + i), g = load_vec_or_scalar(gamma + i, params_aligned), out;
#if KIND == KIND_RMSNORM
        vec_t b = g; /* unused: rmsnorm has no shift */
#else
        vec_t b = load_vec_or_scalar(beta + i, params_aligned);
#endif
#pragma unroll
        for (int k = 0; k < VEC; k++)
            out.v[k] = kb_from_float<KB_T>(
                norm_out(kb_to_float(in.v[k]), mean, rstd, kb_to_float(g.v[k]), kb_to_float(b.v[k])));
        kb_store_vec<VEC>(yr + i, out);
    }
    for (int i = body_end + lane; i < cols; i += 32) {
        yr[i] = kb_from_float<KB_T>(norm_out(kb_to_float(c[i]), mean, rstd, kb_to_float(gamma[i]), beta_at(beta, i)));
    }
    if (lane == 0)
        write_stats(mean_out, rstd_out, row, mean, rstd);
}

/* ------------------------- reg: the row in registers, SPLIT ------------------------- */

/* layernorm_reg (after llm.c's layernorm_forward kernel 6 and Apex's fused layer norm):
 * one row per block of BLOCK threads, or with SPLIT > 1 one SPLIT-th of a row per block.
 * Thread t holds vectors k = 0..NVEC-1 of its part at columns begin + (k * BLOCK + t) *
 * RVEC, RVEC = 16 / sizeof(KB_T) elements each (8 for 16-bit types, 4 for fp32): all
 * NVEC 16-byte loads are issued before the first use, so a thread keeps NVEC x 16 bytes
 * in flight, and x is never re-read for the output. NVEC is a compile-time bound: a
 * block holds at most BLOCK x NVEC x RVEC elements (valid() refuses longer parts).
 *
 * Statistics in one pass over the registers: each thread's (n, mean, M2) exactly (its
 * mean, then its centred squares, all from registers), merged across the warp and the
 * block with Chan's pairwise formula (welford_merge); rmsnorm sums squares. So the
 * accuracy is that of the two-pass kernels: fp32 statistics, no E[x^2] - E[x]^2
 * cancellation, the same tolerance (layernorm.c).
 *
 * SPLIT > 1 (decode: 16 rows would use 16 blocks of a 132-SM GPU): layernorm_reg_stats
 * writes each part's (n, mean, M2) to a workspace part[rows x SPLIT x 3], then
 * layernorm_reg loads its part into registers again (from L2: the first kernel just read
 * it), merges the row's SPLIT partials in part order - so every block of a row computes
 * bitwise the same statistics - and writes its part of y. A one-kernel form would need the
 * blocks of a row to wait for each other, which only a cooperative launch or an sm_90
 * thread-block cluster guarantees (not available on the emulator, see docs/estimate.md).
 *
 * Rows whose x or y start is not 16-byte aligned (pad) and the last, partial vector of a
 * part are loaded and stored element by element into the same registers; elements past
 * the part read as 0 and count in no statistic. */

typedef kb_rowvec<KB_T> rvec_t;
typedef kb_row_span reg_span;
#define RVEC KB_ROWVEC(KB_T)

typedef struct {
    float n, mean, m2;   /* layernorm: count, mean, centred sum of squares; rmsnorm: m2 = sum of x^2 */
} reg_stats;

__device__ __forceinline__ int reg_col(const reg_span &s, int k)
{
    return kb_row_col<KB_T, BLOCK>(s, k);
}

/* The block's statistics of its part, returned to every thread. Called once per kernel. */
__device__ __forceinline__ reg_stats reg_block_stats(const uint4 (&w)[NVEC], const reg_span &s)
{
    reg_stats st;
#if KIND == KIND_RMSNORM
    float q = 0.0f;   /* elements past the part are 0 */
#pragma unroll
    for (int k = 0; k < NVEC; k++) {
        rvec_t v = kb_row_unpack<KB_T>(w[k]);
#pragma unroll
        for (int j = 0; j < RVEC; j++)
            q += stat_term(kb_to_float(v.v[j]));
    }
    st.n = (float)(s.end - s.begin);
    st.mean = 0.0f;
    st.m2 = kb_block_sum<BLOCK, KB_REDUCE_TAIL_NONE>(q);
#else
    float n = 0.0f, sum = 0.0f, m2 = 0.0f;
#pragma unroll
    for (int k = 0; k < NVEC; k++) {
        rvec_t v = kb_row_unpack<KB_T>(w[k]);
#pragma unroll
        for (int j = 0; j < RVEC; j++)
            if (reg_col(s, k) + j < s.end) {
                n += 1.0f;
                sum += kb_to_float(v.v[j]);
            }
    }
    float mean = n > 0.0f ? sum / n : 0.0f;
#pragma unroll
    for (int k = 0; k < NVEC; k++) {
        rvec_t v = kb_row_unpack<KB_T>(w[k]);
#pragma unroll
        for (int j = 0; j < RVEC; j++)
            if (reg_col(s, k) + j < s.end) {
                float d = kb_to_float(v.v[j]) - mean;
                m2 += d * d;
            }
    }
    KB_SHARED(float, part_w, [3][NWARPS]);
    warp_welford(n, mean, m2);
    if (threadIdx.x % 32 == 0) {
        part_w[0][threadIdx.x / 32] = n;
        part_w[1][threadIdx.x / 32] = mean;
        part_w[2][threadIdx.x / 32] = m2;
    }
    __syncthreads();
    int lane = threadIdx.x % 32;
    st.n = lane < NWARPS ? part_w[0][lane] : 0.0f;
    st.mean = lane < NWARPS ? part_w[1][lane] : 0.0f;
    st.m2 = lane < NWARPS ? part_w[2][lane] : 0.0f;
    warp_welford(st.n, st.mean, st.m2);
#endif
    return st;
}

/* The row's statistics from its SPLIT partials p[SPLIT x 3], merged in part order. */
__device__ __forceinline__ reg_stats reg_merge_parts(const float *p)
{
    reg_stats st = { 0.0f, 0.0f, 0.0f };
    for (int i = 0; i < SPLIT; i++) {
#if KIND == KIND_RMSNORM
        st.m2 += p[3 * i + 2];
#else
        welford_merge(st.n, st.mean, st.m2, p[3 * i], p[3 * i + 1], p[3 * i + 2]);
#endif
    }
    return st;
}

/* y of this thread's vectors from registers: 16-byte stores where aligned and whole.
 * gamma and beta are loaded here, not held across the reduction: they are the same for
 * every row, so caches serve them, and holding them would triple the registers. */
__device__ __forceinline__ void reg_write_part(KB_T *yr, const KB_T *gamma, const KB_T *beta, const reg_span &s,
                                               bool aligned, bool params_aligned, const uint4 (&w)[NVEC], float mean,
                                               float rstd)
{
#pragma unroll
    for (int k = 0; k < NVEC; k++) {
        int c0 = reg_col(s, k);
        rvec_t v = kb_row_unpack<KB_T>(w[k]), g = kb_row_load(gamma, c0, s.end, params_aligned), out;
#if KIND == KIND_RMSNORM
        rvec_t b = g;   /* unused: rmsnorm has no shift */
#else
        rvec_t b = kb_row_load(beta, c0, s.end, params_aligned);
#endif
#pragma unroll
        for (int j = 0; j < RVEC; j++)
            out.v[j] = kb_from_float<KB_T>(
                norm_out(kb_to_float(v.v[j]), mean, rstd, kb_to_float(g.v[j]), kb_to_float(b.v[j])));
        kb_row_store(yr, c0, s.end, aligned, out);
    }
}

/* SPLIT > 1 only: grid.x = rows * SPLIT, block = BLOCK; part[(row * SPLIT + p) * 3 ..]
 * = (n, mean, M2) of part p (rmsnorm: (n, 0, sum of x^2)). */
extern "C" __global__ void __launch_bounds__(BLOCK)
layernorm_reg_stats(const KB_T *__restrict__ x, float *__restrict__ part, long long rows, int cols, long long ld)
{
    reg_span s = kb_row_span_of<KB_T, SPLIT>(cols);
    const KB_T *xr = x + s.row * ld;
    uint4 v[NVEC];
    kb_row_load_part<BLOCK, NVEC>(xr, s, (uintptr_t)xr % 16 == 0, v);
    reg_stats st = reg_block_stats(v, s);
    if (threadIdx.x == 0) {
        float *p = part + (s.row * SPLIT + s.part) * 3;
        p[0] = st.n;
        p[1] = st.mean;
        p[2] = st.m2;
    }
}

/* grid.x = rows * SPLIT, block = BLOCK; part: the workspace layernorm_reg_stats filled
 * (SPLIT > 1), unused (null) for SPLIT = 1. */
extern "C" __global__ void __launch_bounds__(BLOCK)
layernorm_reg(const KB_T *__restrict__ x, const KB_T *__restrict__ gamma, const KB_T *__restrict__ beta,
              KB_T *__restrict__ y, float *__restrict__ mean_out, float *__restrict__ rstd_out,
              const float *__restrict__ part, long long rows, int cols, long long ld, float eps)
{
    reg_span s = kb_row_span_of<KB_T, SPLIT>(cols);
    const KB_T *xr = x + s.row * ld;
    KB_T *yr = y + s.row * ld;
    bool aligned = ((uintptr_t)xr | (uintptr_t)yr) % 16 == 0;
    bool params_aligned = (uintptr_t)gamma % 16 == 0 && (KIND == KIND_RMSNORM || (uintptr_t)beta % 16 == 0);
    uint4 v[NVEC];
    kb_row_load_part<BLOCK, NVEC>(xr, s, aligned, v);
#if SPLIT == 1
    reg_stats st = reg_block_stats(v, s);
#else
    reg_stats st = reg_merge_parts(part + s.row * SPLIT * 3);
#endif
    float rstd = rsqrtf(st.m2 / cols + eps);   /* rmsnorm: m2 / cols = mean(x^2) */
    reg_write_part(yr, gamma, beta, s, aligned, params_aligned, v, st.mean, rstd);
    if (s.part == 0 && threadIdx.x == 0)
        write_stats(mean_out, rstd_out, s.row, st.mean, rstd);
}
