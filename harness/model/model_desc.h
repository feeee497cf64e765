/* model_desc.h - an LLM described as the kernels of its layers (data/models/NAME.yaml,
 * docs/model-format.md), loaded and evaluated at the model's sizes.
 *
 * A description names the model's sizes (params: hidden, heads, ffn, vocab, seq, batch,
 * layers, ...), two phases (prefill and decode, each giving the phase variables tokens,
 * seqs, q_len, kv_len as expressions of the params) and the ops of one layer and of the
 * model around the layers: each op's kbench family (and optionally a variant, a dtype, a
 * named case id, param constraints), its dims and how many times it runs, as
 * expressions (suite/expr.h) of the params and the phase variables, evaluated here for
 * both phases. Every error names file:line:column.
 */
#ifndef KB_MODEL_DESC_H
#define KB_MODEL_DESC_H

#include "core/fsutil.h"
#include "core/kb.h"

#include <stdint.h>

#define KB_MODEL_MAX_PARAMS 32
#define KB_MODEL_MAX_DIMS 8
#define KB_MODEL_MAX_CONSTRAINTS 8
#define KB_MODEL_MAX_OPS 64
#define KB_MODEL_MAX_BYTES KB_LIMIT_MODEL_BYTES   /* a description file is at most 1 MiB */
#define KB_MODEL_MAX_POINTS 64   /* decode_points: at most this many points */
#define KB_MODEL_MAX_AXES 8      /* ... over at most this many params */

typedef enum { KB_PHASE_PREFILL = 0, KB_PHASE_DECODE, KB_PHASE_COUNT } kb_model_phase;

/* The phase variables every dims expression may use beside the params. */
typedef enum { KB_PV_TOKENS = 0, KB_PV_SEQS, KB_PV_Q_LEN, KB_PV_KV_LEN, KB_PV_COUNT } kb_model_pvar;

extern const char *const kb_model_phase_names[KB_PHASE_COUNT];   /* "prefill", "decode" */
extern const char *const kb_model_pvar_names[KB_PV_COUNT];       /* "tokens", "seqs", "q_len", "kv_len" */

/* A param constraint: the record's params[name] must read value: a choice name, or, for an
 * integer param, an expression of the params and the phase variables ("heads / kv_heads",
 * "q_len"), evaluated in every phase the op runs in and checked against the param's range. */
typedef struct {
    char *name;
    char *value;                     /* as written */
    int is_int;                      /* an integer param: the record must read ival[phase] */
    int64_t ival[KB_PHASE_COUNT];
} kb_model_constraint;

typedef struct {
    char *name;                      /* "qkv", "attn_norm" */
    char *family;                    /* a kbench family: "gemm" */
    char *variant;                   /* a named variant, or NULL: the best of any variant */
    char *case_id;                   /* a named case id, or NULL: matched by family/dims/params */
    char *note;                      /* shown beside the op ("" when none) */
    int dtype;                       /* a kb_dtype, or -1: the model's dtype */
    int per_model;                   /* 1: runs once per model step (embedding, LM head); 0: per layer */
    unsigned phases;                 /* bit p: modelled in phase p */
    int pad;                         /* the record's pad to match (default 0) */
    int n_dims;
    char *dim_names[KB_MODEL_MAX_DIMS];            /* the family's dim names, in its order */
    int64_t dims[KB_PHASE_COUNT][KB_MODEL_MAX_DIMS];
    int64_t count[KB_PHASE_COUNT];   /* executions per layer (per model step when per_model) */
    int64_t weights;                 /* parameters of the weights this op multiplies (N) */
    int n_constraints;
    kb_model_constraint constraints[KB_MODEL_MAX_CONSTRAINTS];
    int line;                        /* 1-based line of the op in the file */
} kb_model_op;

/* One axis of decode_points: a param and the values it takes (the points are the axes' cross
 * product; model_points.h rolls the decode step up again at each). */
typedef struct {
    int param;                       /* index into the model's params */
    int n;
    int64_t vals[KB_MODEL_MAX_POINTS];
} kb_model_axis;

typedef struct {
    char *name;                      /* "llama-7b-like" */
    char *description;
    char *file;                      /* where it was loaded from */
    int dtype;                       /* a kb_dtype: the precision the roll-up picks by default */
    int n_params;
    char *param_names[KB_MODEL_MAX_PARAMS];
    int64_t params[KB_MODEL_MAX_PARAMS];
    int64_t layers;                  /* the param 'layers' */
    int64_t pvars[KB_PHASE_COUNT][KB_PV_COUNT];
    int n_ops;
    kb_model_op *ops;
    int n_axes;                      /* decode_points: its params, in the file's order (0: none) */
    kb_model_axis axes[KB_MODEL_MAX_AXES];
    int n_points;                    /* the product of the axes' lengths (0: no decode_points) */
    char *text;                      /* the description as loaded: evaluated again at each point */
} kb_model;

/* Load a description from text (display_name in messages). sets[0..n_sets) are
 * "name=value" overrides of params (the command's --set), applied before anything is
 * evaluated. On error returns KB_ERR_INPUT with one message "file:line:col: ..." (or
 * "--set ...: ..." for an override) in err and *out zeroed. Free with kb_model_free. */
kb_status kb_model_load_text(const char *text, const char *display_name, const char *const *sets, int n_sets,
                             kb_model *out, kb_sb *err);

/* kb_model_load_text of a file (a regular text file of at most KB_MODEL_MAX_BYTES). */
kb_status kb_model_load(const char *path, const char *const *sets, int n_sets, kb_model *out, kb_sb *err);

/* The file a --model argument names: itself when it contains '/' or ends in .yaml, else
 * <data root>/data/models/NAME.yaml. Written into out (cleared first). */
void kb_model_path(const char *name_or_file, kb_sb *out);

void kb_model_free(kb_model *m);

/* The value of param name, or -1 when the model has none. */
int64_t kb_model_param(const kb_model *m, const char *name);

#endif /* KB_MODEL_DESC_H */
