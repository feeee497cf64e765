/* test_ceilings.c - measured ceilings and the three roofs:
 *   - the store's `ceilings` view keeps the best ok ceiling-family result per device, kind
 *     and timing clock (the fp8 widened path as its own kind, launch as launches/s), and
 *     kb_ceilings_load gives a run only its own device's GPU ("gpu" clock) ceilings;
 *   - kb_derive_roofs: % of the measured roof (measured bandwidth, measured compute of the
 *     path or the datasheet's where the path was not measured) and % of the path's
 *     instruction ceiling (measured, else the datasheet of the dtype bounding the path:
 *     fp8 widened to f16 is scored against the f16 rate); the emulator gets neither;
 *   - the record's derived block carries them and reads them back.
 * The device "TEST-GPU" and its numbers are synthetic test inputs, not measurements. */
#include "check.h"
#include "engine/derive.h"
#include "results/ceilings.h"
#include "results/record_json.h"
#include "results/store.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/kb_test_ceilings_XXXXXX";
static char db_path[256];

static int near(double a, double b) { return fabs(a - b) <= 1e-9 * fabs(b); }

/* A stored record of the ceiling family with the rate that matters for its kind. */
static json_t *ceiling_rec(const char *dev, const char *clock, const char *variant, const char *dtype,
                           const char *path, double tflops, double gbps, double median_us, const char *status)
{
    static int seq;
    char id[160];
    snprintf(id, sizeof id, "ceiling/%s(path=%s)/%s/case%d", variant, path ? path : "-", dtype, seq++);
    json_t *params = path ? json_pack("{ss}", "path", path) : json_object();
    return json_pack("{ss ss ss ss ss ss so s{ss ss ss si sb} ss s{ss sf} s{sf sf sf sf} s{si}}", "run_id",
                     !strcmp(clock, "gpu") ? "r-gpu" : "r-emu", "time", "2026-01-01T00:00:00Z", "case_id", id,
                     "family", "ceiling", "variant", variant, "dtype", dtype, "params", params, "device", "name", dev,
                     "uuid", !strcmp(dev, "TEST-GPU") ? "GPU-1" : "emu", "pci_bus_id", "", "sm", 90, "emulator",
                     strcmp(clock, "gpu") != 0, "status", status, "timing", "clock", clock, "median_us", median_us,
                     "derived", "tflops", tflops, "gbps", gbps, "ai", 0.0, "pct_roof", 0.0, "telemetry",
                     "sm_clock_mhz", 1755);
}

static void put(kb_store *s, json_t *rec)
{
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(rec && kb_store_put(s, rec, "test", &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    json_decref(rec);
}

static void test_view_keeps_the_best_per_kind(void)
{
    kb_store *s;
    CHECK(kb_store_open(db_path, &s, NULL) == KB_OK);
    put(s, ceiling_rec("TEST-GPU", "gpu", "copy", "fp32", NULL, 0, 2500, 10, "ok"));
    put(s, ceiling_rec("TEST-GPU", "gpu", "copy", "fp32", NULL, 0, 2900, 9, "ok"));
    put(s, ceiling_rec("TEST-GPU", "gpu", "read", "fp32", NULL, 0, 3100, 9, "ok"));
    put(s, ceiling_rec("TEST-GPU", "gpu", "read", "fp32", NULL, 0, 9999, 1, "wrong"));   /* never a ceiling */
    put(s, ceiling_rec("TEST-GPU", "gpu", "mma", "fp16", "native", 600, 1, 50, "ok"));
    put(s, ceiling_rec("TEST-GPU", "gpu", "mma", "fp8e4m3", "widened", 550, 1, 50, "ok"));
    put(s, ceiling_rec("TEST-GPU", "gpu", "fma", "fp32", NULL, 50, 1, 50, "ok"));
    put(s, ceiling_rec("TEST-GPU", "gpu", "launch", "fp32", NULL, 0, 0, 2.5, "ok"));
    put(s, ceiling_rec("kbench CPU emulator", "cpu", "copy", "fp32", NULL, 0, 3, 10, "ok"));
    kb_store_close(s);

    kb_device_info d;
    memset(&d, 0, sizeof d);
    strcpy(d.name, "TEST-GPU");
    strcpy(d.uuid, "GPU-1");
    kb_peaks p;
    memset(&p, 0, sizeof p);
    CHECK(kb_ceilings_load(db_path, &d, &p) == 6);
    CHECK(near(kb_peaks_measured(&p, "copy"), 2900) && near(kb_peaks_measured(&p, "read"), 3100));
    CHECK(near(p.measured_gbps, 3100));                           /* the best of copy, read, write */
    CHECK(near(kb_peaks_measured(&p, "mma/fp16"), 600));
    CHECK(near(kb_peaks_measured(&p, "mma/fp8e4m3/widened"), 550) && kb_peaks_measured(&p, "mma/fp8e4m3") == 0);
    CHECK(near(kb_peaks_measured(&p, "launch"), 1e6 / 2.5));
    CHECK_MSG(strstr(p.measured_note, "6 measured ceilings") && strstr(p.measured_note, "r-gpu"), "%s",
              p.measured_note);

    /* the emulator's rows are CPU figures: never loaded as GPU ceilings */
    strcpy(d.name, "kbench CPU emulator");
    strcpy(d.uuid, "emu");
    memset(&p, 0, sizeof p);
    CHECK(kb_ceilings_load(db_path, &d, &p) == 0 && p.measured_gbps == 0);
    /* but shown, labelled */
    char *text = NULL;
    size_t len;
    FILE *f = open_memstream(&text, &len);
    CHECK(kb_ceilings_print(db_path, &d, f) == 1);
    fclose(f);
    CHECK_MSG(text && strstr(text, "copy") && strstr(text, "cpu timing") && strstr(text, "never GPU ceilings"), "%s",
              text);
    free(text);
    memset(&p, 0, sizeof p);
    CHECK(kb_ceilings_load("/nonexistent/kbench.db", &d, &p) == 0);
}

static kb_peaks test_gpu_peaks(void)
{
    kb_peaks p;
    memset(&p, 0, sizeof p);
    p.have_sheet = 1;
    p.sheet_tflops[KB_DT_FP16] = 1000;
    p.sheet_tflops[KB_DT_FP8E4M3] = 2000;
    p.sheet_gbps = 3000;
    return p;
}

/* fp8 GEMM on the widened path at 400 TFLOPS: 20% of the fp8 datasheet, 40% of f16's, and
 * against the measured widened mma rate once there is one. */
static void test_three_roofs_of_a_widened_fp8_gemm(void)
{
    double n = 4096;
    kb_work w = { .flops = 2 * n * n * n, .bytes_read = 2 * n * n, .bytes_written = n * n * 2 };
    double median = w.flops / 400e12 * 1e6;
    kb_path path;
    CHECK(kb_path_set(&path, "mma", KB_DT_FP8E4M3, 1) == 1 && !strcmp(path.kind, "mma/fp8e4m3/widened") &&
          path.dtype == KB_DT_FP16);
    kb_peaks p = test_gpu_peaks();
    kb_derived d;
    kb_derive(&w, median, &p, KB_DT_FP8E4M3, &d);
    kb_derive_roofs(&w, &p, &path, &d);
    CHECK(near(d.pct_roof, 20.0));
    CHECK(d.have_path && near(d.pct_path, 40.0) && !strcmp(d.path_source, "datasheet") && d.path_tflops == 1000);
    CHECK(!d.have_measured);   /* no ceilings run */

    kb_peaks_add_measured(&p, "copy", 2500);
    kb_peaks_add_measured(&p, "mma/fp8e4m3/widened", 500);
    kb_derive(&w, median, &p, KB_DT_FP8E4M3, &d);
    kb_derive_roofs(&w, &p, &path, &d);
    CHECK(d.have_path && near(d.pct_path, 80.0) && !strcmp(d.path_source, "measured"));
    CHECK(d.have_measured && near(d.measured_roof_tflops, 500) && near(d.pct_measured, 80.0) &&
          !strcmp(d.measured_source, "measured"));

    /* a path not measured: the measured bandwidth with the datasheet's compute ceiling */
    kb_path f16;
    kb_path_set(&f16, "mma", KB_DT_FP16, 0);
    kb_derive(&w, median, &p, KB_DT_FP16, &d);
    kb_derive_roofs(&w, &p, &f16, &d);
    CHECK(d.have_measured && near(d.measured_roof_tflops, 1000) &&
          !strcmp(d.measured_source, "measured bandwidth, datasheet compute"));
    CHECK(d.have_path && !strcmp(d.path_source, "datasheet"));
}

static void test_memory_bound_and_emulator(void)
{
    double n = 1 << 24;
    kb_work w = { .bytes_read = 4 * n, .bytes_written = 4 * n };   /* a copy: no flops */
    kb_peaks p = test_gpu_peaks();
    kb_peaks_add_measured(&p, "read", 2800);
    kb_derived d;
    kb_derive(&w, 8 * n / 1400e9 * 1e6, &p, KB_DT_FP32, &d);
    kb_derive_roofs(&w, &p, NULL, &d);
    CHECK(d.have_measured && near(d.pct_measured, 50.0) && near(d.pct_roof, 1400.0 / 30));
    CHECK(!d.have_path && d.path[0] == 0);

    /* the emulator: the path is named, no roof is scored */
    kb_peaks emu;
    memset(&emu, 0, sizeof emu);
    emu.no_roof = 1;
    kb_path path;
    kb_path_set(&path, "fma", KB_DT_FP32, 0);
    kb_work g = { .flops = 1e9, .bytes_read = 1e6 };
    kb_derive(&g, 1000, &emu, KB_DT_FP32, &d);
    kb_derive_roofs(&g, &emu, &path, &d);
    CHECK(!d.have_measured && !d.have_path && !strcmp(d.path, "fma/fp32"));
}

static void test_record_round_trip(void)
{
    double n = 4096;
    kb_work w = { .flops = 2 * n * n * n, .bytes_read = 2 * n * n, .bytes_written = n * n * 2 };
    kb_peaks p = test_gpu_peaks();
    kb_peaks_add_measured(&p, "copy", 2500);
    kb_peaks_add_measured(&p, "mma/fp8e4m3/widened", 500);
    kb_path path;
    kb_path_set(&path, "mma", KB_DT_FP8E4M3, 1);
    kb_case_result r;
    memset(&r, 0, sizeof r);
    r.derived.done = 1;
    r.measure.clock = "gpu";
    kb_derive(&w, w.flops / 400e12 * 1e6, &p, KB_DT_FP8E4M3, &r.derived.d);
    kb_derive_roofs(&w, &p, &path, &r.derived.d);
    kb_record_ctx ctx = { .run_id = "run", .time = "2026-01-01T00:00:00Z", .backend = "cuda" };
    json_t *rec = kb_record_json(&ctx, &r);
    CHECK(rec != NULL);
    json_t *dj = json_object_get(rec, "derived");
    CHECK(!strcmp(json_string_value(json_object_get(dj, "path")), "mma/fp8e4m3/widened"));
    CHECK(near(json_number_value(json_object_get(dj, "pct_path")), 80.0));
    CHECK(!strcmp(json_string_value(json_object_get(dj, "path_source")), "measured"));
    kb_derived back;
    CHECK(kb_record_derived(rec, &back) == 1);
    CHECK(back.have_path && near(back.pct_path, 80.0) && !strcmp(back.path, "mma/fp8e4m3/widened"));
    CHECK(back.have_measured && near(back.pct_measured, 80.0) && !strcmp(back.measured_source, "measured"));
    json_decref(rec);
}

int main(void)
{
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    snprintf(db_path, sizeof db_path, "%s/kbench.db", dir);
    RUN(test_view_keeps_the_best_per_kind);
    RUN(test_three_roofs_of_a_widened_fp8_gemm);
    RUN(test_memory_bound_and_emulator);
    RUN(test_record_round_trip);
    unlink(db_path);
    rmdir(dir);
    TEST_MAIN_END();
}
