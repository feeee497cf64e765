/* test_coll_data.c - collective/coll_data: storage conversions (the same rounding as the
 * engine's), deterministic inputs, exact products in any order, the sum tolerance against
 * every reduction order (and shown to need its n), and the element-by-element check
 * naming the source of wrong copied elements. */
#include "check.h"
#include "collective/coll_data.h"
#include "engine/verify.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const kb_dtype dts[] = { KB_DT_FP32, KB_DT_BF16, KB_DT_FP16, KB_DT_INT8 };

/* kb_coll_store rounds as the engine's kb_host_from_f32 (round to nearest even). */
static void test_conversions_match_engine(void)
{
    kb_rng r;
    kb_rng_seed(&r, 7);
    for (int t = 1; t < 3; t++) {
        for (int i = 0; i < 20000; i++) {
            float f = kb_rng_uniform(&r, -70000.0f, 70000.0f) * (i % 3 ? 1.0f : 1e-6f);
            unsigned char a[2], b[2];
            kb_coll_store(dts[t], a, 0, f);
            kb_host_from_f32(dts[t], &f, b, 1);
            CHECK_MSG(!memcmp(a, b, 2), "%s %.9g", kb_dtype_name(dts[t]), f);
            float back;
            kb_host_to_f32(dts[t], a, &back, 1);
            CHECK(kb_coll_load(dts[t], a, 0) == back || (isnan(back) && isnan(kb_coll_load(dts[t], a, 0))));
        }
    }
    unsigned char h[2];
    kb_coll_store(KB_DT_FP16, h, 0, 0x1p-24);   /* the smallest subnormal */
    CHECK(kb_coll_load(KB_DT_FP16, h, 0) == 0x1p-24);
    kb_coll_store(KB_DT_FP16, h, 0, 70000.0);
    CHECK(isinf(kb_coll_load(KB_DT_FP16, h, 0)));
    int8_t q;
    kb_coll_store(KB_DT_INT8, &q, 0, 300.0);
    CHECK(q == 127);
}

static void test_inputs_deterministic(void)
{
    kb_coll_desc d = { KB_COLL_ALL_REDUCE, KB_DT_BF16, KB_REDOP_SUM, 4, 0, 1000, 42 };
    unsigned char buf[2];
    int differ = 0;
    for (size_t i = 0; i < 1000; i++) {
        double x = kb_coll_input(&d, 1, i);
        kb_coll_store(d.dtype, buf, 0, x);
        CHECK(kb_coll_load(d.dtype, buf, 0) == x && x >= -1 && x < 1);   /* representable, in range */
        CHECK(x == kb_coll_input(&d, 1, i));
        differ += x != kb_coll_input(&d, 2, i);
    }
    CHECK(differ > 990);   /* ranks' inputs differ */
    double a = kb_coll_input(&d, 1, 5);
    d.seed = 43;
    CHECK(kb_coll_input(&d, 1, 5) != a);   /* the seed changes them */
}

/* v rounded to the dtype (through storage). */
static double rnd(kb_dtype dt, double v)
{
    unsigned char b[4];
    kb_coll_store(dt, b, 0, v);
    return kb_coll_load(dt, b, 0);
}

/* Products: exact in the dtype whatever the order (forward, backward, pairwise). */
static void test_products_exact_in_any_order(void)
{
    for (int t = 0; t < 3; t++)
        for (int n = 2; n <= 9; n++) {
            kb_coll_desc d = { KB_COLL_ALL_REDUCE, dts[t], KB_REDOP_PROD, n, 0, 200, 9 };
            for (size_t i = 0; i < 200; i++) {
                double want, tol, x[16], fwd = 1, bwd = 1;
                int src;
                kb_coll_expect(&d, 0, i, &want, &tol, &src);
                for (int r = 0; r < n; r++)
                    x[r] = kb_coll_input(&d, r, i);
                for (int r = 0; r < n; r++) {
                    fwd = rnd(d.dtype, fwd * x[r]);
                    bwd = rnd(d.dtype, bwd * x[n - 1 - r]);
                }
                for (int w = 1; w < n; w *= 2)   /* a tree */
                    for (int r = 0; r + w < n; r += 2 * w)
                        x[r] = rnd(d.dtype, x[r] * x[r + w]);
                CHECK_MSG(tol == 0 && fwd == want && bwd == want && x[0] == want, "%s n %d i %zu",
                          kb_dtype_name(d.dtype), n, i);
            }
        }
}

/* Sums: every order stays within the bound; the bound needs its n (a single rounding's
 * bound is exceeded), and a result off by twice the bound fails. */
static void test_sum_tolerance(void)
{
    for (int t = 0; t < 3; t++) {
        int n = 16;
        kb_coll_desc d = { KB_COLL_ALL_REDUCE, dts[t], KB_REDOP_SUM, n, 0, 4000, 3 };
        double worst_ratio = 0;
        for (size_t i = 0; i < 4000; i++) {
            double want, tol, x[16], fwd = 0, bwd = 0;
            int src;
            kb_coll_expect(&d, 0, i, &want, &tol, &src);
            for (int r = 0; r < n; r++)
                x[r] = kb_coll_input(&d, r, i);
            double abs_sum = 0;
            for (int r = 0; r < n; r++) {
                fwd = rnd(d.dtype, fwd + x[r]);
                bwd = rnd(d.dtype, bwd + x[n - 1 - r]);
                abs_sum += fabs(x[r]);
            }
            for (int w = 1; w < n; w *= 2)
                for (int r = 0; r + w < n; r += 2 * w)
                    x[r] = rnd(d.dtype, x[r] + x[r + w]);
            CHECK(fabs(fwd - want) <= tol && fabs(bwd - want) <= tol && fabs(x[0] - want) <= tol);
            double one = kb_coll_unit_roundoff(d.dtype) * abs_sum;   /* one rounding's bound */
            double r = fabs(fwd - want) / one;
            worst_ratio = r > worst_ratio ? r : worst_ratio;
        }
        CHECK_MSG(worst_ratio > 1.0, "%s: a chain of 15 additions should exceed one rounding's bound (%.2f)",
                  kb_dtype_name(d.dtype), worst_ratio);
    }
}

static void test_verify_all_reduce(void)
{
    for (size_t t = 0; t < 4; t++) {
        kb_coll_desc d = { KB_COLL_ALL_REDUCE, dts[t], KB_REDOP_SUM, 3, 0, 37, 11 };
        unsigned char buf[37 * 4];
        for (size_t j = 0; j < 37; j++) {   /* the ring order 1, 2, 0 rounded each step (int8 wraps) */
            double acc = kb_coll_input(&d, 1, j);
            for (int r = 2; r < 4; r++) {
                double v = acc + kb_coll_input(&d, r % 3, j);
                acc = dts[t] == KB_DT_INT8 ? (int8_t)(int)v : rnd(d.dtype, v);
            }
            kb_coll_store(d.dtype, buf, j, acc);
        }
        kb_coll_check c;
        CHECK(kb_coll_verify(&d, 1, buf, &c) == 0 && c.checked == 37 && c.first_wrong == -1);
        double want, tol;
        int src;
        kb_coll_expect(&d, 1, 20, &want, &tol, &src);
        kb_coll_store(d.dtype, buf, 20, want + 2 * tol + (dts[t] == KB_DT_INT8 ? 1 : 0.01));
        CHECK(kb_coll_verify(&d, 1, buf, &c) == 1 && c.first_wrong == 20 && c.n_suspects == 0);
        kb_coll_store(d.dtype, buf, 20, NAN);
        CHECK(dts[t] == KB_DT_INT8 || kb_coll_verify(&d, 1, buf, &c) == 1);
    }
}

/* Copying ops: each wrong element names the rank it came from. */
static void test_verify_names_sources(void)
{
    kb_coll_desc d = { KB_COLL_ALL_GATHER, KB_DT_FP16, KB_REDOP_SUM, 4, 0, 5, 1 };
    unsigned char buf[20 * 2];
    for (int q = 0; q < 4; q++) {
        kb_coll_desc s = d;
        kb_coll_fill(&s, q, buf + q * 5 * 2);
    }
    kb_coll_check c;
    CHECK(kb_coll_verify(&d, 0, buf, &c) == 0);
    memset(buf + 2 * 5 * 2, 0xFF, 4);   /* rank 2's block, first two elements */
    CHECK(kb_coll_verify(&d, 0, buf, &c) == 2 && c.first_wrong == 10 && c.n_suspects == 1 && c.suspects[0] == 2);
    /* sendrecv: rank 0 receives from rank 3 */
    kb_coll_desc sr = { KB_COLL_SENDRECV, KB_DT_INT8, KB_REDOP_SUM, 4, 0, 9, 5 };
    int8_t in[9];
    kb_coll_fill(&sr, 3, in);
    CHECK(kb_coll_verify(&sr, 0, in, &c) == 0);
    in[8] ^= 1;
    CHECK(kb_coll_verify(&sr, 0, in, &c) == 1 && c.suspects[0] == 3);
    /* alltoall: rank 1's block j holds rank j's block 1 */
    kb_coll_desc a = { KB_COLL_ALLTOALL, KB_DT_FP32, KB_REDOP_SUM, 3, 0, 2, 8 };
    float all[3][6], got[6];
    for (int q = 0; q < 3; q++)
        kb_coll_fill(&a, q, all[q]);
    for (int q = 0; q < 3; q++)
        memcpy(got + 2 * q, all[q] + 2, 2 * sizeof(float));
    CHECK(kb_coll_verify(&a, 1, got, &c) == 0);
    kb_coll_check m = { 0 };
    for (int s = 9; s >= 0; s--)
        kb_coll_add_suspect(&m, s % 5);
    CHECK(m.n_suspects == 5 && m.suspects[0] == 0 && m.suspects[4] == 4);
}

int main(void)
{
    RUN(test_conversions_match_engine);
    RUN(test_inputs_deterministic);
    RUN(test_products_exact_in_any_order);
    RUN(test_sum_tolerance);
    RUN(test_verify_all_reduce);
    RUN(test_verify_names_sources);
    TEST_MAIN_END();
}
