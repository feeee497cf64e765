/* compile.c - `kbench compile SUITE --arch sm_XX`: JIT every distinct module of a suite
 * with NVRTC for one architecture, offline (no driver or GPU needed), through the same
 * compile cache as `kbench run`, and show each case's kernel resources as the build log
 * reports them: registers, spills, stack, static shared memory (see compile.h); beside
 * them `kbench estimate`'s time and limiting roof on the architecture's reference GPU,
 * labelled as the estimate it is. */
#include "cli/compile.h"

#include "engine/defines.h"
#include "engine/modules.h"
#include "engine/setup.h"
#include "estimate/estimate.h"
#include "suite/walk.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const kb_run_opts *o;
    const kb_backend *be;          /* the cuda backend: its build is NVRTC alone */
    kb_modules *mods;
    int sm;
    int n_err, n_spill, n_skip, n_ok;
    kb_sb defs;
    kb_est_target est;             /* the reference GPU of sm; est.gpu NULL: no estimate columns */
    kb_peaks peaks;
} compile_ctx;

/* The estimate columns of one case: "-" when the arch has no reference GPU or no model. */
static void print_estimate(const compile_ctx *x, const kb_family *f, const kb_case *c, const kb_resources *r)
{
    kb_estimate e;
    char why[256];
    if (x->est.gpu && kb_estimate_built(f, c, x->sm, r, &x->est, &e, why, sizeof why) == 0)
        printf(" %11.2f %-9s\n", e.est_us, kb_est_roof_name(e.limit));
    else
        printf(" %11s %-9s\n", "-", "-");
}

/* The architecture's reference GPU for the estimate columns, when its tables load. */
static void open_estimate(compile_ctx *x)
{
    const kb_est_gpu *g = kb_est_gpu_reference(x->sm);
    kb_sb err;
    kb_sb_init(&err);
    if (g && kb_est_gpu_peaks(g, NULL, &x->peaks, &err) == KB_OK) {
        kb_est_target_init(&x->est, g, &x->peaks);
        printf("estimate_us, est_limit: an ESTIMATE on %s at full shape (static model, not a measurement; "
               "kbench estimate shows every roof)\n", g->name);
    } else {
        fprintf(stderr, "kbench: no estimate columns: %s\n", g ? err.s : "the model has no reference GPU for this arch");
    }
    kb_sb_free(&err);
}

static int compile_case(void *user, const kb_walk_item *it)
{
    compile_ctx *x = user;
    int quiet = x->o->quiet;
    if (!it->valid) {
        x->n_skip++;
        if (!quiet)
            printf("%-72s %-13s %s\n", it->id, "skipped", it->why);
        return 0;
    }
    const kb_family *f = kb_families[it->c->family];
    if (!f->variants[it->c->variant].entry) {   /* a vendor library call: no kernel of kbench's */
        x->n_skip++;
        if (!quiet)
            printf("%-72s %-13s %s\n", it->id, "skipped", "a vendor library call: nothing to compile");
        return 0;
    }
    kb_case_defines(f, it->c, &x->defs);
    const kb_module_ref *b = kb_modules_get(x->mods, f->source, x->defs.s, x->sm);
    if (b->status != KB_OK) {
        x->n_err++;
        printf("%-72s %-13s\n%s\n", it->id, "compile_error", b->log);
        return 0;
    }
    kb_resources r;
    const char *entry = f->variants[it->c->variant].entry;
    if (x->be->build_resources(b->log, entry, &r) != 0) {
        x->n_err++;
        printf("%-72s %-13s no resource report for entry %s\n", it->id, "compile_error", entry);
        return 0;
    }
    int spills = r.spill_store_bytes > 0 || r.spill_load_bytes > 0;
    x->n_spill += spills;
    x->n_ok++;
    if (!quiet || spills) {
        printf("%-72s %-13s %5d %7d %7d %6d %8d", it->id, spills ? "spills" : "ok", r.registers,
               r.spill_store_bytes, r.spill_load_bytes, r.stack_bytes, r.static_shmem_bytes);
        print_estimate(x, f, it->c, &r);
    }
    return 0;
}

int kb_cmd_compile(const kb_run_opts *o, int fail_on_spill)
{
    compile_ctx x;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.be = &kb_backend_cuda;
    x.sm = o->sm_override ? o->sm_override : 90;
    kb_plan plan;
    kb_sb err;
    kb_sb_init(&err);
    if (kb_setup_check(o->cache_dir, &err) != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
        kb_sb_free(&err);
        return KB_EXIT_SETUP;
    }
    /* the full shapes: resources do not depend on them, validity may */
    kb_status st = kb_walk_plan(o->suite_path, x.be->caps, 1, &plan, &err);
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
        kb_sb_free(&err);
        return st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
    }
    kb_sb_free(&err);
    kb_sb_init(&x.defs);
    x.mods = kb_modules_new_build_only(x.be, NULL, o->cache_dir, kb_kernels_dir());
    kb_walk_opts wo = { o->filters, o->n_filters, NULL, { x.sm, 0, kb_arch_max_shmem_optin(x.sm) } };
    open_estimate(&x);
    printf("%-72s %-13s %5s %7s %7s %6s %8s %11s %-9s\n", "case", "status", "regs", "spill_st", "spill_ld", "stack",
           "smem_B", "estimate_us", "est_limit");
    kb_walk_counts n;
    int jobs = kb_modules_start(x.mods, kb_run_jobs(o, x.be->caps, 0));
    int rc = kb_walk_prefetch(&plan, &wo, x.mods, x.sm);
    if (rc == 0)
        rc = kb_walk(&plan, &wo, compile_case, &x, &n);
    fprintf(stderr,
            "kbench compile: sm_%d: %d cases compiled (%d modules, %d worker%s), %d with spills, %d failed, %d skipped\n",
            x.sm, x.n_ok, kb_modules_count(x.mods), jobs ? jobs : 1, jobs > 1 ? "s" : "", x.n_spill, x.n_err, x.n_skip);
    kb_modules_free(x.mods);
    kb_plan_free(&plan);
    kb_sb_free(&x.defs);
    if (rc < 0)
        return KB_EXIT_SETUP;
    if (o->n_filters > 0 && n.visited == 0) {
        fprintf(stderr, "kbench: --filter matches none of the suite's cases\n");
        return KB_EXIT_INPUT;
    }
    if (x.n_err)
        return KB_EXIT_WRONG;
    return fail_on_spill && x.n_spill ? KB_EXIT_WRONG : KB_EXIT_OK;
}

static const kb_opt compile_opts[] = {
    KB_ROW_ARCH, KB_ROW_FILTER, KB_ROW_CACHE_DIR, KB_ROW_JOBS,
    { "--fail-on-spill", NULL, KB_OPT_FLAG, offsetof(kb_run_opts, fail_on_spill), NULL,
      "exit 1 when any case spills registers", 0, 0, 0, NULL, 0 },
    KB_ROW_QUIET,
};

static int compile_main(void *o) { return kb_cmd_compile(o, ((kb_run_opts *)o)->fail_on_spill); }

const kb_command kb_command_compile = {
    "compile", "SUITE", 1, 1, offsetof(kb_run_opts, suite_path),
    "JIT every module of SUITE with NVRTC for --arch, offline, and show registers, spills and shared memory",
    "  needs no GPU or driver; exits 1 when a module fails to compile, or with --fail-on-spill when any\n"
    "  case spills\n",
    compile_opts, (int)(sizeof compile_opts / sizeof compile_opts[0]), sizeof(kb_run_opts), kb_run_opts_defaults,
    compile_main,
};
