/* test_accept_system_cli.c - `kbench accept --system` end to end: on the emulator (one rank)
 * the collectives run and are verified, busbw per size is in the verdict, the GPU pairs are
 * SKIP; on the driver and NVML doubles (tests/fake_cuda/fake_nvml_topo.c) an HGX H100 node
 * passes its NVLink, topology and P2P tests, an injected link down and a pair off the NVLink
 * fabric each FAIL (exit 6) naming the GPU and link, or the pair, in the verdict and JUnit, and
 * a pair at half bandwidth (the driver double's copies) FAILs p2p_bandwidth naming it (exit 5);
 * with CUDA's order not NVML's every table is by CUDA ordinal (a degraded GPU's link count and
 * its slow pair's cell on the same row), a CUDA device NVML lacks or two CUDA devices on one GPU
 * (MIG) SKIP topology and NVLink naming the bus id (a mapping, not the hardware), a pair whose
 * copies fail FAILs p2p_bandwidth while the other pairs are measured, a device without stream
 * memory operations ungates every pair and fails none, and a pair with peer access one way only
 * is listed in p2p_bidir_sequential;
 * a PCIe node judged as an HGX fails its topology, as the generic system it passes; the NCCL
 * sweep on the NCCL double verifies every result, eager and captured into a graph, and an
 * asynchronous NCCL error is SKIP; an unknown system is exit 2 listing the systems. */
#include "check.h"
#include "core/kb.h"
#include "spawn.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static json_t *test_of(json_t *v, const char *name)
{
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(v, "tests"), i, t)
        if (!strcmp(json_string_value(json_object_get(t, "name")), name))
            return t;
    return NULL;
}

static const char *status(json_t *v, const char *name)
{
    const char *s = json_string_value(json_object_get(test_of(v, name), "status"));
    return s ? s : "";
}

static const char *reason(json_t *v, const char *name)
{
    const char *s = json_string_value(json_object_get(test_of(v, name), "reason"));
    return s ? s : "";
}

/* kbench accept --system SYSTEM --backend BACKEND into dir with env (NAME, VALUE, ..., NULL)
 * set for it; *verdict the --json copy (NULL when none). The exit code. */
static int accept_system(const char *dir, const char *system, const char *backend, const char *const *env,
                         json_t **verdict)
{
    char log[600], json[600], junit[600];
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(json, sizeof json, "%s/v.json", dir);
    snprintf(junit, sizeof junit, "%s/v.xml", dir);
    unlink(json);
    for (int i = 0; env && env[i]; i += 2)
        setenv(env[i], env[i + 1], 1);
    const char *a[] = { "kbench", "accept", "--system", system, "--backend", backend, "--out-dir", dir, "--json", json,
                        "--junit", junit, NULL };
    int rc = run_kbench_within(a, log, 120);
    for (int i = 0; env && env[i]; i += 2)
        unsetenv(env[i]);
    *verdict = json_load_file(json, 0, NULL);
    if (!*verdict && rc != KB_EXIT_INPUT) {
        char *text = slurp(log);
        CHECK_MSG(0, "no verdict (exit %d): %s", rc, text ? text : "");
        free(text);
    }
    return rc;
}

static char dir[] = "/tmp/kb_accept_system_XXXXXX";

static void test_emu_generic_one_rank(void)
{
    json_t *v = NULL;
    int rc = accept_system(dir, "generic", "emu", NULL, &v);
    CHECK(rc == 0);
    CHECK(!strcmp(status(v, "collectives"), "PASS") && strstr(reason(v, "collectives"), "verified element by element"));
    CHECK(!strcmp(status(v, "allreduce_busbw"), "SKIP") && strstr(reason(v, "allreduce_busbw"), "one rank"));
    CHECK(!strcmp(status(v, "p2p_bandwidth"), "SKIP") && strstr(reason(v, "p2p_bandwidth"), "emulator"));
    CHECK(!test_of(v, "correctness") && json_array_size(json_object_get(v, "tests")) == 6);
    json_t *sys = json_object_get(v, "system");
    CHECK(json_array_size(json_object_get(sys, "all_reduce")) == 5);   /* 1K .. 256K by 4 */
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(v, "spec"), "name")), "generic"));
    const char *records = json_string_value(json_object_get(sys, "coll_records"));
    char *text = records ? slurp(records) : NULL;
    int lines = 0;
    for (char *p = text; p && (p = strstr(p, "\"schema\":\"kbench-coll\"")); p++)
        lines++;
    CHECK_MSG(lines == 40, "%d records", lines);   /* 6 ops x 5 sizes + bf16 and int8 all_reduce */
    free(text);
    json_decref(v);
}

static void test_unknown_system(void)
{
    json_t *v = NULL;
    char log[600];
    snprintf(log, sizeof log, "%s/log", dir);
    CHECK(accept_system(dir, "hgx-z9000", "emu", NULL, &v) == KB_EXIT_INPUT && !v);
    char *text = slurp(log);
    CHECK(text && strstr(text, "no such system") && strstr(text, "hgx-h100-8"));
    free(text);
}

/* The topology table's cell (a, b) in verdict v ("NV18", "SYS" ...), "" when absent. */
static const char *cell(json_t *v, int a, int b)
{
    json_t *m = json_object_get(json_object_get(v, "system"), "topology_matrix");
    const char *s = json_string_value(json_array_get(json_array_get(m, (size_t)a), (size_t)b));
    return s ? s : "";
}

/* NV<n> per pair from NVML's remote ends: NVSwitch links (the fewer of the two GPUs'), a link
 * down on one GPU, and GPU-to-GPU bridges matched by PCI address. */
static void test_nvlink_counts_on_the_doubles(void)
{
    const char *env[] = { "KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), "KBENCH_LIBNVML",
                          getenv("KBENCH_FAKE_LIBNVML"), NULL, NULL, NULL, NULL, NULL, NULL, NULL };
    json_t *v = NULL;
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", env, &v) == 0);
    CHECK_MSG(!strcmp(cell(v, 0, 1), "NV18") && !strcmp(cell(v, 7, 6), "NV18") && !strcmp(cell(v, 2, 2), "X"),
              "%s %s", cell(v, 0, 1), cell(v, 7, 6));
    json_decref(v);
    env[4] = "KBENCH_FAKE_NVML_LINK_DOWN", env[5] = "3:7,3:8";
    accept_system(dir, "hgx-h100-8", "cuda", env, &v);
    CHECK_MSG(!strcmp(cell(v, 3, 5), "NV16") && !strcmp(cell(v, 5, 3), "NV16") && !strcmp(cell(v, 0, 1), "NV18"),
              "%s %s %s", cell(v, 3, 5), cell(v, 5, 3), cell(v, 0, 1));
    json_decref(v);
    env[4] = "KBENCH_FAKE_NVML_TOPO", env[5] = "mesh", env[6] = "KBENCH_FAKE_NVML_GPUS", env[7] = "4";
    env[8] = "KBENCH_FAKE_NVML_BRIDGES", env[9] = "0-1:2,1-2:1,0-2:3";
    accept_system(dir, "generic", "cuda", env, &v);
    CHECK_MSG(!strcmp(cell(v, 0, 1), "NV2") && !strcmp(cell(v, 1, 0), "NV2") && !strcmp(cell(v, 1, 2), "NV1") &&
              !strcmp(cell(v, 2, 0), "NV3") && !strcmp(cell(v, 0, 3), "SYS") && !strcmp(cell(v, 2, 3), "NODE"),
              "%s %s %s %s %s", cell(v, 0, 1), cell(v, 1, 0), cell(v, 1, 2), cell(v, 2, 0), cell(v, 0, 3));
    json_decref(v);
}

static void test_nvlink_and_topology_on_the_doubles(void)
{
    const char *base[] = { "KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), "KBENCH_LIBNVML",
                           getenv("KBENCH_FAKE_LIBNVML"), NULL };
    json_t *v = NULL;
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", base, &v) == 0);
    CHECK(!strcmp(status(v, "nvlink"), "PASS") && !strcmp(status(v, "topology"), "PASS"));
    CHECK(!strcmp(status(v, "collectives"), "SKIP") && !strcmp(status(v, "p2p_bandwidth"), "SKIP"));
    json_decref(v);
    const char *down[] = { "KBENCH_LIBCUDA", base[1], "KBENCH_LIBNVML", base[3], "KBENCH_FAKE_NVML_LINK_DOWN", "3:7",
                           NULL };
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", down, &v) == KB_EXIT_INCORRECT);
    /* one GPU shown to CUDA (as under srun --gpus-per-task=1): the others named by NVML's index */
    CHECK_MSG(!strcmp(status(v, "nvlink"), "FAIL") && strstr(reason(v, "nvlink"), "NVML GPU 3 (00000000:28:00.0, "
              "not shown to CUDA): 17 of 18") && strstr(reason(v, "nvlink"), "link 7"), "%s", reason(v, "nvlink"));
    CHECK(!strcmp(status(v, "topology"), "PASS"));
    json_decref(v);
    char junit[600];
    snprintf(junit, sizeof junit, "%s/v.xml", dir);
    char *x = slurp(junit);
    CHECK(x && strstr(x, "<failure") && strstr(x, "NVML GPU 3 (00000000:28:00.0, not shown to CUDA): 17 of 18"));
    free(x);
    const char *pair[] = { "KBENCH_LIBCUDA", base[1], "KBENCH_LIBNVML", base[3], "KBENCH_FAKE_NVML_PAIR", "2-5:SYS",
                           "KBENCH_FAKE_CUDA_DEVICES", "8", "KBENCH_P2P_MIB", "1", NULL };
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", pair, &v) == KB_EXIT_INCORRECT);
    CHECK(!strcmp(status(v, "topology"), "FAIL") && strstr(reason(v, "topology"), "GPU 2 - GPU 5: SYS"));
    json_decref(v);
    const char *half[] = { "KBENCH_LIBCUDA", base[1], "KBENCH_LIBNVML", base[3], "KBENCH_FAKE_CUDA_DEVICES", "8",
                           "KBENCH_P2P_MIB", "1", "KBENCH_FAKE_CUDA_P2P_HALF", "2-5", NULL };
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", half, &v) == KB_EXIT_SLOW);
    CHECK(!strcmp(status(v, "p2p_bandwidth"), "FAIL") && strstr(reason(v, "p2p_bandwidth"), "GPU 2 -> GPU 5") &&
          strstr(reason(v, "p2p_bandwidth"), "195 GB/s"));
    json_t *uni = json_object_get(json_object_get(v, "system"), "p2p_uni_gbs");
    double u01 = json_real_value(json_array_get(json_array_get(uni, 0), 1));
    CHECK_MSG(json_array_size(uni) == 8 && u01 > 389 && u01 < 391, "%g", u01);   /* the double's 390 GB/s */
    json_decref(v);
    half[9] = "";   /* every pair healthy: the floor 380 x 0.85 passes */
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", half, &v) == 0);
    CHECK(!strcmp(status(v, "p2p_bandwidth"), "PASS"));
    json_decref(v);
    const char *pcie[] = { "KBENCH_LIBCUDA", base[1], "KBENCH_LIBNVML", base[3], "KBENCH_FAKE_NVML_TOPO", "pcie",
                           "KBENCH_FAKE_NVML_GPUS", "4", NULL };
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", pcie, &v) == KB_EXIT_INCORRECT);
    CHECK(!strcmp(status(v, "topology"), "FAIL") && strstr(reason(v, "topology"), "4 GPUs found, the system has 8"));
    json_decref(v);
    CHECK(accept_system(dir, "generic", "cuda", pcie, &v) == 0);
    CHECK(!strcmp(status(v, "topology"), "PASS") && !strcmp(status(v, "nvlink"), "PASS"));
    json_decref(v);
}

/* verdict v's system block's gpus_map entry i: its CUDA ordinal (-1 null), NVML index, bus id */
static int map_entry(json_t *v, int i, int *nvml, const char **bus)
{
    json_t *e = json_array_get(json_object_get(json_object_get(v, "system"), "gpus_map"), (size_t)i);
    *nvml = (int)json_integer_value(json_object_get(e, "nvml"));
    *bus = json_string_value(json_object_get(e, "bus_id"));
    *bus = *bus ? *bus : "";
    json_t *c = json_object_get(e, "cuda");
    return json_is_integer(c) ? (int)json_integer_value(c) : -1;
}

/* CUDA's order is not NVML's (CUDA_DEVICE_ORDER=FASTEST_FIRST, a reordered CUDA_VISIBLE_DEVICES):
 * NVML GPU 3 has two links down and its copies with NVML GPU 2 run at half. Every table is by
 * CUDA ordinal: the degraded GPU is CUDA device 0, the slow pair CUDA 0 -> 5, and the topology
 * cell of that pair is the NV16 of the degraded GPU. Indexing NVML's tables by NVML's numbering
 * (kbench before the bus-id mapping) named GPU 3 and put NV16 in row 3, beside pair 3 -> 5's
 * healthy copies. Then a CUDA device NVML lacks, and a pair whose copies fail. */
static void test_cuda_order_is_not_nvml_order(void)
{
    const char *env[] = { "KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), "KBENCH_LIBNVML", getenv("KBENCH_FAKE_LIBNVML"),
                          "KBENCH_FAKE_CUDA_DEVICES", "8", "KBENCH_P2P_MIB", "1",
                          "KBENCH_FAKE_CUDA_BUS_IDS", "0000:28:00.0,0000:10:00.0,0000:40:00.0,0000:18:00.0,"
                          "0000:48:00.0,0000:20:00.0,0000:38:00.0,0000:30:00.0",   /* NVML 3 0 6 1 7 2 5 4 */
                          "KBENCH_FAKE_NVML_LINK_DOWN", "3:7,3:8", "KBENCH_FAKE_CUDA_P2P_HALF", "0-5", NULL, NULL, NULL };
    json_t *v = NULL;
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", env, &v) == KB_EXIT_INCORRECT);
    CHECK_MSG(!strcmp(status(v, "nvlink"), "FAIL") && strstr(reason(v, "nvlink"), "GPU 0 (NVML 3, 00000000:28:00.0): "
              "16 of 18") && strstr(reason(v, "nvlink"), "link 7, 8"), "%s", reason(v, "nvlink"));
    CHECK_MSG(!strcmp(status(v, "p2p_bandwidth"), "FAIL") && strstr(reason(v, "p2p_bandwidth"), "GPU 0 -> GPU 5") &&
              strstr(reason(v, "p2p_bandwidth"), "GPU 0 (NVML 3, 00000000:28:00.0) -> GPU 5 (NVML 2, 00000000:20:00.0)"),
              "%s", reason(v, "p2p_bandwidth"));
    CHECK_MSG(!strcmp(cell(v, 0, 5), "NV16") && !strcmp(cell(v, 5, 0), "NV16") && !strcmp(cell(v, 3, 5), "NV18") &&
              !strcmp(cell(v, 1, 2), "NV18"), "%s %s %s", cell(v, 0, 5), cell(v, 3, 5), cell(v, 1, 2));
    int nvml;
    const char *bus;
    CHECK(map_entry(v, 0, &nvml, &bus) == 0 && nvml == 3 && !strcmp(bus, "00000000:28:00.0"));
    CHECK(map_entry(v, 7, &nvml, &bus) == 7 && nvml == 4 && !strcmp(bus, "00000000:30:00.0"));
    json_decref(v);
    /* NVML knows the GPUs by their ids (KBENCH_FAKE_NVML_BUS_IDS); CUDA device 1's is not one */
    env[8] = "KBENCH_FAKE_NVML_BUS_IDS";
    env[9] = "0000:10:00.0,0000:18:00.0,0000:20:00.0,0000:28:00.0,0000:30:00.0,0000:38:00.0,0000:40:00.0,0000:48:00.0";
    env[14] = "KBENCH_FAKE_CUDA_BUS_IDS";
    env[15] = "0000:28:00.0,0000:99:00.0";
    env[5] = "2";
    /* a mapping that fails says nothing about the hardware: topology and NVLink SKIP with the reason */
    int rc = accept_system(dir, "hgx-h100-8", "cuda", env, &v);
    CHECK_MSG(rc != KB_EXIT_INCORRECT && rc != KB_EXIT_SLOW, "exit %d", rc);
    CHECK_MSG(!strcmp(status(v, "topology"), "SKIP") && strstr(reason(v, "topology"), "CUDA device 1 (PCI bus id "
              "0000:99:00.0) is not in NVML") && strstr(reason(v, "topology"), "NVML_ERROR_NOT_FOUND"), "%s",
              reason(v, "topology"));
    CHECK_MSG(!strcmp(status(v, "nvlink"), "SKIP") && strstr(reason(v, "nvlink"), "0000:99:00.0"), "%s",
              reason(v, "nvlink"));
    CHECK_MSG(!strcmp(status(v, "p2p_bandwidth"), "PASS"), "%s", reason(v, "p2p_bandwidth"));
    json_decref(v);
    env[15] = "0000:28:00.0,0000:28:00.0";   /* two CUDA devices on one GPU (MIG instances) */
    rc = accept_system(dir, "hgx-h100-8", "cuda", env, &v);
    CHECK_MSG(rc != KB_EXIT_INCORRECT && !strcmp(status(v, "topology"), "SKIP") && strstr(reason(v, "topology"),
              "are one GPU") && !strcmp(status(v, "nvlink"), "SKIP"), "exit %d: %s", rc, reason(v, "topology"));
    json_decref(v);
    /* the copies between CUDA devices 2 and 6 fail: that pair FAILs with the driver's error, the rest measured */
    const char *fail[] = { "KBENCH_LIBCUDA", env[1], "KBENCH_LIBNVML", env[3], "KBENCH_FAKE_CUDA_DEVICES", "8",
                           "KBENCH_P2P_MIB", "1", "KBENCH_FAKE_CUDA_P2P_FAIL", "2-6", NULL };
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", fail, &v) != 0);
    CHECK_MSG(!strcmp(status(v, "p2p_bandwidth"), "FAIL") && strstr(reason(v, "p2p_bandwidth"), "copies failed on 2 "
              "pairs: GPU 2 -> GPU 6 (CUDA_ERROR_UNKNOWN), GPU 6 -> GPU 2 (CUDA_ERROR_UNKNOWN)"), "%s",
              reason(v, "p2p_bandwidth"));
    json_t *sys = json_object_get(v, "system"), *uni = json_object_get(sys, "p2p_uni_gbs");
    CHECK(json_is_null(json_array_get(json_array_get(uni, 2), 6)));
    double u70 = json_real_value(json_array_get(json_array_get(uni, 7), 0));
    CHECK_MSG(u70 > 389 && u70 < 391, "%g", u70);   /* the last row, after the failed pair, measured */
    CHECK(json_array_size(json_object_get(sys, "p2p_failed")) == 2);
    CHECK(json_is_true(json_object_get(sys, "p2p_bidir_concurrent")));
    CHECK(json_array_size(json_object_get(sys, "p2p_bidir_sequential")) == 0);
    json_decref(v);
    /* device 5 has no stream memory operations: no pair gated, the device named, no pair failed; CUDA
     * device 6 cannot reach 1: pair 1 -> 6 measured with its directions one after the other (not gated) */
    fail[8] = "KBENCH_FAKE_CUDA_NO_MEMOPS_ON";
    fail[9] = "5";
    CHECK(accept_system(dir, "hgx-h100-8", "cuda", fail, &v) == 0);
    sys = json_object_get(v, "system");
    const char *why = json_string_value(json_object_get(sys, "p2p_bidir_why"));
    CHECK_MSG(!strcmp(status(v, "p2p_bandwidth"), "PASS") && json_is_false(json_object_get(sys, "p2p_bidir_concurrent"))
              && why && strstr(why, "GPU 5: ") && json_array_size(json_object_get(sys, "p2p_failed")) == 0, "%s / %s",
              reason(v, "p2p_bandwidth"), why ? why : "(no why)");
    json_decref(v);
    fail[8] = "KBENCH_FAKE_CUDA_NO_PEER_FROM";
    fail[9] = "6-1";
    accept_system(dir, "hgx-h100-8", "cuda", fail, &v);   /* an NVSwitch node: no peer access one way FAILs */
    CHECK_MSG(!strcmp(status(v, "p2p_bandwidth"), "FAIL") && strstr(reason(v, "p2p_bandwidth"), "no peer access "
              "between GPU 6 and GPU 1"), "%s", reason(v, "p2p_bandwidth"));
    sys = json_object_get(v, "system");
    json_t *seq = json_array_get(json_object_get(sys, "p2p_bidir_sequential"), 0);
    CHECK_MSG(json_array_size(json_object_get(sys, "p2p_bidir_sequential")) == 1 &&
              json_integer_value(json_object_get(seq, "from")) == 1 &&
              json_integer_value(json_object_get(seq, "to")) == 6 &&
              json_is_true(json_object_get(sys, "p2p_bidir_concurrent")) &&
              json_array_size(json_object_get(sys, "p2p_failed")) == 0, "%s", reason(v, "p2p_bandwidth"));
    json_decref(v);
}

/* The NCCL sweep on the driver and NCCL doubles (one rank: the double's one-rank work), a system
 * spec with a small sweep; an asynchronous NCCL error mid-sweep is SKIP with NCCL's words. */
static void test_nccl_sweep_on_the_doubles(void)
{
    char spec[600];
    snprintf(spec, sizeof spec, "%s/small.yaml", dir);
    FILE *f = fopen(spec, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs("system: small\ndescription: a test node\ngpus: 0\ntopology: {expect: any, source: test}\n"
          "nvlink: {unknown: test}\nsweep: {min: 1K, max: 1M, factor: 8}\nthresholds:\n"
          "  allreduce_busbw: {reference: 100, fraction: 0.5, unit: GB/s, source: test}\n"
          "  p2p_bandwidth: {unknown: test}\n", f);
    fclose(f);
    const char *env[] = { "KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), "KBENCH_LIBNVML", getenv("KBENCH_FAKE_LIBNVML"),
                          "KBENCH_LIBNCCL", getenv("KBENCH_FAKE_LIBNCCL"), NULL, NULL, NULL };
    json_t *v = NULL;
    CHECK(accept_system(dir, spec, "cuda", env, &v) == 0);
    CHECK_MSG(!strcmp(status(v, "collectives"), "PASS") && strstr(reason(v, "collectives"), "64 collective results"),
              "%s", reason(v, "collectives"));
    CHECK(!strcmp(status(v, "allreduce_busbw"), "SKIP") && strstr(reason(v, "allreduce_busbw"), "one rank"));
    CHECK(!strcmp(status(v, "coll_busy"), "SKIP") && strstr(reason(v, "coll_busy"), "NCCL does not say"));
    json_t *sys = json_object_get(v, "system");
    CHECK(json_array_size(json_object_get(sys, "all_reduce")) == 4);   /* 1K, 8K, 64K, 512K */
    const char *records = json_string_value(json_object_get(sys, "coll_records"));
    char *text = records ? slurp(records) : NULL;
    int lines = 0, graphs = 0;
    for (char *p = text; p && (p = strstr(p, "\"clock\":\"gpu\"")); p++)
        lines++;
    for (char *p = text; p && (p = strstr(p, "\"wrong_all\":0,")); p++)   /* verified: graph and eager */
        graphs += strstr(p, "\"launch\":\"graph\"") && strstr(p, "\"launch\":\"graph\"") < strchr(p, '\n');
    CHECK_MSG(lines == 64 && graphs == 32, "%d records on the gpu clock, %d graphs verified", lines, graphs);
    free(text);
    json_decref(v);
    env[6] = "KBENCH_FAKE_NCCL_ASYNC";
    env[7] = "5";
    /* the communicator was up: an asynchronous NCCL error fails the sweep, it does not skip it */
    CHECK(accept_system(dir, spec, "cuda", env, &v) == KB_EXIT_INCORRECT);
    CHECK_MSG(!strcmp(status(v, "collectives"), "FAIL") && strstr(reason(v, "collectives"), "sweep failed after") &&
              strstr(reason(v, "collectives"), "NCCL"), "%s", reason(v, "collectives"));
    json_decref(v);
}

/* NVLink and topology pass, NCCL breaks mid-sweep: the node is not accepted. */
static void test_nccl_error_is_not_a_pass(void)
{
    const char *env[] = { "KBENCH_LIBCUDA", getenv("KBENCH_FAKE_LIBCUDA"), "KBENCH_LIBNVML", getenv("KBENCH_FAKE_LIBNVML"),
                          "KBENCH_LIBNCCL", getenv("KBENCH_FAKE_LIBNCCL"), "KBENCH_FAKE_NCCL_ASYNC", "5", NULL };
    json_t *v = NULL;
    int rc = accept_system(dir, "hgx-h100-8", "cuda", env, &v);
    CHECK(!strcmp(status(v, "nvlink"), "PASS") && !strcmp(status(v, "topology"), "PASS"));
    CHECK_MSG(!strcmp(status(v, "collectives"), "FAIL"), "%s: %s", status(v, "collectives"), reason(v, "collectives"));
    CHECK_MSG(rc != 0, "exit %d", rc);
    json_decref(v);
}

int main(void)
{
    if (!mkdtemp(dir))
        return 1;
    setenv("KBENCH_CACHE_DIR", dir, 1);
    RUN(test_emu_generic_one_rank);
    RUN(test_unknown_system);
    RUN(test_nvlink_and_topology_on_the_doubles);
    RUN(test_nvlink_counts_on_the_doubles);
    RUN(test_cuda_order_is_not_nvml_order);
    RUN(test_nccl_error_is_not_a_pass);
    RUN(test_nccl_sweep_on_the_doubles);
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
