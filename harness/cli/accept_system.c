/* accept_system.c - the measurements of `kbench accept --system` (see accept_system.h). */
#include "cli/accept_system.h"

#include "accept/sysnccl.h"
#include "collective/coll_bench.h"
#include "collective/rendezvous.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *env_get(void *user, const char *name)
{
    (void)user;
    return getenv(name);
}

/* One result as a JSON line (schema kbench-coll, docs/collectives.md "Records"). */
static void record_line(FILE *f, const kb_coll_result *r, int rank)
{
    json_t *sus = json_array();
    for (int i = 0; i < r->n_suspects; i++)
        json_array_append_new(sus, json_integer(r->suspects[i]));
    json_t *o = json_pack("{s:s, s:i, s:i, s:i, s:s, s:s, s:s, s:i, s:I, s:I, s:i, s:i, s:f, s:f, s:f, s:f, s:f, "
                          "s:f, s:i, s:I, s:I, s:f, s:f, s:o, s:s, s:s}",
                          "schema", "kbench-coll", "schema_version", 1, "rank", rank, "nranks", r->desc.nranks, "op",
                          kb_coll_op_name(r->desc.op), "dtype", kb_dtype_name(r->desc.dtype), "redop",
                          kb_coll_redop_name(r->desc.redop), "root", r->desc.root, "count", (json_int_t)r->desc.count,
                          "size_bytes", (json_int_t)r->size_bytes, "warmup", r->warmup, "iters", r->iters, "time_us",
                          r->time_us, "time_us_max", r->time_us_max, "algbw_gbs", r->algbw_gbs, "busbw_gbs",
                          r->busbw_gbs, "busy_us", r->busy_us, "busy_us_max", r->busy_us_max, "busiest", r->busiest,
                          "wrong", (json_int_t)r->check.wrong, "wrong_all", (json_int_t)r->wrong_all, "max_err",
                          isfinite(r->check.max_err) ? r->check.max_err : -1.0, "tol", r->check.max_tol, "suspects",
                          sus, "clock", r->clock, "launch", r->launch ? r->launch : "eager");
    if (o) {
        json_dumpf(o, f, JSON_COMPACT);
        fputc('\n', f);
        fflush(f);
    }
    json_decref(o);
}

/* Fold one result into the rank's summary. */
static void fold(const kb_coll_result *r, kb_sys_coll *c, kb_coll_check *named)
{
    c->n_results++;
    if (r->wrong_all > 0) {
        if (!c->n_wrong++)
            snprintf(c->first_wrong, sizeof c->first_wrong, "%s %s %s %llu B: %lld elements wrong over the ranks",
                     kb_coll_op_name(r->desc.op), kb_dtype_name(r->desc.dtype), kb_coll_redop_name(r->desc.redop),
                     (unsigned long long)r->size_bytes, (long long)r->wrong_all);
        c->wrong_elements += r->wrong_all;
    }
    for (int i = 0; i < r->n_suspects; i++)
        kb_coll_add_suspect(named, r->suspects[i]);
}

static void print_row(const kb_coll_result *r)
{
    printf("%12llu %12zu %6s %5s %10.1f %8.3f %8.3f %8lld\n", (unsigned long long)r->size_bytes, r->desc.count,
           kb_dtype_name(r->desc.dtype), kb_coll_redop_name(r->desc.redop), r->time_us, r->algbw_gbs, r->busbw_gbs,
           (long long)r->wrong_all);
}

static void print_head(int nranks, const char *clock)
{
    printf("kbench accept: all_reduce on %d ranks (clock %s%s)\n%12s %12s %6s %5s %10s %8s %8s %8s\n", nranks, clock,
           strcmp(clock, "cpu") ? "" : ": the emu transport, not a GPU", "size (B)", "count", "type", "redop",
           "time (us)", "algbw", "busbw", "#wrong");
}

/* Where each result goes: its record, the rank's summary, the all_reduce table and sweep. */
typedef struct {
    FILE *f;
    int show;                   /* print the all_reduce table (rank 0); 2 once its head is out */
    kb_sys_coll *c;
    kb_coll_check named;
    json_t *sweep;
} taker;

static void take(void *user, const kb_coll_result *r)
{
    taker *t = user;
    record_line(t->f, r, t->c->rank);
    fold(r, t->c, &t->named);
    t->c->n_suspects = t->named.n_suspects;
    memcpy(t->c->suspects, t->named.suspects, sizeof t->c->suspects);
    if (r->desc.op != KB_COLL_ALL_REDUCE || r->desc.dtype != KB_DT_FP32 || (r->launch && strcmp(r->launch, "eager")))
        return;   /* the table, the sweep and the busbw floor: eager calls, as nccl-tests' default */
    if (t->show == 1)
        print_head(r->desc.nranks, r->clock);
    if (t->show) {
        t->show = 2;
        print_row(r);
    }
    json_array_append_new(t->sweep, json_pack("{s:I, s:f, s:f, s:f, s:I}", "size_bytes", (json_int_t)r->size_bytes,
                                              "time_us", r->time_us, "algbw_gbs", r->algbw_gbs, "busbw_gbs",
                                              r->busbw_gbs, "wrong_all", (json_int_t)r->wrong_all));
    t->c->large_bytes = r->size_bytes;   /* sizes ascend: the last is the largest */
    t->c->busbw_large = r->busbw_gbs;
    t->c->busy_us_large = r->busy_us;
    t->c->busiest = r->busiest;
}

/* Every op at every size (fp32 sum), all_reduce also bf16 and int8. KB_OK or the transport's error. */
static kb_status sweep_all(kb_coll_comm *cm, const uint64_t *sizes, int ns, taker *t)
{
    static const kb_dtype extra[] = { KB_DT_BF16, KB_DT_INT8 };
    kb_status st = KB_OK;
    for (int op = 0; op < KB_COLL_OP_COUNT && st == KB_OK; op++)
        for (int k = 0; k < ns && st == KB_OK; k++)
            for (int dt_i = -1; dt_i < (op == KB_COLL_ALL_REDUCE ? 2 : 0) && st == KB_OK; dt_i++) {
                kb_dtype dt = dt_i < 0 ? KB_DT_FP32 : extra[dt_i];
                kb_coll_desc d = { (kb_coll_op)op, dt, KB_REDOP_SUM, cm->size, 0,
                                   kb_coll_count_of_size((kb_coll_op)op, sizes[k], kb_coll_esz(dt), cm->size),
                                   1000u + (unsigned)(op * 64 + k) };
                kb_coll_result r;
                if (d.count && (st = kb_coll_bench(cm, &d, 1, 5, &r)) == KB_OK)
                    take(t, &r);
            }
    return st;
}

/* The communicator of this job step's ranks over the emu transport. */
static kb_status open_comm(const kb_identity *id, kb_rdv *rdv, kb_coll_comm **cm, char *err, size_t n)
{
    kb_coll_comm_opts o = { rdv, id->host, getenv("KBENCH_COLL_ADDR"), 0, 0, 0, 1, 0 };
    if (kb_rdv_setup(env_get, NULL, id, rdv, err, n) != 0 ||
        kb_coll_faults_read(env_get, NULL, id->rank, &o.slowdown, &o.corrupt, err, n) != 0)
        return KB_ERR_SETUP;
    return kb_coll_comm_init(&o, cm, err, n);
}

/* The sweep through NCCL on the cuda backend (accept/sysnccl.h). */
static void nccl_measure(const kb_acc_system *s, const kb_identity *id, int device, taker *t)
{
    uint64_t sizes[KB_COLL_MAX_SIZES];
    char why[1024];
    int ns = kb_coll_sweep_sizes(&s->sweep, sizes, KB_COLL_MAX_SIZES, why, sizeof why);
    t->c->clock = "gpu";
    int rc = ns > 0 ? kb_acc_nccl_sweep(id, device, sizes, ns, take, t, why, sizeof why) : -1;
    if (rc == 0) {
        t->c->ran = 1;
        return;
    }
    t->c->failed = rc == -2;   /* after the communicator was up: a FAIL, not a SKIP */
    fprintf(stderr, "kbench accept: rank %d: collectives through NCCL: %s\n", id->rank, why);
    snprintf(t->c->why, sizeof t->c->why, "NCCL: %.240s", why);
}

int kb_accept_coll_measure(const kb_acc_system *s, const kb_identity *id, const char *backend, int device,
                           const char *coll_records, int quiet, kb_sys_coll *c, json_t *sweep)
{
    memset(c, 0, sizeof *c);
    c->rank = id->rank;
    c->nranks = id->world_size > 0 ? id->world_size : 1;
    c->clock = "cpu";
    c->busy_us_large = -1;
    uint64_t sizes[KB_COLL_MAX_SIZES];
    char err[1024];
    int ns = kb_coll_sweep_sizes(&s->emu_sweep, sizes, KB_COLL_MAX_SIZES, err, sizeof err);
    FILE *f = fopen(coll_records, "w");   /* a new name (time and pid): empty when nothing runs */
    if (!f || ns < 0) {
        fprintf(stderr, "kbench accept: %s: %s\n", coll_records, f ? err : "cannot be written");
        if (f)
            fclose(f);
        return KB_EXIT_SETUP;
    }
    taker t = { f, id->rank == 0 && !quiet, c, { 0 }, sweep };
    if (strcmp(backend, "emu")) {
        nccl_measure(s, id, device, &t);
        fclose(f);
        return 0;
    }
    c->culprits_checked = 1;
    kb_rdv rdv;
    kb_coll_comm *cm = NULL;
    kb_status st = open_comm(id, &rdv, &cm, err, sizeof err);
    if (st == KB_OK) {
        c->nranks = cm->size;
        st = sweep_all(cm, sizes, ns, &t);
        if (st != KB_OK)
            snprintf(err, sizeof err, "%s", cm->err);
        kb_coll_comm_free(cm);
    }
    fclose(f);
    c->ran = st == KB_OK;
    if (st != KB_OK) {
        fprintf(stderr, "kbench accept: rank %d: collectives: %s\n", id->rank, err);
        snprintf(c->why, sizeof c->why, "%s: %.200s", kb_status_name(st), err);
    }
    return 0;
}

/* A P2P matrix by CUDA ordinal: null on the diagonal and in a failed cell. */
static json_t *matrix(const kb_sys_node *node, const double m[KB_SYS_MAX_GPUS][KB_SYS_MAX_GPUS], int n)
{
    json_t *rows = json_array();
    for (int i = 0; i < n; i++) {
        json_t *row = json_array();
        for (int j = 0; j < n; j++)
            json_array_append_new(row, i == j || node->p2p_failed[i][j][0] ? json_null() : json_real(m[i][j]));
        json_array_append_new(rows, row);
    }
    return rows;
}

/* The tables' rows: each one's CUDA ordinal (null: CUDA does not show it), NVML index and bus id. */
static json_t *gpu_map(const kb_sys_node *node)
{
    json_t *a = json_array();
    for (int i = 0; i < node->n; i++) {
        int cuda = !node->by_cuda || i < node->cuda_n;
        json_array_append_new(a, json_pack("{s:o, s:i, s:s}", "cuda", cuda && node->by_cuda ? json_integer(i) :
                                           json_null(), "nvml", node->gpu_nvml[i], "bus_id", node->gpu_bus[i]));
    }
    return a;
}

json_t *kb_accept_system_block(const kb_acc_system *s, const char *coll_records, json_t *sweep, const kb_sys_node *node)
{
    json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:O}", "name", s->name, "description", s->description,
                          "file", s->file, "gpus", s->gpus, "topology", kb_sys_topo_name(s->topology), "coll_records",
                          coll_records, "all_reduce", sweep);
    if (o && node->n) {
        json_t *topo = json_array(), *links = json_array();
        for (int i = 0; i < node->n; i++) {
            json_t *row = json_array();
            for (int j = 0; j < node->n; j++) {
                char cell[16];   /* nvidia-smi topo -m's NV<n> when the links were counted, else NV */
                snprintf(cell, sizeof cell, "%s", kb_sys_pair_name(node->topo[i][j]));
                if (node->topo[i][j] == KB_PAIR_NV && node->nv_counts_read && node->nv_links[i][j] > 0)
                    snprintf(cell, sizeof cell, "NV%d", node->nv_links[i][j]);
                json_array_append_new(row, json_string(cell));
            }
            json_array_append_new(topo, row);
            json_array_append_new(links, json_integer(node->links[i]));
        }
        json_object_set_new(o, "gpus_found", json_integer(node->n));
        json_object_set_new(o, "gpus_map", gpu_map(node));
        if (node->map_note[0])
            json_object_set_new(o, "gpus_note", json_string(node->map_note));
        json_object_set_new(o, "topology_matrix", node->topo_read ? topo : (json_decref(topo), json_null()));
        json_object_set_new(o, "nvlink_active", node->links_read ? links : (json_decref(links), json_null()));
        if (!node->nv_counts_read)
            json_object_set_new(o, "nvlink_pairs_why", json_string(node->nv_counts_why));
    }
    if (o && node->p2p_read) {
        json_object_set_new(o, "p2p_uni_gbs", matrix(node, node->bw_uni, node->p2p_n));
        json_object_set_new(o, "p2p_bidir_gbs", matrix(node, node->bw_bidir, node->p2p_n));
        json_object_set_new(o, "p2p_latency_us", matrix(node, node->lat_us, node->p2p_n));
        json_t *failed = json_array();
        for (int i = 0; i < node->p2p_n; i++)
            for (int j = 0; j < node->p2p_n; j++)
                if (node->p2p_failed[i][j][0])
                    json_array_append_new(failed, json_pack("{s:i, s:i, s:s}", "from", i, "to", j, "error",
                                                            node->p2p_failed[i][j]));
        json_object_set_new(o, "p2p_failed", failed);
        json_object_set_new(o, "p2p_bidir_concurrent", json_boolean(node->p2p_bidir_gated));
        if (!node->p2p_bidir_gated)
            json_object_set_new(o, "p2p_bidir_why", json_string(node->p2p_gate_why));
        json_t *seq = json_array();   /* peer access one way only: the pair's directions not gated */
        for (int i = 0; i < node->p2p_n; i++)
            for (int j = 0; j < node->p2p_n; j++)
                if (node->p2p_one_way[i][j])
                    json_array_append_new(seq, json_pack("{s:i, s:i}", "from", i, "to", j));
        json_object_set_new(o, "p2p_bidir_sequential", seq);
        if (node->p2p_n_failed)
            json_object_set_new(o, "p2p_failed_first", json_string(node->p2p_fail_why));
    }
    return o;
}
