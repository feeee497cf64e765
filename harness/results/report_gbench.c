/* report_gbench.c - Google Benchmark JSON (json_schema_version 1) that tools/compare.py
 * reads: a context block, and per case one "iteration" entry per timing sample (a
 * repetition: repetition_index 0..n-1, real_time in us) followed by "aggregate" entries
 * mean, median, stddev and cv, named "<case id>_<aggregate>" with run_name the case id,
 * as Google Benchmark names them. Cases that failed, were skipped or were not timed
 * have no entry: Google Benchmark would write an errored run with zero times, which
 * drops compare.py's overall geometric mean (and plots as 0 in dashboards); they are
 * listed with their status and reason in context.kbench_not_timed instead, and the
 * JUnit and markdown reports carry them. There is no separate host CPU time for a kernel:
 * cpu_time repeats real_time (on the emulator both are CPU time, labelled so).
 * User counters: flops and bytes per iteration, tflops, gbps, ai, pct_roof, pct_measured,
 * pct_path (the last three where a GPU roof applies). */
#include "results/report_gbench.h"
#include "core/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef KB_VERSION
#define KB_VERSION "0"
#endif

static void set(json_t *o, const char *k, json_t *v) { json_object_set_new(o, k, v); }

/* Google Benchmark writes "2026-01-02T00:00:00+00:00" where the record has "...Z". */
static json_t *gbench_date(const char *iso)
{
    char b[40];
    size_t n = strlen(iso);
    if (n > 0 && n < 30 && iso[n - 1] == 'Z')
        snprintf(b, sizeof b, "%.*s+00:00", (int)(n - 1), iso);
    else
        snprintf(b, sizeof b, "%s", iso);
    return json_string(b);
}

static int cpu_mhz(void)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    double mhz = 0;
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "cpu MHz", 7) == 0 && sscanf(strchr(line, ':') + 1, "%lf", &mhz) == 1)
            break;
    if (f) fclose(f);
    return (int)lround(mhz);
}

static json_t *context(const kb_report_run *run)
{
    json_t *c = json_object();
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    set(c, "date", gbench_date(run->time));
    set(c, "host_name", json_string(host));
    set(c, "executable", json_string("kbench"));
    set(c, "num_cpus", json_integer(sysconf(_SC_NPROCESSORS_ONLN)));
    set(c, "mhz_per_cpu", json_integer(cpu_mhz()));
    set(c, "caches", json_array());
    double load[3] = { 0, 0, 0 };
    json_t *la = json_array();
    if (getloadavg(load, 3) == 3)
        for (int i = 0; i < 3; i++) json_array_append_new(la, json_real(load[i]));
    set(c, "load_avg", la);
    set(c, "library_version", json_string("kbench " KB_VERSION));
    set(c, "library_build_type", json_string("release"));
    set(c, "json_schema_version", json_integer(1));
    /* kbench's own context (extra keys are allowed: the global context of gbench) */
    set(c, "kbench_run_id", json_string(run->run_id));
    set(c, "kbench_source", json_string(run->source));
    if (run->n_devs > 0) {
        set(c, "kbench_device", json_string(run->devs[0].name));
        set(c, "kbench_emulator", json_boolean(run->devs[0].emulator));
    }
    return c;
}

/* The fields every entry of a case shares. */
static json_t *entry(const kb_report_row *r, size_t family, const char *suffix, const char *type, int reps)
{
    json_t *e = json_object();
    kb_sb name;
    kb_sb_init(&name);
    kb_sb_printf(&name, "%s%s", r->case_id, suffix);
    set(e, "name", json_string(name.s));
    kb_sb_free(&name);
    set(e, "family_index", json_integer((json_int_t)family));
    set(e, "per_family_instance_index", json_integer(0));
    set(e, "run_name", json_string(r->case_id));
    set(e, "run_type", json_string(type));
    set(e, "repetitions", json_integer(reps));
    set(e, "threads", json_integer(1));
    return e;
}

static void times(json_t *e, double t_us)
{
    set(e, "real_time", json_real(t_us));
    set(e, "cpu_time", json_real(t_us));
    set(e, "time_unit", json_string("us"));
}

/* Rates of the case at time t_us from its work block (not the median: each repetition
 * has its own), plus the roofline % where one applies. */
static void counters(json_t *e, const kb_report_row *r, double t_us)
{
    json_t *w = json_object_get(r->rec, "work");
    if (!json_is_object(w) || !(t_us > 0))
        return;
    kb_work work = { .flops = json_number_value(json_object_get(w, "flops")),
                     .bytes_read = json_number_value(json_object_get(w, "bytes_read")),
                     .bytes_written = json_number_value(json_object_get(w, "bytes_written")) };
    kb_derived d;
    kb_derive(&work, t_us, NULL, KB_DT_FP32, &d);
    set(e, "flops", json_real(work.flops));
    set(e, "bytes", json_real(work.bytes_read + work.bytes_written));
    set(e, "tflops", json_real(d.tflops));
    set(e, "gbps", json_real(d.gbps));
    set(e, "ai", json_real(d.ai));
    if (r->d.have_roof && r->d.roof_tflops > 0 && r->d.bound == KB_BOUND_COMPUTE)
        set(e, "pct_roof", json_real(100 * d.tflops / r->d.roof_tflops));
    else if (r->d.have_roof && r->d.peak_gbps > 0)
        set(e, "pct_roof", json_real(100 * d.gbps / r->d.peak_gbps));
    /* the measured and path roofs, at this repetition's time */
    if (r->d.have_measured && r->d.measured_roof_tflops > 0 && work.flops > 0)
        set(e, "pct_measured", json_real(100 * d.tflops / r->d.measured_roof_tflops));
    else if (r->d.have_measured && r->d.measured_gbps > 0)
        set(e, "pct_measured", json_real(100 * d.gbps / r->d.measured_gbps));
    if (r->d.have_path && r->d.path_tflops > 0)
        set(e, "pct_path", json_real(100 * d.tflops / r->d.path_tflops));
}

static void add_case(json_t *arr, const kb_report_run *run, size_t i)
{
    const kb_report_row *r = &run->rows[i];
    int emu = r->dev >= 0 && run->devs[r->dev].emulator;
    const char *label = emu ? "cpu time (emulator)" : "gpu time";
    json_t *s = json_object_get(json_object_get(r->rec, "timing"), "samples_us");
    int n = (int)json_array_size(s);
    double *x = malloc((size_t)(n ? n : 1) * sizeof *x);
    if (!x) kb_out_of_memory("the samples of a case", (size_t)(n ? n : 1) * sizeof *x);   /* not a silently missing row */
    for (int k = 0; k < n; k++) x[k] = json_number_value(json_array_get(s, (size_t)k));
    if (n == 0) { x[0] = r->median_us; n = 1; }   /* no samples kept: the median stands for them */
    for (int k = 0; k < n; k++) {
        json_t *e = entry(r, i, "", "iteration", n);
        set(e, "repetition_index", json_integer(k));
        set(e, "iterations", json_integer(1));
        times(e, x[k]);
        set(e, "label", json_string(label));
        counters(e, r, x[k]);
        json_array_append_new(arr, e);
    }
    kb_stats st;
    if (n >= 2 && kb_stats_compute(x, n, &st) == 0) {
        const struct { const char *name; double v; int pct; } ag[] = {
            { "mean", st.mean, 0 }, { "median", st.median, 0 }, { "stddev", st.stddev, 0 }, { "cv", st.cv, 1 },
        };
        for (size_t a = 0; a < sizeof ag / sizeof ag[0]; a++) {
            kb_sb suffix;
            kb_sb_init(&suffix);
            kb_sb_printf(&suffix, "_%s", ag[a].name);
            json_t *e = entry(r, i, suffix.s, "aggregate", n);
            kb_sb_free(&suffix);
            set(e, "aggregate_name", json_string(ag[a].name));
            set(e, "aggregate_unit", json_string(ag[a].pct ? "percentage" : "time"));
            set(e, "iterations", json_integer(n));
            times(e, ag[a].v);
            set(e, "label", json_string(label));
            if (a < 2) counters(e, r, ag[a].v);
            json_array_append_new(arr, e);
        }
    }
    free(x);
}

kb_status kb_report_gbench(const kb_report_run *run, FILE *out)
{
    json_t *root = json_object(), *arr = json_array();
    if (!root || !arr) {
        json_decref(root);
        json_decref(arr);
        return KB_ERR_OOM;
    }
    json_t *ctx = context(run), *not_timed = json_array();
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        if (r->ok && r->have_timing) {
            add_case(arr, run, i);
            continue;
        }
        kb_sb msg;
        kb_sb_init(&msg);
        kb_sb_printf(&msg, "%s: %s%s%s", r->case_id, r->status, *r->reason ? ": " : "", r->reason);
        json_array_append_new(not_timed, json_string(msg.s));
        kb_sb_free(&msg);
    }
    set(ctx, "kbench_not_timed", not_timed);
    set(root, "context", ctx);
    set(root, "benchmarks", arr);
    int rc = json_dumpf(root, out, JSON_INDENT(2) | JSON_REAL_PRECISION(17));
    fputc('\n', out);
    json_decref(root);
    return rc != 0 || ferror(out) ? KB_ERR_IO : KB_OK;
}
