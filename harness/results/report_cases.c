/* report_cases.c - the full case table of the HTML report (see report_cases.h). */
#include "results/report_cases.h"

#include <string.h>

enum {
    C_FAMILY, C_VARIANT, C_PARAMS, C_DTYPE, C_SHAPE, C_PAD, C_LAUNCH, C_STATUS, C_VERIFIED, C_MEDIAN, C_TFLOPS,
    C_GBPS, C_AI, C_ROOF, C_MEAS, C_PATH, C_BOUND, C_SAMPLES, C_CV, C_REASON, C_COUNT
};

static const struct {
    const char *name;
    int text;                     /* 1: left-aligned text; 2: text that may wrap */
} cols[C_COUNT] = {
    { "family", 1 }, { "variant", 1 }, { "params", 2 }, { "dtype", 1 }, { "shape", 1 }, { "pad", 0 },
    { "launch", 1 }, { "status", 1 }, { "verified / max_err", 1 }, { "median_us (clock)", 0 }, { "TFLOPS", 0 },
    { "GB/s", 0 }, { "AI", 0 }, { "%roof", 0 }, { "%meas", 0 }, { "%path", 0 }, { "bound", 1 }, { "samples", 0 },
    { "cv", 0 }, { "reason", 2 },
};

static void num(kb_sb *out, int have, double v)
{
    char b[48] = "";
    if (have) kb_report_num(b, sizeof b, v);
    kb_sb_printf(out, "%s", b);
}

/* "BM=128 BN=64": the params of r that vary among its family's rows. */
static void params(const kb_report_axes *ax, const kb_report_row *r, kb_sb *out)
{
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(r->rec, "params"), k, v) {
        if (!kb_report_varies(ax, r->family, k))
            continue;
        kb_sb_printf(out, "%s%s=", out->len ? " " : "", k);
        if (json_is_string(v))
            kb_sb_printf(out, "%s", json_string_value(v));
        else
            kb_sb_printf(out, "%lld", (long long)json_integer_value(v));
    }
}

static void cell(const kb_report_run *run, const kb_report_axes *ax, const kb_report_row *r, int c, kb_sb *out)
{
    int emu = r->dev >= 0 && run->devs[r->dev].emulator;
    char b[96];
    const char *bound;
    switch (c) {
    case C_FAMILY: kb_sb_printf(out, "%s", r->family); break;
    case C_VARIANT: kb_sb_printf(out, "%s", r->variant); break;
    case C_PARAMS: params(ax, r, out); break;
    case C_DTYPE: kb_sb_printf(out, "%s", r->dtype); break;
    case C_SHAPE:
        if (*r->shape) kb_sb_printf(out, "%s ", r->shape);
        kb_report_dims_text(r, out);
        break;
    case C_PAD: kb_sb_printf(out, "%d", r->pad); break;
    case C_LAUNCH: kb_sb_printf(out, "%s", r->launch); break;
    case C_STATUS: kb_sb_printf(out, "%s", r->status); break;
    case C_VERIFIED: kb_report_verified_text(r, b, sizeof b); kb_sb_printf(out, "%s", b); break;
    case C_MEDIAN:
        if (r->have_timing) {
            num(out, 1, r->median_us);
            kb_sb_printf(out, " (%s)", r->clock);
        }
        break;
    case C_TFLOPS: num(out, r->d.have_rates && r->d.tflops > 0, r->d.tflops); break;
    case C_GBPS: num(out, r->d.have_rates, r->d.gbps); break;
    case C_AI: num(out, r->d.have_rates && r->d.ai > 0, r->d.ai); break;
    case C_ROOF: num(out, r->d.have_roof && !emu, r->d.pct_roof); break;
    case C_MEAS: num(out, r->d.have_measured && !emu, r->d.pct_measured); break;
    case C_PATH: num(out, r->d.have_path && !emu, r->d.pct_path); break;
    case C_BOUND:
        bound = kb_bound_name(r->d.bound);
        if (bound && !emu && r->d.have_roof) kb_sb_printf(out, "%s", bound);
        break;
    case C_SAMPLES: if (r->have_timing) kb_sb_printf(out, "%d", r->samples); break;
    case C_CV: num(out, r->have_timing, r->cv); break;
    case C_REASON: kb_sb_printf(out, "%s", r->reason); break;
    }
}

/* Which columns some row of dev fills (bit c). */
static unsigned filled(const kb_report_run *run, const kb_report_axes *ax, int dev)
{
    unsigned m = 0;
    kb_sb t;
    kb_sb_init(&t);
    for (size_t i = 0; i < run->n; i++) {
        if (dev >= 0 && run->rows[i].dev != dev)
            continue;
        for (int c = 0; c < C_COUNT; c++) {
            if (m >> c & 1u)
                continue;
            kb_sb_clear(&t);
            cell(run, ax, &run->rows[i], c, &t);
            if (t.len)
                m |= 1u << c;
        }
    }
    kb_sb_free(&t);
    return m;
}

static void row(FILE *out, const kb_report_run *run, const kb_report_axes *ax, const kb_report_row *r, unsigned m)
{
    kb_sb t;
    kb_sb_init(&t);
    fputs("<tr title=\"", out);
    kb_report_xml_text(out, r->case_id);
    fputs("\">", out);
    for (int c = 0; c < C_COUNT; c++) {
        if (!(m >> c & 1u))
            continue;
        kb_sb_clear(&t);
        cell(run, ax, r, c, &t);
        const char *cls = c == C_STATUS ? (r->ok ? " ok" : r->failed ? " failed" : " skipped") : "";
        if (cols[c].text)
            fprintf(out, "<td class=\"t%s%s\">", cols[c].text == 2 ? " w" : "", cls);
        else
            fputs("<td>", out);
        kb_report_xml_text(out, t.s);
        fputs("</td>", out);
    }
    fputs("</tr>\n", out);
    kb_sb_free(&t);
}

void kb_report_cases_table(const kb_report_run *run, const kb_report_axes *ax, int dev, FILE *out)
{
    unsigned m = filled(run, ax, dev);
    int id = dev + 1;
    fprintf(out, "<input class=\"filter\" type=\"search\" placeholder=\"filter cases\" data-table=\"cases-%d\"/>\n"
                 "<div class=\"scroll\"><table class=\"sortable\" id=\"cases-%d\">\n<thead><tr>", id, id);
    for (int c = 0; c < C_COUNT; c++)
        if (m >> c & 1u)
            fprintf(out, "<th>%s</th>", cols[c].name);
    fputs("</tr></thead>\n<tbody>\n", out);
    for (size_t i = 0; i < run->n; i++)
        if (dev < 0 || run->rows[i].dev == dev)
            row(out, run, ax, &run->rows[i], m);
    fputs("</tbody></table></div>\n", out);
}
