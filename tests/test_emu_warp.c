/* test_emu_warp.c - the emu backend's warp collectives (set-up in emu_fixture.h):
 * shuffles of every kind and width against the CUDA Programming Guide's definitions,
 * votes (ballot, any, all) and reductions, in 1D and 3D blocks and partial warps; a
 * warp sum; and exchanges among a subset of a warp's lanes. */
#include "emu_fixture.h"

#include <stdio.h>

/* ---- warp collectives ---- */
/* Expected results of the `shuffles` kernel for thread gid of a block of nt threads,
 * from the CUDA Programming Guide's definitions. */
static void shuffles_expect(int gid, int nt, int width, int *o)
{
    int lane = gid % nt % 32, warp0 = gid - lane, seg = lane / width * width;
    int lanes = nt - gid % nt + lane < 32 ? nt - gid % nt + lane : 32; /* lanes in this warp */
#define V(l) ((warp0 + (l)) * 7 + 3)
    o[0] = V((lane * 5 + 3) & 31);
    o[1] = V(seg + (lane + 1) % width);
    o[2] = lane - seg >= 3 ? V(lane - 3) : V(lane);
    o[3] = lane - seg + 3 < width ? V(lane + 3) : V(lane);
    o[4] = (lane ^ 5) < seg + width ? V(lane ^ 5) : V(lane);
    unsigned ballot = 0;
    int any37 = 0, all_pos = 1, sum = 0;
    for (int l = 0; l < lanes; l++) {
        ballot |= (unsigned)(V(l) % 3 == 0) << l;
        any37 |= warp0 + l == 37;
        all_pos &= V(l) > 0;
        sum += V(l);
    }
    o[5] = (int)ballot;
    o[6] = any37 | 0 << 1 | all_pos << 2 | (lanes > 7 ? 0 : 1) << 3;
    o[7] = warp0 + (lane ^ 16);                      /* f = gid/2, times 2 */
    o[8] = lane + 1 < 32 ? (warp0 + lane + 1) * 4 + 1 : gid * 4 + 1;
    o[9] = warp0;
    o[10] = lane >= 1 ? (warp0 + lane - 1) & 0xffff : gid & 0xffff;
    o[11] = sum + lanes - 1;
#undef V
}

static void run_shuffles(unsigned bx, unsigned by, unsigned bz, int width)
{
    enum { NB = 2, MAXT = 64, NO = 12 };
    int nt = (int)(bx * by * bz), n = NB * nt;
    int out[NB * MAXT * NO], want[NO];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d), kb_arg_i32(width) };
    CHECK(launch(X, M_WARP, "shuffles", NB, 1, 1, bx, by, bz, 0, a, 2) == KB_OK);
    B->download(X, out, d, sizeof out);
    int bad = 0;
    for (int g = 0; g < n; g++) {
        shuffles_expect(g, nt, width, want);
        for (int k = 0; k < NO; k++) {
            /* these may read lanes a partial warp does not have */
            if (nt % 32 && (k == 0 || k == 7 || k == 8))
                continue;
            if (out[g * NO + k] != want[k] && bad++ < 5)
                fprintf(stderr, "  block (%u,%u,%u) width %d thread %d result %d: %d want %d\n", bx, by, bz,
                        width, g, k, out[g * NO + k], want[k]);
        }
    }
    CHECK_MSG(bad == 0, "%d wrong shuffle results", bad);
    B->free(X, d);
}

static void test_shuffles(void)
{
    run_shuffles(64, 1, 1, 32);
    run_shuffles(64, 1, 1, 8);
    run_shuffles(8, 4, 2, 16);   /* lanes follow the linear order x + y*bx + z*bx*by */
    run_shuffles(48, 1, 1, 16);  /* a partial second warp of 16 lanes */
}

static void test_warp_sum(void)
{
    enum { N = 256 };
    float in[N], out[N];
    for (int i = 0; i < N; i++)
        in[i] = (float)(i % 13);
    kb_dptr d_in = dalloc(X, sizeof in), d_out = dalloc(X, sizeof out);
    B->upload(X, d_in, in, sizeof in);
    kb_arg a[] = { kb_arg_ptr(d_out), kb_arg_ptr(d_in) };
    CHECK(launch(X, M_WARP, "warp_sum", 2, 1, 1, N / 2, 1, 1, 0, a, 2) == KB_OK);
    B->download(X, out, d_out, sizeof out);
    int bad = 0;
    for (int w = 0; w < N / 32; w++) {
        float s = 0;
        for (int l = 0; l < 32; l++)
            s += in[w * 32 + l];
        for (int l = 0; l < 32; l++)
            bad += out[w * 32 + l] != s;
    }
    CHECK(bad == 0);
    B->free(X, d_in);
    B->free(X, d_out);
}

/* Lanes released from one exchange read it after the last lane in has run on: a subset
 * of the warp exchanging again meanwhile must not overwrite what they have yet to read. */
static void test_warp_subset(void)
{
    enum { NT = 64 };
    int out[NT * 3];
    kb_dptr d = dalloc(X, sizeof out);
    kb_arg a[] = { kb_arg_ptr(d) };
    CHECK(launch(X, M_WARP, "warp_subset", 2, 1, 1, NT, 1, 1, 0, a, 1) == KB_OK);
    B->download(X, out, d, sizeof out);
    int bad = 0;
    for (int t = 0; t < NT; t++) {
        int lane = t % 32, pair = lane == 0 || lane == 31;
        int want[3] = { 1000, pair ? 31 - lane : 0, pair ? -(31 - lane) - 7 : 0 };
        for (int k = 0; k < 3; k++)
            if (out[3 * t + k] != want[k] && bad++ < 5)
                fprintf(stderr, "  thread %d result %d: %d want %d\n", t, k, out[3 * t + k], want[k]);
    }
    CHECK_MSG(bad == 0, "%d wrong results", bad);
    B->free(X, d);
}

int main(void)
{
    if (!fixture_begin("test_emu_warp", FIX_WARP))
        return 1;
    RUN(test_shuffles);
    RUN(test_warp_sum);
    RUN(test_warp_subset);
    fixture_end();
    TEST_MAIN_END();
}
