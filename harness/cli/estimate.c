/* estimate.c - `kbench estimate` (see estimate.h): the plan walk of `kbench compile` at
 * full shapes, each case compiled offline with NVRTC for the target architecture, its
 * ptxas resources handed to the static model, one row per case, every row an estimate. */
#include "cli/estimate.h"

#include "estimate/estimate.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const kb_estimate_opts *o;
    kb_session *s;                 /* offline, building with the cuda backend (NVRTC alone) */
    int sm;
    kb_est_target x;
    int n_ok, n_err, n_skip;
} est_ctx;

static void print_header(const est_ctx *x)
{
    const kb_est_target *t = &x->x;
    const kb_est_gpu *g = t->gpu;
    double eff;
    int cal = kb_est_tensor_efficiency(g->sm, KB_TENSOR_MMA_SYNC, &eff, NULL);
    printf("estimate: static model, NOT a measurement (docs/estimate.md). GPU %s = %s, sm_%d, %d SMs, compiled for"
           " sm_%d\n", g->name, t->peaks->sku, g->sm, g->sms, x->sm);
    printf("estimate: model clock %.0f MHz (every on-chip roof); DRAM %.0f GB/s achievable (%s; datasheet %.0f);"
           " launch %.1f us eager, %.1f us graph (%s); mma.sync at %.2f of the dense peak (%s)\n",
           t->clock_mhz, t->dram_gbps, t->dram_source, kb_peaks_gbps(t->peaks, NULL), t->launch_us[0],
           t->launch_us[1], t->launch_source, eff, cal == 1 ? "calibrated table" : "uncalibrated: datasheet rate");
    printf("estimate: assumptions: %s\n", t->arch->assumption);
    printf("%-8s %-72s %-8s %10s %6s %4s %-9s %6s %5s", "estimate", "case", "limit", "est_us", "%roof", "occ",
           "occ_limit", "waves", "sm%");
    for (int r = 0; r < KB_ROOF_COUNT; r++) {
        char col[24];
        snprintf(col, sizeof col, "%s_us", kb_est_roof_name((kb_est_roof)r));
        printf(" %9s", col);
    }
    printf("\n");
}

static void print_row(const char *id, const kb_estimate *e)
{
    printf("%-8s %-72s %-8s %10.2f %6.1f %4d %-9s %6.2f %5.1f", "estimate", id, kb_est_roof_name(e->limit), e->est_us,
           e->pct_roofline, e->occ.blocks, e->occ.limit, e->waves, 100.0 * e->sm_use / e->imbalance);
    for (int r = 0; r < KB_ROOF_COUNT; r++)
        printf(" %9.2f", e->roof_us[r]);
    printf("%s%s\n", e->modelled ? "" : "  (work model only: no traffic hook)",
           e->roof_us[KB_ROOF_TENSOR] > 0 && !e->tensor_calibrated ? "  (tensor path uncalibrated)" : "");
}

static void print_skip(est_ctx *x, const char *id, const char *status, const char *why)
{
    x->n_skip++;
    if (!x->o->run.quiet)
        printf("%-8s %-72s %-8s %s\n", "estimate", id, status, why);
}

static void estimate_case(est_ctx *x, const kb_cases_item *k)
{
    const kb_walk_item *it = &k->it;
    if (!it->valid) {
        print_skip(x, it->id, "skipped", it->why);
        return;
    }
    kb_built b;
    kb_session_build(x->s, k, &b);
    if (b.status == KB_BUILT_VENDOR) {
        print_skip(x, it->id, "skipped", "a vendor library call: no model of its kernels");
        return;
    }
    if (b.status != KB_BUILT) {
        x->n_err++;
        printf("%-8s %-72s %-8s %s\n", "estimate", it->id, "compile_error",
               b.status == KB_BUILT_FAILED ? "no estimate (kbench compile shows the log)"
                                           : "no resource report for its entry");
        return;
    }
    kb_estimate e;
    char why[256];
    if (kb_estimate_built(k->f, it->c, x->sm, &b.res, &x->x, &e, why, sizeof why) != 0) {
        print_skip(x, it->id, "no_model", why);
        return;
    }
    x->n_ok++;
    if (!x->o->run.quiet)
        print_row(it->id, &e);
}

/* The target's tables; a process exit code, 0 when ready. */
static int target_of(const kb_estimate_opts *o, est_ctx *x, kb_peaks *peaks)
{
    x->x.gpu = kb_est_gpu_find(o->gpu);
    if (!x->x.gpu)
        return kb_opts_fail(&kb_command_estimate, "--gpu", "is required (one of: h100-sxm, a100-sxm, ...)");
    x->sm = o->run.sm_override ? o->run.sm_override : x->x.gpu->sm;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_est_gpu_peaks(x->x.gpu, o->peaks_path, peaks, &err);
    /* offline: NVRTC for the arch, the suite at its full shapes */
    kb_session_opts so = { .backend = "cuda", .offline = 1, .build = 1, .full_shapes = 1,
                           .suite_path = o->run.suite_path, .jobs = o->run.jobs };
    so.bo.cache_dir = o->run.cache_dir;
    so.bo.sm_override = x->sm;
    if (st == KB_OK && (st = kb_session_open(&so, &x->s, &err)) == KB_OK)
        st = kb_session_check_setup(x->s, &err);
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", err.s);
    kb_sb_free(&err);
    kb_est_target_init(&x->x, x->x.gpu, peaks);
    return st == KB_OK ? 0 : st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
}

/* The suite planned and walked once. An exit code, or -1 to go on. */
static int plan_of(const kb_estimate_opts *o, est_ctx *x)
{
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_session_plan(x->s, &err);
    if (st == KB_OK && kb_session_select(x->s, o->run.filters, o->run.n_filters) != KB_OK) {
        kb_sb_printf(&err, "out of memory walking the plan of %s", o->run.suite_path);
        st = KB_ERR_SETUP;
    }
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", err.s);
    kb_sb_free(&err);
    return st == KB_OK ? -1 : st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
}

int kb_cmd_estimate(const kb_estimate_opts *o)
{
    est_ctx x;
    kb_peaks peaks;
    memset(&x, 0, sizeof x);
    x.o = o;
    int rc = target_of(o, &x, &peaks);
    if (rc == 0)
        rc = plan_of(o, &x);
    if (rc >= 0) {
        kb_session_close(x.s);
        return rc;
    }
    print_header(&x);
    kb_session_start(x.s);
    const kb_cases *l = kb_session_cases(x.s);
    for (int64_t i = 0; i < l->n; i++)
        kb_session_prefetch(x.s, &l->items[i]);
    for (int64_t i = 0; i < l->n; i++)
        estimate_case(&x, &l->items[i]);
    fflush(stdout);
    fprintf(stderr, "kbench estimate: %s, sm_%d: %d cases estimated (static model, not measurements), %d failed to "
            "compile, %d skipped\n", x.x.gpu->name, x.sm, x.n_ok, x.n_err, x.n_skip);
    int64_t selected = l->n;
    kb_session_close(x.s);
    if (o->run.n_filters > 0 && selected == 0) {
        fprintf(stderr, "kbench: --filter matches none of the suite's cases\n");
        return KB_EXIT_INPUT;
    }
    return x.n_err ? KB_EXIT_WRONG : KB_EXIT_OK;
}

static const kb_opt estimate_opts[] = {
    { "--gpu", NULL, KB_OPT_CHOICE, offsetof(kb_estimate_opts, gpu), "NAME",
      "the GPU modelled: h100-sxm, h100-pcie, h200-sxm, a100-sxm, a100-pcie, l40s, l4, rtx4090", 0, 0, 0,
      kb_est_gpu_names, 0 },
    KB_ROW_ARCH, KB_ROW_FILTER, KB_ROW_CACHE_DIR, KB_ROW_JOBS,
    { "--peaks", NULL, KB_OPT_STR, offsetof(kb_estimate_opts, peaks_path), "FILE",
      "datasheet peaks (default $KBENCH_PEAKS, else data/peaks.json)", 0, 0, 0, NULL, 0 },
    KB_ROW_QUIET,
};

static int estimate_main(void *o) { return kb_cmd_estimate(o); }

const kb_command kb_command_estimate = {
    "estimate", "SUITE", 1, 1, offsetof(kb_estimate_opts, run.suite_path),
    "static performance ESTIMATE of every case of SUITE on --gpu NAME (offline; not a measurement)",
    "  each case at its full shape, compiled with NVRTC for --arch (default: the GPU's); occupancy from its\n"
    "  registers and shared memory, time at each roof (tensor, simt, issue, smem, l2, dram, latency), the\n"
    "  estimate = the largest, its limiting roof and % of the datasheet roofline. docs/estimate.md has the\n"
    "  equations, parameters and assumptions. Exit 1 when a case fails to compile.\n",
    estimate_opts, (int)(sizeof estimate_opts / sizeof estimate_opts[0]), sizeof(kb_estimate_opts),
    kb_run_opts_defaults, estimate_main,
};
