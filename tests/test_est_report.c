/* test_est_report.c - `kbench estimate`'s output (harness/estimate/est_select.h,
 * est_report.h, est_table.h) from hand-made rows: --top N by time and by % of roofline,
 * the per-family summary (cases, total, median % of roofline, dominant limit), text whose
 * columns are aligned and whose roof columns appear only where a row has a figure, JSON
 * that parses with "estimate": true at the top, in every row and every summary entry, and
 * CSV whose every row reads ESTIMATE and has the header's field count. The estimates are
 * synthetic inputs, not model output. */
#include "check.h"
#include "estimate/est_report.h"
#include "kernels/families.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

/* s begins with lit */
static int starts(const char *s, const char *lit) { return strncmp(s, lit, strlen(lit)) == 0; }

#define PEAKS_FILE "data/peaks.json" /* tests run from the repository root */

static kb_peaks peaks;
static kb_est_target target;
static kb_est_rows rows;

/* A row of family fam (variant 0) estimated at us, pct % of roofline, limited by lim. */
static void add(const char *fam, const char *id, double us, double pct, kb_est_roof lim, kb_est_row_status st)
{
    kb_est_row *r = &rows.rows[rows.n++];
    memset(r, 0, sizeof *r);
    r->id = strdup(id);
    r->c.family = kb_family_find(fam);
    r->c.variant = 0;
    r->c.dtype = KB_DT_BF16;
    for (int p = 0; p < kb_families[r->c.family]->n_params; p++)
        r->c.params[p] = kb_families[r->c.family]->params[p].def;
    r->status = st;
    r->regs = 64;
    snprintf(r->why, sizeof r->why, "%s", st == KB_EST_ROW_OK ? "" : "cuBLASLt needs a GPU");
    r->e.est_us = us, r->e.pct_roofline = pct, r->e.limit = lim, r->e.roof_us[lim] = us - 2.6;
    r->e.roof_us[KB_ROOF_LAUNCH] = 2.6, r->e.sm_use = r->e.imbalance = 1, r->e.modelled = 1;
    r->e.occ.blocks = 2, r->e.occ.limit = "registers", r->e.tensor_calibrated = 1;
}

static void setup(void)
{
    kb_sb err;
    kb_sb_init(&err);
    const kb_est_gpu *g = kb_est_gpu_find("h100-sxm");
    CHECK_MSG(kb_est_gpu_peaks(g, PEAKS_FILE, &peaks, &err) == KB_OK, "%s", err.s);
    kb_est_target_init(&target, g, &peaks);
    kb_sb_free(&err);
    rows.cap = 8;
    rows.rows = calloc(rows.cap, sizeof *rows.rows);
    add("gemm", "gemm/mma(layout=nt,BM=128)/bf16/2048x12288x4096/pad0/eager", 350.0, 60.0, KB_ROOF_TENSOR,
        KB_EST_ROW_OK);
    add("gemm", "gemm/mma(layout=nt,BM=64)/bf16/2048x12288x4096/pad0/eager", 700.0, 30.0, KB_ROOF_L2, KB_EST_ROW_OK);
    add("attention", "attention/fa2(causal=yes)/bf16/1x32x2048x128/pad0/eager", 100.0, 33.0, KB_ROOF_PIPES,
        KB_EST_ROW_OK);
    add("gemm", "gemm/mma(layout=nt,BM=32)/bf16/16x4096x4096/pad0/eager", 14.0, 70.0, KB_ROOF_DRAM, KB_EST_ROW_OK);
    add("gemm", "gemm/cublaslt(layout=nt)/bf16/2048x12288x4096/pad0/eager", 0, 0, KB_ROOF_TENSOR, KB_EST_ROW_SKIPPED);
    add("gemm", "gemm/cublaslt(layout=nt)/fp16/2048x12288x4096/pad0/eager", 0, 0, KB_ROOF_TENSOR, KB_EST_ROW_SKIPPED);
}

static kb_est_report_opts opts(kb_est_format f, kb_est_sort s, int top)
{
    return (kb_est_report_opts){ &target, 90, "", f, s, top, 0 };
}

static void test_select_and_summary(void)
{
    size_t *idx;
    kb_est_report_opts o = opts(KB_EST_TEXT, KB_EST_SORT_PLAN, 2); /* --top without --sort: the slowest */
    CHECK(kb_est_select(&rows, &o, &idx) == 2 && idx[0] == 1 && idx[1] == 0);
    free(idx);
    o.sort = KB_EST_SORT_ROOF; /* the furthest from their roofline */
    CHECK(kb_est_select(&rows, &o, &idx) == 2 && idx[0] == 1 && idx[1] == 2);
    free(idx);
    o = opts(KB_EST_TEXT, KB_EST_SORT_PLAN, 0); /* every estimated row, plan order */
    CHECK(kb_est_select(&rows, &o, &idx) == 4 && idx[0] == 0 && idx[3] == 3);
    free(idx);
    kb_est_family_sum *s;
    CHECK(kb_est_summarise(&rows, &s) == 2);
    CHECK(s[0].family == kb_family_find("gemm") && s[0].cases == 3 && s[0].total_us == 1064.0 &&
          s[0].median_pct == 60.0);
    CHECK(s[0].dominant == KB_ROOF_L2 && s[0].dominant_share > 65 && s[0].dominant_share < 66);
    CHECK(s[1].cases == 1 && s[1].dominant == KB_ROOF_PIPES && s[1].median_pct == 33.0);
    free(s);
    CHECK(kb_est_name_index(kb_est_format_names, "csv") == KB_EST_CSV && kb_est_name_index(kb_est_sort_names, "x") < 0);
}

static char *render(const kb_est_report_opts *o)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(kb_est_report(&rows, o, f) == KB_OK);
    fclose(f);
    return buf;
}

static void test_text(void)
{
    kb_est_report_opts o = opts(KB_EST_TEXT, KB_EST_SORT_PLAN, 0);
    char *t = render(&o);
    CHECK(t && starts(t, "ESTIMATE: static model, NOT a measurement") && strstr(t, "datasheet x 0.866"));
    /* the table: from its header line to the first blank-or-"not" line, every line one length */
    char *head = t ? strstr(t, "\ncase ") : NULL;
    CHECK(head != NULL);
    size_t width = 0;
    int lines = 0;
    for (char *l = head ? head + 1 : NULL; l && *l && !starts(l, "not estimated"); lines++) {
        char *end = strchr(l, '\n');
        size_t w = end ? (size_t)(end - l) : strlen(l);
        CHECK_MSG(!width || w == width, "line %d is %zu wide, the header %zu", lines, w, width);
        width = width ? width : w;
        l = end ? end + 1 : NULL;
    }
    CHECK(lines == 5);
    /* roof columns with a figure in some row only: tensor, l2, pipes, dram, launch; no simt, no smem */
    CHECK(head && strstr(head, "tensor_us") && strstr(head, "pipes_us") && strstr(head, "launch_us"));
    CHECK(head && !strstr(head, "simt_us") && !strstr(head, "smem_us") && !strstr(head, "note"));
    CHECK(t && strstr(t, "not estimated: 2 skipped: cuBLASLt needs a GPU"));
    CHECK(t && strstr(t, "ESTIMATE per family") && strstr(t, "gemm ") && strstr(t, "l2 (66%)"));
    free(t);
    o = opts(KB_EST_TEXT, KB_EST_SORT_TIME, 1);
    t = render(&o);
    CHECK(t && strstr(t, "the 1 slowest") && strstr(t, "BM=64") && !strstr(t, "BM=128)"));
    free(t);
}

static void test_json(void)
{
    kb_est_report_opts o = opts(KB_EST_JSON, KB_EST_SORT_ROOF, 3);
    char *t = render(&o);
    json_error_t e;
    json_t *j = t ? json_loads(t, 0, &e) : NULL;
    CHECK_MSG(j != NULL, "%s", t ? e.text : "no output");
    CHECK(json_is_true(json_object_get(j, "estimate")));
    json_t *list = json_object_get(j, "rows"), *v;
    size_t i;
    CHECK(json_array_size(list) == 3);
    json_array_foreach(list, i, v)
        CHECK(json_is_true(json_object_get(v, "estimate")) && json_is_object(json_object_get(v, "dims")));
    CHECK(!strcmp(json_string_value(json_object_get(json_array_get(list, 0), "limit")), "l2"));
    CHECK(json_array_size(json_object_get(j, "not_estimated")) == 2);
    json_array_foreach(json_object_get(j, "summary"), i, v) CHECK(json_is_true(json_object_get(v, "estimate")));
    CHECK(json_array_size(json_object_get(j, "summary")) == 2);
    CHECK(!strcmp(json_string_value(json_object_get(json_object_get(j, "target"), "gpu")), "h100-sxm"));
    json_decref(j);
    free(t);
}

/* Fields of one CSV line (quoted commas do not count). */
static int csv_fields(const char *l)
{
    int n = 1, q = 0;
    for (; *l && *l != '\n'; l++) {
        if (*l == '"')
            q = !q;
        else if (*l == ',' && !q)
            n++;
    }
    return n;
}

static void test_csv(void)
{
    kb_est_report_opts o = opts(KB_EST_CSV, KB_EST_SORT_PLAN, 0);
    char *t = render(&o);
    CHECK(t && starts(t, "estimate,gpu,case_id,"));
    int head = t ? csv_fields(t) : 0, n = 0;
    for (char *l = t ? strchr(t, '\n') + 1 : NULL; l && *l; n++) {
        CHECK(starts(l, "ESTIMATE,h100-sxm,\"gemm/mma(layout=nt,") ||
              starts(l, "ESTIMATE,h100-sxm,attention/fa2(causal=yes)/")); /* no comma: unquoted */
        CHECK(csv_fields(l) == head);
        l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL;
    }
    CHECK(n == 4 && head == 15 + KB_ROOF_COUNT + 1);
    free(t);
}

int main(void)
{
    setup();
    RUN(test_select_and_summary);
    RUN(test_text);
    RUN(test_json);
    RUN(test_csv);
    for (size_t i = 0; i < rows.n; i++)
        free(rows.rows[i].id);
    free(rows.rows);
    TEST_MAIN_END();
}
