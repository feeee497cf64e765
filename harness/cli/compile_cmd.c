/* compile_cmd.c - `kbench compile SUITE --arch sm_XX`: JIT every distinct module of a
 * suite with NVRTC for one architecture, offline (no driver or GPU needed), through the
 * same compile cache as `kbench run`, and show each case's kernel resources from the
 * ptxas report: registers, spills, stack, static shared memory. */
#include "engine/defines.h"
#include "engine/modules.h"
#include "backend/cuda/kb_nvrtc.h"
#include "suite/plan.h"
#include "cli/run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kb_cmd_compile(const kb_run_opts *o, int fail_on_spill)
{
    int sm = o->sm_override ? o->sm_override : 90;
    kb_plan plan;
    kb_sb err, id, defs;
    kb_sb_init(&err);
    kb_sb_init(&id);
    kb_sb_init(&defs);
    /* the full shapes: resources do not depend on them, validity may */
    kb_status st = kb_suite_plan(o->suite_path, kb_families, kb_n_families, 0, &plan, &err);
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
        kb_sb_free(&err);
        kb_sb_free(&id);
        kb_sb_free(&defs);
        return st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
    }
    /* the cuda backend's build is NVRTC alone: no context, no driver */
    kb_modules *mods = kb_modules_new_build_only(&kb_backend_cuda, NULL, o->cache_dir, kb_kernels_dir());
    int n_err = 0, n_spill = 0, n_skip = 0, n_ok = 0;
    kb_target tgt = { sm, 0, kb_arch_max_shmem_optin(sm) };
    printf("%-72s %-13s %5s %7s %7s %6s %8s\n", "case", "status", "regs", "spill_st", "spill_ld", "stack",
           "smem_B");
    for (int64_t i = 0; i < plan.n_cases; i++) {
        const kb_case *c = &plan.cases[i];
        const kb_family *f = kb_families[c->family];
        kb_case_id(c, &id);
        if (!kb_run_selects(o, id.s))
            continue;
        char why[512];
        if (!f->valid(c, &tgt, why, sizeof why)) {
            n_skip++;
            if (!o->quiet)
                printf("%-72s %-13s %s\n", id.s, "skipped", why);
            continue;
        }
        kb_case_defines(f, c, &defs);
        const kb_module_ref *b = kb_modules_get(mods, f->source, defs.s, sm);
        if (b->status != KB_OK) {
            n_err++;
            printf("%-72s %-13s\n%s\n", id.s, "compile_error", b->log);
            continue;
        }
        kb_resources r;
        const char *entry = f->variants[c->variant].entry;
        if (kb_ptxas_parse(b->log, entry, &r) != 0) {
            n_err++;
            printf("%-72s %-13s no ptxas report for entry %s\n", id.s, "compile_error", entry);
            continue;
        }
        int spills = r.spill_store_bytes > 0 || r.spill_load_bytes > 0;
        n_spill += spills;
        n_ok++;
        if (!o->quiet || spills)
            printf("%-72s %-13s %5d %7d %7d %6d %8d\n", id.s, spills ? "spills" : "ok", r.registers,
                   r.spill_store_bytes, r.spill_load_bytes, r.stack_bytes, r.static_shmem_bytes);
    }
    fprintf(stderr, "kbench compile: sm_%d: %d cases compiled (%d modules), %d with spills, %d failed, %d skipped\n",
            sm, n_ok, kb_modules_count(mods), n_spill, n_err, n_skip);
    kb_modules_free(mods);
    kb_plan_free(&plan);
    kb_sb_free(&err);
    kb_sb_free(&id);
    kb_sb_free(&defs);
    if (n_err)
        return KB_EXIT_WRONG;
    return fail_on_spill && n_spill ? KB_EXIT_WRONG : KB_EXIT_OK;
}
