/* compile.c - `kbench compile SUITE --arch ARCH`: JIT every distinct module of a suite
 * with NVRTC for one architecture of the table (core/arch.h), offline (no driver or GPU
 * needed), through the same compile cache as `kbench run`, and show each case's kernel
 * resources as the build log reports them: registers, spills, stack, static shared memory
 * (see compile.h); beside them `kbench estimate`'s time and limiting roof on the
 * architecture's reference GPU, labelled as the estimate it is. With --emit ptx|cubin
 * --out DIR, each module's PTX or CUBIN is also written into DIR (compile_emit.h). All of
 * it through an offline build session (session/session.h). */
#include "cli/compile.h"

#include "cli/compile_emit.h"
#include "estimate/estimate.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const kb_run_opts *o;
    kb_session *s;                 /* offline, building with the cuda backend (NVRTC alone; PTX with --emit ptx) */
    int sm;
    int n_err, n_spill, n_skip, n_ok, n_emit_err;
    kb_est_target est;             /* the reference GPU of sm; est.gpu NULL: no estimate columns */
    kb_peaks peaks;
    kb_emit *emit;                 /* --emit, or NULL */
    kb_sb module;                  /* the module identity of the case in hand (--emit) */
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
        kb_est_target_init(&x->est, g, &x->peaks);
        printf("estimate_us, est_limit: an ESTIMATE on %s at full shape (static model, not a measurement; "
               "kbench estimate shows every roof)\n", g->name);
    } else {
        fprintf(stderr, "kbench: no estimate columns: %s\n", err.s);
    }
    kb_sb_free(&err);
}

/* --emit: the module's file in DIR after the row ("" without --emit). */
static void print_emitted(compile_ctx *x, const kb_cases_item *k, const char *artifact)
{
    if (!x->emit) {
        printf("\n");
        return;
    }
    char why[512];
    const char *file = NULL;
    if (kb_session_module_id(x->s, k, &x->module) != 0)
        snprintf(why, sizeof why, "%s has no module of kbench's", k->it.id);
    else
        file = kb_emit_write(x->emit, x->module.s, artifact, why, sizeof why);
    if (!file) {
        x->n_emit_err++;
        fprintf(stderr, "kbench compile: --emit: %s\n", why);
    }
    printf(" %s\n", file ? file : "-");
}

static void compile_case(compile_ctx *x, const kb_cases_item *k)
{
    int quiet = x->o->quiet;
    const char *id = k->it.id;
    if (!k->it.valid) {
        x->n_skip++;
        if (!quiet)
            printf("%-72s %-13s %s\n", id, "skipped", k->it.why);
        return;
    }
    kb_built b;
    kb_session_build(x->s, k, &b);
    if (b.status == KB_BUILT_VENDOR) {   /* a vendor library call: no kernel of kbench's */
        x->n_skip++;
        if (!quiet)
            printf("%-72s %-13s %s\n", id, "skipped", "a vendor library call: nothing to compile");
        return;
    }
    if (b.status == KB_BUILT_FAILED) {
        x->n_err++;
        printf("%-72s %-13s\n%s\n", id, "compile_error", b.log);
        return;
    }
    if (b.status == KB_BUILT_NO_REPORT) {
        x->n_err++;
        printf("%-72s %-13s no resource report for entry %s\n", id, "compile_error", b.entry);
        return;
    }
    const kb_resources *r = &b.res;
    int spills = r->spill_store_bytes > 0 || r->spill_load_bytes > 0;
    x->n_spill += spills;
    x->n_ok++;
    if (!quiet || spills || x->emit) {
        printf("%-72s %-13s %5d %7d %7d %6d %8d", id, spills ? "spills" : "ok", r->registers, r->spill_store_bytes,
               r->spill_load_bytes, r->stack_bytes, r->static_shmem_bytes);
        print_estimate(x, k->f, k->it.c, r);
        print_emitted(x, k, b.artifact);
    }
}

/* The offline session: the cuda backend's compiler for --arch (refused here when the
 * installed NVRTC lacks it), the suite at its full shapes (resources do not depend on
 * them, validity may), walked once. An exit code, or -1 to go on. */
static int open_offline(compile_ctx *x)
{
    const kb_run_opts *o = x->o;
    kb_session_opts so = { .backend = "cuda", .offline = 1, .build = 1, .full_shapes = 1,
                           .suite_path = o->suite_path, .jobs = o->jobs };
    so.build_ptx = o->emit && !strcmp(o->emit, "ptx");
    so.bo.cache_dir = o->cache_dir;
    so.bo.sm_override = o->sm_override;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_session_open(&so, &x->s, &err);
    if (st == KB_OK && (st = kb_session_check_setup(x->s, &err)) == KB_OK && (st = kb_session_plan(x->s, &err)) != KB_OK)
        st = st == KB_ERR_SETUP ? KB_ERR_SETUP : KB_ERR_INPUT;
    if (st == KB_OK && kb_session_select(x->s, o->filters, o->n_filters) != KB_OK) {
        kb_sb_printf(&err, "out of memory walking the plan of %s", o->suite_path);
        st = KB_ERR_SETUP;
    }
    if (st != KB_OK)
        fprintf(stderr, "kbench: %s\n", err.s);
    kb_sb_free(&err);
    if (st == KB_OK)
        return -1;
    return st == KB_ERR_INPUT ? KB_EXIT_INPUT : KB_EXIT_SETUP;
}

/* --emit: DIR made or checked, every module of the list announced with the first case that
 * uses it, and no name DIR already holds - all before anything compiles. An exit code, or
 * -1 to go on. */
static int open_emit(compile_ctx *x)
{
    const kb_run_opts *o = x->o;
    if (!o->emit)
        return -1;
    int rc = kb_emit_open(o->out_path, o->emit, &x->emit);
    if (rc >= 0)
        return rc;
    const kb_cases *l = kb_session_cases(x->s);
    for (int64_t i = 0; i < l->n; i++) {
        if (kb_session_module_id(x->s, &l->items[i], &x->module) != 0)
            continue;   /* refused by valid(), or a vendor call: nothing to write */
        if (kb_emit_plan(x->emit, l->items[i].it.id, x->module.s) != 0) {
            fprintf(stderr, "kbench compile: out of memory\n");
            return KB_EXIT_SETUP;
        }
    }
    return kb_emit_check(x->emit);
}

/* The summary lines and the exit code. */
static int finish(compile_ctx *x, int fail_on_spill)
{
    int jobs = kb_session_workers(x->s);
    fprintf(stderr,
            "kbench compile: %s: %d cases compiled (%d modules, %d worker%s), %d with spills, %d failed, %d skipped\n",
            kb_arch_name(x->sm), x->n_ok, kb_session_modules_count(x->s), jobs ? jobs : 1, jobs > 1 ? "s" : "",
            x->n_spill, x->n_err, x->n_skip);
    if (x->emit)
        fprintf(stderr, "kbench compile: %d %s file%s written into %s\n", kb_emit_count(x->emit), x->o->emit,
                kb_emit_count(x->emit) == 1 ? "" : "s", x->o->out_path);
    if (x->o->n_filters > 0 && kb_session_cases(x->s)->n == 0) {
        kb_sb f;
        kb_sb_init(&f);
        kb_run_filters_text(x->o, &f);
        fprintf(stderr, "kbench: %s matches none of the suite's cases\n", f.s);
        kb_sb_free(&f);
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
    x.sm = o->sm_override ? o->sm_override : 90;
    if (!o->emit != !o->out_path)
        return kb_opts_fail(&kb_command_compile, o->emit ? "--emit" : "--out", "--emit ptx|cubin and --out DIR "
                            "come together");
    kb_sb_init(&x.module);
    int rc = open_offline(&x);
    if (rc < 0)
        rc = open_emit(&x);
    if (rc < 0) {
        open_estimate(&x);
        printf("%-72s %-13s %5s %7s %7s %6s %8s %11s %-9s%s\n", "case", "status", "regs", "spill_st", "spill_ld",
               "stack", "smem_B", "estimate_us", "est_limit", x.emit ? " file" : "");
        kb_session_start(x.s);
        const kb_cases *l = kb_session_cases(x.s);
        for (int64_t i = 0; i < l->n; i++)
            kb_session_prefetch(x.s, &l->items[i]);
        for (int64_t i = 0; i < l->n; i++)
            compile_case(&x, &l->items[i]);
        rc = finish(&x, fail_on_spill);
    }
    kb_emit_free(x.emit);
    kb_session_close(x.s);
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
