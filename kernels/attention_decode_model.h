/* attention_decode_model.h - what attention_decode.c (the decode variant's host side) and
 * attention_decode_model.c (its launch geometry and traffic model for `kbench estimate`)
 * share: the decode variant's and params' indices after the attention family's own, and the
 * block geometry (one source for valid(), the defines, the launch and the estimate). */
#ifndef KB_ATTENTION_DECODE_MODEL_H
#define KB_ATTENTION_DECODE_MODEL_H

#include "attention_model.h"

/* The variant and its params, appended to attention.c's tables (attention_model.h's enums
 * end at V_FA2 and P_RQ). Dims stay the family's b, h, s, d: h counts query heads and s is
 * the KV length; the query rows per sequence (q_len) and the query heads per KV head (group)
 * are params, so every attention case id recorded before keeps its dims. */
enum { V_DECODE = V_FA2 + 1 };
enum { P_QLEN = P_RQ + 1, P_GROUP, P_CHUNK, P_WARPS, P_STAGES };
/* decode_tma, decode's sm_90a twin (attention_decode_tma.c), comes after fa3 (V_DECODE + 1,
 * attention_fa3.h, which asserts the order); both take decode's params and geometry. */
enum { V_DECODE_TMA = V_DECODE + 2 };
#define KB_DEC_VARIANT(v) ((v) == V_DECODE || (v) == V_DECODE_TMA)

/* Auto split (CHUNK = 0): the fewest splits that give at least this many blocks, 2 per SM of
 * a 132-SM H100 SXM (one running, one ready), but splits of at least KB_DEC_MIN_CHUNK keys:
 * shorter ones add more partial-output traffic (8 bytes per row and column per split) than
 * the parallelism is worth. FlashAttention-2 decides from the device's SM count at run time
 * (num_splits_heuristic); kbench fixes it from the shape, so a case means the same launch on
 * every GPU, the emulator and `kbench estimate`; CHUNK sets it explicitly. */
#define KB_DEC_TARGET_BLOCKS 264
#define KB_DEC_MIN_CHUNK 256
/* At most this many splits: beyond, the fp32 partials would outweigh K and V. */
#define KB_DEC_MAX_SPLITS 1024

typedef struct {
    int64_t h_kv;       /* KV heads per sequence: h / group */
    int64_t heads_kv;   /* b x h_kv: grid.y */
    int64_t r;          /* query rows per KV head: group x q_len */
    int64_t mt;         /* m16 row tiles per warp: 2 when r > 16 and d <= 128, else 1 */
    int64_t rg, kg;     /* row warps (power of two covering r / 16 mt, at most WARPS) and key warps */
    int64_t rows;       /* query rows per block: 16 mt rg */
    int64_t nrb;        /* row blocks per KV head and split */
    int64_t bkv;        /* keys per K/V tile: 16 kg */
    int64_t chunk;      /* keys per split: CHUNK, or the auto choice (a multiple of bkv) */
    int64_t splits;     /* ceil(s / chunk) */
    int64_t rows_total; /* query (and output) rows: b x h x q_len */
    int64_t threads;    /* 32 WARPS; decode_tma 32 (WARPS + 1): the producer warp */
    int64_t tma;        /* 1 for decode_tma: dense 128B-swizzled tiles, mbarriers after the data */
    int64_t merge_bytes; /* [bytes] after the loop: key warps 1..kg-1's O, m, l and the fp32 output rows */
    int64_t shmem;      /* dynamic shared memory [bytes]: max(Q tile + K/V ring, merge_bytes); decode_tma
                         * adds 1024 of alignment slack and 1 + 2 STAGES mbarriers (8 bytes each) */
} kb_dec_geom;

/* The geometry of decode case c (its dims and params; group must divide h, WARPS be a power
 * of two: valid() checks before anything else asks). */
void kb_dec_geom_of(const kb_case *c, kb_dec_geom *g);

/* The decode variant's traffic hook (engine/traffic.h): tiles over every split, padded rows
 * and keys on the tensor cores, K/V once from DRAM (row blocks of a head through L2), the
 * split partials, one ex2 per score counted at the special-function unit's rate. */
int kb_dec_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t);

#endif
