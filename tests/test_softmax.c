/* test_softmax.c - what the softmax family's suite (tests/suites/kernels_softmax.yaml)
 * cannot show about the reg variant: its params, work model and valid()'s reason, and
 * that its two-kernel SPLIT path passes check() while a case whose kernels did not run
 * fails it (the suite only ever sees passing kernels). */
#include "family_fixture.h"

#include <stdlib.h>
#include <string.h>

enum { V_NAIVE, V_ONLINE, V_REG };              /* variant order in softmax.c */
enum { P_SCOPE, P_BLOCK, P_VEC, P_NVEC, P_SPLIT }; /* param order */

static kb_case make_case(int variant, kb_dtype dt, int64_t rows, int64_t cols, int pad)
{
    kb_case c = family_case(variant, dt, pad, 11);
    c.dims[0] = rows;
    c.dims[1] = cols;
    return c;
}

static void test_descriptor(void)
{
    CHECK(fam->n_variants == 3 && fam->n_params == 5);
    CHECK(!strcmp(fam->variants[V_REG].name, "reg") && !strcmp(fam->variants[V_REG].entry, "softmax_reg"));
    CHECK(!strcmp(fam->params[P_NVEC].name, "NVEC") && !strcmp(fam->params[P_SPLIT].name, "SPLIT") &&
          fam->params[P_SPLIT].def == 1 && fam->params[P_SPLIT].min == 1 && fam->params[P_SPLIT].max == 64);
    CHECK(kb_param_applies(fam, P_SPLIT, V_REG) && !kb_param_applies(fam, P_SPLIT, V_ONLINE) &&
          !kb_param_applies(fam, P_VEC, V_REG));
    kb_case c = make_case(V_REG, KB_DT_BF16, 16, 32000, 0);
    c.params[P_SPLIT] = 8;
    kb_sb b;
    kb_sb_init(&b);
    kb_case_id(&c, &b);
    CHECK_MSG(!strcmp(b.s, "softmax/reg(BLOCK=256,NVEC=4,SPLIT=8)/bf16/16x32000/pad0/eager"), "%s", b.s);
    kb_sb_free(&b);
}

/* fp16, 4 rows of 10: x 80 bytes read, y 80 written; reg reads x once, twice at SPLIT > 1 */
static void test_work_model(void)
{
    kb_case c = make_case(V_REG, KB_DT_FP16, 4, 10, 3);
    kb_work w = fam->work(&c);
    CHECK(w.bytes_read == 80 && w.bytes_written == 80 && w.bytes_moved == 0);
    c.params[P_SPLIT] = 2;
    CHECK(fam->work(&c).bytes_moved == 2 * 80 + 80);
    c.variant = V_ONLINE;
    CHECK(fam->work(&c).bytes_moved == 2 * 80 + 80);
}

/* a block holds BLOCK x NVEC x 16/esz: bf16 256 x 4 x 8 = 8192; 32000 columns need SPLIT 4 */
static void test_valid_reasons(void)
{
    kb_target sm90 = { 90, 0, 227 * 1024 };
    char why[512];
    kb_case c = make_case(V_REG, KB_DT_BF16, 16, 32000, 0);
    why[0] = 0;
    CHECK_MSG(!fam->valid(&c, &sm90, why, sizeof why) && strstr(why, "8192 bf16") && strstr(why, "needs 32000") &&
                  strstr(why, "raise NVEC, BLOCK or SPLIT"), "%s", why);
    c.params[P_SPLIT] = 4;
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c.dtype = KB_DT_FP32;                  /* 4096 per block: parts of 8000 do not fit */
    why[0] = 0;
    CHECK_MSG(!fam->valid(&c, &sm90, why, sizeof why) && strstr(why, "4096 fp32"), "%s", why);
    c.params[P_SPLIT] = 8;
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
    c.params[P_SPLIT] = 1;
    c.variant = V_ONLINE;                  /* the bound is reg's alone */
    CHECK(fam->valid(&c, &sm90, why, sizeof why));
}

/* SPLIT 3 over 1000 columns (parts of 336, 336, 328) with pad 1: every y within
 * tolerance, the padding untouched; without the launches every y fails. */
static void test_reg_split_run(void)
{
    kb_case c = make_case(V_REG, KB_DT_BF16, 4, 1000, 1);
    c.params[P_BLOCK] = 64;
    c.params[P_NVEC] = 1;
    c.params[P_SPLIT] = 3;
    kb_verify v;
    kb_status st;
    run_family_on_emu(&c, 90, NULL, 1, FAM_CHECK_VALID | FAM_CHECK_RUN_OK, &v, &st);
    if (st != KB_OK)
        return;
    CHECK_MSG(v.n_bad == 0, "%lld bad, first %lld: got %g want %g", (long long)v.n_bad, (long long)v.first_bad,
              v.got_at_bad, v.want_at_bad);
    CHECK(v.n == 4 * 1001);
    run_family_on_emu(&c, 90, NULL, 0, FAM_CHECK_RUN_OK, &v, &st);
    if (st != KB_OK)
        return;
    CHECK_MSG(v.n_bad == 4 * 1000, "%lld bad", (long long)v.n_bad);
}

int main(void)
{
    if (!family_begin("softmax"))
        TEST_MAIN_END();
    RUN(test_descriptor);
    RUN(test_work_model);
    RUN(test_valid_reasons);
    RUN(test_reg_split_run);
    TEST_MAIN_END();
}
