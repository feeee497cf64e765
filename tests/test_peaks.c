/* test_peaks.c - the datasheet file matched by device name, the clock-based peaks
 * (H100 SXM numbers of docs/references.md), unknown GPUs, the emulator, bad files. */
#include "check.h"
#include "engine/peaks.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PEAKS_FILE "data/peaks.json"   /* tests run from the repository root */

static int near(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b); }

/* The attributes an H100 SXM5 reports: 132 SMs, 1980 MHz, HBM3 at 2619 MHz on 5120 bits. */
static kb_device_info h100_sxm(void)
{
    kb_device_info d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "NVIDIA H100 80GB HBM3");
    d.sm = 90;
    d.sm_count = 132;
    d.clock_khz = 1980000;
    d.mem_clock_khz = 2619000;
    d.mem_bus_bits = 5120;
    d.caps = KB_CAP_ROOFLINE;
    return d;
}

static kb_peaks lookup(const char *name, int sm)
{
    kb_device_info d = h100_sxm();
    snprintf(d.name, sizeof d.name, "%s", name);
    d.sm = sm;
    kb_peaks p;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_peaks_for_device(&d, PEAKS_FILE, &p, &err) == KB_OK, "%s", err.s);
    CHECK_MSG(err.len == 0, "unexpected note: %s", err.s);
    kb_sb_free(&err);
    return p;
}

static void test_ops_table(void)
{
    CHECK(kb_peaks_ops_per_clock(80, KB_DT_FP32) == 128);
    CHECK(kb_peaks_ops_per_clock(80, KB_DT_FP16) == 2048);
    CHECK(kb_peaks_ops_per_clock(80, KB_DT_FP8E4M3) == 0);      /* no fp8 on Ampere */
    CHECK(kb_peaks_ops_per_clock(89, KB_DT_TF32) == 512);
    CHECK(kb_peaks_ops_per_clock(89, KB_DT_FP8E5M2) == 2048);
    CHECK(kb_peaks_ops_per_clock(90, KB_DT_BF16) == 4096);
    CHECK(kb_peaks_ops_per_clock(90, KB_DT_INT8) == 8192);
    CHECK(kb_peaks_ops_per_clock(75, KB_DT_FP32) == 0);         /* not in the table: not guessed */
    CHECK(kb_peaks_ops_per_clock(90, KB_DT_COUNT) == 0);
}

static void test_h100_sxm(void)
{
    kb_peaks p = lookup("NVIDIA H100 80GB HBM3", 90);
    CHECK(p.have_sheet && strcmp(p.sku, "H100 SXM5") == 0);
    CHECK(strstr(p.source, "datasheet") != NULL);
    CHECK(p.sheet_tflops[KB_DT_FP16] == 989.4 && p.sheet_tflops[KB_DT_BF16] == 989.4);
    CHECK(p.sheet_tflops[KB_DT_FP8E4M3] == 1979 && p.sheet_tflops[KB_DT_FP8E5M2] == 1979);
    CHECK(p.sheet_tflops[KB_DT_FP32] == 66.9 && p.sheet_gbps == 3350);
    /* clock-based: 132 x 1980 MHz x 256 = 66.9 TFLOPS; tensor cores at 1830 MHz:
     * 132 x 1830 x 4096 = 989.5, x 8192 = 1979; HBM: 2619 MHz x 2 x 5120 / 8 = 3352 GB/s */
    CHECK(near(p.clock_tflops[KB_DT_FP32], 66.90816, 1e-6));
    CHECK(near(p.clock_tflops[KB_DT_FP16], 989.41, 1e-4));
    CHECK(near(p.clock_tflops[KB_DT_TF32], 494.71, 1e-4));
    CHECK(near(p.clock_tflops[KB_DT_INT8], 1978.82, 1e-4));
    CHECK(near(p.clock_gbps, 3352.32, 1e-6));
    const char *src;
    CHECK(kb_peaks_tflops(&p, KB_DT_FP16, &src) == 989.4 && strcmp(src, "datasheet") == 0);
    CHECK(kb_peaks_gbps(&p, &src) == 3350 && strcmp(src, "datasheet") == 0);
    kb_sb b;
    kb_sb_init(&b);
    kb_peaks_format(&p, &b);
    CHECK(strstr(b.s, "H100 SXM5") && strstr(b.s, "fp16 989.4") && strstr(b.s, "3350 GB/s"));
    CHECK(strstr(b.s, "132 SMs x 1980 MHz") && strstr(b.s, "1830 MHz") && strstr(b.s, "= 3352 GB/s"));
    kb_sb_free(&b);
}

static void test_name_matching(void)
{
    CHECK(strcmp(lookup("NVIDIA H100 PCIe", 90).sku, "H100 PCIe") == 0);
    CHECK(strcmp(lookup("NVIDIA H100 SXM5 80GB", 90).sku, "H100 SXM5") == 0);
    CHECK(strcmp(lookup("NVIDIA A100-SXM4-80GB", 80).sku, "A100 SXM4 80GB") == 0);
    CHECK(strcmp(lookup("NVIDIA A100-PCIE-40GB", 80).sku, "A100 PCIe 40GB") == 0);
    CHECK(strcmp(lookup("NVIDIA L40S", 89).sku, "L40S") == 0);
    CHECK(strcmp(lookup("NVIDIA L4", 89).sku, "L4") == 0);            /* whole tokens: not L40S */
    CHECK(strcmp(lookup("NVIDIA GeForce RTX 4090", 89).sku, "GeForce RTX 4090") == 0);
    CHECK(strcmp(lookup("NVIDIA H200", 90).sku, "H200 SXM") == 0);
    CHECK(!lookup("NVIDIA H100 NVL", 90).have_sheet);                 /* excluded: other peaks */
    CHECK(!lookup("NVIDIA A100 80GB PCIe", 80).have_sheet);           /* not in the table */
    kb_peaks a100 = lookup("NVIDIA A100-SXM4-80GB", 80);
    CHECK(a100.sheet_tflops[KB_DT_FP8E4M3] == 0 && kb_peaks_tflops(&a100, KB_DT_FP8E4M3, NULL) == 0);
    CHECK(a100.sheet_tflops[KB_DT_INT8] == 624);
}

static void test_unknown_gpu(void)
{
    kb_peaks p = lookup("TEST-GPU", 90);
    CHECK(!p.have_sheet && p.sku[0] == 0);
    CHECK(near(p.clock_tflops[KB_DT_FP16], 132 * 1980.0 * 4096 / 1e6, 1e-9)); /* no tensor clock known */
    const char *src = NULL;
    CHECK(kb_peaks_tflops(&p, KB_DT_FP16, &src) == p.clock_tflops[KB_DT_FP16] && src && strcmp(src, "clock") == 0);
    CHECK(kb_peaks_gbps(&p, &src) == p.clock_gbps && strcmp(src, "clock") == 0);
    kb_sb b;
    kb_sb_init(&b);
    kb_peaks_format(&p, &b);
    CHECK(strstr(b.s, "unknown GPU \"TEST-GPU\"") && strstr(b.s, "clock-based numbers only"));
    kb_sb_free(&b);

    /* an architecture without an ops table: bandwidth only, no compute ceiling */
    kb_peaks q = lookup("TEST-GPU", 75);
    CHECK(q.clock_tflops[KB_DT_FP32] == 0 && kb_peaks_tflops(&q, KB_DT_FP32, NULL) == 0);
    CHECK(q.clock_gbps > 0);
    kb_sb_init(&b);
    kb_peaks_format(&q, &b);
    CHECK(strstr(b.s, "no ops-per-clock table for sm_75") != NULL);
    kb_sb_free(&b);
}

static void test_emulator(void)
{
    kb_device_info d = h100_sxm();
    strcpy(d.name, "kbench emulator (sm_90)");
    d.caps = 0;   /* no KB_CAP_ROOFLINE */
    kb_peaks p;
    CHECK(kb_peaks_for_device(&d, PEAKS_FILE, &p, NULL) == KB_OK);
    CHECK(p.no_roof && !p.have_sheet && p.clock_gbps == 0);
    for (int dt = 0; dt < KB_DT_COUNT; dt++)
        CHECK(p.clock_tflops[dt] == 0 && kb_peaks_tflops(&p, (kb_dtype)dt, NULL) == 0);
    CHECK(kb_peaks_gbps(&p, NULL) == 0);
    kb_sb b;
    kb_sb_init(&b);
    kb_peaks_format(&p, &b);
    CHECK(strstr(b.s, "emulator") && strstr(b.s, "CPU timings"));
    kb_sb_free(&b);
}

static void test_bad_files(void)
{
    kb_device_info d = h100_sxm();
    kb_peaks p;
    kb_sb err;
    kb_sb_init(&err);
    /* missing: not an error, a note, clock-based numbers still there */
    CHECK(kb_peaks_for_device(&d, "/nonexistent/peaks.json", &p, &err) == KB_OK);
    CHECK(!p.have_sheet && p.clock_tflops[KB_DT_FP32] > 0 && strstr(err.s, "clock-based peaks only"));
    kb_sb_clear(&err);

    char path[] = "/tmp/kb_peaks_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) { kb_sb_free(&err); return; }
    CHECK(write(fd, "{\"gpus\": [ {\"sku\": }", 19) == 19);
    close(fd);
    CHECK(kb_peaks_for_device(&d, path, &p, &err) == KB_ERR_INPUT);
    CHECK(strstr(err.s, path) != NULL);
    /* the environment overrides the default path */
    setenv("KBENCH_PEAKS", path, 1);
    CHECK(strcmp(kb_peaks_default_path(), path) == 0);
    unsetenv("KBENCH_PEAKS");
    CHECK(strstr(kb_peaks_default_path(), "data/peaks.json") != NULL);
    unlink(path);
    kb_sb_free(&err);
}

/* The data file itself: every entry names its source, and where the SKU's SM count and
 * boost clock are published, they reproduce its fp32 figure through the ops table
 * (a typo in either shows here). */
static void test_data_file_consistent(void)
{
    json_error_t je;
    json_t *root = json_load_file(PEAKS_FILE, 0, &je);
    CHECK_MSG(root != NULL, "%s", je.text);
    if (!root) return;
    size_t i, checked = 0;
    json_t *g;
    json_array_foreach(json_object_get(root, "gpus"), i, g) {
        const char *sku = json_string_value(json_object_get(g, "sku"));
        CHECK(sku && *sku);
        CHECK_MSG(json_string_length(json_object_get(g, "source")) > 10, "%s: no source", sku);
        CHECK_MSG(json_array_size(json_object_get(g, "match")) > 0, "%s: no match", sku);
        CHECK_MSG(json_number_value(json_object_get(g, "mem_gbps")) > 0, "%s: no bandwidth", sku);
        int sm = (int)json_integer_value(json_object_get(g, "sm"));
        double sms = json_number_value(json_object_get(g, "sms"));
        double mhz = json_number_value(json_object_get(g, "boost_mhz"));
        double fp32 = json_number_value(json_object_get(json_object_get(g, "tflops"), "fp32"));
        int ops = kb_peaks_ops_per_clock(sm, KB_DT_FP32);
        if (sms > 0 && mhz > 0 && fp32 > 0 && ops > 0) {
            CHECK_MSG(near(sms * mhz * ops / 1e6, fp32, 0.01), "%s: %g x %g x %d != %g", sku, sms, mhz, ops, fp32);
            checked++;
        }
    }
    CHECK(checked >= 6);
    json_decref(root);
}

int main(void)
{
    RUN(test_ops_table);
    RUN(test_h100_sxm);
    RUN(test_name_matching);
    RUN(test_unknown_gpu);
    RUN(test_emulator);
    RUN(test_bad_files);
    RUN(test_data_file_consistent);
    TEST_MAIN_END();
}
