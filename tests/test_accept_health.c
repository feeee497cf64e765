/* test_accept_health.c - the NVML health tests of `kbench accept` (accept/health.h) on
 * synthetic readings: healthy -> PASS; uncorrected ECC errors (volatile or aggregate),
 * a pending page retirement, a pending or failed row remapping -> FAIL and exit 6; ECC
 * disabled and a PCIe link below its maximum -> WARN (exit 0) saying current/max; values
 * NVML could not give -> SKIP with NVML's words, never PASS; the verdict's worst status
 * and the health object of the verdict JSON. */
#include "accept/health.h"
#include "accept/verdict_io.h"
#include "check.h"

#include <stdio.h>
#include <string.h>

/* A healthy H100 on a gen 5 x16 link, every value read. */
static kb_health healthy(void)
{
    kb_health h;
    memset(&h, 0, sizeof h);
    h.available = 1;
    for (int i = 0; i < KB_H_COUNT; i++)
        h.f[i].read = 1;
    h.f[KB_H_ECC_MODE].v = 1;
    h.f[KB_H_PCIE_GEN].v = h.f[KB_H_PCIE_GEN_MAX].v = 5;
    h.f[KB_H_PCIE_WIDTH].v = h.f[KB_H_PCIE_WIDTH_MAX].v = 16;
    snprintf(h.serial, sizeof h.serial, "1650123456789");
    snprintf(h.pci_bus_id, sizeof h.pci_bus_id, "00000000:3B:00.0");
    return h;
}

static void unread(kb_health *h, kb_health_field f, const char *why)
{
    h->f[f].read = 0;
    h->f[f].v = 0;
    snprintf(h->f[f].why, sizeof h->f[f].why, "%s", why);
}

/* The verdict of a run where only the health tests ran (everything else SKIP). */
static kb_acc_verdict judged(const kb_health *h)
{
    kb_acc_verdict v;
    memset(&v, 0, sizeof v);
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++)
        v.r[t].status = KB_ACC_SKIP;
    kb_acc_verdict_health(h, &v);
    return v;
}

static int exit_code(const kb_acc_verdict *v)
{
    kb_acc_status st[KB_ACC_TEST_COUNT];
    kb_acc_test which[KB_ACC_TEST_COUNT];
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++) {
        st[t] = v->r[t].status;
        which[t] = (kb_acc_test)t;
    }
    return kb_acc_exit_code(st, which, KB_ACC_TEST_COUNT);
}

static void test_healthy_passes(void)
{
    kb_health h = healthy();
    kb_acc_verdict v = judged(&h);
    for (int t = KB_ACC_ECC; t <= KB_ACC_PCIE; t++)
        CHECK_MSG(v.r[t].status == KB_ACC_PASS, "%s: %s", kb_acc_test_name((kb_acc_test)t), v.r[t].reason);
    CHECK(v.worst == KB_ACC_PASS && exit_code(&v) == KB_EXIT_OK);
    CHECK(strstr(v.r[KB_ACC_PCIE].reason, "gen 5 x16 at max gen 5 x16") != NULL);
}

static void test_ecc(void)
{
    kb_health h = healthy();
    h.f[KB_H_ECC_UNC_VOLATILE].v = 2;
    kb_acc_verdict v = judged(&h);
    CHECK(v.r[KB_ACC_ECC].status == KB_ACC_FAIL && v.r[KB_ACC_ECC].value == 2);
    CHECK_MSG(strstr(v.r[KB_ACC_ECC].reason, "volatile 2, aggregate 0"), "%s", v.r[KB_ACC_ECC].reason);
    CHECK(v.worst == KB_ACC_FAIL && exit_code(&v) == KB_EXIT_INCORRECT);
    /* an aggregate count alone (errors of the board's past, since repaired by row remapping or
     * page retirement) does not fail: DCGM's health watch fails on volatile double-bit errors only */
    h = healthy();
    h.f[KB_H_ECC_UNC_AGGREGATE].v = 9;
    v = judged(&h);
    CHECK_MSG(v.r[KB_ACC_ECC].status == KB_ACC_PASS && strstr(v.r[KB_ACC_ECC].reason, "volatile 0, aggregate 9"),
              "%s: %s", kb_acc_status_name(v.r[KB_ACC_ECC].status), v.r[KB_ACC_ECC].reason);
    CHECK(exit_code(&v) == KB_EXIT_OK);
    /* the volatile count unreadable: nothing to fail on, SKIP with NVML's words */
    unread(&h, KB_H_ECC_UNC_VOLATILE, "nvmlDeviceGetTotalEccErrors: NVML_ERROR_NO_PERMISSION: Insufficient Permissions");
    v = judged(&h);
    CHECK_MSG(v.r[KB_ACC_ECC].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_ECC].reason, "NO_PERMISSION"), "%s",
              v.r[KB_ACC_ECC].reason);
    /* ECC off: WARN, counts not trusted */
    h = healthy();
    h.f[KB_H_ECC_MODE].v = 0;
    v = judged(&h);
    CHECK(v.r[KB_ACC_ECC].status == KB_ACC_WARN && strstr(v.r[KB_ACC_ECC].reason, "ECC is disabled"));
    CHECK(v.worst == KB_ACC_WARN && exit_code(&v) == KB_EXIT_OK);
    /* a GPU without ECC (GeForce): SKIP with NVML's words */
    h = healthy();
    unread(&h, KB_H_ECC_MODE, "nvmlDeviceGetEccMode: NVML_ERROR_NOT_SUPPORTED: Not Supported");
    unread(&h, KB_H_ECC_UNC_VOLATILE, "nvmlDeviceGetTotalEccErrors: NVML_ERROR_NOT_SUPPORTED: Not Supported");
    unread(&h, KB_H_ECC_UNC_AGGREGATE, "nvmlDeviceGetTotalEccErrors: NVML_ERROR_NOT_SUPPORTED: Not Supported");
    v = judged(&h);
    CHECK_MSG(v.r[KB_ACC_ECC].status == KB_ACC_SKIP &&
              !strcmp(v.r[KB_ACC_ECC].reason,
                      "not read: nvmlDeviceGetTotalEccErrors: NVML_ERROR_NOT_SUPPORTED: Not Supported"),
              "%s", v.r[KB_ACC_ECC].reason);
}

static void test_row_remap_and_retirement(void)
{
    const struct { kb_health_field f; const char *says; } bad[] = {
        { KB_H_REMAP_PENDING, "row remapping is pending" },
        { KB_H_REMAP_FAILED, "row remapping failed" },
        { KB_H_RETIRED_PENDING, "page retirement is pending" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        kb_health h = healthy();
        h.f[bad[i].f].v = 1;
        h.f[KB_H_REMAP_UNCORRECTABLE].v = 3;
        kb_acc_verdict v = judged(&h);
        CHECK_MSG(v.r[KB_ACC_ROW_REMAP].status == KB_ACC_FAIL && strstr(v.r[KB_ACC_ROW_REMAP].reason, bad[i].says),
                  "%s: %s", kb_health_name(bad[i].f), v.r[KB_ACC_ROW_REMAP].reason);
        CHECK(exit_code(&v) == KB_EXIT_INCORRECT);
    }
    /* remapped rows and retired pages alone (nothing pending): PASS, counted in the reason */
    kb_health h = healthy();
    h.f[KB_H_REMAP_CORRECTABLE].v = 2;
    h.f[KB_H_RETIRED_DBE].v = 1;
    kb_acc_verdict v = judged(&h);
    CHECK(v.r[KB_ACC_ROW_REMAP].status == KB_ACC_PASS);
    CHECK_MSG(strstr(v.r[KB_ACC_ROW_REMAP].reason, "remapped rows 0 (uncorrectable) + 2 (correctable)") &&
              strstr(v.r[KB_ACC_ROW_REMAP].reason, "+ 1 (double-bit)"), "%s", v.r[KB_ACC_ROW_REMAP].reason);
    /* before Ampere: no row remapper, the page retirement status still judges */
    for (kb_health_field f = KB_H_REMAP_CORRECTABLE; f <= KB_H_REMAP_FAILED; f++)
        unread(&h, f, "nvmlDeviceGetRemappedRows: NVML_ERROR_NOT_SUPPORTED: Not Supported");
    h.f[KB_H_RETIRED_PENDING].v = 1;
    v = judged(&h);
    CHECK(v.r[KB_ACC_ROW_REMAP].status == KB_ACC_FAIL);
    /* neither readable: SKIP */
    unread(&h, KB_H_RETIRED_PENDING, "nvmlDeviceGetRetiredPagesPendingStatus: not exported by this libnvidia-ml");
    v = judged(&h);
    CHECK_MSG(v.r[KB_ACC_ROW_REMAP].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_ROW_REMAP].reason, "NOT_SUPPORTED"),
              "%s", v.r[KB_ACC_ROW_REMAP].reason);
}

static void test_pcie(void)
{
    kb_health h = healthy();
    h.f[KB_H_PCIE_GEN].v = 4;
    kb_acc_verdict v = judged(&h);
    CHECK_MSG(v.r[KB_ACC_PCIE].status == KB_ACC_WARN &&
              strstr(v.r[KB_ACC_PCIE].reason, "gen 4 x16 below max gen 5 x16"), "%s", v.r[KB_ACC_PCIE].reason);
    CHECK(exit_code(&v) == KB_EXIT_OK && v.worst == KB_ACC_WARN);
    h = healthy();
    h.f[KB_H_PCIE_WIDTH].v = 8;
    v = judged(&h);
    CHECK(v.r[KB_ACC_PCIE].status == KB_ACC_WARN && strstr(v.r[KB_ACC_PCIE].reason, "gen 5 x8 below max gen 5 x16"));
    /* the width pair only (generation unsupported): judged on it */
    h = healthy();
    unread(&h, KB_H_PCIE_GEN_MAX, "nvmlDeviceGetMaxPcieLinkGeneration: NVML_ERROR_NOT_SUPPORTED: Not Supported");
    v = judged(&h);
    CHECK_MSG(v.r[KB_ACC_PCIE].status == KB_ACC_PASS && strstr(v.r[KB_ACC_PCIE].reason, "x16 at max x16"), "%s",
              v.r[KB_ACC_PCIE].reason);
    unread(&h, KB_H_PCIE_WIDTH, "nvmlDeviceGetCurrPcieLinkWidth: NVML_ERROR_GPU_IS_LOST: GPU is lost");
    v = judged(&h);
    CHECK(v.r[KB_ACC_PCIE].status == KB_ACC_SKIP && strstr(v.r[KB_ACC_PCIE].reason, "not read: nvmlDeviceGetMaxPcieLinkGeneration"));
}

/* A link read while the GPU was idle (NVML's gpu_idle clock event reason) may have trained
 * its generation down: the generation is not judged then, the width still is. */
static void test_pcie_read_at_idle(void)
{
    kb_health h = healthy();
    h.f[KB_H_PCIE_GEN].v = 1;
    h.f[KB_H_GPU_IDLE].v = 1;
    kb_acc_verdict v = judged(&h);
    CHECK_MSG(v.r[KB_ACC_PCIE].status == KB_ACC_PASS && strstr(v.r[KB_ACC_PCIE].reason, "not judged") &&
              strstr(v.r[KB_ACC_PCIE].reason, "idle"), "%s: %s", kb_acc_status_name(v.r[KB_ACC_PCIE].status),
              v.r[KB_ACC_PCIE].reason);
    h.f[KB_H_PCIE_WIDTH].v = 8;   /* the width does not train down: still judged */
    v = judged(&h);
    CHECK_MSG(v.r[KB_ACC_PCIE].status == KB_ACC_WARN && strstr(v.r[KB_ACC_PCIE].reason, "x8 below max x16"), "%s",
              v.r[KB_ACC_PCIE].reason);
    h = healthy();
    h.f[KB_H_PCIE_GEN].v = 4;      /* busy (gpu_idle 0): judged as before */
    v = judged(&h);
    CHECK(v.r[KB_ACC_PCIE].status == KB_ACC_WARN && strstr(v.r[KB_ACC_PCIE].reason, "gen 4 x16 below max gen 5 x16"));
}

static void test_no_nvml_and_json(void)
{
    kb_health h;
    kb_health_unread(&h, "NVML unavailable: libnvidia-ml.so.1: cannot open shared object file");
    kb_acc_verdict v = judged(&h);
    for (int t = KB_ACC_ECC; t <= KB_ACC_PCIE; t++)
        CHECK(v.r[t].status == KB_ACC_SKIP && strstr(v.r[t].reason, "libnvidia-ml.so.1: cannot open"));
    CHECK(v.worst == KB_ACC_NOT_CHECKED && exit_code(&v) == KB_EXIT_SETUP);

    h = healthy();
    h.f[KB_H_ECC_UNC_VOLATILE].v = 1;
    unread(&h, KB_H_REMAP_FAILED, "nvmlDeviceGetRemappedRows: NVML_ERROR_NOT_SUPPORTED: Not Supported");
    v = judged(&h);
    kb_acc_identity id;
    memset(&id, 0, sizeof id);
    kb_device_info dev;
    memset(&dev, 0, sizeof dev);
    dev.caps = KB_CAP_GPU_TIMER;
    kb_acc_spec s;
    memset(&s, 0, sizeof s);
    kb_acc_context c = { &id, &dev, "cuda", &s, "--spec", "r.jsonl", "2026-01-01T00:00:00Z", NULL, 0, &h };
    json_t *o = kb_acc_verdict_json(&c, &v);
    CHECK(o != NULL);
    json_t *hj = json_object_get(o, "health"), *vals = json_object_get(hj, "values");
    CHECK(json_is_true(json_object_get(hj, "available")));
    CHECK(json_integer_value(json_object_get(vals, "ecc_uncorrected_volatile")) == 1);
    CHECK(json_integer_value(json_object_get(vals, "pcie_width_max")) == 16);
    CHECK(json_is_null(json_object_get(vals, "remap_failed")));
    CHECK(strstr(json_string_value(json_object_get(json_object_get(hj, "unread"), "remap_failed")), "NOT_SUPPORTED"));
    json_t *g = json_object_get(o, "gpu");
    CHECK(!strcmp(json_string_value(json_object_get(g, "serial")), "1650123456789"));
    CHECK(!strcmp(json_string_value(json_object_get(g, "nvml_pci_bus_id")), "00000000:3B:00.0"));
    CHECK(!strcmp(json_string_value(json_object_get(o, "verdict")), "FAIL"));
    CHECK(json_integer_value(json_object_get(o, "exit_code")) == KB_EXIT_INCORRECT);
    json_decref(o);
}

int main(void)
{
    RUN(test_healthy_passes);
    RUN(test_ecc);
    RUN(test_row_remap_and_retirement);
    RUN(test_pcie);
    RUN(test_pcie_read_at_idle);
    RUN(test_no_nvml_and_json);
    TEST_MAIN_END();
}
