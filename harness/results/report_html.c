/* report_html.c - one self-contained HTML page (no external files; one inline script for
 * sorting and filtering the tables): per device the roofline as inline SVG (GPU runs), bar
 * charts of TFLOPS and GB/s per family, the verification margin and the table of cases,
 * then the precision comparison of GEMM/attention shapes (a bar chart and a table per
 * shape). Every element is closed (void elements written as <meta .../>), so the page also
 * parses as XML. */
#include "results/report_html.h"
#include "results/report_charts.h"
#include "results/report_svg.h"

#include <stdlib.h>
#include <string.h>

static const char style[] =
    "body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:1300px}"
    ".scroll{overflow:auto;max-width:100%;max-height:80vh}"
    "td.t{word-break:break-all}td.t:first-child{min-width:26em}"
    "input.filter{margin:0.5em 0;width:30em}"
    "table{border-collapse:collapse;margin:1em 0;font-size:13px}"
    "th,td{border:1px solid #ccc;padding:3px 6px;text-align:right}"
    "th{background:#f3f3f3}td.t{text-align:left;font-family:monospace}"
    ".ok{color:#1a7f37}.failed{color:#c62828;font-weight:bold}.skipped{color:#777}"
    ".note{background:#fff4e5;border-left:4px solid #f0a020;padding:8px 12px;max-width:60em}"
    ".zero{font-size:13px}";

static void text(FILE *out, const char *s) { kb_report_xml_text(out, s); }

static void td_text(FILE *out, const char *s)
{
    fputs("<td class=\"t\">", out);
    text(out, s);
    fputs("</td>", out);
}

static void td_num(FILE *out, int have, double v)
{
    char b[48] = "";
    if (have) kb_report_num(b, sizeof b, v);
    fprintf(out, "<td>%s</td>", b);
}

static void case_row(FILE *out, const kb_report_row *r, int emu)
{
    char b[96];
    const char *cls = r->ok ? "ok" : r->failed ? "failed" : "skipped";
    fputs("<tr>", out);
    td_text(out, r->case_id);
    fprintf(out, "<td class=\"t %s\">", cls);
    text(out, r->status);
    fputs("</td>", out);
    kb_report_verified_text(r, b, sizeof b);
    td_text(out, b);
    b[0] = 0;
    if (r->have_timing) {
        kb_report_num(b, sizeof b, r->median_us);
        snprintf(b + strlen(b), sizeof b - strlen(b), " (%s)", r->clock);
    }
    fputs("<td>", out);
    text(out, b);
    fputs("</td>", out);
    td_num(out, r->d.have_rates, r->d.tflops);
    td_num(out, r->d.have_rates, r->d.gbps);
    td_num(out, r->d.have_rates, r->d.ai);
    td_num(out, r->d.have_roof && !emu, r->d.pct_roof);
    td_num(out, r->d.have_measured && !emu, r->d.pct_measured);
    td_num(out, r->d.have_path && !emu, r->d.pct_path);
    const char *bound = kb_bound_name(r->d.bound);
    td_text(out, bound && !emu ? bound : "");
    snprintf(b, sizeof b, "%d", r->samples);
    fprintf(out, "<td>%s</td>", r->have_timing ? b : "");
    td_num(out, r->have_timing, r->cv);
    td_text(out, r->reason);
    fputs("</tr>\n", out);
}

static void device_section(FILE *out, const kb_report_run *run, int dev)
{
    const kb_report_device *d = dev >= 0 ? &run->devs[dev] : NULL;
    int emu = d && d->emulator;
    fputs("<h2>", out);
    if (d) {
        text(out, d->name);
        fprintf(out, " (sm_%d)", d->sm);
    } else {
        fputs("Cases without a device", out);
    }
    fputs("</h2>\n", out);
    if (emu) {
        fputs("<p class=\"note\"><strong>", out);
        text(out, KB_REPORT_EMU_NOTE);
        fputs("</strong></p>\n", out);
    } else {
        double peak[KB_DT_COUNT], bw;
        const char *src;
        kb_report_ceilings(run, dev, peak, &bw, &src);
        if (bw > 0) {
            fprintf(out, "<p>Roofline ceilings: %s peaks recorded with the run (solid), measured ceilings of this "
                         "device where a ceilings run exists (dashed). %%meas: of the measured roof; %%path: of the "
                         "kernel's instruction path (measured, else datasheet). GB/s counts compulsory bytes only; "
                         "hover a point for its case id.</p>\n", src && strcmp(src, "clock") == 0 ? "clock-based" : "datasheet");
            kb_report_svg_roofline(run, dev, out);
            int any = 0;
            for (size_t i = 0; i < run->n; i++) {
                const kb_report_row *r = &run->rows[i];
                if (r->dev != dev || !r->ok || !r->d.have_rates || (r->d.tflops > 0 && r->d.ai > 0))
                    continue;
                if (!any) fputs("<p class=\"zero\">Not on the chart (no FLOPs, a log axis has no 0):</p>\n<ul class=\"zero\">\n", out);
                any = 1;
                fputs("<li>", out);
                text(out, r->case_id);
                char gb[48], pct[48];
                kb_report_num(gb, sizeof gb, r->d.gbps);
                kb_report_num(pct, sizeof pct, r->d.pct_roof);
                fprintf(out, ": %s GB/s", gb);
                if (r->d.have_roof) fprintf(out, ", %s%% of the bandwidth ceiling", pct);
                fputs("</li>\n", out);
            }
            if (any) fputs("</ul>\n", out);
        } else {
            fputs("<p class=\"note\">No GPU peaks were recorded for this device: rates only, no roofline.</p>\n", out);
        }
    }
    kb_report_chart_families(run, dev, out);
    kb_report_chart_margin(run, dev, out);
    fprintf(out, "<h3>Cases</h3>\n<input class=\"filter\" type=\"search\" placeholder=\"filter cases\" "
                 "data-table=\"cases-%d\"/>\n<div class=\"scroll\"><table class=\"sortable\" id=\"cases-%d\">\n"
                 "<thead><tr><th>case</th><th>status</th><th>verified / max_err</th><th>median_us (clock)</th>"
                 "<th>TFLOPS</th><th>GB/s</th><th>AI</th><th>%%roof</th><th>%%meas</th><th>%%path</th><th>bound</th>"
                 "<th>samples</th><th>cv</th><th>reason</th></tr></thead>\n<tbody>\n", dev + 1, dev + 1);
    for (size_t i = 0; i < run->n; i++)
        if (run->rows[i].dev == dev)
            case_row(out, &run->rows[i], emu);
    fputs("</tbody></table></div>\n", out);
}

static void precision_row(FILE *out, const kb_report_run *run, const kb_precision_group *g, int d, int rc)
{
    char cells[KB_PRECISION_COLS][256];
    kb_report_precision_cells(run, g, d, rc, cells);
    fputs("<tr>", out);
    for (int c = 0; c < KB_PRECISION_COLS; c++) {
        if (c < 3 || c == 9)
            td_text(out, cells[c]);   /* left-aligned text columns */
        else {
            fputs("<td>", out);
            text(out, cells[c]);
            fputs("</td>", out);
        }
    }
    fputs("</tr>\n", out);
}

static void precision_section(FILE *out, const kb_report_run *run)
{
    kb_precision_group *g;
    int n = kb_report_precision_groups(run, &g);
    if (n <= 0)
        return;
    fputs("<h2>Precision comparison</h2>\n<p>", out);
    text(out, KB_PRECISION_NOTE);
    fputs("</p>\n", out);
    for (int k = 0; k < n; k++) {
        kb_sb title;
        kb_sb_init(&title);
        kb_report_precision_title(run, &g[k], &title);
        fputs("<h3>", out);
        text(out, title.s);
        fputs("</h3>\n", out);
        kb_sb_free(&title);
        kb_report_chart_precision(run, &g[k], out);
        fputs("<div class=\"scroll\"><table>\n<tr>", out);
        for (int c = 0; c < KB_PRECISION_COLS; c++)
            fprintf(out, "<th>%s</th>", kb_precision_cols[c]);
        fputs("</tr>\n", out);
        for (int d = 0; d < KB_DT_COUNT; d++)
            for (int rc = 0; rc < KB_RECIPE_COUNT; rc++)
                if (g[k].rows[d][rc] >= 0)
                    precision_row(out, run, &g[k], d, rc);
        fputs("</table></div>\n", out);
    }
    free(g);
}

/* The page's head and title line, up to the first section. */
static void page_start(FILE *out, const kb_report_run *run, const char *what)
{
    kb_sb sum;
    kb_sb_init(&sum);
    kb_report_summary(run, &sum);
    fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>kbench %s: ", what);
    text(out, run->run_id);
    fprintf(out, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>kbench %s: ", style, what);
    text(out, *run->run_id ? run->run_id : "(no run id)");
    fputs("</h1>\n<p>source: <code>", out);
    text(out, run->source);
    fputs("</code>; recorded ", out);
    text(out, *run->time ? run->time : "?");
    fputs("; ", out);
    text(out, sum.s);
    fputs("</p>\n", out);
    kb_sb_free(&sum);
}

kb_status kb_report_html_precision(const kb_report_run *run, FILE *out)
{
    page_start(out, run, "precision table");
    for (int d = 0; d < run->n_devs; d++)
        if (run->devs[d].emulator) {
            fputs("<p class=\"note\"><strong>", out);
            text(out, KB_REPORT_EMU_NOTE);
            fputs("</strong></p>\n", out);
            break;
        }
    kb_precision_group *g;
    int n = kb_report_precision_groups(run, &g);
    free(g);
    if (n <= 0)
        fputs("<p>No precision comparison: no GEMM or attention shape of this run has two or more precisions that "
              "ran (or a vendor row beside one).</p>\n", out);
    precision_section(out, run);
    fputs("</body>\n</html>\n", out);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}

kb_status kb_report_html(const kb_report_run *run, FILE *out)
{
    page_start(out, run, "report");
    for (int d = 0; d < run->n_devs; d++)
        device_section(out, run, d);
    for (size_t i = 0; i < run->n; i++)
        if (run->rows[i].dev < 0) { device_section(out, run, -1); break; }
    precision_section(out, run);
    kb_report_table_script(out);
    fputs("</body>\n</html>\n", out);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}
