/* embedding.c - host side of the embedding family: descriptor, legality, work model,
 * ids and table, host-side id validation, reference and verification. Device code:
 * embedding.cu.
 *
 * table is [vocab x ld] and out [tokens x ld], ld = dim + pad (row-stride padding).
 * The ids are checked against [0, vocab) on the host before anything is uploaded or
 * launched: an id out of range fails the case with KB_ERR_INPUT and a message naming
 * it, and the kernels never read outside the table. The param bad_id = 1 plants the id
 * vocab (one past the end, the classic off-by-one) to prove that path. */
#include "engine/exec.h"
#include "engine/valid.h"
#include "engine/verify.h"
#include "kernels/families.h"
#include "stream_model.h"

#include <stdio.h>
#include <stdlib.h>

enum { V_SCALAR, V_VEC };
enum { P_BLOCK, P_BAD_ID, P_MAX_GRID };
enum { D_TOKENS, D_VOCAB, D_DIM };

/* Grid cap for the grid-stride loops of both kernels [blocks]. */
#define GRID_CAP (1u << 20)

#define TABLE_PAD_VALUE 7.0f   /* in the table's row padding: copied by mistake, it shows */
#define OUT_SENTINEL (-3.0f)   /* out before the kernel: outside the table's [-1, 1] */

#define EMB_DTYPES (KB_DT_BIT(KB_DT_FP32) | KB_DT_BIT(KB_DT_FP16) | KB_DT_BIT(KB_DT_BF16))

static const kb_variant variants[] = {
    [V_SCALAR] = { "scalar", "embedding_scalar", EMB_DTYPES, "one element per thread, scalar loads and stores" },
    [V_VEC] = { "vec", "embedding_vec", EMB_DTYPES,
                "one row per warp, 128-bit accesses with scalar head/tail; differently misaligned rows go scalar" },
};

static const char *const dims[] = { [D_TOKENS] = "tokens", [D_VOCAB] = "vocab", [D_DIM] = "dim" };

static const kb_param params[] = {
    [P_BLOCK] = { "BLOCK", 256, NULL, 0, "threads per block (multiple of 32, <= 1024); vec: BLOCK/32 rows per block" },
    [P_BAD_ID] = { "bad_id", 0, NULL, 0,
                   "1: plant the out-of-range id vocab among the ids, to show the host refuses the case",
                   .problem = 1 },
    [P_MAX_GRID] = { "max_grid", 0, NULL, 0,
                     "cap on the blocks launched (0: 2^20); a small cap makes the grid-stride loops go round",
                     0, 1 << 20 },
};

static int embedding_valid(const kb_case *c, const kb_target *t, char *why, size_t n)
{
    int64_t block = c->params[P_BLOCK], bad = c->params[P_BAD_ID];
    if (!kb_valid_block(block, why, n))
        return 0;
    if (bad != 0 && bad != 1) {
        snprintf(why, n, "bad_id=%lld: must be 0 or 1", (long long)bad);
        return 0;
    }
    if (c->dims[D_VOCAB] > 2147483647LL) {
        snprintf(why, n, "vocab=%lld: ids are int32, so the vocabulary is at most 2^31-1 rows",
                 (long long)c->dims[D_VOCAB]);
        return 0;
    }
    if (c->dims[D_TOKENS] < 1 || c->dims[D_VOCAB] < 1 || c->dims[D_DIM] < 1) {
        snprintf(why, n, "tokens, vocab and dim must be >= 1");
        return 0;
    }
    return 1;
}

/* A gather does no arithmetic: flops = 0 (arithmetic intensity 0). Compulsory bytes:
 * the ids and the gathered rows (tokens x dim, not the whole table) read, out written. */
static kb_work embedding_work(const kb_case *c)
{
    double tokens = (double)c->dims[D_TOKENS], dim = (double)c->dims[D_DIM];
    double esz = (double)kb_dtype_size(c->dtype);
    kb_work w = { 0 };
    w.flops = 0.0;
    w.bytes_read = tokens * 4.0 + tokens * dim * esz;
    w.bytes_written = tokens * dim * esz;
    return w;
}

typedef struct {
    kb_dptr d_ids, d_table, d_out;
    int64_t ld;         /* [elements] row stride of table and out */
    float *want;        /* [tokens x ld] the gathered rows; OUT_SENTINEL in the padding */
    float *row;         /* [ld] scratch for one row in float */
    float *got;         /* [tokens x ld] the output in float, made only for --dump (kb_run_expose) */
    void *h_io;         /* storage-typed host buffer: the table on the way up, out on the way down */
    int32_t *ids;       /* [tokens] */
    float *table;       /* [vocab x ld] the table as the kernel reads it, only with --dump */
    float *ids_f;       /* [tokens] the ids as float, only with --dump */
} embedding_state;

static void embedding_free_state(embedding_state *s)
{
    if (!s)
        return;
    free(s->ids);
    free(s->h_io);
    free(s->got);
    free(s->row);
    free(s->want);
    free(s->table);
    free(s->ids_f);
    free(s);
}

/* With --dump: the table (dequantised, TABLE_PAD_VALUE in the padding) and the ids as float
 * arrays, so out = table[ids] can be recomputed from the dump alone. h: the table's bits. */
static void expose_inputs(kb_run *r, embedding_state *s, const char *h)
{
    const kb_case *c = r->c;
    int64_t tokens = c->dims[D_TOKENS], vocab = c->dims[D_VOCAB], shape[2] = { vocab, s->ld };
    if (!r->dumping || !(s->table = malloc((size_t)(vocab * s->ld) * sizeof(float))) ||
        !(s->ids_f = malloc((size_t)tokens * sizeof(float))))
        return;
    kb_host_to_f32(c->dtype, h, s->table, vocab * s->ld);
    for (int64_t t = 0; t < tokens; t++) s->ids_f[t] = (float)s->ids[t];
    kb_run_expose(r, "table", s->table, shape, 2);
    kb_run_expose(r, "ids", s->ids_f, &tokens, 1);
}

static kb_status embedding_setup(kb_run *r, void **state)
{
    const kb_case *c = r->c;
    int64_t tokens = c->dims[D_TOKENS], vocab = c->dims[D_VOCAB], dim = c->dims[D_DIM], ld = dim + c->pad;
    size_t esz = kb_dtype_size(c->dtype);
    size_t table_bytes = (size_t)(vocab * ld) * esz, out_bytes = (size_t)(tokens * ld) * esz;
    size_t io_bytes = table_bytes > out_bytes ? table_bytes : out_bytes;
    kb_status st = KB_ERR_OOM;
    embedding_state *s = calloc(1, sizeof *s);
    if (!s)
        return kb_run_fail(r, KB_ERR_OOM, "host allocation of the embedding state");
    s->ld = ld;
    s->ids = malloc((size_t)tokens * sizeof(int32_t));
    s->want = malloc((size_t)(tokens * ld) * sizeof(float));
    s->row = malloc((size_t)ld * sizeof(float));
    s->h_io = malloc(io_bytes);
    if (!s->ids || !s->want || !s->row || !s->h_io) {
        kb_run_fail(r, KB_ERR_OOM, "host allocation for %lld tokens of a %lld x %lld table", (long long)tokens,
                    (long long)vocab, (long long)ld);
        goto fail;
    }

    kb_rng rng;
    kb_rng_seed(&rng, c->seed);
    for (int64_t t = 0; t < tokens; t++)
        s->ids[t] = (int32_t)(kb_rng_u32(&rng) % (uint32_t)vocab);
    if (c->params[P_BAD_ID])
        s->ids[tokens / 2] = (int32_t)vocab;
    /* the ids the kernel will read, checked before any upload or launch */
    for (int64_t t = 0; t < tokens; t++) {
        if (s->ids[t] < 0 || s->ids[t] >= vocab) {
            st = kb_run_fail(r, KB_ERR_INPUT,
                             "bad id: ids[%lld] = %d is outside the vocabulary [0, %lld); case refused before "
                             "launch (the gather would read outside the table)",
                             (long long)t, (int)s->ids[t], (long long)vocab);
            goto fail;
        }
    }

    if ((st = kb_run_alloc(r, (size_t)tokens * sizeof(int32_t), &s->d_ids)) != KB_OK ||
        (st = kb_run_alloc(r, table_bytes, &s->d_table)) != KB_OK ||
        (st = kb_run_alloc(r, out_bytes, &s->d_out)) != KB_OK)
        goto fail;
    if ((st = kb_run_upload(r, s->d_ids, s->ids, (size_t)tokens * sizeof(int32_t))) != KB_OK)
        goto fail;

    /* table: uniform in [-1, 1), TABLE_PAD_VALUE in the padding */
    char *h = s->h_io;
    for (int64_t v = 0; v < vocab; v++) {
        for (int64_t j = 0; j < ld; j++)
            s->row[j] = j < dim ? kb_rng_uniform(&rng, -1.0f, 1.0f) : TABLE_PAD_VALUE;
        kb_host_from_f32(c->dtype, s->row, h + (size_t)(v * ld) * esz, ld);
    }
    if ((st = kb_run_upload(r, s->d_table, s->h_io, table_bytes)) != KB_OK)
        goto fail;
    expose_inputs(r, s, h);
    /* reference: the dequantised rows the ids name; the padding keeps the sentinel */
    for (int64_t t = 0; t < tokens; t++) {
        float *w = s->want + t * ld;
        kb_host_to_f32(c->dtype, h + (size_t)((int64_t)s->ids[t] * ld) * esz, w, dim);
        for (int64_t j = dim; j < ld; j++)
            w[j] = OUT_SENTINEL;
    }

    /* out: the sentinel everywhere, so unwritten elements and writes into the padding fail */
    for (int64_t j = 0; j < ld; j++)
        s->row[j] = OUT_SENTINEL;
    for (int64_t t = 0; t < tokens; t++)
        kb_host_from_f32(c->dtype, s->row, h + (size_t)(t * ld) * esz, ld);
    if ((st = kb_run_upload(r, s->d_out, s->h_io, out_bytes)) != KB_OK)
        goto fail;
    *state = s;
    return KB_OK;
fail:
    embedding_free_state(s);
    return st;
}

static kb_status embedding_enqueue(kb_run *r, void *state)
{
    const kb_case *c = r->c;
    embedding_state *s = state;
    int64_t tokens = c->dims[D_TOKENS], dim = c->dims[D_DIM], block = c->params[P_BLOCK];
    int64_t blocks = c->variant == V_VEC ? (tokens + block / 32 - 1) / (block / 32)
                                         : (tokens * dim + block - 1) / block;
    int64_t cap = c->params[P_MAX_GRID] > 0 ? c->params[P_MAX_GRID] : GRID_CAP;
    if (blocks > cap)
        blocks = cap; /* both kernels loop over the rest */
    kb_geom g = { { (unsigned)blocks, 1, 1 }, { (unsigned)block, 1, 1 }, 0, { 1, 1, 1 } };
    kb_arg args[] = { kb_arg_ptr(s->d_ids), kb_arg_ptr(s->d_table), kb_arg_ptr(s->d_out), kb_arg_i64(tokens),
                      kb_arg_i64(dim), kb_arg_i64(s->ld) };
    return kb_run_launch(r, r->f->variants[c->variant].entry, &g, args, 6);
}

static kb_status embedding_check(kb_run *r, void *state, kb_verify *v)
{
    const kb_case *c = r->c;
    embedding_state *s = state;
    int64_t tokens = c->dims[D_TOKENS], ld = s->ld;
    size_t esz = kb_dtype_size(c->dtype);
    kb_status st = kb_run_download(r, s->h_io, s->d_out, (size_t)(tokens * ld) * esz);
    if (st != KB_OK)
        return st;
    /* A gather moves bits without arithmetic: the output must equal the table exactly,
     * so the tolerance is 0 (not kb_tolerance, which allows for rounding). */
    kb_verify_init(v, 0.0, 0.0);
    for (int64_t t = 0; t < tokens; t++) {
        kb_host_to_f32(c->dtype, (char *)s->h_io + (size_t)(t * ld) * esz, s->row, ld);
        kb_verify_f32(v, s->row, s->want + t * ld, ld);
    }
    /* for --dump: the whole output beside the reference, padding included */
    int64_t shape[2] = { tokens, ld };
    if (!s->got && (s->got = malloc((size_t)(tokens * ld) * sizeof(float))) != NULL)
        kb_host_to_f32(c->dtype, s->h_io, s->got, tokens * ld);
    if (s->got)
        kb_run_expose(r, "out", s->got, shape, 2);
    kb_run_expose(r, "ref", s->want, shape, 2);
    return KB_OK;
}

static void embedding_teardown(kb_run *r, void *state)
{
    embedding_free_state(state);
}

/* estimate: scalar one element per thread, vec one row per warp in 16-byte accesses */
static int embedding_traffic(const kb_case *c, const kb_traffic_gpu *g, kb_traffic *t)
{
    int64_t tokens = c->dims[D_TOKENS], dim = c->dims[D_DIM], block = c->params[P_BLOCK];
    int64_t blocks = c->variant == V_VEC ? (tokens + block / 32 - 1) / (block / 32) : (tokens * dim + block - 1) / block;
    kb_stream_shape s = { blocks > GRID_CAP ? GRID_CAP : blocks, (int)block, 0,
                          c->variant == V_VEC ? 16.0 : (double)kb_dtype_size(c->dtype), KB_STREAM_UNROLL };
    (void)g;
    return kb_stream_traffic(kb_families[c->family], c, &s, t);
}

const kb_family kb_family_embedding = {
    .name = "embedding",
    .source = "embedding.cu",
    .about = "embedding lookup: gather table rows by int32 ids (no arithmetic)",
    .variants = variants, .n_variants = KB_COUNT(variants),
    .dims = dims, .n_dims = KB_COUNT(dims),
    .params = params, .n_params = KB_COUNT(params),
    .valid = embedding_valid,
    .defines = NULL,
    .work = embedding_work,
    .setup = embedding_setup,
    .enqueue = embedding_enqueue,
    .check = embedding_check,
    .teardown = embedding_teardown,
    .traffic = embedding_traffic,
};
