/* tunedb_types.h - the rows of the tuning database (tune/tunedb.h), typed: the key a row
 * was measured under, the problem (what a deployment looks up) and the configuration (how
 * it is computed) as fields, never as id strings to parse (issue 20).
 */
#ifndef KB_TUNEDB_TYPES_H
#define KB_TUNEDB_TYPES_H

#include "core/kb.h"

typedef struct {
    char silicon[320];
    char device[128];              /* the GPU's name; "kbench emulator (sm_XX)" on the emulator */
    int sm, sm_count;              /* compute capability x10 and SMs; 0 and 0 on the emulator (no GPU) */
    int arch;                      /* what kernels were compiled for (x10): the GPU's sm, the emulator's target */
    char driver[32];
    char toolchain[160];
    int emulator;                  /* the timings are CPU time (column cpu_timing) */
} kb_tune_key;

/* A problem, typed: what a deployment looks it up by. */
typedef struct {
    char op[160];                  /* the family and the params that define the operation,
                                    * "gemm(layout=nt,alpha=1,beta=0)": a key, compared whole */
    char family[32];
    char dtype[16];
    int n_dims;
    int64_t dims[KB_MAX_DIMS];     /* [elements] the family's dims in declared order */
    int pad;
    char launch[8];                /* "eager", "graph" */
} kb_tune_problem_desc;

/* One param of a configuration. */
typedef struct {
    char name[24];                 /* the family's param name ("BM", "search") */
    int64_t value;                 /* the integer; a choice param's index */
    char choice[24];               /* a choice param's value ("heuristic"); "" for an integer */
} kb_tune_param;

/* A configuration, typed: the variant and the config params that apply to it, in the
 * family's order (at most KB_MAX_PARAMS: a family has no more). */
typedef struct {
    char variant[32];
    int n_params;
    kb_tune_param params[KB_MAX_PARAMS];
} kb_tune_config_desc;

/* One evaluated configuration. */
typedef struct {
    char case_id[512];
    char problem[384];             /* the problem key (shown, grouped by; never parsed) */
    char config[256];              /* the configuration's label (shown; never parsed) */
    kb_tune_problem_desc prob;
    kb_tune_config_desc cfg;
    char family[32];
    char status[24];               /* a kb_case_status name */
    char reason[1200];
    double median_us;              /* [us], NAN when not measured */
    double noise;                  /* relative standard error of the median, NAN unknown */
    int samples;
    int registers, shmem_bytes;    /* -1 unknown */
    char clock[8];                 /* "gpu", "cpu", "" */
    char time[32];                 /* ISO-8601 UTC when entered ("": now, for kb_tunedb_put) */
} kb_tune_entry;

/* A problem's choice. */
typedef struct {
    char problem[384];
    char family[32];
    char case_id[512];
    char config[256];
    kb_tune_problem_desc prob;
    kb_tune_config_desc cfg;       /* the winner's */
    double median_us, lo_us, hi_us; /* [us] */
    int tie;
    int noisy;                     /* no winner: the leader's noise is above the bound (verdict "noise") */
    int n_tied;                    /* configurations within the winner's noise */
    char tied[1024];               /* the runners-up within noise: "config (median us)", "; "-joined */
    char strategy[16];
    int evaluations, space;        /* evaluated / configurations in the problem's space */
    char time[32];                 /* ISO-8601 UTC ("": now, for kb_tunedb_put_choice) */
    char lookup[192];              /* "" for an exact hit; how a nearest-GPU fallback was chosen (export) */
    kb_tune_key key;               /* filled by the readers */
    char source[40];               /* filled by the readers */
} kb_tune_choice_row;

#endif /* KB_TUNEDB_TYPES_H */
