/* test_emu_cluster.c - thread block clusters on the emulator (harness/backend/emu/
 * emu_cluster.h), through tests/kernels/emu_cluster.cu: the cluster special registers over
 * 1D and 2D cluster shapes, distributed shared memory through mapa under barrier.cluster, an
 * arrive on a peer CTA's mbarrier, each under the three schedules; the CTAs' turn order
 * following the schedule (an unsynchronised peer read caught); the launch rules (grid a
 * multiple of the cluster, the portable size, sm_90+); each cluster rule broken once; and
 * NVRTC compiling the same kernels for sm_90 into the PTX instructions they stand for. */
#include "emu_fixture.h"

#include <nvrtc.h>

static kb_status launch_cl(kb_backend_ctx *x, kb_module *m, const char *entry, unsigned gx, unsigned gy,
                           unsigned threads, unsigned cx, unsigned cy, const kb_arg *a, int n)
{
    kb_geom g = { { gx, gy, 1 }, { threads, 1, 1 }, 0, { cx, cy, 1 } };
    return B->launch(x, m, entry, &g, a, n);
}

/* cluster_dsmem on a gx x gy grid of 64-thread CTAs in cx x cy clusters: every register and
 * every value read from the next CTA's shared memory as the kernel promises. */
static void check_dsmem(kb_backend_ctx *x, kb_module *m, unsigned gx, unsigned gy, unsigned cx, unsigned cy)
{
    size_t n = (size_t)gx * gy * 64 * 8;
    int *out = calloc(n, sizeof *out);
    kb_dptr d = dalloc(x, n * sizeof *out);
    kb_arg a[] = { kb_arg_ptr(d) };
    kb_status st = launch_cl(x, m, "cluster_dsmem", gx, gy, 64, cx, cy, a, 1);
    CHECK_MSG(st == KB_OK, "%ux%u in %ux%u: %s", gx, gy, cx, cy, B->last_error(x));
    B->download(x, out, d, n * sizeof *out);
    unsigned bad = 0, size = cx * cy;
    for (unsigned by = 0; by < gy; by++)
        for (unsigned bx = 0; bx < gx; bx++)
            for (unsigned t = 0; t < 64; t++) {
                const int *o = out + 8 * (((size_t)by * gx + bx) * 64 + t);
                unsigned kx = bx % cx, ky = by % cy, rank = kx + ky * cx, next = (rank + 1) % size;
                int ok = o[0] == (int)rank && o[1] == (int)size && o[2] == (int)kx && o[3] == (int)ky &&
                         o[4] == (int)(bx / cx) && o[5] == (int)(by / cy) && o[6] == (int)(1000 * next + t) &&
                         o[7] == (int)(1000 * rank + (t + 1) % 64);
                if (!ok && bad++ == 0)
                    CHECK_MSG(0, "%ux%u in %ux%u: block (%u,%u) thread %u: rank %d n %d ctaid %d,%d id %d,%d read %d",
                              gx, gy, cx, cy, bx, by, t, o[0], o[1], o[2], o[3], o[4], o[5], o[6]);
            }
    CHECK_MSG(bad == 0, "%u threads wrong", bad);
    B->free(x, d);
    free(out);
}

static void check_remote_mbar(kb_backend_ctx *x, kb_module *m, unsigned clusters, unsigned size)
{
    int out[8 * 8];
    memset(out, 0, sizeof out);
    kb_dptr d = dalloc(x, sizeof out);
    B->upload(x, d, out, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d) };
    kb_status st = launch_cl(x, m, "cluster_mbar_remote", clusters * size, 1, 64, size, 1, a, 1);
    CHECK_MSG(st == KB_OK, "%u clusters of %u: %s", clusters, size, B->last_error(x));
    B->download(x, out, d, sizeof out);
    for (unsigned c = 0; c < clusters; c++)
        for (unsigned r = 0; r < size; r++)
            CHECK_MSG(out[c * 8 + r] == (r ? (int)(100 + r) : -1), "cluster %u slot %u: %d", c, r, out[c * 8 + r]);
    B->free(x, d);
}

/* cluster_tma_mc over clusters clusters of size CTAs: every CTA holds its cluster's rows, the
 * rows past the tensor's end (rows_short) zeros. Returns the launch status. */
static kb_status run_mc(kb_backend_ctx *x, kb_module *m, unsigned clusters, unsigned size, unsigned rows_short, int bug)
{
    unsigned rows = clusters * size * 8 - rows_short, nb = clusters * size;
    float *h = malloc((size_t)rows * 32 * sizeof *h), *out = malloc((size_t)nb * size * 256 * sizeof *out);
    for (unsigned i = 0; i < rows * 32; i++)
        h[i] = (float)(i + 1);
    kb_dptr g = dalloc(x, (size_t)rows * 32 * sizeof *h), o = dalloc(x, (size_t)nb * size * 256 * sizeof *out);
    B->upload(x, g, h, (size_t)rows * 32 * sizeof *h);
    kb_tmap_desc d = { .dtype = KB_TMAP_F32, .rank = 2, .base = g, .dims = { 32, rows }, .strides = { 128 },
                       .box = { 32, 8 }, .swizzle = KB_TMAP_SWIZZLE_NONE };
    kb_arg a[3];
    char err[256];
    CHECK_MSG(kb_backend_tmap_encode(B, x, &d, &a[0], err, sizeof err) == KB_OK, "%s", err);
    a[1] = kb_arg_ptr(o);
    a[2] = kb_arg_i32(bug);
    kb_geom geo = { { nb, 1, 1 }, { 64, 1, 1 }, size * 1024, { size, 1, 1 } };
    kb_status st = B->launch(x, m, "cluster_tma_mc", &geo, a, 3);
    if (st == KB_OK) {
        B->download(x, out, o, (size_t)nb * size * 256 * sizeof *out);
        unsigned bad = 0;
        for (unsigned b = 0; b < nb; b++)
            for (unsigned i = 0; i < size * 256; i++) {
                unsigned row = b / size * size * 8 + i / 32;
                float want = row < rows ? (float)(row * 32 + i % 32 + 1) : 0.0f;
                bad += out[(size_t)b * size * 256 + i] != want;
            }
        CHECK_MSG(bad == 0, "multicast %u x %u (%u rows short): %u values wrong", clusters, size, rows_short, bad);
    }
    B->free(x, g);
    B->free(x, o);
    free(h);
    free(out);
    return st;
}

/* The correct kernels under each schedule: lockstep, warp-ahead, random (two seeds), and a
 * checked build under random:3. */
static void test_clusters_run(void)
{
    const char *sched[] = { "lockstep", "warp-ahead", "random:1", "random:7", "random:3" };
    for (int s = 0; s < 5; s++) {
        /* the last: a checked build (race and init checks; the sm_90 proxy tables of every CTA) */
        kb_backend_opts o = { .emu_threads = 2, .emu_schedule = sched[s],
                              .emu_checks = s == 4 ? KB_EMU_CHECK_RACE | KB_EMU_CHECK_INIT : 0 };
        kb_backend_ctx *x = NULL;
        char err[512];
        CHECK_MSG(B->init(&o, &x, err, sizeof err) == KB_OK, "%s", err);
        if (!x)
            continue;
        kb_module *m = build_load(x, "emu_cluster");
        if (m) {
            check_dsmem(x, m, 4, 1, 2, 1);
            check_dsmem(x, m, 8, 2, 4, 1);
            check_dsmem(x, m, 2, 4, 1, 2);
            check_dsmem(x, m, 4, 2, 2, 2);
            check_remote_mbar(x, m, 3, 2);
            check_remote_mbar(x, m, 2, 8);
            CHECK_MSG(run_mc(x, m, 2, 2, 0, 0) == KB_OK, "%s", B->last_error(x));
            CHECK_MSG(run_mc(x, m, 3, 4, 5, 0) == KB_OK, "%s", B->last_error(x));   /* a partial last box */
            B->unload(x, m);
        }
        B->fini(x);
    }
}

/* cluster_dsmem(_no)_sync on 2 clusters of 2 CTAs under schedule sched: 1 when the launch
 * succeeded and rank 1 read every one of rank 0's writes, 0 when it read something else or
 * the launch failed (then *err holds the message). */
static int dsmem_order_ok(const char *sched, const char *entry, char *err, size_t cap)
{
    kb_backend_opts o = { .emu_threads = 2, .emu_schedule = sched };
    kb_backend_ctx *x = NULL;
    int ok = 0;
    CHECK_MSG(B->init(&o, &x, err, cap) == KB_OK, "%s", err);
    if (!x)
        return 0;
    kb_module *m = build_load(x, "emu_cluster");
    if (m) {
        int out[2 * 64];
        kb_dptr d = dalloc(x, sizeof out);
        kb_arg a[] = { kb_arg_ptr(d) };
        snprintf(err, cap, "%s", "");
        if (launch_cl(x, m, entry, 4, 1, 64, 2, 1, a, 1) == KB_OK) {
            B->download(x, out, d, sizeof out);
            ok = 1;
            for (int i = 0; i < 2 * 64; i++)
                ok &= out[i] == 7 + i % 64;
        } else {
            snprintf(err, cap, "%s", B->last_error(x));
        }
        B->free(x, d);
        B->unload(x, m);
    }
    B->fini(x);
    return ok;
}

/* The CTAs' turn order follows the schedule: a read of a peer's shared memory with no
 * barrier.cluster after the peer's write passes under lockstep (rank 0 runs first) but not
 * under warp-ahead (rank 1 first) nor under every random seed; with the barrier it passes
 * under all. */
static void test_cluster_turn_order(void)
{
    const char *sched[] = { "lockstep", "warp-ahead", "random:1", "random:2", "random:3", "random:4",
                            "random:5", "random:6", "random:7", "random:8" };
    char err[512];
    int caught = 0, caught_random = 0;
    for (int s = 0; s < 10; s++) {
        CHECK_MSG(dsmem_order_ok(sched[s], "cluster_dsmem_sync", err, sizeof err), "%s: %s", sched[s], err);
        int bad = !dsmem_order_ok(sched[s], "cluster_dsmem_no_sync", err, sizeof err);
        caught += bad;
        caught_random += bad && s >= 2;
        if (s == 1)
            CHECK_MSG(bad, "warp-ahead let cluster_dsmem_no_sync pass: %s", err);
    }
    CHECK_MSG(caught_random > 0 && caught_random < 8, "random seeds caught the race %d of 8 times", caught_random);
    CHECK(caught >= 2);
}

/* Without a cluster every CTA is rank 0 of 1 and the cluster barrier is the block's. */
static void test_no_cluster(void)
{
    kb_module *m = build_load(X, "emu_cluster");
    int out[3 * 64];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d) };
    CHECK_MSG(launch(X, m, "cluster_none", 3, 1, 1, 64, 1, 1, 0, a, 1) == KB_OK, "%s", B->last_error(X));
    B->download(X, out, d, sizeof out);
    for (int i = 0; i < 3 * 64; i++)
        CHECK_MSG(out[i] == 100 + 63 - i % 64, "out[%d] = %d", i, out[i]);
    B->free(X, d);
    B->unload(X, m);
}

static void expect_fail(kb_backend_ctx *x, kb_module *m, const char *entry, unsigned gx, unsigned cx,
                        const char *want, const char *want2)
{
    kb_dptr d = dalloc(x, 4096);
    kb_arg a[] = { kb_arg_ptr(d) };
    kb_status st = launch_cl(x, m, entry, gx, 1, 64, cx, 1, a, 1);
    const char *e = B->last_error(x);
    CHECK_MSG(st != KB_OK && contains(e, want) && (!want2 || contains(e, want2)), "%s: status %d: %s (want '%s')",
              entry, (int)st, e, want);
    B->free(x, d);
}

/* Each rule broken once, and the launch rules. */
static void test_cluster_rules(void)
{
    kb_module *m = build_load(X, "emu_cluster");
    if (!m)
        return;
    expect_fail(X, m, "cluster_mapa_outside", 4, 2, "mapa to CTA rank 2, outside the cluster of 2 CTAs", NULL);
    expect_fail(X, m, "cluster_barrier_deadlock", 2, 2, "deadlock at barrier.cluster in cluster (0,0,0)",
                "CTA rank 1, block (1,0,0): 32 of 64 threads");
    expect_fail(X, m, "cluster_arrive_twice", 2, 2, "barrier.cluster.arrive twice", NULL);
    expect_fail(X, m, "cluster_wait_without_arrive", 2, 2, "barrier.cluster.wait without a barrier.cluster.arrive",
                NULL);
    expect_fail(X, m, "cluster_wait_remote", 2, 2, "mbarrier.try_wait on CTA rank 1's mbarrier", "shared::cta");
    expect_fail(X, m, "cluster_peer_exited", 2, 2, "on the shared memory of CTA rank 1 of the cluster after that "
                "CTA exited", NULL);
    expect_fail(X, m, "cluster_fault", 2, 2, "segmentation fault", "in block (1,0,0) thread (5,0,0)");
    expect_fail(X, m, "cluster_dsmem", 3, 2, "invalid cluster (2,1,1) for grid (3,1,1)", NULL);
    CHECK(run_mc(X, m, 1, 2, 0, 1) == KB_ERR_FAULT);
    CHECK_MSG(contains(B->last_error(X), "ctaMask 0x7: a bit names a CTA outside the cluster"), "%s", B->last_error(X));
    CHECK(run_mc(X, m, 1, 2, 0, 2) == KB_ERR_FAULT);
    /* caught by rank 0's multicast or by rank 1's own wait, whichever the schedule runs first */
    CHECK_MSG(contains(B->last_error(X), "mbarrier use before init") && contains(B->last_error(X), "(1,0,0)") ==
              !contains(B->last_error(X), "CTA rank 1's mbarrier"), "%s", B->last_error(X));
    expect_fail(X, m, "cluster_dsmem", 16, 16, "at most 8 blocks", NULL);
    /* the launch after a failed one runs */
    check_dsmem(X, m, 2, 1, 2, 1);
    B->unload(X, m);
    kb_backend_ctx *x80 = open_emu(2, 80);
    if (x80) {
        kb_module *m80 = build_load_src(x80, TEST_KERNELS_DIR "/emu_block.cu");
        kb_dptr d = dalloc(x80, 4096);
        kb_arg a[] = { kb_arg_ptr(d) };
        kb_geom g = { { 2, 1, 1 }, { 32, 1, 1 }, 0, { 2, 1, 1 } };
        kb_status st = m80 ? B->launch(x80, m80, "geom3d", &g, a, 1) : KB_ERR_LAUNCH;
        CHECK_MSG(st == KB_ERR_LAUNCH && contains(B->last_error(x80), "needs thread block clusters (sm_90 or newer)"),
                  "%d %s", (int)st, B->last_error(x80));
        B->free(x80, d);
        if (m80)
            B->unload(x80, m80);
        B->fini(x80);
    }
}

/* NVRTC compiles the kernels for sm_90 into the instructions the emulator models. */
static void test_nvrtc_ptx(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/emu_cluster.cu", TEST_KERNELS_DIR);
    FILE *f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f)
        return;
    char *src = calloc(1 << 18, 1);
    size_t n = fread(src, 1, (1 << 18) - 1, f);
    fclose(f);
    src[n] = 0;
    const char *opts[] = { "--gpu-architecture=sm_90", "-std=c++17", "-I" KB_SOURCE_KERNELS_DIR,
                           "-I" KB_CUDA_INCLUDE_DIR, "-DKB_ARCH=90", "-DKB_ARCH_SPECIFIC=0" };
    nvrtcProgram p;
    CHECK(nvrtcCreateProgram(&p, src, "emu_cluster.cu", 0, NULL, NULL) == NVRTC_SUCCESS);
    if (nvrtcCompileProgram(p, 6, opts) != NVRTC_SUCCESS) {
        size_t ls = 0;
        nvrtcGetProgramLogSize(p, &ls);
        char *log = calloc(ls + 1, 1);
        nvrtcGetProgramLog(p, log);
        CHECK_MSG(0, "emu_cluster.cu does not compile for sm_90:\n%s", log);
        free(log);
    } else {
        size_t ps = 0;
        nvrtcGetPTXSize(p, &ps);
        char *ptx = calloc(ps + 1, 1);
        nvrtcGetPTX(p, ptx);
        const char *need[] = { "%cluster_ctarank", "%cluster_nctarank", "%cluster_ctaid.x", "%clusterid.y",
                               "barrier.cluster.arrive", "barrier.cluster.wait", "mapa.u64",
                               "mapa.shared::cluster.u32", "mbarrier.arrive.release.cluster.shared::cluster.b64",
                               ".multicast::cluster" };
        for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
            CHECK_MSG(strstr(ptx, need[i]), "no '%s' in the PTX", need[i]);
        free(ptx);
    }
    nvrtcDestroyProgram(&p);
    free(src);
}

int main(void)
{
    /* NVRTC first, as test_emu_sm90 does: after the emulator's fiber switches ASan's stack
     * bookkeeping can report a false stack-buffer-underflow inside NVRTC (google/sanitizers#189) */
    RUN(test_nvrtc_ptx);
    if (!fixture_begin("emu_cluster", 0))
        return 1;
    RUN(test_clusters_run);
    RUN(test_cluster_turn_order);
    RUN(test_no_cluster);
    RUN(test_cluster_rules);
    fixture_end();
    TEST_MAIN_END();
}
