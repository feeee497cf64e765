/* test_report_vendor.c - what the reports show of the vendor rows and the three roofs,
 * from a small run written here: the precision comparison puts, per shape and dtype, the
 * best kbench kernel beside the vendor row (the fastest of its ranks) and their ratio,
 * "n/a" with the vendor's reason where it was skipped; the case tables carry %roof, %meas
 * and %path; the roofline SVG draws the measured ceilings dashed beside the datasheet's;
 * CSV has the new columns. TEST-GPU and every number here are synthetic test inputs. */
#include "check.h"
#include "results/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[] = "/tmp/kb_test_report_vendor_XXXXXX";

#define DEV "\"device\":{\"name\":\"TEST-GPU\",\"uuid\":\"GPU-1\",\"pci_bus_id\":\"\",\"sm\":90,\"emulator\":false}"
#define GEMM_DIMS "\"dims\":{\"m\":4096,\"n\":4096,\"k\":4096}"
#define ATTN_DIMS "\"dims\":{\"b\":1,\"h\":32,\"s\":2048,\"d\":128}"

/* One record line: id, family, variant, dtype, dims, status, reason, median (0: none),
 * derived block text (or null). */
static void line(FILE *f, const char *id, const char *fam, const char *var, const char *dt, const char *dims,
                 const char *status, const char *reason, double median, const char *derived)
{
    fprintf(f, "{\"schema_version\":1,\"run_id\":\"vendor-run\",\"time\":\"2026-01-01T00:00:00Z\",\"case_id\":\"%s\","
               "\"family\":\"%s\",\"variant\":\"%s\",\"dtype\":\"%s\",%s,\"params\":{},\"pad\":0,\"launch\":\"eager\","
               "\"backend\":\"cuda\"," DEV ",\"status\":\"%s\",\"reason\":\"%s\",",
            id, fam, var, dt, dims, status, reason);
    if (median > 0)
        fprintf(f, "\"verify\":{\"n\":16,\"n_bad\":0,\"max_abs_err\":0.01,\"max_rel_err\":0.02},"
                   "\"timing\":{\"clock\":\"gpu\",\"samples\":20,\"median_us\":%g,\"cv\":0.01},", median);
    fprintf(f, "\"work\":{\"flops\":137438953472,\"bytes_read\":67108864,\"bytes_written\":33554432},"
               "\"derived\":%s}\n", derived ? derived : "null");
}

/* A derived block at t TFLOPS with all three roofs (synthetic values). */
static const char *roofs(double t, const char *path_kind, double path_tflops, const char *path_source, char *buf)
{
    snprintf(buf, 1024,
             "{\"clock\":\"gpu\",\"tflops\":%g,\"gbps\":500,\"ai\":1365,\"bound\":\"compute\",\"roof_tflops\":1000,"
             "\"pct_roof\":%g,\"peak_tflops\":1000,\"peak_gbps\":3000,\"peak_source\":\"datasheet\","
             "\"measured_gbps\":2800,\"measured_roof_tflops\":%g,\"pct_measured\":%g,\"measured_source\":\"measured\","
             "\"path\":\"%s\",\"path_tflops\":%g,\"pct_path\":%g,\"path_source\":\"%s\"}",
             t, t / 10, path_tflops, 100 * t / path_tflops, path_kind, path_tflops, 100 * t / path_tflops, path_source);
    return buf;
}

static char *render(kb_report_format fmt)
{
    kb_report_run run;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_report_run_load(path, NULL, &run, &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    char *text = NULL;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    CHECK(kb_report_write(&run, fmt, out) == KB_OK);
    fclose(out);
    kb_report_run_free(&run);
    return text;
}

static void write_run(void)
{
    char b[1024];
    FILE *f = fdopen(mkstemp(path), "w");
    CHECK(f != NULL);
    line(f, "gemm/mma/fp16/g", "gemm", "mma", "fp16", GEMM_DIMS, "ok", "", 200,
         roofs(687, "mma/fp16", 600, "measured", b));
    line(f, "gemm/cublaslt(algo=0)/fp16/g", "gemm", "cublaslt", "fp16", GEMM_DIMS, "ok", "", 160, NULL);
    line(f, "gemm/cublaslt(algo=1)/fp16/g", "gemm", "cublaslt", "fp16", GEMM_DIMS, "ok", "", 170, NULL);
    line(f, "gemm/mma/fp8e5m2/g", "gemm", "mma", "fp8e5m2", GEMM_DIMS, "ok", "", 150,
         roofs(916, "mma/fp8e5m2/widened", 550, "measured", b));
    line(f, "gemm/cublaslt/fp8e5m2/g", "gemm", "cublaslt", "fp8e5m2", GEMM_DIMS, "skipped",
         "cuBLASLt has no e5m2 x e5m2 matmul", 0, NULL);
    line(f, "attention/mma/fp16/a", "attention", "mma", "fp16", ATTN_DIMS, "ok", "", 900, NULL);
    line(f, "attention/cudnn/fp16/a", "attention", "cudnn", "fp16", ATTN_DIMS, "skipped", "cuDNN needs a GPU", 0, NULL);
    fclose(f);
}

static void test_precision_comparison_with_vendor_rows(void)
{
    char *md = render(KB_REPORT_MD);
    if (!md)
        return;
    CHECK(strstr(md, "| vendor median_us (clock) | kbench vs vendor |"));
    /* fp16: the best kbench kernel (200 us) beside cuBLASLt's best rank (160 us): 0.8x */
    CHECK_MSG(strstr(md, "| fp16 | tensor | gemm/mma/fp16/g | 200.0 (gpu) |") &&
              strstr(md, "| 160.0 (gpu) cublaslt | 0.8x |"), "%s", md);
    /* fp8e5m2: cuBLASLt skipped, with its reason; no ratio */
    CHECK(strstr(md, "| cublaslt skipped: cuBLASLt has no e5m2 x e5m2 matmul | n/a |"));
    /* attention: one dtype, but a vendor row was planned beside it: the group is kept */
    CHECK(strstr(md, "### attention 1x32x2048x128, pad 0, dist=uniform on TEST-GPU") &&
          strstr(md, "| cudnn skipped: cuDNN needs a GPU | n/a |"));
    /* the vendor rows are not kbench's best: cublaslt never appears in the case column */
    CHECK(!strstr(md, "| fp16 | tensor | gemm/cublaslt"));
    free(md);
}

static void test_three_roofs_in_the_tables(void)
{
    char *md = render(KB_REPORT_MD);
    if (!md)
        return;
    /* gemm/mma fp16: %roof 68.7, %meas 114.5 (687/600), %path the same */
    CHECK_MSG(strstr(md, "| 68.70 | 114.5 | 114.5 | compute |"), "%s", md);
    CHECK(strstr(md, "Measured ceilings (suites/ceilings.yaml on this device): memory 2800 GB/s; "
                     "mma/fp16 600.0 TFLOPS; "
                     "mma/fp8e5m2/widened 550.0 TFLOPS"));
    free(md);
    char *html = render(KB_REPORT_HTML);
    if (!html)
        return;
    CHECK(strstr(html, "<th>%meas</th><th>%path</th>"));
    CHECK(strstr(html, "class=\"measured-ceiling\"") && strstr(html, "measured mma/fp8e5m2/widened 550"));
    CHECK(strstr(html, "class=\"measured-bandwidth\""));
    CHECK(strstr(html, "of mma/fp16 (measured)"));
    free(html);
    char *csv = render(KB_REPORT_CSV);
    if (!csv)
        return;
    CHECK(strstr(csv, ",mma/fp8e5m2/widened,166.") && strstr(csv, ",550,measured,,,\r\n"));
    free(csv);
}

int main(void)
{
    write_run();
    RUN(test_precision_comparison_with_vendor_rows);
    RUN(test_three_roofs_in_the_tables);
    unlink(path);
    TEST_MAIN_END();
}
