/* test_accept_system.c - system specs (the shipped ones parse, every figure with its source
 * or said unknown; bad specs refused with file:line:col) and a node's verdict
 * (accept/sysverdict.h): the collectives' culprit named, the floors on a GPU clock and not
 * on a CPU one, the slowest P2P pair, a link down and a pair off the topology named. */
#include "accept/system.h"
#include "accept/sysverdict.h"
#include "check.h"

#include <string.h>

#define SYS "data/acceptance/systems/"

static void test_shipped_systems_parse(void)
{
    static const char *const names[] = { "hgx-h100-8", "hgx-h200-8", "hgx-b200-8", "generic" };
    kb_sb err;
    kb_sb_init(&err);
    for (int i = 0; i < 4; i++) {
        char path[256];
        snprintf(path, sizeof path, SYS "%s.yaml", names[i]);
        kb_acc_system s;
        kb_status st = kb_acc_system_load(path, &s, &err);
        CHECK_MSG(st == KB_OK, "%s: %s", path, err.s);
        CHECK(!strcmp(s.name, names[i]));
        CHECK(*s.topology_source && *s.nvlink_source);
        /* a figure has a source; an absent figure says why */
        CHECK(s.busbw.have ? *s.busbw.source != 0 : *s.busbw_unknown != 0);
        CHECK(s.p2p.have ? *s.p2p.source != 0 : *s.p2p_unknown != 0);
    }
    kb_acc_system h;
    CHECK(kb_acc_system_load(SYS "hgx-h100-8.yaml", &h, &err) == KB_OK);
    CHECK(h.gpus == 8 && h.topology == KB_SYS_TOPO_NVSWITCH && h.nvlink_links == 18);
    CHECK(h.busbw.have && h.busbw.reference == 480 && h.busbw.fraction == 0.85);
    CHECK(h.p2p.have && h.p2p.reference == 380);
    CHECK(h.sweep.max_bytes == 8ull << 30 && h.sweep.factor == 2);
    CHECK(kb_acc_system_load(SYS "generic.yaml", &h, &err) == KB_OK);
    CHECK(!h.busbw.have && !h.p2p.have && h.topology == KB_SYS_TOPO_PCIE && h.nvlink_links == 0);
    CHECK(h.emu_sweep.min_bytes == 1024 && h.emu_sweep.factor == 4);
    kb_sb_free(&err);
}

static void expect_refused(const char *text, const char *needle)
{
    kb_acc_system s;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_acc_system_parse(text, "t.yaml", &s, &err);
    CHECK_MSG(st == KB_ERR_INPUT && strstr(err.s, needle) && !strncmp(err.s, "t.yaml:", 7), "%s -> %s", text, err.s);
    kb_sb_free(&err);
}

#define HEAD "system: x\ndescription: d\ntopology: {expect: any, source: s}\nnvlink: {unknown: u}\n"
#define SWEEP "sweep: {min: 8, max: 1M, factor: 2}\n"
#define THR "thresholds:\n  allreduce_busbw: {unknown: u}\n  p2p_bandwidth: {unknown: u}\n"

static void test_bad_systems_refused(void)
{
    kb_acc_system s;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_acc_system_parse(HEAD SWEEP THR, "t.yaml", &s, &err) == KB_OK);
    CHECK(s.nvlink_links == -1 && s.topology == KB_SYS_TOPO_ANY);
    kb_sb_free(&err);
    expect_refused("system: x\n", "description");
    expect_refused(HEAD SWEEP "thresholds:\n  allreduce_busbw: {reference: 480, fraction: 0.9}\n"
                   "  p2p_bandwidth: {unknown: u}\n", "source");
    expect_refused(HEAD SWEEP "thresholds:\n  allreduce_busbw: {reference: 480, unknown: u}\n"
                   "  p2p_bandwidth: {unknown: u}\n", "stands alone");
    expect_refused(HEAD SWEEP "thresholds:\n  allreduce_busbw: {unknown: u}\n", "p2p_bandwidth");
    expect_refused(HEAD SWEEP "thresholds:\n  allreduce_busbw: {reference: 1, fraction: 2, source: s}\n"
                   "  p2p_bandwidth: {unknown: u}\n", "fraction");
    expect_refused(HEAD SWEEP "thresholds:\n  allreduce_busbw: {reference: 1, fraction: 1, unit: TFLOPS, source: s}\n"
                   "  p2p_bandwidth: {unknown: u}\n", "GB/s");
    expect_refused(HEAD "sweep: {min: 2M, max: 1M, factor: 2}\n" THR, "sweep");
    expect_refused(HEAD "sweep: {min: 8, max: 1M, factor: 1}\n" THR, "factor");
    expect_refused(HEAD "sweep: {min: 8, max: 1Q, factor: 2}\n" THR, "max");
    expect_refused("system: x\ndescription: d\ntopology: {expect: ring, source: s}\nnvlink: {unknown: u}\n" SWEEP THR,
                   "nvswitch, pcie or any");
    expect_refused("system: x\ndescription: d\ntopology: {expect: any, source: s}\nnvlink: {links: 4, unknown: u}\n"
                   SWEEP THR, "either");
    expect_refused(HEAD SWEEP THR "extra: 1\n", "extra");
    kb_sb_init(&err);
    CHECK(kb_acc_system_find("no-such-system", &s, &err) == KB_ERR_INPUT && strstr(err.s, "no such system"));
    CHECK(kb_acc_system_find("../etc", &s, &err) != KB_OK);
    kb_sb_free(&err);
}

static kb_acc_system h100(void)
{
    kb_acc_system s;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_acc_system_load(SYS "hgx-h100-8.yaml", &s, &err) == KB_OK);
    kb_sb_free(&err);
    return s;
}

static kb_sys_coll coll_ok(int rank)
{
    kb_sys_coll c;
    memset(&c, 0, sizeof c);
    c.ran = 1;
    c.clock = "gpu";
    c.rank = rank;
    c.nranks = 8;
    c.culprits_checked = 1;
    c.n_results = 48;
    c.large_bytes = 8ull << 30;
    c.busbw_large = 470;
    c.busy_us_large = -1;
    return c;
}

static void test_collectives_name_the_culprit(void)
{
    kb_acc_system s = h100();
    kb_sys_node node;
    memset(&node, 0, sizeof node);
    snprintf(node.why, sizeof node.why, "not read here");
    kb_acc_verdict v;
    kb_sys_coll c = coll_ok(3);
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK(v.system && v.r[KB_ACC_COLL].status == KB_ACC_PASS && v.r[KB_ACC_BUSBW].status == KB_ACC_PASS);
    CHECK(v.r[KB_ACC_BUSBW].threshold == 480 * 0.85 && v.worst == KB_ACC_PASS);
    CHECK(v.r[KB_ACC_P2P].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_P2P].reason, "not read here"));
    CHECK(v.r[KB_ACC_CORRECTNESS].status == KB_ACC_SKIP && !kb_acc_verdict_has(&v, KB_ACC_CORRECTNESS));
    c.busbw_large = 300;   /* below 408 */
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK(v.r[KB_ACC_BUSBW].status == KB_ACC_FAIL && v.worst == KB_ACC_FAIL);
    /* rank 5's contribution was wrong: rank 5 FAILs, rank 3 passes naming it */
    c = coll_ok(3);
    c.n_wrong = 4;
    c.wrong_elements = 40;
    c.n_suspects = 1;
    c.suspects[0] = 5;
    snprintf(c.first_wrong, sizeof c.first_wrong, "all_reduce fp32 sum 1024 B");
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK(v.r[KB_ACC_COLL].status == KB_ACC_PASS && strstr(v.r[KB_ACC_COLL].reason, "rank 5"));
    CHECK(v.r[KB_ACC_BUSBW].status == KB_ACC_SKIP);   /* not judged on wrong results */
    c.rank = 5;
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK(v.r[KB_ACC_COLL].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_COLL].reason, "this rank's contribution"));
    kb_acc_status st[] = { v.r[KB_ACC_COLL].status };
    kb_acc_test tt[] = { KB_ACC_COLL };
    CHECK(kb_acc_exit_code(st, tt, 1) == KB_EXIT_INCORRECT);
    /* through NCCL nobody is named: this rank's output */
    c.culprits_checked = 0;
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK(v.r[KB_ACC_COLL].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_COLL].reason, "no rank is named"));
    c.culprits_checked = 1;
    /* wrong with nobody named: the transport, every rank FAILs */
    c.n_suspects = 0;
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK(v.r[KB_ACC_COLL].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_COLL].reason, "transport"));
    /* the sweep failed after the communicator was up: FAIL with NCCL's words, wrong results kept */
    c = coll_ok(0);
    c.ran = 0;
    c.failed = 1;
    c.n_results = 7;
    c.n_wrong = 2;
    c.wrong_elements = 9;
    snprintf(c.why, sizeof c.why, "NCCL: ncclRemoteError");
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK_MSG(v.r[KB_ACC_COLL].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_COLL].reason, "ncclRemoteError") &&
              strstr(v.r[KB_ACC_COLL].reason, "2 wrong"), "%s", v.r[KB_ACC_COLL].reason);
    CHECK(v.r[KB_ACC_COLL].value == 9 && v.worst == KB_ACC_FAIL);
    c.failed = 0;   /* could not start: SKIP */
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK(v.r[KB_ACC_COLL].status == KB_ACC_SKIP);
}

static void test_cpu_timings_are_not_judged(void)
{
    kb_acc_system s = h100();
    kb_sys_node node;
    memset(&node, 0, sizeof node);
    kb_sys_coll c = coll_ok(0);
    c.clock = "cpu";
    c.busbw_large = 0.5;
    c.busy_us_large = 120;
    kb_acc_verdict v;
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK(v.r[KB_ACC_BUSBW].status == KB_ACC_SKIP && v.r[KB_ACC_BUSBW].have_value && !v.gpu_thresholds);
    CHECK(v.r[KB_ACC_COLL_BUSY].status == KB_ACC_SKIP && v.r[KB_ACC_COLL_BUSY].value == 120);
    CHECK(!strcmp(v.r[KB_ACC_COLL_BUSY].clock, "cpu"));
    CHECK(v.worst == KB_ACC_PASS);   /* the collectives were verified */
    c.ran = 0;
    snprintf(c.why, sizeof c.why, "no transport");
    kb_acc_system_judge(&s, &c, &node, &v);
    CHECK(v.worst == KB_ACC_NOT_CHECKED && strstr(v.r[KB_ACC_COLL].reason, "no transport"));
}

/* An HGX H100 node as NVML and the copies would show it. */
static kb_sys_node hgx_node(void)
{
    kb_sys_node n;
    memset(&n, 0, sizeof n);
    n.n = n.p2p_n = 8;
    n.links_read = n.topo_read = n.p2p_read = 1;
    n.p2p_wrong_a = n.p2p_wrong_b = -1;
    n.clock = "gpu";
    n.by_cuda = 1;
    n.cuda_n = 8;
    for (int i = 0; i < 8; i++) {
        n.gpu_nvml[i] = 7 - i;   /* CUDA's order is not NVML's */
        snprintf(n.gpu_bus[i], sizeof n.gpu_bus[i], "00000000:%02X:00.0", 0x10 + 8 * (7 - i));
        n.links[i] = n.links_max[i] = 18;
        for (int j = 0; j < 8; j++) {
            n.topo[i][j] = i == j ? KB_PAIR_X : KB_PAIR_NV;
            n.bw_uni[i][j] = 390;
            n.bw_bidir[i][j] = 760;
        }
    }
    return n;
}

static void test_pairs_and_links_named(void)
{
    kb_acc_system s = h100();
    kb_sys_coll c = coll_ok(0);
    kb_sys_node n = hgx_node();
    kb_acc_verdict v;
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK(v.r[KB_ACC_P2P].status == KB_ACC_PASS && v.r[KB_ACC_NVLINK].status == KB_ACC_PASS);
    CHECK(v.r[KB_ACC_TOPOLOGY].status == KB_ACC_PASS && v.worst == KB_ACC_PASS);
    n.bw_uni[2][5] = 195;   /* a pair at half bandwidth */
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK(v.r[KB_ACC_P2P].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_P2P].reason, "GPU 2 -> GPU 5"));
    /* with no floor (generic), the pair is an outlier among the node's NVLink pairs */
    kb_acc_system g;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_acc_system_load(SYS "generic.yaml", &g, &err) == KB_OK);
    kb_sb_free(&err);
    kb_acc_system_judge(&g, &c, &n, &v);
    CHECK(v.r[KB_ACC_P2P].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_P2P].reason, "pair outlier: GPU 2 -> GPU 5"));
    /* a PCIe node: pairs across the sockets (SYS) slower by design are compared among themselves */
    n = hgx_node();
    for (int i = 0; i < 8; i++)
        for (int j = 0; j < 8; j++)
            if (i != j) {
                n.topo[i][j] = (i < 4) == (j < 4) ? KB_PAIR_NODE : KB_PAIR_SYS;
                n.bw_uni[i][j] = (i < 4) == (j < 4) ? 25 : 18;
            }
    kb_acc_system_judge(&g, &c, &n, &v);
    CHECK_MSG(v.r[KB_ACC_P2P].status == KB_ACC_SKIP, "%s", v.r[KB_ACC_P2P].reason);
    n.bw_uni[6][1] = 9;   /* one SYS pair at half */
    kb_acc_system_judge(&g, &c, &n, &v);
    CHECK(v.r[KB_ACC_P2P].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_P2P].reason, "GPU 6 -> GPU 1"));
    n = hgx_node();
    n.p2p_wrong_a = 4;      /* a copy read back wrong */
    n.p2p_wrong_b = 1;
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK(v.r[KB_ACC_P2P].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_P2P].reason, "GPU 4 -> GPU 1: a copy"));
    /* a pair without peer access was not measured (0 GB/s): not the slowest pair, not an outlier */
    n = hgx_node();
    n.no_peer[3][6] = n.no_peer[6][3] = 1;
    n.bw_uni[3][6] = n.bw_uni[6][3] = n.bw_bidir[3][6] = n.bw_bidir[6][3] = 0;
    kb_acc_system_judge(&g, &c, &n, &v);
    CHECK_MSG(v.r[KB_ACC_P2P].status != KB_ACC_FAIL && strstr(v.r[KB_ACC_P2P].reason, "no peer access between GPU 3 "
              "and GPU 6") && !strstr(v.r[KB_ACC_P2P].reason, "outlier"), "%s", v.r[KB_ACC_P2P].reason);
    kb_acc_system_judge(&s, &c, &n, &v);   /* the system says NVLink between every pair */
    CHECK_MSG(v.r[KB_ACC_P2P].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_P2P].reason, "no peer access between GPU 3 "
              "and GPU 6"), "%s", v.r[KB_ACC_P2P].reason);
    n = hgx_node();         /* copies between 1 and 2 failed: the other pairs are still judged */
    snprintf(n.p2p_failed[1][2], sizeof n.p2p_failed[1][2], "CUDA_ERROR_UNKNOWN");
    snprintf(n.p2p_failed[2][1], sizeof n.p2p_failed[2][1], "CUDA_ERROR_UNKNOWN");
    n.p2p_n_failed = 2;
    n.bw_uni[1][2] = n.bw_uni[2][1] = 0;
    n.bw_uni[4][0] = 380;
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK_MSG(v.r[KB_ACC_P2P].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_P2P].reason, "copies failed on 2 pairs: "
              "GPU 1 -> GPU 2 (CUDA_ERROR_UNKNOWN), GPU 2 -> GPU 1 (CUDA_ERROR_UNKNOWN)") &&
              strstr(v.r[KB_ACC_P2P].reason, "the slowest 4 -> 0 at 380 GB/s"), "%s", v.r[KB_ACC_P2P].reason);
    n = hgx_node();
    n.links[6] = 17;        /* a link down */
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK_MSG(v.r[KB_ACC_NVLINK].status == KB_ACC_FAIL &&
              strstr(v.r[KB_ACC_NVLINK].reason, "GPU 6 (NVML 1, 00000000:18:00.0): 17 of 18"), "%s",
              v.r[KB_ACC_NVLINK].reason);
    n.cuda_n = 4;           /* GPUs 4..7 hidden from CUDA: named by NVML's index */
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK_MSG(strstr(v.r[KB_ACC_NVLINK].reason, "NVML GPU 1 (00000000:18:00.0, not shown to CUDA): 17 of 18"), "%s",
              v.r[KB_ACC_NVLINK].reason);
    n = hgx_node();
    n.topo[1][4] = n.topo[4][1] = KB_PAIR_SYS;
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK(v.r[KB_ACC_TOPOLOGY].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_TOPOLOGY].reason, "GPU 1 - GPU 4: SYS"));
    n = hgx_node();
    n.n = 0;                /* a CUDA device NVML does not have: the tables cannot be paired */
    n.map_failed = 1;
    snprintf(n.why, sizeof n.why, "CUDA device 2 (PCI bus id 0000:99:00.0) is not in NVML");
    kb_acc_system_judge(&s, &c, &n, &v);
    /* that says nothing about the hardware: the tables' tests are SKIP with the reason, not FAIL */
    CHECK_MSG(v.r[KB_ACC_TOPOLOGY].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_TOPOLOGY].reason, "0000:99:00.0") &&
              v.r[KB_ACC_NVLINK].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_NVLINK].reason, "0000:99:00.0") &&
              v.r[KB_ACC_P2P].status == KB_ACC_PASS && v.worst == KB_ACC_PASS, "%s", v.r[KB_ACC_TOPOLOGY].reason);
    snprintf(n.why, sizeof n.why, "CUDA devices 0 and 1 are one GPU (PCI bus id 0000:10:00.0; MIG instances?)");
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK_MSG(v.r[KB_ACC_TOPOLOGY].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_TOPOLOGY].reason, "MIG"), "%s",
              v.r[KB_ACC_TOPOLOGY].reason);
    /* CUDA's bus ids not read (NVML's order): a pair's GPUs are CUDA ordinals, not NVML entries; NVML's
     * tables name NVML's GPUs */
    n = hgx_node();
    n.by_cuda = 0;
    n.cuda_n = 0;
    n.bw_uni[2][5] = 195;
    n.links[6] = 17;
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK_MSG(v.r[KB_ACC_P2P].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_P2P].reason, "GPU 2 -> GPU 5") &&
              !strstr(v.r[KB_ACC_P2P].reason, "NVML") && !strstr(v.r[KB_ACC_P2P].reason, "00000000:"), "%s",
              v.r[KB_ACC_P2P].reason);
    CHECK_MSG(v.r[KB_ACC_NVLINK].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_NVLINK].reason, "NVML GPU 1 "
              "(00000000:18:00.0): 17 of 18") && !strstr(v.r[KB_ACC_NVLINK].reason, "GPU 6"), "%s",
              v.r[KB_ACC_NVLINK].reason);
    n = hgx_node();
    n.n = 7;
    kb_acc_system_judge(&s, &c, &n, &v);
    CHECK(v.r[KB_ACC_TOPOLOGY].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_TOPOLOGY].reason, "7 GPUs"));
}

int main(void)
{
    RUN(test_shipped_systems_parse);
    RUN(test_bad_systems_refused);
    RUN(test_collectives_name_the_culprit);
    RUN(test_cpu_timings_are_not_judged);
    RUN(test_pairs_and_links_named);
    TEST_MAIN_END();
}
