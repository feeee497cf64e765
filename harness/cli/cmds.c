/* cmds.c - `kbench list` and `kbench devices`. */
#include "engine/peaks.h"
#include "suite/plan.h"
#include "results/record.h"
#include "cli/run.h"

#include <stdio.h>
#include <string.h>

static void print_dtypes(uint32_t mask)
{
    int first = 1;
    for (int d = 0; d < KB_DT_COUNT; d++)
        if (mask & KB_DT_BIT(d)) {
            printf("%s%s", first ? "" : ",", kb_dtype_name((kb_dtype)d));
            first = 0;
        }
}

static void list_families(void)
{
    for (int i = 0; i < kb_n_families; i++) {
        const kb_family *f = kb_families[i];
        printf("%s  (%s)  %s\n", f->name, f->source, f->about);
        printf("  dims:");
        for (int d = 0; d < f->n_dims; d++)
            printf(" %s", f->dims[d]);
        printf("\n  variants:\n");
        for (int v = 0; v < f->n_variants; v++) {
            printf("    %-14s [", f->variants[v].name);
            print_dtypes(f->variants[v].dtypes);
            printf("]  %s\n", f->variants[v].about);
        }
        printf("  params:\n");
        for (int p = 0; p < f->n_params; p++) {
            const kb_param *pa = &f->params[p];
            printf("    %-14s default ", pa->name);
            if (pa->choices) {
                printf("%s  (one of", pa->choices[pa->def]);
                for (int k = 0; pa->choices[k]; k++)
                    printf(" %s", pa->choices[k]);
                printf(")");
            } else {
                printf("%lld", (long long)pa->def);
            }
            if (pa->variants) {
                printf("  [variants:");
                for (int v = 0; v < f->n_variants; v++)
                    if (pa->variants >> v & 1u)
                        printf(" %s", f->variants[v].name);
                printf("]");
            }
            printf("  %s\n", pa->about);
        }
        printf("\n");
    }
}

int kb_cmd_list(const kb_run_opts *o)
{
    if (!o->suite_path) {
        list_families();
        return KB_EXIT_OK;
    }
    kb_plan plan;
    kb_sb err, id;
    kb_sb_init(&err);
    kb_sb_init(&id);
    /* the emulator runs check shapes; a GPU the full ones */
    int check = strcmp(o->backend, "cuda") != 0 && !o->full_shapes;
    kb_status st = kb_suite_plan(o->suite_path, kb_families, kb_n_families, check, &plan, &err);
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err.s);
        kb_sb_free(&err);
        kb_sb_free(&id);
        return st == KB_ERR_SETUP ? KB_EXIT_SETUP : KB_EXIT_INPUT;
    }
    for (int i = 0; i < plan.n_warnings; i++)
        fprintf(stderr, "kbench: warning: %s\n", plan.warnings[i]);
    int sm = o->sm_override ? o->sm_override : 90;
    kb_target tgt = { sm, check, kb_arch_max_shmem_optin(sm) };
    int64_t shown = 0, invalid = 0, repeats = 0;
    kb_strset seen;  /* overlapping entries: a repeated case is listed (and run) once */
    kb_strset_init(&seen);
    for (int64_t i = 0; i < plan.n_cases; i++) {
        const kb_case *c = &plan.cases[i];
        kb_case_id(c, &id);
        if (!kb_strset_add(&seen, id.s)) {
            repeats++;
            continue;
        }
        if (!kb_run_selects(o, id.s))
            continue;
        char why[512];
        shown++;
        if (kb_families[c->family]->valid(c, &tgt, why, sizeof why)) {
            printf("%s\n", id.s);
        } else {
            invalid++;
            printf("%s  [skipped on sm_%d: %s]\n", id.s, tgt.sm, why);
        }
    }
    kb_strset_free(&seen);
    fprintf(stderr, "%lld cases (%lld would be skipped on sm_%d)%s\n", (long long)shown, (long long)invalid, tgt.sm,
            check ? "; shapes are the emulator's check shapes (--full-shapes for the full ones)" : "");
    if (repeats)
        fprintf(stderr, "%lld planned cases repeat an earlier entry's case and are listed once\n", (long long)repeats);
    kb_plan_free(&plan);
    kb_sb_free(&err);
    kb_sb_free(&id);
    return KB_EXIT_OK;
}

int kb_cmd_devices(const kb_run_opts *o)
{
    char err[1024];
    kb_backend_opts bo = { o->cache_dir, o->device_index, o->sm_override, o->emu_threads };
    /* devices reports GPUs: without --backend it asks the driver, and says so plainly when there is none */
    const char *name = strcmp(o->backend, "auto") ? o->backend : "cuda";
    const kb_backend *be = kb_backend_find(name);
    kb_backend_ctx *bx = NULL;
    kb_status st = be->init(&bo, &bx, err, sizeof err);
    if (st != KB_OK) {
        fprintf(stderr, "kbench: %s\n", err);
        if (!strcmp(name, "cuda"))
            fprintf(stderr, "kbench: no GPU can be used here; the CPU emulator can run and verify every kernel: "
                            "kbench devices --backend emu\n");
        return KB_EXIT_SETUP;
    }
    kb_device_info d;
    if ((st = be->device_info(bx, &d)) != KB_OK) {
        fprintf(stderr, "kbench: device query: %s\n", be->last_error(bx));
        be->fini(bx);
        return KB_EXIT_SETUP;
    }
    printf("backend        %s\n", be->name);
    printf("device         %d: %s\n", o->device_index, d.name);
    printf("uuid           %s\n", d.uuid);
    if (d.pci_bus_id[0])
        printf("pci bus id     %s\n", d.pci_bus_id);
    printf("arch           sm_%d%s\n", d.sm, d.is_emulator ? " (emulated)" : "");
    printf("%-14s %d\n", d.is_emulator ? "workers" : "SMs", d.sm_count);
    if (!d.is_emulator) {
        printf("sm clock       %d MHz\n", d.clock_khz / 1000);
        printf("memory clock   %d MHz, bus %d bits\n", d.mem_clock_khz / 1000, d.mem_bus_bits);
        printf("L2             %d KiB\n", d.l2_bytes / 1024);
        printf("memory         %.1f GiB\n", d.total_mem_bytes / (1024.0 * 1024 * 1024));
    }
    printf("smem/block     %d KiB (opt-in)\n", d.max_shmem_per_block_optin / 1024);
    if (d.is_emulator)
        printf("note           the emulator executes kernels on the CPU; its timings are CPU time\n");
    kb_peaks peaks;
    kb_sb note;
    kb_sb_init(&note);
    if (kb_peaks_for_device(&d, NULL, &peaks, &note) == KB_OK) {
        printf("\n");
        kb_peaks_print(stdout, &peaks);
    } else {
        printf("peaks          %s\n", note.s);
    }
    kb_sb_free(&note);
    be->fini(bx);
    return KB_EXIT_OK;
}
