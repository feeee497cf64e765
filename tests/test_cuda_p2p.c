/* test_cuda_p2p.c - the copy-engine matrix (backend/cuda/cuda_p2p.h) on the driver double
 * (tests/fake_cuda/fake_peer.c): every ordered pair measured one way and both ways at the
 * double's rate, a pair set to half named by its rate, 4-byte copies' latency, the copies
 * verified (the double refuses a copy between two devices without peer access, so a matrix
 * measured shows the module enabled it), a pair whose copies fail is that cell failed with the
 * driver's error name while every other pair is still measured, each ordinal's PCI bus id read in
 * CUDA's order, the bidirectional windows gated (cuStreamWaitValue32) or, on a driver without
 * stream memory operations, queued one after the other and said, and no driver is a setup error
 * with the reason. The gate is probed on every device: one device refusing it (not only the first
 * of a pair) ungates every pair, names the device and fails none; a pair with peer access one way
 * only is not gated (its staged copy would hang the host behind the held stream; the double
 * refuses it then) and says so. */
#include "backend/cuda/cuda_p2p.h"
#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void test_matrix_on_the_double(void)
{
    static kb_p2p_matrix m;
    setenv("KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), 1);
    setenv("KBENCH_FAKE_CUDA_DEVICES", "4", 1);
    setenv("KBENCH_FAKE_CUDA_P2P_HALF", "1-3", 1);
    kb_status st = kb_cuda_p2p_measure(1 << 20, 3, &m);
    CHECK_MSG(st == KB_OK, "%s", m.why);
    CHECK(m.n == 4 && m.wrong_a == -1);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++) {
            if (a == b)
                continue;
            double want = (a == 1 && b == 3) || (a == 3 && b == 1) ? 195 : 390;
            CHECK_MSG(fabs(m.uni[a][b] - want) < 1, "%d -> %d: %g", a, b, m.uni[a][b]);
            CHECK_MSG(fabs(m.bidir[a][b] - 2 * want) < 2, "%d <-> %d: %g", a, b, m.bidir[a][b]);
            CHECK(m.lat_us[a][b] > 0 && m.lat_us[a][b] < 1);
            CHECK(!m.no_peer[a][b]);
        }
    setenv("KBENCH_FAKE_CUDA_NO_PEER", "0-2", 1);   /* no peer access: said, not measured */
    st = kb_cuda_p2p_measure(1 << 20, 3, &m);
    CHECK_MSG(st == KB_OK, "%s", m.why);
    CHECK(m.n == 4 && m.no_peer[0][2] && m.no_peer[2][0] && !m.no_peer[0][1] && m.uni[0][2] == 0);
    CHECK(fabs(m.uni[0][1] - 390) < 1);
    CHECK_MSG(m.bidir_gated && !*m.gate_why, "%s", m.gate_why);   /* both directions held until both queued */
    setenv("KBENCH_FAKE_CUDA_NO_MEMOPS", "1", 1);   /* no stream memory operations: queued one after the other */
    st = kb_cuda_p2p_measure(1 << 20, 3, &m);
    CHECK_MSG(st == KB_OK && !m.bidir_gated && strstr(m.gate_why, "NOT_SUPPORTED") && fabs(m.bidir[0][1] - 780) < 2,
              "%s %g", m.gate_why, m.bidir[0][1]);
    unsetenv("KBENCH_FAKE_CUDA_NO_MEMOPS");
    unsetenv("KBENCH_FAKE_CUDA_NO_PEER");
    unsetenv("KBENCH_FAKE_CUDA_DEVICES");
    unsetenv("KBENCH_FAKE_CUDA_P2P_HALF");
    st = kb_cuda_p2p_measure(1 << 20, 3, &m);   /* one device: nothing to pair */
    CHECK(st == KB_OK && m.n == 1);
    setenv("KBENCH_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    st = kb_cuda_p2p_measure(1 << 20, 3, &m);
    CHECK(st == KB_ERR_SETUP && m.n == 0 && strstr(m.why, "libcuda"));
    unsetenv("KBENCH_LIBCUDA");
}

static void test_failed_pair_keeps_the_rest(void)
{
    static kb_p2p_matrix m;
    setenv("KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), 1);
    setenv("KBENCH_FAKE_CUDA_DEVICES", "4", 1);
    setenv("KBENCH_FAKE_CUDA_P2P_FAIL", "1-2", 1);
    kb_status st = kb_cuda_p2p_measure(1 << 20, 3, &m);
    CHECK_MSG(st == KB_OK && m.n == 4, "%s", m.why);
    CHECK(m.n_failed == 2 && !strcmp(m.failed[1][2], "CUDA_ERROR_UNKNOWN") && !strcmp(m.failed[2][1], "CUDA_ERROR_UNKNOWN"));
    CHECK_MSG(strstr(m.fail_why, "GPU 1 -> GPU 2: ") && strstr(m.fail_why, "MemcpyPeerAsync") &&
              strstr(m.fail_why, "CUDA_ERROR_UNKNOWN"), "%s", m.fail_why);
    CHECK(m.uni[1][2] == 0 && m.bidir[2][1] == 0);
    for (int a = 0; a < 4; a++)   /* the rows after the failed pair were measured too */
        for (int b = 0; b < 4; b++)
            if (a != b && !((a == 1 && b == 2) || (a == 2 && b == 1)))
                CHECK_MSG(!*m.failed[a][b] && fabs(m.uni[a][b] - 390) < 1, "%d -> %d: %g %s", a, b, m.uni[a][b],
                          m.failed[a][b]);
    unsetenv("KBENCH_FAKE_CUDA_P2P_FAIL");
    setenv("KBENCH_FAKE_CUDA_BUS_IDS", "0000:48:00.0,0000:10:00.0,0001:3b:00.0", 1);
    st = kb_cuda_p2p_measure(1 << 20, 1, &m);
    CHECK(st == KB_OK && m.n_failed == 0 && !strcmp(m.bus_id[0], "0000:48:00.0") && !strcmp(m.bus_id[2], "0001:3b:00.0") &&
          !strcmp(m.bus_id[3], "0000:28:00.0"));
    kb_cuda_devices d;
    CHECK(kb_cuda_devices_read(&d) == KB_OK && d.n == 4 && !strcmp(d.bus_id[1], "0000:10:00.0") &&
          !strcmp(d.bus_id[3], "0000:28:00.0"));
    unsetenv("KBENCH_FAKE_CUDA_BUS_IDS");
    unsetenv("KBENCH_FAKE_CUDA_DEVICES");
    setenv("KBENCH_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    CHECK(kb_cuda_devices_read(&d) == KB_ERR_SETUP && d.n == 0 && strstr(d.why, "libcuda"));
    unsetenv("KBENCH_LIBCUDA");
}

static void test_gate_refused_or_one_way(void)
{
    static kb_p2p_matrix m;
    setenv("KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), 1);
    setenv("KBENCH_FAKE_CUDA_DEVICES", "4", 1);
    setenv("KBENCH_FAKE_CUDA_NO_MEMOPS_ON", "2", 1);   /* device 2 alone has no stream memory operations */
    kb_status st = kb_cuda_p2p_measure(1 << 20, 3, &m);
    CHECK_MSG(st == KB_OK && m.n == 4, "%s", m.why);
    CHECK_MSG(m.n_failed == 0 && !m.bidir_gated && strstr(m.gate_why, "GPU 2: ") && strstr(m.gate_why, "NOT_SUPPORTED"),
              "%d failed (%s); gate: %s", m.n_failed, m.fail_why, m.gate_why);
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 4; b++)
            if (a != b)
                CHECK_MSG(fabs(m.bidir[a][b] - 780) < 2 && !m.one_way[a][b], "%d <-> %d: %g", a, b, m.bidir[a][b]);
    unsetenv("KBENCH_FAKE_CUDA_NO_MEMOPS_ON");
    setenv("KBENCH_FAKE_CUDA_NO_PEER_FROM", "2-0", 1);   /* 0 reaches 2, 2 does not reach 0 */
    st = kb_cuda_p2p_measure(1 << 20, 3, &m);
    CHECK_MSG(st == KB_OK && m.n == 4, "%s", m.why);
    CHECK_MSG(m.n_failed == 0 && m.bidir_gated, "%d failed (%s); gate: %s", m.n_failed, m.fail_why, m.gate_why);
    CHECK(m.no_peer[2][0] && !m.no_peer[0][2] && m.one_way[0][2] && !m.one_way[2][0] && !m.one_way[0][1]);
    CHECK_MSG(fabs(m.uni[0][2] - 390) < 1 && m.bidir[0][2] > 390 && m.uni[2][0] == 0, "%g %g", m.uni[0][2],
              m.bidir[0][2]);
    unsetenv("KBENCH_FAKE_CUDA_NO_PEER_FROM");
    unsetenv("KBENCH_FAKE_CUDA_DEVICES");
    unsetenv("KBENCH_LIBCUDA");
}

int main(void)
{
    RUN(test_matrix_on_the_double);
    RUN(test_failed_pair_keeps_the_rest);
    RUN(test_gate_refused_or_one_way);
    TEST_MAIN_END();
}
