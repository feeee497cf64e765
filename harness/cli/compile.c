/* compile.c - `kbench compile SUITE --arch ARCH`: JIT every distinct module of a suite
 * with NVRTC for one architecture of the table (core/arch.h), offline (no driver or GPU
 * needed), through the same compile cache as `kbench run`, and show each case's kernel
 * resources as the build log reports them: registers, spills, stack, static shared memory
 * (see compile.h); beside them `kbench estimate`'s time and limiting roof on the
 * architecture's reference GPU, labelled as the estimate it is. With --emit ptx|cubin
 * --out DIR, each module's PTX or CUBIN is also written into DIR (compile_emit.h). */
#include "cli/compile.h"

#include "backend/cuda/kb_nvrtc_lib.h"
#include "cli/compile_emit.h"
#include "engine/defines.h"
#include "engine/modules.h"
#include "engine/setup.h"
#include "estimate/estimate.h"
#include "suite/walk.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const kb_run_opts *o;
    const kb_backend *be;          /* the cuda backend (the PTX one with --emit ptx): its build is NVRTC alone */
    kb_modules *mods;
    int sm;
    int n_err, n_spill, n_skip, n_ok, n_emit_err;
    kb_sb defs, module;
    kb_est_target est;             /* the reference GPU of sm; est.gpu NULL: no estimate columns */
    kb_peaks peaks;
    kb_emit *emit;                 /* --emit, or NULL */
} compile_ctx;

/* The estimate columns of one case: "-" when the arch has no reference GPU or no model. */
static void print_estimate(const compile_ctx *x, const kb_family *f, const kb_case *c, const kb_resources *r)
{
    kb_estimate e;
    char why[256];
    if (x->est.gpu && kb_estimate_built(f, c, x->sm, r, &x->est, &e, why, sizeof why) == 0)
        printf(" %11.2f %-9s", e.est_us, kb_est_roof_name(e.limit));
    else
        printf(" %11s %-9s", "-", "-");
}

/* The architecture's reference GPU for the estimate columns, when its tables load. */
static void open_estimate(compile_ctx *x)
{
    const kb_est_gpu *g = kb_est_gpu_reference(x->sm);
    kb_sb err;
    kb_sb_init(&err);
    if (!g)
        kb_sb_printf(&err, "the model has no reference GPU for %s", kb_arch_name(x->sm));
    else if (g->sms <= 0)   /* the model needs the SM count */
        kb_sb_printf(&err, "%s: %s", g->name, g->source);
    if (!err.len && kb_est_gpu_peaks(g, NULL, &x->peaks, &err) == KB_OK) {
        x->est = (kb_est_target){ g, kb_est_arch_find(g->sm), &x->peaks };
        printf("estimate_us, est_limit: an ESTIMATE on %s at full shape (static model, not a measurement; "
               "kbench estimate shows every roof)\n", g->name);
    } else {
        fprintf(stderr, "kbench: no estimate columns: %s\n", err.s);
    }
    kb_sb_free(&err);
}

/* The module identity of case c for --emit: its source and defines (the arch is the run's). */
static const char *module_of(compile_ctx *x, const kb_family *f, const kb_case *c)
{
    kb_case_defines(f, c, &x->defs);
    kb_sb_clear(&x->module);
    kb_sb_printf(&x->module, "%s\n%s", f->source, x->defs.s);
    return x->module.s;
}

/* --emit: the module's file in DIR after the row ("" without --emit). */
static void print_emitted(compile_ctx *x, const kb_module_ref *b)
{
    if (!x->emit) {
        printf("\n");
        return;
    }
    char why[512];
    const char *file = kb_emit_write(x->emit, x->module.s, b->artifact, why, sizeof why);
    if (!file) {
        x->n_emit_err++;
        fprintf(stderr, "kbench compile: --emit: %s\n", why);
    }
    printf(" %s\n", file ? file : "-");
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
    module_of(x, f, it->c);
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
    if (!quiet || spills || x->emit) {
        printf("%-72s %-13s %5d %7d %7d %6d %8d", it->id, spills ? "spills" : "ok", r.registers,
               r.spill_store_bytes, r.spill_load_bytes, r.stack_bytes, r.static_shmem_bytes);
        print_estimate(x, f, it->c, &r);
        print_emitted(x, b);
    }
    return 0;
}

/* --emit's first walk: every case that compiles a module of kbench's, announced. */
static int plan_emit(void *user, const kb_walk_item *it)
{
    compile_ctx *x = user;
    const kb_family *f = kb_families[it->c->family];
    if (!it->valid || !f->variants[it->c->variant].entry)
        return 0;
    return kb_emit_plan(x->emit, it->id, module_of(x, f, it->c)) == 0 ? 0 : -1;
}

/* Checks made before anything compiles: the arch is one this NVRTC compiles for, --emit and
 * --out come together, DIR is usable and holds none of the names. -1 to go on, else an
 * exit code. */
static int check_first(compile_ctx *x, const kb_plan *plan, const kb_walk_opts *wo)
{
    const kb_run_opts *o = x->o;
    char why[768];
    int sup = kb_nvrtc_supports(x->sm, why, sizeof why);
    if (sup <= 0) {
        fprintf(stderr, "kbench compile: --arch %s: %s\n", kb_arch_name(x->sm), why);
        return sup == 0 ? KB_EXIT_INPUT : KB_EXIT_SETUP;
    }
    if (!o->emit != !o->out_path)
        return kb_opts_fail(&kb_command_compile, o->emit ? "--emit" : "--out", "--emit ptx|cubin and --out DIR "
                            "come together");
    if (!o->emit)
        return -1;
    int rc = kb_emit_open(o->out_path, o->emit, &x->emit);
    if (rc >= 0)
        return rc;
    if (kb_walk(plan, wo, plan_emit, x, NULL) != 0) {
        fprintf(stderr, "kbench compile: out of memory\n");
        return KB_EXIT_SETUP;
    }
    return kb_emit_check(x->emit);
}

/* The summary line and the exit code. */
static int finish(compile_ctx *x, int rc, int jobs, const kb_walk_counts *n, int fail_on_spill)
{
    fprintf(stderr,
            "kbench compile: %s: %d cases compiled (%d modules, %d worker%s), %d with spills, %d failed, %d skipped\n",
            kb_arch_name(x->sm), x->n_ok, kb_modules_count(x->mods), jobs ? jobs : 1, jobs > 1 ? "s" : "",
            x->n_spill, x->n_err, x->n_skip);
    if (x->emit)
        fprintf(stderr, "kbench compile: %d %s file%s written into %s\n", kb_emit_count(x->emit), x->o->emit,
                kb_emit_count(x->emit) == 1 ? "" : "s", x->o->out_path);
    if (rc < 0)
        return KB_EXIT_SETUP;
    if (x->o->n_filters > 0 && n->visited == 0) {
        fprintf(stderr, "kbench: --filter matches none of the suite's cases\n");
        return KB_EXIT_INPUT;
    }
    if (x->n_err)
        return KB_EXIT_WRONG;
    if (x->n_emit_err)
        return KB_EXIT_SETUP;
    return fail_on_spill && x->n_spill ? KB_EXIT_WRONG : KB_EXIT_OK;
}

int kb_cmd_compile(const kb_run_opts *o, int fail_on_spill)
{
    compile_ctx x;
    memset(&x, 0, sizeof x);
    x.o = o;
    x.be = o->emit && !strcmp(o->emit, "ptx") ? &kb_backend_cuda_ptx : &kb_backend_cuda;
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
    kb_sb_init(&x.module);
    kb_walk_opts wo = { o->filters, o->n_filters, NULL, { x.sm, 0, kb_arch_max_shmem_optin(x.sm) } };
    kb_walk_counts n = { 0 };
    int jobs = 0, rc = check_first(&x, &plan, &wo);
    if (rc < 0) {
        x.mods = kb_modules_new_build_only(x.be, NULL, o->cache_dir, kb_kernels_dir());
        open_estimate(&x);
        printf("%-72s %-13s %5s %7s %7s %6s %8s %11s %-9s%s\n", "case", "status", "regs", "spill_st", "spill_ld",
               "stack", "smem_B", "estimate_us", "est_limit", x.emit ? " file" : "");
        jobs = kb_modules_start(x.mods, kb_run_jobs(o, x.be->caps, 0));
        rc = kb_walk_prefetch(&plan, &wo, x.mods, x.sm);
        if (rc == 0)
            rc = kb_walk(&plan, &wo, compile_case, &x, &n);
        rc = finish(&x, rc, jobs, &n, fail_on_spill);
        kb_modules_free(x.mods);
    }
    kb_emit_free(x.emit);
    kb_plan_free(&plan);
    kb_sb_free(&x.defs);
    kb_sb_free(&x.module);
    return rc;
}

static const char *const emit_choices[] = { "ptx", "cubin", NULL };

static const kb_opt compile_opts[] = {
    KB_ROW_ARCH, KB_ROW_FILTER, KB_ROW_CACHE_DIR, KB_ROW_JOBS,
    { "--fail-on-spill", NULL, KB_OPT_FLAG, offsetof(kb_run_opts, fail_on_spill), NULL,
      "exit 1 when any case spills registers", 0, 0, 0, NULL, 0 },
    { "--emit", NULL, KB_OPT_CHOICE, offsetof(kb_run_opts, emit), "ptx|cubin",
      "also write each module's PTX or CUBIN into --out DIR, named by case", 0, 0, 0, emit_choices, 0 },
    { "--out", NULL, KB_OPT_STR, offsetof(kb_run_opts, out_path), "DIR",
      "where --emit writes (made when missing; never overwrites a file)", 0, 0, 0, NULL, 0 },
    KB_ROW_QUIET,
};

static int compile_main(void *o) { return kb_cmd_compile(o, ((kb_run_opts *)o)->fail_on_spill); }

const kb_command kb_command_compile = {
    "compile", "SUITE", 1, 1, offsetof(kb_run_opts, suite_path),
    "JIT every module of SUITE with NVRTC for --arch, offline, and show registers, spills and shared memory",
    "  needs no GPU or driver; --arch takes an architecture the installed NVRTC supports (read at run time);\n"
    "  exits 1 when a module fails to compile, or with --fail-on-spill when any case spills; --emit writes\n"
    "  each module once, as <case>.<ext> (<case>.<hash>.<ext> when cases share it) and stops (exit 2) when\n"
    "  DIR already holds one of those names\n",
    compile_opts, (int)(sizeof compile_opts / sizeof compile_opts[0]), sizeof(kb_run_opts), kb_run_opts_defaults,
    compile_main,
};
