/* est_cmd.c - `kbench estimate` as one call (est_cmd.h). */
#include "estimate/est_cmd.h"

#include "core/arch.h"
#include "engine/setup.h"
#include "estimate/est_report.h"
#include "estimate/est_store.h"
#include "results/store.h"

#include "core/suggest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kb_status kb_est_setup_target(const char *gpu, const char *peaks_path, const char *db_path, kb_est_setup *s, kb_sb *err)
{
    memset(s, 0, sizeof *s);
    const kb_est_gpu *g = kb_est_gpu_find(gpu);
    if (!g) {
        const char *close = kb_suggest(gpu, kb_est_gpu_names, -1);
        kb_sb_printf(err, "--gpu: unknown GPU '%s'", gpu ? gpu : "");
        if (close)
            kb_sb_printf(err, " - did you mean '%s'?", close);
        kb_sb_printf(err, " (one of:");
        for (int i = 0; kb_est_gpu_names[i]; i++)
            kb_sb_printf(err, " %s", kb_est_gpu_names[i]);
        kb_sb_printf(err, ")");
        return KB_ERR_INPUT;
    }
    if (g->sms <= 0) {   /* every roof is per SM or shared over them: no SM count, no model */
        kb_sb_printf(err, "--gpu %s: %s: the model needs the SM count", g->name, g->source);
        return KB_ERR_INPUT;
    }
    kb_status st = kb_est_gpu_peaks(g, peaks_path, &s->peaks, err);
    if (st != KB_OK)
        return st;
    if ((st = kb_est_store_check(db_path, err)) != KB_OK)
        return st;   /* a store that is there but cannot be read is said, not ignored */
    kb_est_store_ceilings(db_path, peaks_path, &s->peaks, s->ceilings_note, sizeof s->ceilings_note);
    kb_est_target_init(&s->x, g, &s->peaks);
    return KB_OK;
}

static int exit_of(kb_status st)
{
    return st == KB_OK ? KB_EXIT_OK : st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
}

/* The report options of o; 0, or KB_EXIT_INPUT with the message in err. */
static int report_opts(const kb_est_cmd *o, const kb_est_setup *s, int sm, kb_est_report_opts *r, kb_sb *err)
{
    int f = o->format ? kb_est_name_index(kb_est_format_names, o->format) : KB_EST_TEXT;
    int k = o->sort ? kb_est_name_index(kb_est_sort_names, o->sort) : KB_EST_SORT_PLAN;
    if (f < 0 || k < 0 || o->top < 0) {
        kb_sb_printf(err, "%s '%s' is not one of %s",
                     f < 0   ? "--format"
                     : k < 0 ? "--sort"
                             : "--top",
                     f < 0   ? o->format
                     : k < 0 ? o->sort
                             : "a negative count",
                     f < 0   ? "text, json, csv"
                     : k < 0 ? "plan, time, roof"
                             : "N >= 0");
        return KB_EXIT_INPUT;
    }
    *r = (kb_est_report_opts){ &s->x, sm, s->ceilings_note, (kb_est_format)f, (kb_est_sort)k, o->top, o->quiet };
    return 0;
}

/* --arch must be one whose CUBIN loads on the GPU modelled (sm_90a on an H100, never on a
 * B200: core/arch.h). 0, or KB_EXIT_INPUT with the reason in err. */
static int check_arch(int sm, const kb_est_gpu *g, kb_sb *err)
{
    char why[512];
    if (kb_arch_runs_on(sm, g->sm, why, sizeof why))
        return 0;
    kb_sb_printf(err, "--arch %s on %s: %s", kb_arch_name(sm), g->name, why);
    return KB_EXIT_INPUT;
}

int kb_est_command(const kb_est_cmd *o, FILE *out, kb_est_summary *sum, kb_sb *err)
{
    kb_est_setup s;
    kb_est_report_opts ro;
    memset(sum, 0, sizeof *sum);
    if (!o->gpu) {
        kb_sb_printf(err, "--gpu is required (one of: h100-sxm, a100-sxm, ...; kbench estimate -h)");
        return KB_EXIT_INPUT;
    }
    const char *env = getenv("KBENCH_DB"), *db = o->db_path ? o->db_path : env && *env ? env : KB_STORE_DEFAULT_PATH;
    kb_status st = kb_est_setup_target(o->gpu, o->peaks_path, db, &s, err);
    if (st == KB_OK)
        st = kb_setup_check(o->cache_dir, err);
    int sm = o->sm_override ? o->sm_override : s.x.gpu ? s.x.gpu->sm : 0;
    int rc = st != KB_OK ? exit_of(st) : check_arch(sm, s.x.gpu, err);
    if (rc == 0)
        rc = report_opts(o, &s, sm, &ro, err);
    kb_est_rows rows = { 0 };
    int64_t n_selected = 0;
    if (rc == 0) {
        kb_est_suite_opts so = { o->suite_path, o->filters, o->n_filters, o->cache_dir, o->jobs, sm, &s.x };
        st = kb_est_suite(&so, &rows, &n_selected, err);
        rc = st == KB_OK ? 0 : st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT; /* the suite's errors: input */
    }
    if (rc == 0 && o->n_filters > 0 && n_selected == 0) {
        for (int i = 0; i < o->n_filters; i++)   /* echoed: --filter 'a' (or 'b') */
            kb_sb_printf(err, i == 0 ? "--filter '%s'" : i == 1 ? " (or '%s'" : ", '%s'", o->filters[i]);
        kb_sb_printf(err, "%s matches none of the suite's cases", o->n_filters > 1 ? ")" : "");
        rc = KB_EXIT_INPUT;
    }
    if (rc == 0 && kb_est_report(&rows, &ro, out) != KB_OK) {
        kb_sb_printf(err, "cannot write the estimates");
        rc = KB_EXIT_SETUP;
    }
    *sum = (kb_est_summary){ sm, kb_est_rows_count(&rows, KB_EST_ROW_OK), kb_est_rows_count(&rows, KB_EST_ROW_COMPILE_ERROR),
                             kb_est_rows_count(&rows, KB_EST_ROW_SKIPPED) + kb_est_rows_count(&rows, KB_EST_ROW_NO_MODEL) };
    if (rc == 0 && sum->compile_errors)
        rc = KB_EXIT_WRONG;
    kb_est_rows_free(&rows);
    return rc;
}
