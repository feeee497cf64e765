/* compare_out.c - `kbench compare` as text, markdown or JSON, and the dispatcher over
 * every format (see compare_out.h; HTML in compare_html.c). */
#include "results/compare_out.h"
#include "results/compare_html.h"

#include <math.h>
#include <string.h>

const char *const kb_cmp_format_names[] = { "text", "md", "json", "html", NULL };

int kb_cmp_format_parse(const char *s, kb_cmp_format *out)
{
    for (int i = 0; kb_cmp_format_names[i]; i++)
        if (strcmp(s, kb_cmp_format_names[i]) == 0) {
            *out = (kb_cmp_format)i;
            return 0;
        }
    return -1;
}

/* ---- JSON ---- */

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

static json_t *run_json(const char *role, const kb_report_run *r)
{
    const kb_report_device *d = r->n_devs > 0 ? &r->devs[0] : NULL;
    return json_pack("{s:s, s:s, s:s, s:s, s:o, s:b, s:I}", "role", role, "source", r->source, "run_id", r->run_id,
                     "time", r->time, "device", d ? json_string(d->name) : json_null(), "emulator", d && d->emulator,
                     "cases", (json_int_t)r->n);
}

static json_t *side_json(const kb_report_row *row)
{
    if (!row)
        return json_null();
    return json_pack("{s:s, s:o, s:s, s:i}", "status", row->status,
                     "median_us", row->have_timing ? num(row->median_us) : json_null(), "clock", row->clock,
                     "samples", row->have_timing ? row->samples : 0);
}

static json_t *case_json(const kb_cmp_case *c)
{
    int compared = c->a && c->b && c->verdict != KB_CMP_NOT_COMPARED;
    const char *in = c->a && c->b ? "both" : c->a ? "a" : "b";
    json_t *o = json_pack("{s:s, s:s, s:o, s:o}", "case_id", c->case_id, "in", in, "a", side_json(c->a),
                          "b", side_json(c->b));
    if (!o)
        return NULL;
    json_object_set_new(o, "ratio", compared ? num(c->ratio) : json_null());
    json_object_set_new(o, "u", compared && c->have_test ? num(c->test.u) : json_null());
    json_object_set_new(o, "z", compared && c->have_test ? num(c->test.z) : json_null());
    json_object_set_new(o, "p", compared && c->have_test ? num(c->test.p) : json_null());
    json_object_set_new(o, "verdict", c->a && c->b ? json_string(kb_cmp_verdict_name(c->verdict)) : json_null());
    return o;
}

static json_t *summary_json(const kb_cmp_result *r)
{
    return json_pack("{s:i, s:i, s:i, s:i, s:i, s:i, s:i, s:b, s:i, s:i, s:b}", "compared", r->n_compared,
                     "regressions", r->n_regressions, "improvements", r->n_improvements,
                     "same", r->n_compared - r->n_regressions - r->n_improvements, "only_a", r->n_only_a,
                     "only_b", r->n_only_b, "not_compared", r->n_not_compared, "clocks_differ", r->clocks_differ,
                     "gated_regressions", kb_compare_gated(r), "cpu_compared", r->n_cpu_compared, "cpu_clock",
                     r->n_cpu_compared > 0);
}

json_t *kb_compare_json(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r, double threshold)
{
    json_t *cases = json_array(), *regs = json_array();
    char note[512];
    kb_compare_cpu_note(r, note, sizeof note);
    json_t *o = json_pack("{s:i, s:[o, o], s:{s:f, s:f, s:s, s:b}, s:o, s:o, s:o, s:o, s:s?}", "kbench_compare", 1,
                          "runs", run_json("A", a), run_json("B", b),
                          "settings", "threshold", threshold, "alpha", KB_COMPARE_ALPHA,
                          "test", "two-sided Mann-Whitney U, normal approximation with tie and continuity corrections",
                          "gate_cpu", r->gate_cpu,
                          "summary", summary_json(r), "geomean", r->n_compared ? num(r->geomean) : json_null(),
                          "cases", cases, "regressions", regs, "note", *note ? note : NULL);
    if (!o)
        return NULL;
    for (size_t i = 0; i < r->n; i++) {
        const kb_cmp_case *c = &r->cases[i];
        json_array_append_new(cases, case_json(c));
        if (c->a && c->b && c->verdict == KB_CMP_REGRESSION)
            json_array_append_new(regs, json_pack("{s:s, s:o, s:o, s:b}", "case_id", c->case_id, "ratio",
                                                  num(c->ratio), "p", num(c->test.p), "gated",
                                                  kb_compare_case_gates(r, c)));
    }
    if (json_array_size(cases) != r->n) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* ---- markdown ---- */

/* Table cell text: '|' escaped, line breaks as spaces. */
static void cell(FILE *out, const char *s)
{
    fputc(' ', out);
    for (; *s; s++) {
        if (*s == '|') fputs("\\|", out);
        else if (*s == '\n' || *s == '\r') fputc(' ', out);
        else fputc(*s, out);
    }
    fputs(" |", out);
}

static void md_run(FILE *out, const char *tag, const kb_report_run *r)
{
    fprintf(out, "- **%s**: `%s` (run `%s`", tag, r->source, *r->run_id ? r->run_id : "?");
    if (r->n_devs > 0)
        fprintf(out, ", %s%s", r->devs[0].name, r->devs[0].emulator ? ": emulator, CPU times" : "");
    fprintf(out, ", %zu cases)\n", r->n);
}

/* "190.9 gpu", or the status when the case has no timing, "-" when absent. */
static void md_median(char *buf, size_t n, const kb_report_row *row)
{
    if (!row) { snprintf(buf, n, "-"); return; }
    if (!row->have_timing) { snprintf(buf, n, "%s", row->status); return; }
    kb_report_num(buf, n, row->median_us);
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, " %s", row->clock);
}

static void md_case(FILE *out, const kb_cmp_case *c, int gate_cpu)
{
    char ma[96], mb[96], ratio[32] = "", p[32] = "";
    md_median(ma, sizeof ma, c->a);
    md_median(mb, sizeof mb, c->b);
    int compared = c->a && c->b && c->verdict != KB_CMP_NOT_COMPARED;
    if (compared) snprintf(ratio, sizeof ratio, "%.3f", c->ratio);
    if (compared) snprintf(p, sizeof p, c->have_test ? "%.2g" : "n/a", c->test.p);
    const char *verdict = !c->a ? "only in B" : !c->b ? "only in A" : kb_cmp_verdict_name(c->verdict);
    const char *bold = compared && c->verdict == KB_CMP_REGRESSION && (!c->cpu || gate_cpu) ? "**" : "";
    fputs("|", out);
    cell(out, c->case_id);
    cell(out, ma);
    cell(out, mb);
    fprintf(out, " %s | %s | %s%s%s |\n", ratio, p, bold, verdict, bold);
}

void kb_compare_md(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r, double threshold,
                   FILE *out)
{
    fputs("# kbench compare\n\n", out);
    md_run(out, "A (baseline)", a);
    md_run(out, "B", b);
    fprintf(out, "\nA regression: B slower than A by more than %.3g%% with p < %.2g (two-sided Mann-Whitney U over "
                 "the timing samples).\n", threshold * 100, KB_COMPARE_ALPHA);
    if (r->clocks_differ)
        fputs("\n**Warning**: the runs have different clocks (CPU emulator time vs GPU time): their ratios are not "
              "comparable.\n", out);
    char note[512];
    if (kb_compare_cpu_note(r, note, sizeof note))
        fprintf(out, "\n**Note**: %s.\n", note);
    fputs("\n| case | A median_us | B median_us | B/A | p | verdict |\n"
          "|---|---:|---:|---:|---:|---|\n", out);
    for (size_t i = 0; i < r->n; i++)
        md_case(out, &r->cases[i], r->gate_cpu);
    if (r->n_compared)
        fprintf(out, "\nGeometric mean of B/A over %d cases: **%.4f** (B %s by %.2f%%)\n", r->n_compared, r->geomean,
                r->geomean >= 1 ? "slower" : "faster", fabs(r->geomean - 1) * 100);
    else
        fputs("\nNo case was ok with timing in both runs.\n", out);
    fprintf(out, "\n%d regressions (%d gating), %d improvements, %d within noise or threshold; %d only in A, %d "
                 "only in B, %d not compared.\n", r->n_regressions, kb_compare_gated(r), r->n_improvements,
            r->n_compared - r->n_regressions - r->n_improvements, r->n_only_a, r->n_only_b, r->n_not_compared);
    fputs("\n## Regressions\n\n", out);
    if (!r->n_regressions)
        fputs("None.\n", out);
    for (size_t i = 0; i < r->n; i++) {
        const kb_cmp_case *c = &r->cases[i];
        if (c->a && c->b && c->verdict == KB_CMP_REGRESSION)
            fprintf(out, "- `%s`: B/A %.3f, p = %.2g%s\n", c->case_id, c->ratio, c->test.p,
                    kb_compare_case_gates(r, c) ? "" : " (CPU clock: not gated)");
    }
}

kb_status kb_compare_write(const kb_report_run *a, const kb_report_run *b, const kb_cmp_result *r,
                           double threshold, kb_cmp_format f, FILE *out)
{
    if (f == KB_CMP_OUT_HTML)
        return kb_compare_html(a, b, r, threshold, out);
    if (f == KB_CMP_OUT_JSON) {
        json_t *o = kb_compare_json(a, b, r, threshold);
        if (!o)
            return KB_ERR_OOM;
        int bad = json_dumpf(o, out, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0 || fputc('\n', out) == EOF;
        json_decref(o);
        return bad ? KB_ERR_IO : KB_OK;
    }
    if (f == KB_CMP_OUT_MD)
        kb_compare_md(a, b, r, threshold, out);
    else
        kb_compare_print(a, b, r, threshold, out);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}
