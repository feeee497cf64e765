/* report_out.c - the strategy comparison as text, SVG and HTML (report_out.h). */
#include "tune/report_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double dnum(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *str(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static void ratio(FILE *out, double r)
{
    if (isfinite(r))
        fprintf(out, "%.3fx", r);
    else
        fprintf(out, "none");
}

static void budget_line(FILE *out, json_t *p)
{
    fprintf(out, "  budget %5.1f%% (", dnum(p, "budget_pct"));
    if (json_object_get(p, "seconds"))
        fprintf(out, "%.1f s simulated", dnum(p, "seconds"));
    else
        fprintf(out, "%.0f evaluations", dnum(p, "evaluations"));
    fprintf(out, "): random sampling median ");
    ratio(out, dnum(p, "random_median_ratio"));
    fprintf(out, " [");
    ratio(out, dnum(p, "random_q1_ratio"));
    fprintf(out, " - ");
    ratio(out, dnum(p, "random_q3_ratio"));
    fprintf(out, "], expected ");
    ratio(out, dnum(p, "random_expected_ratio"));
    fprintf(out, "\n    %-20s %9s %22s %10s %7s\n", "strategy", "median", "interquartile range", "within 5%", "score");
    size_t i;
    json_t *s;
    json_array_foreach(json_object_get(p, "strategies"), i, s) {
        char iqr[64];
        double q1 = dnum(s, "q1_ratio"), q3 = dnum(s, "q3_ratio");
        if (isfinite(q3))
            snprintf(iqr, sizeof iqr, "%.3fx - %.3fx", q1, q3);
        else
            snprintf(iqr, sizeof iqr, "%.3fx - none", q1);
        fprintf(out, "    %-20s ", str(s, "strategy"));
        double m = dnum(s, "median_ratio");
        if (isfinite(m))
            fprintf(out, "%8.3fx", m);
        else
            fprintf(out, "%9s", "none");
        fprintf(out, " %22s %6lld/%-3lld %7.3f\n", iqr, (long long)json_integer_value(json_object_get(s, "runs_within_5pct")),
                (long long)json_integer_value(json_object_get(s, "runs")), dnum(s, "score"));
    }
}

static void space_text(FILE *out, json_t *sp, int k)
{
    fprintf(out, "space %d: %s%s%s (%s: %s, %lld configurations: %lld failed, %lld refused; times in %s)\n", k,
            str(sp, "problem"), str(sp, "device")[0] ? " on " : "", str(sp, "device"), str(sp, "file"),
            str(sp, "file_format"), (long long)json_integer_value(json_object_get(sp, "space")),
            (long long)json_integer_value(json_object_get(sp, "failed")),
            (long long)json_integer_value(json_object_get(sp, "refused")), str(sp, "time_unit"));
    fprintf(out, "  optimum %.6g (%s)%s\n", dnum(sp, "optimum_time"), str(sp, "optimum_config"),
            json_is_true(json_object_get(sp, "cpu_timings")) ? "; emulator CPU timings, not GPU times" : "");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(sp, "points"), i, p)
        budget_line(out, p);
    const char *name;
    json_t *v;
    fprintf(out, "  score over the budgets:");
    json_object_foreach(json_object_get(sp, "score"), name, v)
        fprintf(out, " %s %.3f;", name, json_number_value(v));
    fprintf(out, "\n  evaluations to within 5%% of the optimum (median of the runs):");
    json_object_foreach(json_object_get(sp, "evaluations_to_5pct"), name, v) {
        double m = dnum(v, "median");
        if (isfinite(m))
            fprintf(out, " %s %.0f;", name, m);
        else
            fprintf(out, " %s beyond the budget (%lld/%lld reached);", name,
                    (long long)json_integer_value(json_object_get(v, "reached")),
                    (long long)json_integer_value(json_object_get(v, "runs")));
    }
    fprintf(out, "\n");
}

int kb_tune_report_text(json_t *doc, FILE *out)
{
    json_t *spaces = json_object_get(doc, "spaces"), *sp;
    fprintf(out, "strategy comparison: %lld seeds per strategy from seed %lld; median best / optimum over the seeds; "
            "score = (random - found) / (random - optimum) of the mean best (Willemsen et al., FGCS 2024)\n",
            (long long)json_integer_value(json_object_get(doc, "repeats")),
            (long long)json_integer_value(json_object_get(doc, "first_seed")));
    size_t i;
    json_array_foreach(spaces, i, sp)
        space_text(out, sp, (int)i + 1);
    const char *name;
    json_t *v;
    fprintf(out, "aggregate score over %zu space%s:", json_array_size(spaces), json_array_size(spaces) == 1 ? "" : "s");
    json_object_foreach(json_object_get(doc, "aggregate_score"), name, v)
        fprintf(out, " %s %.3f;", name, json_number_value(v));
    fprintf(out, "\nbest by aggregate score: %s\n", str(doc, "best_by_aggregate_score"));
    return ferror(out) ? -1 : 0;
}

int kb_tune_report_one_text(json_t *r, FILE *out)
{
    fprintf(out, "replay of %s (%s, %lld configurations, times in %s)\n", str(r, "problem"), str(r, "file_format"),
            (long long)json_integer_value(json_object_get(r, "space")), str(r, "time_unit"));
    fprintf(out, "%s, budget ", str(r, "strategy"));
    if (json_object_get(r, "budget_s"))
        fprintf(out, "%.6g s simulated (%.6g s spent)", dnum(r, "budget_s"), dnum(r, "spent_s"));
    else
        fprintf(out, "%lld", (long long)json_integer_value(json_object_get(r, "budget")));
    fprintf(out, ", seed %lld: best %.6g (%s) found at evaluation %lld of %lld; optimum %.6g (%s)%s\n",
            (long long)json_integer_value(json_object_get(r, "seed")), dnum(r, "best_time"),
            json_is_string(json_object_get(r, "best_config")) ? str(r, "best_config") : "none",
            (long long)json_integer_value(json_object_get(r, "best_found_at")),
            (long long)json_integer_value(json_object_get(r, "evaluations")), dnum(r, "optimum_time"),
            str(r, "optimum_config"), json_is_null(json_object_get(r, "within_5pct_at")) ? "; never within 5% of the optimum" : "");
    return ferror(out) ? -1 : 0;
}

/* ---- SVG ---- */

#define PW 380   /* panel width, height [px] */
#define PH 250
#define COLS 3

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2",
                                       "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939", "#8c6d31", "#843c39" };

static void xml_text(FILE *out, const char *s)
{
    for (; *s; s++)
        if (*s == '<')
            fputs("&lt;", out);
        else if (*s == '>')
            fputs("&gt;", out);
        else if (*s == '&')
            fputs("&amp;", out);
        else if (*s == '"')
            fputs("&quot;", out);
        else
            fputc(*s, out);
}

typedef struct {
    double x0, y0, xlo, xhi, ymax;
} frame;

static double px(const frame *f, double pct)
{
    double span = f->xhi > f->xlo ? f->xhi - f->xlo : 1;
    return f->x0 + 50 + (PW - 70) * (f->xhi > f->xlo ? (pct - f->xlo) / span : 0.5);
}

static double py(const frame *f, double ratio)
{
    double r = isfinite(ratio) ? fmin(fmax(ratio, 1.0), f->ymax) : f->ymax;
    return f->y0 + PH - 35 - (PH - 70) * log(r) / log(f->ymax);
}

/* A polyline of one series ("median_ratio" of a strategy, or a random key) over the points. */
static void series(FILE *out, const frame *f, json_t *pts, int si, const char *key, const char *style)
{
    fprintf(out, "<polyline fill=\"none\" %s points=\"", style);
    size_t i;
    json_t *p;
    json_array_foreach(pts, i, p) {
        json_t *o = si >= 0 ? json_array_get(json_object_get(p, "strategies"), (size_t)si) : p;
        fprintf(out, "%.1f,%.1f ", px(f, dnum(p, "budget_pct")), py(f, dnum(o, key)));
    }
    fprintf(out, "\"/>\n");
}

static void band(FILE *out, const frame *f, json_t *pts, int si, const char *color)
{
    size_t n = json_array_size(pts);
    fprintf(out, "<polygon fill=\"%s\" fill-opacity=\"0.12\" stroke=\"none\" points=\"", color);
    for (size_t i = 0; i < n; i++) {
        json_t *p = json_array_get(pts, i), *o = json_array_get(json_object_get(p, "strategies"), (size_t)si);
        fprintf(out, "%.1f,%.1f ", px(f, dnum(p, "budget_pct")), py(f, dnum(o, "q1_ratio")));
    }
    for (size_t i = n; i-- > 0;) {
        json_t *p = json_array_get(pts, i), *o = json_array_get(json_object_get(p, "strategies"), (size_t)si);
        fprintf(out, "%.1f,%.1f ", px(f, dnum(p, "budget_pct")), py(f, dnum(o, "q3_ratio")));
    }
    fprintf(out, "\"/>\n");
}

static void axes(FILE *out, const frame *f, json_t *sp, int k)
{
    fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" fill=\"white\" stroke=\"#ccc\"/>\n", f->x0, f->y0,
            PW - 10, PH - 10);
    fprintf(out, "<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">%d: ", f->x0 + 6, f->y0 + 14, k);
    xml_text(out, str(sp, "problem"));
    fprintf(out, " ");
    xml_text(out, str(sp, "device"));
    fprintf(out, " (%lld)</text>\n", (long long)json_integer_value(json_object_get(sp, "space")));
    double ticks[] = { 1.0, 1.05, 1.25, 1.5, 2, 3, 5, 10 };
    for (size_t t = 0; t < sizeof ticks / sizeof ticks[0] && ticks[t] <= f->ymax; t++)
        fprintf(out, "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/><text x=\"%.0f\" y=\"%.1f\" "
                "font-size=\"9\" text-anchor=\"end\">%.2fx</text>\n", f->x0 + 50, f->x0 + PW - 20, py(f, ticks[t]),
                py(f, ticks[t]), t == 0 ? "#000" : "#eee", f->x0 + 46, py(f, ticks[t]) + 3, ticks[t]);
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(sp, "points"), i, p)
        fprintf(out, "<text x=\"%.1f\" y=\"%.0f\" font-size=\"9\" text-anchor=\"middle\">%.3g%%</text>\n",
                px(f, dnum(p, "budget_pct")), f->y0 + PH - 22, dnum(p, "budget_pct"));
}

static void panel(FILE *out, json_t *sp, int k, double x0, double y0)
{
    json_t *pts = json_object_get(sp, "points");
    frame f = { x0, y0, INFINITY, -INFINITY, 1.1 };
    size_t i, n_s = 0;
    json_t *p;
    json_array_foreach(pts, i, p) {
        f.xlo = fmin(f.xlo, dnum(p, "budget_pct"));
        f.xhi = fmax(f.xhi, dnum(p, "budget_pct"));
        f.ymax = fmax(f.ymax, fmin(dnum(p, "random_q3_ratio") * 1.1, 10.0));
        n_s = json_array_size(json_object_get(p, "strategies"));
    }
    axes(out, &f, sp, k);
    for (size_t s = 0; s < n_s; s++)
        band(out, &f, pts, (int)s, palette[s % (sizeof palette / sizeof palette[0])]);
    series(out, &f, pts, -1, "random_median_ratio", "stroke=\"#000\" stroke-dasharray=\"5,3\" stroke-width=\"1.5\"");
    series(out, &f, pts, -1, "random_expected_ratio", "stroke=\"#888\" stroke-dasharray=\"2,2\"");
    for (size_t s = 0; s < n_s; s++) {
        char style[80];
        snprintf(style, sizeof style, "stroke=\"%s\" stroke-width=\"1.6\"", palette[s % (sizeof palette / sizeof palette[0])]);
        series(out, &f, pts, (int)s, "median_ratio", style);
    }
}

int kb_tune_report_svg(json_t *doc, FILE *out)
{
    json_t *spaces = json_object_get(doc, "spaces"), *names = json_object_get(doc, "strategies");
    size_t n = json_array_size(spaces), rows = (n + COLS - 1) / COLS;
    int h = (int)rows * PH + 40 + 16 * (int)((json_array_size(names) + 5) / 6 + 1);
    fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\">\n",
            COLS * PW, h);
    fprintf(out, "<text x=\"8\" y=\"18\" font-size=\"13\">median best / optimum against budget (%% of brute force); band: "
            "interquartile range over %lld seeds; black dashed: random sampling's median, grey dotted: its expectation"
            "</text>\n", (long long)json_integer_value(json_object_get(doc, "repeats")));
    size_t i;
    json_t *sp, *nm;
    json_array_foreach(spaces, i, sp)
        panel(out, sp, (int)i + 1, (double)(i % COLS) * PW + 5, 28 + (double)(i / COLS) * PH);
    json_array_foreach(names, i, nm) {
        double x = 10 + (double)(i % 6) * 190, y = 28 + (double)rows * PH + 14 + 16 * (double)(i / 6);
        fprintf(out, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"%.0f\" y=\"%.0f\" "
                "font-size=\"11\">", x, y - 4, palette[i % (sizeof palette / sizeof palette[0])], x + 18, y);
        xml_text(out, json_string_value(nm) ? json_string_value(nm) : "");
        fprintf(out, " %.3f</text>\n", dnum(json_object_get(doc, "aggregate_score"), json_string_value(nm) ? json_string_value(nm) : ""));
    }
    fprintf(out, "</svg>\n");
    return ferror(out) ? -1 : 0;
}

int kb_tune_report_html(json_t *doc, FILE *out)
{
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem || kb_tune_report_text(doc, mem) != 0) {
        if (mem)
            fclose(mem);
        free(text);
        return -1;
    }
    fclose(mem);
    fprintf(out, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>kbench tune: strategy comparison</title>"
            "</head>\n<body style=\"font-family: sans-serif\">\n<h1>kbench tune: strategy comparison</h1>\n");
    if (kb_tune_report_svg(doc, out) != 0) {
        free(text);
        return -1;
    }
    fprintf(out, "<pre>");
    xml_text(out, text ? text : "");
    fprintf(out, "</pre>\n<script type=\"application/json\" id=\"kbench-tune-report\">\n");
    char *json = json_dumps(doc, JSON_PRESERVE_ORDER | JSON_COMPACT);
    for (const char *p = json ? json : "null"; *p; p++) {   /* "</" would end the script element */
        if (p[0] == '<' && p[1] == '/')
            fputs("<\\", out);
        else
            fputc(*p, out);
    }
    free(json);
    fprintf(out, "\n</script>\n</body></html>\n");
    free(text);
    return ferror(out) ? -1 : 0;
}
