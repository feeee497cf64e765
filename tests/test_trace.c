/* test_trace.c - the Chrome trace of a run (results/report_trace.h): written by the
 * report dispatcher (`--format trace`) and as a stream during a run, read back with
 * jansson; one track per case named by its id, the case slice as long as its wall time,
 * its stages end to end inside it in pipeline order from stage_ms, each sample inside
 * measure at its recorded start; a stream cut before its close still parses once closed
 * by hand (the JSON Array Format's optional bracket). */
#include "check.h"
#include "results/report.h"
#include "results/report_trace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static json_t *rec(const char *id, double wall_ms)
{
    return json_pack("{s:i, s:s, s:s, s:s, s:s, s:f, s:{s:f, s:f, s:f, s:f}, "
                     "s:{s:s, s:f, s:i, s:[f, f], s:[f, f]}}",
                     "schema_version", 1, "run_id", "r1", "case_id", id, "family", "gelu", "status", "ok", "wall_ms",
                     wall_ms, "stage_ms", "compile", 2.0, "setup", 1.0, "verify", 0.5, "measure", 3.0, "timing",
                     "clock", "gpu", "median_us", 10.0, "samples", 2, "samples_us", 10.0, 12.0, "samples_start_us",
                     100.0, 1500.0);
}

static void make_run(kb_report_run *run)
{
    json_t **recs = malloc(2 * sizeof *recs);
    recs[0] = rec("gelu/vec/fp16/1024/pad0/eager", 7.0);
    recs[1] = rec("gelu/naive/fp16/1024/pad0/eager", 0);   /* no wall time: the stages' sum */
    CHECK(kb_report_run_from(recs, 2, "mem", run) == KB_OK);
}

/* The first event of ph with name and tid (NULL when none). */
static json_t *find(json_t *events, const char *ph, const char *name, int tid)
{
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e)
        if (!strcmp(json_string_value(json_object_get(e, "ph")), ph) &&
            !strcmp(json_string_value(json_object_get(e, "name")), name) &&
            json_integer_value(json_object_get(e, "tid")) == tid)
            return e;
    return NULL;
}

static double ts(json_t *e) { return json_number_value(json_object_get(e, "ts")); }
static double dur(json_t *e) { return json_number_value(json_object_get(e, "dur")); }

static void check_events(json_t *events)
{
    json_t *c0 = find(events, "X", "gelu/vec/fp16/1024/pad0/eager", 1);
    json_t *c1 = find(events, "X", "gelu/naive/fp16/1024/pad0/eager", 2);
    CHECK(c0 && c1);
    if (!c0 || !c1) return;
    CHECK(find(events, "M", "thread_name", 1) && find(events, "M", "thread_name", 2));
    CHECK(ts(c0) == 0 && dur(c0) == 7000 && ts(c1) == 7000 && dur(c1) == 6500);
    /* stages end to end in pipeline order: compile 0-2000, setup, verify, measure 3500-6500 */
    json_t *compile = find(events, "X", "compile", 2), *measure = find(events, "X", "measure", 2);
    CHECK(compile && ts(compile) == 7000 && dur(compile) == 2000);
    CHECK(measure && ts(measure) == 7000 + 3500 && dur(measure) == 3000);
    CHECK(find(events, "X", "valid", 1) == NULL);   /* a stage with no time is not drawn */
    json_t *s1 = find(events, "X", "sample 1", 2);
    CHECK(s1 && ts(s1) == 7000 + 3500 + 1500 && dur(s1) == 12);
}

static void test_report_trace(void)
{
    kb_report_run run;
    kb_report_format f;
    make_run(&run);
    CHECK(kb_report_format_parse("trace", &f) == 0 && f == KB_REPORT_TRACE);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    CHECK(kb_report_write(&run, f, out) == KB_OK);
    fclose(out);
    json_error_t e;
    json_t *doc = json_loads(buf, 0, &e);
    CHECK_MSG(doc != NULL, "%s", e.text);
    if (doc) check_events(json_object_get(doc, "traceEvents"));
    CHECK(doc && find(json_object_get(doc, "traceEvents"), "M", "process_name", 0));
    json_decref(doc);
    free(buf);
    kb_report_run_free(&run);
}

static void test_stream(void)
{
    char path[] = "/tmp/kb-trace-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    kb_trace_stream s;
    kb_report_run run;
    make_run(&run);
    kb_sb err;
    kb_sb_init(&err);
    CHECK(kb_trace_stream_open(path, "kbench run r1", &s, &err) == KB_OK);
    CHECK(kb_trace_stream_case(&s, run.recs[0]) == KB_OK && kb_trace_stream_case(&s, run.recs[1]) == KB_OK);
    /* cut here (a run killed mid-way): the temporary file beside path, plus ']', is the
     * JSON array so far; path itself is untouched until the close */
    struct stat sb;
    CHECK(stat(path, &sb) == 0 && sb.st_size == 0);
    FILE *f = fopen(s.out.tmp, "r");
    char *text = calloc(1, 1 << 16);
    size_t n = fread(text, 1, (1 << 16) - 2, f);
    fclose(f);
    strcpy(text + n, "]");
    json_error_t e;
    json_t *cut = json_loads(text, 0, &e);
    CHECK_MSG(json_is_array(cut), "%s", e.text);
    json_decref(cut);
    free(text);
    CHECK(kb_trace_stream_close(&s, &err) == KB_OK);
    kb_sb_free(&err);
    json_t *all = json_load_file(path, 0, &e);
    CHECK_MSG(json_is_array(all), "%s", e.text);
    if (all) check_events(all);
    json_decref(all);
    unlink(path);
    kb_report_run_free(&run);
}

/* A case with 2.5 KB_TRACE_MAX_SAMPLE_SLICES samples: that many slices, each covering
 * consecutive samples, from the first one's start to the last one's end; the output of a
 * run with such records grows with its cases, not its samples. */
static void test_many_samples(void)
{
    size_t n = KB_TRACE_MAX_SAMPLE_SLICES * 5 / 2;
    json_t *us = json_array(), *start = json_array();
    for (size_t k = 0; k < n; k++) {
        json_array_append_new(us, json_real(k == 0 ? 1.0 : 2.0));
        json_array_append_new(start, json_real(10.0 * (double)k));
    }
    json_t **recs = malloc(sizeof *recs);
    recs[0] = rec("gelu/vec/fp16/1024/pad0/eager", 7.0);
    json_t *timing = json_object_get(recs[0], "timing");
    json_object_set_new(timing, "samples_us", us);
    json_object_set_new(timing, "samples_start_us", start);
    kb_report_run run;
    CHECK(kb_report_run_from(recs, 1, "mem", &run) == KB_OK);
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    CHECK(kb_report_trace(&run, out) == KB_OK);
    fclose(out);
    json_t *doc = json_loads(buf, 0, NULL);
    json_t *events = json_object_get(doc, "traceEvents");
    size_t i, slices = 0;
    json_t *e;
    json_array_foreach(events, i, e)
        slices += !strcmp(json_string_value(json_object_get(e, "cat")) ? json_string_value(json_object_get(e, "cat"))
                                                                        : "", "sample");
    CHECK_MSG(slices == KB_TRACE_MAX_SAMPLE_SLICES, "%zu sample slices", slices);
    json_t *first = find(events, "X", "samples 0-1", 1);   /* 2.5 samples per slice: 0-1, 2-4, ... */
    CHECK(first && dur(first) == 12 && json_integer_value(json_object_get(json_object_get(first, "args"), "n")) == 2);
    CHECK(first && json_number_value(json_object_get(json_object_get(first, "args"), "min_us")) == 1.0);
    CHECK(find(events, "X", "samples 2-4", 1) != NULL);
    CHECK(json_is_object(json_object_get(doc, "otherData")));
    json_decref(doc);
    free(buf);
    kb_report_run_free(&run);
}

int main(void)
{
    RUN(test_many_samples);
    RUN(test_report_trace);
    RUN(test_stream);
    TEST_MAIN_END();
}
