/* estimate.c - `kbench estimate` (see estimate.h): its options; the command itself is
 * harness/estimate/est_cmd.h (the walk, the model, the output formats). */
#include "cli/estimate.h"

#include "core/arch.h"
#include "estimate/est_cmd.h"
#include "estimate/est_report.h"
#include "estimate/gpu.h"

#include <stdio.h>

int kb_cmd_estimate(const kb_estimate_opts *o)
{
    kb_est_cmd c = { o->run.suite_path, o->gpu, o->run.sm_override, (const char *const *)o->run.filters,
                     o->run.n_filters, o->run.cache_dir, o->run.jobs, o->peaks_path,
                     o->db_path, o->format, o->sort, o->top, o->run.quiet };
    kb_est_summary sum;
    kb_sb err;
    kb_sb_init(&err);
    int rc = kb_est_command(&c, stdout, &sum, &err);
    if (err.s[0])
        fprintf(stderr, "kbench estimate: %s\n", err.s);
    else if (rc == KB_EXIT_OK || rc == KB_EXIT_WRONG)
        fprintf(stderr,
                "kbench estimate: %s, %s: %zu cases estimated (static model, not measurements), %zu failed to compile, "
                "%zu skipped or not modelled\n",
                o->gpu, kb_arch_name(sum.sm), sum.estimated, sum.compile_errors, sum.not_estimated);
    kb_sb_free(&err);
    return rc;
}

static const kb_opt estimate_opts[] = {
    { "--gpu", NULL, KB_OPT_CHOICE, offsetof(kb_estimate_opts, gpu), "NAME",
      "the GPU modelled: h100-sxm, h100-pcie, h200-sxm, a100-sxm, a100-pcie, l40s, l4, rtx4090, b200, "
      "gb200, rtx5090, rtx-pro-6000 (b300: refused, its SM count is unpublished)", 0, 0, 0,
      kb_est_gpu_names, 0 },
    KB_ROW_ARCH, KB_ROW_FILTER, KB_ROW_CACHE_DIR, KB_ROW_JOBS,
    { "--peaks", NULL, KB_OPT_IN, offsetof(kb_estimate_opts, peaks_path), "FILE",
      "datasheet peaks (default $KBENCH_PEAKS, else data/peaks.json)", 0, 0, 0, NULL, 0 },
    { "--format", "-f", KB_OPT_CHOICE, offsetof(kb_estimate_opts, format), "text|json|csv",
      "output format (default text: aligned columns; every row and field says ESTIMATE)", 0, 0, 0,
      kb_est_format_names, 0 },
    { "--top", NULL, KB_OPT_INT, offsetof(kb_estimate_opts, top), "N",
      "only the N first rows by --sort (default order with --top: time, the N slowest)", 1, 1000000, 0, NULL, 0 },
    { "--sort", NULL, KB_OPT_CHOICE, offsetof(kb_estimate_opts, sort), "plan|time|roof",
      "row order: plan (default), time (slowest first), roof (lowest % of roofline first)", 0, 0, 0,
      kb_est_sort_names, 0 },
    { "--db", NULL, KB_OPT_IN, offsetof(kb_estimate_opts, db_path), "PATH",
      "results store whose measured ceilings of the same GPU model replace the assumed DRAM fraction and launch "
      "cost (default $KBENCH_DB, else results/kbench.db)", 0, 0, 0, NULL, 0 },
    KB_ROW_QUIET,
};

static int estimate_main(void *o) { return kb_cmd_estimate(o); }

const kb_command kb_command_estimate = {
    "estimate", "SUITE", 1, 1, offsetof(kb_estimate_opts, run.suite_path),
    "static performance ESTIMATE of every case of SUITE on --gpu NAME (offline; not a measurement)",
    "  each case at its full shape, compiled with NVRTC for --arch (default: the GPU's); occupancy from its\n"
    "  registers and shared memory, time at each roof (tensor, simt, sfu, cvt, issue, smem, l2, dram, latency),\n"
    "  the estimate = the largest, its limiting roof and % of the datasheet roofline, then a summary per family.\n"
    "  docs/estimate.md has the equations, parameters and assumptions. Exit 1 when a case fails to compile.\n",
    estimate_opts, (int)(sizeof estimate_opts / sizeof estimate_opts[0]), sizeof(kb_estimate_opts),
    kb_run_opts_defaults, estimate_main,
};
