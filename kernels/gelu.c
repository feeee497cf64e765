/* gelu.c - host side of the GELU family: descriptor, legality, work model,
 * inputs, CPU reference and verification. Device code: gelu.cu. */
#include "engine/exec.h"
#include "engine/valid.h"
#include "engine/verify.h"
#include "kernels/families.h"
#include "stream_model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { V_NAIVE, V_VEC };
enum { P_FORM, P_BLOCK, P_VEC, P_YPAD, P_MAX_GRID };
enum { FORM_ERF, FORM_TANH };

/* Nominal arithmetic per element, counted once here: erf form 0.5*x*(1+erf(x*c)) is
 * 4 multiplies/adds + erf; tanh form 0.5*x*(1+tanh(k*(x+0.044715*x^3))) is 7 + tanh.
 * A transcendental counts as one op; GELU is memory-bound either way. */
#define GELU_FLOPS_ERF 5.0
#define GELU_FLOPS_TANH 8.0

#define GELU_DTYPES (KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16))

static const kb_variant variants[] = {
    [V_NAIVE] = { "naive", "gelu_naive", GELU_DTYPES, "one element per thread, scalar loads" },
    [V_VEC] = { "vec", "gelu_vec", GELU_DTYPES,
                "VEC elements per thread via one 32/64/128-bit access; scalar head/tail for any alignment" },
};

static const char *const forms[] = { "erf", "tanh", NULL };
static const char *const dims[] = { "n" };

static const kb_param params[] = {
    [P_FORM] = { "form", FORM_ERF, forms, 0, "erf: exact GELU; tanh: the GPT-2 approximation",
                 .problem = 1 },
    [P_BLOCK] = { "BLOCK", 256, NULL, 0, "threads per block (multiple of 32, <= 1024)" },
    [P_VEC] = { "VEC", 4, NULL, 1u << V_VEC, "elements per thread (1, 2, 4, 8; at most 16 bytes)" },
    [P_YPAD] = { "ypad", -1, NULL, 0, "y's offset in elements, apart from x's (-1: the case's pad, as x)", -1, 64 },
    [P_MAX_GRID] = { "max_grid", 0, NULL, 1u << V_VEC,
                     "cap on the blocks launched (0: 65535*16); a small cap makes the grid-stride loop go round",
                     0, 65535 * 16 },
};

/* The error model of gelu_f in fp32 (gelu.cu): erff and tanhf are within 2 ulp (CUDA C
 * Programming Guide, mathematical functions, single precision), their argument carries
 * about 2 more units of rounding through the derivative, and 1 + T one half: 6 units of
 * roundoff of 1 + T, scaled by the 0.5 |x| that multiplies it - an error that grows with
 * |x| where the output is near 0. The products add 3 units of the output, and the output
 * dtype's rounding one more (kb_verify_f32_scaled). */
#define GELU_ULPS_OF_1_PLUS_T 6.0
#define GELU_ULPS_OF_OUT 3.0

static int gelu_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t block = c->params[P_BLOCK], vec = c->params[P_VEC];
    if (!kb_valid_block(block, why, n))
        return 0;
    if (c->variant == V_VEC && !kb_valid_vec(vec, c->dtype, why, n))
        return 0;
    if (c->dims[0] < 1) {
        snprintf(why, n, "n=%lld: need at least one element", (long long)c->dims[0]);
        return 0;
    }
    /* grid.x is limited to 2^31-1 blocks: the naive variant needs n/BLOCK of them */
    if (c->variant == V_NAIVE && (c->dims[0] + block - 1) / block > 2147483647LL) {
        snprintf(why, n, "n=%lld needs more than 2^31-1 blocks of %lld threads", (long long)c->dims[0], (long long)block);
        return 0;
    }
    return 1;
}

static kb_work gelu_work(const kb_case *c)
{
    double n = (double)c->dims[0], esz = (double)kb_dtype_size(c->dtype);
    kb_work w = { 0 };
    w.flops = n * (c->params[P_FORM] == FORM_TANH ? GELU_FLOPS_TANH : GELU_FLOPS_ERF);
    w.bytes_read = n * esz;
    w.bytes_written = n * esz;
    return w;
}

typedef struct {
    kb_dptr d_x, d_y;   /* base pointers as launched (x offset by pad elements, y by ypad) */
    float *x;           /* [n] the inputs as the kernel reads them (dequantised) */
    float *want;        /* [n] reference, from the dequantised inputs */
    float *got;         /* [n] scratch for the downloaded output */
    float *extra;       /* [n] the error model's allowance that scales with |x| */
    void *h_io;         /* [n] storage-typed host buffer */
} gelu_state;

static double gelu_ref(double x, int form)
{
    if (form == FORM_TANH)
        return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1.0 + erf(x * 0.7071067811865476));
}

static kb_status gelu_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    int64_t n = c->dims[0];
    size_t esz = kb_dtype_size(c->dtype);
    size_t pad_bytes = (size_t)c->pad * esz;
    size_t ypad_bytes = c->params[P_YPAD] < 0 ? pad_bytes : (size_t)c->params[P_YPAD] * esz;
    kb_status st = KB_ERR_OOM;
    gelu_state *s = calloc(1, sizeof *s);
    if (!s)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the gelu state");
    s->x = malloc((size_t)n * sizeof(float));
    s->want = malloc((size_t)n * sizeof(float));
    s->got = malloc((size_t)n * sizeof(float));
    s->h_io = malloc((size_t)n * esz);
    s->extra = malloc((size_t)n * sizeof(float));
    if (!s->x || !s->want || !s->got || !s->h_io || !s->extra) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation of %lld elements", (long long)n);
        goto fail;
    }
    kb_dptr x, y;
    if ((st = kb_run_alloc(r, n * esz + pad_bytes, &x)) != KB_OK ||
        (st = kb_run_alloc(r, n * esz + ypad_bytes, &y)) != KB_OK)
        goto fail;
    s->d_x = x + pad_bytes;
    s->d_y = y + ypad_bytes;

    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    /* mostly [-6, 6), where both forms curve; one in 16 out to |x| < 64, where tanh and
     * erf saturate and x^3 is large */
    for (int64_t i = 0; i < n; i++)
        s->x[i] = kb_rng_uniform(&rng, -6.0f, 6.0f) * (i % 16 == 15 ? 10.0f : 1.0f);
    kb_host_from_f32(c->dtype, s->x, s->h_io, n);       /* quantise */
    kb_host_to_f32(c->dtype, s->h_io, s->x, n);         /* exactly what the kernel reads */
    int form = (int)c->params[P_FORM];
    double u32 = kb_dtype_unit_roundoff(KB_DT_FP32);
    for (int64_t i = 0; i < n; i++) {
        s->want[i] = (float)gelu_ref(s->x[i], form);
        s->extra[i] = (float)(GELU_ULPS_OF_1_PLUS_T * u32 * 0.5 * fabs(s->x[i]));
    }
    if ((st = kb_run_upload(r, s->d_x, s->h_io, n * esz)) != KB_OK)
        goto fail;
    *state = s;
    return KB_OK;
fail:
    free(s->extra);
    free(s->h_io);
    free(s->got);
    free(s->want);
    free(s->x);
    free(s);
    return st;
}

static kb_status gelu_enqueue(kb_run *r, void *state)
{
    const kb_case *c = r->c;
    gelu_state *s = state;
    int64_t n = c->dims[0];
    unsigned block = (unsigned)c->params[P_BLOCK];
    int64_t per_thread = c->variant == V_VEC ? c->params[P_VEC] : 1;
    /* one thread per element (naive) or per vector (vec; head and tail are < VEC each,
     * covered by the first threads); the vec kernel loops if the grid is capped */
    int64_t threads = (n + per_thread - 1) / per_thread;
    int64_t blocks = (threads + block - 1) / block;
    int64_t cap = c->params[P_MAX_GRID] > 0 ? c->params[P_MAX_GRID] : 65535LL * 16;
    if (c->variant == V_VEC && blocks > cap)
        blocks = cap;
    kb_geom g = { { (unsigned)blocks, 1, 1 }, { block, 1, 1 }, 0, { 1, 1, 1 } };
    kb_arg args[] = { kb_arg_ptr(s->d_x), kb_arg_ptr(s->d_y), kb_arg_i64(n) };
    return kb_run_launch(r, r->f->variants[c->variant].entry, &g, args, 3);
}

static kb_status gelu_check(kb_run *r, void *state, kb_verify *v)
{
    const kb_case *c = r->c;
    gelu_state *s = state;
    int64_t n = c->dims[0];
    kb_status st = kb_run_download(r, s->h_io, s->d_y, n * kb_dtype_size(c->dtype));
    if (st != KB_OK)
        return st;
    kb_host_to_f32(c->dtype, s->h_io, s->got, n);
    kb_run_expose(r, "x", s->x, &n, 1);
    kb_run_expose(r, "out", s->got, &n, 1);
    kb_run_expose(r, "ref", s->want, &n, 1);
    /* atol: half the smallest subnormal step of fp16 (2^-25) where outputs underflow */
    double atol = c->dtype == KB_DT_FP16 ? ldexp(1.0, -25) : 1e-30;
    double rtol = GELU_ULPS_OF_OUT * kb_dtype_unit_roundoff(KB_DT_FP32) + kb_dtype_unit_roundoff(c->dtype);
    kb_verify_init(v, atol, rtol);
    kb_verify_f32_scaled(v, s->got, s->want, s->extra, n);
    return KB_OK;
}

static void gelu_teardown(kb_run *r, void *state)
{
    gelu_state *s = state;
    if (!s)
        return;
    free(s->extra);
    free(s->h_io);
    free(s->got);
    free(s->want);
    free(s->x);
    free(s);
}

/* estimate: one element (naive) or one VEC vector (vec) per thread, grid as enqueue's */
static int gelu_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t)
{
    int64_t per = c->variant == V_VEC ? c->params[P_VEC] : 1, block = c->params[P_BLOCK];
    int64_t blocks = ((c->dims[0] + per - 1) / per + block - 1) / block;
    if (c->variant == V_VEC && blocks > 65535LL * 16)
        blocks = 65535LL * 16;
    kb_stream_shape s = { blocks, (int)block, 0, (double)(per * (int64_t)kb_dtype_size(c->dtype)), 1.0 };
    (void)g;
    return kb_stream_traffic(kb_families[c->family], c, &s, t);
}

const kb_family kb_family_gelu = {
    .name = "gelu",
    .source = "gelu.cu",
    .about = "GELU activation (erf and tanh forms), elementwise",
    .variants = variants, .n_variants = KB_COUNT(variants),
    .dims = dims, .n_dims = KB_COUNT(dims),
    .params = params, .n_params = KB_COUNT(params),
    .valid = gelu_valid,
    .defines = NULL,
    .work = gelu_work,
    .setup = gelu_setup,
    .enqueue = gelu_enqueue,
    .check = gelu_check,
    .teardown = gelu_teardown,
    .traffic = gelu_traffic,
};
