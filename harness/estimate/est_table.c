/* est_table.c - `kbench estimate` as aligned text and CSV (est_table.h). */
#include "estimate/est_table.h"

#include "kernels/families.h"

#include <stdlib.h>
#include <string.h>

/* The fixed columns of a row, then one per roof (KB_ROOF_COUNT), then a note. */
enum { C_CASE = 0, C_LIMIT, C_EST, C_PCT, C_OCC, C_OCCL, C_WAVES, C_SM, C_ROOF0 };
#define NCOLS  (C_ROOF0 + KB_ROOF_COUNT + 1)
#define C_NOTE (NCOLS - 1)
#define CELL   192

typedef char row_cells[NCOLS][CELL];

static const char *const fixed_heads[C_ROOF0] = {
    "case", "limit", "est_us", "%roof", "occ", "occ_limit", "waves", "sm%"
};

static void row_to_cells(const kb_est_row *r, row_cells c)
{
    const kb_estimate *e = &r->e;
    snprintf(c[C_CASE], CELL, "%s", r->id);
    snprintf(c[C_LIMIT], CELL, "%s", kb_est_roof_name(e->limit));
    snprintf(c[C_EST], CELL, "%.2f", e->est_us);
    snprintf(c[C_PCT], CELL, "%.1f", e->pct_roofline);
    snprintf(c[C_OCC], CELL, "%d", e->occ.blocks);
    snprintf(c[C_OCCL], CELL, "%s", e->occ.limit);
    snprintf(c[C_WAVES], CELL, "%.2f", e->waves);
    snprintf(c[C_SM], CELL, "%.1f", 100.0 * e->sm_use / e->imbalance);
    for (int k = 0; k < KB_ROOF_COUNT; k++)
        snprintf(c[C_ROOF0 + k], CELL, "%.2f", e->roof_us[k]);
    int uncal = e->roof_us[KB_ROOF_TENSOR] > 0 && !e->tensor_calibrated;
    snprintf(c[C_NOTE], CELL, "%s%s%s", e->modelled ? "" : "work model only: no traffic hook",
             !e->modelled && uncal ? "; " : "", uncal ? "tensor path uncalibrated" : "");
}

/* Print the table: a column is shown when its header is fixed or some row has a non-zero
 * figure (roofs) or a note; widths from the widest cell. */
static void print_table(row_cells *cells, int n, FILE *out)
{
    row_cells head;
    int width[NCOLS], show[NCOLS];
    for (int k = 0; k < NCOLS; k++) {
        if (k < C_ROOF0)
            snprintf(head[k], CELL, "%s", fixed_heads[k]);
        else if (k < C_NOTE)
            snprintf(head[k], CELL, "%s_us", kb_est_roof_name((kb_est_roof)(k - C_ROOF0)));
        else
            snprintf(head[k], CELL, "note");
        show[k] = k < C_ROOF0;
        width[k] = (int)strlen(head[k]);
        for (int i = 0; i < n; i++) {
            show[k] |= k == C_NOTE ? cells[i][k][0] != 0 : k >= C_ROOF0 && strtod(cells[i][k], NULL) != 0;
            if ((int)strlen(cells[i][k]) > width[k])
                width[k] = (int)strlen(cells[i][k]);
        }
    }
    for (int i = -1; i < n; i++) {
        const char *sep = "";
        for (int k = 0; k < NCOLS; k++) {
            if (!show[k])
                continue;
            const char *s = i < 0 ? head[k] : cells[i][k];
            int left = k == C_CASE || k == C_LIMIT || k == C_OCCL || k == C_NOTE;
            fprintf(out, left ? "%s%-*s" : "%s%*s", sep, k == C_NOTE ? 0 : width[k], s);
            sep = "  ";
        }
        fputc('\n', out);
    }
}

static void print_header(const kb_est_report_opts *o, int shown, int estimated, FILE *out)
{
    const kb_est_target *t = o->x;
    const kb_est_gpu *g = t->gpu;
    double eff;
    int cal = kb_est_tensor_efficiency(g->sm, KB_TENSOR_MMA_SYNC, &eff, NULL);
    char clock[128] = "clock unpublished (sfu, cvt, issue, smem and l2 roofs left out; tensor and simt at the "
                      "datasheet rate)";
    if (t->clock_mhz > 0)
        snprintf(clock, sizeof clock, "model clock %.0f MHz (every on-chip roof)", t->clock_mhz);
    fprintf(out,
            "ESTIMATE: static model, NOT a measurement (docs/estimate.md). GPU %s = %s, %s, %d SMs, compiled "
            "for %s\n",
            g->name, t->peaks->sku, kb_arch_name(g->sm), g->sms, kb_arch_name(o->sm));
    fprintf(out,
            "ESTIMATE: %s; DRAM %.0f GB/s achievable (%s; datasheet "
            "%.0f); launch %.1f us eager, %.1f us graph (%s); mma.sync at %.3f of the dense peak (%s)\n",
            clock, t->dram_gbps, t->dram_source, kb_peaks_gbps(t->peaks, NULL), t->launch_us[0], t->launch_us[1],
            t->launch_source, eff, cal == 1 ? "calibrated table" : "uncalibrated: datasheet rate");
    if (o->ceilings_note && *o->ceilings_note)
        fprintf(out, "ESTIMATE: ceilings %s\n", o->ceilings_note);
    fprintf(out, "ESTIMATE: assumptions: %s\n", t->arch->assumption);
    if (o->quiet)
        return;
    if (o->top > 0)
        fprintf(out, "ESTIMATE: the %d %s of %d estimated cases\n", shown,
                o->sort == KB_EST_SORT_ROOF ? "furthest from their roofline (lowest %roof)"
                                            : "slowest (largest est_us)",
                estimated);
    else
        fprintf(out, "ESTIMATE: %d estimated cases, %s\n", shown,
                o->sort == KB_EST_SORT_TIME   ? "slowest first"
                : o->sort == KB_EST_SORT_ROOF ? "lowest %roof first"
                                              : "in plan order");
}

/* The cases not estimated, one line per (status, reason) with its count. */
static void print_not_estimated(const kb_est_rows *rows, FILE *out)
{
    for (size_t i = 0; i < rows->n; i++) {
        const kb_est_row *r = &rows->rows[i];
        size_t j, count = 0;
        if (r->status == KB_EST_ROW_OK)
            continue;
        for (j = 0; j < i; j++) /* counted at its first occurrence */
            if (rows->rows[j].status == r->status && strcmp(rows->rows[j].why, r->why) == 0)
                break;
        if (j < i)
            continue;
        for (j = i; j < rows->n; j++)
            count += rows->rows[j].status == r->status && strcmp(rows->rows[j].why, r->why) == 0;
        fprintf(out, "not estimated: %zu %s: %s (e.g. %s)\n", count, kb_est_row_status_name(r->status), r->why, r->id);
    }
}

static void print_summary(const kb_est_rows *rows, FILE *out)
{
    kb_est_family_sum *s;
    int n = kb_est_summarise(rows, &s);
    if (n <= 0) {
        free(s);
        return;
    }
    int wf = (int)strlen("family");
    for (int i = 0; i < n; i++)
        if ((int)strlen(kb_families[s[i].family]->name) > wf)
            wf = (int)strlen(kb_families[s[i].family]->name);
    fprintf(out, "\nESTIMATE per family (every estimated case, not only the rows shown):\n");
    fprintf(out, "%-*s  %5s  %14s  %12s  %s\n", wf, "family", "cases", "total_est_us", "median_%roof",
            "dominant limit (share of the family's estimated time)");
    for (int i = 0; i < n; i++)
        fprintf(out, "%-*s  %5d  %14.2f  %12.1f  %s (%.0f%%)\n", wf, kb_families[s[i].family]->name, s[i].cases,
                s[i].total_us, s[i].median_pct, kb_est_roof_name(s[i].dominant), s[i].dominant_share);
    free(s);
}

kb_status kb_est_write_text(const kb_est_rows *rows, const kb_est_report_opts *o, FILE *out)
{
    size_t *idx;
    int n = kb_est_select(rows, o, &idx);
    row_cells *cells = n > 0 ? malloc((size_t)n * sizeof *cells) : NULL;
    if (n < 0 || (n > 0 && !cells)) {
        free(idx);
        return KB_ERR_OOM;
    }
    print_header(o, n, (int)kb_est_rows_count(rows, KB_EST_ROW_OK), out);
    if (!o->quiet) {
        for (int i = 0; i < n; i++)
            row_to_cells(&rows->rows[idx[i]], cells[i]);
        if (n > 0)
            print_table(cells, n, out);
        print_not_estimated(rows, out);
    }
    print_summary(rows, out);
    free(cells);
    free(idx);
    return KB_OK;
}

/* One CSV field: quoted when it holds a comma, a quote or a line break (quotes doubled). */
static void csv_field(FILE *out, const char *s, int last)
{
    if (strpbrk(s, ",\"\r\n")) {
        fputc('"', out);
        for (; *s; s++)
            fputs(*s == '"' ? "\"\"" : (char[]){ *s, 0 }, out);
        fputc('"', out);
    } else {
        fputs(s, out);
    }
    fputc(last ? '\n' : ',', out);
}

kb_status kb_est_write_csv(const kb_est_rows *rows, const kb_est_report_opts *o, FILE *out)
{
    size_t *idx;
    int n = kb_est_select(rows, o, &idx);
    if (n < 0)
        return KB_ERR_OOM;
    fputs("estimate,gpu,case_id,family,variant,dtype,pad,launch,limit,est_us,pct_roofline,occupancy,occ_limit,waves,"
          "sm_pct",
          out);
    for (int k = 0; k < KB_ROOF_COUNT; k++)
        fprintf(out, ",%s_us", kb_est_roof_name((kb_est_roof)k));
    fputs(",note\n", out);
    for (int i = 0; i < n; i++) {
        const kb_est_row *r = &rows->rows[idx[i]];
        const kb_family *f = kb_families[r->c.family];
        row_cells c;
        row_to_cells(r, c);
        fprintf(out, "ESTIMATE,%s,", o->x->gpu->name);
        csv_field(out, r->id, 0);
        fprintf(out, "%s,%s,%s,%d,%s,", f->name, f->variants[r->c.variant].name, kb_dtype_name(r->c.dtype), r->c.pad,
                kb_launch_name(r->c.launch));
        for (int k = C_LIMIT; k < C_NOTE; k++)
            csv_field(out, c[k], 0);
        csv_field(out, c[C_NOTE], 1);
    }
    free(idx);
    return KB_OK;
}
