/* report_rows.c - a recorded run loaded into report rows, grouped by device, and the
 * pieces every report writer shares (see report_rows.h). */
#include "results/report_rows.h"

#include "core/output.h"
#include "core/report.h"
#include "engine/family.h"
#include "kernels/families.h"
#include "results/record.h"
#include "results/record_json.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *sget(json_t *o, const char *k)
{
    const char *s = json_string_value(json_object_get(o, k));
    return s ? s : "";
}

static int nget(json_t *o, const char *k, double *v)
{
    json_t *j = json_object_get(o, k);
    if (!json_is_number(j)) return 0;
    *v = json_number_value(j);
    return 1;
}

static void fill_row(kb_report_row *r, json_t *rec)
{
    memset(r, 0, sizeof *r);
    r->rec = rec;
    r->dev = -1;
    r->case_id = sget(rec, "case_id");
    r->family = sget(rec, "family");
    r->variant = sget(rec, "variant");
    r->dtype = sget(rec, "dtype");
    r->status = sget(rec, "status");
    r->reason = sget(rec, "reason");
    r->launch = sget(rec, "launch");
    r->status_known = kb_case_status_parse(r->status, &r->st) == 0;
    r->ok = r->status_known && r->st == KB_CASE_OK;
    r->skipped = r->status_known && r->st == KB_CASE_SKIPPED;
    r->failed = r->status_known ? kb_case_status_failed(r->st) : 1;
    json_t *v = json_object_get(rec, "verify");
    if (json_is_object(v)) {
        double x = 0;
        r->verified = 1;
        r->n_checked = nget(v, "n", &x) ? (long long)x : 0;
        r->n_bad = nget(v, "n_bad", &x) ? (long long)x : 0;
        r->have_err = nget(v, "max_abs_err", &r->max_abs_err);
        nget(v, "max_rel_err", &r->max_rel_err);
    }
    json_t *acc = json_object_get(rec, "accuracy");
    if (json_is_object(acc) && nget(acc, "rel_fro_err", &r->acc_rel_fro)) {
        r->have_acc = 1;
        nget(acc, "max_rel_err", &r->acc_max_rel);
        if (!nget(acc, "snr_db", &r->acc_snr_db))   /* null: the output equals the fp64 result */
            r->acc_snr_db = r->acc_rel_fro == 0 ? INFINITY : NAN;
    }
    json_t *params = json_object_get(rec, "params");
    kb_recipe rc = KB_RECIPE_TENSOR;
    r->recipe = kb_recipe_parse(sget(params, "scale"), &rc) == 0 ? (int)rc : KB_RECIPE_TENSOR;
    r->dist = *sget(params, "dist") ? sget(params, "dist") : "uniform";
    json_t *t = json_object_get(rec, "timing");
    r->clock = sget(t, "clock");
    if (nget(t, "median_us", &r->median_us)) {
        double s = 0;
        r->have_timing = 1;
        nget(t, "cv", &r->cv);
        r->samples = nget(t, "samples", &s) ? (int)s : 0;
    }
    nget(rec, "wall_ms", &r->wall_ms);
    kb_record_derived(rec, &r->d);
    r->shape = sget(rec, "shape");
    double pad = 0;
    r->pad = nget(rec, "pad", &pad) ? (int)pad : 0;
    if (!nget(t, "noise", &r->noise))
        r->noise = NAN;
}

/* Index of the row's device in run->devs, adding it when new; -1 without a device. */
static int device_index(kb_report_run *run, json_t *dev)
{
    if (!json_is_object(dev))
        return -1;
    const char *name = sget(dev, "name"), *uuid = sget(dev, "uuid");
    for (int i = 0; i < run->n_devs; i++)
        if (strcmp(run->devs[i].name, name) == 0 && strcmp(run->devs[i].uuid, uuid) == 0)
            return i;
    kb_report_device *nd = realloc(run->devs, (size_t)(run->n_devs + 1) * sizeof *nd);
    if (!nd)
        return -1;
    run->devs = nd;
    kb_report_device *d = &nd[run->n_devs];
    memset(d, 0, sizeof *d);
    snprintf(d->name, sizeof d->name, "%s", name);
    snprintf(d->uuid, sizeof d->uuid, "%s", uuid);
    d->sm = (int)json_integer_value(json_object_get(dev, "sm"));
    d->emulator = json_is_true(json_object_get(dev, "emulator"));
    return run->n_devs++;
}

kb_status kb_report_run_from(json_t **recs, size_t n, const char *source, kb_report_run *out)
{
    memset(out, 0, sizeof *out);
    out->recs = recs;
    out->n = n;
    out->source = strdup(source ? source : "");
    out->rows = calloc(n ? n : 1, sizeof *out->rows);
    if (!out->source || !out->rows) {
        kb_report_run_free(out);
        return KB_ERR_OOM;
    }
    out->run_id = n ? sget(recs[0], "run_id") : "";
    out->time = n ? sget(recs[0], "time") : "";
    for (size_t i = 0; i < n; i++) {
        fill_row(&out->rows[i], recs[i]);
        json_t *dev = json_object_get(recs[i], "device");
        out->rows[i].dev = device_index(out, dev);
        if (out->rows[i].dev >= 0)
            out->devs[out->rows[i].dev].n_rows++;
        /* a device the record says is the emulator means CPU times, whatever the clock says */
        if (out->rows[i].dev >= 0 && out->devs[out->rows[i].dev].emulator && out->rows[i].have_timing &&
            !*out->rows[i].clock)
            out->rows[i].clock = "cpu";
    }
    return KB_OK;
}

void kb_report_run_free(kb_report_run *r)
{
    kb_record_free_all(r->recs, r->n);
    free(r->rows);
    free(r->devs);
    free(r->source);
    memset(r, 0, sizeof *r);
}

const char *const kb_report_section_names[] = {   /* sized by the header: one name per section */
    "all", "summary", "best", "precision", "tiles", "launch", "margins", "roofline", "cases", NULL,
};
const char *const kb_report_section_titles[] = {
    "Report", "Summary", "Fastest configuration per shape and dtype", "Precision comparison",
    "Tile sweep per shape", "Graph vs eager", "Verification margins", "Roofline", "All cases",
};

int kb_report_section_parse(const char *s, kb_report_section *out)
{
    for (int i = 0; i < KB_SECTION_COUNT; i++)
        if (!strcmp(s, kb_report_section_names[i])) {
            *out = (kb_report_section)i;
            return 0;
        }
    return -1;
}

/* Records of run id in every *.jsonl of dir. */
static kb_status load_run_id(const char *id, const char *dir, json_t ***out, size_t *n_out, kb_sb *err)
{
    DIR *d = opendir(dir);
    json_t **keep = NULL;
    size_t n = 0;
    *out = NULL;
    *n_out = 0;
    if (!d) {
        if (err) kb_sb_printf(err, "%s: no such file, and no results folder %s to find a run id in", id, dir);
        return KB_ERR_INPUT;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".jsonl") != 0)
            continue;
        kb_sb path, lerr;
        kb_sb_init(&path);
        kb_sb_init(&lerr);
        kb_sb_printf(&path, "%s/%s", dir, e->d_name);
        json_t **recs;
        size_t m;
        if (kb_record_load(path.s, &recs, &m, &lerr) != KB_OK) {
            kb_report(KB_REPORT_WARNING, "skipping %s", lerr.s);
            m = 0;
            recs = NULL;
        }
        json_t **grown = realloc(keep, (n + m + 1) * sizeof *grown);
        if (grown) keep = grown;
        for (size_t i = 0; i < m; i++) {
            if (grown && strcmp(sget(recs[i], "run_id"), id) == 0)
                keep[n++] = recs[i];
            else
                json_decref(recs[i]);
        }
        free(recs);
        kb_sb_free(&path);
        kb_sb_free(&lerr);
        if (!grown) {
            closedir(d);
            kb_record_free_all(keep, n);
            return KB_ERR_OOM;
        }
    }
    closedir(d);
    if (n == 0) {
        free(keep);
        if (err) kb_sb_printf(err, "%s: no such file, and no record of that run id in %s/*.jsonl", id, dir);
        return KB_ERR_INPUT;
    }
    *out = keep;
    *n_out = n;
    return KB_OK;
}

/* A file a report reads must hold kbench records: at least one, each a JSON object with
 * schema_version and case_id (what kb_record_load accepts is any JSON object per line). */
static kb_status check_records(const char *path, json_t **recs, size_t n, kb_sb *err)
{
    if (n == 0) {
        if (err) kb_sb_printf(err, "%s: no records in it (a results file holds one JSON record per line)", path);
        return KB_ERR_INPUT;
    }
    for (size_t i = 0; i < n; i++)
        if (!json_is_integer(json_object_get(recs[i], "schema_version")) ||
            !json_is_string(json_object_get(recs[i], "case_id"))) {
            if (err) kb_sb_printf(err, "%s: record %zu is not a kbench record (no schema_version/case_id)", path,
                                  i + 1);
            return KB_ERR_INPUT;
        }
    return KB_OK;
}

kb_status kb_report_run_load(const char *run, const char *results_dir, kb_report_run *out, kb_sb *err)
{
    json_t **recs = NULL;
    size_t n = 0;
    struct stat st;
    kb_status s;
    memset(out, 0, sizeof *out);
    int is_file = stat(run, &st) == 0 && S_ISREG(st.st_mode);
    if (is_file)
        s = kb_record_load(run, &recs, &n, err);
    else
        s = load_run_id(run, results_dir ? results_dir : "results", &recs, &n, err);
    if (s != KB_OK)
        return s == KB_ERR_IO ? KB_ERR_INPUT : s;
    if (is_file && (s = check_records(run, recs, n, err)) != KB_OK) {
        kb_record_free_all(recs, n);
        return s;
    }
    return kb_report_run_from(recs, n, run, out);
}

kb_status kb_report_run_not_output(const char *run, const char *results_dir, const char *out, const char *what,
                                   kb_sb *err)
{
    struct stat st;
    if (!out || (stat(run, &st) == 0 && S_ISREG(st.st_mode)))
        return kb_out_not_input(out, run, what, err);
    const char *dir = results_dir ? results_dir : "results";
    DIR *d = opendir(dir);
    struct dirent *e;
    kb_status s = KB_OK;
    kb_sb path, label;
    kb_sb_init(&path);
    kb_sb_init(&label);
    while (d && s == KB_OK && (e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 7 || strcmp(e->d_name + len - 6, ".jsonl") != 0)
            continue;
        kb_sb_clear(&path);
        kb_sb_clear(&label);
        kb_sb_printf(&path, "%s/%s", dir, e->d_name);
        kb_sb_printf(&label, "a records file searched for %s's id %s", what, run);
        s = kb_out_not_input(out, path.s, label.s, err);
    }
    if (d)
        closedir(d);
    kb_sb_free(&path);
    kb_sb_free(&label);
    return s;
}

static int precision_family(const char *f)
{
    return strcmp(f, "gemm") == 0 || strcmp(f, "attention") == 0;
}

/* 1 when param name of family f changes what is computed (kb_param.problem). */
static int problem_param(int f, const char *name)
{
    int p = f < 0 ? -1 : kb_family_param_find(kb_families[f], name);
    return p >= 0 && kb_families[f]->params[p].problem;
}

int kb_report_same_problem_params(const kb_report_row *a, const kb_report_row *b)
{
    int f = kb_family_find(a->family);
    json_t *pa = json_object_get(a->rec, "params"), *pb = json_object_get(b->rec, "params");
    const char *k;
    json_t *v;
    json_object_foreach(pa, k, v)
        if (problem_param(f, k) && !json_equal(v, json_object_get(pb, k)))
            return 0;
    json_object_foreach(pb, k, v)
        if (problem_param(f, k) && !json_object_get(pa, k))
            return 0;
    return 1;
}

/* 1 when the row's variant computes another operation over its family's dims
 * (kb_family.other_op_variants: attention's decode). */
static int other_op(const kb_report_row *r, int *variant)
{
    int f = kb_family_find(r->family);
    *variant = f < 0 ? -1 : kb_family_variant_find(kb_families[f], r->variant);
    return *variant >= 0 && *variant < 32 && (kb_families[f]->other_op_variants >> *variant & 1u);
}

/* Rows of such variants compare only with each other (their problem params - q_len, group,
 * causal - are compared by kb_report_same_problem_params; attention's decode and decode_tma
 * compute the same decode attention), not with the family's operation. */
static int same_operation(const kb_report_row *a, const kb_report_row *b)
{
    int va, vb, oa = other_op(a, &va), ob = other_op(b, &vb);
    return oa == ob;
}

/* Same shape, input distribution, device, padding, launch mode, problem params (and
 * operation): comparable across dtypes and recipes. */
static int same_shape(const kb_report_row *a, const kb_report_row *b)
{
    return a->dev == b->dev && strcmp(a->family, b->family) == 0 && strcmp(a->launch, b->launch) == 0 &&
           strcmp(a->dist, b->dist) == 0 &&
           json_equal(json_object_get(a->rec, "dims"), json_object_get(b->rec, "dims")) &&
           json_equal(json_object_get(a->rec, "pad"), json_object_get(b->rec, "pad")) &&
           kb_report_same_problem_params(a, b) && same_operation(a, b);
}

int kb_report_row_is_vendor(const kb_report_row *row)
{
    int f = kb_family_find(row->family);
    int v = f < 0 ? -1 : kb_family_variant_find(kb_families[f], row->variant);
    return v >= 0 && kb_families[f]->variants[v].entry == NULL;
}

/* The group of row r (same shape), or -1. */
static int group_of(const kb_report_run *run, const kb_precision_group *g, int n, const kb_report_row *r)
{
    for (int k = 0; k < n; k++)
        if (same_shape(&run->rows[g[k].first], r))
            return k;
    return -1;
}

/* Attach the vendor rows: the fastest ok one per group and dtype, else one that did not run. */
static void attach_vendor_rows(const kb_report_run *run, kb_precision_group *g, int n)
{
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        kb_dtype dt;
        int k;
        if (!precision_family(r->family) || kb_dtype_parse(r->dtype, &dt) != 0 || !kb_report_row_is_vendor(r) ||
            (k = group_of(run, g, n, r)) < 0)
            continue;
        int *best = &g[k].vendor[dt][r->recipe];
        int ran = r->ok && r->have_timing, best_ran = *best >= 0 && run->rows[*best].ok;
        if (*best < 0 || (ran && (!best_ran || r->median_us < run->rows[*best].median_us)))
            *best = (int)i;
    }
}

int kb_report_precision_groups(const kb_report_run *run, kb_precision_group **out)
{
    kb_precision_group *g = NULL;
    int n = 0;
    *out = NULL;
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        kb_dtype dt;
        if (!r->ok || !r->have_timing || !precision_family(r->family) || kb_dtype_parse(r->dtype, &dt) != 0 ||
            kb_report_row_is_vendor(r))
            continue;
        int k = group_of(run, g, n, r);
        if (k < 0) {
            kb_precision_group *ng = realloc(g, (size_t)(n + 1) * sizeof *ng);
            if (!ng) { free(g); return -1; }
            g = ng;
            for (int d = 0; d < KB_DT_COUNT; d++)
                for (int rc = 0; rc < KB_RECIPE_COUNT; rc++) g[n].rows[d][rc] = g[n].vendor[d][rc] = -1;
            g[n].first = (int)i;
            k = n++;
        }
        int *best = &g[k].rows[dt][r->recipe];
        if (*best < 0 || r->median_us < run->rows[*best].median_us)
            *best = (int)i;
    }
    attach_vendor_rows(run, g, n);
    /* keep the groups where two or more (dtype, recipe) rows ran, or a vendor row stands beside one */
    int kept = 0;
    for (int k = 0; k < n; k++) {
        int dts = 0, vendor = 0;
        for (int d = 0; d < KB_DT_COUNT; d++)
            for (int rc = 0; rc < KB_RECIPE_COUNT; rc++) {
                dts += g[k].rows[d][rc] >= 0;
                vendor |= g[k].rows[d][rc] >= 0 && g[k].vendor[d][rc] >= 0;
            }
        if (dts >= 2 || vendor) g[kept++] = g[k];
    }
    if (kept == 0) { free(g); g = NULL; }
    *out = g;
    return kept;
}

void kb_report_precision_title(const kb_report_run *run, const kb_precision_group *g, kb_sb *out)
{
    const kb_report_row *f = &run->rows[g->first];
    int fi = kb_family_find(f->family);
    kb_sb_printf(out, "%s %s%s", f->family, f->shape, *f->shape ? " " : "");
    kb_report_dims_text(f, out);
    kb_sb_printf(out, ", pad %d", f->pad);
    const char *k;
    json_t *v;
    json_object_foreach(json_object_get(f->rec, "params"), k, v) {
        if (!problem_param(fi, k))
            continue;
        if (json_is_string(v))
            kb_sb_printf(out, ", %s=%s", k, json_string_value(v));
        else if (json_is_integer(v))
            kb_sb_printf(out, ", %s=%lld", k, (long long)json_integer_value(v));
    }
    kb_sb_printf(out, ", dist=%s", f->dist);
    if (strcmp(f->launch, "eager"))
        kb_sb_printf(out, ", %s launch", f->launch);
    kb_sb_printf(out, " on %s", f->dev >= 0 ? run->devs[f->dev].name : "?");
}

void kb_report_dims_text(const kb_report_row *row, kb_sb *out)
{
    json_t *dims = json_object_get(row->rec, "dims");
    const char *k;
    json_t *v;
    int first = 1;
    json_object_foreach(dims, k, v) {
        kb_sb_printf(out, "%s%lld", first ? "" : "x", (long long)json_integer_value(v));
        first = 0;
    }
}

void kb_report_num(char *buf, size_t n, double v)
{
    double a = fabs(v);
    if (!isfinite(v)) snprintf(buf, n, "%s", "");
    else if (a >= 1000) snprintf(buf, n, "%.0f", v);
    else if (a >= 100) snprintf(buf, n, "%.1f", v);
    else if (a >= 10) snprintf(buf, n, "%.2f", v);
    else if (a >= 1 || a == 0) snprintf(buf, n, "%.3f", v);
    else if (a >= 0.001) snprintf(buf, n, "%.3g", v);
    else snprintf(buf, n, "%.2g", v);
}

void kb_report_verified_text(const kb_report_row *row, char *buf, size_t n)
{
    if (!row->verified) {
        snprintf(buf, n, "%s", "");
        return;
    }
    char err[32];
    if (row->have_err)
        snprintf(err, sizeof err, "%.2g", row->max_abs_err);
    else
        snprintf(err, sizeof err, "NaN");
    if (row->n_bad > 0)
        snprintf(buf, n, "%lld bad / %s", row->n_bad, err);
    else
        snprintf(buf, n, "ok / %s", err);
}

void kb_report_summary(const kb_report_run *run, kb_sb *out)
{
    size_t count[KB_CASE_STATUS_COUNT] = { 0 }, other = 0;
    for (size_t i = 0; i < run->n; i++) {
        if (run->rows[i].status_known)
            count[run->rows[i].st]++;
        else
            other++;
    }
    /* ok first and skipped last, as people read a summary */
    static const kb_case_status order[] = { KB_CASE_OK, KB_CASE_WRONG, KB_CASE_FAULT, KB_CASE_COMPILE_ERROR,
                                            KB_CASE_LAUNCH_ERROR, KB_CASE_INPUT_ERROR, KB_CASE_TIMEOUT,
                                            KB_CASE_SKIPPED };
    _Static_assert(sizeof order / sizeof order[0] == KB_CASE_STATUS_COUNT, "every status in the summary");
    const char *sep = ": ";
    kb_sb_printf(out, "%zu case%s", run->n, run->n == 1 ? "" : "s");
    for (size_t k = 0; k < KB_CASE_STATUS_COUNT; k++) {
        if (!count[order[k]])
            continue;
        kb_sb_printf(out, "%s%zu %s", sep, count[order[k]], kb_case_status_name(order[k]));
        sep = ", ";
    }
    if (other)
        kb_sb_printf(out, "%s%zu other", sep, other);
}

void kb_report_ceilings(const kb_report_run *run, int dev, double tflops[KB_DT_COUNT], double *gbps,
                        const char **source)
{
    for (int d = 0; d < KB_DT_COUNT; d++) tflops[d] = 0;
    *gbps = 0;
    *source = NULL;
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        kb_dtype dt;
        if (r->dev != dev || !r->d.have_roof)
            continue;
        if (r->d.peak_gbps > *gbps) *gbps = r->d.peak_gbps;
        if (kb_dtype_parse(r->dtype, &dt) == 0 && r->d.peak_tflops > tflops[dt]) tflops[dt] = r->d.peak_tflops;
        if (r->d.peak_source && (!*source || strcmp(r->d.peak_source, "clock") == 0))
            *source = r->d.peak_source;
    }
}

void kb_report_xml_text(FILE *out, const char *s)
{
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': fputs("&amp;", out); break;
        case '<': fputs("&lt;", out); break;
        case '>': fputs("&gt;", out); break;
        case '"': fputs("&quot;", out); break;
        case '\'': fputs("&#39;", out); break;
        default: fputc(c < 0x20 && c != '\t' && c != '\n' && c != '\r' ? '?' : c, out);
        }
    }
}

int kb_report_measured(const kb_report_run *run, int dev, double *gbps, char kinds[][40], double *tflops, int max)
{
    int n = 0;
    *gbps = 0;
    for (size_t i = 0; i < run->n; i++) {
        const kb_report_row *r = &run->rows[i];
        if (r->dev != dev)
            continue;
        if (r->d.have_measured && r->d.measured_gbps > *gbps)
            *gbps = r->d.measured_gbps;
        if (!r->d.have_path || !r->d.path_source || strcmp(r->d.path_source, "measured") != 0)
            continue;
        int k = 0;
        while (k < n && strcmp(kinds[k], r->d.path) != 0) k++;
        if (k == n && n < max) {
            snprintf(kinds[n], 40, "%s", r->d.path);
            tflops[n++] = 0;
        }
        if (k < n && r->d.path_tflops > tflops[k])
            tflops[k] = r->d.path_tflops;
    }
    return n;
}
