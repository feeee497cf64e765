/* test_nvml.c - NVML telemetry without a GPU: the pure parts (throttle rule, reason
 * names, JSON), the no-library path (KBENCH_LIBNVML=/nonexistent), and the dlopen path
 * against a fake libnvidia-ml built here from a few lines of C, whose answers come from
 * environment variables. */
#include "check.h"
#include "backend/cuda/nvml.h"
#include "results/record_json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- pure parts ---- */

static void test_throttle_rule(void)
{
    CHECK(kb_telemetry_throttled(1980, 1980, 0) == 0);
    CHECK(kb_telemetry_throttled(1755, 1980, 0) == 0);
    CHECK(kb_telemetry_throttled(1485, 1980, 0) == 0);   /* exactly 75%: not under it */
    CHECK(kb_telemetry_throttled(1484, 1980, 0) == 1);
    CHECK(kb_telemetry_throttled(300, 1980, KB_TEL_REASON_GPU_IDLE) == 1); /* the clock decides */
    /* the thermal and hardware-slowdown reasons throttle even at full clock; the software power
     * cap does not: "the clocks have been optimized to ensure not to exceed currently set power
     * limits" is a GPU at its TDP, judged by its clock */
    CHECK(kb_telemetry_throttled(1980, 1980, KB_TEL_REASON_SW_POWER_CAP) == 0);
    CHECK(kb_telemetry_throttled(1400, 1980, KB_TEL_REASON_SW_POWER_CAP) == 1);
    CHECK(kb_telemetry_throttled(1980, 1980, KB_TEL_REASON_HW_SLOWDOWN) == 1);
    CHECK(kb_telemetry_throttled(1980, 1980, KB_TEL_REASON_SW_THERMAL) == 1);
    CHECK(kb_telemetry_throttled(1980, 1980, KB_TEL_REASON_HW_THERMAL) == 1);
    CHECK(kb_telemetry_throttled(1980, 1980, KB_TEL_REASON_HW_POWER_BRAKE) == 1);
    /* the others do not */
    CHECK(kb_telemetry_throttled(1980, 1980, KB_TEL_REASON_GPU_IDLE | KB_TEL_REASON_APP_CLOCKS |
                                            KB_TEL_REASON_SYNC_BOOST | KB_TEL_REASON_DISPLAY_CLOCKS) == 0);
    /* unknown clocks cannot trip the clock rule */
    CHECK(kb_telemetry_throttled(-1, 1980, 0) == 0);
    CHECK(kb_telemetry_throttled(1000, -1, 0) == 0);
}

static void test_reason_names(void)
{
    char buf[256];
    CHECK(kb_telemetry_reason_names(0, buf, sizeof buf) == 4 && !strcmp(buf, "none"));
    kb_telemetry_reason_names(KB_TEL_REASON_SW_POWER_CAP | KB_TEL_REASON_HW_THERMAL, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "sw_power_cap,hw_thermal_slowdown"), "%s", buf);
    kb_telemetry_reason_names(0x1ff, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "gpu_idle,applications_clocks_setting,sw_power_cap,hw_slowdown,sync_boost,"
                           "sw_thermal_slowdown,hw_thermal_slowdown,hw_power_brake_slowdown,"
                           "display_clock_setting"), "%s", buf);
    kb_telemetry_reason_names(KB_TEL_REASON_HW_SLOWDOWN | 0x400, buf, sizeof buf);
    CHECK_MSG(!strcmp(buf, "hw_slowdown,0x400"), "%s", buf);
    /* truncation: like snprintf, the full length comes back */
    char small[8];
    int need = kb_telemetry_reason_names(KB_TEL_REASON_SW_THERMAL, small, sizeof small);
    CHECK(need == (int)strlen("sw_thermal_slowdown") && !strcmp(small, "sw_ther"));
}

/* The telemetry block of a record holding reading t (a new reference). */
static json_t *telemetry_block(const kb_telemetry *t)
{
    kb_case_result r;
    memset(&r, 0, sizeof r);
    r.case_id = "x";
    r.telemetry.done = 1;
    r.telemetry.t = *t;
    kb_record_ctx ctx = { .run_id = "run", .time = "2026-01-01T00:00:00Z", .backend = "cuda", .dev = NULL };
    json_t *rec = kb_record_json(&ctx, &r);
    json_t *j = json_incref(json_object_get(rec, "telemetry"));
    json_decref(rec);
    return j;
}

static void test_json(void)
{
    kb_telemetry s;
    memset(&s, 0, sizeof s);
    s.available = 1;
    s.sm_clock_mhz = 1400;
    s.sm_clock_max_mhz = 1980;
    s.mem_clock_mhz = -1;
    s.power_w = 300.25;
    s.temperature_c = 80;
    s.have_reasons = 1;
    s.reasons = KB_TEL_REASON_SW_THERMAL;
    s.throttled = 1;
    json_t *j = telemetry_block(&s);
    CHECK(j != NULL);
    if (j) {
        CHECK(json_is_true(json_object_get(j, "available")) && json_is_true(json_object_get(j, "throttled")));
        CHECK(json_integer_value(json_object_get(j, "sm_clock_mhz")) == 1400);
        CHECK(json_is_null(json_object_get(j, "mem_clock_mhz")));
        CHECK(json_real_value(json_object_get(j, "power_w")) == 300.25);
        json_t *r = json_object_get(j, "reasons");
        CHECK(json_array_size(r) == 1 && !strcmp(json_string_value(json_array_get(r, 0)), "sw_thermal_slowdown"));
        json_decref(j);
    }
    memset(&s, 0, sizeof s);
    snprintf(s.why, sizeof s.why, "no driver");
    j = telemetry_block(&s);
    CHECK(j && json_is_false(json_object_get(j, "available")));
    CHECK(j && !strcmp(json_string_value(json_object_get(j, "why")), "no driver"));
    CHECK(j && json_object_get(j, "sm_clock_mhz") == NULL);
    json_decref(j);
}

/* ---- without the library ---- */

static void test_no_library(void)
{
    setenv("KBENCH_LIBNVML", "/nonexistent", 1);
    kb_nvml *n = kb_nvml_open("0000:3B:00.0", "GPU-fake");
    CHECK(n != NULL);
    CHECK(!kb_nvml_available(n));
    CHECK_MSG(strstr(kb_nvml_why(n), "NVML unavailable") && strstr(kb_nvml_why(n), "/nonexistent"), "%s",
              kb_nvml_why(n));
    kb_telemetry s;
    kb_nvml_read(n, &s);
    CHECK(s.available == 0 && s.sm_clock_mhz == -1 && s.power_w == -1 && s.throttled == 0);
    kb_nvml_close(n);
    kb_nvml_close(NULL);
}

/* ---- a fake libnvidia-ml ---- */

static const char fake_src[] =
    "#include <stdlib.h>\n#include <string.h>\n"
    "static unsigned env(const char *k, unsigned d) { const char *v = getenv(k); return v ? (unsigned)strtoul(v, 0, 0) : d; }\n"
    "int nvmlInit_v2(void) { return (int)env(\"FAKE_NVML_INIT_RC\", 0); }\n"
    "int nvmlShutdown(void) { return 0; }\n"
    "const char *nvmlErrorString(int r) { return r == 9 ? \"Driver Not Loaded\" : \"Not Found\"; }\n"
    "int nvmlDeviceGetHandleByPciBusId_v2(const char *b, void **d) { if (strcmp(b, \"0000:3B:00.0\")) return 6; *d = (void *)1; return 0; }\n"
    "int nvmlDeviceGetHandleByUUID(const char *u, void **d) { if (strcmp(u, \"GPU-fake\")) return 6; *d = (void *)2; return 0; }\n"
    "int nvmlDeviceGetClockInfo(void *d, int t, unsigned *v) { *v = t == 1 ? env(\"FAKE_NVML_SM\", 1755) : 2619; return 0; }\n"
    "int nvmlDeviceGetMaxClockInfo(void *d, int t, unsigned *v) { *v = 1980; return 0; }\n"
    "int nvmlDeviceGetPowerUsage(void *d, unsigned *mw) { *mw = 350500; return 0; }\n"
    "int nvmlDeviceGetTemperature(void *d, int s, unsigned *c) { if (s != 0) return 2; *c = 61; return 0; }\n"
    "#ifdef OLD_NAME\n"
    "int nvmlDeviceGetCurrentClocksThrottleReasons(void *d, unsigned long long *r) { *r = env(\"FAKE_NVML_REASONS\", 0); return 0; }\n"
    "#else\n"
    "int nvmlDeviceGetCurrentClocksEventReasons(void *d, unsigned long long *r) { *r = env(\"FAKE_NVML_REASONS\", 0); return 0; }\n"
    "#endif\n";

static char dir[] = "/tmp/kb_test_nvml.XXXXXX";
static char lib_new[512], lib_old[512];

static int build_fakes(void)
{
    char src[600], cmd[4096];
    if (!mkdtemp(dir))
        return 0;
    snprintf(src, sizeof src, "%s/fake_nvml.c", dir);
    FILE *f = fopen(src, "w");
    if (!f)
        return 0;
    fputs(fake_src, f);
    fclose(f);
    snprintf(lib_new, sizeof lib_new, "%s/libnvml-new.so", dir);
    snprintf(lib_old, sizeof lib_old, "%s/libnvml-old.so", dir);
    /* the C++ compiler the emulator uses is present wherever kbench builds; -x c: plain C */
    snprintf(cmd, sizeof cmd, "'%s' -x c -shared -fPIC -o '%s' '%s' && '%s' -x c -DOLD_NAME -shared -fPIC -o '%s' '%s'",
             KB_CXX_COMPILER, lib_new, src, KB_CXX_COMPILER, lib_old, src);
    return system(cmd) == 0;
}

static void test_fake_library(void)
{
    setenv("KBENCH_LIBNVML", lib_new, 1);
    unsetenv("FAKE_NVML_INIT_RC");
    unsetenv("FAKE_NVML_SM");
    unsetenv("FAKE_NVML_REASONS");
    kb_nvml *n = kb_nvml_open("0000:3B:00.0", NULL);
    CHECK_MSG(kb_nvml_available(n), "%s", kb_nvml_why(n));
    CHECK(!strcmp(kb_nvml_why(n), ""));
    kb_telemetry s;
    kb_nvml_read(n, &s);
    CHECK(s.available && s.sm_clock_mhz == 1755 && s.sm_clock_max_mhz == 1980 && s.mem_clock_mhz == 2619);
    CHECK(s.power_w == 350.5 && s.temperature_c == 61);
    CHECK(s.have_reasons && s.reasons == 0 && !s.throttled);
    /* clocks fall under 75% of the maximum */
    setenv("FAKE_NVML_SM", "1200", 1);
    kb_nvml_read(n, &s);
    CHECK(s.sm_clock_mhz == 1200 && s.throttled);
    /* full clock, but a thermal reason */
    setenv("FAKE_NVML_SM", "1980", 1);
    setenv("FAKE_NVML_REASONS", "0x20", 1);
    kb_nvml_read(n, &s);
    CHECK(s.reasons == KB_TEL_REASON_SW_THERMAL && s.throttled);
    /* idle only: not throttling */
    setenv("FAKE_NVML_REASONS", "0x1", 1);
    kb_nvml_read(n, &s);
    CHECK(s.reasons == KB_TEL_REASON_GPU_IDLE && !s.throttled);
    kb_nvml_close(n);
    unsetenv("FAKE_NVML_SM");
    unsetenv("FAKE_NVML_REASONS");
}

/* A driver whose libnvidia-ml exports none of the health functions (the library built
 * here): every value unread with "not exported", no crash, telemetry unaffected. */
static void test_health_on_an_older_driver(void)
{
    setenv("KBENCH_LIBNVML", lib_old, 1);
    kb_nvml *n = kb_nvml_open("0000:3B:00.0", NULL);
    CHECK_MSG(kb_nvml_available(n), "%s", kb_nvml_why(n));
    kb_health h;
    kb_nvml_health(n, &h);
    CHECK(h.available);
    for (int i = 0; i < KB_H_COUNT; i++)   /* gpu_idle comes from the clock event reasons it has */
        CHECK_MSG(i == KB_H_GPU_IDLE ? h.f[i].read && h.f[i].v == 0
                                     : !h.f[i].read && strstr(h.f[i].why, "not exported by this libnvidia-ml"),
                  "%s: %s", kb_health_name((kb_health_field)i), h.f[i].why);
    CHECK(strstr(h.f[KB_H_REMAP_PENDING].why, "nvmlDeviceGetRemappedRows") != NULL);
    CHECK(!*h.serial && strstr(h.serial_why, "nvmlDeviceGetSerial") && !*h.pci_bus_id);
    kb_telemetry s;
    kb_nvml_read(n, &s);
    CHECK(s.available && s.sm_clock_mhz > 0);
    kb_nvml_close(n);
    /* no NVML at all: unread with why NVML is unavailable */
    setenv("KBENCH_LIBNVML", "/nonexistent", 1);
    n = kb_nvml_open("0000:3B:00.0", NULL);
    kb_nvml_health(n, &h);
    CHECK(!h.available && strstr(h.why, "/nonexistent") && !h.f[KB_H_ECC_MODE].read &&
          strstr(h.f[KB_H_ECC_MODE].why, "/nonexistent"));
    kb_nvml_close(n);
}

/* The driver double's NVML (tests/fake_cuda/fake_nvml.c): each health value as scripted,
 * an unsupported function with NVML's error name and string, the others still read. */
static void test_health_values(void)
{
    const char *lib = getenv("KBENCH_FAKE_LIBNVML");
    if (!lib || access(lib, R_OK) != 0) {
        CHECK_MSG(0, "KBENCH_FAKE_LIBNVML does not name the built NVML double (run through ctest)");
        return;
    }
    setenv("KBENCH_LIBNVML", lib, 1);
    setenv("KBENCH_FAKE_NVML_ECC_UNC", "2,7", 1);
    setenv("KBENCH_FAKE_NVML_RETIRED", "3,70,1", 1);   /* more DBE pages than a small buffer holds */
    setenv("KBENCH_FAKE_NVML_REMAP", "4,1,1,0", 1);
    setenv("KBENCH_FAKE_NVML_PCIE", "3,5,8,16", 1);
    setenv("KBENCH_FAKE_NVML_SERIAL", "1321021000123", 1);
    setenv("KBENCH_FAKE_NVML_UNSUPPORTED", "nvmlDeviceGetEccMode,nvmlDeviceGetMaxPcieLinkWidth", 1);
    setenv("KBENCH_FAKE_CUDA_ARCH", "70", 1);   /* Volta: page retirement, no row remapper */
    kb_nvml *n = kb_nvml_open("00000000:3B:00.0", NULL);
    kb_health h;
    kb_nvml_health(n, &h);
    CHECK(h.f[KB_H_RETIRED_SBE].read && h.f[KB_H_RETIRED_SBE].v == 3 && h.f[KB_H_RETIRED_DBE].v == 70 &&
          h.f[KB_H_RETIRED_PENDING].v == 1);
    CHECK(!h.f[KB_H_REMAP_PENDING].read && strstr(h.f[KB_H_REMAP_PENDING].why, "NOT_SUPPORTED"));
    kb_nvml_close(n);
    /* Ampere and later (the default, sm_90): rows are remapped, page retirement is N/A */
    unsetenv("KBENCH_FAKE_CUDA_ARCH");
    n = kb_nvml_open("00000000:3B:00.0", NULL);
    kb_nvml_health(n, &h);
    CHECK(!h.f[KB_H_RETIRED_SBE].read && !h.f[KB_H_RETIRED_PENDING].read &&
          strstr(h.f[KB_H_RETIRED_PENDING].why, "nvmlDeviceGetRetiredPagesPendingStatus: NVML_ERROR_NOT_SUPPORTED"));
    kb_nvml_close(n);
    n = kb_nvml_open("00000000:3B:00.0", NULL);
    CHECK_MSG(kb_nvml_available(n), "%s", kb_nvml_why(n));
    kb_nvml_health(n, &h);
    const struct { kb_health_field f; unsigned long long v; } want[] = {
        { KB_H_ECC_UNC_VOLATILE, 2 }, { KB_H_ECC_UNC_AGGREGATE, 7 }, { KB_H_REMAP_CORRECTABLE, 4 },
        { KB_H_REMAP_UNCORRECTABLE, 1 }, { KB_H_REMAP_PENDING, 1 }, { KB_H_REMAP_FAILED, 0 },
        { KB_H_PCIE_GEN, 3 }, { KB_H_PCIE_GEN_MAX, 5 }, { KB_H_PCIE_WIDTH, 8 }, { KB_H_GPU_IDLE, 0 },
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        CHECK_MSG(h.f[want[i].f].read && h.f[want[i].f].v == want[i].v, "%s: read %d value %llu (%s)",
                  kb_health_name(want[i].f), h.f[want[i].f].read, h.f[want[i].f].v, h.f[want[i].f].why);
    CHECK_MSG(!h.f[KB_H_ECC_MODE].read &&
              !strcmp(h.f[KB_H_ECC_MODE].why, "nvmlDeviceGetEccMode: NVML_ERROR_NOT_SUPPORTED: Not Supported"),
              "%s", h.f[KB_H_ECC_MODE].why);
    CHECK(!h.f[KB_H_PCIE_WIDTH_MAX].read && strstr(h.f[KB_H_PCIE_WIDTH_MAX].why, "NOT_SUPPORTED"));
    CHECK(!strcmp(h.serial, "1321021000123") && !strcmp(h.pci_bus_id, "00000000:00:00.0"));
    kb_nvml_close(n);
    const char *vars[] = { "KBENCH_FAKE_NVML_ECC_UNC", "KBENCH_FAKE_NVML_RETIRED", "KBENCH_FAKE_NVML_REMAP",
                           "KBENCH_FAKE_NVML_PCIE", "KBENCH_FAKE_NVML_SERIAL", "KBENCH_FAKE_NVML_UNSUPPORTED" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

/* The NVML double at idle (KBENCH_FAKE_NVML_IDLE=1, or the driver double without work for a
 * while): gpu_idle reason, idle SM clock, the link trained down; under load the scripted values. */
static void test_double_at_idle(void)
{
    setenv("KBENCH_LIBNVML", getenv("KBENCH_FAKE_LIBNVML"), 1);
    setenv("KBENCH_FAKE_NVML_REASONS", "0x4", 1);
    kb_nvml *n = kb_nvml_open("00000000:3B:00.0", NULL);
    kb_telemetry t;
    kb_health h;
    setenv("KBENCH_FAKE_NVML_IDLE", "1", 1);
    kb_nvml_read(n, &t);
    kb_nvml_health(n, &h);
    CHECK(t.reasons == KB_TEL_REASON_GPU_IDLE && t.sm_clock_mhz == 345);
    CHECK(h.f[KB_H_GPU_IDLE].v == 1 && h.f[KB_H_PCIE_GEN].v == 1 && h.f[KB_H_PCIE_GEN_MAX].v == 5 &&
          h.f[KB_H_PCIE_WIDTH].v == 16);
    setenv("KBENCH_FAKE_NVML_IDLE", "0", 1);
    kb_nvml_read(n, &t);
    kb_nvml_health(n, &h);
    CHECK(t.reasons == KB_TEL_REASON_SW_POWER_CAP && t.sm_clock_mhz == 1980);
    /* a GPU at its power limit (sw_power_cap) at full clock is not throttled */
    CHECK_MSG(!t.throttled, "sw_power_cap at %d of %d MHz counted as throttled", t.sm_clock_mhz, t.sm_clock_max_mhz);
    CHECK(h.f[KB_H_GPU_IDLE].v == 0 && h.f[KB_H_PCIE_GEN].v == 5);
    kb_nvml_close(n);
    unsetenv("KBENCH_FAKE_NVML_IDLE");
    unsetenv("KBENCH_FAKE_NVML_REASONS");
}

static void test_fake_library_paths(void)
{
    kb_telemetry s;
    /* a driver older than R535 exports only the throttle-reasons name */
    setenv("KBENCH_LIBNVML", lib_old, 1);
    setenv("FAKE_NVML_REASONS", "0x40", 1);
    kb_nvml *n = kb_nvml_open("0000:3B:00.0", NULL);
    CHECK(kb_nvml_available(n));
    kb_nvml_read(n, &s);
    CHECK(s.have_reasons && s.reasons == KB_TEL_REASON_HW_THERMAL && s.throttled);
    kb_nvml_close(n);
    unsetenv("FAKE_NVML_REASONS");

    /* bus id unknown to NVML: found by UUID */
    setenv("KBENCH_LIBNVML", lib_new, 1);
    n = kb_nvml_open("0000:99:00.0", "GPU-fake");
    CHECK_MSG(kb_nvml_available(n), "%s", kb_nvml_why(n));
    kb_nvml_close(n);

    /* found by neither: unavailable, with NVML's own words */
    n = kb_nvml_open("0000:99:00.0", "GPU-other");
    CHECK(!kb_nvml_available(n));
    CHECK_MSG(strstr(kb_nvml_why(n), "NVML_ERROR_NOT_FOUND") != NULL, "%s", kb_nvml_why(n));
    kb_nvml_read(n, &s);
    CHECK(!s.available);
    kb_nvml_close(n);

    /* the driver is not loaded: nvmlInit fails, reported in the check macro's shape */
    setenv("FAKE_NVML_INIT_RC", "9", 1);
    n = kb_nvml_open("0000:3B:00.0", NULL);
    CHECK(!kb_nvml_available(n));
    const char *why = kb_nvml_why(n);
    CHECK_MSG(strstr(why, "nvml.c:") && strstr(why, "kb_nvml_open") &&
              strstr(why, "NVML_ERROR_DRIVER_NOT_LOADED: Driver Not Loaded"), "%s", why);
    kb_nvml_close(n);
    unsetenv("FAKE_NVML_INIT_RC");
}

int main(void)
{
    RUN(test_throttle_rule);
    RUN(test_reason_names);
    RUN(test_json);
    RUN(test_no_library);
    int built = build_fakes();
    CHECK_MSG(built, "could not build the fake NVML library with %s", KB_CXX_COMPILER);
    if (built) {
        RUN(test_fake_library);
        RUN(test_fake_library_paths);
        RUN(test_health_on_an_older_driver);
    }
    RUN(test_health_values);
    RUN(test_double_at_idle);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
