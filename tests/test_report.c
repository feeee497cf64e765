/* test_report.c - every report format produced from the recorded runs in tests/data
 * (a TEST-GPU run of invented numbers and an emulator run) and read back: markdown
 * tables, CSV by an RFC 4180 reader, HTML and JUnit by a well-formedness checker (and
 * xmllint when installed), Google Benchmark JSON by jansson; run ids found in a
 * results folder; the `kbench report` command's options and exit codes. */
#include "check.h"
#include "quiet.h"
#include "results/report.h"
#include "cli/report_cmd.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_GPU "tests/data/run_gpu.jsonl"
#define RUN_EMU "tests/data/run_emu.jsonl"
#define RUN_B_ID "test-gpu-b-20260103T000000Z-1"
#define FAULT_REASON "CUDA_ERROR_ILLEGAL_ADDRESS: \"an illegal memory access was encountered\""

static char dir[64];

static int load(const char *path, kb_report_run *run)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_report_run_load(path, NULL, run, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    return st == KB_OK;
}

/* The report of path in format f as a malloc'ed string. */
static char *render(const char *path, kb_report_format f)
{
    kb_report_run run;
    if (!load(path, &run)) return NULL;
    char *text = NULL;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    CHECK(kb_report_write(&run, f, out) == KB_OK);
    fclose(out);
    kb_report_run_free(&run);
    return text;
}

static int count(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, what)); p += strlen(what)) n++;
    return n;
}

/* ---- a small XML checker: tags balanced and properly nested, attributes quoted,
 * '&' only in entities, no raw '<' in text or attributes, no control characters ---- */
static int xml_well_formed(const char *s, char *why, size_t whylen)
{
    char stack[64][32];
    int depth = 0, roots = 0;
    const char *p = s;
    while (*p) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') {
            snprintf(why, whylen, "control character 0x%02x at %ld", c, (long)(p - s));
            return 0;
        }
        if (c == '&') {
            const char *e = p + 1;
            while (isalnum((unsigned char)*e) || *e == '#') e++;
            if (*e != ';' || e == p + 1) { snprintf(why, whylen, "bare & at %ld", (long)(p - s)); return 0; }
            p = e + 1;
            continue;
        }
        if (c == '>') { snprintf(why, whylen, "bare > at %ld", (long)(p - s)); return 0; }
        if (c != '<') { p++; continue; }
        if (strncmp(p, "<?", 2) == 0) { p = strstr(p, "?>"); if (!p) return 0; p += 2; continue; }
        if (strncmp(p, "<!--", 4) == 0) { p = strstr(p, "-->"); if (!p) return 0; p += 3; continue; }
        if (strncmp(p, "<!DOCTYPE", 9) == 0) { p = strchr(p, '>'); if (!p) return 0; p++; continue; }
        int closing = p[1] == '/';
        const char *n = p + 1 + closing;
        size_t nl = 0;
        while (isalnum((unsigned char)n[nl]) || n[nl] == '-' || n[nl] == ':' || n[nl] == '_') nl++;
        if (nl == 0 || nl >= 32) { snprintf(why, whylen, "bad tag name at %ld", (long)(p - s)); return 0; }
        const char *q = n + nl;
        /* attributes: name="value" with no '<' inside the value */
        while (*q && *q != '>' && !(q[0] == '/' && q[1] == '>')) {
            if (isspace((unsigned char)*q)) { q++; continue; }
            while (isalnum((unsigned char)*q) || *q == '-' || *q == ':' || *q == '_') q++;
            if (*q != '=' || q[1] != '"') { snprintf(why, whylen, "unquoted attribute at %ld", (long)(q - s)); return 0; }
            q += 2;
            while (*q && *q != '"') {
                if (*q == '<') { snprintf(why, whylen, "< in attribute at %ld", (long)(q - s)); return 0; }
                q++;
            }
            if (!*q) return 0;
            q++;
        }
        if (!*q) { snprintf(why, whylen, "unterminated tag"); return 0; }
        int self_closing = q[0] == '/';
        p = q + (self_closing ? 2 : 1);
        if (closing) {
            if (depth == 0 || strlen(stack[depth - 1]) != nl || strncmp(stack[depth - 1], n, nl) != 0) {
                snprintf(why, whylen, "</%.*s> does not close <%s>", (int)nl, n, depth ? stack[depth - 1] : "(none)");
                return 0;
            }
            depth--;
        } else if (!self_closing) {
            if (depth == 0) roots++;
            if (depth == 64) { snprintf(why, whylen, "too deep"); return 0; }
            memcpy(stack[depth], n, nl);
            stack[depth++][nl] = 0;
        }
    }
    if (depth) { snprintf(why, whylen, "<%s> never closed", stack[depth - 1]); return 0; }
    if (roots != 1) { snprintf(why, whylen, "%d root elements", roots); return 0; }
    return 1;
}

/* When xmllint is installed, let it have the last word too. */
static void xmllint_if_there(const char *text, const char *name)
{
    if (system("command -v xmllint >/dev/null 2>&1") != 0)
        return;
    char path[128], cmd[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fputs(text, f);
    fclose(f);
    snprintf(cmd, sizeof cmd, "xmllint --noout %s", path);
    CHECK_MSG(system(cmd) == 0, "xmllint rejects %s", path);
}

static void test_checker_catches_errors(void)
{
    char why[128];
    CHECK(xml_well_formed("<a><b x=\"1\"/>t &amp; u</a>", why, sizeof why));
    CHECK(!xml_well_formed("<a><b></a></b>", why, sizeof why));
    CHECK(!xml_well_formed("<a>x & y</a>", why, sizeof why));
    CHECK(!xml_well_formed("<a x=\"<\"></a>", why, sizeof why));
    CHECK(!xml_well_formed("<a>\x01</a>", why, sizeof why));
    CHECK(!xml_well_formed("<a>", why, sizeof why));
}

static void test_load_and_groups(void)
{
    kb_report_run run;
    if (!load(RUN_GPU, &run)) return;
    CHECK(run.n == 19 && run.n_devs == 1 && strcmp(run.devs[0].name, "TEST-GPU") == 0 && !run.devs[0].emulator);
    CHECK(strcmp(run.run_id, "test-gpu-a-20260102T000000Z-1") == 0);
    int ok = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < run.n; i++) {
        ok += run.rows[i].ok;
        failed += run.rows[i].failed;
        skipped += run.rows[i].skipped;
    }
    CHECK(ok == 13 && failed == 5 && skipped == 1);
    kb_precision_group *g;
    int n = kb_report_precision_groups(&run, &g);
    CHECK(n == 2);
    if (n == 2) {
        /* gemm: every dtype of the run (per tensor: its records predate recipes) */
        for (int d = 0; d <= KB_DT_FP8E5M2; d++) CHECK(g[0].rows[d][KB_RECIPE_TENSOR] >= 0);
        CHECK(g[0].rows[KB_DT_FP4E2M1][KB_RECIPE_NV] < 0 && g[0].rows[KB_DT_FP8E4M3][KB_RECIPE_MX] < 0);
        /* the fastest fp16 GEMM is the tiled one, not the naive one */
        CHECK(strstr(run.rows[g[0].rows[KB_DT_FP16][KB_RECIPE_TENSOR]].case_id, "wmma") != NULL);
        CHECK(strcmp(run.rows[g[1].first].family, "attention") == 0 && !strcmp(run.rows[g[1].first].dist, "uniform"));
        CHECK(g[1].rows[KB_DT_FP16][0] >= 0 && g[1].rows[KB_DT_BF16][0] >= 0 && g[1].rows[KB_DT_INT8][0] < 0);
        kb_sb dims;
        kb_sb_init(&dims);
        kb_report_dims_text(&run.rows[g[0].first], &dims);
        CHECK(strcmp(dims.s, "4096x4096x4096") == 0);
        kb_sb_free(&dims);
    }
    free(g);
    double peak[KB_DT_COUNT], bw;
    const char *src;
    kb_report_ceilings(&run, 0, peak, &bw, &src);
    CHECK(bw == 3000 && peak[KB_DT_FP16] == 960 && peak[KB_DT_INT8] == 1920 && strcmp(src, "clock") == 0);
    kb_report_run_free(&run);

    /* by run id, from a results folder */
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_report_run_load(RUN_B_ID, "tests/data", &run, &err) == KB_OK);
    CHECK(run.n == 19 && strcmp(run.run_id, RUN_B_ID) == 0);
    kb_report_run_free(&run);
    CHECK(kb_report_run_load("no-such-run", "tests/data", &run, &err) == KB_ERR_INPUT);
    CHECK(strstr(err.s, "no-such-run") != NULL);
    kb_sb_free(&err);
}

/* An ok GPU record of attention variant at dims 1x8x256x64 with params (owned), median us. */
static json_t *attn_rec(const char *variant, const char *dtype, json_t *params, double us)
{
    json_t *r = json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:{s:i, s:i, s:i, s:i}, s:o, s:i, s:s, s:s, "
                          "s:{s:s, s:s, s:i, s:b}, s:{s:i, s:i}, s:{s:s, s:f, s:i}}",
                          "schema_version", 1, "run_id", "syn", "case_id", "", "family", "attention", "variant",
                          variant, "dtype", dtype, "dims", "b", 1, "h", 8, "s", 256, "d", 64, "params", params,
                          "pad", 0, "launch", "eager", "status", "ok", "device", "name", "SYN-GPU", "uuid", "u",
                          "sm", 90, "emulator", 0, "verify", "n", 1, "n_bad", 0, "timing", "clock", "gpu",
                          "median_us", us, "samples", 10);
    char id[128];
    snprintf(id, sizeof id, "attention/%s/%s/%g", variant, dtype, us);
    json_object_set_new(r, "case_id", json_string(id));
    return r;
}

/* attention/decode computes another operation over attention's dims: its rows form precision
 * groups of their own, one per q_len and group, never with the square attention's; decode_tma
 * computes the same decode attention, so its rows join decode's. */
static void test_groups_keep_operations_apart(void)
{
    json_t **recs = malloc(7 * sizeof *recs);
    recs[0] = attn_rec("mma", "fp16", json_pack("{s:s}", "causal", "yes"), 50);
    recs[1] = attn_rec("mma", "bf16", json_pack("{s:s}", "causal", "yes"), 52);
    recs[2] = attn_rec("decode", "fp16", json_pack("{s:s, s:i, s:i, s:i}", "causal", "yes", "q_len", 1, "group", 8,
                                                   "CHUNK", 0), 2);
    recs[3] = attn_rec("decode", "bf16", json_pack("{s:s, s:i, s:i, s:i}", "causal", "yes", "q_len", 1, "group", 8,
                                                   "CHUNK", 128), 3);
    recs[4] = attn_rec("decode", "bf16", json_pack("{s:s, s:i, s:i, s:i}", "causal", "yes", "q_len", 8, "group", 8,
                                                   "CHUNK", 0), 1);
    recs[5] = attn_rec("decode", "fp16", json_pack("{s:s, s:i, s:i, s:i}", "causal", "yes", "q_len", 16, "group", 8,
                                                   "CHUNK", 0), 1);
    recs[6] = attn_rec("decode_tma", "fp16", json_pack("{s:s, s:i, s:i, s:i}", "causal", "yes", "q_len", 8, "group",
                                                       8, "STAGES", 4), 1);
    kb_report_run run;
    CHECK(kb_report_run_from(recs, 7, "synthetic", &run) == KB_OK);
    kb_precision_group *g;
    int n = kb_report_precision_groups(&run, &g);
    CHECK_MSG(n == 3, "%d groups", n);   /* q_len 16 has one dtype: no comparison */
    if (n == 3) {
        CHECK(g[0].rows[KB_DT_FP16][KB_RECIPE_TENSOR] == 0 && g[0].rows[KB_DT_BF16][KB_RECIPE_TENSOR] == 1);
        CHECK(g[1].rows[KB_DT_FP16][KB_RECIPE_TENSOR] == 2 &&
              g[1].rows[KB_DT_BF16][KB_RECIPE_TENSOR] == 3);   /* CHUNK: one problem */
        CHECK(g[2].rows[KB_DT_FP16][KB_RECIPE_TENSOR] == 6 &&
              g[2].rows[KB_DT_BF16][KB_RECIPE_TENSOR] == 4);   /* decode_tma beside decode */
    }
    free(g);
    kb_report_run_free(&run);
}

/* Every table line of a markdown table has as many cells as its header. */
static void check_md_tables(const char *md)
{
    int header_cells = -1, tables = 0;
    for (const char *line = md; *line; ) {
        const char *end = strchr(line, '\n');
        if (!end) end = line + strlen(line);
        if (*line == '|') {
            int cells = 0;
            for (const char *p = line; p < end; p++)
                if (*p == '|' && (p == line || p[-1] != '\\')) cells++;
            if (header_cells < 0) { header_cells = cells; tables++; }
            CHECK_MSG(cells == header_cells, "%d cells, header has %d: %.*s", cells, header_cells, (int)(end - line), line);
        } else {
            header_cells = -1;
        }
        line = *end ? end + 1 : end;
    }
    CHECK(tables >= 1);
}

static void test_markdown(void)
{
    char *md = render(RUN_GPU, KB_REPORT_MD);
    if (!md) return;
    check_md_tables(md);
    CHECK(strstr(md, "# kbench report: test-gpu-a-20260102T000000Z-1") != NULL);
    CHECK(strstr(md, "| case | status | verified / max_err | median_us (clock) | TFLOPS | GB/s | AI | %roof | %meas | "
                     "%path | bound | samples | cv |"));
    /* the bf16 GEMM row: its median with the clock, its TFLOPS and bound */
    CHECK(strstr(md, "| gemm/wmma(BM=128,BN=128,BK=32)/bf16/4096x4096x4096/pad0/eager | ok | ok / 0.085 | 193.4 (gpu) | 710.8 |"));
    CHECK(strstr(md, "| compute |") && strstr(md, "| memory |"));
    CHECK(strstr(md, "**fault**: " FAULT_REASON) != NULL);
    CHECK(strstr(md, "## Precision comparison") && strstr(md, "### gemm 4096x4096x4096, pad 0, dist=uniform on TEST-GPU"));
    /* the sections in the page's order, the summary first */
    const char *order[] = { "## Summary", "## Fastest configuration per shape and dtype", "## Precision comparison",
                            "## Tile sweep per shape", "## Graph vs eager", "## Verification margins", "## Roofline",
                            "| case | status |" };
    for (int i = 1; i < 8; i++)
        CHECK_MSG(strstr(md, order[i - 1]) && strstr(md, order[i]) && strstr(md, order[i - 1]) < strstr(md, order[i]),
                  "%s before %s", order[i - 1], order[i]);
    /* speed-up over the group's bf16 row (193.4 us); no accuracy block in these records: empty cells */
    CHECK_MSG(strstr(md, "| int8 | tensor | gemm/wmma(BM=128,BN=128,BK=32)/int8/4096x4096x4096/pad0/eager | 105.2 (gpu) | "
                         "1306 | 1.837x |  |  |  |"), "%s", strstr(md, "## Precision"));
    CHECK(strstr(md, "Emulator") == NULL);
    free(md);

    md = render(RUN_EMU, KB_REPORT_MD);
    if (!md) return;
    check_md_tables(md);
    CHECK(strstr(md, KB_REPORT_EMU_NOTE) != NULL);
    CHECK(strstr(md, "(cpu)") != NULL && strstr(md, "(gpu)") == NULL);
    CHECK(strstr(md, "| compute |") == NULL && strstr(md, "Roofline ceilings") == NULL);
    CHECK(strstr(md, "| wrong | 1 bad / NaN |") != NULL);
    free(md);
}

/* RFC 4180 reader: the fields of each record; returns the number of records, checks
 * every record has want_fields fields, and copies field (row, col) into got. */
static int csv_records(const char *s, int want_fields, int row, int col, char *got, size_t gotlen)
{
    int records = 0, field = 0;
    size_t g = 0;
    got[0] = 0;
    while (*s) {
        int here = records == row && field == col;
        if (*s == '"') {
            for (s++; *s && !(s[0] == '"' && s[1] != '"'); s++) {
                if (s[0] == '"') s++;                       /* "" is one quote */
                if (here && g + 1 < gotlen) got[g++] = *s;
            }
            if (*s) s++;
        } else {
            for (; *s && *s != ',' && *s != '\r' && *s != '\n'; s++)
                if (here && g + 1 < gotlen) got[g++] = *s;
        }
        if (here) got[g] = 0;
        if (*s == ',') { field++; s++; continue; }
        CHECK_MSG(s[0] == '\r' && s[1] == '\n', "record %d does not end in CRLF", records);
        CHECK_MSG(field + 1 == want_fields, "record %d has %d fields, want %d", records, field + 1, want_fields);
        if (*s) s += s[0] == '\r' ? 2 : 1;
        records++;
        field = 0;
    }
    return records;
}

/* The index of column name in the header line of csv, -1 when absent. */
static int csv_column(const char *csv, const char *name)
{
    size_t n = strlen(name);
    int col = 0;
    for (const char *p = csv; *p && *p != '\r'; col++) {
        size_t len = strcspn(p, ",\r");
        if (len == n && !strncmp(p, name, n))
            return col;
        p += len + (p[len] == ',');
    }
    return -1;
}

static int csv_columns(const char *csv)
{
    int n = 1;
    for (const char *p = csv; *p && *p != '\r'; p++)
        n += *p == ',';
    return n;
}

static void test_csv(void)
{
    char *csv = render(RUN_GPU, KB_REPORT_CSV);
    if (!csv) return;
    CHECK(strncmp(csv, "run_id,device,case,family,variant,dtype,shape,dims,", 51) == 0);
    CHECK(strstr(csv, ",pad,launch,status,verified,max_abs_err,max_rel_err,median_us,clock,tflops,gbps,ai,roof_tflops,"
                      "pct_roof,bound,samples,cv,reason,pct_measured,measured_roof_tflops,path,pct_path,path_tflops,"
                      "path_source,acc_rel_fro,acc_snr_db,acc_max_rel\r\n"));
    /* the axes as columns: a column per dim and param, so nobody parses ids */
    int cols = csv_columns(csv), m = csv_column(csv, "m"), bm = csv_column(csv, "BM"), dims = csv_column(csv, "dims");
    CHECK(m > 0 && bm > 0 && dims > 0 && csv_column(csv, "k") > 0 && csv_column(csv, "n") > 0);
    char field[256];
    /* row 4 is the bf16 GEMM (header is row 0); its id has commas, so it was quoted */
    CHECK(csv_records(csv, cols, 4, 2, field, sizeof field) == 20);
    CHECK(strcmp(field, "gemm/wmma(BM=128,BN=128,BK=32)/bf16/4096x4096x4096/pad0/eager") == 0);
    csv_records(csv, cols, 4, m, field, sizeof field);
    CHECK(strcmp(field, "4096") == 0);
    csv_records(csv, cols, 4, bm, field, sizeof field);
    CHECK(strcmp(field, "128") == 0);
    csv_records(csv, cols, 4, dims, field, sizeof field);
    CHECK(strcmp(field, "4096x4096x4096") == 0);
    csv_records(csv, cols, 4, csv_column(csv, "bound"), field, sizeof field);
    CHECK(strcmp(field, "compute") == 0);
    /* a reason with quotes comes back intact (the fault is row 16) */
    csv_records(csv, cols, 16, csv_column(csv, "reason"), field, sizeof field);
    CHECK_MSG(strcmp(field, FAULT_REASON) == 0, "got %s", field);
    csv_records(csv, cols, 16, csv_column(csv, "median_us"), field, sizeof field);
    CHECK(field[0] == 0);                                        /* no median for a fault */
    free(csv);

    csv = render(RUN_EMU, KB_REPORT_CSV);
    if (!csv) return;
    cols = csv_columns(csv);
    CHECK(csv_records(csv, cols, 1, csv_column(csv, "clock"), field, sizeof field) == 8);
    CHECK(strcmp(field, "cpu") == 0);
    csv_records(csv, cols, 1, csv_column(csv, "pct_roof"), field, sizeof field);
    CHECK(field[0] == 0);                                        /* no %roof on the emulator */
    free(csv);
}

static void test_html(void)
{
    char why[160];
    char *html = render(RUN_GPU, KB_REPORT_HTML);
    if (!html) return;
    CHECK(strncmp(html, "<!DOCTYPE html>", 15) == 0);
    CHECK_MSG(xml_well_formed(html, why, sizeof why), "%s", why);
    xmllint_if_there(html, "gpu.html");
    CHECK(count(html, "<svg") == count(html, "</svg>") && count(html, "class=\"roofline\"") == 1);
    /* self-contained: one inline script (sorting, filtering), nothing loaded, links only within the page */
    CHECK(count(html, "<script>") == 1 && count(html, "src=") == 0 && count(html, "href=\"#") == count(html, "href="));
    /* the summary first, then the contents, then a section per question */
    const char *ids[] = { "<section id=\"summary\">", "<nav class=\"toc\">", "<section id=\"best\">",
                          "<section id=\"precision\">", "<section id=\"tiles\">", "<section id=\"launch\">",
                          "<section id=\"margins\">", "<section id=\"roofline\">", "<section id=\"cases\">" };
    for (int i = 1; i < 9; i++)
        CHECK_MSG(strstr(html, ids[i - 1]) && strstr(html, ids[i]) && strstr(html, ids[i - 1]) < strstr(html, ids[i]),
                  "%s before %s", ids[i - 1], ids[i]);
    CHECK(count(html, "<a href=\"#tiles-") >= 2 && count(html, "<table class=\"matrix\">") == 1);
    /* charts: the tile sweep of every shape (one per shape, not per family), the margin, precision */
    CHECK(count(html, "data-chart=\"tiles-gemm\"") == 1 && count(html, "data-chart=\"tiles-embedding\"") == 1);
    CHECK(count(html, "data-chart=\"margin\"") == 1 && count(html, "data-chart=\"precision\"") >= 1);
    CHECK(count(html, "class=\"sortable\"") >= 2);   /* the fastest configurations, the cases */
    CHECK(strstr(html, "max error / tolerance (log)") && strstr(html, "verified cases, by family"));   /* axes */
    /* the case table: a sticky header; the GPU run fills %roof (its records predate %meas and %path) */
    CHECK(strstr(html, ".scroll thead th{position:sticky;top:0") && strstr(html, "<th>%roof</th>"));
    /* one point per ok case with flops (12 of the 13: the embedding has none), each with its id */
    CHECK(count(html, "<circle cx") - count(html, "\"/><text") == 12);
    CHECK(strstr(html, "<title>gemm/wmma(BM=128,BN=128,BK=32)/fp8e4m3/4096x4096x4096/pad0/eager: AI") != NULL);
    CHECK(strstr(html, "Not on the chart") && strstr(html, "embedding/gather/bf16/32768x4096/pad0/eager: "));
    /* the bandwidth slope and the ceilings, dtypes with equal peaks sharing one */
    CHECK(count(html, "class=\"bandwidth\"") == 1);
    CHECK(count(html, "class=\"ceiling\"") == 4);               /* fp32, tf32, fp16/bf16, int8/fp8 */
    CHECK(strstr(html, "fp16/bf16 peak 960.0 TFLOPS") != NULL);
    CHECK(strstr(html, "<h2>Precision comparison</h2>") != NULL);
    CHECK(strstr(html, "&quot;an illegal memory access was encountered&quot;") != NULL);
    free(html);

    html = render(RUN_EMU, KB_REPORT_HTML);
    if (!html) return;
    CHECK_MSG(xml_well_formed(html, why, sizeof why), "%s", why);
    CHECK(strstr(html, "class=\"roofline\"") == NULL);         /* no roofline for CPU times */
    CHECK(strstr(html, "data-chart=\"margin\"") && strstr(html, "data-chart=\"tiles-"));  /* the other charts */
    CHECK(strstr(html, "Emulator run: these are CPU times") != NULL);
    /* no empty columns: the emulator has no %roof, %meas, %path or bound */
    CHECK(!strstr(html, "<th>%roof</th>") && !strstr(html, "<th>%path</th>") && !strstr(html, "<th>bound</th>"));
    CHECK(!strstr(html, "<section id=\"roofline\">"));
    free(html);
}

/* --filter and --section: the rows kept, the sections each format has, a section alone. */
static void test_filter_and_sections(void)
{
    kb_report_run run;
    if (!load(RUN_GPU, &run)) return;
    const char *f[] = { "gemm/", "softmax/" };
    CHECK(kb_report_run_filter(&run, f, 2) == KB_OK && run.n > 2 && run.n < 20);
    for (size_t i = 0; i < run.n; i++)
        CHECK(strstr(run.rows[i].case_id, "gemm/") || strstr(run.rows[i].case_id, "softmax/"));
    CHECK(*run.run_id && *run.time);
    char *text = NULL;
    size_t len;
    FILE *out = open_memstream(&text, &len);
    CHECK(kb_report_write_section(&run, KB_REPORT_MD, KB_SECTION_BEST, out) == KB_OK);
    fclose(out);
    CHECK(text && strstr(text, "## Fastest configuration") && !strstr(text, "## Precision") && !strstr(text, "gelu"));
    free(text);
    out = open_memstream(&text, &len);
    CHECK(kb_report_write_section(&run, KB_REPORT_CSV, KB_SECTION_BEST, out) == KB_OK);
    fclose(out);
    CHECK(text && !strncmp(text, "device,family,shape,dims,dtype,pad,measured,cases,fastest_case,", 62));
    free(text);
    CHECK(kb_report_has_section(KB_REPORT_HTML, KB_SECTION_TILES) && !kb_report_has_section(KB_REPORT_CSV,
                                                                                               KB_SECTION_TILES));
    CHECK(!kb_report_has_section(KB_REPORT_GBENCH, KB_SECTION_SUMMARY) &&
          kb_report_has_section(KB_REPORT_JUNIT, KB_SECTION_ALL));
    kb_report_section sec;
    CHECK(kb_report_section_parse("tiles", &sec) == 0 && sec == KB_SECTION_TILES);
    CHECK(kb_report_section_parse("tile", &sec) == -1);
    const char *none[] = { "no such case" };
    CHECK(kb_report_run_filter(&run, none, 1) == KB_ERR_INPUT && run.n == 0);
    kb_report_run_free(&run);
}

static json_t *find_bench(json_t *arr, const char *name, int rep)
{
    size_t i;
    json_t *b;
    json_array_foreach(arr, i, b) {
        json_t *ri = json_object_get(b, "repetition_index");
        if (strcmp(json_string_value(json_object_get(b, "name")), name) == 0 &&
            (rep < 0 || (ri && json_integer_value(ri) == rep)))
            return b;
    }
    return NULL;
}

static void test_gbench(void)
{
    char *text = render(RUN_GPU, KB_REPORT_GBENCH);
    if (!text) return;
    json_error_t je;
    json_t *root = json_loads(text, 0, &je);
    free(text);
    CHECK_MSG(root != NULL, "%s", je.text);
    if (!root) return;
    json_t *ctx = json_object_get(root, "context"), *bm = json_object_get(root, "benchmarks");
    const char *keys[] = { "date", "host_name", "executable", "num_cpus", "mhz_per_cpu", "caches",
                           "library_version", "library_build_type", "json_schema_version" };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        CHECK_MSG(json_object_get(ctx, keys[i]) != NULL, "context.%s missing", keys[i]);
    CHECK(json_integer_value(json_object_get(ctx, "json_schema_version")) == 1);
    CHECK(strcmp(json_string_value(json_object_get(ctx, "date")), "2026-01-02T00:00:00+00:00") == 0);
    CHECK(json_is_array(json_object_get(ctx, "caches")));
    /* 13 timed cases x (25 samples + 4 aggregates) */
    CHECK(json_array_size(bm) == 13 * 29);
    /* failures are not benchmarks, but are listed in the context with their reason */
    json_t *nt = json_object_get(ctx, "kbench_not_timed");
    CHECK(json_array_size(nt) == 6);
    CHECK(strstr(json_string_value(json_array_get(nt, 2)), FAULT_REASON) != NULL);

    const char *id = "gemm/wmma(BM=128,BN=128,BK=32)/bf16/4096x4096x4096/pad0/eager";
    kb_report_run run;
    if (!load(RUN_GPU, &run)) { json_decref(root); return; }
    json_t *samples = json_object_get(json_object_get(run.rows[3].rec, "timing"), "samples_us");
    CHECK(strcmp(run.rows[3].case_id, id) == 0);
    for (int k = 0; k < 25; k++) {
        json_t *b = find_bench(bm, id, k);
        CHECK(b != NULL);
        if (!b) break;
        CHECK(strcmp(json_string_value(json_object_get(b, "run_name")), id) == 0);
        CHECK(strcmp(json_string_value(json_object_get(b, "run_type")), "iteration") == 0);
        CHECK(json_integer_value(json_object_get(b, "repetitions")) == 25);
        CHECK(json_integer_value(json_object_get(b, "threads")) == 1);
        CHECK(json_integer_value(json_object_get(b, "iterations")) == 1);
        CHECK(strcmp(json_string_value(json_object_get(b, "time_unit")), "us") == 0);
        CHECK(json_real_value(json_object_get(b, "real_time")) == json_number_value(json_array_get(samples, (size_t)k)));
        CHECK(json_real_value(json_object_get(b, "cpu_time")) == json_real_value(json_object_get(b, "real_time")));
        CHECK(json_real_value(json_object_get(b, "tflops")) > 600 && json_is_real(json_object_get(b, "gbps")));
    }
    char name[160];
    snprintf(name, sizeof name, "%s_median", id);
    json_t *med = find_bench(bm, name, -1);
    CHECK(med && strcmp(json_string_value(json_object_get(med, "run_type")), "aggregate") == 0);
    CHECK(med && strcmp(json_string_value(json_object_get(med, "aggregate_name")), "median") == 0);
    CHECK(med && json_object_get(med, "repetition_index") == NULL);
    CHECK(med && json_real_value(json_object_get(med, "real_time")) == run.rows[3].median_us);
    snprintf(name, sizeof name, "%s_cv", id);
    json_t *cv = find_bench(bm, name, -1);
    CHECK(cv && strcmp(json_string_value(json_object_get(cv, "aggregate_unit")), "percentage") == 0);
    CHECK(cv && fabs(json_real_value(json_object_get(cv, "real_time")) - run.rows[3].cv) < 1e-12);
    kb_report_run_free(&run);
    json_decref(root);
}

static void test_junit(void)
{
    char why[160];
    char *xml = render(RUN_GPU, KB_REPORT_JUNIT);
    if (!xml) return;
    CHECK(strncmp(xml, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", 50) == 0);
    CHECK_MSG(xml_well_formed(xml, why, sizeof why), "%s", why);
    xmllint_if_there(xml, "junit.xml");
    CHECK(count(xml, "<testcase ") == 19);
    CHECK(count(xml, "<failure ") == 5 && count(xml, "<skipped ") == 1);
    CHECK(strstr(xml, "tests=\"19\" failures=\"5\" errors=\"0\" skipped=\"1\"") != NULL);
    const char *types[] = { "wrong", "fault", "compile_error", "launch_error", "timeout" };
    for (int i = 0; i < 5; i++) {
        char t[48];
        snprintf(t, sizeof t, "<failure type=\"%s\"", types[i]);
        CHECK_MSG(strstr(xml, t) != NULL, "%s", t);
    }
    CHECK(strstr(xml, "<skipped message=\"m must be a multiple of BM=128 for fp8\"/>") != NULL);
    /* the compile log went in escaped, its control character replaced */
    CHECK(strstr(xml, "identifier &quot;KB_TILE&lt;BM &amp; BN&gt;&quot; is undefined") != NULL);
    CHECK(strstr(xml, "? ptxas") != NULL);
    free(xml);

    xml = render(RUN_EMU, KB_REPORT_JUNIT);
    if (!xml) return;
    CHECK_MSG(xml_well_formed(xml, why, sizeof why), "%s", why);
    CHECK(strstr(xml, "emulator: CPU time") != NULL && count(xml, "<failure ") == 1);
    free(xml);
}

/* Run kb_cmd_report with stdout silenced. */
static int cmd(const char *a1, const char *a2, const char *a3, const char *a4, const char *a5)
{
    char *argv[7] = { "report", (char *)a1, (char *)a2, (char *)a3, (char *)a4, (char *)a5, NULL };
    return run_quiet(kb_cmd_report, argv);
}

static void test_command(void)
{
    const char *formats[] = { "md", "csv", "html", "gbench-json", "junit" };
    char out[128];
    for (int i = 0; i < 5; i++) {
        snprintf(out, sizeof out, "%s/report.%s", dir, formats[i]);
        CHECK(cmd(RUN_GPU, "--format", formats[i], "--out", out) == KB_EXIT_OK);
        CHECK(access(out, R_OK) == 0);
    }
    snprintf(out, sizeof out, "%s/by-id.md", dir);
    CHECK(cmd(RUN_B_ID, "--results", "tests/data", "-o", out) == KB_EXIT_OK);
    CHECK(cmd(RUN_GPU, "--format=csv", NULL, NULL, NULL) == KB_EXIT_OK);
    CHECK(cmd(RUN_GPU, "--format", "pdf", NULL, NULL) == KB_EXIT_INPUT);
    CHECK(cmd("tests/data/none.jsonl", NULL, NULL, NULL, NULL) == KB_EXIT_INPUT);
    CHECK(cmd(RUN_GPU, "--bogus", NULL, NULL, NULL) == KB_EXIT_INPUT);
    CHECK(cmd(RUN_GPU, RUN_EMU, NULL, NULL, NULL) == KB_EXIT_INPUT);
    CHECK(cmd("--format", NULL, NULL, NULL, NULL) == KB_EXIT_INPUT);
    CHECK(cmd(NULL, NULL, NULL, NULL, NULL) == KB_EXIT_INPUT);
    CHECK(cmd(RUN_GPU, "--out", "/nonexistent/dir/r.md", NULL, NULL) == KB_EXIT_SETUP);
    kb_report_format f;
    CHECK(kb_report_format_parse("gbench", &f) == 0 && f == KB_REPORT_GBENCH);
    CHECK(kb_report_format_parse("markdown", &f) == 0 && f == KB_REPORT_MD);
    CHECK(kb_report_format_parse("xml", &f) == -1);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/kb_test_report.XXXXXX");
    if (!mkdtemp(dir)) { perror("mkdtemp"); return 1; }
    RUN(test_checker_catches_errors);
    RUN(test_load_and_groups);
    RUN(test_groups_keep_operations_apart);
    RUN(test_markdown);
    RUN(test_csv);
    RUN(test_html);
    RUN(test_filter_and_sections);
    RUN(test_gbench);
    RUN(test_junit);
    RUN(test_command);
    char rm[128];
    snprintf(rm, sizeof rm, "rm -rf %s", dir);
    if (system(rm) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_MAIN_END();
}
