/* test_coll_def.c - collective/coll_def: counts, reported sizes and bus bandwidth factors
 * as nccl-tests computes them (src/<op>.cu), and the size sweep (-b/-e/-f/-i). */
#include "check.h"
#include "collective/coll_def.h"

#include <math.h>
#include <string.h>

static void test_names(void)
{
    for (int i = 0; i < KB_COLL_OP_COUNT; i++) {
        kb_coll_op op;
        CHECK(kb_coll_op_parse(kb_coll_op_name((kb_coll_op)i), &op) == 0 && op == (kb_coll_op)i);
    }
    kb_coll_redop r;
    CHECK(kb_coll_redop_parse("avg", &r) == 0 && r == KB_REDOP_AVG);
    CHECK(kb_coll_redop_parse("mean", &r) == -1);
    kb_coll_op op;
    CHECK(kb_coll_op_parse("allreduce", &op) == -1 && !strcmp(kb_coll_op_name(KB_COLL_OP_COUNT), "?"));
    CHECK(kb_coll_dtype_ok(KB_DT_BF16) && kb_coll_dtype_ok(KB_DT_INT8) && !kb_coll_dtype_ok(KB_DT_TF32) &&
          !kb_coll_dtype_ok(KB_DT_FP8E4M3));
    CHECK(kb_coll_op_reduces(KB_COLL_REDUCE_SCATTER) && !kb_coll_op_reduces(KB_COLL_ALLTOALL));
}

/* The factors of doc/PERFORMANCE.md and <Op>GetBw, at several n. */
static void test_busbw_factors(void)
{
    int ns[] = { 1, 2, 3, 4, 8, 64 };
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
        double n = ns[i];
        CHECK(fabs(kb_coll_busbw_factor(KB_COLL_ALL_REDUCE, ns[i]) - 2 * (n - 1) / n) < 1e-15);
        CHECK(fabs(kb_coll_busbw_factor(KB_COLL_ALL_GATHER, ns[i]) - (n - 1) / n) < 1e-15);
        CHECK(fabs(kb_coll_busbw_factor(KB_COLL_REDUCE_SCATTER, ns[i]) - (n - 1) / n) < 1e-15);
        CHECK(fabs(kb_coll_busbw_factor(KB_COLL_ALLTOALL, ns[i]) - (n - 1) / n) < 1e-15);
        CHECK(kb_coll_busbw_factor(KB_COLL_BROADCAST, ns[i]) == 1);
        CHECK(kb_coll_busbw_factor(KB_COLL_SENDRECV, ns[i]) == 1);
    }
    CHECK(kb_coll_busbw_factor(KB_COLL_ALL_REDUCE, 8) == 1.75);   /* 8 GPUs: 2 x 7 / 8 */
    double alg, bus;
    kb_coll_bandwidth(KB_COLL_ALL_REDUCE, 8, 1000000000ull, 1e6, &alg, &bus);   /* 1 GB in 1 s */
    CHECK(fabs(alg - 1.0) < 1e-12 && fabs(bus - 1.75) < 1e-12);
}

/* Counts and the reported size: nccl-tests' algbw numerators (<Op>GetBw) are count x
 * typesize for all_reduce, broadcast and sendrecv and count x typesize x nranks for
 * all_gather, reduce_scatter and alltoall: both are max(send, recv) bytes. */
static void test_counts_and_sizes(void)
{
    kb_coll_counts c;
    int n = 4;
    size_t esz = 2, count = 96;
    for (int op = 0; op < KB_COLL_OP_COUNT; op++) {
        kb_coll_counts_of((kb_coll_op)op, count, n, &c);
        int per_rank = op == KB_COLL_ALL_GATHER || op == KB_COLL_REDUCE_SCATTER || op == KB_COLL_ALLTOALL;
        CHECK(kb_coll_size_bytes(&c, esz) == count * esz * (per_rank ? (size_t)n : 1));
    }
    kb_coll_counts_of(KB_COLL_ALL_GATHER, 5, 3, &c);
    CHECK(c.send_count == 5 && c.recv_count == 15);
    kb_coll_counts_of(KB_COLL_REDUCE_SCATTER, 5, 3, &c);
    CHECK(c.send_count == 15 && c.recv_count == 5);
    kb_coll_counts_of(KB_COLL_ALLTOALL, 5, 3, &c);
    CHECK(c.send_count == 15 && c.recv_count == 15);
    kb_coll_counts_of(KB_COLL_SENDRECV, 7, 3, &c);
    CHECK(c.send_count == 7 && c.recv_count == 7);
    /* a sweep size into the API count: (count / n) & ~(16 / esz - 1) for the per-rank ops */
    CHECK(kb_coll_count_of_size(KB_COLL_ALL_REDUCE, 1000, 4, 3) == 250);
    CHECK(kb_coll_count_of_size(KB_COLL_ALL_GATHER, 1000, 4, 3) == 80);      /* 83 rounded to 4 floats */
    CHECK(kb_coll_count_of_size(KB_COLL_ALLTOALL, 1000, 1, 3) == 320);       /* 333 rounded to 16 bytes */
    CHECK(kb_coll_count_of_size(KB_COLL_REDUCE_SCATTER, 8, 4, 4) == 0);      /* nccl-tests runs 0 bytes */
    CHECK(kb_coll_count_of_size(KB_COLL_BROADCAST, 7, 2, 4) == 3);
}

static void test_sizes_parsed(void)
{
    uint64_t v;
    char err[256];
    CHECK(kb_coll_parse_size("8", "-b", &v, err, sizeof err) == 0 && v == 8);
    CHECK(kb_coll_parse_size("1K", "-b", &v, err, sizeof err) == 0 && v == 1024);
    CHECK(kb_coll_parse_size("128m", "-e", &v, err, sizeof err) == 0 && v == 128u << 20);
    CHECK(kb_coll_parse_size("1024G", "-e", &v, err, sizeof err) == 0 && v == 1ull << 40);
    const char *bad[] = { "", "K", "1.5K", "-1", "1T", "1025G", "12x", "99999999999999999999999", " 1" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK_MSG(kb_coll_parse_size(bad[i], "-e", &v, err, sizeof err) == -1 && strstr(err, "-e"), "%s", bad[i]);
    }
}

static void test_sweep(void)
{
    uint64_t s[KB_COLL_MAX_SIZES];
    char err[256];
    kb_coll_sweep a = { 8, 128u << 20, 0, 2 };   /* all_reduce_perf -b 8 -e 128M -f 2 */
    int k = kb_coll_sweep_sizes(&a, s, KB_COLL_MAX_SIZES, err, sizeof err);
    CHECK(k == 25 && s[0] == 8 && s[1] == 16 && s[24] == 128u << 20);
    kb_coll_sweep b = { 1024, 4096, 1024, 1 };    /* -i 1K */
    CHECK(kb_coll_sweep_sizes(&b, s, KB_COLL_MAX_SIZES, err, sizeof err) == 4 && s[3] == 4096);
    kb_coll_sweep c = { 100, 1000, 0, 3 };        /* stops at the last size not above -e */
    CHECK(kb_coll_sweep_sizes(&c, s, KB_COLL_MAX_SIZES, err, sizeof err) == 3 && s[2] == 900);
    kb_coll_sweep d = { 64, 64, 0, 1 };           /* one size, no step needed */
    CHECK(kb_coll_sweep_sizes(&d, s, KB_COLL_MAX_SIZES, err, sizeof err) == 1);
    kb_coll_sweep e = { 64, 128, 0, 1 };
    CHECK(kb_coll_sweep_sizes(&e, s, KB_COLL_MAX_SIZES, err, sizeof err) == -1 && strstr(err, "never advances"));
    kb_coll_sweep f = { 0, 128, 0, 2 };           /* 0 x 2 = 0 */
    CHECK(kb_coll_sweep_sizes(&f, s, KB_COLL_MAX_SIZES, err, sizeof err) == -1 && strstr(err, "never advances"));
    kb_coll_sweep g = { 256, 128, 0, 2 };
    CHECK(kb_coll_sweep_sizes(&g, s, KB_COLL_MAX_SIZES, err, sizeof err) == -1 && strstr(err, "above"));
    kb_coll_sweep h = { 1, 1ull << 40, 1, 1 };
    CHECK(kb_coll_sweep_sizes(&h, s, KB_COLL_MAX_SIZES, err, sizeof err) == -1 && strstr(err, "more than"));
    kb_coll_sweep i = { 1ull << 39, 1ull << 40, 0, 1ull << 40 };   /* the next size would overflow */
    CHECK(kb_coll_sweep_sizes(&i, s, KB_COLL_MAX_SIZES, err, sizeof err) == 1);
}

int main(void)
{
    RUN(test_names);
    RUN(test_busbw_factors);
    RUN(test_counts_and_sizes);
    RUN(test_sizes_parsed);
    RUN(test_sweep);
    TEST_MAIN_END();
}
