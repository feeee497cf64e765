/* gemm_inputs.c - a GEMM case's inputs, scale tensors and two references (gemm_inputs.h).
 *
 * Leading dimensions carry the pad axis (gemm.c); the gap elements of padded rows are 0xFF
 * bytes (NaN for the float types) so a kernel that reads them shows it.
 */
#include "engine/quant.h"
#include "engine/verify.h"
#include "gemm_inputs.h"
#include "gemm_wgmma.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Outputs are checked on at most this many multiply-adds of reference work; bigger
 * problems are checked on evenly spaced rows (all columns of each), and the verify
 * record's first_bad then indexes the compared rows, not D. */
#define REF_MAX_MACS (1LL << 28)

/* C is drawn from a table of VALUES seeded values in its output type (bf16 for the scaled
 * dtypes, fp32 for tf32, int32 in [-1000, 1000] for int8). */
#define VALUES 4096

static void fill_c(kb_rng *rng, kb_dtype dt, size_t osz, void *h, int64_t ld, int64_t rows, int64_t cols, float *cf)
{
    uint32_t bits[VALUES];
    float val[VALUES];
    kb_dtype out = dt == KB_DT_TF32 ? KB_DT_FP32 : kb_gemm_lowp(dt) ? KB_DT_BF16 : dt;
    for (int i = 0; i < VALUES; i++) {
        uint32_t u = kb_rng_u32(rng);
        bits[i] = 0;
        if (dt == KB_DT_INT8) {
            int32_t v = (int32_t)(u % 2001u) - 1000;
            memcpy(&bits[i], &v, 4);
            val[i] = (float)v;
            continue;
        }
        float x = kb_rng_uniform(rng, -1.0f, 1.0f);
        kb_host_from_f32(out, &x, &bits[i], 1);   /* little-endian: the low bytes */
        kb_host_to_f32(out, &bits[i], &val[i], 1);
    }
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < cols; j++) {
            uint32_t v = kb_rng_u32(rng) % VALUES;
            memcpy((unsigned char *)h + (size_t)(r * ld + j) * osz, &bits[v], osz);
            cf[r * cols + j] = val[v];
        }
}

void kb_gemm_state_free(gemm_state *s)
{
    if (!s)
        return;
    free(s->a);
    free(s->b);
    free(s->ra);
    free(s->rb);
    free(s->want);
    free(s->extra);
    free(s->truth);
    free(s->rows);
    free(s->h_d);
    free(s->got);
    free(s->c);
    free(s->rows_f);
    free(s);
}

static kb_status upload_new(kb_run *r, const void *h, size_t bytes, kb_dptr *d)
{
    kb_status st = kb_run_alloc(r, bytes, d);
    return st == KB_OK ? kb_run_upload(r, *d, h, bytes) : st;
}

/* ---- operands ---- */

/* Real values of A (m x k, at ra[i * k + kk]) and B (k x n, at rb[kk * n + j]) from the case's
 * distribution, each seen as rows x K with the recipe's blocks. */
static void draw(const kb_case *c, gemm_state *s, kb_rng *rng)
{
    const kb_gemm_geo *g = &s->g;
    int64_t br, bk;
    double fmax = kb_dtype_fmax(c->dtype);
    kb_recipe_block((kb_recipe)s->recipe, 0, g->m, g->k, &br, &bk);
    kb_dist_fill((kb_dist)s->dist, rng, 0, g->m, g->k, br, bk, fmax, s->ra, g->k, 1);
    kb_recipe_block((kb_recipe)s->recipe, 1, g->n, g->k, &br, &bk);
    kb_dist_fill((kb_dist)s->dist, rng, 1, g->n, g->k, br, bk, fmax, s->rb, 1, g->n);
}

/* Quantise operand is_b into its stored layout h (0xFF gaps kept) and its dequantised
 * logical values; int8's real values then move to the integer domain (x / scale). */
static void quantise(const kb_qop *q, int is_b, const kb_gemm_geo *g, void *h, float *deq, float *real)
{
    int64_t ld = is_b ? g->ldb : g->lda;
    int trans = is_b ? g->b_t : g->a_t;
    for (int64_t r = 0; r < q->rows; r++)
        for (int64_t kk = 0; kk < q->k; kk++) {
            /* logical index: A (r, kk) at r * k + kk; B (kk, r) at kk * n + r */
            int64_t li = is_b ? kk * g->n + r : r * g->k + kk;
            /* stored: A 'n' (r, kk) at r * lda + kk, 't' at kk * lda + r; B 'n' (kk, r) at kk * ldb + r, 't' at r * ldb + kk */
            int64_t si = is_b ? (trans ? r * ld + kk : kk * ld + r) : (trans ? kk * ld + r : r * ld + kk);
            uint32_t bits = kb_qop_quantise(q, r, kk, real[li], &deq[li]);
            memcpy((unsigned char *)h + (size_t)si * g->esz, &bits, g->esz);   /* little-endian: low bytes */
            if (q->int_domain)
                real[li] /= q->tensor;
        }
}

/* The scale tensor of a kbench kernel (gemm.cu SA / SB): the quantiser's blocks, row-block
 * major - FP32 values, or the UE8M0 / UE4M3 codes. Nothing for the tensor recipe. */
static kb_status upload_scales(kb_run *r, const kb_qop *q, kb_dptr *d)
{
    *d = 0;
    if (q->recipe == KB_RECIPE_TENSOR || !q->n_vals)
        return KB_OK;
    size_t n = (size_t)(q->rblocks * q->kblocks);
    return q->code ? upload_new(r, q->code, n, d) : upload_new(r, q->scale, n * sizeof(float), d);
}

/* ---- references ---- */

/* The accumulation error a kernel may make on a checked element, from the error sources
 * rather than kb_tolerance's "summed in the dtype" model, which at K = 4096 would let an fp8
 * kernel drop a whole K tile unnoticed: fp32 accumulation of K products onto partial sums
 * that grow like a random walk gives about u K P / sqrt(2), P the element's largest product
 * |alpha a_k b_k|; we allow 4 u K P with u = 2^-22 (one bit of slack for tensor cores that
 * truncate rather than round), and u = 2^-13 for fp8/fp6/fp4, whose tensor-core
 * accumulation has been reported to keep only about 14 bits on Hopper (DeepSeek-V3 technical
 * report, section 3.3.2) - unverified here, no GPU. P is per element (not the operands'
 * global max): with block scales an element's products may be 2^80 apart from another's.
 * D's rounding to its storage type is the relative tolerance, 2 u_out (C enters the
 * reference as the stored values, so beta C adds no error of its own). int8 is exact. */
static double acc_unit(kb_dtype dt)
{
    return dt == KB_DT_INT8 ? 0.0 : ldexp(1.0, kb_gemm_lowp(dt) ? -13 : -22);
}

/* The two references of checked row i (row m of D): want and its allowance from the
 * dequantised operands, truth from the real ones. acc, pmax, tru: n doubles of scratch. */
static void reference_row(const kb_case *c, gemm_state *s, const float *cf, int64_t i, int64_t m, double *acc,
                          double *pmax, double *tru)
{
    const kb_gemm_geo *g = &s->g;
    double alpha = (double)c->params[P_ALPHA], beta = (double)c->params[P_BETA];
    double allow = 4.0 * acc_unit(c->dtype) * (double)g->k * fabs(alpha);
    for (int64_t j = 0; j < g->n; j++)
        acc[j] = pmax[j] = tru[j] = 0.0;
    for (int64_t k = 0; k < g->k; k++) {
        double a = s->a[m * g->k + k], ar = s->ra[m * g->k + k];
        const float *brow = s->b + k * g->n, *rrow = s->rb + k * g->n;
        for (int64_t j = 0; j < g->n; j++) {
            double p = a * brow[j];
            acc[j] += p;
            pmax[j] = fabs(p) > pmax[j] ? fabs(p) : pmax[j];   /* NaN products leave it alone */
            tru[j] += ar * rrow[j];
        }
    }
    for (int64_t j = 0; j < g->n; j++) {
        double cb = cf ? beta * cf[m * g->n + j] : 0.0;
        s->want[i * g->n + j] = (float)(alpha * acc[j] + cb);
        s->extra[i * g->n + j] = (float)(allow * pmax[j]);
        s->truth[i * g->n + j] = alpha * tru[j] + cb;
    }
}

/* Every row when that is cheap, else evenly spaced rows (first and last included). -1 when
 * out of memory. */
static int reference(const kb_case *c, gemm_state *s, const float *cf)
{
    const kb_gemm_geo *g = &s->g;
    int64_t macs_per_row = g->n * g->k, max_rows = REF_MAX_MACS / (macs_per_row ? macs_per_row : 1);
    s->ref_rows = g->m < max_rows ? g->m : max_rows < 2 ? (g->m < 2 ? g->m : 2) : max_rows;
    size_t cells = (size_t)(s->ref_rows * g->n);
    s->rows = malloc((size_t)s->ref_rows * sizeof *s->rows);
    s->want = malloc(cells * sizeof(float));
    s->extra = malloc(cells * sizeof(float));
    s->truth = malloc(cells * sizeof(double));
    double *scratch = malloc(3 * (size_t)g->n * sizeof(double));
    if (!s->rows || !s->want || !s->extra || !s->truth || !scratch) {
        free(scratch);
        return -1;
    }
    for (int64_t i = 0; i < s->ref_rows; i++) {
        int64_t m = s->ref_rows == g->m ? i : (s->ref_rows > 1 ? i * (g->m - 1) / (s->ref_rows - 1) : 0);
        s->rows[i] = m;
        reference_row(c, s, cf, i, m, scratch, scratch + g->n, scratch + 2 * g->n);
    }
    free(scratch);
    return 0;
}

/* ---- cuBLASLt ---- */

/* Operand is_b's scale tensor in the layout cuBLASLt reads (core/precision.h): FP32 or one
 * byte per scale, padding zero. Uploaded to *d; nothing for the tensor recipe. */
static kb_status upload_lt_scales(kb_run *r, const kb_qop *q, int is_b, kb_dptr *d)
{
    kb_lt_scale_layout l = kb_recipe_lt_layout(q->recipe, is_b);
    int64_t n = kb_lt_scale_count(l, q->rows, q->kblocks, q->rblocks);
    size_t esz = q->code ? 1 : sizeof(float);
    unsigned char *buf = calloc((size_t)n, esz);
    if (!buf)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of a cuBLASLt scale tensor");
    for (int64_t rb = 0; rb < q->rblocks; rb++)
        for (int64_t kb = 0; kb < q->kblocks; kb++) {
            int64_t o = kb_lt_scale_offset(l, q->rows, q->kblocks, rb, kb), i = rb * q->kblocks + kb;
            if (q->code)
                buf[o] = q->code[i];
            else
                memcpy(buf + (size_t)o * esz, &q->scale[i], esz);
        }
    kb_status st = upload_new(r, buf, (size_t)n * esz, d);
    free(buf);
    return st;
}

/* fp4 as cuBLASLt reads it: two codes per byte along the stored rows, the first in the low
 * nibble (kbench stores one per byte). rows x ld elements, ld even (valid()). */
static kb_status upload_packed_fp4(kb_run *r, const unsigned char *h, int64_t rows, int64_t ld, kb_dptr *d)
{
    size_t bytes = (size_t)(rows * ld / 2);
    unsigned char *p = malloc(bytes ? bytes : 1);
    if (!p)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of packed fp4 operands");
    for (size_t i = 0; i < bytes; i++)
        p[i] = (unsigned char)((h[2 * i] & 15u) | (h[2 * i + 1] & 15u) << 4);   /* two 0xFF gaps pack to 0xFF */
    kb_status st = upload_new(r, p, bytes, d);
    free(p);
    return st;
}

/* The cuBLASLt call of the case on the uploaded operands: the same shape, layout, leading
 * dimensions, alpha/beta and scales as kbench's kernels get (nv's tensor scales folded into
 * alpha: cuBLASLt's VEC16_UE4M3 mode has no per-tensor scale of its own). */
static kb_status plan_cublaslt(kb_run *r, gemm_state *s, const kb_qop *qa, const kb_qop *qb, const void *h_a,
                               const void *h_b)
{
    const kb_case *c = r->c;
    const kb_gemm_geo *g = &s->g;
    const int64_t *p = c->params;
    float alpha = (float)p[P_ALPHA] * (s->recipe == KB_RECIPE_NV ? qa->tensor * qb->tensor : 1.0f);
    kb_vendor_op op = { .kind = KB_VOP_MATMUL, .u.mm = {
        .dtype = c->dtype, .m = g->m, .n = g->n, .k = g->k, .a_trans = g->a_t, .b_trans = g->b_t,
        .lda = g->lda, .ldb = g->ldb, .ldc = g->ldc, .a = s->d_a, .b = s->d_b, .c = s->d_c, .d = s->d_d,
        .alpha = alpha, .beta = (float)p[P_BETA], .algo = (int)p[P_ALGO], .recipe = s->recipe,
        .search = p[P_SEARCH] == SEARCH_ENUMERATE ? (int)p[P_BUDGET] : 0,
        .workspace_bytes = (size_t)p[P_WORKSPACE] << 20 } };
    kb_status st = KB_OK;
    if (c->dtype == KB_DT_FP4E2M1 &&
        ((st = upload_packed_fp4(r, h_a, g->a_rows, g->lda, &op.u.mm.a)) != KB_OK ||
         (st = upload_packed_fp4(r, h_b, g->b_rows, g->ldb, &op.u.mm.b)) != KB_OK))
        return st;
    if (kb_gemm_lowp(c->dtype) && s->recipe == KB_RECIPE_TENSOR) {
        float scales[2] = { s->scale_a, s->scale_b };   /* cuBLASLt reads them from device memory */
        st = upload_new(r, scales, sizeof scales, &op.u.mm.scale_a);
        op.u.mm.scale_b = op.u.mm.scale_a ? op.u.mm.scale_a + sizeof(float) : 0;
    } else if (kb_gemm_lowp(c->dtype)) {
        if ((st = upload_lt_scales(r, qa, 0, &op.u.mm.scale_a)) == KB_OK)
            st = upload_lt_scales(r, qb, 1, &op.u.mm.scale_b);
    }
    return st == KB_OK ? kb_run_vendor_plan(r, &op, &s->plan) : st;
}

/* ---- setup ---- */

/* For --dump and the record: the logical operands (dequantised: a scaled operand is its
 * codes times every scale, so q = a / scale_a for the tensor recipe), C when it is read, and
 * the constants D = alpha A B + beta C depends on. s takes cf. */
static void expose_inputs(kb_run *r, gemm_state *s, float *cf)
{
    const kb_gemm_geo *g = &s->g;
    int64_t sa[2] = { g->m, g->k }, sb[2] = { g->k, g->n }, sc[2] = { g->m, g->n };
    s->c = cf;
    kb_run_expose(r, "a", s->a, sa, 2);
    kb_run_expose(r, "b", s->b, sb, 2);
    if (cf)
        kb_run_expose(r, "c", cf, sc, 2);
    kb_run_constant(r, "alpha", (double)r->c->params[P_ALPHA]);
    kb_run_constant(r, "beta", (double)r->c->params[P_BETA]);
    kb_run_constant(r, "scale_a", s->scale_a);
    kb_run_constant(r, "scale_b", s->scale_b);
}

/* Real values drawn, quantised into the stored operands h_a, h_b (allocated by the caller,
 * 0xFF-filled), the per-tensor scales kept; qa, qb initialised (the caller frees them). */
static kb_status make_operands(kb_run *r, gemm_state *s, void *h_a, void *h_b, kb_qop *qa, kb_qop *qb, kb_rng *rng)
{
    const kb_case *c = r->c;
    const kb_gemm_geo *g = &s->g;
    draw(c, s, rng);
    kb_status st = kb_qop_init(qa, c->dtype, (kb_recipe)s->recipe, 0, g->m, g->k, s->ra, g->k, 1);
    if (st == KB_OK)
        st = kb_qop_init(qb, c->dtype, (kb_recipe)s->recipe, 1, g->n, g->k, s->rb, 1, g->n);
    if (st != KB_OK)
        return kb_run_fail(r, st, "host allocation of the scales");
    quantise(qa, 0, g, h_a, s->a, s->ra);
    quantise(qb, 1, g, h_b, s->b, s->rb);
    /* the per-tensor scales the kernels apply (int8 computes in its integer domain) */
    s->scale_a = qa->int_domain ? 1.0f : qa->tensor;
    s->scale_b = qb->int_domain ? 1.0f : qb->tensor;
    return KB_OK;
}

/* Device buffers: A, B, D (poison: unwritten shows), C, the scale tensors, split-K's workspace. */
static kb_status uploads(kb_run *r, gemm_state *s, const void *h_a, const void *h_b, const void *h_c,
                         const kb_qop *qa, const kb_qop *qb)
{
    const kb_gemm_geo *g = &s->g;
    size_t a_bytes = (size_t)(g->a_rows * g->lda) * g->esz, b_bytes = (size_t)(g->b_rows * g->ldb) * g->esz;
    size_t d_bytes = (size_t)(g->m * g->ldc) * g->osz;
    kb_status st;
    if ((st = upload_new(r, h_a, a_bytes, &s->d_a)) != KB_OK || (st = upload_new(r, h_b, b_bytes, &s->d_b)) != KB_OK ||
        (st = upload_new(r, s->h_d, d_bytes, &s->d_d)) != KB_OK)
        return st;
    s->d_c = s->d_d;   /* never read when beta == 0 */
    if (h_c && (st = upload_new(r, h_c, d_bytes, &s->d_c)) != KB_OK)
        return st;
    if (r->c->variant == V_MMA || r->c->variant == V_NAIVE) {
        if ((st = upload_scales(r, qa, &s->d_sa)) != KB_OK || (st = upload_scales(r, qb, &s->d_sb)) != KB_OK)
            return st;
    }
    if (r->c->variant == V_MMA && r->c->params[P_SPLITK] > 1 &&
        (st = kb_run_alloc(r, (size_t)(r->c->params[P_SPLITK] * g->m * g->n) * 4, &s->d_w)) != KB_OK)
        return st;   /* every slice writes all of its M x N partial sums: no clearing */
    if (r->c->variant == V_CUBLASLT)
        return plan_cublaslt(r, s, qa, qb, h_a, h_b);
    if (r->c->variant == V_WGMMA) {
        if ((st = kb_gemm_wgmma_maps(r, g, s->d_a, s->d_b, s->d_c, s->d_d, s->maps)) != KB_OK)
            return st;
        s->wg_geom = kb_gemm_wgmma_geom(r);   /* asks the device once, outside the timed enqueue */
    }
    return KB_OK;
}

kb_status kb_gemm_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    kb_status st = KB_ERR_OOM;
    kb_qop qa = { 0 }, qb = { 0 };
    gemm_state *s = calloc(1, sizeof *s);
    void *h_a = NULL, *h_b = NULL, *h_c = NULL;
    float *cf = NULL;
    if (!s)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the gemm state");
    kb_gemm_geo g = s->g = kb_gemm_geo_of(c);
    s->recipe = (int)c->params[P_SCALE];
    s->dist = (int)c->params[P_DIST];
    int beta = c->params[P_BETA] != 0;
    size_t a_bytes = (size_t)(g.a_rows * g.lda) * g.esz, b_bytes = (size_t)(g.b_rows * g.ldb) * g.esz;
    size_t d_bytes = (size_t)(g.m * g.ldc) * g.osz, mk = (size_t)(g.m * g.k), kn = (size_t)(g.k * g.n);
    s->a = malloc(mk * sizeof(float)), s->ra = malloc(mk * sizeof(float));
    s->b = malloc(kn * sizeof(float)), s->rb = malloc(kn * sizeof(float));
    s->h_d = malloc(d_bytes);
    h_a = malloc(a_bytes);
    h_b = malloc(b_bytes);
    if (beta) {
        h_c = malloc(d_bytes);
        cf = malloc((size_t)(g.m * g.n) * sizeof(float));
    }
    if (!s->a || !s->b || !s->ra || !s->rb || !s->h_d || !h_a || !h_b || (beta && (!h_c || !cf))) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation of %lldx%lldx%lld operands", (long long)g.m, (long long)g.n,
                    (long long)g.k);
        goto fail;
    }
    memset(h_a, 0xff, a_bytes);
    memset(h_b, 0xff, b_bytes);
    memset(s->h_d, 0xff, d_bytes);
    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    if ((st = make_operands(r, s, h_a, h_b, &qa, &qb, &rng)) != KB_OK)
        goto fail;
    if (beta) {
        memset(h_c, 0xff, d_bytes);
        fill_c(&rng, c->dtype, g.osz, h_c, g.ldc, g.m, g.n, cf);
    }
    if (reference(c, s, cf) != 0) {
        st = kb_run_fail(r, KB_ERR_OOM, "host allocation of the reference");
        goto fail;
    }
    if ((st = uploads(r, s, h_a, h_b, h_c, &qa, &qb)) != KB_OK)
        goto fail;
    expose_inputs(r, s, cf);
    cf = NULL;                 /* kept by the state for --dump */
    *state = s;
    st = KB_OK;
    s = NULL;
fail:
    kb_qop_free(&qa);
    kb_qop_free(&qb);
    free(cf);
    free(h_c);
    free(h_b);
    free(h_a);
    kb_gemm_state_free(s);
    return st;
}
