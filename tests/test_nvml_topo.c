/* test_nvml_topo.c - the node as NVML shows it (backend/cuda/nvml_topo.h) on the NVML double
 * (tests/fake_cuda/fake_nvml_topo.c), put in CUDA's order by PCI bus id: bus ids in CUDA's and
 * NVML's forms normalised alike; a CUDA order that is not NVML's moves every table (links, the
 * inactive links, pair paths, NV<n> counts) to the CUDA ordinal; GPUs hidden from CUDA follow
 * CUDA's, said; a CUDA device NVML lacks is an error naming its bus id and the call; without
 * CUDA's devices NVML's order, said; a failing NVML call is named with nvmlErrorString's words. */
#include "backend/cuda/nvml_topo.h"
#include "check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_bus_id_forms(void)
{
    char out[KB_NVML_BUS_ID_LEN];
    CHECK(kb_nvml_bus_id_norm("0000:3b:00.0", out, sizeof out) == 0 && !strcmp(out, "00000000:3B:00.0"));
    CHECK(kb_nvml_bus_id_norm("00000000:3B:00.0", out, sizeof out) == 0 && !strcmp(out, "00000000:3B:00.0"));
    CHECK(kb_nvml_bus_id_norm("0001:5e:1f.7", out, sizeof out) == 0 && !strcmp(out, "00000001:5E:1F.7"));
    CHECK(kb_nvml_bus_id_norm("3b:00.0", out, sizeof out) == 0 && !strcmp(out, "00000000:3B:00.0"));
    CHECK(kb_nvml_bus_id_norm("0000:3b:00", out, sizeof out) == 0 && !strcmp(out, "00000000:3B:00.0"));
    const char *bad[] = { "", "3b", "0000:3b:00.0x", "0000:3b:20.0", "0000:3b:00.8", "0000:-1:00.0", "gpu0",
                          "0000:3b:00.0 ", "0000:1ff:00.0" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        CHECK_MSG(kb_nvml_bus_id_norm(bad[i], out, sizeof out) == -1 && !*out, "'%s' -> '%s'", bad[i], out);
    CHECK(kb_nvml_bus_id_norm(NULL, out, sizeof out) == -1);
}

/* NVML GPU g's bus id as CUDA prints it (the double's default address 0x10 + 8 g). */
static void cuda_id(char *out, int g) { snprintf(out, KB_NVML_BUS_ID_LEN, "0000:%02x:00.0", 0x10 + 8 * g); }

static void test_cuda_order(void)
{
    static kb_nvml_node m;
    char ids[8][KB_NVML_BUS_ID_LEN];
    const int perm[8] = { 3, 0, 6, 1, 7, 2, 5, 4 };   /* CUDA ordinal c is NVML GPU perm[c] */
    for (int c = 0; c < 8; c++)
        cuda_id(ids[c], perm[c]);
    setenv("KBENCH_FAKE_NVML_LINK_DOWN", "3:7,3:8", 1);   /* NVML GPU 3: CUDA device 0 */
    setenv("KBENCH_FAKE_NVML_PAIR", "6-1:SYS", 1);        /* NVML pair 6-1: CUDA devices 2 and 3 */
    kb_nvml_node_read((const char (*)[KB_NVML_BUS_ID_LEN])ids, 8, NULL, &m);
    CHECK_MSG(m.n == 8 && m.by_cuda && m.cuda_n == 8 && !m.map_failed && !*m.note, "%d %s %s", m.n, m.why, m.note);
    for (int c = 0; c < 8; c++) {
        char want[KB_NVML_BUS_ID_LEN];
        snprintf(want, sizeof want, "00000000:%02X:00.0", 0x10 + 8 * perm[c]);
        CHECK_MSG(m.nvml_index[c] == perm[c] && !strcmp(m.bus_id[c], want), "%d: %d %s", c, m.nvml_index[c],
                  m.bus_id[c]);
        CHECK(m.links[c] == (perm[c] == 3 ? 16 : 18));
    }
    CHECK(!strcmp(m.down[0], "7, 8") && !*m.down[3]);
    CHECK(m.links_read && m.paths_read && m.counts_read);
    CHECK(m.path[2][3] == KB_NVML_PATH_SYS && m.path[3][2] == KB_NVML_PATH_SYS && m.path[6][1] == KB_NVML_PATH_NVLINK);
    CHECK_MSG(m.nv_links[0][5] == 16 && m.nv_links[5][0] == 16 && m.nv_links[3][5] == 18, "%d %d %d", m.nv_links[0][5],
              m.nv_links[5][0], m.nv_links[3][5]);
    unsetenv("KBENCH_FAKE_NVML_LINK_DOWN");
    unsetenv("KBENCH_FAKE_NVML_PAIR");
    /* two GPUs shown to CUDA, in CUDA's form and case: the other six follow, said */
    snprintf(ids[0], sizeof ids[0], "0000:48:00.0");
    snprintf(ids[1], sizeof ids[1], "00000000:20:00.0");
    kb_nvml_node_read((const char (*)[KB_NVML_BUS_ID_LEN])ids, 2, NULL, &m);
    CHECK(m.n == 8 && m.cuda_n == 2 && m.nvml_index[0] == 7 && m.nvml_index[1] == 2 && m.nvml_index[2] == 0 &&
          m.nvml_index[7] == 6);
    CHECK_MSG(strstr(m.note, "NVML GPU 0, NVML GPU 1, NVML GPU 3") && strstr(m.note, "hidden from CUDA"), "%s", m.note);
    /* CUDA's devices unknown: NVML's order, said */
    kb_nvml_node_read(NULL, -1, "libcuda.so.1: cannot open shared object file", &m);
    CHECK(m.n == 8 && !m.by_cuda && m.nvml_index[5] == 5 && strstr(m.note, "NVML's order") &&
          strstr(m.note, "libcuda.so.1"));
}

static void test_device_not_in_nvml(void)
{
    static kb_nvml_node m;
    char ids[3][KB_NVML_BUS_ID_LEN] = { "0001:3b:00.0", "0000:99:00.0", "0001:5e:00.0" };
    setenv("KBENCH_FAKE_NVML_GPUS", "2", 1);
    setenv("KBENCH_FAKE_NVML_BUS_IDS", "00000001:3B:00.0,00000001:5E:00.0", 1);
    kb_nvml_node_read((const char (*)[KB_NVML_BUS_ID_LEN])ids, 3, NULL, &m);
    CHECK_MSG(m.n == 0 && m.map_failed && strstr(m.why, "CUDA device 1 (PCI bus id 0000:99:00.0) is not in NVML: "
              "nvmlDeviceGetHandleByPciBusId_v2(\"00000000:99:00.0\") -> NVML_ERROR_NOT_FOUND: Not Found"), "%s",
              m.why);
    snprintf(ids[1], sizeof ids[1], "0001:5E:00.0");   /* two CUDA devices on one GPU */
    kb_nvml_node_read((const char (*)[KB_NVML_BUS_ID_LEN])ids, 3, NULL, &m);
    CHECK_MSG(m.n == 0 && m.map_failed && strstr(m.why, "CUDA devices 1 and 2 are one GPU"), "%s", m.why);
    kb_nvml_node_read((const char (*)[KB_NVML_BUS_ID_LEN])ids, 2, NULL, &m);   /* the domain matched too */
    CHECK_MSG(m.n == 2 && m.nvml_index[0] == 0 && m.nvml_index[1] == 1 && !strcmp(m.bus_id[1], "00000001:5E:00.0"),
              "%d %s", m.n, m.why);
    unsetenv("KBENCH_FAKE_NVML_GPUS");
    unsetenv("KBENCH_FAKE_NVML_BUS_IDS");
}

static void test_failing_calls_named(void)
{
    static kb_nvml_node m;
    setenv("KBENCH_FAKE_NVML_TOPO_FAIL", "nvmlDeviceGetTopologyCommonAncestor,nvmlDeviceGetNvLinkState", 1);
    setenv("KBENCH_FAKE_NVML_PAIR", "0-1:PIX", 1);   /* a pair the common ancestor is asked for */
    kb_nvml_node_read(NULL, -1, "none", &m);
    CHECK(m.n == 8 && !m.links_read && !m.paths_read);
    CHECK_MSG(!strcmp(m.links_why, "nvmlDeviceGetNvLinkState(GPU 0, link 0) -> NVML_ERROR_GPU_IS_LOST: GPU is lost"),
              "%s", m.links_why);
    CHECK_MSG(strstr(m.paths_why, "nvmlDeviceGetTopologyCommonAncestor(GPU 0, GPU 1) -> NVML_ERROR_GPU_IS_LOST: GPU "
              "is lost"), "%s", m.paths_why);
    unsetenv("KBENCH_FAKE_NVML_TOPO_FAIL");
    unsetenv("KBENCH_FAKE_NVML_PAIR");
}

int main(void)
{
    const char *lib = getenv("KBENCH_FAKE_LIBNVML");
    if (!lib || !*lib) {
        fprintf(stderr, "KBENCH_FAKE_LIBNVML does not name the NVML double (run through ctest)\n");
        return 1;
    }
    setenv("KBENCH_LIBNVML", lib, 1);
    RUN(test_bus_id_forms);
    RUN(test_cuda_order);
    RUN(test_device_not_in_nvml);
    RUN(test_failing_calls_named);
    TEST_MAIN_END();
}
