/* kb_rowvec.h - a row, or a SPLIT-th of one, held in registers by one block: the layout
 * and the 16-byte global accesses shared by layernorm_reg and softmax_reg. Include after
 * kb_device.h.
 *
 *   kb_rowvec<T>, KB_ROWVEC(T)   the 16-byte vector of T and its element count (8 for a
 *                                16-bit type, 4 for fp32);
 *   kb_row_span_of<T, SPLIT>     block b's columns [begin, end) of row b / SPLIT: part
 *                                b % SPLIT, parts ceil(cols / SPLIT) rounded up to whole
 *                                vectors, so a part starts 16-byte aligned when its row
 *                                does; the last parts may be short or empty;
 *   kb_row_col<T, BLOCK>(s, k)   the first column of thread t's vector k: begin + (k *
 *                                BLOCK + t) * KB_ROWVEC(T) - consecutive threads,
 *                                consecutive 16 bytes;
 *   kb_row_load(p, c0, end, al)  the vector at column c0: one 16-byte load when al (the
 *                                row is aligned) and the vector whole, else element by
 *                                element; elements at or past end read as 0;
 *   kb_row_load_part<BLOCK, NVEC>  a thread's NVEC vectors of the part, every load issued
 *                                before any use, kept as packed 32-bit words (uint4): 8
 *                                halves in 4 registers rather than 8;
 *   kb_row_pack / kb_row_unpack  uint4 <-> kb_rowvec<T>;
 *   kb_store16(p, v)             one st.global.v4.b32 on the GPU. kb_store_vec's copy
 *                                through memcpy lets NVVM split a 16-byte vector of 16-bit
 *                                elements into four 4-byte stores (tests/test_ptx.c); packed
 *                                words stored by inline PTX cannot be split. The emulator
 *                                stores through kb_store_vec, which checks the alignment.
 * The host repeats the part length in each family's valid() (reg_part_len).
 */
#ifndef KB_ROWVEC_H
#define KB_ROWVEC_H

#define KB_ROWVEC(T) ((int)(16 / sizeof(T)))

template <class T> using kb_rowvec = kb_vec<T, 16 / sizeof(T)>;

typedef struct {
    long long row;
    int part, begin, end;   /* columns [begin, end) of the row */
} kb_row_span;

template <class T, int SPLIT_> __device__ __forceinline__ kb_row_span kb_row_span_of(int cols)
{
    const int rv = KB_ROWVEC(T);
    kb_row_span s;
    s.row = (long long)blockIdx.x / SPLIT_;
    s.part = (int)(blockIdx.x % SPLIT_);
    int len = ((cols + SPLIT_ - 1) / SPLIT_ + rv - 1) / rv * rv;
    long long b = (long long)s.part * len;
    s.begin = b < cols ? (int)b : cols;
    s.end = cols - s.begin < len ? cols : s.begin + len;
    return s;
}

template <class T, int BLOCK_> __device__ __forceinline__ int kb_row_col(const kb_row_span &s, int k)
{
    return s.begin + (k * BLOCK_ + (int)threadIdx.x) * KB_ROWVEC(T);
}

template <class T> __device__ __forceinline__ kb_rowvec<T> kb_row_load(const T *p, int c0, int end, bool aligned)
{
    if (aligned && c0 + KB_ROWVEC(T) <= end)
        return kb_load_vec<KB_ROWVEC(T)>(p + c0);
    kb_rowvec<T> v;
#pragma unroll
    for (int j = 0; j < KB_ROWVEC(T); j++)
        v.v[j] = c0 + j < end ? p[c0 + j] : kb_from_float<T>(0.0f);
    return v;
}

template <class T> __device__ __forceinline__ uint4 kb_row_pack(const kb_rowvec<T> &v)
{
    uint4 w;
    memcpy(&w, &v, 16);
    return w;
}

template <class T> __device__ __forceinline__ kb_rowvec<T> kb_row_unpack(const uint4 &w)
{
    kb_rowvec<T> v;
    memcpy(&v, &w, 16);
    return v;
}

template <int BLOCK_, int NVEC_, class T>
__device__ __forceinline__ void kb_row_load_part(const T *p, const kb_row_span &s, bool aligned, uint4 (&w)[NVEC_])
{
#pragma unroll
    for (int k = 0; k < NVEC_; k++)
        w[k] = kb_row_pack<T>(kb_row_load(p, kb_row_col<T, BLOCK_>(s, k), s.end, aligned));
}

template <class T> __device__ __forceinline__ void kb_store16(T *p, const kb_rowvec<T> &v)
{
#if !defined(KB_EMU)
    uint32_t w[4];
    memcpy(w, &v, 16);
    asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(__cvta_generic_to_global(p)), "r"(w[0]),
                 "r"(w[1]), "r"(w[2]), "r"(w[3]) : "memory");
#else
    kb_store_vec<KB_ROWVEC(T)>(p, v);
#endif
}

/* A thread's vector k of its part stored from v: one 16-byte store when aligned and
 * whole, else element by element up to end. */
template <class T> __device__ __forceinline__ void kb_row_store(T *p, int c0, int end, bool aligned,
                                                                const kb_rowvec<T> &v)
{
    if (aligned && c0 + KB_ROWVEC(T) <= end) {
        kb_store16(p + c0, v);
        return;
    }
#pragma unroll
    for (int j = 0; j < KB_ROWVEC(T); j++)
        if (c0 + j < end)
            p[c0 + j] = v.v[j];
}

#endif /* KB_ROWVEC_H */
