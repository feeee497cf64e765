/* space.h - a tuning space: the cases of a suite grouped into problems, each problem
 * holding the configurations that compete for it.
 *
 * A problem is what a deployment looks up: family, dtype, dims, pad, launch mode and the
 * params that change what is computed and apply to every variant (choice params such as
 * gemm's layout or attention's causal, lower-case integer params such as alpha, beta). A
 * variant that computes another operation over the family's dims (kb_family.other_op_variants:
 * attention's decode) has problems of its own, "attention/decode(causal=yes,q_len=1,group=8)/...",
 * with its own lower-case params (q_len, group) in the key. A
 * configuration is how it is computed: the variant, the tile params (the upper-case -D
 * params: BM, BLOCK, VEC, STAGES, ...), cuBLASLt's algorithm rank `algo`, and every param
 * that applies to some variants only (gelu vec's max_grid, cuBLASLt's workspace). The
 * space is built from the one plan
 * walk (a session's case list, session/cases.h): a case valid() refuses never enters it
 * (counted with its reason).
 *
 * Each configuration carries, per axis (axis 0 the variant, then each config param of
 * the family), the index of its value among the values that axis takes in the problem:
 * the strategies (strategy.h) see only these levels.
 */
#ifndef KB_TUNE_SPACE_H
#define KB_TUNE_SPACE_H

#include "session/cases.h"

#define KB_TUNE_MAX_AXES (1 + KB_MAX_PARAMS)

typedef struct {
    int64_t case_index;            /* into the plan's cases */
    char *id;                      /* the case id (owned) */
    char *config;                  /* "mma(BM=64,BN=64,BK=32,WM=32,WN=32,STAGES=2)" (owned) */
} kb_tune_config;

typedef struct {
    char *key;                     /* "gemm(layout=nt,alpha=1,beta=0)/bf16/64x64x64/pad0/eager" (owned) */
    int family;                    /* index into the plan's family table */
    kb_tune_config *configs;
    int n, cap;
    int n_axes;                    /* 1 + the family's config params */
    int axis_param[KB_TUNE_MAX_AXES]; /* axis -> param index (axis 0: -1, the variant) */
    int *levels;                   /* [n * n_axes] value index of each config on each axis */
    int64_t *values[KB_TUNE_MAX_AXES]; /* distinct values per axis: integer params ascending, else in order seen */
    unsigned char categorical[KB_TUNE_MAX_AXES]; /* 1: the variant, a choice param (levels are names) */
    int n_values[KB_TUNE_MAX_AXES];
} kb_tune_problem;

typedef struct {
    kb_tune_problem *problems;
    int n, cap;
    int64_t invalid;               /* cases valid() refused */
    char first_invalid[512];       /* the first refused case and its reason ("" when none) */
} kb_tune_space;

/* 1 when variant of family f computes another operation over its dims (other_op_variants). */
int kb_tune_other_op(const kb_family *f, int variant);

/* 1 when param i of family f is a configuration axis (see the file comment). */
int kb_tune_param_is_config(const kb_family *f, int i);

/* "variant(P=v,...)": the variant of c and the config params that apply to it
 * (malloc'ed; NULL when out of memory). */
char *kb_tune_config_label(const kb_family *f, const kb_case *c);
/* 1 when param i is in the problem key of a case of variant: a problem param that applies to it. */
int kb_tune_param_in_key(const kb_family *f, int i, int variant);

/* The operation of case c of family f into b (cleared first): the family and the params
 * that define what is computed, "gemm(layout=nt,alpha=1,beta=0)" - the first part of its
 * problem key. */
void kb_tune_problem_op(const kb_family *f, const kb_case *c, kb_sb *b);

/* The problem key of case c of family f into b (cleared first):
 * "<op>/<dtype>/<dims joined by x>/pad<N>/<launch>". */
void kb_tune_problem_key(const kb_family *f, const kb_case *c, kb_sb *b);

/* Build the space of plan p's cases that a walk selected (a session's list:
 * kb_session_cases; kb_cases_build), without walking again. KB_OK, or KB_ERR_INTERNAL
 * when out of memory. Free with kb_tune_space_free. */
kb_status kb_tune_space_of_cases(const kb_plan *p, const kb_cases *l, kb_tune_space *out);
void kb_tune_space_free(kb_tune_space *s);

#endif /* KB_TUNE_SPACE_H */
