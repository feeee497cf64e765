/* test_report_precision.c - the precision table from a small run written here (synthetic
 * TEST-GPU numbers): one table per shape and input distribution, a row per dtype and
 * scaling recipe with time, TFLOPS, speed-up over bf16 and the accuracy block's figures,
 * the vendor row of the same dtype and recipe; records before recipes count as per tensor
 * and uniform; `report --precision` writes only that table as markdown, HTML or CSV. */
#include "check.h"
#include "results/report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[] = "/tmp/kb_test_report_precision_XXXXXX";

#define DEV "\"device\":{\"name\":\"TEST-GPU\",\"uuid\":\"GPU-1\",\"pci_bus_id\":\"\",\"sm\":100,\"emulator\":false}"

/* One ok GEMM record at 256x512x1024: variant, dtype, params text, median [us], accuracy
 * block text (or "null"); status and reason for a vendor row that did not run. */
static void line(FILE *f, const char *var, const char *dt, const char *params, double median, const char *acc,
                 const char *status, const char *reason)
{
    static int id;
    fprintf(f, "{\"schema_version\":1,\"run_id\":\"prec-run\",\"time\":\"2026-01-01T00:00:00Z\",\"case_id\":\"gemm/%s/%s/%d\","
               "\"family\":\"gemm\",\"variant\":\"%s\",\"dtype\":\"%s\",\"dims\":{\"m\":256,\"n\":512,\"k\":1024},"
               "\"params\":{%s},\"pad\":0,\"launch\":\"eager\",\"backend\":\"cuda\"," DEV ",\"status\":\"%s\","
               "\"reason\":\"%s\",\"accuracy\":%s,",
            var, dt, id++, var, dt, params, status, reason, acc);
    if (median > 0)
        fprintf(f, "\"verify\":{\"n\":16,\"n_bad\":0,\"max_abs_err\":0.01,\"max_rel_err\":0.02},"
                   "\"timing\":{\"clock\":\"gpu\",\"samples\":20,\"median_us\":%g,\"cv\":0.01},", median);
    fprintf(f, "\"work\":{\"flops\":268435456,\"bytes_read\":1,\"bytes_written\":1},\"derived\":null}\n");
}

#define ACC(fro, snr, mx) "{\"n\":16,\"rel_fro_err\":" #fro ",\"max_rel_err\":" #mx ",\"snr_db\":" #snr "}"

static void write_run(void)
{
    FILE *f = fdopen(mkstemp(path), "w");
    CHECK(f != NULL);
    if (!f)
        return;
    const char *out = "\"scale\":\"tensor\",\"dist\":\"outliers\"";
    line(f, "mma", "bf16", out, 100, ACC(0.004, 48.0, 0.01), "ok", "");
    line(f, "mma", "fp8e4m3", out, 60, ACC(0.05, 26.0, 0.12), "ok", "");
    line(f, "mma", "fp8e4m3", "\"scale\":\"block128x128\",\"dist\":\"outliers\"", 64, ACC(0.03, 30.5, 0.08), "ok", "");
    line(f, "mma", "fp4e2m1", "\"scale\":\"nv\",\"dist\":\"outliers\"", 40, ACC(0.2, 14.0, 0.5), "ok", "");
    line(f, "cublaslt", "fp4e2m1", "\"scale\":\"nv\",\"dist\":\"outliers\"", 25, "null", "ok", "");
    line(f, "cublaslt", "fp8e4m3", "\"scale\":\"block128x128\",\"dist\":\"outliers\"", 0, "null", "skipped",
         "cuBLASLt heuristic: no algorithm");
    /* the same shape, another distribution: its own table; an exact result (snr null) */
    line(f, "mma", "bf16", "\"scale\":\"tensor\",\"dist\":\"normal\"", 100, ACC(0.0, null, 0.0), "ok", "");
    line(f, "mma", "fp8e4m3", "\"scale\":\"mx\",\"dist\":\"normal\"", 55, ACC(0.04, 28.0, 0.1), "ok", "");
    /* a record before recipes: per tensor, uniform */
    line(f, "mma", "fp16", "", 90, "null", "ok", "");
    line(f, "mma", "int8", "", 50, "null", "ok", "");
    fclose(f);
}

static char *render(kb_report_format fmt, int precision)
{
    kb_report_run run;
    kb_sb err;
    kb_sb_init(&err);
    CHECK_MSG(kb_report_run_load(path, NULL, &run, &err) == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    char *text = NULL;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    kb_status st = kb_report_write_section(&run, fmt, precision ? KB_SECTION_PRECISION : KB_SECTION_ALL, out);
    CHECK(st == KB_OK);
    fclose(out);
    kb_report_run_free(&run);
    return text;
}

static void test_groups_by_shape_and_distribution(void)
{
    kb_report_run run;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_report_run_load(path, NULL, &run, &err) == KB_OK);
    kb_sb_free(&err);
    kb_precision_group *g;
    int n = kb_report_precision_groups(&run, &g);
    CHECK_MSG(n == 3, "%d groups", n);
    if (n == 3) {
        CHECK(!strcmp(run.rows[g[0].first].dist, "outliers") && !strcmp(run.rows[g[1].first].dist, "normal") &&
              !strcmp(run.rows[g[2].first].dist, "uniform"));
        CHECK(g[0].rows[KB_DT_FP8E4M3][KB_RECIPE_TENSOR] == 1 && g[0].rows[KB_DT_FP8E4M3][KB_RECIPE_BLOCK128X128] == 2);
        CHECK(g[0].vendor[KB_DT_FP4E2M1][KB_RECIPE_NV] == 4 && g[0].vendor[KB_DT_FP8E4M3][KB_RECIPE_BLOCK128X128] == 5);
        CHECK(g[0].vendor[KB_DT_FP8E4M3][KB_RECIPE_TENSOR] < 0);   /* no vendor row of that recipe */
        CHECK(g[2].rows[KB_DT_FP16][KB_RECIPE_TENSOR] == 8 && g[2].rows[KB_DT_INT8][KB_RECIPE_TENSOR] == 9);
        CHECK(run.rows[1].have_acc && run.rows[1].acc_snr_db == 26.0 && run.rows[6].acc_rel_fro == 0.0);
    }
    free(g);
    kb_report_run_free(&run);
}

static void test_markdown_table(void)
{
    char *md = render(KB_REPORT_MD, 0);
    if (!md)
        return;
    CHECK(strstr(md, "### gemm 256x512x1024, pad 0, dist=outliers on TEST-GPU") &&
          strstr(md, "### gemm 256x512x1024, pad 0, dist=normal on TEST-GPU"));
    CHECK(strstr(md, "| dtype | recipe | case | median_us (clock) | TFLOPS | speed-up vs bf16 | rel. Frobenius err | "
                     "SNR dB | max rel err | vendor median_us (clock) | kbench vs vendor |"));
    /* per tensor vs block-scaled fp8 under outliers, side by side with their accuracy */
    CHECK_MSG(strstr(md, "| fp8e4m3 | tensor | gemm/mma/fp8e4m3/1 | 60.00 (gpu) | 4.474 | 1.667x | 0.05 | 26.0 | 0.12 | n/a |"),
              "%s", md);
    CHECK(strstr(md, "| fp8e4m3 | block128x128 | gemm/mma/fp8e4m3/2 | 64.00 (gpu) | 4.194 | 1.562x | 0.03 | 30.5 | 0.08 | "
                     "cublaslt skipped: cuBLASLt heuristic: no algorithm | n/a |"));
    CHECK(strstr(md, "| fp4e2m1 | nv | gemm/mma/fp4e2m1/3 | 40.00 (gpu) | 6.711 | 2.500x | 0.2 | 14.0 | 0.5 | 25.00 (gpu) cublaslt "
                     "| 0.625x |"));
    CHECK(strstr(md, "| bf16 | tensor | gemm/mma/bf16/6 | 100.0 (gpu) | 2.684 | 1.000x | 0 | inf | 0 |"));
    CHECK(strstr(md, "| int8 | tensor | gemm/mma/int8/9 | 50.00 (gpu) | 5.369 | n/a |  |  |  |"));   /* no bf16 row there */
    free(md);
}

/* report --precision (--section precision): the table alone, in each format it comes in; other formats refused. */
static void test_precision_only(void)
{
    char *md = render(KB_REPORT_MD, 1);
    if (md) {
        CHECK(strstr(md, "# kbench report: prec-run") && strstr(md, "dist=outliers"));
        CHECK(!strstr(md, "| case | status |") && !strstr(md, "## TEST-GPU"));
        free(md);
    }
    char *html = render(KB_REPORT_HTML, 1);
    if (html) {
        CHECK(strstr(html, "<h1>kbench report: prec-run</h1>") && strstr(html, "data-chart=\"precision\""));
        CHECK(strstr(html, "<td>26.0</td>") && !strstr(html, "class=\"sortable\""));
        free(html);
    }
    char *csv = render(KB_REPORT_CSV, 1);
    if (csv) {
        CHECK(!strncmp(csv, "family,dims,dist,device,dtype,recipe,case,", 42));
        CHECK(strstr(csv, "gemm,256x512x1024,outliers,TEST-GPU,fp4e2m1,nv,gemm/mma/fp4e2m1/3,40.00 (gpu),6.711,2.500x,0.2,14.0,"));
        free(csv);
    }
    kb_report_run run;
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_report_run_load(path, NULL, &run, &err) == KB_OK);
    kb_sb_free(&err);
    FILE *out = fopen("/dev/null", "w");
    CHECK(kb_report_write_section(&run, KB_REPORT_JUNIT, KB_SECTION_PRECISION, out) == KB_ERR_INPUT);
    fclose(out);
    kb_report_run_free(&run);
}

int main(void)
{
    write_run();
    RUN(test_groups_by_shape_and_distribution);
    RUN(test_markdown_table);
    RUN(test_precision_only);
    unlink(path);
    TEST_MAIN_END();
}
