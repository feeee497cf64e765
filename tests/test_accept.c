/* test_accept.c - acceptance specs (the shipped ones parse and match their SKUs; bad
 * specs are refused with file:line:col), the verdict logic on synthetic records (pass,
 * slow, wrong, throttled, emulator, generic peaks), exit codes, rank identity and
 * device choice, the verdict JSON and JUnit. */
#include "accept/identity.h"
#include "accept/spec.h"
#include "accept/verdict.h"
#include "accept/verdict_io.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SPECS "data/acceptance"

/* ---- specs ---- */

static void test_shipped_specs_match_their_skus(void)
{
    struct { const char *name; int sm, sms; unsigned pci; const char *spec; } gpus[] = {
        { "NVIDIA H100 80GB HBM3", 90, 132, 0, "h100-sxm" },
        { "NVIDIA H100 PCIe", 90, 114, 0, "h100-pcie" },
        { "NVIDIA H200", 90, 132, 0, "h200" },
        { "NVIDIA A100-SXM4-80GB", 80, 108, 0, "a100-sxm" },
        { "NVIDIA A100-PCIE-40GB", 80, 108, 0, "a100-pcie" },
        { "NVIDIA L40S", 89, 142, 0, "l40s" },
        { "NVIDIA L4", 89, 58, 0, "l4" },
        { "some board", 90, 1, 0x2330, "h100-sxm" },          /* by PCI device id */
        { "NVIDIA H100 80GB HBM3", 90, 132, 0x2331, "h100-pcie" }, /* the id wins over the name */
        { "NVIDIA H100 80GB HBM3", 90, 66, 0, "generic" },     /* SM count differs: not an H100 SXM */
        { "NVIDIA L4", 90, 58, 0, "generic" },                 /* compute capability differs */
        { "NVIDIA GeForce RTX 4090", 89, 128, 0, "generic" },
        /* Blackwell (issue 23): by PCI device id where DCGM names one, else by name */
        { "NVIDIA B200", 100, 148, 0x2901, "b200" },
        { "NVIDIA B200", 100, 148, 0, "b200" },
        { "NVIDIA B300 SXM6 AC", 103, 148, 0x3182, "b300" },
        { "NVIDIA B300 SXM6 AC", 103, 160, 0x31c2, "generic" },  /* GB300's id: not a B300 spec */
        { "NVIDIA GB200", 100, 152, 0, "gb200" },
        { "NVIDIA GB200", 100, 152, 0x2941, "gb200" },           /* no id in the spec: the name decides */
        { "NVIDIA B200", 100, 152, 0x2941, "generic" },          /* an unknown id, and not a GB200 */
        { "NVIDIA GeForce RTX 5090", 120, 170, 0x2b85, "rtx5090" },
        { "NVIDIA RTX PRO 6000 Blackwell Server Edition", 120, 188, 0x2bb5, "rtx-pro-6000" },
        { "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", 120, 188, 0x2bb4, "rtx-pro-6000" },
        { "NVIDIA GeForce RTX 5090", 100, 170, 0, "generic" },
    };
    kb_sb err;
    kb_sb_init(&err);
    for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
        kb_acc_gpu g = { gpus[i].name, gpus[i].sm, gpus[i].sms, gpus[i].pci };
        kb_acc_spec s;
        const char *how = NULL;
        CHECK_MSG(kb_acc_spec_find(SPECS, &g, &s, &how, &err) == KB_OK, "%s", err.s);
        CHECK_MSG(!strcmp(s.name, gpus[i].spec), "%s -> %s, expected %s", gpus[i].name, s.name, gpus[i].spec);
        CHECK(how && *how);
        /* every threshold cites its source; floors have a reference and a fraction */
        for (int t = 0; t < KB_ACC_TEST_COUNT; t++)
            if (s.t[t].have)
                CHECK_MSG(strlen(s.t[t].source) > 10 && (s.t[t].limit > 0 || s.t[t].fraction > 0),
                          "%s %s", s.name, kb_acc_test_name((kb_acc_test)t));
    }
    kb_sb_free(&err);
}

/* The memory-bandwidth floors follow DCGM's golden values, 0.75 x what dcgmproftester
 * measured (nvvs/diag-skus.yaml.in); H200 (id 2335): "shows 3110. Multiply by .75 to get 2333". */
static void test_bandwidth_floors_follow_dcgm(void)
{
    struct { const char *spec; double reference, floor; } want[] = {
        { "h100-sxm", 2540, 1905 }, { "h200", 3110, 2332.5 }, { "a100-sxm", 1564, 1173 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s.yaml", SPECS, want[i].spec);
        kb_acc_spec s;
        kb_sb err;
        kb_sb_init(&err);
        CHECK_MSG(kb_acc_spec_load(path, &s, &err) == KB_OK, "%s", err.s);
        kb_sb_free(&err);
        const kb_acc_threshold *th = &s.t[KB_ACC_MEM_BW];
        CHECK_MSG(th->have && th->reference == want[i].reference && th->fraction == 0.75 &&
                  fabs(th->reference * th->fraction - want[i].floor) < 0.01 && strstr(th->source, "DCGM"),
                  "%s: %g x %g = %g GB/s (%s)", want[i].spec, th->reference, th->fraction,
                  th->reference * th->fraction, th->source);
    }
}

static void bad_spec(const char *text, const char *where, const char *what)
{
    kb_acc_spec s;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_acc_spec_parse(text, "bad.yaml", &s, &err) == KB_ERR_INPUT);
    CHECK_MSG(strstr(err.s, where) && strstr(err.s, what), "got '%s', want '%s' and '%s'", err.s, where, what);
    kb_sb_free(&err);
}

static void test_bad_specs_name_line_and_column(void)
{
    const char *head = "spec: x\nsku: y\n";
    char t[512];
    bad_spec("spec: [1\n", "bad.yaml:2:1", "YAML");
    bad_spec("sku: y\nthresholds: {}\n", "bad.yaml:1:1", "missing required key 'spec'");
    snprintf(t, sizeof t, "%sthresholds:\n  memory_bandwidth: {reference: 100, fraction: 2, source: s}\n", head);
    bad_spec(t, "bad.yaml:4:48", "fraction 2 outside");
    snprintf(t, sizeof t, "%sthresholds:\n  gemm_fp64: {reference: 1, fraction: 0.5, source: s}\n", head);
    bad_spec(t, "bad.yaml:4:3", "unknown threshold 'gemm_fp64'");
    snprintf(t, sizeof t, "%sthresholds:\n  gemm_fp16: {reference: 1, fraction: 0.5}\n", head);
    bad_spec(t, "bad.yaml:4:14", "needs a 'source'");
    snprintf(t, sizeof t, "%sthresholds:\n  gemm_fp16: {reference: 1, fraction: 0.5, unit: GB/s, source: s}\n", head);
    bad_spec(t, "bad.yaml:4:50", "TFLOPS, not 'GB/s'");
    snprintf(t, sizeof t, "%smatch: {name: [x], sm: 75}\nthresholds: {}\n", head);
    bad_spec(t, "bad.yaml:3:24", "no architecture of kbench's runs on compute capability 7.5");
    snprintf(t, sizeof t, "%smatch: {pci_device_id: [0x23]}\nthresholds: {}\n", head);
    bad_spec(t, "bad.yaml:3:25", "four hex digits");
    snprintf(t, sizeof t, "%smatch: {name: h100}\nthresholds: {}\n", head);
    bad_spec(t, "bad.yaml:3:8", "needs 'sm'");
    snprintf(t, sizeof t, "%sthresholds:\n  launch_latency: {limit: -3, source: s}\n", head);
    bad_spec(t, "bad.yaml:4:27", "limit must be positive");
    snprintf(t, sizeof t, "%scolour: red\nthresholds: {}\n", head);
    bad_spec(t, "bad.yaml:3:1", "unknown key 'colour'");
}

static void test_find_reports_a_bad_file(void)
{
    char dir[] = "/tmp/kb_test_accept_XXXXXX", path[256];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/a.yaml", dir);
    FILE *f = fopen(path, "w");
    fputs("spec: a\nsku: b\nthresholds:\n  gemm_fp16: {reference: x, fraction: 0.5, source: s}\n", f);
    fclose(f);
    kb_acc_gpu g = { "NVIDIA L4", 89, 58, 0 };
    kb_acc_spec s;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_acc_spec_find(dir, &g, &s, NULL, &err) == KB_ERR_INPUT);
    CHECK_MSG(strstr(err.s, "a.yaml:4:"), "%s", err.s);
    unlink(path);
    CHECK(kb_acc_spec_find(dir, &g, &s, NULL, &err) == KB_ERR_SETUP);   /* no spec, no generic */
    CHECK_MSG(strstr(err.s, "no generic spec"), "%s", err.s);
    rmdir(dir);
    kb_sb_free(&err);
}

/* ---- verdicts on synthetic records ---- */

/* A record as an accept run writes it (the fields the verdict reads). */
static json_t *rec(const char *fam, const char *var, const char *dt, const char *status, const char *clock,
                   double tflops, double gbps, double eager_us)
{
    char id[128];
    snprintf(id, sizeof id, "%s/%s/%s", fam, var, dt);
    json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:{s:s}, s:{s:s, s:f, s:f, s:f}}", "case_id", id,
                          "family",
                          fam, "variant", var, "dtype", dt, "status", status, "reason",
                          strcmp(status, "skipped") ? "" : "cuBLASLt needs a GPU", "launch", "eager", "timing",
                          "clock", clock, "derived", "clock", clock, "tflops", tflops, "gbps", gbps, "ai", 1.0);
    json_object_set_new(r, "launch_overhead", json_pack("{s:f}", "eager_us", eager_us));
    return r;
}

static json_t *gpu_run(double copy_gbps, double fp16_tflops, const char *gemm_status, const char *clock)
{
    json_t *a = json_array();
    json_array_append_new(a, rec("ceiling", "copy", "fp32", "ok", clock, 0, copy_gbps, 10));
    json_array_append_new(a, rec("ceiling", "launch", "fp32", "ok", clock, 0, 0.01, 4.5));
    json_array_append_new(a, rec("gemm", "mma", "fp16", gemm_status, clock, fp16_tflops * 0.8, 0, 10));
    json_array_append_new(a, rec("gemm", "cublaslt", "fp16", "ok", clock, fp16_tflops, 0, 10));
    json_array_append_new(a, rec("gemm", "cublaslt", "bf16", "skipped", clock, 0, 0, 0));
    return a;
}

static kb_acc_spec h100(void)
{
    kb_acc_gpu g = { "NVIDIA H100 80GB HBM3", 90, 132, 0 };
    kb_acc_spec s;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_acc_spec_find(SPECS, &g, &s, NULL, &err) == KB_OK);
    kb_sb_free(&err);
    return s;
}

static void test_verdict_pass_slow_wrong(void)
{
    kb_acc_spec s = h100();
    kb_acc_verdict v;
    /* H100 SXM: bandwidth floor 0.75 x 2540 = 1905 GB/s, fp16 floor 0.5 x 989.4 = 494.7 */
    json_t *a = gpu_run(2600, 700, "ok", "gpu");
    kb_acc_evaluate(&s, NULL, a, &v);
    CHECK(v.r[KB_ACC_CORRECTNESS].status == KB_ACC_PASS);
    CHECK(v.r[KB_ACC_MEM_BW].status == KB_ACC_PASS && fabs(v.r[KB_ACC_MEM_BW].threshold - 1905) < 1e-9);
    CHECK(v.r[KB_ACC_GEMM_FP16].status == KB_ACC_PASS && v.r[KB_ACC_GEMM_FP16].value == 700);
    CHECK(strstr(v.r[KB_ACC_GEMM_FP16].detail, "cublaslt"));          /* best of kbench and cuBLASLt */
    CHECK(v.r[KB_ACC_GEMM_BF16].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_GEMM_BF16].reason, "cuBLASLt needs"));
    CHECK(v.r[KB_ACC_LAUNCH].status == KB_ACC_PASS && v.r[KB_ACC_LAUNCH].value == 4.5);
    CHECK(v.r[KB_ACC_ECC].status == KB_ACC_SKIP && v.gpu_thresholds && v.worst == KB_ACC_PASS);
    json_decref(a);

    a = gpu_run(1800, 700, "ok", "gpu");                               /* slow memory */
    kb_acc_evaluate(&s, NULL, a, &v);
    CHECK(v.r[KB_ACC_MEM_BW].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_MEM_BW].reason, "misses"));
    kb_acc_status st[KB_ACC_TEST_COUNT];
    kb_acc_test tt[KB_ACC_TEST_COUNT];
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++)
        st[t] = v.r[t].status, tt[t] = (kb_acc_test)t;
    CHECK(v.worst == KB_ACC_FAIL && kb_acc_exit_code(st, tt, KB_ACC_TEST_COUNT) == KB_EXIT_SLOW);
    json_decref(a);

    a = gpu_run(2600, 700, "wrong", "gpu");                            /* a wrong GEMM */
    kb_acc_evaluate(&s, NULL, a, &v);
    CHECK(v.r[KB_ACC_CORRECTNESS].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_CORRECTNESS].reason, "gemm/mma/fp16"));
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++)
        st[t] = v.r[t].status;
    CHECK(kb_acc_exit_code(st, tt, KB_ACC_TEST_COUNT) == KB_EXIT_INCORRECT);
    json_decref(a);
}

static void test_verdict_emulator_and_generic(void)
{
    kb_acc_spec s = h100();
    kb_acc_verdict v;
    json_t *a = gpu_run(3, 0.001, "ok", "cpu");
    kb_acc_evaluate(&s, NULL, a, &v);
    CHECK(v.r[KB_ACC_CORRECTNESS].status == KB_ACC_PASS);
    CHECK(v.r[KB_ACC_MEM_BW].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_MEM_BW].reason, "emulator: CPU timings"));
    CHECK(v.r[KB_ACC_MEM_BW].have_value && !v.r[KB_ACC_MEM_BW].have_threshold);
    CHECK(!v.gpu_thresholds && v.worst == KB_ACC_PASS);
    json_decref(a);

    /* generic: the reference is the device's peak; unknown peak -> SKIP, never PASS */
    kb_acc_gpu g = { "NVIDIA Unknown", 90, 10, 0 };
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_acc_spec_find(SPECS, &g, &s, NULL, &err) == KB_OK && s.generic);
    kb_sb_free(&err);
    kb_peaks p;
    memset(&p, 0, sizeof p);
    snprintf(p.device, sizeof p.device, "NVIDIA Unknown");
    p.clock_gbps = 1000;
    p.clock_tflops[KB_DT_FP16] = 100;
    a = gpu_run(600, 49, "ok", "gpu");
    kb_acc_evaluate(&s, &p, a, &v);
    CHECK(v.r[KB_ACC_MEM_BW].status == KB_ACC_PASS && fabs(v.r[KB_ACC_MEM_BW].threshold - 550) < 1e-9);
    CHECK(v.r[KB_ACC_GEMM_FP16].status == KB_ACC_FAIL && fabs(v.r[KB_ACC_GEMM_FP16].threshold - 50) < 1e-9);
    CHECK(strstr(v.r[KB_ACC_MEM_BW].source, "clock"));
    kb_acc_evaluate(&s, NULL, a, &v);                                  /* no peaks at all */
    CHECK(v.r[KB_ACC_MEM_BW].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_MEM_BW].reason, "no peak"));
    json_decref(a);
}

static void test_verdict_clocks_and_nothing_ran(void)
{
    kb_acc_spec s = h100();
    kb_acc_verdict v;
    json_t *a = gpu_run(2600, 700, "ok", "gpu");
    json_t *tel = json_pack("{s:b, s:i, s:i, s:f, s:b}", "available", 1, "sm_clock_mhz", 1100, "sm_clock_max_mhz",
                            1980, "power_w", 690.0, "throttled", 1);
    json_object_set_new(json_array_get(a, 3), "telemetry", tel);
    kb_acc_evaluate(&s, NULL, a, &v);
    CHECK(v.r[KB_ACC_CLOCKS].status == KB_ACC_WARN && strstr(v.r[KB_ACC_CLOCKS].reason, "1 of 1"));
    CHECK(v.worst == KB_ACC_WARN);
    json_decref(a);

    /* a GEMM whose samples were kept throttled at the timeout (timing.throttled) WARNs too,
     * whatever the one telemetry reading after it said */
    a = gpu_run(2600, 700, "ok", "gpu");
    tel = json_pack("{s:b, s:i, s:i, s:f, s:b}", "available", 1, "sm_clock_mhz", 1980, "sm_clock_max_mhz", 1980,
                    "power_w", 700.0, "throttled", 0);
    json_object_set_new(json_array_get(a, 3), "telemetry", tel);
    json_object_set_new(json_object_get(json_array_get(a, 3), "timing"), "throttled", json_true());
    kb_acc_evaluate(&s, NULL, a, &v);
    CHECK_MSG(v.r[KB_ACC_CLOCKS].status == KB_ACC_WARN && strstr(v.r[KB_ACC_CLOCKS].reason, "throttled"), "%s: %s",
              kb_acc_status_name(v.r[KB_ACC_CLOCKS].status), v.r[KB_ACC_CLOCKS].reason);
    json_decref(a);

    a = json_array();
    kb_acc_evaluate(&s, NULL, a, &v);
    kb_acc_status st[KB_ACC_TEST_COUNT];
    kb_acc_test tt[KB_ACC_TEST_COUNT];
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++) {
        CHECK(v.r[t].status == KB_ACC_SKIP);
        st[t] = v.r[t].status, tt[t] = (kb_acc_test)t;
    }
    /* nothing ran: the verdict is NOT CHECKED (exit 3), never a pass */
    CHECK(v.worst == KB_ACC_NOT_CHECKED && strstr(v.not_checked, "every test was SKIP") &&
          kb_acc_exit_code(st, tt, KB_ACC_TEST_COUNT) == KB_EXIT_SETUP);
    CHECK(!strcmp(kb_acc_status_name(KB_ACC_NOT_CHECKED), "NOT CHECKED") &&
          kb_acc_status_parse("NOT CHECKED") == KB_ACC_NOT_CHECKED);
    json_decref(a);
}

/* ---- identity ---- */

static char *table_get(void *user, const char *name)
{
    for (char **kv = user; *kv; kv += 2)
        if (!strcmp(kv[0], name))
            return kv[1];
    return NULL;
}

static void test_identity_and_device_choice(void)
{
    char err[256];
    kb_acc_identity id;
    char *slurm[] = { "SLURM_PROCID", "5", "SLURM_LOCALID", "1", "SLURM_NODEID", "2", "SLURM_NTASKS", "8",
                      "SLURM_JOB_ID", "77", "SLURM_STEP_ID", "0", "SLURMD_NODENAME", "gpu-n2",
                      "OMPI_COMM_WORLD_RANK", "9", NULL };
    CHECK(kb_acc_identity_read(table_get, slurm, "login", &id, err, sizeof err) == 0);
    CHECK(!strcmp(id.launcher, "slurm") && id.rank == 5 && id.local_rank == 1 && id.node_id == 2);
    CHECK(id.world_size == 8 && !strcmp(id.job_id, "77") && !strcmp(id.host, "gpu-n2"));
    char *ompi[] = { "OMPI_COMM_WORLD_RANK", "3", "OMPI_COMM_WORLD_LOCAL_RANK", "3", "SLURM_PROCID", "", NULL };
    CHECK(kb_acc_identity_read(table_get, ompi, "h", &id, err, sizeof err) == 0);
    CHECK(!strcmp(id.launcher, "openmpi") && id.rank == 3 && id.local_rank == 3 && id.node_id == -1);
    char *k8s[] = { "JOB_COMPLETION_INDEX", "12", NULL };
    CHECK(kb_acc_identity_read(table_get, k8s, "pod-12", &id, err, sizeof err) == 0);
    CHECK(!strcmp(id.launcher, "k8s") && id.rank == 12 && id.local_rank == 0 && !strcmp(id.host, "pod-12"));
    char *none[] = { NULL };
    CHECK(kb_acc_identity_read(table_get, none, "box", &id, err, sizeof err) == 0);
    CHECK(!strcmp(id.launcher, "none") && id.rank == 0 && id.world_size == 1);
    char key[128];
    kb_acc_rank_key(&id, 42, key, sizeof key);
    CHECK(!strcmp(key, "box-42"));
    CHECK(kb_acc_identity_read(table_get, slurm, "login", &id, err, sizeof err) == 0);
    kb_acc_rank_key(&id, 42, key, sizeof key);
    CHECK(!strcmp(key, "r00005-gpu-n2"));

    CHECK(kb_acc_pick_device(3, "0,1", 1) == 3);          /* --device wins */
    CHECK(kb_acc_pick_device(-1, "GPU-abc", 5) == 0);     /* srun --gpus-per-task=1 */
    CHECK(kb_acc_pick_device(-1, "0,1,2,3", 6) == 2);     /* local rank modulo count */
    CHECK(kb_acc_pick_device(-1, NULL, 3) == 3);
}

/* ---- outputs ---- */

static void test_verdict_json_and_junit(void)
{
    kb_acc_spec s = h100();
    kb_acc_verdict v;
    json_t *a = gpu_run(1800, 700, "ok", "gpu");
    kb_acc_evaluate(&s, NULL, a, &v);
    json_decref(a);
    kb_acc_identity id;
    char *none[] = { NULL }, why[256];
    CHECK(kb_acc_identity_read(table_get, none, "box", &id, why, sizeof why) == 0);
    kb_device_info dev;
    memset(&dev, 0, sizeof dev);
    snprintf(dev.name, sizeof dev.name, "NVIDIA H100 80GB HBM3");
    snprintf(dev.uuid, sizeof dev.uuid, "GPU-1234");
    dev.caps = KB_CAP_GPU_TIMER;
    kb_acc_context c = { &id, &dev, "cuda", &s, "name", "r.jsonl", "2026-01-01T00:00:00Z", NULL, 0, NULL };
    json_t *o = kb_acc_verdict_json(&c, &v);
    CHECK(o && !strcmp(json_string_value(json_object_get(o, "verdict")), "FAIL"));
    CHECK(json_integer_value(json_object_get(o, "exit_code")) == KB_EXIT_SLOW);
    json_t *bw = json_array_get(json_object_get(o, "tests"), KB_ACC_MEM_BW);
    CHECK(!strcmp(json_string_value(json_object_get(bw, "comparison")), ">="));
    CHECK(json_real_value(json_object_get(bw, "reference")) == 2540);
    CHECK(strstr(json_string_value(json_object_get(bw, "source")), "DCGM"));

    char path[] = "/tmp/kb_test_accept_v_XXXXXX";
    int fd = mkstemp(path);
    close(fd);
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_acc_write_json(path, o, &err) == KB_OK);
    json_t *back = json_load_file(path, 0, NULL);
    CHECK(back && json_equal(back, o));
    json_decref(back);
    json_t *arr = json_pack("[O]", o);
    CHECK(kb_acc_junit_file(path, arr, "t", &err) == KB_OK);
    char *text = NULL;
    FILE *f = fopen(path, "r");
    text = calloc(1, 1 << 16);
    CHECK(f && fread(text, 1, (1 << 16) - 1, f) > 0);
    if (f)
        fclose(f);
    CHECK(strstr(text, "<testsuite name=\"kbench.accept.box.GPU-1234\" tests=\"13\" failures=\"1\""));
    CHECK(strstr(text, "<failure type=\"FAIL\" message=\"1800 GB/s misses the floor 1905 GB/s\""));
    free(text);
    unlink(path);
    json_decref(arr);
    json_decref(o);
    kb_sb_free(&err);
}

int main(void)
{
    RUN(test_shipped_specs_match_their_skus);
    RUN(test_bandwidth_floors_follow_dcgm);
    RUN(test_bad_specs_name_line_and_column);
    RUN(test_find_reports_a_bad_file);
    RUN(test_verdict_pass_slow_wrong);
    RUN(test_verdict_emulator_and_generic);
    RUN(test_verdict_clocks_and_nothing_ran);
    RUN(test_identity_and_device_choice);
    RUN(test_verdict_json_and_junit);
    TEST_MAIN_END();
}
