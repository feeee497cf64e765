/* estimate.c - `kbench estimate` (see estimate.h): the plan walk of `kbench compile` at
 * full shapes, each case compiled offline with NVRTC for the target architecture, its
 * ptxas resources handed to the static model, one row per case, every row an estimate. */
#include "cli/estimate.h"

#include "engine/defines.h"
#include "engine/modules.h"
#include "engine/setup.h"
#include "estimate/estimate.h"
#include "suite/walk.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const kb_estimate_opts *o;
    const kb_backend *be;          /* the cuda backend: its build is NVRTC alone */
    kb_modules *mods;
    int sm;
    kb_est_target x;
    int n_ok, n_err, n_skip;
    kb_sb defs;
} est_ctx;

static void print_header(const est_ctx *x)
{
    const kb_est_gpu *g = x->x.gpu;
    char clock[80] = "(clock unpublished: issue, smem and l2 roofs left out)";
    if (g->boost_mhz > 0)
        snprintf(clock, sizeof clock, "at %.0f MHz", g->boost_mhz);
    printf("estimate: static model, NOT a measurement (docs/estimate.md). GPU %s = %s, %s, %d SMs %s,"
           " %.0f GB/s DRAM (datasheet), compiled for %s\n",
           g->name, x->x.peaks->sku, kb_arch_name(g->sm), g->sms, clock, kb_peaks_gbps(x->x.peaks, NULL),
           kb_arch_name(x->sm));
    printf("estimate: assumptions: %s\n", x->x.arch->assumption);
    printf("%-8s %-72s %-8s %10s %6s %4s %-9s %6s %5s %9s %9s %9s %9s %9s %9s %9s\n", "estimate", "case", "limit",
           "est_us", "%roof", "occ", "occ_limit", "waves", "sm%", "tensor_us", "simt_us", "issue_us", "smem_us",
           "l2_us", "dram_us", "lat_us");
}

static void print_row(const char *id, const kb_estimate *e)
{
    printf("%-8s %-72s %-8s %10.2f %6.1f %4d %-9s %6.2f %5.1f", "estimate", id, kb_est_roof_name(e->limit), e->est_us,
           e->pct_roofline, e->occ.blocks, e->occ.limit, e->waves, 100.0 * e->sm_use);
    for (int r = 0; r < KB_ROOF_COUNT; r++)
        printf(" %9.2f", e->roof_us[r]);
    printf("%s\n", e->modelled ? "" : "  (work model only: no traffic hook)");
}

static void print_skip(est_ctx *x, const char *id, const char *status, const char *why)
{
    x->n_skip++;
    if (!x->o->run.quiet)
        printf("%-8s %-72s %-8s %s\n", "estimate", id, status, why);
}

static int estimate_case(void *user, const kb_walk_item *it)
{
    est_ctx *x = user;
    if (!it->valid) {
        print_skip(x, it->id, "skipped", it->why);
        return 0;
    }
    const kb_family *f = kb_families[it->c->family];
    const char *entry = f->variants[it->c->variant].entry;
    if (!entry) {
        print_skip(x, it->id, "skipped", "a vendor library call: no model of its kernels");
        return 0;
    }
    kb_case_defines(f, it->c, &x->defs);
    const kb_module_ref *b = kb_modules_get(x->mods, f->source, x->defs.s, x->sm);
    kb_resources r;
    if (b->status != KB_OK || x->be->build_resources(b->log, entry, &r) != 0) {
        x->n_err++;
        printf("%-8s %-72s %-8s %s\n", "estimate", it->id, "compile_error",
               b->status != KB_OK ? "no estimate (kbench compile shows the log)" : "no resource report for its entry");
        return 0;
    }
    kb_estimate e;
    char why[256];
    if (kb_estimate_built(f, it->c, x->sm, &r, &x->x, &e, why, sizeof why) != 0) {
        print_skip(x, it->id, "no_model", why);
        return 0;
    }
    x->n_ok++;
    if (!x->o->run.quiet)
        print_row(it->id, &e);
    return 0;
}

/* The target's tables; a process exit code, 0 when ready. */
static int target_of(const kb_estimate_opts *o, est_ctx *x, kb_peaks *peaks)
{
    x->x.gpu = kb_est_gpu_find(o->gpu);
    if (!x->x.gpu)
        return kb_opts_fail(&kb_command_estimate, "--gpu", "is required (one of: h100-sxm, a100-sxm, ...)");
    if (x->x.gpu->sms <= 0) {
        fprintf(stderr, "kbench estimate: --gpu %s: %s: the model needs the SM count\n", x->x.gpu->name,
                x->x.gpu->source);
        return KB_EXIT_INPUT;
    }
    x->sm = o->run.sm_override ? o->run.sm_override : x->x.gpu->sm;
    x->x.arch = kb_est_arch_find(x->x.gpu->sm);
    char why[512];
    if (!kb_arch_runs_on(x->sm, x->x.gpu->sm, why, sizeof why))   /* sm_90a on an H100, never on a B200 */
        return kb_opts_fail(&kb_command_estimate, "--arch", "%s on %s: %s", kb_arch_name(x->sm), x->x.gpu->name, why);
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_est_gpu_peaks(x->x.gpu, o->peaks_path, peaks, &err);
    if (st == KB_OK)
        st = kb_setup_check(o->run.cache_dir, &err);
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", err.s);
    kb_sb_free(&err);
    x->x.peaks = peaks;
    return st == KB_OK ? 0 : st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
}

int kb_cmd_estimate(const kb_estimate_opts *o)
{
    est_ctx x;
    kb_peaks peaks;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.be = &kb_backend_cuda;
    int rc = target_of(o, &x, &peaks);
    if (rc)
        return rc;
    kb_plan plan;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_walk_plan(o->run.suite_path, x.be->caps, 1, &plan, &err);   /* full shapes */
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
        kb_sb_free(&err);
        return st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
    }
    kb_sb_free(&err);
    kb_sb_init(&x.defs);
    x.mods = kb_modules_new_build_only(x.be, NULL, o->run.cache_dir, kb_kernels_dir());
    kb_walk_opts wo = { o->run.filters, o->run.n_filters, NULL, { x.sm, 0, kb_arch_max_shmem_optin(x.sm) } };
    print_header(&x);
    kb_walk_counts n;
    kb_modules_start(x.mods, kb_run_jobs(&o->run, x.be->caps, 0));
    rc = kb_walk_prefetch(&plan, &wo, x.mods, x.sm);
    if (rc == 0)
        rc = kb_walk(&plan, &wo, estimate_case, &x, &n);
    fflush(stdout);
    fprintf(stderr, "kbench estimate: %s, %s: %d cases estimated (static model, not measurements), %d failed to "
            "compile, %d skipped\n", x.x.gpu->name, kb_arch_name(x.sm), x.n_ok, x.n_err, x.n_skip);
    kb_modules_free(x.mods);
    kb_plan_free(&plan);
    kb_sb_free(&x.defs);
    if (rc < 0)
        return KB_EXIT_SETUP;
    if (o->run.n_filters > 0 && n.visited == 0) {
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
