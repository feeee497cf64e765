/* verdict_io.c - verdict JSON and JUnit XML (see verdict_io.h). */
#include "accept/verdict_io.h"

#include "core/output.h"
#include "results/report_rows.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static json_t *num_or_null(int have, double v) { return have && isfinite(v) ? json_real(v) : json_null(); }

static json_t *test_json(kb_acc_test t, const kb_acc_result *r)
{
    kb_acc_kind kind = kb_acc_test_kind(t);
    int floor = kind == KB_ACC_KIND_FLOOR && r->have_threshold;
    return json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:o, s:o, s:o, s:s, s:s, s:s}", "name", kb_acc_test_name(t),
                     "status", kb_acc_status_name(r->status), "unit", kb_acc_test_unit(t), "value",
                     num_or_null(r->have_value, r->value), "clock", r->clock, "comparison",
                     !r->have_threshold ? "" : kind == KB_ACC_KIND_LIMIT ? "<=" : ">=", "threshold",
                     num_or_null(r->have_threshold, r->threshold), "reference", num_or_null(floor, r->reference),
                     "fraction", num_or_null(floor, r->fraction), "source", r->source, "reason", r->reason, "case",
                     r->detail);
}

static json_t *identity_json(const kb_acc_identity *id)
{
    return json_pack("{s:s, s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:s}", "launcher", id->launcher, "rank", id->rank,
                     "local_rank", id->local_rank, "node_id", id->node_id, "world_size", id->world_size, "job_id",
                     id->job_id, "step_id", id->step_id, "host", id->host, "cuda_visible_devices",
                     id->cuda_visible);
}

static json_t *str_or_null(const char *s) { return s && *s ? json_string(s) : json_null(); }

static json_t *gpu_json(const kb_device_info *d, const kb_health *h)
{
    return json_pack("{s:s, s:s, s:s, s:o, s:o, s:i, s:i, s:b}", "name", d->name, "uuid", d->uuid, "pci_bus_id",
                     d->pci_bus_id, "serial", str_or_null(h ? h->serial : NULL), "nvml_pci_bus_id",
                     str_or_null(h ? h->pci_bus_id : NULL), "sm", d->sm, "sm_count", d->sm_count, "emulator",
                     d->caps && !(d->caps & KB_CAP_GPU_TIMER));   /* no caps: no device was opened */
}

/* The health reading: every value (null when not read) and why each unread one is. */
static json_t *health_json(const kb_health *h)
{
    json_t *values = json_object(), *unread = json_object();
    for (int i = 0; i < KB_H_COUNT; i++) {
        const kb_health_value *v = &h->f[i];
        json_object_set_new(values, kb_health_name((kb_health_field)i),
                            v->read ? json_integer((json_int_t)v->v) : json_null());
        if (!v->read)
            json_object_set_new(unread, kb_health_name((kb_health_field)i), json_string(v->why));
    }
    if (!*h->serial)
        json_object_set_new(unread, "serial", json_string(h->serial_why));
    if (!*h->pci_bus_id)
        json_object_set_new(unread, "pci_bus_id", json_string(h->pci_why));
    return json_pack("{s:b, s:s, s:o, s:o}", "available", h->available, "why", h->why, "values", values, "unread",
                     unread);
}

json_t *kb_acc_verdict_json(const kb_acc_context *c, const kb_acc_verdict *v)
{
    json_t *tests = json_array();
    kb_acc_status st[KB_ACC_TEST_COUNT];
    kb_acc_test which[KB_ACC_TEST_COUNT];
    for (int t = 0; t < KB_ACC_TEST_COUNT; t++) {
        json_array_append_new(tests, test_json((kb_acc_test)t, &v->r[t]));
        st[t] = v->r[t].status;
        which[t] = (kb_acc_test)t;
    }
    const char *note = v->worst == KB_ACC_NOT_CHECKED ? "NOT CHECKED: nothing was judged, so nothing passed (see "
                                                        "not_checked)"
                       : v->gpu_thresholds ? "GPU thresholds applied"
                                           : "GPU thresholds were not applied: no GPU timing (the emulator's timings "
                                             "are CPU time); correctness and the checks that ran are judged";
    json_t *checks = json_array();
    for (int i = 0; i < c->n_checks; i++)
        json_array_append_new(checks, json_string(c->checks[i]));
    json_t *spec = json_pack("{s:s, s:s, s:s, s:s}", "name", c->spec->name, "sku", c->spec->sku, "file",
                             c->spec->file, "matched_by", c->matched_by ? c->matched_by : "");
    json_t *o = json_pack("{s:s, s:i, s:s, s:s, s:s, s:o, s:o, s:o, s:b, s:s, s:s, s:o, s:s, s:i, s:o}", "schema",
                     KB_ACC_SCHEMA, "schema_version", KB_ACC_SCHEMA_VERSION, "time", c->time, "kbench_version",
                     KB_VERSION, "backend", c->backend, "identity", identity_json(c->id), "gpu", gpu_json(c->dev, c->health),
                     "spec", spec, "gpu_thresholds_applied", v->gpu_thresholds, "note", note, "records",
                     c->records ? c->records : "", "check_records", checks, "verdict", kb_acc_status_name(v->worst),
                     "exit_code", kb_acc_exit_code(st, which, KB_ACC_TEST_COUNT), "tests", tests);
    if (o && c->health)
        json_object_set_new(o, "health", health_json(c->health));
    if (o)
        json_object_set_new(o, "not_checked", str_or_null(v->not_checked));
    return o;
}

static kb_status json_fill(void *user, FILE *f, kb_sb *err)
{
    (void)err;
    return json_dumpf(user, f, JSON_INDENT(2) | JSON_SORT_KEYS) == 0 && fputc('\n', f) != EOF ? KB_OK : KB_ERR_IO;
}

kb_status kb_acc_write_json(const char *path, json_t *o, kb_sb *err)
{
    return kb_out_write_with(path, json_fill, o, err);
}

/* ---- JUnit ---- */

static const char *jstr(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static void attr(FILE *out, const char *name, const char *value)
{
    fprintf(out, " %s=\"", name);
    kb_report_xml_text(out, value);
    fputc('"', out);
}

static void testcase(FILE *out, const char *suite, json_t *t)
{
    const char *st = jstr(t, "status");
    fputs("    <testcase", out);
    attr(out, "classname", suite);
    attr(out, "name", jstr(t, "name"));
    fputs(" time=\"0\">\n", out);
    if (!strcmp(st, "FAIL")) {
        fputs("      <failure type=\"FAIL\"", out);
        attr(out, "message", jstr(t, "reason"));
        fputs("/>\n", out);
    } else if (!strcmp(st, "SKIP")) {
        fputs("      <skipped", out);
        attr(out, "message", jstr(t, "reason"));
        fputs("/>\n", out);
    }
    fprintf(out, "      <system-out>%s: ", st);
    kb_report_xml_text(out, jstr(t, "reason"));
    if (*jstr(t, "source")) {
        fputs("; reference: ", out);
        kb_report_xml_text(out, jstr(t, "source"));
    }
    fputs("</system-out>\n    </testcase>\n", out);
}

/* The testcase "checked" of a NOT CHECKED verdict: an error with the reason. */
static void not_checked_case(FILE *out, const char *suite, json_t *v)
{
    const char *why = *jstr(v, "not_checked") ? jstr(v, "not_checked") : "every test was SKIP: nothing was checked";
    fputs("    <testcase", out);
    attr(out, "classname", suite);
    fputs(" name=\"checked\" time=\"0\">\n      <error type=\"NOT CHECKED\"", out);
    attr(out, "message", why);
    fputs("/>\n    </testcase>\n", out);
}

static void testsuite(FILE *out, json_t *v)
{
    json_t *tests = json_object_get(v, "tests"), *t;
    json_t *gpu = json_object_get(v, "gpu"), *id = json_object_get(v, "identity");
    int fail = 0, skip = 0;
    size_t i;
    json_array_foreach(tests, i, t) {
        fail += !strcmp(jstr(t, "status"), "FAIL");
        skip += !strcmp(jstr(t, "status"), "SKIP");
    }
    char name[400];
    snprintf(name, sizeof name, "kbench.accept.%s.%s", jstr(id, "host"), jstr(gpu, "uuid"));
    fputs("  <testsuite", out);
    attr(out, "name", name);
    /* NOT CHECKED is an error of the suite, so that a CI gating on JUnit does not pass it */
    int unchecked = !strcmp(jstr(v, "verdict"), "NOT CHECKED");
    fprintf(out, " tests=\"%zu\" failures=\"%d\" errors=\"%d\" skipped=\"%d\"", json_array_size(tests) + unchecked,
            fail, unchecked, skip);
    attr(out, "hostname", jstr(id, "host"));
    fputs(">\n    <properties>\n", out);
    const char *props[][2] = { { "gpu", jstr(gpu, "name") }, { "uuid", jstr(gpu, "uuid") },
                               { "pci_bus_id", jstr(gpu, "pci_bus_id") },
                               { "spec", jstr(json_object_get(v, "spec"), "name") },
                               { "verdict", jstr(v, "verdict") } };
    for (size_t p = 0; p < sizeof props / sizeof props[0]; p++) {
        fputs("      <property", out);
        attr(out, "name", props[p][0]);
        attr(out, "value", props[p][1]);
        fputs("/>\n", out);
    }
    fputs("    </properties>\n", out);
    if (unchecked)
        not_checked_case(out, name, v);
    json_array_foreach(tests, i, t)
        testcase(out, name, t);
    fputs("  </testsuite>\n", out);
}

kb_status kb_acc_junit(FILE *out, json_t *verdicts, const char *name)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", out);
    attr(out, "name", name);
    fputs(">\n", out);
    size_t i;
    json_t *v;
    json_array_foreach(verdicts, i, v)
        testsuite(out, v);
    fputs("</testsuites>\n", out);
    return ferror(out) ? KB_ERR_IO : KB_OK;
}

typedef struct {
    json_t *verdicts;
    const char *name;
} junit_job;

static kb_status junit_fill(void *user, FILE *f, kb_sb *err)
{
    const junit_job *j = user;
    (void)err;
    return kb_acc_junit(f, j->verdicts, j->name);
}

kb_status kb_acc_junit_file(const char *path, json_t *verdicts, const char *name, kb_sb *err)
{
    junit_job j = { verdicts, name };
    return kb_out_write_with(path, junit_fill, &j, err);
}
