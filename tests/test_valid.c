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

/* A TMA variant: sm_90 or newer (sm_90a and Blackwell included) with tensor maps the backend can
 * encode; refused below sm_90 whatever the backend, and where the device or driver cannot encode. */
static void test_tma(void)
{
    char why[256] = "";
    int sm80 = kb_arch_find("sm_80")->code, sm90 = kb_arch_find("sm_90")->code;
    int sm90a = kb_arch_find("sm_90a")->code, sm100a = kb_arch_find("sm_100a")->code;
    kb_target gpu = { sm90, KB_CAP_GPU_TIMER | KB_CAP_TMA, 227 * 1024 };
    CHECK(kb_valid_tma(&gpu, why, sizeof why));
    gpu.sm = sm90a;
    CHECK(kb_valid_tma(&gpu, why, sizeof why));
    gpu.sm = sm100a;
    CHECK(kb_valid_tma(&gpu, why, sizeof why));
    kb_target emu80 = { sm80, KB_CAP_GRAPHS | KB_CAP_TMA, 163 * 1024 };   /* the emulator encodes, sm_80 has no TMA */
    CHECK(!kb_valid_tma(&emu80, why, sizeof why) && strstr(why, "sm_90 or newer") && strstr(why, "sm_80"));
    kb_target old_driver = { sm90, KB_CAP_GPU_TIMER, 227 * 1024 };       /* a device whose caps dropped TMA */
    CHECK(!kb_valid_tma(&old_driver, why, sizeof why) && strstr(why, "cuTensorMapEncodeTiled") &&
          strstr(why, "kbench devices says why"));
}

int main(void)
{
    RUN(test_block);
    RUN(test_vec);
    RUN(test_tma);
    TEST_MAIN_END();
}
