/* report_best.h - the fastest verified configuration of each problem of a recorded run,
 * for the reports' summary (and `kbench run`'s, which names it the same way).
 *
 * A problem is what a configuration is chosen for: one device, family, shape (the preset
 * name, else the dims), the problem params (kb_param.problem: layernorm's kind, gemm's
 * layout, ...), dtype and pad. Its configurations are the rest: variant, the other params,
 * launch mode. The fastest ok, timed row of a problem is its best; the margin is the
 * runner-up's median over the best's, "within noise" when their 95% intervals of the
 * median - median x (1 +- 1.96 x noise), noise the relative standard error the record
 * keeps - overlap (the rule tune/winner.h crowns a winner by).
 */
#ifndef KB_REPORT_BEST_H
#define KB_REPORT_BEST_H

#include "results/report_rows.h"

typedef struct {
    int first;                 /* the problem's first row (any status) */
    int best, next;            /* rows: fastest and runner-up ok timed rows; -1 when none */
    int n_timed;               /* ok timed rows (configurations measured) */
    int n_rows;                /* rows of the problem, any status */
    int within_noise;          /* best and next's 95% intervals overlap */
} kb_report_best;

/* The problems of run in order of first appearance (*out malloc'ed, caller frees), those
 * without a timed row included (best -1). Returns the count, or -1 out of memory. */
int kb_report_best_of(const kb_report_run *run, kb_report_best **out);

/* 1 when rows a and b pose the same problem (above). */
int kb_report_same_problem(const kb_report_row *a, const kb_report_row *b);

/* Which params (and launch modes) vary among a run's rows of each family: computed once,
 * read by the texts below. */
typedef struct {
    char family[32], param[32];   /* param "" stands for the launch mode */
    json_t *first;                /* the first value seen (borrowed from a record) */
    int varies, problem;          /* problem: kb_param.problem */
} kb_report_axis;

typedef struct {
    kb_report_axis *v;
    int n;
} kb_report_axes;

/* The axes of run into *out (free with kb_report_axes_free). KB_OK or KB_ERR_OOM. */
kb_status kb_report_axes_of(const kb_report_run *run, kb_report_axes *out);
void kb_report_axes_free(kb_report_axes *a);

/* 1 when param (or "" for the launch mode) varies among the rows of family. */
int kb_report_varies(const kb_report_axes *a, const char *family, const char *param);

/* "qkv_prefill" (the preset) or "48x96x64" (dims), then " kind=rmsnorm" for each problem
 * param that varies among the run's rows of its family; appended to out. with_dims:
 * "qkv_prefill 48x96x64" for a preset. */
void kb_report_problem_text(const kb_report_axes *a, const kb_report_row *r, int with_dims, kb_sb *out);

/* The configuration of row r: its variant, then name=value for each non-problem param
 * that varies among the run's rows of its family, then the launch mode when the family's
 * rows have both; appended to out. */
void kb_report_config_text(const kb_report_axes *a, const kb_report_row *r, kb_sb *out);

/* "1.31x", "1.02x, within noise", or "the only one" (no runner-up); into buf. */
void kb_report_margin_text(const kb_report_run *run, const kb_report_best *b, char *buf, size_t n);

/* The eager twin of row g, a graph case (the same id ending in /eager instead of /graph,
 * on the same device): its row, or -1 when g is not a graph case or has none. */
int kb_report_eager_twin(const kb_report_run *run, size_t g);

#endif /* KB_REPORT_BEST_H */
