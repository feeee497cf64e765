/* report_charts.c - bar charts, the verification margin and the table script of the HTML
 * report (see report_charts.h). */
#include "results/report_charts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CHART_W 1200      /* [px] fits a 1400-px window beside the page margins */
#define LABEL_W 560       /* [px] case labels */
#define BAR_MAX 500       /* [px] the longest bar */
#define ROW_H 15          /* [px] one bar */

static void text(FILE *out, const char *s) { kb_report_xml_text(out, s); }

/* ---- verification margin ---- */

#define M_LEFT 80
#define M_TOP 20
#define M_H 180
#define M_BOTTOM 52       /* [px] family names and the x axis title */
#define M_LO (-8.0)       /* log10 of the smallest ratio drawn (exact results sit here) */
#define M_HI 1.0

static double margin_y(double ratio)
{
    double l = ratio > 0 ? log10(ratio) : M_LO;
    l = fmin(fmax(l, M_LO), M_HI);
    return M_TOP + M_H * (M_HI - l) / (M_HI - M_LO);
}

/* The y axis: a grid line and label per decade, the tolerance, the axis title. */
static void margin_axes(FILE *out)
{
    for (int e = (int)M_LO; e <= (int)M_HI; e += 1) {
        double y = margin_y(pow(10, e));
        fprintf(out, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#eee\"/>\n"
                     "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\" font-size=\"10\">1e%d</text>\n",
                M_LEFT, y, CHART_W - 10, y, M_LEFT - 4, y + 3, e);
    }
    double y1 = margin_y(1);
    fprintf(out, "<line class=\"tolerance\" x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#c62828\" "
                 "stroke-dasharray=\"4 3\"/>\n<text x=\"%d\" y=\"%.1f\" font-size=\"10\" fill=\"#c62828\" "
                 "text-anchor=\"end\">tolerance (fails above)</text>\n",
            M_LEFT, y1, CHART_W - 10, y1, CHART_W - 12, y1 - 3);
    fprintf(out, "<text class=\"axis\" transform=\"translate(14,%d) rotate(-90)\" text-anchor=\"middle\" "
                 "font-size=\"11\">max error / tolerance (log)</text>\n<line x1=\"%d\" y1=\"%d\" x2=\"%d\" "
                 "y2=\"%d\" stroke=\"#888\"/>\n",
            M_TOP + M_H / 2, M_LEFT, M_TOP, M_LEFT, M_TOP + M_H);
}

/* A verified case of dev whose record has max_err_ratio (null: a non-finite error). */
static int has_margin(const kb_report_row *r, int dev)
{
    return r->dev == dev && r->verified && json_object_get(json_object_get(r->rec, "verify"), "max_err_ratio");
}

static void margin_point(FILE *out, const kb_report_row *r, double x)
{
    json_t *v = json_object_get(json_object_get(r->rec, "verify"), "max_err_ratio");
    double ratio = json_is_number(v) ? json_number_value(v) : INFINITY;   /* null: NaN/inf error */
    int bad = !(ratio <= 1) || r->n_bad > 0;
    char b[48];
    snprintf(b, sizeof b, isfinite(ratio) ? "%.3g" : "non-finite", ratio);
    fprintf(out, "<circle class=\"margin\" cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>", x,
            margin_y(ratio), bad ? "#c62828" : "#1a7f37");
    text(out, r->case_id);
    fprintf(out, ": max error / tolerance %s</title></circle>\n", b);
}

/* The family's name under its group of points, and a separator before the next. */
static void family_label(FILE *out, const char *family, double x0, double x1)
{
    double y = M_TOP + M_H;
    fprintf(out, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#bbb\"/>\n"
                 "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"10\">",
            x1, M_TOP, x1, y + 4, (x0 + x1) / 2, y + 16);
    text(out, family);
    fputs("</text>\n", out);
}

void kb_report_chart_margin(const kb_report_run *run, int dev, FILE *out)
{
    int n = 0;
    for (size_t i = 0; i < run->n; i++) n += has_margin(&run->rows[i], dev);
    if (n == 0) return;
    fputs("<p>Each verified case's largest error relative to its tolerance (max_err_ratio, log scale): below 1 "
          "passes; exact results sit on the bottom line. Cases are grouped by family in run order; hover a point "
          "for its case. Meaningful on the emulator too: the kernels are the same.</p>\n", out);
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"margin\" width=\"%d\" "
                 "height=\"%d\">\n", CHART_W, M_TOP + M_H + M_BOTTOM);
    margin_axes(out);
    double step = (double)(CHART_W - M_LEFT - 20) / n;
    int k = 0;
    for (size_t f = 0; f < run->n; f++) {   /* family by family, at its first row */
        const char *fam = run->rows[f].family;
        size_t j = 0;
        while (j < f && (!has_margin(&run->rows[j], dev) || strcmp(run->rows[j].family, fam))) j++;
        if (j < f || !has_margin(&run->rows[f], dev)) continue;
        double x0 = M_LEFT + step * k;
        for (size_t i = f; i < run->n; i++)
            if (has_margin(&run->rows[i], dev) && !strcmp(run->rows[i].family, fam))
                margin_point(out, &run->rows[i], M_LEFT + step * (k++ + 0.5));
        family_label(out, fam, x0, M_LEFT + step * k);
    }
    fprintf(out, "<text class=\"axis\" x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"11\">verified cases, "
                 "by family</text>\n</svg>\n", (CHART_W + M_LEFT) / 2, M_TOP + M_H + M_BOTTOM - 6);
}

/* ---- precision groups ---- */

static void precision_bar(FILE *out, const kb_report_run *run, int row, const char *who, int dt, int rc, int y,
                          double vmax, double bf16_us)
{
    const kb_report_row *r = &run->rows[row];
    char t[48], sp[48] = "", acc[64] = "";
    double w = BAR_MAX * r->median_us / vmax;
    kb_report_num(t, sizeof t, r->median_us);
    if (bf16_us > 0) {
        kb_report_num(sp, sizeof sp, bf16_us / r->median_us);
        strcat(sp, "x vs bf16");
    }
    if (r->have_acc && isfinite(r->acc_snr_db))
        snprintf(acc, sizeof acc, ", SNR %.1f dB", r->acc_snr_db);
    fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\" font-size=\"11\">%s %s %s</text>"
                 "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>",
            LABEL_W / 3 - 4, y + 10, kb_dtype_name((kb_dtype)dt), kb_recipe_name((kb_recipe)rc), who, LABEL_W / 3, y,
            w < 1 ? 1.0 : w, ROW_H - 3, strcmp(who, "kbench") ? "#9a6fb0" : "#4a7fb5");
    text(out, r->case_id);
    fprintf(out, "</title></rect><text x=\"%.1f\" y=\"%d\" font-size=\"10\">%s us (%s) %s%s</text>\n",
            LABEL_W / 3 + (w < 1 ? 1.0 : w) + 4, y + 10, t, r->clock, sp, acc);
}

/* 1 when row i ran with a time (a bar can be drawn). */
static int timed(const kb_report_run *run, int i) { return i >= 0 && run->rows[i].ok && run->rows[i].have_timing; }

void kb_report_chart_precision(const kb_report_run *run, const kb_precision_group *g, FILE *out)
{
    double vmax = 0;
    int n = 0;
    for (int d = 0; d < KB_DT_COUNT; d++)
        for (int rc = 0; rc < KB_RECIPE_COUNT; rc++) {
            int rows[2] = { g->rows[d][rc], g->vendor[d][rc] };
            for (int w = 0; w < 2; w++)
                if (timed(run, rows[w])) {
                    vmax = fmax(vmax, run->rows[rows[w]].median_us);
                    n++;
                }
        }
    if (n == 0 || !(vmax > 0)) return;
    int ref = g->rows[KB_DT_BF16][KB_RECIPE_TENSOR];
    double bf16 = ref >= 0 ? run->rows[ref].median_us : 0;
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" data-chart=\"precision\" width=\"%d\" "
                 "height=\"%d\">\n", CHART_W, n * ROW_H + 6);
    int y = 3;
    for (int d = 0; d < KB_DT_COUNT; d++)
        for (int rc = 0; rc < KB_RECIPE_COUNT; rc++) {
            int rows[2] = { g->rows[d][rc], g->vendor[d][rc] };
            for (int w = 0; w < 2; w++) {
                if (!timed(run, rows[w])) continue;
                precision_bar(out, run, rows[w], w ? run->rows[rows[w]].variant : "kbench", d, rc, y, vmax, bf16);
                y += ROW_H;
            }
        }
    fputs("</svg>\n", out);
}

/* ---- sorting and filtering (no <, > or & in the script: the page stays well-formed XML) ---- */

static const char table_script[] =
    "(function(){\n"
    "function key(td){var s=td.textContent.trim();var n=parseFloat(s);"
    "return isNaN(n)?{n:0,s:s.toLowerCase()}:{n:1,v:n};}\n"
    "function cmp(a,b){if(a.n!==b.n){return b.n-a.n;}"
    "if(a.n===1){return a.v-b.v;}return a.s.localeCompare(b.s);}\n"
    "document.querySelectorAll('table.sortable').forEach(function(t){\n"
    " var ths=t.tHead.rows[0].cells;\n"
    " Array.prototype.forEach.call(ths,function(th,i){th.title='sort';th.style.cursor='pointer';\n"
    "  th.addEventListener('click',function(){\n"
    "   var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows);\n"
    "   var dir=th.getAttribute('data-sort')==='asc'?-1:1;\n"
    "   rows.sort(function(x,y){return dir*cmp(key(x.cells[i]),key(y.cells[i]));});\n"
    "   rows.forEach(function(r){b.appendChild(r);});\n"
    "   Array.prototype.forEach.call(ths,function(h){h.removeAttribute('data-sort');});\n"
    "   th.setAttribute('data-sort',dir===1?'asc':'desc');});});});\n"
    "document.querySelectorAll('input.filter').forEach(function(inp){\n"
    " inp.addEventListener('input',function(){\n"
    "  var t=document.getElementById(inp.getAttribute('data-table')),q=inp.value.toLowerCase();\n"
    "  Array.prototype.forEach.call(t.tBodies[0].rows,function(r){\n"
    "   r.style.display=r.textContent.toLowerCase().indexOf(q)===-1?'none':'';});});});\n"
    "})();\n";

void kb_report_table_script(FILE *out)
{
    fprintf(out, "<script>\n%s</script>\n", table_script);
}
