/* fleet_html.c - the fleet verdict as one self-contained HTML page (see fleet_html.h). */
#include "accept/fleet_html.h"

#include "results/report_rows.h"

#include <math.h>
#include <string.h>

#define W 640           /* [px] chart width */
#define H 46            /* [px] chart height */
#define PAD 20          /* [px] left and right margins */

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

/* The spec name and timing clock of a group key: "h100-sxm" or "generic (cpu timings)". */
static void split_key(const char *key, char *spec, size_t n, const char **clock)
{
    snprintf(spec, n, "%s", key);
    char *p = strstr(spec, " (cpu timings)");
    *clock = p ? "cpu" : "gpu";
    if (p)
        *p = 0;
}

/* The test object name of GPU v when v is of spec and its value was timed by clock. */
static json_t *value_test(json_t *v, const char *spec, const char *clock, const char *name)
{
    if (strcmp(jstr(json_object_get(v, "spec"), "name"), spec))
        return NULL;
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(v, "tests"), i, t)
        if (!strcmp(jstr(t, "name"), name) && !strcmp(jstr(t, "clock"), clock) &&
            json_is_number(json_object_get(t, "value")))
            return t;
    return NULL;
}

typedef struct {
    double lo, hi;
    int log;
} axis;

static double xpos(const axis *a, double v)
{
    double f = a->log ? (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo)) : (v - a->lo) / (a->hi - a->lo);
    if (!isfinite(f))
        f = 0.5;
    return PAD + f * (W - 2 * PAD);
}

/* The axis over every value and the bounds: logarithmic when they span more than 20x. */
static axis axis_of(json_t *gpus, const char *spec, const char *clock, const char *name, json_t *d)
{
    axis a = { json_real_value(json_object_get(d, "low")), json_real_value(json_object_get(d, "high")), 0 };
    size_t i;
    json_t *v;
    json_array_foreach(gpus, i, v) {
        json_t *t = value_test(v, spec, clock, name);
        double x = t ? json_number_value(json_object_get(t, "value")) : NAN;
        if (isfinite(x)) {
            a.lo = fmin(a.lo, x);
            a.hi = fmax(a.hi, x);
        }
    }
    a.log = a.lo > 0 && a.hi / a.lo > 20;
    if (!(a.hi > a.lo)) {
        a.lo -= 1;
        a.hi += 1;
    }
    return a;
}

static void chart(FILE *out, json_t *gpus, const char *key, const char *name, json_t *d)
{
    char spec[96];
    const char *clock;
    split_key(key, spec, sizeof spec, &clock);
    axis a = axis_of(gpus, spec, clock, name, d);
    int lower = !strcmp(name, "launch_latency");
    double bound = json_real_value(json_object_get(d, lower ? "high" : "low"));
    fprintf(out, "<h3>%s: ", name);
    kb_report_xml_text(out, key);
    fprintf(out, "</h3>\n<svg width=\"%d\" height=\"%d\" xmlns=\"http://www.w3.org/2000/svg\">\n", W, H + 16);
    fprintf(out, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"#999\"/>\n", PAD, H / 2, W - PAD, H / 2);
    double median = json_real_value(json_object_get(d, "median"));
    fprintf(out, "<line x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"%d\" stroke=\"#444\"><title>median %.4g</title></line>\n",
            xpos(&a, median), xpos(&a, median), H - 4, median);
    fprintf(out, "<line x1=\"%.1f\" y1=\"4\" x2=\"%.1f\" y2=\"%d\" stroke=\"#c00\" stroke-dasharray=\"4 3\">"
            "<title>outlier bound %.4g</title></line>\n", xpos(&a, bound), xpos(&a, bound), H - 4, bound);
    size_t i;
    json_t *v;
    json_array_foreach(gpus, i, v) {
        json_t *t = value_test(v, spec, clock, name);
        if (!t)
            continue;
        double x = json_number_value(json_object_get(t, "value"));
        int bad = !strcmp(jstr(t, "status"), "FAIL");
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%d\" r=\"5\" fill=\"%s\" fill-opacity=\"0.7\"><title>", xpos(&a, x),
                H / 2, bad ? "#d00" : "#26a");
        json_t *id = json_object_get(v, "identity");
        fprintf(out, "%s rank %lld %s: %.4g %s %s - ", jstr(id, "host"),
                json_integer_value(json_object_get(id, "rank")), jstr(json_object_get(v, "gpu"), "uuid"), x,
                jstr(t, "unit"), jstr(t, "status"));
        kb_report_xml_text(out, jstr(t, "reason"));
        fputs("</title></circle>\n", out);
    }
    fprintf(out, "<text x=\"%d\" y=\"%d\" font-size=\"11\">%.4g</text><text x=\"%d\" y=\"%d\" font-size=\"11\" "
            "text-anchor=\"end\">%.4g%s</text>\n</svg>\n", PAD, H + 12, a.lo, W - PAD, H + 12, a.hi,
            a.log ? " (log scale)" : "");
}

kb_status kb_fleet_html(json_t *fj, FILE *out)
{
    fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>kbench fleet</title>\n<style>body{font-family:"
          "sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
          ".FAIL{color:#c00}.WARN{color:#a60}</style></head><body>\n<h1>kbench fleet: ", out);
    kb_report_xml_text(out, jstr(fj, "dir"));
    fprintf(out, "</h1>\n<p>Verdict <b class=\"%s\">%s</b> (exit code %lld). Each dot is a GPU (hover for its "
            "rank, UUID and reason); the solid line is the median of its SKU, the dashed one the fleet's outlier "
            "bound. A red dot FAILed: its own floor, a fleet outlier, or a node outlier (against its node's "
            "median, so it may lie inside the fleet's bound).</p>\n", jstr(fj, "verdict"), jstr(fj, "verdict"),
            json_integer_value(json_object_get(fj, "exit_code")));
    json_t *p = json_object_get(fj, "problems"), *s;
    size_t i;
    if (json_array_size(p)) {
        fputs("<h2>Problems</h2><ul>\n", out);
        json_array_foreach(p, i, s) {
            fputs("<li>", out);
            kb_report_xml_text(out, json_string_value(s));
            fputs("</li>\n", out);
        }
        fputs("</ul>\n", out);
    }
    fputs("<h2>Each test against the fleet</h2>\n", out);
    const char *key, *test;
    json_t *tests, *d;
    json_object_foreach(json_object_get(fj, "groups"), key, tests)
        json_object_foreach(tests, test, d)
            chart(out, json_object_get(fj, "gpus"), key, test, d);
    fputs("</body></html>\n", out);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}
