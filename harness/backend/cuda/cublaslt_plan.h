/* cublaslt_plan.h - choosing the algorithm of a kbench matmul and calling cublasLtMatmul.
 *
 * Two ways to a list of algorithms, and `algo` picks one of it by rank:
 *   heuristic  cublasLtMatmulAlgoGetHeuristic's answer, ordered by its estimated time
 *              (rank 0 = its first choice; a sweep over ranks 0..N-1 is the algorithm
 *              search of NVIDIA's CUDALibrarySamples);
 *   enumerate  AlgoGetIds -> AlgoInit -> capabilities -> AlgoConfigSetAttribute ->
 *              AlgoCheck over tiles x stages x split-K x reduction x swizzle x custom
 *              options, stopping after `budget` configurations AlgoCheck accepts.
 * Everything here but the enumeration order (kb_lt_enum_*) needs a GPU: cublasLtCreate
 * answers NOT_INITIALIZED without one.
 */
#ifndef KB_CUBLASLT_PLAN_H
#define KB_CUBLASLT_PLAN_H

#include "backend/cuda/cublaslt.h"

/* A planned matmul: descriptors, the chosen algorithm, alpha/beta in the scale type. */
typedef struct {
    kb_lt_desc desc;
    cublasLtMatmulAlgo_t algo;
    size_t workspace_bytes;      /* what the algorithm needs (<= the limit asked for) */
    union { float f; int32_t i; } alpha, beta;
    kb_vendor_matmul mm;         /* pointers and shape */
} kb_lt_plan;

/* Plan mm on handle h: descriptors, the algorithm list (heuristic or enumeration), the
 * rank mm->algo of it. info gets the library version, the list's length, the algorithm's
 * words and configuration, wavesCount and the workspace. KB_ERR_INPUT (with the reason in
 * err) when the list has no entry of that rank; the plan then holds nothing. */
kb_status kb_lt_plan_create(const kb_lt_api *api, cublasLtHandle_t h, const kb_vendor_matmul *mm, kb_lt_plan *p,
                            kb_vendor_info *info, char *err, size_t n);
void kb_lt_plan_destroy(const kb_lt_api *api, kb_lt_plan *p);

/* Enqueue the planned matmul on stream with a workspace of p->workspace_bytes at ws. */
kb_status kb_lt_plan_run(const kb_lt_api *api, cublasLtHandle_t h, const kb_lt_plan *p, uint64_t ws, void *stream,
                         char *err, size_t n);

/* ---- the enumeration order (pure) ---- */

/* What one algorithm id supports (its CUBLASLT_ALGO_CAP_*). */
typedef struct {
    uint32_t *tiles; int n_tiles;    /* 0 tiles: the id has one, undefined, tile (kb_lt_read_caps: malloc'ed) */
    uint32_t *stages; int n_stages;  /* 0 stages: undefined */
    int splitk;                  /* split-K supported */
    uint32_t reduction_mask;     /* CUBLASLT_REDUCTION_SCHEME_* bits */
    int swizzle;                 /* CTA swizzling supported (values 0 and 1) */
    int custom_max;              /* custom options 0..custom_max */
} kb_lt_caps;

/* What algo supports (its CUBLASLT_ALGO_CAP_*), read through api. The tile and stage id
 * lists are as long as cuBLASLt says (asked first with sizeInBytes 0: an algorithm may list
 * every one of cuBLASLt 13's 600-odd tile ids); a list that cannot be read, or memory that
 * cannot be had, leaves it empty (undefined). Free with kb_lt_caps_free. */
void kb_lt_read_caps(const kb_lt_api *api, const cublasLtMatmulAlgo_t *algo, kb_lt_caps *caps);
/* Free the lists kb_lt_read_caps allocated (caps itself is the caller's). */
void kb_lt_caps_free(kb_lt_caps *caps);

/* One configuration to try. */
typedef struct {
    uint32_t tile, stages, reduction, swizzle, custom;
    int32_t splitk;
} kb_lt_config;

/* Configuration i (0-based) of caps in the enumeration order: tile, then stages, custom
 * option, swizzle, split-K (1, then 2, 3, 4, 5, 6, 8, 12, 16, 32 with each supported
 * reduction scheme), innermost last. 0 and *out, or -1 when i is past the last. */
int kb_lt_enum_config(const kb_lt_caps *caps, long i, kb_lt_config *out);

/* How many configurations caps has (kb_lt_enum_config's range). */
long kb_lt_enum_count(const kb_lt_caps *caps);

#endif /* KB_CUBLASLT_PLAN_H */
