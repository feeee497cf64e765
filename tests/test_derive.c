/* test_derive.c - rates and roofline position for each kind of work model (GEMM-like
 * compute-bound, elementwise memory-bound, zero-flop), the emulator (rates without
 * ceilings), degenerate times, and the record's "derived" block. */
#include "check.h"
#include "engine/derive.h"
#include "results/record_json.h"

#include <math.h>
#include <string.h>

static int near(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b); }

/* Ceilings of an H100 SXM5 as the datasheet gives them (docs/references.md). */
static kb_peaks h100_sheet(void)
{
    kb_peaks p;
    memset(&p, 0, sizeof p);
    strcpy(p.device, "NVIDIA H100 80GB HBM3");
    p.have_sheet = 1;
    p.sheet_tflops[KB_DT_FP32] = 66.9;
    p.sheet_tflops[KB_DT_FP16] = 989.4;
    p.sheet_tflops[KB_DT_BF16] = 989.4;
    p.sheet_gbps = 3350;
    return p;
}

static void test_gemm_compute_bound(void)
{
    /* fp16 GEMM 4096^3: 2*M*N*K flops; A, B read and C written once, 2 bytes each */
    double n = 4096;
    kb_work w = { .flops = 2 * n * n * n, .bytes_read = 2 * n * n * 2, .bytes_written = n * n * 2 };
    kb_peaks p = h100_sheet();
    kb_derived d;
    kb_derive(&w, 200.0, &p, KB_DT_FP16, &d);
    CHECK(d.have_rates && d.have_roof);
    CHECK(near(d.tflops, 137438953472.0 / 200e-6 / 1e12, 1e-12));   /* 687.19 */
    CHECK(near(d.gbps, 100663296.0 / 200e-6 / 1e9, 1e-12));         /* 503.3 */
    CHECK(near(d.ai, 4096.0 / 3, 1e-12));                           /* 2n^3 / 6n^2 */
    CHECK(d.bound == KB_BOUND_COMPUTE);
    CHECK(d.roof_tflops == 989.4 && d.peak_tflops == 989.4 && d.peak_gbps == 3350);
    CHECK(near(d.pct_roof, 100 * d.tflops / 989.4, 1e-12));         /* 69.45 % */
    CHECK(strcmp(d.peak_source, "datasheet") == 0);
    CHECK(strcmp(kb_bound_name(d.bound), "compute") == 0);
}

static void test_elementwise_memory_bound(void)
{
    /* fp32 GELU over 2^24 elements: ~8 flops per element, 4 bytes in and 4 out */
    double n = 16777216;
    kb_work w = { .flops = 8 * n, .bytes_read = 4 * n, .bytes_written = 4 * n };
    kb_peaks p = h100_sheet();
    kb_derived d;
    kb_derive(&w, 100.0, &p, KB_DT_FP32, &d);
    CHECK(d.ai == 1.0);
    CHECK(near(d.gbps, 8 * n / 100e-6 / 1e9, 1e-12));             /* 1342 GB/s */
    CHECK(d.bound == KB_BOUND_MEMORY);
    CHECK(near(d.roof_tflops, 1.0 * 3350 / 1e3, 1e-12));          /* AI x bandwidth */
    CHECK(near(d.pct_roof, 100 * d.gbps / 3350, 1e-12));
    CHECK(near(d.pct_roof, 100 * d.tflops / d.roof_tflops, 1e-9)); /* the same thing, said twice */
    /* the ridge point decides: AI just below peak/bw is memory-bound, above compute */
    double ridge = 66.9e3 / 3350;                                 /* FLOP/byte */
    kb_work below = { .flops = (ridge * 0.99) * 1e6, .bytes_read = 1e6 };
    kb_work above = { .flops = (ridge * 1.01) * 1e6, .bytes_read = 1e6 };
    kb_derive(&below, 10, &p, KB_DT_FP32, &d);
    CHECK(d.bound == KB_BOUND_MEMORY && d.roof_tflops < 66.9);
    kb_derive(&above, 10, &p, KB_DT_FP32, &d);
    CHECK(d.bound == KB_BOUND_COMPUTE && d.roof_tflops == 66.9);
}

static void test_zero_flops(void)
{
    /* embedding gather: no arithmetic at all */
    kb_work w = { .flops = 0, .bytes_read = 4096.0 * 1024 * 2 + 4096 * 4, .bytes_written = 4096.0 * 1024 * 2 };
    kb_peaks p = h100_sheet();
    kb_derived d;
    kb_derive(&w, 10.0, &p, KB_DT_BF16, &d);
    CHECK(d.have_rates && d.tflops == 0 && d.ai == 0);
    CHECK(d.bound == KB_BOUND_MEMORY && d.have_roof);
    CHECK(d.roof_tflops == 0 && isfinite(d.pct_roof));
    CHECK(near(d.pct_roof, 100 * d.gbps / 3350, 1e-12));
    /* without peaks, and with no bytes either: still no NaN anywhere */
    kb_work none = { 0 };
    kb_derive(&none, 10.0, NULL, KB_DT_FP32, &d);
    CHECK(d.have_rates && d.tflops == 0 && d.gbps == 0 && d.ai == 0 && !d.have_roof);
    CHECK(d.bound == KB_BOUND_MEMORY);
    /* a dtype the GPU has no figure for still gets a roof when there are no flops */
    kb_derive(&w, 10.0, &p, KB_DT_FP8E4M3, &d);
    CHECK(d.have_roof && d.bound == KB_BOUND_MEMORY);
}

static void test_no_ceiling(void)
{
    double n = 1024;
    kb_work w = { .flops = 2 * n * n * n, .bytes_read = 2 * n * n * 4, .bytes_written = n * n * 4 };
    /* the emulator: CPU rates kept, no roofline, no bound claimed */
    kb_peaks emu;
    memset(&emu, 0, sizeof emu);
    emu.no_roof = 1;
    emu.sheet_gbps = 3350;          /* even with stray numbers: the emulator never gets a ceiling */
    emu.sheet_tflops[KB_DT_FP32] = 66.9;
    kb_derived d;
    kb_derive(&w, 5000.0, &emu, KB_DT_FP32, &d);
    CHECK(d.have_rates && near(d.tflops, 2 * n * n * n / 5000e-6 / 1e12, 1e-12));
    CHECK(!d.have_roof && d.bound == KB_BOUND_UNKNOWN && d.peak_source == NULL);
    kb_derive(&w, 5000.0, NULL, KB_DT_FP32, &d);
    CHECK(d.have_rates && !d.have_roof && d.bound == KB_BOUND_UNKNOWN);
    /* a GPU peak for bandwidth but none for the dtype: no roofline for a computing case */
    kb_peaks p = h100_sheet();
    kb_derive(&w, 50.0, &p, KB_DT_FP8E4M3, &d);
    CHECK(d.have_rates && !d.have_roof && d.bound == KB_BOUND_UNKNOWN);
    /* a clock-based ceiling names its source */
    memset(&p, 0, sizeof p);
    p.clock_tflops[KB_DT_FP32] = 60;
    p.clock_gbps = 3000;
    kb_derive(&w, 50.0, &p, KB_DT_FP32, &d);
    CHECK(d.have_roof && strcmp(d.peak_source, "clock") == 0 && d.peak_tflops == 60);
}

static void test_bad_median(void)
{
    kb_work w = { .flops = 1e9, .bytes_read = 1e6 };
    kb_peaks p = h100_sheet();
    kb_derived d;
    double medians[] = { 0.0, -1.0, NAN, INFINITY };
    for (int i = 0; i < 4; i++) {
        kb_derive(&w, medians[i], &p, KB_DT_FP32, &d);
        CHECK(!d.have_rates && !d.have_roof && d.tflops == 0 && d.pct_roof == 0);
    }
}

static double jnum(json_t *o, const char *k) { return json_number_value(json_object_get(o, k)); }

static void test_record_block(void)
{
    kb_case_result r;
    memset(&r, 0, sizeof r);
    kb_record_ctx ctx = { .run_id = "run-test", .time = "2026-01-31T12:00:00Z", .backend = "cuda", .dev = NULL };
    r.case_id = "gemm/test/fp16/4096x4096x4096/pad0/eager";
    r.status = KB_CASE_OK;
    r.measure.done = 1;
    r.measure.clock = "gpu";
    r.measure.m.st.median = 200;
    r.measure.m.n = 1;
    double n = 4096;
    r.work = (kb_work){ .flops = 2 * n * n * n, .bytes_read = 4 * n * n, .bytes_written = 2 * n * n };
    kb_peaks p = h100_sheet();
    kb_derive(&r.work, 200, &p, KB_DT_FP16, &r.derived.d);
    r.derived.done = 1;
    json_t *o = kb_record_json(&ctx, &r);
    CHECK(o != NULL);
    if (!o) return;
    json_t *d = json_object_get(o, "derived");
    CHECK(json_is_object(d));
    CHECK(strcmp(json_string_value(json_object_get(d, "clock")), "gpu") == 0);
    CHECK(jnum(d, "tflops") == r.derived.d.tflops && jnum(d, "gbps") == r.derived.d.gbps);
    CHECK(jnum(d, "ai") == r.derived.d.ai && jnum(d, "roof_tflops") == 989.4);
    CHECK(jnum(d, "pct_roof") == r.derived.d.pct_roof && jnum(d, "peak_gbps") == 3350);
    CHECK(strcmp(json_string_value(json_object_get(d, "bound")), "compute") == 0);
    CHECK(strcmp(json_string_value(json_object_get(d, "peak_source")), "datasheet") == 0);
    /* read back */
    kb_derived back;
    CHECK(kb_record_derived(o, &back) == 1);
    CHECK(back.tflops == r.derived.d.tflops && back.pct_roof == r.derived.d.pct_roof);
    CHECK(back.have_roof && back.bound == KB_BOUND_COMPUTE && strcmp(back.peak_source, "datasheet") == 0);
    json_decref(o);

    /* the emulator: the rates are labelled cpu, the roofline fields are null */
    r.measure.clock = "cpu";
    r.measure.m.st.median = 9000;
    kb_derive(&r.work, 9000.0, NULL, KB_DT_FP16, &r.derived.d);
    o = kb_record_json(&ctx, &r);
    d = json_object_get(o, "derived");
    CHECK(strcmp(json_string_value(json_object_get(d, "clock")), "cpu") == 0);
    CHECK(jnum(d, "tflops") > 0);
    CHECK(json_is_null(json_object_get(d, "roof_tflops")) && json_is_null(json_object_get(d, "pct_roof")));
    CHECK(json_is_null(json_object_get(d, "bound")) && json_is_null(json_object_get(d, "peak_source")));
    CHECK(kb_record_derived(o, &back) == 1 && !back.have_roof && back.bound == KB_BOUND_UNKNOWN);

    /* a record without the block (older writer): the rates are derived from work + timing */
    json_object_del(o, "derived");
    CHECK(kb_record_derived(o, &back) == 1);
    CHECK(near(back.tflops, 2 * n * n * n / 9000e-6 / 1e12, 1e-12) && !back.have_roof);
    json_object_set_new(o, "timing", json_null());
    CHECK(kb_record_derived(o, &back) == 0);
    json_decref(o);

    /* no derived block asked for: null */
    r.derived.done = 0;
    o = kb_record_json(&ctx, &r);
    CHECK(json_is_null(json_object_get(o, "derived")));
    json_decref(o);
}

int main(void)
{
    RUN(test_gemm_compute_bound);
    RUN(test_elementwise_memory_bound);
    RUN(test_zero_flops);
    RUN(test_no_ceiling);
    RUN(test_bad_median);
    RUN(test_record_block);
    TEST_MAIN_END();
}
