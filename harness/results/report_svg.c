/* report_svg.c - the log-log roofline chart of one device as inline SVG: x is arithmetic
 * intensity [FLOP/byte], y is TFLOPS; the bandwidth slope and one compute ceiling per
 * dtype from the recorded peaks, the device's measured ceilings dashed beside them (where a
 * ceilings run was recorded); each ok case a point whose <title> is its id. */
#include "results/report_svg.h"

#include <math.h>
#include <string.h>

#define W 760.0      /* [px] whole chart */
#define H 460.0
#define ML 70.0      /* [px] margins: left (y labels), right (ceiling labels), top, bottom */
#define MR 170.0
#define MT 20.0
#define MB 50.0

static const char *const dtype_colour[KB_DT_COUNT] = {
    "#1f77b4", "#17becf", "#d62728", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f",
};

typedef struct { double x0, x1, y0, y1; } range;   /* log10 of the axis ends */

static double px(const range *r, double ai) { return ML + (log10(ai) - r->x0) / (r->x1 - r->x0) * (W - ML - MR); }
static double py(const range *r, double t) { return MT + (r->y1 - log10(t)) / (r->y1 - r->y0) * (H - MT - MB); }

static int plotted(const kb_report_row *r, int dev)
{
    return r->dev == dev && r->ok && r->d.have_rates && r->d.tflops > 0 && r->d.ai > 0;
}

/* Axis ends: every point and every ridge point inside, whole decades, at most 8 of them
 * on y so that one very slow case does not flatten the chart. */
static range axis_range(const kb_report_run *run, int dev, const double *peak, double bw)
{
    double xlo = INFINITY, xhi = 0, ylo = INFINITY, yhi = 0;
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        if (!plotted(r, dev)) continue;
        xlo = fmin(xlo, r->d.ai); xhi = fmax(xhi, r->d.ai);
        ylo = fmin(ylo, r->d.tflops); yhi = fmax(yhi, r->d.tflops);
    }
    for (int d = 0; d < KB_DT_COUNT; d++) {
        if (peak[d] <= 0 || bw <= 0) continue;
        double ridge = peak[d] * 1e3 / bw;
        xlo = fmin(xlo, ridge); xhi = fmax(xhi, ridge);
        yhi = fmax(yhi, peak[d]);
        ylo = fmin(ylo, peak[d] / 100);
    }
    if (!(xhi > 0)) { xlo = 0.1; xhi = 1000; }
    if (!(yhi > 0)) { ylo = 0.01; yhi = 100; }
    range r = { floor(log10(xlo / 2)), ceil(log10(xhi * 2)), floor(log10(ylo / 2)), ceil(log10(yhi * 1.5)) };
    if (r.y1 - r.y0 > 8) r.y0 = r.y1 - 8;
    if (r.x1 - r.x0 < 2) r.x1 = r.x0 + 2;
    if (r.y1 - r.y0 < 2) r.y0 = r.y1 - 2;
    return r;
}

static void grid(FILE *out, const range *r)
{
    double bottom = H - MB, right = W - MR;
    fprintf(out, "<g class=\"grid\" stroke=\"#ddd\" stroke-width=\"1\">\n");
    for (double e = r->x0; e <= r->x1; e++)
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", px(r, pow(10, e)), MT, px(r, pow(10, e)), bottom);
    for (double e = r->y0; e <= r->y1; e++)
        fprintf(out, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", ML, py(r, pow(10, e)), right, py(r, pow(10, e)));
    fprintf(out, "</g>\n<g class=\"axes\" font-size=\"11\" fill=\"#333\">\n");
    for (double e = r->x0; e <= r->x1; e++)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", px(r, pow(10, e)), bottom + 16, pow(10, e));
    for (double e = r->y0; e <= r->y1; e++)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", ML - 6, py(r, pow(10, e)) + 4, pow(10, e));
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">arithmetic intensity [FLOP/byte]</text>\n",
            (ML + right) / 2, H - 12);
    fprintf(out, "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\">TFLOPS (TOPS for int8)</text>\n",
            (MT + bottom) / 2);
    fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n",
            ML, MT, right - ML, bottom - MT);
    fprintf(out, "</g>\n");
}

/* The bandwidth slope and the compute ceilings, clipped to the plot area. Dtypes with
 * the same peak share one line and one label. */
static void ceilings(FILE *out, const range *r, int dev, const double *peak, double bw, const char *src)
{
    double xmin = pow(10, r->x0), xmax = pow(10, r->x1);
    fprintf(out, "<g clip-path=\"url(#kb-plot-%d)\" fill=\"none\" stroke-width=\"2\">\n", dev);
    double top = 0;
    for (int d = 0; d < KB_DT_COUNT; d++) top = fmax(top, peak[d]);
    double x_end = top > 0 ? top * 1e3 / bw : xmax;
    fprintf(out, "<line class=\"bandwidth\" stroke=\"#444\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">"
                 "<title>memory bandwidth %.0f GB/s (%s)</title></line>\n",
            px(r, xmin), py(r, xmin * bw / 1e3), px(r, x_end), py(r, x_end * bw / 1e3), bw, src);
    fprintf(out, "</g>\n<g font-size=\"11\">\n");
    /* the slope's label above the line, ending a decade in from the left */
    double xl = xmin * 10;
    fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#444\" text-anchor=\"end\">%.0f GB/s</text>\n",
            px(r, xl) - 2, fmin(fmax(py(r, xl * bw / 1e3), MT + 14), H - MB - 4) - 4, bw);
    int done[KB_DT_COUNT] = { 0 };
    for (int d = 0; d < KB_DT_COUNT; d++) {
        if (peak[d] <= 0 || done[d]) continue;
        kb_sb names;
        kb_sb_init(&names);
        for (int e = d; e < KB_DT_COUNT; e++)
            if (peak[e] == peak[d]) {
                kb_sb_printf(&names, "%s%s", names.len ? "/" : "", kb_dtype_name((kb_dtype)e));
                done[e] = 1;
            }
        double ridge = peak[d] * 1e3 / bw, y = py(r, peak[d]);
        fprintf(out, "<line class=\"ceiling\" stroke=\"%s\" stroke-width=\"2\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\">"
                     "<title>%s peak %.1f TFLOPS (%s)</title></line>\n",
                dtype_colour[d], px(r, ridge), y, px(r, xmax), y, names.s, peak[d], src);
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" fill=\"%s\">%s %.0f</text>\n", W - MR + 6, y + 4,
                dtype_colour[d], names.s, peak[d]);
        kb_sb_free(&names);
    }
    fprintf(out, "</g>\n");
}

/* The measured ceilings (dashed), beside the datasheet lines: the measured bandwidth slope
 * and the measured rate of each instruction path the run's kernels were scored against. */
static void measured(FILE *out, const kb_report_run *run, const range *r, int dev)
{
    char kinds[KB_PEAKS_MAX_MEASURED][40];
    double t[KB_PEAKS_MAX_MEASURED], bw;
    int nk = kb_report_measured(run, dev, &bw, kinds, t, KB_PEAKS_MAX_MEASURED);
    if (bw <= 0 && nk == 0)
        return;
    double xmin = pow(10, r->x0), xmax = pow(10, r->x1);
    fprintf(out, "<g class=\"measured\" clip-path=\"url(#kb-plot-%d)\" fill=\"none\" stroke-width=\"1.5\" "
                 "stroke-dasharray=\"6 4\">\n", dev);
    double top = 0;
    for (int k = 0; k < nk; k++) top = fmax(top, t[k]);
    if (bw > 0) {
        double x_end = top > 0 ? top * 1e3 / bw : xmax;
        fprintf(out, "<line class=\"measured-bandwidth\" stroke=\"#444\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                     "y2=\"%.1f\"><title>measured bandwidth %.0f GB/s (ceilings run)</title></line>\n",
                px(r, xmin), py(r, xmin * bw / 1e3), px(r, x_end), py(r, x_end * bw / 1e3), bw);
    }
    for (int k = 0; k < nk; k++) {
        double ridge = bw > 0 ? t[k] * 1e3 / bw : xmin, y = py(r, t[k]);
        fprintf(out, "<line class=\"measured-ceiling\" stroke=\"#666\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                     "y2=\"%.1f\"><title>measured %s %.1f TFLOPS (ceilings run)</title></line>\n",
                px(r, ridge), y, px(r, xmax), y, kinds[k], t[k]);
    }
    fprintf(out, "</g>\n<g font-size=\"10\" fill=\"#666\">\n");
    for (int k = 0; k < nk; k++)
        fprintf(out, "<text x=\"%.1f\" y=\"%.1f\">measured %s %.0f</text>\n", W - MR + 6, py(r, t[k]) + 14, kinds[k],
                t[k]);
    fprintf(out, "</g>\n");
}

static void points(FILE *out, const kb_report_run *run, const range *r, int dev)
{
    fprintf(out, "<g class=\"points\" stroke=\"#000\" stroke-width=\"0.5\" fill-opacity=\"0.8\">\n");
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *row = &run->rows[i];
        kb_dtype dt;
        if (!plotted(row, dev)) continue;
        const char *colour = kb_dtype_parse(row->dtype, &dt) == 0 ? dtype_colour[dt] : "#000";
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"><title>", px(r, row->d.ai),
                py(r, row->d.tflops), colour);
        kb_report_xml_text(out, row->case_id);
        fprintf(out, ": AI %.3g FLOP/byte, %.4g TFLOPS", row->d.ai, row->d.tflops);
        if (row->d.have_roof)
            fprintf(out, ", %.1f%% of the roofline (%s-bound)", row->d.pct_roof, kb_bound_name(row->d.bound));
        if (row->d.have_measured)
            fprintf(out, ", %.1f%% of the measured roof", row->d.pct_measured);
        if (row->d.have_path)
            fprintf(out, ", %.1f%% of %s (%s)", row->d.pct_path, row->d.path, row->d.path_source);
        fprintf(out, "</title></circle>\n");
    }
    fprintf(out, "</g>\n");
}

void kb_report_svg_roofline(const kb_report_run *run, int dev, FILE *out)
{
    double peak[KB_DT_COUNT], bw;
    const char *src;
    kb_report_ceilings(run, dev, peak, &bw, &src);
    range r = axis_range(run, dev, peak, bw);
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"roofline\" width=\"%.0f\" height=\"%.0f\" "
                 "viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"roofline of ",
            W, H, W, H);
    kb_report_xml_text(out, dev >= 0 ? run->devs[dev].name : "?");
    fprintf(out, "\">\n<defs><clipPath id=\"kb-plot-%d\"><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>"
                 "</clipPath></defs>\n", dev, ML, MT, W - MR - ML, H - MB - MT);
    grid(out, &r);
    if (bw > 0)
        ceilings(out, &r, dev, peak, bw, src ? src : "?");
    measured(out, run, &r, dev);
    points(out, run, &r, dev);
    /* legend: one swatch per dtype that has a point */
    fprintf(out, "<g font-size=\"11\">\n");
    int seen[KB_DT_COUNT] = { 0 }, k = 0;
    for (size_t i = 0; i < run->n; i++) {
        kb_dtype dt;
        if (plotted(&run->rows[i], dev) && kb_dtype_parse(run->rows[i].dtype, &dt) == 0) seen[dt] = 1;
    }
    for (int d = 0; d < KB_DT_COUNT; d++) {
        if (!seen[d]) continue;
        double y = H - MB - 12 - 16.0 * k++;
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
                W - MR + 12, y, dtype_colour[d], W - MR + 22, y + 4, kb_dtype_name((kb_dtype)d));
    }
    fprintf(out, "</g>\n</svg>\n");
}
