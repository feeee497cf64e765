/* test_emu_check.c - what the emulator catches that a plain run would not: cp.async
 * modelled as pending copies (a wait count too small leaves poison, and an ldmatrix of a
 * pending tile fails the launch naming the copy), and the pure bookkeeping of groups. */
#include "backend/emu/emu_async.h"
#include "backend/emu/emu_exec.h"
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

/* An emulator opened with a schedule and checks, and the test kernels built for it. */
static kb_backend_ctx *open_with(const char *schedule, unsigned checks, kb_module **m)
{
    kb_backend_opts o = { .emu_threads = 2, .emu_schedule = schedule, .emu_checks = checks };
    kb_backend_ctx *x = NULL;
    char err[512];
    kb_status st = B->init(&o, &x, err, sizeof err);
    CHECK_MSG(st == KB_OK, "%s", err);
    *m = st == KB_OK ? build_load(x, "emu_check") : NULL;
    return x;
}

static void close_with(kb_backend_ctx *x, kb_module *m)
{
    if (m)
        B->unload(x, m);
    if (x)
        B->fini(x);
}

enum { ORDER_BLOCKS = 8, ORDER_WARPS = 4 };

/* The tickets of warp_order under schedule; 0 when the launch failed. */
static int warp_tickets(const char *schedule, int got[ORDER_BLOCKS][ORDER_WARPS])
{
    kb_module *m;
    kb_backend_ctx *x = open_with(schedule, 0, &m);
    if (!m)
        return 0;
    kb_dptr order = dalloc(x, sizeof(int) * ORDER_BLOCKS * ORDER_WARPS), counter = dalloc(x, sizeof(int) * ORDER_BLOCKS);
    int zero[ORDER_BLOCKS] = { 0 };
    CHECK(B->upload(x, counter, zero, sizeof zero) == KB_OK);
    kb_arg args[] = { kb_arg_ptr(order), kb_arg_ptr(counter) };
    kb_status st = launch(x, m, "warp_order", ORDER_BLOCKS, 1, 1, 32 * ORDER_WARPS, 1, 1, 0, args, 2);
    CHECK_MSG(st == KB_OK, "%s: %s", schedule, B->last_error(x));
    CHECK(B->download(x, got, order, sizeof(int) * ORDER_BLOCKS * ORDER_WARPS) == KB_OK);
    B->free(x, order);
    B->free(x, counter);
    close_with(x, m);
    return st == KB_OK;
}

static int is_permutation(const int *v)
{
    int seen = 0;
    for (int w = 0; w < ORDER_WARPS; w++)
        if (v[w] >= 0 && v[w] < ORDER_WARPS)
            seen |= 1 << v[w];
    return seen == (1 << ORDER_WARPS) - 1;
}

/* lockstep: warps in order; warp-ahead: the last warp first; random: seeded permutations,
 * the same for one seed, different blocks in different orders. */
static void test_schedules(void)
{
    int lock[ORDER_BLOCKS][ORDER_WARPS], ahead[ORDER_BLOCKS][ORDER_WARPS];
    int r1[ORDER_BLOCKS][ORDER_WARPS], r1b[ORDER_BLOCKS][ORDER_WARPS], r2[ORDER_BLOCKS][ORDER_WARPS];
    if (!warp_tickets("lockstep", lock) || !warp_tickets("warp-ahead", ahead) || !warp_tickets("random:1", r1) ||
        !warp_tickets("random:1", r1b) || !warp_tickets("random:2", r2))
        return;
    int lock_ok = 1, ahead_ok = 1, perms = 1, not_lock = 0;
    for (int b = 0; b < ORDER_BLOCKS; b++) {
        for (int w = 0; w < ORDER_WARPS; w++) {
            lock_ok &= lock[b][w] == w;
            ahead_ok &= ahead[b][w] == ORDER_WARPS - 1 - w;
            not_lock |= r1[b][w] != w;
        }
        perms &= is_permutation(r1[b]) && is_permutation(r2[b]);
    }
    CHECK_MSG(lock_ok, "lockstep: block 0 order %d %d %d %d", lock[0][0], lock[0][1], lock[0][2], lock[0][3]);
    CHECK_MSG(ahead_ok, "warp-ahead: block 0 order %d %d %d %d", ahead[0][0], ahead[0][1], ahead[0][2], ahead[0][3]);
    CHECK(perms && not_lock);
    CHECK(memcmp(r1, r1b, sizeof r1) == 0);    /* a seed replays */
    CHECK(memcmp(r1, r2, sizeof r1) != 0);     /* another seed differs */
    kb_emu_schedule s;
    uint64_t seed;
    CHECK(kb_emu_parse_schedule("random:42", &s, &seed) == 0 && s == KB_EMU_SCHED_RANDOM && seed == 42);
    CHECK(kb_emu_parse_schedule("random:", &s, &seed) != 0 && kb_emu_parse_schedule("warp", &s, &seed) != 0 &&
          kb_emu_parse_schedule("random:1x", &s, &seed) != 0);
}

/* Two reductions sharing one array without a barrier between them: a plain module runs
 * it without a word; a checked one names the race and both source lines. */
static void test_race(void)
{
    kb_module *m, *pm;
    kb_backend_ctx *x = open_with(NULL, KB_EMU_CHECK_RACE, &m), *plain = open_with(NULL, 0, &pm);
    if (!m || !pm)
        return;
    float h[64], got[2];
    for (int i = 0; i < 64; i++) h[i] = (float)i;
    kb_backend_ctx *ctx[2] = { x, plain };
    kb_module *mod[2] = { m, pm };
    for (int c = 0; c < 2; c++) {
        kb_dptr in = dalloc(ctx[c], sizeof h), out = dalloc(ctx[c], sizeof got);
        CHECK(B->upload(ctx[c], in, h, sizeof h) == KB_OK);
        for (int barrier = 1; barrier >= 0; barrier--) {
            kb_arg args[] = { kb_arg_ptr(out), kb_arg_ptr(in), kb_arg_i32(barrier) };
            kb_status st = launch(ctx[c], mod[c], "race_two_sums", 1, 1, 1, 64, 1, 1, 0, args, 3);
            const char *e = B->last_error(ctx[c]);
            if (barrier || c == 1) {
                CHECK_MSG(st == KB_OK, "checked %d barrier %d: %s", c == 0, barrier, e);
                continue;
            }
            CHECK_MSG(st == KB_ERR_FAULT && contains(e, "shared-memory race") && contains(e, "after") &&
                      contains(e, "no __syncthreads between") && contains(e, "emu_check.cu:"), "%s", e);
        }
        CHECK(B->download(ctx[c], got, out, sizeof got) == KB_OK);
        B->free(ctx[c], in);
        B->free(ctx[c], out);
    }
    close_with(x, m);
    close_with(plain, pm);
}

/* A thread that skips its write: the reader of that slot is named. */
static void test_uninit(void)
{
    kb_module *m;
    kb_backend_ctx *x = open_with(NULL, KB_EMU_CHECK_INIT, &m);
    if (!m)
        return;
    kb_dptr out = dalloc(x, 64 * sizeof(int));
    kb_arg ok[] = { kb_arg_ptr(out), kb_arg_i32(-1) }, bad[] = { kb_arg_ptr(out), kb_arg_i32(5) };
    CHECK_MSG(launch(x, m, "uninit_neighbour", 2, 1, 1, 64, 1, 1, 0, ok, 2) == KB_OK, "%s", B->last_error(x));
    int got[64];
    CHECK(B->download(x, got, out, sizeof got) == KB_OK && got[0] == 1 && got[63] == 0);
    CHECK(launch(x, m, "uninit_neighbour", 2, 1, 1, 64, 1, 1, 0, bad, 2) == KB_ERR_FAULT);
    const char *e = B->last_error(x);
    CHECK_MSG(contains(e, "never written") && contains(e, "offset 20") && contains(e, "thread (4,0,0)") &&
              contains(e, "emu_check.cu:"), "%s", e);
    B->free(x, out);
    close_with(x, m);
}

/* Global memory: a read of bytes nothing uploaded is named; atomics on shared memory
 * initialise and never race. */
static void test_global_init_and_atomics(void)
{
    kb_module *m;
    kb_backend_ctx *x = open_with(NULL, KB_EMU_CHECK_RACE | KB_EMU_CHECK_INIT, &m);
    if (!m)
        return;
    kb_dptr in = dalloc(x, 64 * sizeof(int)), out = dalloc(x, 64 * sizeof(int));
    int h[64];
    for (int i = 0; i < 64; i++) h[i] = i;
    CHECK(B->upload(x, in, h, 32 * sizeof(int)) == KB_OK);          /* half of it */
    kb_arg args[] = { kb_arg_ptr(out), kb_arg_ptr(in) };
    CHECK(launch(x, m, "copy_in", 1, 1, 1, 64, 1, 1, 0, args, 2) == KB_ERR_FAULT);
    const char *e = B->last_error(x);
    CHECK_MSG(contains(e, "never written: global memory, byte 128 of a 256-byte allocation") &&
              contains(e, "thread (32,0,0)") && contains(e, "emu_check.cu:"), "%s", e);
    CHECK(B->upload(x, in, h, sizeof h) == KB_OK);
    CHECK_MSG(launch(x, m, "copy_in", 1, 1, 1, 64, 1, 1, 0, args, 2) == KB_OK, "%s", B->last_error(x));
    kb_arg one[] = { kb_arg_ptr(out) };
    CHECK_MSG(launch(x, m, "shared_atomic_count", 3, 1, 1, 96, 1, 1, 0, one, 1) == KB_OK, "%s", B->last_error(x));
    int got[3];
    CHECK(B->download(x, got, out, sizeof got) == KB_OK && got[0] == 96 && got[2] == 96);
    B->free(x, in);
    B->free(x, out);
    close_with(x, m);
}

/* A barrier some threads never reach is found under every schedule. */
static void test_divergence_every_schedule(void)
{
    const char *schedules[] = { "lockstep", "warp-ahead", "random:7" };
    for (int i = 0; i < 3; i++) {
        kb_module *m;
        kb_backend_ctx *x = open_with(schedules[i], 0, &m);
        if (!m)
            return;
        kb_dptr d = dalloc(x, 4 * 256 * sizeof(float));
        kb_arg a[] = { kb_arg_ptr(d), kb_arg_i32(224) };
        CHECK_MSG(launch(x, m, "divergent_barrier2", 4, 1, 1, 256, 1, 1, 0, a, 2) == KB_ERR_FAULT, "%s", schedules[i]);
        CHECK_MSG(contains(B->last_error(x), "224 of 256 threads waited, 32 had exited"), "%s: %s", schedules[i],
                  B->last_error(x));
        B->free(x, d);
        close_with(x, m);
    }
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
    RUN(test_schedules);
    RUN(test_race);
    RUN(test_uninit);
    RUN(test_global_init_and_atomics);
    RUN(test_divergence_every_schedule);
    B->unload(X, M_CHECK);
    fixture_end();
    TEST_MAIN_END();
}
