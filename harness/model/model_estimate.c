/* model_estimate.c - a model roll-up from `kbench estimate`'s static model (model_estimate.h). */
#include "model/model_estimate.h"

#include "core/paths.h"
#include "estimate/est_report.h"
#include "kernels/families.h"
#include "results/record.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

kb_status kb_model_run_suite(const kb_report_run *run, const char *o_suite, kb_sb *out, kb_sb *err)
{
    kb_sb_clear(out);
    if (o_suite) {
        kb_sb_printf(out, "%s", o_suite);
        return KB_OK;
    }
    const char *name = run->n ? json_string_value(json_object_get(run->recs[0], "suite")) : NULL;
    if (!name || !*name || strchr(name, '/')) {
        kb_sb_printf(err, "--estimate: the run's records name no suite to estimate the missing ops from: give --suite "
                          "FILE");
        return KB_ERR_INPUT;
    }
    kb_sb_printf(out, "%s/suites/%s.yaml", kb_data_root(), name);
    if (access(out->s, R_OK) != 0) {
        kb_sb_printf(err, "--estimate: the run's suite '%s' is not %s: give --suite FILE", name, out->s);
        return KB_ERR_INPUT;
    }
    return KB_OK;
}

int kb_model_run_matches(const kb_report_run *run, const kb_est_setup *s, const char *peaks_path, char *note,
                         size_t n)
{
    int dev = -1;
    for (size_t i = 0; i < run->n && dev < 0; i++)
        dev = run->rows[i].dev;
    const kb_report_device *d = dev >= 0 ? &run->devs[dev] : NULL;
    kb_device_info info;
    kb_peaks p;
    memset(&info, 0, sizeof info);
    if (d) {
        snprintf(info.name, sizeof info.name, "%s", d->name);
        info.sm = d->sm;
        info.caps = KB_CAP_ROOFLINE;
    }
    if (!d || d->emulator)
        snprintf(note, n, "%s", d ? "the run's records are CPU timings (emulator): not used beside estimates"
                                  : "the run's records name no device");
    else if (kb_peaks_for_device(&info, peaks_path, &p, NULL) != KB_OK || !p.have_sheet ||
             strcmp(p.sku, s->peaks.sku) != 0)
        snprintf(note, n, "the run is on %s, not a %s (%s): its times are not used beside %s estimates", d->name,
                 s->peaks.sku, s->x.gpu->name, s->x.gpu->name);
    else
        return note[0] = 0, 1;
    return 0;
}

/* "/AxBxC/": the dims of op at phase ph as a case id spells them (a walk filter). */
static char *dims_filter(const kb_model_op *op, int ph)
{
    kb_sb b;
    kb_sb_init(&b);
    for (int d = 0; d < op->n_dims; d++)
        kb_sb_printf(&b, "%s%lld", d ? "x" : "/", (long long)op->dims[ph][d]);
    kb_sb_printf(&b, "/");
    return b.s;
}

/* The walk filters: the dims of every op in every phase it runs in (*n of them, malloc'ed
 * strings in a malloc'ed array; NULL when out of memory). */
static char **model_filters(const kb_model *m, int *n)
{
    char **f = calloc((size_t)m->n_ops * KB_PHASE_COUNT + 1, sizeof *f);
    *n = 0;
    for (int k = 0; f && k < m->n_ops; k++)
        for (int ph = 0; ph < KB_PHASE_COUNT; ph++)
            if (m->ops[k].phases & (1u << ph))
                f[(*n)++] = dims_filter(&m->ops[k], ph);
    return f;
}

/* One estimated case as a record of the estimate run. */
static json_t *est_record(const kb_est_row *r, const kb_est_setup *s, const char *run_id)
{
    const kb_family *f = kb_families[r->c.family];
    kb_work w = f->work(&r->c);
    kb_derived d;
    kb_derive(&w, r->e.est_us, &s->peaks, r->c.dtype, &d);
    char dev[160];
    snprintf(dev, sizeof dev, "%s (ESTIMATE, --gpu %s)", s->peaks.sku, s->x.gpu->name);
    json_t *o = kb_est_row_json(r);
    if (!o)
        return NULL;
    json_object_update_new(
        o, json_pack("{ss ss ss s{ss sf} s{sf sf sf sf} s{sf sf sf so so sf sf ss ss?} s{ss ss ss si sb}}", "run_id",
                     run_id, "status", "ok", "backend", "estimate", "timing", "clock", "estimate", "median_us",
                     r->e.est_us, "work", "flops", w.flops, "bytes_read", w.bytes_read, "bytes_written",
                     w.bytes_written, "bytes_moved", w.bytes_moved, "derived", "tflops", d.tflops, "gbps", d.gbps,
                     "ai", d.ai, "roof_tflops", d.have_roof ? json_real(d.roof_tflops) : json_null(), "pct_roof",
                     d.have_roof ? json_real(d.pct_roof) : json_null(), "peak_tflops", d.peak_tflops, "peak_gbps",
                     d.peak_gbps, "peak_source", "datasheet", "bound", kb_bound_name(d.bound), "device", "name", dev,
                     "uuid", "estimate", "pci_bus_id", "", "sm", s->x.gpu->sm, "emulator", 0));
    return o;
}

/* The ESTIMATE records of rows' estimated cases as a run. */
static kb_status est_run(const kb_est_rows *rows, const kb_est_setup *s, kb_report_run *out)
{
    size_t n = kb_est_rows_count(rows, KB_EST_ROW_OK), k = 0;
    json_t **recs = calloc(n ? n : 1, sizeof *recs);
    char run_id[64];
    snprintf(run_id, sizeof run_id, "estimate-%s", s->x.gpu->name);
    for (size_t i = 0; recs && i < rows->n; i++)
        if (rows->rows[i].status == KB_EST_ROW_OK && !(recs[k++] = est_record(&rows->rows[i], s, run_id))) {
            kb_record_free_all(recs, k);
            return KB_ERR_OOM;
        }
    if (!recs)
        return KB_ERR_OOM;
    return kb_report_run_from(recs, n, run_id, out);
}

kb_status kb_model_estimate(const kb_model *m, const kb_report_run *run, const kb_model_est_opts *o, int dtype,
                            kb_model_est *out, kb_sb *err)
{
    memset(out, 0, sizeof *out);
    kb_status st = kb_est_setup_target(o->gpu, o->peaks_path, o->db_path, &out->setup, err);
    if (st != KB_OK)
        return st;
    int nf = 0, sm = o->sm_override ? o->sm_override : out->setup.x.gpu->sm;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    char **filters = model_filters(m, &nf);
    kb_est_suite_opts so = { o->suite_path, (const char *const *)filters, nf, o->cache_dir,
                             o->jobs > 0 ? o->jobs : cores < 1 ? 1 : cores > 8 ? 8 : (int)cores, sm, &out->setup.x };
    kb_est_rows rows = { 0 };
    st = filters ? kb_est_suite(&so, &rows, NULL, err) : KB_ERR_OOM;
    for (int i = 0; i < nf; i++)
        free(filters[i]);
    free(filters);
    if (st == KB_OK) {
        out->n_estimated = kb_est_rows_count(&rows, KB_EST_ROW_OK);
        st = est_run(&rows, &out->setup, &out->est);
    }
    kb_est_rows_free(&rows);
    if (st != KB_OK)
        return st == KB_ERR_OOM ? (kb_sb_printf(err, "out of memory"), KB_ERR_SETUP) : st;
    char note[256] = "";
    int use = run && kb_model_run_matches(run, &out->setup, o->peaks_path, note, sizeof note);
    kb_model_rollup_est(m, run, use, note, &out->est, &out->setup.peaks, dtype, &out->rollup);
    return KB_OK;
}

void kb_model_est_free(kb_model_est *e)
{
    kb_report_run_free(&e->est);
}
