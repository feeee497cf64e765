/* list.c - `kbench list`: the families, or a suite's planned cases (see list.h). */
#include "cli/list.h"

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
                int64_t lo, hi;
                kb_param_range(pa, &lo, &hi);
                printf("%lld  (in [%lld, %lld])", (long long)pa->def, (long long)lo, (long long)hi);
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

/* An offline session with o's suite planned and walked: the shapes the named backend
 * would run (auto: the emulator's check shapes), valid() asked for its caps on --arch
 * (default sm_90). An exit code, or -1 with *s open. */
static int open_plan(const kb_run_opts *o, kb_session **s)
{
    kb_session_opts so = { .backend = o->backend, .offline = 1, .judge_caps = 1, .suite_path = o->suite_path,
                           .full_shapes = o->full_shapes };
    so.bo.sm_override = o->sm_override;
    kb_sb err;
    kb_sb_init(&err);
    kb_status st = kb_session_open(&so, s, &err);
    if (st == KB_OK)
        st = kb_session_plan(*s, &err);
    int oom = st == KB_OK && kb_session_select(*s, o->filters, o->n_filters) != KB_OK;
    if (st != KB_OK || oom)
        fprintf(stderr, "kbench: %s\n", oom ? "out of memory walking the plan" : err.s);
    kb_sb_free(&err);
    if (st == KB_OK && !oom)
        return -1;
    kb_session_close(*s);
    return st == KB_ERR_SETUP || oom ? KB_EXIT_SETUP : KB_EXIT_INPUT;
}

int kb_cmd_list(const kb_run_opts *o)
{
    if (!o->suite_path) {
        list_families();
        return KB_EXIT_OK;
    }
    kb_session *s = NULL;
    int rc = open_plan(o, &s);
    if (rc >= 0)
        return rc;
    const kb_plan *plan = kb_session_plan_of(s);
    for (int i = 0; i < plan->n_warnings; i++)
        fprintf(stderr, "kbench: warning: %s\n", plan->warnings[i]);
    int sm = kb_session_target_sm(s);
    const kb_cases *l = kb_session_cases(s);
    for (int64_t i = 0; i < l->n; i++) {
        const kb_walk_item *it = &l->items[i].it;
        if (it->valid)
            printf("%s\n", it->id);
        else
            printf("%s  [skipped on %s: %s]\n", it->id, kb_arch_name(sm), it->why);
    }
    fprintf(stderr, "%lld cases (%lld would be skipped on %s)%s\n", (long long)l->counts.visited,
            (long long)l->counts.invalid, kb_arch_name(sm),
            kb_session_check_shapes(s) ? "; shapes are the emulator's check shapes (--full-shapes for the full ones)"
                                       : "");
    if (l->counts.repeats)
        fprintf(stderr, "%lld planned cases repeat an earlier entry's case and are listed once\n",
                (long long)l->counts.repeats);
    int64_t selected = l->n;
    kb_session_close(s);
    if (o->n_filters > 0 && selected == 0) {
        kb_sb f;
        kb_sb_init(&f);
        kb_run_filters_text(o, &f);
        fprintf(stderr, "kbench: %s matches none of the suite's cases\n", f.s);
        kb_sb_free(&f);
        return KB_EXIT_INPUT;
    }
    return KB_EXIT_OK;
}

static const kb_opt list_opts[] = { KB_ROW_BACKEND, KB_ROW_ARCH, KB_ROW_FILTER, KB_ROW_FULL_SHAPES };

static int list_main(void *o) { return kb_cmd_list(o); }

const kb_command kb_command_list = {
    "list", "[SUITE]", 0, 1, offsetof(kb_run_opts, suite_path),
    "the families with their variants, dtypes, dims and params; or the planned case ids of SUITE",
    "  without SUITE: every family with its variants, dtypes, dims and parameters (with their ranges)\n"
    "  with SUITE:    every planned case id (after zip, where and the plan walk), each refused one\n"
    "                 with valid()'s reason for --arch\n",
    list_opts, (int)(sizeof list_opts / sizeof list_opts[0]), sizeof(kb_run_opts), kb_run_opts_defaults, list_main,
};
