/* emu_sm90.cu - test kernels for the sm_90 machinery (tests/test_emu_sm90.c), built with
 * KB_ARCH=90 KB_ARCH_SPECIFIC=1: mbarrier phase sequences and each mbarrier rule broken, TMA
 * loads and stores through tensor maps, wgmma on shared-memory images the test lays out, a
 * TMA -> mbarrier -> wgmma pipeline, and kernels that break the TMA, wgmma, proxy, named
 * barrier and setmaxnreg rules. Valid for both backends (the NVRTC test compiles it). */
#include "kb_device.h"

/* ---- mbarrier ---- */
/* 64 threads, count 64: out[3 * i] = parity waits of phase 0 and 1; thread 0 also records the
 * state tokens. Warp 1 arrives late (after a named barrier pair) so phase 0 is seen pending. */
extern "C" __global__ void mbar_phases(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    int i = (int)threadIdx.x;
    if (i == 0)
        kb_mbar_init(&bar[0], 64);
    __syncthreads();
    int before = kb_mbar_test_wait_parity(&bar[0], 0);          /* phase 0 not complete: 0 */
    uint64_t st = kb_mbar_arrive(&bar[0]);
    kb_mbar_wait_parity(&bar[0], 0);                             /* phase 0 completes */
    int after = kb_mbar_test_wait(&bar[0], st);                  /* 1 */
    /* phase 1: 64 arrivals, one with 16 transaction bytes, which thread 0 completes */
    uint64_t st1 = i == 0 ? kb_mbar_arrive_expect_tx(&bar[0], 16) : kb_mbar_arrive(&bar[0]);
    if (i == 0)
        kb_mbar_complete_tx(&bar[0], 16);
    kb_mbar_wait_parity(&bar[0], 1);
    out[3 * i] = before;
    out[3 * i + 1] = after;
    out[3 * i + 2] = (int)(st1 - st);                            /* 1: tokens of consecutive phases */
}

extern "C" __global__ void mbar_use_before_init(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    out[threadIdx.x] = (int)kb_mbar_arrive(&bar[0]);
}

extern "C" __global__ void mbar_stale_parity(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    if (threadIdx.x == 0)
        kb_mbar_init(&bar[0], 32);
    __syncthreads();
    kb_mbar_arrive(&bar[0]);
    kb_mbar_wait_parity(&bar[0], 0);
    kb_mbar_wait_parity(&bar[0], 0);   /* the bug: parity not flipped; phase 0 seen already */
    out[threadIdx.x] = 1;
}

extern "C" __global__ void mbar_tx_overflow(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    if (threadIdx.x == 0) {
        kb_mbar_init(&bar[0], 1);
        kb_mbar_expect_tx(&bar[0], 1u << 19);
        kb_mbar_expect_tx(&bar[0], 1u << 19);   /* 2^20 > 2^20 - 1 */
    }
    out[threadIdx.x] = 1;
}

extern "C" __global__ void mbar_tx_underflow(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    if (threadIdx.x == 0) {
        kb_mbar_init(&bar[0], 1);
        kb_mbar_complete_tx(&bar[0], 1u << 19);
        kb_mbar_complete_tx(&bar[0], 1u << 19);
    }
    out[threadIdx.x] = 1;
}

/* 64 threads wait for 65 arrivals: a deadlock. */
extern "C" __global__ void mbar_deadlock(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    if (threadIdx.x == 0)
        kb_mbar_init(&bar[0], 65);
    __syncthreads();
    kb_mbar_arrive(&bar[0]);
    kb_mbar_wait_parity(&bar[0], 0);
    out[threadIdx.x] = 1;
}

extern "C" __global__ void mbar_overwritten(int *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    if (threadIdx.x == 0) {
        kb_mbar_init(&bar[0], 1);
        bar[0] = 0;                  /* an ordinary store over the opaque object */
        kb_mbar_arrive(&bar[0]);
    }
    out[threadIdx.x] = 1;
}

/* ---- TMA ---- */
/* One thread loads the box at (c0..c4) into dynamic shared memory (offset `at`) and, after the
 * wait (skip_wait: without it), every thread copies the box's bytes out. */
extern "C" __global__ void tma_load_box(const __grid_constant__ kb_tmap tm, unsigned char *out, int bytes, int rank,
                                        int c0, int c1, int c2, int c3, int c4, int at, int skip_wait)
{
    KB_SHARED(uint64_t, bar, [1]);
    KB_DYN_SHARED(unsigned char, smem);
    if (threadIdx.x == 0) {
        kb_mbar_init(&bar[0], 1);
        kb_fence_proxy_async();
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        kb_mbar_arrive_expect_tx(&bar[0], (unsigned)bytes);
        if (rank == 1) kb_tma_load(smem + at, &tm, &bar[0], c0);
        if (rank == 2) kb_tma_load(smem + at, &tm, &bar[0], c0, c1);
        if (rank == 3) kb_tma_load(smem + at, &tm, &bar[0], c0, c1, c2);
        if (rank == 4) kb_tma_load(smem + at, &tm, &bar[0], c0, c1, c2, c3);
        if (rank == 5) kb_tma_load(smem + at, &tm, &bar[0], c0, c1, c2, c3, c4);
    }
    if (!skip_wait)
        kb_mbar_wait_parity(&bar[0], 0);
    for (int i = (int)threadIdx.x; i < bytes; i += (int)blockDim.x)
        out[i] = smem[at + i];
}

/* Every thread writes its share of the box (from in) into shared memory; thread 0 stores it
 * to global memory at (c0..c4). no_fence: the writers skip fence.proxy.async; early_write:
 * thread 0 overwrites the source right after issuing the store. */
extern "C" __global__ void tma_store_box(const __grid_constant__ kb_tmap tm, const unsigned char *in, int bytes,
                                         int rank, int c0, int c1, int c2, int c3, int c4, int no_fence,
                                         int early_write)
{
    KB_DYN_SHARED(unsigned char, smem);
    for (int i = (int)threadIdx.x; i < bytes; i += (int)blockDim.x)
        smem[i] = in[i];
    if (!no_fence)
        kb_fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {
        if (rank == 1) kb_tma_store(&tm, smem, c0);
        if (rank == 2) kb_tma_store(&tm, smem, c0, c1);
        if (rank == 3) kb_tma_store(&tm, smem, c0, c1, c2);
        if (rank == 4) kb_tma_store(&tm, smem, c0, c1, c2, c3);
        if (rank == 5) kb_tma_store(&tm, smem, c0, c1, c2, c3, c4);
        kb_bulk_commit();
        if (early_write)
            smem[0] ^= 1;
        kb_bulk_wait_read<0>();
        kb_bulk_wait<0>();
    }
}

/* ---- wgmma: one instruction on shared images laid out by the test ---- */
/* a, b: the bytes of the A and B operand images (A at dynamic offset 0, B at b_at), c: the
 * 128 threads' accumulator registers in, d: out (words per thread = nw). */
template <class F>
__device__ void wg_run(const unsigned char *a, int a_bytes, const unsigned char *b, int b_bytes, int b_at,
                       const uint32_t *c, uint32_t *d, int nw, F f)
{
    KB_DYN_SHARED(unsigned char, smem);
    int i = (int)threadIdx.x;
    for (int k = i; k < a_bytes; k += 128)
        smem[k] = a[k];
    for (int k = i; k < b_bytes; k += 128)
        smem[b_at + k] = b[k];
    kb_fence_proxy_async();
    __syncthreads();
    uint32_t acc[128];
    for (int k = 0; k < nw; k++)
        acc[k] = c[i * nw + k];
    kb_wgmma_fence();
    f(acc, smem, smem + b_at);
    kb_wgmma_commit();
    kb_wgmma_wait<0>();
    for (int k = 0; k < nw; k++)
        d[i * nw + k] = acc[k];
}

#define WG_ENTRY(name, NW, body)                                                                        \
    extern "C" __global__ void name(const unsigned char *a, int a_bytes, const unsigned char *b, int b_bytes, \
                                    int b_at, const uint32_t *c, uint32_t *d, int sw_a, int lbo_a, int sbo_a,  \
                                    int sw_b, int lbo_b, int sbo_b)                                    \
    {                                                                                                  \
        wg_run(a, a_bytes, b, b_bytes, b_at, c, d, NW,                                                 \
               [&](uint32_t *acc, unsigned char *sa, unsigned char *sb) {                              \
                   uint64_t da = kb_wgmma_desc(sa, sw_a, (uint32_t)lbo_a, (uint32_t)sbo_a);            \
                   uint64_t db = kb_wgmma_desc(sb, sw_b, (uint32_t)lbo_b, (uint32_t)sbo_b);            \
                   (void)da;                                                                           \
                   body;                                                                               \
               });                                                                                     \
    }
#define F32_(n) (*reinterpret_cast<float(*)[n / 2]>(acc))
#define S32_(n) (*reinterpret_cast<int(*)[n / 2]>(acc))
#define U32_(n) (*reinterpret_cast<uint32_t(*)[n / 4]>(acc))
WG_ENTRY(wg_bf16_n64, 32, (kb_wgmma_f32_bf16<64>(F32_(64), da, db, 1)))
WG_ENTRY(wg_bf16_n256, 128, (kb_wgmma_f32_bf16<256>(F32_(256), da, db, 1)))
WG_ENTRY(wg_f16_n128_tb, 64, (kb_wgmma_f32_f16<128, 0, 0, 0, 1>(F32_(128), da, db, 1)))
WG_ENTRY(wg_f16_n64_ta_tb, 32, (kb_wgmma_f32_f16<64, 0, 0, 1, 1>(F32_(64), da, db, 1)))
WG_ENTRY(wg_f16_n64_neg, 32, (kb_wgmma_f32_f16<64, 1, 0>(F32_(64), da, db, 1)))
WG_ENTRY(wg_f16acc_n64, 16, (kb_wgmma_f16_f16<64>(U32_(64), da, db, 1)))
WG_ENTRY(wg_tf32_n16, 8, (kb_wgmma_f32_tf32<16>(F32_(16), da, db, 1)))
WG_ENTRY(wg_e4m3_n64, 32, (kb_wgmma_f32_e4m3<64>(F32_(64), da, db, 1)))
WG_ENTRY(wg_e5m2_n8, 4, (kb_wgmma_f32_e5m2<8>(F32_(8), da, db, 1)))
WG_ENTRY(wg_s8_n32, 16, (kb_wgmma_s32_s8<32>(S32_(32), da, db, 1)))
WG_ENTRY(wg_s8_n48, 24, (kb_wgmma_s32_s8<48>(S32_(48), da, db, 1)))

/* The register-A form: the A fragment built from the row-major 64 x K matrix `a` (not an
 * image): row 16w + g + 8(r & 1), col EPR t + e + K/2 (r >> 1). */
template <class T> __device__ void frag_a(const unsigned char *a, uint32_t r4[4])
{
    const int EPR = 4 / (int)sizeof(T), K = 32 / (int)sizeof(T), i = (int)threadIdx.x;
    const int w = i / 32, g = (i % 32) / 4, t = i % 4;
    for (int r = 0; r < 4; r++) {
        uint32_t v = 0;
        for (int e = 0; e < EPR; e++) {
            int row = 16 * w + g + 8 * (r & 1), col = EPR * t + e + K / 2 * (r >> 1);
            uint32_t x = 0;
            memcpy(&x, a + (row * K + col) * (int)sizeof(T), sizeof(T));
            v |= x << (8 * (int)sizeof(T) * e);
        }
        r4[r] = v;
    }
}
#define WG_RS_ENTRY(name, T, NW, body)                                                                  \
    extern "C" __global__ void name(const unsigned char *a, int a_bytes, const unsigned char *b, int b_bytes, \
                                    int b_at, const uint32_t *c, uint32_t *d, int sw_a, int lbo_a, int sbo_a,  \
                                    int sw_b, int lbo_b, int sbo_b)                                    \
    {                                                                                                  \
        uint32_t ar[4];                                                                                \
        frag_a<T>(a, ar);                                                                              \
        wg_run(a, 0, b, b_bytes, b_at, c, d, NW, [&](uint32_t *acc, unsigned char *sa, unsigned char *sb) { \
            uint64_t db = kb_wgmma_desc(sb, sw_b, (uint32_t)lbo_b, (uint32_t)sbo_b);                   \
            (void)sa;                                                                                  \
            body;                                                                                      \
        });                                                                                            \
    }
WG_RS_ENTRY(wg_rs_bf16_n32, uint16_t, 16, (kb_wgmma_f32_bf16_rs<32>(F32_(32), ar, db, 1)))
WG_RS_ENTRY(wg_rs_e4m3_n16, uint8_t, 8, (kb_wgmma_f32_e4m3_rs<16>(F32_(16), ar, db, 1)))

/* ---- wgmma rules ---- */
extern "C" __global__ void wg_no_fence(float *out)
{
    KB_DYN_SHARED(unsigned char, smem);
    for (int k = (int)threadIdx.x; k < 4096; k += 128)
        smem[k] = 0;
    __syncthreads();
    float acc[4] = { 0, 0, 0, 0 };
    kb_wgmma_f32_bf16<8>(acc, kb_wgmma_desc(smem, KB_WG_SW_NONE, 128, 256), kb_wgmma_desc(smem + 2048, 0, 128, 256), 0);
    kb_wgmma_commit();
    kb_wgmma_wait<0>();
    out[threadIdx.x] = acc[0];
}

/* mode 1: write B's shared memory before the wait; 2: read the accumulators before it (they
 * are poison: out gets NaN); 3: zero the accumulators before it. */
extern "C" __global__ void wg_in_flight(float *out, int mode)
{
    KB_DYN_SHARED(unsigned char, smem);
    for (int k = (int)threadIdx.x; k < 4096; k += 128)
        smem[k] = 0;
    kb_fence_proxy_async();
    __syncthreads();
    float acc[4] = { 1, 1, 1, 1 };
    kb_wgmma_fence();
    kb_wgmma_f32_bf16<8>(acc, kb_wgmma_desc(smem, KB_WG_SW_NONE, 128, 256), kb_wgmma_desc(smem + 2048, 0, 128, 256), 1);
    kb_wgmma_commit();
    if (mode == 1 && threadIdx.x == 0)
        smem[2048] = 1;
    float early = acc[0];
    if (mode == 3)
        acc[0] = 0;
    kb_wgmma_wait<0>();
    out[threadIdx.x] = mode == 2 ? early : acc[0];
}

/* ---- named barriers, setmaxnreg ---- */
extern "C" __global__ void named_bar(int *out, int id, int n)
{
    KB_SHARED(int, v, [1]);
    if (threadIdx.x < 32) {
        if (threadIdx.x == 0)
            v[0] = 7;
        kb_bar_arrive((unsigned)id, (unsigned)n);     /* warp 0 produces */
    } else {
        kb_bar_sync((unsigned)id, (unsigned)n);       /* the rest consume */
        out[threadIdx.x] = v[0];
    }
}

/* 384 threads: warpgroup 0 gives registers back, 1 and 2 take them (the CUTLASS pattern);
 * mode 1: warpgroup 2 asks beyond the register file; mode 2: not uniform; mode 3: a count
 * outside 24..256 reaching the runtime. */
extern "C" __global__ void regs(int *out, int mode)
{
    int wg = (int)threadIdx.x / 128;
    if (mode == 3) {
#ifdef KB_EMU
        kb_emu_rt_->setmaxnreg(kb_emu_self_, 1, 260);
#endif
    } else if (wg == 0) {
        kb_setmaxnreg_dec<40>();
    } else if (mode == 1 && wg == 2) {
        kb_setmaxnreg_inc<256>();
    } else if (mode == 2 && threadIdx.x == 200) {
        kb_setmaxnreg_inc<224>();
    } else {
        kb_setmaxnreg_inc<232>();
    }
    out[threadIdx.x] = wg;
}

/* ---- a pipeline: TMA -> full/empty mbarriers -> wgmma ----
 * C (64 x 64, f32) = A (64 x K, bf16, K-major) * B (64 x K, bf16, K-major)^T, K = 64 * KT.
 * 256 threads: warpgroup 0's thread 0 produces (TMA boxes of 64 x 64, 128B swizzle, into a
 * 2-stage ring), warpgroup 1 consumes (4 wgmma m64n64k16 per stage). bug 1: the consumers
 * release a stage before their wgmma retired; bug 2: the producer expects one box's bytes
 * short; bug 3: the consumers wait with a parity that does not flip; bug 4: the descriptors
 * say the 64-byte swizzle where the tensor maps laid the tiles out with the 128-byte one. */
extern "C" __global__ void pipeline(const __grid_constant__ kb_tmap tma, const __grid_constant__ kb_tmap tmb,
                                    float *c, int kt_count, int bug)
{
    KB_SHARED(uint64_t, full, [2]);
    KB_SHARED(uint64_t, empty, [2]);
    KB_DYN_SHARED(unsigned char, smem);   /* [2][8192] A, then [2][8192] B; 1024-aligned */
    int i = (int)threadIdx.x;
    if (i == 0) {
        for (int s = 0; s < 2; s++) {
            kb_mbar_init(&full[s], 1);
            kb_mbar_init(&empty[s], 128);
        }
        kb_fence_proxy_async();
    }
    __syncthreads();
    if (i < 128) {
        if (i >= 32 || !kb_elect_one())   /* one lane of warp 0 produces */
            return;
        for (int kt = 0; kt < kt_count; kt++) {
            int s = kt % 2;
            kb_mbar_wait_parity(&empty[s], (uint32_t)(((kt / 2) & 1) ^ 1));
            kb_mbar_arrive_expect_tx(&full[s], bug == 2 ? 8192u : 16384u);
            kb_tma_load(smem + s * 8192, &tma, &full[s], kt * 64, 0);
            kb_tma_load(smem + 16384 + s * 8192, &tmb, &full[s], kt * 64, 0);
        }
        return;
    }
    float acc[32];
    for (int k = 0; k < 32; k++)
        acc[k] = 0.0f;
    for (int kt = 0; kt < kt_count; kt++) {
        int s = kt % 2;
        kb_mbar_wait_parity(&full[s], bug == 3 ? 0u : (uint32_t)((kt / 2) & 1));
        kb_wgmma_fence();
        for (int kk = 0; kk < 4; kk++) {
            const int sw = bug == 4 ? KB_WG_SW_64B : KB_WG_SW_128B;
            uint64_t da = kb_wgmma_desc(smem + s * 8192 + 32 * kk, sw, 16, 1024);
            uint64_t db = kb_wgmma_desc(smem + 16384 + s * 8192 + 32 * kk, sw, 16, 1024);
            kb_wgmma_f32_bf16<64>(acc, da, db, 1);
        }
        kb_wgmma_commit();
        if (bug == 1)
            kb_mbar_arrive(&empty[s]);
        kb_wgmma_wait<0>();
        if (bug != 1)
            kb_mbar_arrive(&empty[s]);
    }
    int j = i - 128, w = j / 32, g = (j % 32) / 4, t = j % 4;
    for (int b = 0; b < 8; b++)
        for (int e = 0; e < 4; e++)
            c[(16 * w + g + 8 * (e >> 1)) * 64 + 8 * b + 2 * t + (e & 1)] = acc[4 * b + e];
}

/* ---- more broken rules, one per mode ---- */
extern "C" __global__ void mbar_misc(int *out, int mode)
{
    KB_SHARED(uint64_t, bar, [2]);
    if (threadIdx.x == 0) {
        kb_mbar_init(&bar[0], 1);
        if (mode == 0)
            kb_mbar_init(&bar[0], 1);                                  /* init of a live barrier */
        if (mode == 1)
            kb_mbar_arrive_cnt(&bar[0], 2);                            /* more arrivals than pending */
        if (mode == 2) {
            uint64_t st = kb_mbar_arrive(&bar[0]);                     /* phase 0 */
            kb_mbar_arrive(&bar[0]);
            kb_mbar_arrive(&bar[0]);                                   /* now phase 3 */
            kb_mbar_test_wait(&bar[0], st);                            /* a stale token */
        }
        if (mode == 3)
            kb_mbar_init(reinterpret_cast<uint64_t *>(reinterpret_cast<char *>(&bar[1]) + 4), 1);
        if (mode == 4)
            kb_mbar_init(reinterpret_cast<uint64_t *>(out), 1);        /* global memory */
#ifdef KB_EMU   /* NVRTC 13.0 itself crashes (SIGSEGV) compiling mbarrier.init with a count of 0 */
        if (mode == 5)
            kb_mbar_init(&bar[1], 0);                                  /* count 0 */
#endif
        if (mode == 6) {
            kb_mbar_inval(&bar[0]);
            kb_mbar_arrive(&bar[0]);                                   /* invalidated */
        }
    }
    out[threadIdx.x] = 1;
}

/* mode 0: descriptors differ across the warpgroup; 1: wait_group N differs; 2: a base offset;
 * 3: the A registers change in flight (register form); 4: no fence.proxy.async after the
 * generic writes of the operands (a checked build sees them). */
extern "C" __global__ void wg_misc(float *out, int mode)
{
    KB_DYN_SHARED(unsigned char, smem);
    int i = (int)threadIdx.x;
    for (int k = i; k < 4096; k += 128)
        smem[k] = 0;
    if (mode != 4)
        kb_fence_proxy_async();
    __syncthreads();
    float acc[4] = { 0, 0, 0, 0 };
    uint32_t a[4] = { 0, 0, 0, 0 };
    uint64_t da = kb_wgmma_desc(smem, KB_WG_SW_NONE, 128, 256), db = kb_wgmma_desc(smem + 2048, 0, 128, 256);
    if (mode == 0 && i == 5)
        db = kb_wgmma_desc(smem + 2064, 0, 128, 256);
    if (mode == 2)
        da |= 1ull << 49;
    kb_wgmma_fence();
    if (mode == 3)
        kb_wgmma_f32_bf16_rs<8>(acc, a, db, 0);
    else
        kb_wgmma_f32_bf16<8>(acc, da, db, 0);
    kb_wgmma_commit();
    if (mode == 3)
        a[0] = 1;
    if (mode == 1 && i == 3)
        kb_wgmma_wait<1>();
    else
        kb_wgmma_wait<0>();
    out[i] = acc[0] + (float)a[0];
}

/* Warp 0 arrives at barrier 1 expecting 64 threads, the others sync expecting 96. */
extern "C" __global__ void named_bar_disagree(int *out)
{
    if (threadIdx.x < 32)
        kb_bar_arrive(1, 64);
    else
        kb_bar_sync(1, 96);
    out[threadIdx.x] = 1;
}

/* Warpgroup 1 "increases" below what it holds. */
extern "C" __global__ void regs_down(int *out)
{
    if (threadIdx.x >= 128)
        kb_setmaxnreg_inc<32>();
    out[threadIdx.x] = 1;
}

/* A wgmma whose B operand is the destination of a TMA load not waited for. */
extern "C" __global__ void wg_reads_pending(const __grid_constant__ kb_tmap tm, float *out)
{
    KB_SHARED(uint64_t, bar, [1]);
    KB_DYN_SHARED(unsigned char, smem);
    for (int k = (int)threadIdx.x; k < 2048; k += 128)
        smem[k] = 0;
    if (threadIdx.x == 0)
        kb_mbar_init(&bar[0], 1);
    kb_fence_proxy_async();
    __syncthreads();
    if (threadIdx.x == 0) {
        kb_mbar_arrive_expect_tx(&bar[0], 2048);
        kb_tma_load(smem + 2048, &tm, &bar[0], 0, 0);
    }
    float acc[4] = { 0, 0, 0, 0 };
    kb_wgmma_fence();
    kb_wgmma_f32_bf16<8>(acc, kb_wgmma_desc(smem, KB_WG_SW_NONE, 128, 256), kb_wgmma_desc(smem + 2048, 0, 128, 256), 0);
    kb_wgmma_commit();
    kb_wgmma_wait<0>();
    kb_mbar_wait_parity(&bar[0], 0);
    out[threadIdx.x] = acc[0];
}

/* A store into a TMA destination before the load landed (a race with the copy). */
extern "C" __global__ void tma_write_pending(const __grid_constant__ kb_tmap tm)
{
    KB_SHARED(uint64_t, bar, [1]);
    KB_DYN_SHARED(unsigned char, smem);
    if (threadIdx.x == 0) {
        kb_mbar_init(&bar[0], 1);
        kb_mbar_arrive_expect_tx(&bar[0], 2048);
        kb_tma_load(smem, &tm, &bar[0], 0, 0);
        smem[16] = 1;
        kb_mbar_wait_parity(&bar[0], 0);
    }
}
