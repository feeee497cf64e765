/* report_junit.c - JUnit XML for CI dashboards: one <testsuite> per device, one
 * <testcase> per case (classname kbench.<family>.<variant>, name the case id, time the
 * case's wall time in seconds). wrong, fault, compile_error, launch_error, input_error and timeout
 * are <failure type="status" message="reason"> with the details (max error, the compile
 * log) as text; skipped is <skipped message="reason"/>; an ok case carries its timing
 * and rates in <system-out>. */
#include "results/report_junit.h"

#include <string.h>
#include <unistd.h>

static void attr(FILE *out, const char *name, const char *value)
{
    fprintf(out, " %s=\"", name);
    kb_report_xml_text(out, value);
    fputc('"', out);
}

/* xs:dateTime without a zone, as the JUnit schema wants: drop a trailing 'Z'. */
static void timestamp_attr(FILE *out, const char *iso)
{
    char b[40];
    snprintf(b, sizeof b, "%s", iso);
    size_t n = strlen(b);
    if (n && b[n - 1] == 'Z') b[n - 1] = 0;
    attr(out, "timestamp", b);
}

typedef struct { int tests, failures, skipped; double time_s; } counts;

static counts count_rows(const kb_report_run *run, int dev)
{
    counts c = { 0, 0, 0, 0 };
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        if (r->dev != dev) continue;
        c.tests++;
        c.failures += !r->ok && !r->skipped;
        c.skipped += r->skipped;
        c.time_s += r->wall_ms / 1e3;
    }
    return c;
}

static void failure_body(FILE *out, const kb_report_row *r)
{
    json_t *v = json_object_get(r->rec, "verify");
    if (r->verified) {
        fprintf(out, "%lld of %lld elements outside tolerance (atol %g, rtol %g); max_abs_err ",
                r->n_bad, r->n_checked, json_number_value(json_object_get(v, "atol")),
                json_number_value(json_object_get(v, "rtol")));
        if (r->have_err) fprintf(out, "%g", r->max_abs_err); else fputs("NaN", out);
        fputc('\n', out);
    }
    const char *log = json_string_value(json_object_get(r->rec, "compile_log"));
    if (log) {
        fputs("compile log:\n", out);
        kb_report_xml_text(out, log);
    }
}

static void testcase(FILE *out, const kb_report_row *r, int emu)
{
    char t[32], cls[160];
    snprintf(t, sizeof t, "%.3f", r->wall_ms / 1e3);
    snprintf(cls, sizeof cls, "kbench.%s.%s", *r->family ? r->family : "unknown", *r->variant ? r->variant : "unknown");
    fputs("    <testcase", out);
    attr(out, "classname", cls);
    attr(out, "name", r->case_id);
    attr(out, "time", t);
    if (r->ok && !r->have_timing) {
        fputs("/>\n", out);
        return;
    }
    fputs(">\n", out);
    if (r->skipped) {
        fputs("      <skipped", out);
        attr(out, "message", r->reason);
        fputs("/>\n", out);
    } else if (!r->ok) {
        fputs("      <failure", out);
        attr(out, "type", r->status);
        attr(out, "message", *r->reason ? r->reason : r->status);
        fputs(">", out);
        failure_body(out, r);
        fputs("</failure>\n", out);
    } else {
        char b[64];
        fputs("      <system-out>", out);
        kb_report_num(b, sizeof b, r->median_us);
        fprintf(out, "median_us=%s clock=%s%s samples=%d", b, r->clock, emu ? " (emulator: CPU time)" : "", r->samples);
        if (r->d.have_rates) {
            kb_report_num(b, sizeof b, r->d.tflops);
            fprintf(out, " tflops=%s", b);
            kb_report_num(b, sizeof b, r->d.gbps);
            fprintf(out, " gbps=%s", b);
        }
        if (r->d.have_roof && !emu) {
            kb_report_num(b, sizeof b, r->d.pct_roof);
            fprintf(out, " pct_roof=%s bound=%s", b, kb_bound_name(r->d.bound));
        }
        if (r->d.have_measured && !emu) {
            kb_report_num(b, sizeof b, r->d.pct_measured);
            fprintf(out, " pct_measured=%s", b);
        }
        if (r->d.have_path && !emu) {
            kb_report_num(b, sizeof b, r->d.pct_path);
            fprintf(out, " pct_path=%s path=%s", b, r->d.path);
        }
        fputs("</system-out>\n", out);
    }
    fputs("    </testcase>\n", out);
}

static void suite(FILE *out, const kb_report_run *run, int dev, const char *host)
{
    counts c = count_rows(run, dev);
    char b[32];
    const kb_report_device *d = dev >= 0 ? &run->devs[dev] : NULL;
    kb_sb name;
    kb_sb_init(&name);
    kb_sb_printf(&name, "kbench %s on %s", run->run_id, d ? d->name : "no device");
    fputs("  <testsuite", out);
    attr(out, "name", name.s);
    kb_sb_free(&name);
    fprintf(out, " tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\"",
            c.tests, c.failures, c.skipped, c.time_s);
    timestamp_attr(out, run->time);
    attr(out, "hostname", host);
    fputs(">\n    <properties>\n", out);
    const char *props[][2] = {
        { "run_id", run->run_id }, { "source", run->source },
        { "device", d ? d->name : "" }, { "device_uuid", d ? d->uuid : "" },
        { "timing", d && d->emulator ? "cpu (emulator: not GPU times)" : "gpu" },
    };
    for (size_t i = 0; i < sizeof props / sizeof props[0]; i++) {
        fputs("      <property", out);
        attr(out, "name", props[i][0]);
        attr(out, "value", props[i][1]);
        fputs("/>\n", out);
    }
    snprintf(b, sizeof b, "%d", d ? d->sm : 0);
    fputs("      <property name=\"sm\"", out);
    attr(out, "value", b);
    fputs("/>\n    </properties>\n", out);
    for (size_t i = 0; i < run->n; i++)
        if (run->rows[i].dev == dev)
            testcase(out, &run->rows[i], d && d->emulator);
    fputs("  </testsuite>\n", out);
}

kb_status kb_report_junit(const kb_report_run *run, FILE *out)
{
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    counts all = { 0, 0, 0, 0 };
    int no_dev = 0;
    for (size_t i = 0; i < run->n; i++) no_dev |= run->rows[i].dev < 0;
    for (int d = -1; d < run->n_devs; d++) {
        counts c = count_rows(run, d);
        all.tests += c.tests; all.failures += c.failures; all.skipped += c.skipped; all.time_s += c.time_s;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", out);
    attr(out, "name", "kbench");
    fprintf(out, " tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"%d\" time=\"%.3f\">\n",
            all.tests, all.failures, all.skipped, all.time_s);
    for (int d = 0; d < run->n_devs; d++)
        suite(out, run, d, host);
    if (no_dev)
        suite(out, run, -1, host);
    fputs("</testsuites>\n", out);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}
