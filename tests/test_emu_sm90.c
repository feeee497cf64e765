/* test_emu_sm90.c - the emulator's Hopper model (harness/backend/emu/emu_sm90.h), through
 * tests/kernels/emu_sm90.cu built for sm_90a: mbarrier phases and each mbarrier rule broken;
 * TMA loads (2D-5D, every swizzle, out-of-bounds boxes) against a CPU gather with its own
 * swizzle formula, stores, an early read of a destination; wgmma of every type, both A forms,
 * K- and MN-major operands and every swizzle against a CPU matmul; the rules of wgmma, the
 * async proxy, named barriers and setmaxnreg; a TMA -> mbarrier -> wgmma pipeline under the
 * three schedules and three seeded bugs in it; tensor-map validation; and NVRTC compiling the
 * same kernels for sm_90a (and refusing them for sm_90). */
#include "emu_fixture.h"
#include "kernels/abi/kb_convert.h"

#include <math.h>
#include <nvrtc.h>

static const char *const SM90_DEFS[] = { "KB_ARCH=90", "KB_ARCH_SPECIFIC=1" };
static kb_module *M90;

static kb_module *build_sm90(kb_backend_ctx *x)
{
    static int n;
    char out[512], src[512];
    kb_sb log;
    kb_module *m = NULL;
    snprintf(src, sizeof src, "%s/emu_sm90.cu", TEST_KERNELS_DIR);
    snprintf(out, sizeof out, "%s/sm90-%d%s", tmpdir, n++, B->artifact_ext);
    kb_compile_req req = { .source_path = src, .include_dir = KB_SOURCE_KERNELS_DIR, .sm = 90,
                           .defines = SM90_DEFS, .n_defines = 2 };
    kb_sb_init(&log);
    CHECK_MSG(B->build(x, &req, out, &log) == KB_OK, "build: %s\n%s", B->last_error(x), log.s);
    kb_sb_free(&log);
    CHECK_MSG(B->load(x, out, &m) == KB_OK, "load: %s", B->last_error(x));
    return m;
}

/* Launch and expect a failure whose message holds want. */
static void expect_fail(kb_backend_ctx *x, kb_module *m, const char *entry, unsigned threads, size_t shmem,
                        const kb_arg *a, int n, const char *want)
{
    kb_status st = launch(x, m, entry, 1, 1, 1, threads, 1, 1, shmem, a, n);
    CHECK_MSG(st != KB_OK && contains(B->last_error(x), want), "%s: status %d, message: %s (want '%s')", entry,
              (int)st, B->last_error(x), want);
}

/* ---- mbarrier ---- */
static void test_mbar_phases(void)
{
    int out[64 * 3];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d) };
    CHECK_MSG(launch(X, M90, "mbar_phases", 1, 1, 1, 64, 1, 1, 0, a, 1) == KB_OK, "%s", B->last_error(X));
    B->download(X, out, d, sizeof out);
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += out[3 * i] != 0 || out[3 * i + 1] != 1 || out[3 * i + 2] != 1;
    CHECK_MSG(bad == 0, "%d threads saw wrong phases (thread 0: %d %d %d)", bad, out[0], out[1], out[2]);
    B->free(X, d);
}

static void test_mbar_rules(void)
{
    kb_dptr d = dalloc(X, 4096);
    kb_arg a[] = { kb_arg_ptr(d) };
    expect_fail(X, M90, "mbar_use_before_init", 32, 0, a, 1, "mbarrier use before init");
    expect_fail(X, M90, "mbar_stale_parity", 32, 0, a, 1, "mbarrier wait on a stale parity");
    expect_fail(X, M90, "mbar_tx_overflow", 32, 0, a, 1, "mbarrier tx-count overflow");
    expect_fail(X, M90, "mbar_tx_underflow", 32, 0, a, 1, "mbarrier tx-count underflow");
    expect_fail(X, M90, "mbar_overwritten", 32, 0, a, 1, "mbarrier memory overwritten");
    expect_fail(X, M90, "mbar_deadlock", 64, 0, a, 1, "deadlock: every live thread");
    CHECK_MSG(contains(B->last_error(X), "phase 0") && contains(B->last_error(X), "1 of 65 arrivals"), "%s",
              B->last_error(X));
    B->free(X, d);
}

/* ---- tensor maps and TMA ---- */
/* The swizzle as the CUDA programming guide draws it: within each span-sized row of the
 * pattern, 16-byte chunk c of row r (r = address / 128 mod span/16) moves to c ^ r. */
static size_t swz(size_t a, unsigned span)
{
    if (!span)
        return a;
    size_t n = span / 16, chunk = (a / 16) % n, row = (a / 128) % n;
    return a - chunk * 16 + ((chunk ^ row) * 16);
}

static kb_arg make_map(const kb_tmap_desc *d)
{
    kb_arg out;
    char err[256];
    kb_status st = kb_backend_tmap_encode(B, X, d, &out, err, sizeof err);
    CHECK_MSG(st == KB_OK, "encode: %s", err);
    return out;
}

/* A rank-r tensor of 2-byte elements with padded rows, a box at coords (some out of bounds),
 * loaded with swizzle span and checked byte by byte against a CPU gather. */
static void check_tma_load(unsigned rank, const uint64_t *dims, const uint32_t *box, const int *c, unsigned span,
                           int ffi)
{
    kb_backend_ctx *x = X;
    uint64_t stride[5], total = 1;
    stride[0] = 2;
    for (unsigned i = 0; i < rank; i++) {
        uint64_t ext = i == 0 ? (dims[0] * 2 + 15) / 16 * 16 + 16 : dims[i] * stride[i];   /* padded rows */
        if (i + 1 < 5)
            stride[i + 1] = ext;
        total = i == 0 ? ext : total * dims[i];
    }
    uint16_t *h = malloc(total);
    for (uint64_t i = 0; i < total / 2; i++)
        h[i] = (uint16_t)(i * 2654435761u >> 7) | 1;   /* never 0 */
    kb_dptr g = dalloc(x, total);
    B->upload(x, g, h, total);
    kb_tmap_desc d = { .dtype = KB_TMAP_BF16, .rank = rank, .base = g,
                       .swizzle = span == 128 ? KB_TMAP_SWIZZLE_128B : span == 64 ? KB_TMAP_SWIZZLE_64B
                                : span == 32 ? KB_TMAP_SWIZZLE_32B : KB_TMAP_SWIZZLE_NONE };
    uint32_t bytes = 2;
    for (unsigned i = 0; i < rank; i++) {
        d.dims[i] = dims[i];
        d.box[i] = box[i];
        if (i)
            d.strides[i - 1] = stride[i];
        bytes *= box[i];
    }
    unsigned char *out = malloc(bytes), *want = malloc(bytes);
    kb_dptr o = dalloc(x, bytes);
    kb_arg a[] = { make_map(&d), kb_arg_ptr(o), kb_arg_i32((int)bytes), kb_arg_i32((int)rank), kb_arg_i32(c[0]),
                   kb_arg_i32(c[1]), kb_arg_i32(c[2]), kb_arg_i32(c[3]), kb_arg_i32(c[4]), kb_arg_i32(0), kb_arg_i32(0) };
    (void)ffi;
    CHECK_MSG(launch(x, M90, "tma_load_box", 1, 1, 1, 128, 1, 1, bytes, a, 11) == KB_OK, "%s", B->last_error(x));
    B->download(x, out, o, bytes);
    for (uint32_t e = 0; e < bytes / 2; e++) {       /* the CPU gather, then the swizzle */
        uint64_t r = e, off = 0;
        int in = 1;
        for (unsigned i = 0; i < rank; i++) {
            int64_t gi = c[i] + (int64_t)(r % box[i]);
            r /= box[i];
            in &= gi >= 0 && (uint64_t)gi < dims[i];
            off += (uint64_t)gi * stride[i];
        }
        uint16_t v = in ? h[off / 2] : 0;
        memcpy(want + swz((size_t)e * 2, span), &v, 2);
    }
    CHECK_MSG(memcmp(out, want, bytes) == 0, "TMA load rank %u swizzle %u: the box differs from the gather", rank, span);
    B->free(x, o);
    B->free(x, g);
    free(out), free(want), free(h);
}

static void test_tma_loads(void)
{
    uint64_t d2[] = { 100, 37 }, d3[] = { 40, 9, 5 }, d5[] = { 24, 3, 4, 2, 3 };
    uint32_t b2[] = { 64, 16 }, b2s[] = { 16, 8 }, b3[] = { 32, 4, 3 }, b5[] = { 16, 2, 3, 2, 2 };
    int c2[] = { -8, 30, 0, 0, 0 }, c3[] = { 20, -2, 4, 0, 0 }, c5[] = { 16, 2, -1, 1, 2 };
    check_tma_load(2, d2, b2, c2, 128, 0);
    check_tma_load(2, d2, b2s, c2, 32, 0);
    uint32_t b64[] = { 32, 16 };
    check_tma_load(2, d2, b64, c2, 64, 0);
    check_tma_load(2, d2, b2, c2, 0, 0);
    check_tma_load(3, d3, b3, c3, 64, 0);
    check_tma_load(5, d5, b5, c5, 32, 0);
    uint64_t d4[] = { 40, 5, 3, 4 };
    uint32_t b4[] = { 32, 4, 2, 3 };
    int c4[] = { 24, 3, -1, 2, 0 };
    check_tma_load(4, d4, b4, c4, 0, 0);
}

/* A rank-r box stored partly out of bounds: in-bounds elements written, nothing else. */
static void check_tma_store(unsigned rank, const uint64_t *dims, const uint32_t *box, const int *c)
{
    uint64_t stride[5] = { 2 }, total;
    stride[1] = (dims[0] * 2 + 15) / 16 * 16;
    for (unsigned i = 2; i < rank; i++)
        stride[i] = stride[i - 1] * dims[i - 1];
    total = stride[rank - 1] * dims[rank - 1];
    uint32_t n = 1;
    for (unsigned i = 0; i < rank; i++)
        n *= box[i];
    uint16_t *src = malloc(n * 2), *out = malloc(total), *want = calloc(total, 1);
    for (uint32_t e = 0; e < n; e++) {
        src[e] = (uint16_t)(e * 7 + 1);
        uint64_t r = e, off = 0;
        int in = 1;
        for (unsigned i = 0; i < rank; i++) {
            int64_t g = c[i] + (int64_t)(r % box[i]);
            r /= box[i];
            in &= g >= 0 && (uint64_t)g < dims[i];
            off += (uint64_t)g * stride[i];
        }
        if (in)
            want[off / 2] = src[e];
    }
    kb_dptr g = dalloc(X, total), in = dalloc(X, n * 2);
    B->upload(X, in, src, n * 2);
    B->fill(X, g, 0, total);
    kb_tmap_desc d = { .dtype = KB_TMAP_F16, .rank = rank, .base = g };
    for (unsigned i = 0; i < rank; i++) {
        d.dims[i] = dims[i], d.box[i] = box[i];
        if (i)
            d.strides[i - 1] = stride[i];
    }
    kb_arg a[] = { make_map(&d), kb_arg_ptr(in), kb_arg_i32((int)n * 2), kb_arg_i32((int)rank), kb_arg_i32(c[0]),
                   kb_arg_i32(c[1]), kb_arg_i32(c[2]), kb_arg_i32(c[3]), kb_arg_i32(c[4]), kb_arg_i32(0), kb_arg_i32(0) };
    CHECK_MSG(launch(X, M90, "tma_store_box", 1, 1, 1, 128, 1, 1, n * 2, a, 11) == KB_OK, "%s", B->last_error(X));
    B->download(X, out, g, total);
    CHECK_MSG(memcmp(out, want, total) == 0, "TMA store rank %u: global memory differs from the scatter", rank);
    B->free(X, in), B->free(X, g);
    free(src), free(out), free(want);
}

static void test_tma_stores(void)
{
    uint64_t d3[] = { 24, 7, 5 }, d5[] = { 16, 3, 2, 4, 3 };
    uint32_t b3[] = { 16, 4, 2 }, b5[] = { 8, 2, 2, 2, 2 };
    int c3[] = { 16, 5, -1, 0, 0 }, c5[] = { 8, 2, 1, -1, 2 };
    check_tma_store(3, d3, b3, c3);
    check_tma_store(5, d5, b5, c5);
}

/* The destination stays poisoned until the load lands: read without the wait, it is 0xFF. */
static void test_tma_early_read_is_poison(void)
{
    uint64_t total = 64 * 64 * 2;
    kb_dptr g = dalloc(X, total), o = dalloc(X, 2048);
    B->fill(X, g, 0x11, total);
    kb_tmap_desc d = { .dtype = KB_TMAP_BF16, .rank = 2, .base = g, .dims = { 64, 64 }, .strides = { 128 },
                       .box = { 64, 16 }, .swizzle = KB_TMAP_SWIZZLE_128B };
    kb_arg a[] = { make_map(&d), kb_arg_ptr(o), kb_arg_i32(2048), kb_arg_i32(2), kb_arg_i32(0), kb_arg_i32(0),
                   kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(1) };
    CHECK_MSG(launch(X, M90, "tma_load_box", 1, 1, 1, 128, 1, 1, 2048, a, 11) == KB_OK, "%s", B->last_error(X));
    unsigned char out[2048];
    B->download(X, out, o, sizeof out);
    int poison = 0;
    for (int i = 0; i < 2048; i++)
        poison += out[i] == 0xff;
    CHECK_MSG(poison == 2048, "%d of 2048 bytes read before the wait were poison", poison);
    /* misaligned for the 128B swizzle: offset 128 of the dynamic shared memory */
    a[9] = kb_arg_i32(128);
    a[10] = kb_arg_i32(0);
    expect_fail(X, M90, "tma_load_box", 128, 4096, a, 11, "not 1024-byte aligned");
    B->free(X, o), B->free(X, g);
}

static void test_tma_store(void)
{
    uint64_t total = 40 * 24 * 2;
    kb_dptr g = dalloc(X, total), in = dalloc(X, 16 * 8 * 2);
    uint16_t src[16 * 8], out[40 * 24];
    for (int i = 0; i < 16 * 8; i++)
        src[i] = (uint16_t)(i + 1);
    B->upload(X, in, src, sizeof src);
    B->fill(X, g, 0, total);
    kb_tmap_desc d = { .dtype = KB_TMAP_F16, .rank = 2, .base = g, .dims = { 24, 40 }, .strides = { 48 },
                       .box = { 16, 8 } };
    kb_arg a[] = { make_map(&d), kb_arg_ptr(in), kb_arg_i32(256), kb_arg_i32(2), kb_arg_i32(16), kb_arg_i32(36),
                   kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0) };
    CHECK_MSG(launch(X, M90, "tma_store_box", 1, 1, 1, 128, 1, 1, 256, a, 11) == KB_OK, "%s", B->last_error(X));
    B->download(X, out, g, total);
    int bad = 0;
    for (int r = 0; r < 40; r++)
        for (int col = 0; col < 24; col++) {
            int in_box = col >= 16 && r >= 36;   /* the box's cols 16..31, rows 36..43: the rest is out */
            uint16_t want = in_box ? src[(r - 36) * 16 + (col - 16)] : 0;
            bad += out[r * 24 + col] != want;
        }
    CHECK_MSG(bad == 0, "%d elements wrong after a TMA store of a partly out-of-bounds box", bad);
    a[10] = kb_arg_i32(1);   /* the source written before wait_group.read */
    expect_fail(X, M90, "tma_store_box", 128, 256, a, 11, "written before cp.async.bulk.wait_group.read");
    B->free(X, in), B->free(X, g);
}

/* The fence.proxy.async rule needs the writes: a checked emulator. */
static void test_proxy_fence(void)
{
    kb_backend_opts o = { .emu_threads = 1, .emu_checks = KB_EMU_CHECK_RACE | KB_EMU_CHECK_INIT };
    kb_backend_ctx *x = NULL;
    char err[256];
    CHECK(B->init(&o, &x, err, sizeof err) == KB_OK);
    kb_module *m = build_sm90(x);
    kb_dptr g = dalloc(x, 40 * 24 * 2), in = dalloc(x, 256);
    B->fill(x, g, 0, 40 * 24 * 2);
    B->fill(x, in, 1, 256);
    kb_tmap_desc d = { .dtype = KB_TMAP_F16, .rank = 2, .base = g, .dims = { 24, 40 }, .strides = { 48 },
                       .box = { 16, 8 } };
    kb_arg map;
    CHECK(kb_backend_tmap_encode(B, x, &d, &map, err, sizeof err) == KB_OK);
    kb_arg a[] = { map, kb_arg_ptr(in), kb_arg_i32(256), kb_arg_i32(2), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0),
                   kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0) };
    CHECK_MSG(launch(x, m, "tma_store_box", 1, 1, 1, 128, 1, 1, 256, a, 11) == KB_OK, "%s", B->last_error(x));
    a[9] = kb_arg_i32(1);
    expect_fail(x, m, "tma_store_box", 128, 256, a, 11, "async proxy read without fence.proxy.async");
    /* init: a TMA load of global memory nothing wrote */
    kb_dptr raw = dalloc(x, 40 * 24 * 2), lo = dalloc(x, 256);
    d.base = raw;
    CHECK(kb_backend_tmap_encode(B, x, &d, &map, err, sizeof err) == KB_OK);
    kb_arg l[] = { map, kb_arg_ptr(lo), kb_arg_i32(256), kb_arg_i32(2), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0),
                   kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0) };
    expect_fail(x, m, "tma_load_box", 128, 256, l, 11, "read of memory never written: a TMA load");
    /* a store into the destination of a load in flight */
    kb_dptr full = dalloc(x, 8 * 128 * 2);
    B->fill(x, full, 0, 8 * 128 * 2);
    kb_tmap_desc d8 = { .dtype = KB_TMAP_BF16, .rank = 2, .base = full, .dims = { 128, 8 }, .strides = { 256 },
                        .box = { 128, 8 } };
    CHECK(kb_backend_tmap_encode(B, x, &d8, &map, err, sizeof err) == KB_OK);
    expect_fail(x, m, "tma_write_pending", 32, 2048, &map, 1, "shared memory written while a TMA load to it is in flight");
    B->free(x, full);
    B->free(x, lo), B->free(x, raw);
    B->free(x, in), B->free(x, g);
    B->unload(x, m);
    B->fini(x);
}

/* ---- wgmma ---- */
typedef enum { T_F16, T_BF16, T_TF32, T_E4M3, T_E5M2, T_S8 } wtype;
static unsigned wsize(wtype t) { return t <= T_BF16 ? 2 : t == T_TF32 ? 4 : 1; }
static double wdec(wtype t, uint32_t b)
{
    float f;
    switch (t) {
    case T_F16: return kb_f16_bits_to_f32((uint16_t)b);
    case T_BF16: return kb_bf16_bits_to_f32((uint16_t)b);
    case T_TF32: b &= 0xffffe000u; memcpy(&f, &b, 4); return f;
    case T_E4M3: return kb_e4m3_bits_to_f32((uint8_t)b);
    case T_E5M2: return kb_e5m2_bits_to_f32((uint8_t)b);
    default: return (int8_t)b;
    }
}
static uint32_t wrand(wtype t, unsigned *seed)
{
    for (;;) {
        uint32_t r = (uint32_t)rand_r(seed);
        float x = (float)(r % 2001u) / 1000.0f - 1.0f;
        uint32_t u;
        switch (t) {
        case T_F16: return kb_f32_to_f16_bits(x);
        case T_BF16: return kb_f32_to_bf16_bits(x);
        case T_TF32: memcpy(&u, &x, 4); return u | (r & 0x1fffu);
        case T_S8: return r & 0xffu;
        default: if (isfinite(wdec(t, r & 0xffu)) && fabs(wdec(t, r & 0xffu)) < 64) return r & 0xffu;
        }
    }
}

/* The byte of element (r, k) of a rows x K operand laid out as a TMA box of the given
 * swizzle span would be (K-major: rows of span bytes; MN-major: k-rows of span bytes, MN in
 * span-wide atoms of 16 k-rows), or the interleaved core matrices (span 0), with lbo/sbo. */
static size_t layout(unsigned span, int mn, unsigned es, unsigned r, unsigned k, unsigned *lbo, unsigned *sbo)
{
    size_t a;
    if (!mn && span) {
        *lbo = 16, *sbo = 8 * span;
        a = (size_t)r * span + k * es;
    } else if (!mn) {
        *lbo = 128, *sbo = 256;
        a = (r % 8) * 16 + (r / 8) * 256 + (k * es / 16) * 128 + (k * es) % 16;
    } else if (span) {
        *sbo = 8 * span, *lbo = 16 * span;
        unsigned per = span / es;
        a = (size_t)(r / per) * *lbo + (k / 8) * *sbo + (k % 8) * span + (r % per) * es;
    } else {
        *lbo = 128, *sbo = 256;
        a = (r * es / 16) * 256 + (k % 8) * 16 + (k / 8) * 128 + (r * es) % 16;
    }
    return swz(a, span);
}

static int sw_code(unsigned span) { return span == 128 ? 1 : span == 64 ? 2 : span == 32 ? 3 : 0; }

/* One wgmma: D (64 x n) = A (64 x K) B (n x K)^T + C through entry, against the CPU. */
static void check_wgmma(const char *entry, wtype t, int acc, unsigned n, unsigned span_a, int mn_a, unsigned span_b,
                        int mn_b, int rs, int neg_a)
{
    unsigned es = wsize(t), K = 32 / es, seed = 77u + n + (unsigned)t, lbo_a = 0, sbo_a = 0, lbo_b = 0, sbo_b = 0;
    size_t ia = 64 * 1024, ib = 64 * 1024;
    unsigned char *img_a = calloc(ia, 1), *img_b = calloc(ib, 1), *row_a = calloc(64 * 32, 1);
    uint32_t av[64][32], bv[256][32];
    size_t top_a = 0, top_b = 0;
    for (unsigned r = 0; r < 64; r++)
        for (unsigned k = 0; k < K; k++) {
            av[r][k] = wrand(t, &seed);
            size_t at = layout(span_a, mn_a, es, r, k, &lbo_a, &sbo_a);
            memcpy(img_a + at, &av[r][k], es);
            memcpy(row_a + (r * K + k) * es, &av[r][k], es);
            top_a = at + es > top_a ? at + es : top_a;
        }
    for (unsigned r = 0; r < n; r++)
        for (unsigned k = 0; k < K; k++) {
            bv[r][k] = wrand(t, &seed);
            size_t at = layout(span_b, mn_b, es, r, k, &lbo_b, &sbo_b);
            memcpy(img_b + at, &bv[r][k], es);
            top_b = at + es > top_b ? at + es : top_b;
        }
    unsigned nw = acc == 16 ? n / 4 : n / 2;
    uint32_t *c = calloc(128 * nw, 4), *d = calloc(128 * nw, 4);
    for (unsigned i = 0; i < 128 * nw; i++) {
        float f = (float)(rand_r(&seed) % 201) / 64.0f;
        c[i] = t == T_S8 ? (uint32_t)(rand_r(&seed) % 2001) - 1000u
             : acc == 16 ? (uint32_t)kb_f32_to_f16_bits(f) | (uint32_t)kb_f32_to_f16_bits(-f) << 16 : 0;
        if (t != T_S8 && acc != 16)
            memcpy(&c[i], &f, 4);
    }
    size_t a_bytes = (top_a + 1023) / 1024 * 1024, b_bytes = (top_b + 15) / 16 * 16;
    kb_dptr dA = dalloc(X, rs ? 64 * 32 : a_bytes), dB = dalloc(X, b_bytes), dC = dalloc(X, 128 * nw * 4),
            dD = dalloc(X, 128 * nw * 4);
    B->upload(X, dA, rs ? row_a : img_a, rs ? 64 * 32 : a_bytes);
    B->upload(X, dB, img_b, b_bytes);
    B->upload(X, dC, c, 128 * nw * 4);
    int b_at = rs ? 0 : (int)a_bytes;
    kb_arg args[] = { kb_arg_ptr(dA), kb_arg_i32((int)a_bytes), kb_arg_ptr(dB), kb_arg_i32((int)b_bytes),
                      kb_arg_i32(b_at), kb_arg_ptr(dC), kb_arg_ptr(dD), kb_arg_i32(sw_code(span_a)),
                      kb_arg_i32((int)lbo_a), kb_arg_i32((int)sbo_a), kb_arg_i32(sw_code(span_b)),
                      kb_arg_i32((int)lbo_b), kb_arg_i32((int)sbo_b) };
    int bad = 0;
    kb_status st = launch(X, M90, entry, 1, 1, 1, 128, 1, 1, (size_t)b_at + b_bytes, args, 13);
    CHECK_MSG(st == KB_OK, "%s: %s", entry, B->last_error(X));
    B->download(X, d, dD, 128 * nw * 4);
    for (unsigned i = 0; st == KB_OK && i < 128; i++)
        for (unsigned j = 0; j < n / 8; j++)
            for (unsigned e = 0; e < 4; e++) {
                unsigned row = 16 * (i / 32) + (i % 32) / 4 + 8 * (e >> 1), col = 8 * j + 2 * (i % 4) + (e & 1);
                double s = 0, got;
                for (unsigned k = 0; k < K; k++)
                    s += (neg_a ? -1 : 1) * wdec(t, av[row][k]) * wdec(t, bv[col][k]);
                if (acc == 16) {
                    uint32_t w = c[i * nw + 2 * j + (e >> 1)], o = d[i * nw + 2 * j + (e >> 1)];
                    s += kb_f16_bits_to_f32((uint16_t)(w >> (16 * (e & 1))));
                    got = kb_f16_bits_to_f32((uint16_t)(o >> (16 * (e & 1))));
                } else if (t == T_S8) {
                    s += (int32_t)c[i * nw + 4 * j + e];
                    got = (int32_t)d[i * nw + 4 * j + e];
                } else {
                    float f, g;
                    memcpy(&f, &c[i * nw + 4 * j + e], 4);
                    memcpy(&g, &d[i * nw + 4 * j + e], 4);
                    s += f;
                    got = g;
                }
                double tol = t == T_S8 ? 0 : acc == 16 ? 2e-3 * (1 + fabs(s)) : t >= T_E4M3 ? 3e-4 * (1 + fabs(s))
                                                                                     : 1e-5 * (1 + fabs(s));
                if (fabs(got - s) > tol && bad++ < 3)
                    fprintf(stderr, "%s: D[%u][%u] = %.9g want %.9g\n", entry, row, col, got, s);
            }
    CHECK_MSG(bad == 0, "%s: %d accumulators wrong", entry, bad);
    B->free(X, dD), B->free(X, dC), B->free(X, dB), B->free(X, dA);
    free(c), free(d), free(img_a), free(img_b), free(row_a);
}

static void test_wgmma_numerics(void)
{
    check_wgmma("wg_bf16_n64", T_BF16, 32, 64, 128, 0, 128, 0, 0, 0);       /* K-major, 128B */
    check_wgmma("wg_bf16_n256", T_BF16, 32, 256, 64, 0, 32, 0, 0, 0);       /* 64B A, 32B B, N = 256 */
    check_wgmma("wg_f16_n128_tb", T_F16, 32, 128, 128, 0, 128, 1, 0, 0);    /* B MN-major */
    check_wgmma("wg_f16_n64_ta_tb", T_F16, 32, 64, 64, 1, 0, 1, 0, 0);      /* both MN-major, 64B / none */
    check_wgmma("wg_f16_n64_neg", T_F16, 32, 64, 0, 0, 32, 0, 0, 1);        /* interleave, negated A */
    check_wgmma("wg_f16_n64_ta_tb", T_F16, 32, 64, 32, 1, 128, 1, 0, 0);    /* MN-major 32B A, 128B B */
    check_wgmma("wg_f16acc_n64", T_F16, 16, 64, 128, 0, 128, 0, 0, 0);      /* f16 accumulators */
    check_wgmma("wg_tf32_n16", T_TF32, 32, 16, 32, 0, 0, 0, 0, 0);
    check_wgmma("wg_e4m3_n64", T_E4M3, 32, 64, 128, 0, 64, 0, 0, 0);
    check_wgmma("wg_e5m2_n8", T_E5M2, 32, 8, 32, 0, 128, 0, 0, 0);
    check_wgmma("wg_s8_n32", T_S8, 32, 32, 128, 0, 128, 0, 0, 0);
    check_wgmma("wg_s8_n48", T_S8, 32, 48, 0, 0, 64, 0, 0, 0);
    check_wgmma("wg_rs_bf16_n32", T_BF16, 32, 32, 0, 0, 128, 0, 1, 0);      /* A from registers */
    check_wgmma("wg_rs_e4m3_n16", T_E4M3, 32, 16, 0, 0, 64, 0, 1, 0);
}

static void test_wgmma_rules(void)
{
    kb_dptr o = dalloc(X, 128 * 4);
    kb_arg a[] = { kb_arg_ptr(o) };
    expect_fail(X, M90, "wg_no_fence", 128, 4096, a, 1, "wgmma.mma_async without a wgmma.fence");
    kb_arg b[] = { kb_arg_ptr(o), kb_arg_i32(1) };
    expect_fail(X, M90, "wg_in_flight", 128, 4096, b, 2, "shared memory of a wgmma operand written");
    b[1] = kb_arg_i32(3);
    expect_fail(X, M90, "wg_in_flight", 128, 4096, b, 2, "accumulator registers written while a wgmma was in flight");
    b[1] = kb_arg_i32(2);   /* read before the wait: poison */
    CHECK_MSG(launch(X, M90, "wg_in_flight", 1, 1, 1, 128, 1, 1, 4096, b, 2) == KB_OK, "%s", B->last_error(X));
    float out[128];
    B->download(X, out, o, sizeof out);
    CHECK_MSG(isnan(out[0]) && isnan(out[127]), "accumulators read in flight: %g, not poison", out[0]);
    expect_fail(X, M90, "wg_no_fence", 64, 4096, a, 1, "a warpgroup is 4 whole warps");
    B->free(X, o);
}

/* ---- the pipeline ---- */
static void run_pipeline(kb_backend_ctx *x, kb_module *m, int bug, const char *want)
{
    enum { KT = 6, K = 64 * KT };
    uint16_t *a = malloc(64 * K * 2), *b = malloc(64 * K * 2);
    float c[64 * 64];
    unsigned seed = 5;
    for (int i = 0; i < 64 * K; i++) {
        a[i] = kb_f32_to_bf16_bits((float)(rand_r(&seed) % 17) / 8.0f - 1.0f);
        b[i] = kb_f32_to_bf16_bits((float)(rand_r(&seed) % 13) / 8.0f - 0.75f);
    }
    kb_dptr da = dalloc(x, 64 * K * 2), db = dalloc(x, 64 * K * 2), dc = dalloc(x, sizeof c);
    B->upload(x, da, a, 64 * K * 2);
    B->upload(x, db, b, 64 * K * 2);
    kb_tmap_desc d = { .dtype = KB_TMAP_BF16, .rank = 2, .dims = { K, 64 }, .strides = { K * 2 },
                       .box = { 64, 64 }, .swizzle = KB_TMAP_SWIZZLE_128B };
    kb_arg ma, mb;
    char err[256];
    d.base = da;
    CHECK(kb_backend_tmap_encode(B, x, &d, &ma, err, sizeof err) == KB_OK);
    d.base = db;
    CHECK(kb_backend_tmap_encode(B, x, &d, &mb, err, sizeof err) == KB_OK);
    kb_arg args[] = { ma, mb, kb_arg_ptr(dc), kb_arg_i32(KT), kb_arg_i32(bug) };
    kb_status st = launch(x, m, "pipeline", 1, 1, 1, 256, 1, 1, 32768, args, 5);
    if (want && !*want) {
        CHECK_MSG(st != KB_OK && (contains(B->last_error(x), "mbarrier wait on a stale parity") ||
                                  contains(B->last_error(x), "deadlock")), "pipeline bug %d: %s", bug,
                  st == KB_OK ? "passed" : B->last_error(x));
    } else if (want) {
        CHECK_MSG(st != KB_OK && contains(B->last_error(x), want), "pipeline bug %d: %s (want '%s')", bug,
                  st == KB_OK ? "passed" : B->last_error(x), want);
    } else {
        CHECK_MSG(st == KB_OK, "pipeline: %s", B->last_error(x));
        B->download(x, c, dc, sizeof c);
        int bad = 0;
        for (int i = 0; i < 64; i++)
            for (int j = 0; j < 64; j++) {
                double s = 0;
                for (int k = 0; k < K; k++)
                    s += (double)kb_bf16_bits_to_f32(a[i * K + k]) * kb_bf16_bits_to_f32(b[j * K + k]);
                bad += fabs(c[i * 64 + j] - s) > 1e-4 * (1 + fabs(s));
            }
        CHECK_MSG(bad == 0, "pipeline: %d of 4096 outputs wrong", bad);
    }
    B->free(x, dc), B->free(x, db), B->free(x, da);
    free(a), free(b);
}

static void test_pipeline_schedules(void)
{
    const char *scheds[] = { "lockstep", "warp-ahead", "random:1", "random:7" };
    for (int s = 0; s < 4; s++) {
        kb_backend_opts o = { .emu_threads = 1, .emu_schedule = scheds[s] };
        kb_backend_ctx *x = NULL;
        char err[256];
        CHECK(B->init(&o, &x, err, sizeof err) == KB_OK);
        kb_module *m = build_sm90(x);
        run_pipeline(x, m, 0, NULL);
        /* released before the wgmma retired: the producer's next copy into the stage meets the
         * wgmma still in flight - where the schedule lets the producer run before the consumers
         * retire. Warp-ahead never does (the consumers' higher warps always run first), so
         * there the early release goes unseen; lockstep and random catch it. */
        if (s != 1)
            run_pipeline(x, m, 1, "TMA load into shared memory a wgmma in flight reads");
        /* a parity that does not flip: seen as stale, or as the hang it causes */
        run_pipeline(x, m, 3, s == 0 ? "mbarrier wait on a stale parity" : "");
        B->unload(x, m);
        B->fini(x);
    }
    /* expect_tx one box short: a phase completes before its second box landed */
    run_pipeline(X, M90, 2, "has not landed");
}

/* The descriptors' swizzle against the TMA layout of the bytes they read: a checked launch
 * (which sees the generic stores that would re-lay them) passes the correct pipeline and
 * names the rule for descriptors that say 64B over tiles the maps laid out with 128B. */
static void test_wgmma_swizzle_agrees_with_tma(void)
{
    kb_backend_opts o = { .emu_threads = 1, .emu_schedule = "random:3",
                          .emu_checks = KB_EMU_CHECK_RACE | KB_EMU_CHECK_INIT };
    kb_backend_ctx *x = NULL;
    char err[256];
    CHECK(B->init(&o, &x, err, sizeof err) == KB_OK);
    kb_module *m = build_sm90(x);
    run_pipeline(x, m, 0, NULL);
    run_pipeline(x, m, 4, "wgmma descriptor swizzle disagrees with the TMA layout: the A operand's descriptor says "
                          "the 64-byte swizzle, but shared offset");
    CHECK_MSG(contains(B->last_error(x), "with the 128-byte swizzle"), "%s", B->last_error(x));
    B->unload(x, m);
    B->fini(x);
}

/* ---- named barriers, setmaxnreg ---- */
static void test_named_barriers(void)
{
    int out[64];
    kb_dptr o = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(o), kb_arg_i32(3), kb_arg_i32(64) };
    CHECK_MSG(launch(X, M90, "named_bar", 1, 1, 1, 64, 1, 1, 0, a, 3) == KB_OK, "%s", B->last_error(X));
    B->download(X, out, o, sizeof out);
    CHECK(out[32] == 7 && out[63] == 7);
    a[1] = kb_arg_i32(16);
    expect_fail(X, M90, "named_bar", 64, 0, a, 3, "barrier ids are 0..15");
    a[1] = kb_arg_i32(2), a[2] = kb_arg_i32(48);
    expect_fail(X, M90, "named_bar", 64, 0, a, 3, "multiple of the warp size");
    a[2] = kb_arg_i32(96);
    expect_fail(X, M90, "named_bar", 64, 0, a, 3, "can never complete");
    B->free(X, o);
}

static void test_setmaxnreg(void)
{
    kb_dptr o = dalloc(X, 384 * 4);
    kb_arg a[] = { kb_arg_ptr(o), kb_arg_i32(0) };
    CHECK_MSG(launch(X, M90, "regs", 1, 1, 1, 384, 1, 1, 0, a, 2) == KB_OK, "%s", B->last_error(X));
    a[1] = kb_arg_i32(1);
    expect_fail(X, M90, "regs", 384, 0, a, 2, "at setmaxnreg.inc");
    a[1] = kb_arg_i32(2);
    expect_fail(X, M90, "regs", 384, 0, a, 2, "not uniform across warpgroup");
    a[1] = kb_arg_i32(3);
    expect_fail(X, M90, "regs", 384, 0, a, 2, "multiple of 8 in [24, 256]");
    B->free(X, o);
}

/* The remaining rules, one kernel mode each. */
static void test_more_rules(void)
{
    kb_dptr o = dalloc(X, 4096);
    static const char *const mbar_want[] = { "mbarrier.init of a live mbarrier", "more arrivals than its expected count",
                                             "mbarrier wait on a stale phase", "not 8-byte aligned",
                                             "not in shared memory", "count 0 out of range", "mbarrier use before init" };
    for (int k = 0; k < 7; k++) {
        kb_arg a[] = { kb_arg_ptr(o), kb_arg_i32(k) };
        expect_fail(X, M90, "mbar_misc", 32, 0, a, 2, mbar_want[k]);
    }
    static const char *const wg_want[] = { "threads of warpgroup 0 disagree", "disagree on N", "base offset",
                                           "A registers written while a wgmma was in flight" };
    for (int k = 0; k < 4; k++) {
        kb_arg a[] = { kb_arg_ptr(o), kb_arg_i32(k) };
        expect_fail(X, M90, "wg_misc", 128, 4096, a, 2, wg_want[k]);
    }
    kb_arg b[] = { kb_arg_ptr(o) };
    expect_fail(X, M90, "named_bar_disagree", 128, 0, b, 1, "disagree on the count of barrier 1");
    kb_arg z[] = { kb_arg_ptr(o), kb_arg_i32(0), kb_arg_i32(64) };
    expect_fail(X, M90, "named_bar", 64, 0, z, 3, "barrier 0 is __syncthreads'");
    expect_fail(X, M90, "regs_down", 256, 0, b, 1, ".inc may only raise the count");
    /* 128 zero bytes are not a tensor map */
    unsigned char zero[KB_TMAP_BYTES] = { 0 };
    kb_arg t[] = { kb_arg_tmap(zero), kb_arg_ptr(o), kb_arg_i32(256), kb_arg_i32(2), kb_arg_i32(0), kb_arg_i32(0),
                   kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0), kb_arg_i32(0) };
    expect_fail(X, M90, "tma_load_box", 128, 4096, t, 11, "is not one kb_backend_tmap_encode made");
    /* a wgmma operand under a TMA load not landed */
    kb_dptr g = dalloc(X, 8 * 128 * 2);
    B->fill(X, g, 0, 8 * 128 * 2);
    kb_tmap_desc d = { .dtype = KB_TMAP_BF16, .rank = 2, .base = g, .dims = { 128, 8 }, .strides = { 256 },
                       .box = { 128, 8 } };
    kb_arg w[] = { make_map(&d), kb_arg_ptr(o) };
    expect_fail(X, M90, "wg_reads_pending", 128, 4096, w, 2, "where a TMA load has not landed");
    B->free(X, g);
    B->free(X, o);
}

/* wgmma reading operands written without fence.proxy.async (a checked build sees the writes). */
static void test_wgmma_proxy_fence(void)
{
    kb_backend_opts opt = { .emu_threads = 1, .emu_checks = KB_EMU_CHECK_RACE | KB_EMU_CHECK_INIT };
    kb_backend_ctx *x = NULL;
    char err[256];
    CHECK(B->init(&opt, &x, err, sizeof err) == KB_OK);
    kb_module *m = build_sm90(x);
    kb_dptr o = dalloc(x, 512);
    kb_arg a[] = { kb_arg_ptr(o), kb_arg_i32(5) };   /* mode 5: a clean run, fenced */
    CHECK_MSG(launch(x, m, "wg_misc", 1, 1, 1, 128, 1, 1, 4096, a, 2) == KB_OK, "%s", B->last_error(x));
    a[1] = kb_arg_i32(4);
    expect_fail(x, m, "wg_misc", 128, 4096, a, 2, "async proxy read without fence.proxy.async: wgmma");
    /* checked, the write of an operand in flight is caught at the store itself */
    expect_fail(x, m, "wg_in_flight", 128, 4096, (kb_arg[]){ kb_arg_ptr(o), kb_arg_i32(1) }, 2,
                "a store to shared offset 2048 before wgmma.wait_group retired");
    B->free(x, o);
    B->unload(x, m);
    B->fini(x);
}

/* A count outside 24..256 does not compile, on the emulator as under NVRTC. */
static void test_setmaxnreg_compile_time(void)
{
    char src[512], out[512];
    snprintf(src, sizeof src, "%s/regs20.cu", tmpdir);
    snprintf(out, sizeof out, "%s/regs20%s", tmpdir, B->artifact_ext);
    FILE *f = fopen(src, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("#include \"kb_device.h\"\nextern \"C\" __global__ void k(void) { kb_setmaxnreg_inc<20>(); }\n", f);
    fclose(f);
    kb_compile_req req = { .source_path = src, .include_dir = KB_SOURCE_KERNELS_DIR, .sm = 90, .defines = SM90_DEFS,
                           .n_defines = 2 };
    kb_sb log;
    kb_sb_init(&log);
    CHECK(B->build(X, &req, out, &log) == KB_ERR_COMPILE);
    CHECK_MSG(log.s && strstr(log.s, "setmaxnreg: a multiple of 8 in [24, 256]"), "%s", log.s ? log.s : "");
    kb_sb_free(&log);
}

/* ---- tensor-map validation (cuTensorMapEncodeTiled's rules) ---- */
/* Break rule k of a valid map; the reason names it. */
static const char *break_rule(kb_tmap_desc *d, int k)
{
    switch (k) {
    case 0: d->base = 0x1008; return "16-byte aligned";
    case 1: d->strides[0] = 120; return "multiple of 16";
    case 2: d->strides[0] = 1ull << 40; return "below 2^40";
    case 3: d->dims[1] = (1ull << 32) + 1; return "1..2^32";
    case 4: d->box[1] = 257; return "1..256";
    case 5: d->box[0] = 4; d->swizzle = KB_TMAP_SWIZZLE_NONE; return "multiple of 16 bytes";
    case 6: d->swizzle = KB_TMAP_SWIZZLE_64B; return "swizzle span";
    case 7: d->elem_strides[0] = 9; return "1..8";
    case 8: d->rank = 6; return "1..5";
    case 9: d->interleave = KB_TMAP_INTERLEAVE_32B; d->rank = 3; d->dims[2] = 1; d->box[2] = 1; d->strides[1] = 8192;
            d->base = 0x1010; return "32 with";
    case 10: d->dtype = KB_TMAP_U8; d->oob_fill = KB_TMAP_OOB_NAN_REQUEST_ZERO_FMA; return "floating-point";
    case 11: d->interleave = KB_TMAP_INTERLEAVE_16B; return "at least 3";
    case 12: d->interleave = KB_TMAP_INTERLEAVE_32B; d->rank = 3; d->dims[2] = 1; d->box[2] = 1; d->strides[1] = 8192;
             return "swizzle must be 32B";
    default: return NULL;
    }
}

static void test_tmap_validate(void)
{
    const kb_tmap_desc ok = { .dtype = KB_TMAP_BF16, .rank = 2, .base = 0x1000, .dims = { 64, 64 },
                              .strides = { 128 }, .box = { 64, 64 }, .swizzle = KB_TMAP_SWIZZLE_128B };
    char why[256];
    CHECK(kb_tmap_validate(&ok, why, sizeof why) == 0);
    for (int k = 0;; k++) {
        kb_tmap_desc d = ok;
        const char *want = break_rule(&d, k);
        if (!want)
            break;
        why[0] = 0;
        CHECK_MSG(kb_tmap_validate(&d, why, sizeof why) == -1 && strstr(why, want), "rule %d: '%s' (want '%s')", k,
                  why, want);
    }
    /* the emulator encodes a valid map and refuses what it does not model */
    kb_arg a;
    CHECK(kb_backend_tmap_encode(B, X, &ok, &a, why, sizeof why) == KB_OK && a.kind == KB_ARG_TMAP);
    kb_tmap_desc il = ok;
    il.interleave = KB_TMAP_INTERLEAVE_16B, il.rank = 3, il.dims[2] = 1, il.box[2] = 1, il.strides[1] = 8192;
    il.swizzle = KB_TMAP_SWIZZLE_NONE, il.box[0] = 8;
    CHECK(kb_backend_tmap_encode(B, X, &il, &a, why, sizeof why) == KB_ERR_INPUT && strstr(why, "not modelled"));
}

/* The same TMA load through libffi (KBENCH_EMU_FFI=1) as through the direct call. */
static void test_tmap_arg_ffi(void)
{
    setenv("KBENCH_EMU_FFI", "1", 1);
    kb_backend_ctx *saved = X;
    X = open_emu(1, 0);
    unsetenv("KBENCH_EMU_FFI");
    kb_module *saved_m = M90;
    M90 = build_sm90(X);
    uint64_t d2[] = { 100, 37 };
    uint32_t b2[] = { 64, 16 };
    int c2[] = { -8, 30, 0, 0, 0 };
    check_tma_load(2, d2, b2, c2, 128, 1);
    B->unload(X, M90);
    B->fini(X);
    X = saved;
    M90 = saved_m;
}

/* ---- NVRTC: the same kernels for sm_90a; sm_90 refuses the arch-specific ones ---- */
static char *nvrtc_compile(const char *arch, int specific, char **log_out)
{
    char path[512], *src = NULL;
    snprintf(path, sizeof path, "%s/emu_sm90.cu", TEST_KERNELS_DIR);
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    src = calloc(1 << 20, 1);
    size_t n = fread(src, 1, (1 << 20) - 1, f);
    fclose(f);
    src[n] = 0;
    char opt_arch[64], spec[64];
    snprintf(opt_arch, sizeof opt_arch, "--gpu-architecture=%s", arch);
    snprintf(spec, sizeof spec, "-DKB_ARCH_SPECIFIC=%d", specific);
    const char *opts[] = { opt_arch, "-std=c++17", "-I" KB_SOURCE_KERNELS_DIR, "-I" KB_CUDA_INCLUDE_DIR,
                           "-DKB_ARCH=90", spec };
    nvrtcProgram p;
    char *ptx = NULL;
    *log_out = NULL;
    if (nvrtcCreateProgram(&p, src, "emu_sm90.cu", 0, NULL, NULL) == NVRTC_SUCCESS) {
        if (nvrtcCompileProgram(p, 6, opts) == NVRTC_SUCCESS) {
            size_t ps = 0;
            nvrtcGetPTXSize(p, &ps);
            ptx = calloc(ps + 1, 1);
            nvrtcGetPTX(p, ptx);
        } else {
            size_t ls = 0;
            nvrtcGetProgramLogSize(p, &ls);
            *log_out = calloc(ls + 1, 1);
            nvrtcGetProgramLog(p, *log_out);
        }
        nvrtcDestroyProgram(&p);
    }
    free(src);
    return ptx;
}

static void test_nvrtc_sm90a(void)
{
    char *log = NULL, *ptx = nvrtc_compile("sm_90a", 1, &log);
    CHECK_MSG(ptx != NULL, "emu_sm90.cu does not compile for sm_90a:\n%s", log ? log : "");
    if (ptx) {
        const char *need[] = { "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16", "wgmma.fence.sync.aligned",
                               "wgmma.commit_group.sync.aligned", "wgmma.wait_group.sync.aligned",
                               "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes",
                               "cp.async.bulk.tensor.5d.global.shared::cta.tile.bulk_group", "mbarrier.try_wait.parity",
                               "mbarrier.arrive.expect_tx", "fence.proxy.async.shared::cta", "setmaxnreg.inc.sync.aligned.u32",
                               "setmaxnreg.dec.sync.aligned.u32", "elect.sync", "bar.arrive",
                               "wgmma.mma_async.sync.aligned.m64n16k32.f32.e4m3.e4m3", "m64n48k32.s32.s8.s8" };
        for (size_t i = 0; i < sizeof need / sizeof *need; i++)
            CHECK_MSG(strstr(ptx, need[i]) != NULL, "sm_90a PTX lacks %s", need[i]);
    }
    free(ptx);
    free(log);
    /* sm_90 (not 90a): the arch-specific instructions are refused with the reason */
    ptx = nvrtc_compile("sm_90", 0, &log);
    CHECK_MSG(ptx == NULL && log && strstr(log, "wgmma needs sm_90a") && strstr(log, "setmaxnreg needs sm_90a"),
              "sm_90 compiled the sm_90a kernels, or without the reason:\n%s", log ? log : "(no log)");
    free(ptx);
    free(log);
    /* and KB_ARCH_SPECIFIC=1 on the non-a target is caught where it is set */
    ptx = nvrtc_compile("sm_90", 1, &log);
    CHECK_MSG(ptx == NULL && log && strstr(log, "needs --gpu-architecture=sm_90a"), "%s", log ? log : "(no log)");
    free(ptx);
    free(log);
}

int main(void)
{
    /* NVRTC first, on a clean stack: under ASan, NVRTC's large stack copies would otherwise
     * meet the shadow the emulator's fiber switches leave on the main stack */
    RUN(test_nvrtc_sm90a);
    if (!fixture_begin("test_emu_sm90", 0))
        return 1;
    M90 = build_sm90(X);
    if (M90) {
        RUN(test_mbar_phases);
        RUN(test_mbar_rules);
        RUN(test_tma_loads);
        RUN(test_tma_early_read_is_poison);
        RUN(test_tma_store);
        RUN(test_tma_stores);
        RUN(test_setmaxnreg_compile_time);
        RUN(test_proxy_fence);
        RUN(test_wgmma_numerics);
        RUN(test_wgmma_rules);
        RUN(test_pipeline_schedules);
        RUN(test_named_barriers);
        RUN(test_setmaxnreg);
        RUN(test_more_rules);
        RUN(test_wgmma_proxy_fence);
        RUN(test_wgmma_swizzle_agrees_with_tma);
        RUN(test_tmap_validate);
        RUN(test_tmap_arg_ffi);
        B->unload(X, M90);
    }
    fixture_end();
    TEST_MAIN_END();
}
