/* test_valid.c - the shared parameter checks: legal values pass, illegal ones are
 * refused with the reason in words. */
#include "check.h"
#include "engine/valid.h"

#include <string.h>

static void test_block(void)
{
    char why[256] = "";
    CHECK(kb_valid_block(32, why, sizeof why) && kb_valid_block(1024, why, sizeof why));
    CHECK(kb_valid_block(256, why, sizeof why));
    CHECK(!kb_valid_block(0, why, sizeof why));
    CHECK(!kb_valid_block(48, why, sizeof why) && strstr(why, "BLOCK=48") && strstr(why, "multiple of 32"));
    CHECK(!kb_valid_block(2048, why, sizeof why) && strstr(why, "BLOCK=2048"));
}

static void test_vec(void)
{
    char why[256] = "";
    CHECK(kb_valid_vec(4, KB_DT_FP32, why, sizeof why));        /* 16 bytes */
    CHECK(kb_valid_vec(8, KB_DT_BF16, why, sizeof why));        /* 16 bytes */
    CHECK(kb_valid_vec(1, KB_DT_FP8E4M3, why, sizeof why));
    CHECK(!kb_valid_vec(8, KB_DT_FP32, why, sizeof why) && strstr(why, "32 bytes") && strstr(why, "fp32"));
    CHECK(!kb_valid_vec(3, KB_DT_FP16, why, sizeof why) && strstr(why, "VEC=3"));
}

int main(void)
{
    RUN(test_block);
    RUN(test_vec);
    TEST_MAIN_END();
}
