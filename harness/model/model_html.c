/* model_html.c - a model roll-up as one self-contained HTML page (model_html.h). */
#include "model/model_html.h"

#include "model/model_cells.h"

#include <string.h>

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1360px}"
    ".scroll{overflow-x:auto;max-width:100%}"
    "table{border-collapse:collapse;margin:1em 0;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}"
    "th{background:#f3f3f3}td.t{text-align:left;font-family:monospace;word-break:break-all}"
    "tr.missing,li.missing{color:#c62828}.note{background:#fff4e5;border-left:4px solid #f0a020;padding:8px 12px}";

static void text(FILE *out, const char *s) { kb_report_xml_text(out, s); }

/* Horizontal bars: each found op's part of the step, in %. */
static void chart(FILE *out, const kb_model_rollup *r, int ph)
{
    const kb_model_phase_res *P = &r->ph[ph];
    int n = 0;
    for (int k = 0; k < r->m->n_ops; k++) n += P->ops[k].row >= 0;
    if (n == 0 || P->step_us <= 0) return;
    int h = 22 * n + 30;
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"model-%s\" width=\"720\" "
                 "height=\"%d\" "
                 "role=\"img\"><title>time per op, %% of the %s step</title>\n",
            kb_model_phase_names[ph], h, kb_model_phase_names[ph]);
    int y = 10;
    for (int k = 0; k < r->m->n_ops; k++) {
        const kb_model_opres *o = &P->ops[k];
        if (o->row < 0) continue;
        double pct = 100.0 * o->step_us / P->step_us;
        fprintf(out, "<text x=\"150\" y=\"%d\" text-anchor=\"end\" font-size=\"12\">", y + 13);
        text(out, r->m->ops[k].name);
        fprintf(out, "</text><rect x=\"160\" y=\"%d\" width=\"%.1f\" height=\"16\" fill=\"#4a7fb5\"/>"
                     "<text x=\"%.1f\" y=\"%d\" font-size=\"11\">%.1f%%</text>\n",
                y, 4.8 * pct, 166 + 4.8 * pct, y + 13, pct);
        y += 22;
    }
    fputs("</svg>\n", out);
}

static void phase(FILE *out, const kb_model_rollup *r, int ph)
{
    const kb_model_phase_res *P = &r->ph[ph];
    char cells[KB_MODEL_COLS][160], a[48], b[48], c[48];
    fprintf(out, "<h2>%s: %.0f tokens per step</h2>\n", kb_model_phase_names[ph], P->tokens);
    chart(out, r, ph);
    fputs("<div class=\"scroll\"><table><tr>", out);
    for (int k = 0; k < KB_MODEL_COLS; k++) fprintf(out, "<th>%s</th>", kb_model_cols[k]);
    fputs("</tr>\n", out);
    for (int k = 0; k < r->m->n_ops; k++) {
        if (!P->ops[k].modelled) continue;
        kb_model_op_cells(r, ph, k, cells);
        fputs(P->ops[k].row < 0 ? "<tr class=\"missing\">" : "<tr>", out);
        for (int col = 0; col < KB_MODEL_COLS; col++) {
            fputs(col < KB_MODEL_TEXT_COLS ? "<td class=\"t\">" : "<td>", out);
            text(out, cells[col]);
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    fputs("</table></div>\n<ul>", out);
    kb_report_num(a, sizeof a, P->step_us / 1000);
    kb_report_num(b, sizeof b, P->us_per_token);
    kb_report_num(c, sizeof c, P->tokens_per_s);
    const char *ge = P->bounds_only ? "&gt;= " : "";
    if (P->step_us > 0 && P->bounds_only)
        fprintf(out, "<li>model step %s%s ms, %s%s us per token [%s]: <b>lower bounds only</b> - %d of %d ops are "
                     "missing, so no tokens/s, MFU, GB/s or bandwidth utilisation is given</li>", ge, a, ge, b,
                kb_model_timing_label(r), P->n_missing, P->n_modelled);
    else if (P->step_us > 0)
        fprintf(out, "<li>model step %s ms, %s us per token, %s tokens/s [%s]</li>", a, b, c, kb_model_timing_label(r));
    else
        fputs("<li>no op of this phase has a verified case in the run: no time per token</li>", out);
    kb_report_num(a, sizeof a, P->mfu);
    kb_report_num(b, sizeof b, P->bw_util);
    if (r->emulator && !P->bounds_only)
        fputs("<li>MFU, bandwidth utilisation: not applicable (emulator: CPU timings)</li>", out);
    else if (!P->bounds_only && P->step_us > 0)
        fprintf(out, "<li>MFU %s%s (the weight matmuls executed), bandwidth utilisation %s%s</li>",
                P->have_mfu ? a : "n/a", P->have_mfu ? "%" : "", P->have_bw ? b : "n/a", P->have_bw ? "%" : "");
    for (int k = 0; k < r->m->n_ops; k++)
        if (P->ops[k].row >= 0 && P->ops[k].faster_than_roof) {
            fputs("<li class=\"missing\">warning: ", out);
            text(out, r->m->ops[k].name);
            fprintf(out, " runs at %.0f%% of its datasheet roofline, faster than the hardware allows (work model or "
                         "timing wrong)</li>", P->ops[k].pct_roof);
        }
    for (int k = 0; k < r->m->n_ops; k++) {
        if (P->ops[k].modelled && P->ops[k].row >= 0) continue;
        fputs("<li class=\"missing\">", out);
        text(out, r->m->ops[k].name);
        fputs(P->ops[k].modelled ? " missing: " : " not modelled in this phase: ", out);
        text(out, P->ops[k].modelled ? P->ops[k].why : r->m->ops[k].note);
        fputs("</li>", out);
    }
    if (P->focus >= 0) {
        fputs("<li>optimise first: <b>", out);
        text(out, r->m->ops[P->focus].name);
        fputs("</b></li>", out);
    }
    fputs("</ul>\n", out);
}

/* The decode step at the description's decode_points (model_points.h), as the markdown has it. */
static void points(FILE *out, const kb_model_rollup *r)
{
    const kb_model_points *p = r->points;
    char cells[KB_MODEL_POINT_COLS][160];
    if (!p) return;
    fputs("<h2>decode at the description's decode_points</h2>\n<p>The decode step again with each point's params; "
          "every op takes a row of exactly its dims at the point (nothing is scaled or substituted), else it is "
          "missing and the step is a lower bound.</p>\n<div class=\"scroll\"><table><tr>", out);
    for (int c = 0; c < KB_MODEL_POINT_COLS; c++) fprintf(out, "<th>%s</th>", kb_model_point_cols[c]);
    fputs("</tr>\n", out);
    for (int i = 0; i < p->n; i++) {
        kb_model_point_cells(p, i, cells);
        fputs(p->rollups[i]->ph[KB_PHASE_DECODE].n_missing ? "<tr class=\"missing\">" : "<tr>", out);
        for (int c = 0; c < KB_MODEL_POINT_COLS; c++) {
            fputs(c == 0 || c >= 5 ? "<td class=\"t\">" : "<td>", out);
            text(out, cells[c]);
            fputs("</td>", out);
        }
        fputs("</tr>\n", out);
    }
    fputs("</table></div>\n", out);
}

static void whatif(FILE *out, const kb_model_rollup *r)
{
    char a[48], b[48], c[48], d[48];
    const kb_model_whatif *base = NULL;
    for (int i = 0; i < r->n_whatif; i++)
        if (r->whatif[i].dtype == r->dtype) base = &r->whatif[i];
    fputs("<h2>Precision what-if</h2>\n<p>Worst err/tol: the largest error over its tolerance among the ops run in "
          "the precision (below 1 passes). A step marked &gt;= misses ops: a lower bound.</p>\n<div "
          "class=\"scroll\"><table><tr><th>dtype</th><th>ops in it</th><th>vendor rows</th><th>prefill step ms</th>"
          "<th>decode step ms</th><th>speed-up prefill</th><th>speed-up decode</th><th>worst err/tol</th></tr>\n",
          out);
    for (int i = 0; i < r->n_whatif; i++) {
        const kb_model_whatif *w = &r->whatif[i];
        char e[32] = "n/a";
        kb_model_whatif_cells(w, base, a, b, c, d, sizeof a);
        if (w->have_err_tol) snprintf(e, sizeof e, "%.2g", w->worst_err_tol);
        fprintf(out, "<tr><td class=\"t\">%s</td><td>%d</td><td>%d</td><td>", kb_dtype_name((kb_dtype)w->dtype),
                w->n_at, w->n_vendor);
        text(out, a);
        fputs("</td><td>", out);
        text(out, b);
        fprintf(out, "</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", c, d, e);
    }
    fputs("</table></div>\n", out);
}

void kb_model_html_section(const kb_model_rollup *r, FILE *out)
{
    fputs("<h1 id=\"model\">Model roll-up: ", out);
    text(out, r->m->name);
    fputs("</h1>\n<p>", out);
    text(out, r->m->description);
    fputs("</p>\n<p>", out);
    if (r->est) {
        fputs("<b>ESTIMATE</b> (kbench estimate's static model on ", out);
        text(out, r->est_dev >= 0 ? r->est->devs[r->est_dev].name : "?");
        fputs(", not a measurement)", out);
        if (r->run)
            fputs(r->use_run ? "; measured ops from run " : "; run (not used) ", out);
    } else {
        fputs("Run ", out);
    }
    if (r->run)
        text(out, r->run->run_id);
    fprintf(out, "; precision %s; timing: <b>%s</b>.</p>\n", kb_dtype_name((kb_dtype)r->dtype),
            kb_model_timing_label(r));
    if (r->emulator) {
        fputs("<p class=\"note\">", out);
        text(out, KB_REPORT_EMU_NOTE);
        fputs(" MFU is not applicable.</p>\n", out);
    }
    fputs("<p>MFU = the FLOPs of the weight matmuls the step executes (each op with weights: its case's FLOPs x "
          "count x layers) / (peak x step time). N = the weights of the model's matmuls; training: 6N FLOPs per "
          "token, an estimate, not measured.</p>\n", out);
    for (int ph = 0; ph < KB_PHASE_COUNT; ph++) phase(out, r, ph);
    points(out, r);
    whatif(out, r);
}

void kb_model_html(const kb_model_rollup *r, FILE *out)
{
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"/><title>kbench model: ", out);
    text(out, r->m->name);
    fprintf(out, "</title><style>%s</style></head><body>\n", style);
    kb_model_html_section(r, out);
    fputs("</body></html>\n", out);
}
