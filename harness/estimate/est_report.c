/* est_report.c - `kbench estimate`'s text, JSON and CSV output and its per-family
 * summary (est_report.h). */
#include "estimate/est_report.h"

#include "estimate/est_table.h"
#include "kernels/families.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- JSON ---- */

/* dims {name: n} and params {name: int or choice name} of the row's case, as records have them. */
static void case_fields(json_t *o, const kb_est_row *r)
{
    const kb_family *f = kb_families[r->c.family];
    json_t *dims = json_object(), *params = json_object();
    for (int i = 0; i < f->n_dims && i < KB_MAX_DIMS; i++)
        json_object_set_new(dims, f->dims[i], json_integer(r->c.dims[i]));
    for (int i = 0; i < f->n_params && i < KB_MAX_PARAMS; i++) {
        const kb_param *p = &f->params[i];
        int64_t v = r->c.params[i], k = 0;
        if (!kb_param_applies(f, i, r->c.variant))
            continue;
        while (p->choices && p->choices[k])
            k++;
        json_object_set_new(params, p->name,
                            p->choices && v >= 0 && v < k ? json_string(p->choices[v]) : json_integer(v));
    }
    json_object_set_new(o, "family", json_string(f->name));
    json_object_set_new(o, "variant", json_string(f->variants[r->c.variant].name));
    json_object_set_new(o, "dtype", json_string(kb_dtype_name(r->c.dtype)));
    json_object_set_new(o, "dims", dims);
    json_object_set_new(o, "params", params);
    json_object_set_new(o, "pad", json_integer(r->c.pad));
    json_object_set_new(o, "launch", json_string(kb_launch_name(r->c.launch)));
}

static json_t *num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

json_t *kb_est_row_json(const kb_est_row *r)
{
    const kb_estimate *e = &r->e;
    json_t *o = json_pack("{sb ss}", "estimate", 1, "case_id", r->id), *roofs = json_object();
    case_fields(o, r);
    for (int k = 0; k < KB_ROOF_COUNT; k++) {
        char name[32];
        snprintf(name, sizeof name, "%s_us", kb_est_roof_name((kb_est_roof)k));
        json_object_set_new(roofs, name, num(e->roof_us[k]));
    }
    json_object_set_new(o, "limit", json_string(kb_est_roof_name(e->limit)));
    json_object_set_new(o, "est_us", num(e->est_us));
    json_object_set_new(o, "pct_roofline", num(e->pct_roofline));
    json_object_set_new(o, "roofline_us", num(e->roofline_us));
    json_object_set_new(o, "occupancy", json_pack("{si ss}", "blocks", e->occ.blocks, "limit", e->occ.limit));
    json_object_set_new(o, "waves", num(e->waves));
    json_object_set_new(o, "sm_pct", num(100.0 * e->sm_use / e->imbalance));
    json_object_set_new(o, "registers", r->regs >= 0 ? json_integer(r->regs) : json_null());
    json_object_set_new(o, "roofs", roofs);
    json_object_set_new(o, "modelled", json_boolean(e->modelled));
    json_object_set_new(o, "tensor_calibrated", json_boolean(e->roof_us[KB_ROOF_TENSOR] <= 0 || e->tensor_calibrated));
    return o;
}

static json_t *target_json(const kb_est_report_opts *o)
{
    const kb_est_target *x = o->x;
    double eff;
    int cal = kb_est_tensor_efficiency(x->gpu->sm, KB_TENSOR_MMA_SYNC, &eff, NULL);
    /* compiled_for_sm: the compute capability x10 (an `a` target's too); compiled_for: the
     * architecture's name ("sm_90a"); model_clock_mhz null where the GPU's clock is unpublished */
    json_t *clock = x->clock_mhz > 0 ? json_real(x->clock_mhz) : json_null();
    return json_pack("{ss ss si si si ss so sf ss sf sf sf ss ss sf sb ss}", "gpu", x->gpu->name, "sku",
                     x->peaks->sku, "sm", x->gpu->sm, "sms", x->gpu->sms, "compiled_for_sm", kb_arch_cc(o->sm),
                     "compiled_for", kb_arch_name(o->sm), "model_clock_mhz", clock,
                     "dram_gbps", x->dram_gbps, "dram_source", x->dram_source, "datasheet_gbps",
                     kb_peaks_gbps(x->peaks, NULL), "launch_us_eager", x->launch_us[0], "launch_us_graph",
                     x->launch_us[1], "launch_source", x->launch_source, "ceilings",
                     o->ceilings_note ? o->ceilings_note : "", "mma_sync_efficiency", eff, "mma_sync_calibrated",
                     cal == 1, "assumptions", x->arch->assumption);
}

static json_t *summary_json(const kb_est_rows *rows)
{
    kb_est_family_sum *s;
    int n = kb_est_summarise(rows, &s);
    json_t *a = json_array();
    for (int i = 0; i < n; i++)
        json_array_append_new(a, json_pack("{sb ss si so so ss so}", "estimate", 1, "family",
                                           kb_families[s[i].family]->name, "cases", s[i].cases, "total_est_us",
                                           num(s[i].total_us), "median_pct_roofline", num(s[i].median_pct),
                                           "dominant_limit", kb_est_roof_name(s[i].dominant), "dominant_share_pct",
                                           num(s[i].dominant_share)));
    free(s);
    return n < 0 ? NULL : a;
}

static kb_status write_json(const kb_est_rows *rows, const kb_est_report_opts *o, FILE *out)
{
    size_t *idx;
    int n = kb_est_select(rows, o, &idx);
    json_t *list = json_array(), *skipped = json_array(), *sum = summary_json(rows);
    for (int i = 0; i < n; i++)
        json_array_append_new(list, kb_est_row_json(&rows->rows[idx[i]]));
    for (size_t i = 0; i < rows->n; i++)
        if (rows->rows[i].status != KB_EST_ROW_OK)
            json_array_append_new(skipped,
                                  json_pack("{ss ss ss}", "case_id", rows->rows[i].id, "status",
                                            kb_est_row_status_name(rows->rows[i].status), "why", rows->rows[i].why));
    json_t *doc = json_pack("{sb ss so ss si so so so}", "estimate", 1, "note",
                            "static model (docs/estimate.md): ESTIMATES, never measurements", "target", target_json(o),
                            "sort", kb_est_sort_names[o->sort], "top", o->top, "rows", list, "not_estimated", skipped,
                            "summary", sum ? sum : json_null());
    free(idx);
    if (n < 0 || !doc)
        return KB_ERR_OOM;
    int rc = json_dumpf(doc, out, JSON_INDENT(1));
    json_decref(doc);
    fputc('\n', out);
    return rc == 0 ? KB_OK : KB_ERR_IO;
}

kb_status kb_est_report(const kb_est_rows *rows, const kb_est_report_opts *o, FILE *out)
{
    kb_status st = o->format == KB_EST_JSON  ? write_json(rows, o, out)
                   : o->format == KB_EST_CSV ? kb_est_write_csv(rows, o, out)
                                             : kb_est_write_text(rows, o, out);
    if (st == KB_OK && (fflush(out) != 0 || ferror(out)))
        st = KB_ERR_IO;
    return st;
}
