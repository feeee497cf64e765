/* test_model_points.c - the ranking behind each op of a model roll-up and the decode step at a
 * description's decode_points (model/model_points.h), on synthetic records:
 *  - prefill attention takes the fastest verified row of any variant of the square operation
 *    (fa3 over fa2, cuDNN when it is faster), never a wrong row, another dtype's, or decode's;
 *    the vendor baseline and kbench's best are shown beside it, "no cudnn row" where the run
 *    has none (the emulator never has one); decode attention takes decode or decode_tma, the faster;
 *  - decode_points: each point rolls the decode step up at its params (tokens, q_len, kv_len
 *    follow), with no op missing where the run has a row of every op's dims there, and the op
 *    that has none named missing at that point only;
 *  - decode_points errors name the place (file:line:col, or the point) and load nothing. */
#include "check.h"
#include "model/model_cells.h"
#include "model/model_json.h"
#include "model/model_points.h"
#include "model/model_report.h"

#include <stdlib.h>
#include <string.h>

/* A toy decoder: a norm, the attention at prefill and decode, the LM head; one sequence of 8
 * at prefill, 2 sequences adding new_tokens rows against seq cached keys at decode. */
static const char model_text[] =
    "model: toy\n"
    "params: {hidden: 64, heads: 4, kv_heads: 2, head_dim: 32, vocab: 100, layers: 2, seq: 8, batch: 1,\n"
    "         decode_batch: 2, new_tokens: 1}\n"
    "phases:\n"
    "  prefill: {tokens: \"batch * seq\", seqs: batch, q_len: seq, kv_len: seq}\n"
    "  decode: {tokens: \"decode_batch * new_tokens\", seqs: decode_batch, q_len: new_tokens, kv_len: seq}\n"
    "decode_points: {seq: [64, 128], new_tokens: [1, 4]}\n"
    "ops:\n"
    "  - {op: norm, family: layernorm, params: {kind: rmsnorm}, dims: {rows: tokens, cols: hidden}}\n"
    "  - {op: attention, family: attention, params: {causal: \"yes\"}, phases: [prefill],\n"
    "     dims: {b: seqs, h: heads, s: q_len, d: head_dim}}\n"
    "  - {op: decode_attention, family: attention, variant: decode, phases: [decode],\n"
    "     params: {causal: \"yes\", q_len: q_len, group: \"heads / kv_heads\"},\n"
    "     dims: {b: seqs, h: heads, s: kv_len, d: head_dim}}\n"
    "  - {op: lm_head, scope: model, family: gemm, params: {layout: nt}, dims: {m: seqs, n: vocab, k: hidden},\n"
    "     weights: \"vocab * hidden\"}\n";

static json_t *recs[64];
static int n_recs;

/* A record of family/variant/dtype at dims (a JSON object, taken) and params (taken). */
static void rec(const char *family, const char *variant, const char *dtype, json_t *dims, json_t *params,
                double median_us, const char *status, int emu)
{
    char id[256];
    snprintf(id, sizeof id, "%s/%s/%s/%d", family, variant, dtype, n_recs);
    recs[n_recs++] = json_pack(
        "{s:i, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:i, s:s, s:b, s:s, s:{s:s, s:s, s:i, s:b}, s:{s:i, s:i, "
        "s:f}, s:{s:s, s:f, s:i}, s:{s:f, s:f, s:f}}",
        "schema_version", 1, "run_id", "syn", "time", "2026-01-01T00:00:00Z", "case_id", id, "family", family,
        "variant", variant, "dtype", dtype, "dims", dims, "params", params, "pad", 0, "launch", "eager",
        "check_shape", 0, "status", status, "device", "name", emu ? "emu" : "SYN-GPU", "uuid", "u", "sm", 90,
        "emulator", emu, "verify", "n", 1, "n_bad", 0, "max_rel_err", 0.001, "timing", "clock", emu ? "cpu" : "gpu",
        "median_us", median_us, "samples", 10, "work", "flops", 2000.0, "bytes_read", 1000.0, "bytes_written", 0.0);
}

static json_t *attn(int b, int s) { return json_pack("{s:i, s:i, s:i, s:i}", "b", b, "h", 4, "s", s, "d", 32); }
static json_t *causal(void) { return json_pack("{s:s}", "causal", "yes"); }
static json_t *dec(int q) { return json_pack("{s:s, s:i, s:i}", "causal", "yes", "q_len", q, "group", 2); }

/* The rows of every op of the toy at prefill and at decode (2 x 1 rows against 8 keys), the
 * prefill attention by fa2 (8 us), fa3 (5), cuDNN (cudnn_us), a wrong mma (1), fa3 in fp16 (1)
 * and a decode row at its dims (0.5); the LM head at m = 1 and 2 by mma only. */
static void toy_rows(double cudnn_us, int emu)
{
    n_recs = 0;
    rec("layernorm", "vec", "bf16", json_pack("{s:i, s:i}", "rows", 8, "cols", 64), json_pack("{s:s}", "kind",
        "rmsnorm"), 2, "ok", emu);
    rec("layernorm", "vec", "bf16", json_pack("{s:i, s:i}", "rows", 2, "cols", 64), json_pack("{s:s}", "kind",
        "rmsnorm"), 1, "ok", emu);
    rec("attention", "fa2", "bf16", attn(1, 8), causal(), 8, "ok", emu);
    rec("attention", "fa3", "bf16", attn(1, 8), causal(), 5, "ok", emu);
    if (cudnn_us > 0) rec("attention", "cudnn", "bf16", attn(1, 8), causal(), cudnn_us, "ok", emu);
    rec("attention", "mma", "bf16", attn(1, 8), causal(), 1, "wrong", emu);
    rec("attention", "fa3", "fp16", attn(1, 8), causal(), 1, "ok", emu);
    rec("attention", "decode", "bf16", attn(1, 8), dec(8), 0.5, "ok", emu);
    rec("attention", "decode", "bf16", attn(2, 8), dec(1), 3, "ok", emu);
    rec("gemm", "mma", "bf16", json_pack("{s:i, s:i, s:i}", "m", 1, "n", 100, "k", 64), json_pack("{s:s}", "layout",
        "nt"), 4, "ok", emu);
    rec("gemm", "mma", "bf16", json_pack("{s:i, s:i, s:i}", "m", 2, "n", 100, "k", 64), json_pack("{s:s}", "layout",
        "nt"), 4, "ok", emu);
    rec("attention", "decode_tma", "bf16", attn(2, 8), dec(1), 2, "ok", emu);   /* sm_90a's decode, faster */
}

static int load(kb_model *m)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_model_load_text(model_text, "toy.yaml", NULL, 0, m, &err);
    CHECK_MSG(st == KB_OK, "%s", err.s);
    kb_sb_free(&err);
    return st == KB_OK;
}

static void make(kb_report_run *run)
{
    json_t **r = malloc((size_t)n_recs * sizeof *r);
    memcpy(r, recs, (size_t)n_recs * sizeof *r);
    CHECK(kb_report_run_from(r, (size_t)n_recs, "synthetic", run) == KB_OK);
}

static const char *case_of(const kb_model_rollup *r, int ph, int k)
{
    const kb_report_row *row = kb_model_op_row(r, &r->ph[ph].ops[k]);
    return row ? row->case_id : "";
}

static void test_rank(void)
{
    kb_model m;
    kb_report_run run;
    char cell[160];
    if (!load(&m)) return;
    kb_model_rollup *r = malloc(sizeof *r);
    /* fa3 beats fa2 and cuDNN (6 us); the wrong mma, the fp16 fa3 and the decode row never compete */
    toy_rows(6, 0);
    make(&run);
    kb_model_rollup_run(&m, &run, -1, r);
    const kb_model_opres *a = &r->ph[KB_PHASE_PREFILL].ops[1];
    CHECK_MSG(strstr(case_of(r, KB_PHASE_PREFILL, 1), "attention/fa3/bf16/") != NULL, "%s",
              case_of(r, KB_PHASE_PREFILL, 1));
    CHECK(a->n_ranked == 3 && kb_model_rank_row(r, a, 0) == kb_model_op_row(r, a));
    CHECK(kb_model_rank_row(r, a, 1) && !strcmp(kb_model_rank_row(r, a, 1)->variant, "cudnn"));
    kb_model_vendor_cell(r, KB_PHASE_PREFILL, 1, cell, sizeof cell);
    CHECK_MSG(!strcmp(cell, "cudnn 6.000 us (1.20x kbench's time)"), "%s", cell);
    /* decode attention: any variant computing decode at 2 x 1 rows (decode_tma, 2 us, over
     * decode, 3 us; the op names decode); no vendor row computes it */
    CHECK_MSG(strstr(case_of(r, KB_PHASE_DECODE, 2), "attention/decode_tma/bf16/11") != NULL, "%s",
              case_of(r, KB_PHASE_DECODE, 2));
    CHECK(r->ph[KB_PHASE_DECODE].ops[2].n_ranked == 2);
    kb_model_vendor_cell(r, KB_PHASE_DECODE, 2, cell, sizeof cell);
    CHECK_MSG(!strcmp(cell, "no cudnn row"), "%s", cell);
    kb_model_vendor_cell(r, KB_PHASE_DECODE, 3, cell, sizeof cell);
    CHECK_MSG(!strcmp(cell, "no cublaslt row"), "%s", cell);
    kb_model_vendor_cell(r, KB_PHASE_DECODE, 0, cell, sizeof cell);
    CHECK(cell[0] == 0);   /* layernorm has no vendor variant */
    json_t *j = kb_model_json(r), *op = json_array_get(json_object_get(json_object_get(json_object_get(j,
                                                          "phases"), "prefill"), "ops"), 1);
    CHECK(json_integer_value(json_object_get(op, "ranked")) == 3 &&
          !strcmp(json_string_value(json_object_get(json_object_get(op, "vendor_baseline"), "variant")), "cudnn") &&
          !strcmp(json_string_value(json_object_get(json_object_get(op, "kbench_best"), "variant")), "fa3"));
    json_decref(j);
    kb_report_run_free(&run);
    /* cuDNN faster (4 us): it is used, kbench's best beside it */
    toy_rows(4, 0);
    make(&run);
    kb_model_rollup_run(&m, &run, -1, r);
    CHECK(strstr(case_of(r, KB_PHASE_PREFILL, 1), "attention/cudnn/") != NULL);
    kb_model_vendor_cell(r, KB_PHASE_PREFILL, 1, cell, sizeof cell);
    CHECK_MSG(!strcmp(cell, "cudnn fastest; kbench best fa3 5.000 us (1.25x cudnn's time)"), "%s", cell);
    kb_report_run_free(&run);
    /* the emulator: no cuDNN row, said so in the table */
    toy_rows(0, 1);
    make(&run);
    kb_model_rollup_run(&m, &run, -1, r);
    kb_model_vendor_cell(r, KB_PHASE_PREFILL, 1, cell, sizeof cell);
    CHECK_MSG(!strcmp(cell, "no cudnn row"), "%s", cell);
    char *md = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&md, &len);
    CHECK(kb_model_write(r, KB_MODEL_MD, out) == KB_OK);
    fclose(out);
    CHECK(md && strstr(md, "| vendor baseline |") && strstr(md, "| no cudnn row |"));
    free(md);
    kb_report_run_free(&run);
    free(r);
    kb_model_free(&m);
}

/* The toy's decode rows at its decode_points (seq 64 and 128, 1 and 4 new rows): the norm and
 * LM head at 2 x q rows, decode attention at 2 sequences, q rows against seq keys - except the
 * attention at seq 128 with 4 rows. */
static void point_rows(void)
{
    n_recs = 0;
    for (int q = 1; q <= 4; q += 3) {
        rec("layernorm", "vec", "bf16", json_pack("{s:i, s:i}", "rows", 2 * q, "cols", 64), json_pack("{s:s}",
            "kind", "rmsnorm"), q, "ok", 0);
        for (int s = 64; s <= 128; s *= 2)
            if (s == 64 || q == 1) rec("attention", "decode", "bf16", attn(2, s), dec(q), s * q / 16.0, "ok", 0);
    }
    rec("gemm", "mma", "bf16", json_pack("{s:i, s:i, s:i}", "m", 2, "n", 100, "k", 64), json_pack("{s:s}", "layout",
        "nt"), 4, "ok", 0);
}

static void test_points(void)
{
    kb_model m;
    kb_report_run run;
    kb_model_points p;
    kb_sb err;
    kb_sb_init(&err);
    if (!load(&m)) return;
    CHECK(m.n_points == 4 && m.n_axes == 2);
    const char *sets[] = { "decode_batch=2", "seq=9" };   /* a --set of a point's param: the point wins */
    CHECK_MSG(kb_model_points_load(&m, sets, 2, &p, &err) == KB_OK, "%s", err.s);
    CHECK(p.n == 4 && !strcmp(p.label[0], "seq=64 new_tokens=1") && !strcmp(p.label[3], "seq=128 new_tokens=4"));
    /* the decode variables follow the point: 2 x 4 tokens, 4 query rows against 128 keys */
    const int64_t *pv = p.models[3].pvars[KB_PHASE_DECODE];
    CHECK(pv[KB_PV_TOKENS] == 8 && pv[KB_PV_Q_LEN] == 4 && pv[KB_PV_KV_LEN] == 128);
    point_rows();
    make(&run);
    kb_model_rollup *r = malloc(sizeof *r);
    kb_model_rollup_run(&m, &run, -1, r);
    CHECK(kb_model_points_roll(&p, &run, -1, r) == KB_OK && r->points == &p);
    for (int i = 0; i < 3; i++) {
        const kb_model_phase_res *D = &p.rollups[i]->ph[KB_PHASE_DECODE];
        CHECK_MSG(D->n_missing == 0 && D->have_rates, "%s: %d missing", p.label[i], D->n_missing);
    }
    /* seq 64, 4 rows: 2 layers x (norm 4 + attention 64 x 4 / 16 = 16) + LM head 4 = 44 us for 8 tokens */
    CHECK(p.rollups[1]->ph[KB_PHASE_DECODE].step_us == 44 && p.rollups[1]->ph[KB_PHASE_DECODE].tokens == 8);
    const kb_model_phase_res *D = &p.rollups[3]->ph[KB_PHASE_DECODE];
    CHECK(D->n_missing == 1 && D->ops[2].row < 0 && strstr(D->ops[2].why, "b=2 h=4 s=128 d=32"));
    char cells[KB_MODEL_POINT_COLS][160];
    kb_model_point_cells(&p, 3, cells);
    CHECK_MSG(!strcmp(cells[5], "1: decode_attention") && !strncmp(cells[2], ">= ", 3), "%s / %s", cells[5],
              cells[2]);
    kb_model_point_cells(&p, 1, cells);
    CHECK_MSG(!strcmp(cells[5], "0") && strstr(cells[6], "decode_attention") && strstr(cells[6], "attention/decode"),
              "%s", cells[6]);
    json_t *j = kb_model_json(r), *pts = json_object_get(j, "decode_points");
    CHECK(json_array_size(pts) == 4 &&
          json_integer_value(json_object_get(json_object_get(json_array_get(pts, 3), "params"), "seq")) == 128 &&
          json_integer_value(json_object_get(json_object_get(json_array_get(pts, 3), "decode"), "n_missing")) == 1);
    json_decref(j);
    free(r);
    kb_model_points_free(&p);
    kb_report_run_free(&run);
    kb_model_free(&m);
    kb_sb_free(&err);
}

/* text with decode_points replaced by pts: the load's (or the points') error message. */
static void points_err(const char *pts, char *msg, size_t n)
{
    char text[4096];
    const char *at = strstr(model_text, "decode_points:"), *end = strchr(at, '\n');
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - model_text), model_text, pts, end);
    kb_model m;
    kb_model_points p;
    kb_sb err;
    kb_sb_init(&err);
    msg[0] = 0;
    if (kb_model_load_text(text, "bad.yaml", NULL, 0, &m, &err) != KB_OK) {
        snprintf(msg, n, "%s", err.s);
    } else {
        if (kb_model_points_load(&m, NULL, 0, &p, &err) != KB_OK) snprintf(msg, n, "%s", err.s);
        kb_model_points_free(&p);
        kb_model_free(&m);
    }
    kb_sb_free(&err);
}

static void test_points_errors(void)
{
    char msg[512];
    points_err("decode_points: {sq: [64]}", msg, sizeof msg);
    CHECK_MSG(strstr(msg, "bad.yaml:7:17: decode_points: 'sq' is not a param of the model"), "%s", msg);
    points_err("decode_points: {seq: [64, x]}", msg, sizeof msg);
    CHECK_MSG(strstr(msg, "bad.yaml:7:27: ") && strstr(msg, "integer"), "%s", msg);
    points_err("decode_points: {seq: [0]}", msg, sizeof msg);
    CHECK_MSG(strstr(msg, "bad.yaml:7:23: "), "%s", msg);
    points_err("decode_points: {seq: []}", msg, sizeof msg);
    CHECK_MSG(strstr(msg, "bad.yaml:7:22: ") && strstr(msg, "empty"), "%s", msg);
    points_err("decode_points: {}", msg, sizeof msg);
    CHECK_MSG(strstr(msg, "bad.yaml:7:16: decode_points names 1 to 8 params"), "%s", msg);
    points_err("decode_points: {seq: [1, 2, 3, 4, 5, 6, 7, 8, 9], new_tokens: [1, 2, 3, 4, 5, 6, 7, 8]}", msg,
               sizeof msg);
    CHECK_MSG(strstr(msg, "bad.yaml:7:") && strstr(msg, "more than 64 points"), "%s", msg);
    /* a point where the description fails (64 query heads over 0 KV heads' groups): named */
    points_err("decode_points: {kv_heads: [2, 8]}", msg, sizeof msg);
    CHECK_MSG(strstr(msg, "decode_points at kv_heads=8: bad.yaml:") && strstr(msg, "group"), "%s", msg);
}

int main(void)
{
    RUN(test_rank);
    RUN(test_points);
    RUN(test_points_errors);
    TEST_MAIN_END();
}
