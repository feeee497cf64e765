/* test_emu_check.c - what the emulator catches that a plain run would not: cp.async
 * modelled as pending copies (a wait count too small leaves poison, and an ldmatrix of a
 * pending tile fails the launch naming the copy), and the pure bookkeeping of groups. */
#include "backend/emu/emu_async.h"
#include "emu_fixture.h"

#include <math.h>

static kb_module *M_CHECK;

static void test_async_groups_unit(void)
{
    kb_emu_async a;
    unsigned char arena[256];
    memset(arena, 0, sizeof arena);
    CHECK(kb_emu_async_init(&a, 4, sizeof arena) == 0);
    unsigned char src[16];
    for (int i = 0; i < 16; i++) src[i] = (unsigned char)(i + 1);
    /* thread 1: group 0 -> offset 0; group 1 -> offset 16 (8 bytes, the rest zero-filled) */
    CHECK(kb_emu_async_issue(&a, arena, 0, src, 16, 1) == 0);
    kb_emu_async_commit(&a, 1);
    CHECK(kb_emu_async_issue(&a, arena, 16, src, 8, 1) == 0);
    CHECK(arena[0] == 0xff && arena[16] == 0xff);          /* poisoned while pending */
    const kb_emu_copy *c;
    CHECK(kb_emu_async_pending(&a, 20, 4, &c) == 1 && c->off == 16 && c->group == 1);
    kb_emu_async_wait(&a, arena, 1, 0);                    /* group 1 is not committed yet */
    CHECK(arena[0] == 1 && arena[15] == 16 && arena[16] == 0xff);
    CHECK(kb_emu_async_pending(&a, 0, 16, &c) == -1);
    kb_emu_async_commit(&a, 1);
    kb_emu_async_wait(&a, arena, 1, 1);                    /* at most 1 pending: group 1 may stay */
    CHECK(arena[16] == 0xff);
    kb_emu_async_wait(&a, arena, 1, 0);
    CHECK(arena[16] == 1 && arena[23] == 8 && arena[24] == 0);
    CHECK(kb_emu_async_pending(&a, 0, 256, &c) == -1 && a.issued == 2 && a.retired == 2);
    /* a new block forgets what another left pending */
    CHECK(kb_emu_async_issue(&a, arena, 32, src, 16, 2) == 0);
    kb_emu_async_reset(&a);
    CHECK(kb_emu_async_pending(&a, 32, 16, &c) == -1);
    kb_emu_async_fini(&a);
}

static void test_wait_count(void)
{
    kb_dptr in = dalloc(X, 512 * 4), out = dalloc(X, 512 * 4);
    float h[512];
    for (int i = 0; i < 512; i++) h[i] = (float)i;
    CHECK(B->upload(X, in, h, sizeof h) == KB_OK);
    for (int wait_n = 0; wait_n < 2; wait_n++) {
        kb_arg args[] = { kb_arg_ptr(out), kb_arg_ptr(in), kb_arg_i32(wait_n) };
        CHECK(launch(X, M_CHECK, "async_two_groups", 1, 1, 1, 64, 1, 1, 0, args, 3) == KB_OK);
        float got[512];
        CHECK(B->download(X, got, out, sizeof got) == KB_OK);
        int first_ok = 1, second_nan = 1, second_ok = 1;
        for (int i = 0; i < 256; i++) {
            first_ok &= got[i] == (float)i;
            second_nan &= isnan(got[256 + i]);
            second_ok &= got[256 + i] == (float)(256 + i);
        }
        CHECK(first_ok);
        CHECK_MSG(wait_n == 0 ? second_ok : second_nan, "wait<%d>", wait_n);
    }
    B->free(X, in);
    B->free(X, out);
}

static void test_ldmatrix_of_pending_tile(void)
{
    kb_dptr in = dalloc(X, 64 * 2), out = dalloc(X, 32 * 4);
    unsigned short h[64];
    for (int i = 0; i < 64; i++) h[i] = (unsigned short)i;
    CHECK(B->upload(X, in, h, sizeof h) == KB_OK);
    kb_arg ok[] = { kb_arg_ptr(out), kb_arg_ptr(in), kb_arg_i32(0) };
    CHECK(launch(X, M_CHECK, "async_ldmatrix", 1, 1, 1, 32, 1, 1, 0, ok, 3) == KB_OK);
    kb_arg bad[] = { kb_arg_ptr(out), kb_arg_ptr(in), kb_arg_i32(1) };
    CHECK(launch(X, M_CHECK, "async_ldmatrix", 1, 1, 1, 32, 1, 1, 0, bad, 3) == KB_ERR_FAULT);
    const char *e = B->last_error(X);
    CHECK_MSG(contains(e, "while a cp.async to offset") && contains(e, "is still pending") &&
              contains(e, "wait count too small"), "%s", e);
    B->free(X, in);
    B->free(X, out);
}

int main(void)
{
    RUN(test_async_groups_unit);
    if (!fixture_begin("emu_check", 0) || !(M_CHECK = build_load(X, "emu_check"))) {
        CHECK(0);
        TEST_MAIN_END();
    }
    RUN(test_wait_count);
    RUN(test_ldmatrix_of_pending_tile);
    B->unload(X, M_CHECK);
    fixture_end();
    TEST_MAIN_END();
}
