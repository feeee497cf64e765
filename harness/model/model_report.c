/* model_report.c - the roll-up as markdown and the cells the HTML shares (model_report.h);
 * the dispatcher of the three formats. */
#include "model/model_report.h"

#include "model/model_cells.h"
#include "model/model_html.h"
#include "model/model_json.h"
#include "model/model_trace.h"

#include <math.h>
#include <string.h>

static void num(char *b, size_t n, double v) { kb_report_num(b, n, v); }

static void md_row(FILE *out, char cells[][160], int n)
{
    fputs("|", out);
    for (int c = 0; c < n; c++) {
        fputc(' ', out);
        for (const char *s = cells[c]; *s; s++) fputs(*s == '|' ? "\\|" : (char[]){ *s, 0 }, out);
        fputs(" |", out);
    }
    fputc('\n', out);
}

static void md_totals(FILE *out, const kb_model_rollup *r, const kb_model_phase_res *P);
static void md_lists(FILE *out, const kb_model_rollup *r, int ph);

static void md_phase(FILE *out, const kb_model_rollup *r, int ph)
{
    const kb_model_phase_res *P = &r->ph[ph];
    char cells[KB_MODEL_COLS][160];
    fprintf(out, "\n## %s: %.0f tokens per step\n\n", kb_model_phase_names[ph], P->tokens);
    fputs("|", out);
    for (int k = 0; k < KB_MODEL_COLS; k++) fprintf(out, " %s |", kb_model_cols[k]);
    fputs("\n|", out);
    for (int k = 0; k < KB_MODEL_COLS; k++) fputs(k < KB_MODEL_TEXT_COLS ? "---|" : "---:|", out);
    fputc('\n', out);
    for (int k = 0; k < r->m->n_ops; k++) {
        if (!P->ops[k].modelled) continue;
        kb_model_op_cells(r, ph, k, cells);
        md_row(out, cells, KB_MODEL_COLS);
    }
    if (P->step_us <= 0)
        fputs("\nNo op of this phase has a verified case in the run: no time per token.\n", out);
    else
        md_totals(out, r, P);
    md_lists(out, r, ph);
}

static void md_totals(FILE *out, const kb_model_rollup *r, const kb_model_phase_res *P)
{
    char a[48], b[48], c[48];
    const char *ge = P->bounds_only ? ">= " : "";
    num(a, sizeof a, P->layer_us);
    num(b, sizeof b, P->step_us / 1000);
    num(c, sizeof c, P->us_per_token);
    fprintf(out, "\nPer layer %s%s us; model step %s%s ms (%lld layers + per-model ops); %s%s us per token [%s]", ge, a,
            ge, b, (long long)r->m->layers, ge, c, kb_model_timing_label(r));
    if (P->bounds_only) {
        fprintf(out, ".\n**Lower bounds only**: %d of %d ops are missing (listed below), so the times are lower "
                     "bounds and no tokens/s, MFU, GB/s or bandwidth utilisation is given: a rate from part of the "
                     "step says nothing of the whole.\n", P->n_missing, P->n_modelled);
        return;
    }
    num(a, sizeof a, P->tokens_per_s);
    num(b, sizeof b, P->gbps);
    fprintf(out, "; %s tokens/s; %s GB/s moved.\n", a, b);
    num(a, sizeof a, P->mfu);
    num(b, sizeof b, P->bw_util);
    if (r->emulator)
        fputs("MFU and bandwidth utilisation: not applicable (emulator: CPU timings, no GPU peak).\n", out);
    else
        fprintf(out, "MFU %s%s (the weight matmuls executed); bandwidth utilisation %s%s%s.\n",
                P->have_mfu ? a : "n/a (no peak recorded for the dtype)", P->have_mfu ? "%" : "",
                P->have_bw ? b : "n/a", P->have_bw ? "%" : "", r->est ? " [ESTIMATE]" : "");
}

static void md_lists(FILE *out, const kb_model_rollup *r, int ph)
{
    const kb_model_phase_res *P = &r->ph[ph];
    for (int k = 0; k < r->m->n_ops; k++)
        if (P->ops[k].modelled && P->ops[k].row < 0)
            fprintf(out, "- missing **%s**: %s\n", r->m->ops[k].name, P->ops[k].why);
    for (int k = 0; k < r->m->n_ops; k++)
        if (!P->ops[k].modelled)
            fprintf(out, "- not modelled at %s: **%s** (%s)\n", kb_model_phase_names[ph], r->m->ops[k].name,
                    r->m->ops[k].note);
    for (int k = 0; k < r->m->n_ops; k++)
        if (P->ops[k].row >= 0 && P->ops[k].faster_than_roof)
            fprintf(out, "- **warning**: **%s** runs at %.0f%% of its datasheet roofline, faster than the hardware "
                         "allows: its work model counts traffic DRAM never served (data held in L2) or its timing is "
                         "wrong; the figures it enters are suspect\n", r->m->ops[k].name, P->ops[k].pct_roof);
    if (P->focus >= 0)
        fprintf(out, "- optimise first: **%s** (%s)%s\n", r->m->ops[P->focus].name,
                r->emulator ? "largest time; no roof on the emulator" : "largest time x distance from its roof",
                r->est ? " [ESTIMATE]" : "");
}

/* The decode step at the description's decode_points: a row per point, then what each misses. */
static void md_points(FILE *out, const kb_model_rollup *r)
{
    const kb_model_points *p = r->points;
    char cells[KB_MODEL_POINT_COLS][160];
    if (!p) return;
    fprintf(out, "\n## decode at the description's decode_points [%s]\n\nThe decode step again with each point's "
                 "params (after --set); every op takes a row of exactly its dims at the point (nothing is scaled or "
                 "substituted), else it is missing and the step is a lower bound.\n\n|", kb_model_timing_label(r));
    for (int c = 0; c < KB_MODEL_POINT_COLS; c++) fprintf(out, " %s |", kb_model_point_cols[c]);
    fputs("\n|", out);
    for (int c = 0; c < KB_MODEL_POINT_COLS; c++) fputs(c == 0 || c >= 5 ? "---|" : "---:|", out);
    fputc('\n', out);
    for (int i = 0; i < p->n; i++) {
        kb_model_point_cells(p, i, cells);
        md_row(out, cells, KB_MODEL_POINT_COLS);
    }
    for (int i = 0; i < p->n; i++) {
        const kb_model_rollup *q = p->rollups[i];
        for (int k = 0; k < q->m->n_ops; k++)
            if (q->ph[KB_PHASE_DECODE].ops[k].modelled && q->ph[KB_PHASE_DECODE].ops[k].row < 0)
                fprintf(out, "- at %s: missing **%s**: %s\n", p->label[i], q->m->ops[k].name,
                        q->ph[KB_PHASE_DECODE].ops[k].why);
    }
}

static void md_whatif(FILE *out, const kb_model_rollup *r)
{
    char a[48], b[48], c[48], d[48];
    fprintf(out, "\n## Precision what-if [%s]\n\nEach op uses the fastest %s case of the precision where the "
                 "%s has one (vendor rows included), else the %s case.%s\n\n",
            kb_model_timing_label(r), r->est ? "measured or estimated" : "verified", r->est ? "roll-up" : "run",
            kb_dtype_name((kb_dtype)r->dtype),
            r->est ? " Estimated rows are not verified: only measured rows have an error." : "");
    fputs("Worst err/tol: the largest error over its tolerance among the ops run in the precision (below 1 "
          "passes; 1 is at the tolerance). A step marked >= misses ops: a lower bound, with no speed-up.\n\n", out);
    fputs("| dtype | ops in it | vendor rows | prefill step ms | decode step ms | speed-up prefill | speed-up decode "
          "| worst err/tol |\n|---|---:|---:|---:|---:|---:|---:|---:|\n", out);
    const kb_model_whatif *base = NULL;
    for (int i = 0; i < r->n_whatif; i++)
        if (r->whatif[i].dtype == r->dtype) base = &r->whatif[i];
    for (int i = 0; i < r->n_whatif; i++) {
        const kb_model_whatif *w = &r->whatif[i];
        char e[32] = "n/a";
        kb_model_whatif_cells(w, base, a, b, c, d, sizeof a);
        if (w->have_err_tol) snprintf(e, sizeof e, "%.2g", w->worst_err_tol);
        fprintf(out, "| %s | %d | %d | %s | %s | %s | %s | %s |\n", kb_dtype_name((kb_dtype)w->dtype), w->n_at,
                w->n_vendor, a, b, c, d, e);
    }
}

/* Where the figures come from: the run, or the estimates (and the run's measured ops). */
static void md_source(const kb_model_rollup *r, FILE *out)
{
    const kb_report_run *run = r->run;
    if (r->est) {
        int meas = 0, est = 0;
        for (int ph = 0; ph < KB_PHASE_COUNT; ph++)
            for (int k = 0; k < r->m->n_ops; k++)
                if (r->ph[ph].ops[k].row >= 0) *(r->ph[ph].ops[k].estimated ? &est : &meas) += 1;
        fprintf(out, "**ESTIMATE** on %s: every figure marked `(estimate)` comes from kbench estimate's static model "
                     "(docs/estimate.md) of the suite's cases at the model's full shapes, not from a measurement",
                r->est_dev >= 0 ? r->est->devs[r->est_dev].name : "?");
        if (run && r->use_run)
            fprintf(out, "; ops with a GPU-timed case in run %s use its measurement, marked `(gpu)`", run->run_id);
        else if (run)
            fprintf(out, "; run %s is not used: %s", run->run_id, r->run_note);
        fprintf(out, ". Ops: %d measured, %d estimated (both phases); precision %s; model %s.\n\n", meas, est,
                kb_dtype_name((kb_dtype)r->dtype), r->m->file);
        return;
    }
    fprintf(out, "Run %s (%s)", run->run_id, run->source);
    if (r->dev >= 0) fprintf(out, " on %s (sm_%d)", run->devs[r->dev].name, run->devs[r->dev].sm);
    fprintf(out, "; precision %s; model %s.\n\n", kb_dtype_name((kb_dtype)r->dtype), r->m->file);
    if (r->emulator)
        fprintf(out, "**Timing: emulator (CPU timing).** %s MFU is not applicable.\n", KB_REPORT_EMU_NOTE);
    else
        fputs("Timing: GPU (the run's CUDA-event medians).\n", out);
}

static void md_write(const kb_model_rollup *r, FILE *out)
{
    char a[48], b[48];
    fprintf(out, "# Model roll-up: %s%s\n\n%s\n\n", r->m->name, r->est ? " (ESTIMATE)" : "", r->m->description);
    md_source(r, out);
    snprintf(a, sizeof a, "%.4g", r->n_params);
    num(b, sizeof b, r->peak_tflops);
    fprintf(out, "\nN = %s parameters (the weights of the model's matmuls: sum of `weights`). "
                 "MFU = the FLOPs of the weight matmuls the step executes (each op with weights: its case's FLOPs "
                 "x count x layers; about 2N per token, but an LM head run once per sequence counts once) / "
                 "(peak x step time); peak %s TFLOPS (%s, %s); none when ops are missing. Training would take 6N "
                 "FLOPs per token (an estimate: backward ~ 2x forward), i.e. about a third of the prefill "
                 "tokens/s at the same MFU; not measured.\n",
            a, r->peak_tflops > 0 ? b : "n/a", kb_dtype_name((kb_dtype)r->dtype),
            r->est ? "the modelled GPU's datasheet" : "from the run's records");
    for (int ph = 0; ph < KB_PHASE_COUNT; ph++) md_phase(out, r, ph);
    md_points(out, r);
    md_whatif(out, r);
}

kb_status kb_model_write(const kb_model_rollup *r, kb_model_format f, FILE *out)
{
    if (f == KB_MODEL_JSON || f == KB_MODEL_TRACE) {
        json_t *j = f == KB_MODEL_JSON ? kb_model_json(r) : kb_model_trace(r);
        if (!j) return KB_ERR_OOM;
        int rc = json_dumpf(j, out, f == KB_MODEL_JSON ? JSON_INDENT(2) : JSON_COMPACT);
        json_decref(j);
        fputc('\n', out);
        if (rc != 0) return KB_ERR_IO;
    } else if (f == KB_MODEL_HTML) {
        kb_model_html(r, out);
    } else {
        md_write(r, out);
    }
    return fflush(out) == 0 && !ferror(out) ? KB_OK : KB_ERR_IO;
}
