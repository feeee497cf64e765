/* console_cols.h - the axes of a run as columns, one table per family (nvbench prints a
 * column per axis of a benchmark): from the cases a run will execute, the axes that vary
 * within a family become its columns - variant, each param, dtype, shape, pad, launch -
 * and the ones that do not are stated once above its table. Nothing that varies is
 * shortened, so no two cases of a run show the same cells; the full id stays in the
 * records. The summary names configurations by the same cells.
 */
#ifndef KB_CONSOLE_COLS_H
#define KB_CONSOLE_COLS_H

#include "session/cases.h"

/* The columns of one family's table. */
typedef struct {
    const kb_family *f;
    int64_t n_cases;                       /* the run's cases of the family */
    int col_variant, col_dtype, col_shape, col_pad, col_launch;   /* 1: a column */
    int col_param[KB_MAX_PARAMS];
    int w_variant, w_dtype, w_shape, w_pad, w_launch, w_param[KB_MAX_PARAMS];  /* [characters] */
    kb_sb constants;                       /* "layout=nt alpha=1 ...": what every case shares */
    kb_sb shapes;                          /* "qkv_prefill 48x96x64, ...": the named shapes' dims */
} kb_cols_family;

typedef struct {
    kb_cols_family *fams;
    int n;
    const kb_plan *plan;                   /* borrowed: its shape names */
} kb_cols;

/* The columns of the items of l not done (plan: where their shape names are, NULL:
 * dims only). KB_OK or KB_ERR_OOM; free with kb_cols_free (also after a failure). */
kb_status kb_cols_build(const kb_cases *l, const kb_plan *plan, kb_cols *out);
void kb_cols_free(kb_cols *c);

/* The table of family f, NULL when none of the run's cases is of f. */
const kb_cols_family *kb_cols_find(const kb_cols *c, const kb_family *f);

/* The axis cells' total width [characters], separators included. */
int kb_cols_width(const kb_cols_family *cf);

/* The header (column names) or the cells of case c, each padded to its width and
 * followed by one space, appended to out. */
void kb_cols_header(const kb_cols_family *cf, kb_sb *out);
void kb_cols_cells(const kb_cols *c, const kb_cols_family *cf, const kb_case *kc, kb_sb *out);

/* The configuration of kc as people read it: the variant, then name=value for each param
 * that is a column and not a problem param
 * (kb_param.problem), then the launch mode (when it is one), separated by spaces,
 * appended to out. */
void kb_cols_config(const kb_cols_family *cf, const kb_case *kc, kb_sb *out);

/* What of kc's problem its shape does not say: " name=value" for each problem param
 * (layernorm's kind, gelu's form, ...) that is a column, appended to out. */
void kb_cols_problem(const kb_cols_family *cf, const kb_case *kc, kb_sb *out);

/* 1 when cases a and b of family f pose the same problem - dims, shape, dtype, pad and
 * every problem param - so that their times rank configurations of one problem. */
int kb_cols_same_problem(const kb_family *f, const kb_case *a, const kb_case *b);

/* The shape of kc: its preset's name when it has one, else its dims "48x96x64". */
void kb_cols_shape(const kb_plan *plan, const kb_family *f, const kb_case *kc, kb_sb *out);

/* The value of param p of kc: a choice's name or the integer; "-" where p does not apply
 * to kc's variant. */
void kb_cols_param(const kb_family *f, const kb_case *kc, int p, char *buf, size_t n);

#endif /* KB_CONSOLE_COLS_H */
