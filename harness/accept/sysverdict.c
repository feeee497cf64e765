/* sysverdict.c - a node's verdict from what one rank measured (see sysverdict.h). */
#include "accept/sysverdict.h"

#include "accept/fleet_stats.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const pair_names[] = { "?", "X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS" };
_Static_assert(sizeof pair_names / sizeof pair_names[0] == KB_PAIR_COUNT, "one name per kb_sys_pair");

const char *kb_sys_pair_name(kb_sys_pair l) { return l < KB_PAIR_COUNT ? pair_names[l] : "?"; }

static void say(kb_acc_result *r, kb_acc_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    r->status = st;
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
}

/* CUDA ordinal i (a P2P pair's end) as a reader finds the GPU: "GPU 3 (NVML 5, 00000000:3B:00.0)",
 * or "GPU 3" when the tables are not by CUDA ordinal (NVML not read, or CUDA's bus ids not: entry 3
 * is then NVML's third GPU, not necessarily CUDA's) or CUDA's device has no entry. */
static const char *gpu(const kb_sys_node *n, int i, char *buf, size_t size)
{
    if (i >= n->n || !n->by_cuda || i >= n->cuda_n)
        snprintf(buf, size, "GPU %d", i);
    else
        snprintf(buf, size, "GPU %d (NVML %d, %s)", i, n->gpu_nvml[i], n->gpu_bus[i]);
    return buf;
}

/* Entry i of NVML's tables (NVLink, topology) as a reader finds the GPU: "GPU 3 (NVML 5,
 * 00000000:3B:00.0)" (CUDA ordinal 3), "NVML GPU 5 (00000000:3B:00.0, not shown to CUDA)", or
 * "NVML GPU 5 (00000000:3B:00.0)" when the tables are in NVML's order (no CUDA ordinal known). */
static const char *entry(const kb_sys_node *n, int i, char *buf, size_t size)
{
    if (i >= n->n)
        snprintf(buf, size, "GPU %d", i);
    else if (!n->by_cuda)
        snprintf(buf, size, "NVML GPU %d (%s)", n->gpu_nvml[i], n->gpu_bus[i]);
    else if (i >= n->cuda_n)
        snprintf(buf, size, "NVML GPU %d (%s, not shown to CUDA)", n->gpu_nvml[i], n->gpu_bus[i]);
    else
        snprintf(buf, size, "GPU %d (NVML %d, %s)", i, n->gpu_nvml[i], n->gpu_bus[i]);
    return buf;
}

/* Entry i's short name: "GPU 3" (CUDA ordinal), "NVML GPU 5" for one CUDA does not show or when
 * the tables are in NVML's order. */
static const char *tag(const kb_sys_node *n, int i, char *buf, size_t size)
{
    if (i < n->n && (!n->by_cuda || i >= n->cuda_n))
        snprintf(buf, size, "NVML GPU %d", n->gpu_nvml[i]);
    else
        snprintf(buf, size, "GPU %d", i);
    return buf;
}

/* A pair measured: peer access, no failed call. */
static int measured(const kb_sys_node *n, int i, int j)
{
    return i != j && !n->no_peer[i][j] && !n->p2p_failed[i][j][0];
}

static int named(const kb_sys_coll *c, int rank)
{
    for (int i = 0; i < c->n_suspects; i++)
        if (c->suspects[i] == rank)
            return 1;
    return 0;
}

static void judge_coll(const kb_sys_coll *c, kb_acc_result *r)
{
    if (!c->ran && !c->failed) {   /* could not start: no NCCL, gated out, no rendezvous */
        say(r, KB_ACC_SKIP, "not run: %s", c->why);
        return;
    }
    r->have_value = 1;
    r->value = (double)c->wrong_elements;
    if (c->failed) {   /* the results before the failure are judged too: they are in the counts */
        say(r, KB_ACC_FAIL, "the sweep failed after %d results (%d wrong, %lld elements): %s", c->n_results,
            c->n_wrong, (long long)c->wrong_elements, c->why);
        return;
    }
    if (!c->n_wrong) {
        say(r, KB_ACC_PASS, "%d collective results on %d ranks verified element by element (6 ops, every size of "
            "the sweep)", c->n_results, c->nranks);
        return;
    }
    char who[96] = "";
    for (int i = 0, len = 0; i < c->n_suspects && len < (int)sizeof who; i++)
        len += snprintf(who + len, sizeof who - (size_t)len, "%s%d", i ? ", " : "", c->suspects[i]);
    snprintf(r->detail, sizeof r->detail, "%s", c->first_wrong);
    if (!c->culprits_checked)
        say(r, KB_ACC_FAIL, "%d of %d results wrong on this rank (%lld elements); contributions are not "
            "cross-checked through NCCL, so no rank is named; first: %s", c->n_wrong, c->n_results,
            (long long)c->wrong_elements, c->first_wrong);
    else if (named(c, c->rank))
        say(r, KB_ACC_FAIL, "this rank's contribution was wrong (named by every rank: rank%s %s): %d of %d results "
            "wrong, %lld elements; first: %s", c->n_suspects > 1 ? "s" : "", who, c->n_wrong, c->n_results,
            (long long)c->wrong_elements, c->first_wrong);
    else if (c->n_suspects)
        say(r, KB_ACC_PASS, "this rank's contribution verified; %d of %d results were wrong because of rank%s %s "
            "(named by every rank)", c->n_wrong, c->n_results, c->n_suspects > 1 ? "s" : "", who);
    else
        say(r, KB_ACC_FAIL, "%d of %d results wrong (%lld elements) and no rank's contribution was: the transport "
            "(links, copies) corrupted them; first: %s", c->n_wrong, c->n_results, (long long)c->wrong_elements,
            c->first_wrong);
}

/* A floor test: value against the threshold, or SKIP with why. */
static void judge_floor(const kb_acc_threshold *th, const char *unknown, const char *clock, double value,
                        kb_acc_result *r)
{
    r->have_value = 1;
    r->value = value;
    snprintf(r->clock, sizeof r->clock, "%s", clock);
    if (!th->have) {
        say(r, KB_ACC_SKIP, "no threshold: unknown (%.300s)", unknown);
        return;
    }
    snprintf(r->source, sizeof r->source, "%s", th->source);
    if (strcmp(clock, "gpu")) {
        say(r, KB_ACC_SKIP, "emulator: CPU timings (the threshold %.4g GB/s is a GPU's)", th->reference * th->fraction);
        return;
    }
    r->have_threshold = 1;
    r->reference = th->reference;
    r->fraction = th->fraction;
    r->threshold = th->reference * th->fraction;
    if (value >= r->threshold)
        say(r, KB_ACC_PASS, "%.4g GB/s reaches the floor %.4g GB/s (%.4g x %.2f)", value, r->threshold, th->reference,
            th->fraction);
    else
        say(r, KB_ACC_FAIL, "%.4g GB/s misses the floor %.4g GB/s (%.4g x %.2f)", value, r->threshold, th->reference,
            th->fraction);
}

static void judge_busbw(const kb_acc_system *s, const kb_sys_coll *c, kb_acc_result *r, kb_acc_result *busy)
{
    if (!c->ran) {
        say(r, KB_ACC_SKIP, "not run: %s", c->why);
        say(busy, KB_ACC_SKIP, "not run: %s", c->why);
        return;
    }
    snprintf(r->detail, sizeof r->detail, "all_reduce fp32 sum %llu B on %d ranks", (unsigned long long)c->large_bytes,
             c->nranks);
    judge_floor(&s->busbw, s->busbw_unknown, c->clock, c->busbw_large, r);
    if (c->nranks < 2)
        say(r, KB_ACC_SKIP, "one rank: busbw is 0 by definition (nccl-tests' factor 2(n-1)/n); run a rank per GPU");
    if (c->n_wrong && r->status == KB_ACC_PASS)
        say(r, KB_ACC_SKIP, "not judged: results were wrong (collectives)");
    snprintf(busy->detail, sizeof busy->detail, "%s", r->detail);
    snprintf(busy->clock, sizeof busy->clock, "%s", c->clock);
    if (!(c->busy_us_large >= 0) || !strcmp(c->clock, "gpu")) {
        say(busy, KB_ACC_SKIP, "not measured: NCCL does not say how long a rank waited for its peers");
        return;
    }
    busy->have_value = 1;
    busy->value = c->busy_us_large;
    say(busy, KB_ACC_SKIP, "relative only (kbench fleet compares the node's ranks): %.4g us busy per call; the "
        "busiest rank was %d", c->busy_us_large, c->busiest);
}

/* A pair whose bandwidth is an outlier among the node's pairs connected the same way (NVLink with
 * NVLink, SYS with SYS: a PCIe node's pairs across sockets are slower by design): below
 * median - k x max(1.4826 MAD, 2% of the median), fleet_stats.h's rule, with 3 pairs or more.
 * 1 with the pair and the bound in *a, *b, *bound, *median; 0 when none. */
static int pair_outlier(const kb_sys_node *n, int *a, int *b, double *bound, double *median)
{
    double x[KB_SYS_MAX_GPUS * KB_SYS_MAX_GPUS];
    int g = n->p2p_n, by_topo = n->topo_read && n->by_cuda && n->p2p_n <= n->cuda_n;   /* same ordinals */
    for (int i = 0; i < g; i++)
        for (int j = 0; j < g; j++) {
            if (!measured(n, i, j))
                continue;
            int m = 0;
            for (int p = 0; p < g; p++)
                for (int q = 0; q < g; q++)
                    if (measured(n, p, q) && (!by_topo || n->topo[p][q] == n->topo[i][j]))
                        x[m++] = n->bw_uni[p][q];
            kb_fleet_dist d;
            if (kb_fleet_dist_of(x, m, KB_FLEET_DEFAULT_K, KB_FLEET_DEFAULT_REL_FLOOR, &d) == 1 &&
                kb_fleet_is_outlier(&d, n->bw_uni[i][j], 0)) {
                *a = i;
                *b = j;
                *bound = d.low;
                *median = d.median;
                return 1;
            }
        }
    return 0;
}

/* FAIL naming the pairs whose copies failed, with the driver's error; the rest were measured. */
static void failed_pairs(const kb_sys_node *n, int a, int b, kb_acc_result *r)
{
    char list[400] = "", x[96], y[96];
    int len = 0, shown = 0, fa = -1, fb = -1;
    for (int i = 0; i < n->p2p_n; i++)
        for (int j = 0; j < n->p2p_n; j++)
            if (n->p2p_failed[i][j][0] && shown++ < 4 && len < (int)sizeof list - 1) {
                len += snprintf(list + len, sizeof list - (size_t)len, "%sGPU %d -> GPU %d (%s)", len ? ", " : "", i,
                                j, n->p2p_failed[i][j]);
                if (fa < 0) {
                    fa = i;
                    fb = j;
                }
            }
    snprintf(r->detail, sizeof r->detail, "GPU %d -> GPU %d", fa, fb);
    char rest[200] = "no other pair was measured";
    if (a >= 0)
        snprintf(rest, sizeof rest, "the other pairs were measured, the slowest %d -> %d at %.4g GB/s", a, b,
                 n->bw_uni[a][b]);
    say(r, KB_ACC_FAIL, "copies failed on %d pair%s: %s%s; %s; %s -> %s", n->p2p_n_failed,
        n->p2p_n_failed > 1 ? "s" : "", list, shown > 4 ? ", ..." : "", rest, gpu(n, fa, x, sizeof x),
        gpu(n, fb, y, sizeof y));
}

/* The slowest pair's unidirectional bandwidth (and which pair). */
static void judge_p2p(const kb_acc_system *s, const kb_sys_node *n, kb_acc_result *r)
{
    char x[96], y[96];
    if (!n->p2p_read) {
        say(r, KB_ACC_SKIP, "not measured: %s", *n->p2p_why ? n->p2p_why : n->why);
        return;
    }
    int a = -1, b = -1;
    for (int i = 0; i < n->p2p_n; i++)
        for (int j = 0; j < n->p2p_n; j++)
            if (measured(n, i, j) && (a < 0 || n->bw_uni[i][j] < n->bw_uni[a][b])) {
                a = i;
                b = j;
            }
    int na = -1, nb = -1;   /* the first pair without peer access: not measured, not in the statistics */
    for (int i = 0; i < n->p2p_n && na < 0; i++)
        for (int j = 0; j < n->p2p_n && na < 0; j++)
            if (n->no_peer[i][j]) {
                na = i;
                nb = j;
            }
    if (na >= 0 && s->topology == KB_SYS_TOPO_NVSWITCH) {
        snprintf(r->detail, sizeof r->detail, "GPU %d -> GPU %d", na, nb);
        say(r, KB_ACC_FAIL, "no peer access between GPU %d and GPU %d, the system connects every pair through "
            "NVLink; %s - %s", na, nb, gpu(n, na, x, sizeof x), gpu(n, nb, y, sizeof y));
        return;
    }
    if (n->p2p_n_failed) {
        failed_pairs(n, a, b, r);
        return;
    }
    if (a < 0) {
        say(r, KB_ACC_SKIP, na >= 0 ? "no pair with peer access to measure" : "one GPU: no pair to measure");
        return;
    }
    if (n->p2p_wrong_a >= 0) {
        snprintf(r->detail, sizeof r->detail, "GPU %d -> GPU %d", n->p2p_wrong_a, n->p2p_wrong_b);
        say(r, KB_ACC_FAIL, "GPU %d -> GPU %d: a copy read back wrong; %s -> %s", n->p2p_wrong_a, n->p2p_wrong_b,
            gpu(n, n->p2p_wrong_a, x, sizeof x), gpu(n, n->p2p_wrong_b, y, sizeof y));
        return;
    }
    snprintf(r->detail, sizeof r->detail, "GPU %d -> GPU %d", a, b);
    judge_floor(&s->p2p, s->p2p_unknown, n->clock ? n->clock : "gpu", n->bw_uni[a][b], r);
    size_t len = strlen(r->reason);
    snprintf(r->reason + len, sizeof r->reason - len, "; slowest pair GPU %d -> GPU %d (bidirectional %.4g GB/s): "
             "%s -> %s", a, b, n->bw_bidir[a][b], gpu(n, a, x, sizeof x), gpu(n, b, y, sizeof y));
    len = strlen(r->reason);
    if (na >= 0)
        snprintf(r->reason + len, sizeof r->reason - len, "; no peer access between GPU %d and GPU %d (not "
                 "measured)", na, nb);
    double bound, median;
    if (r->status != KB_ACC_FAIL && pair_outlier(n, &a, &b, &bound, &median)) {
        snprintf(r->detail, sizeof r->detail, "GPU %d -> GPU %d", a, b);
        say(r, KB_ACC_FAIL, "pair outlier: GPU %d -> GPU %d %.4g GB/s below %.4g (median %.4g of the node's pairs "
            "connected the same way, MAD rule); %s -> %s", a, b, n->bw_uni[a][b], bound, median,
            gpu(n, a, x, sizeof x), gpu(n, b, y, sizeof y));
    }
}

/* NVML's tables cannot be paired with CUDA's devices (a CUDA device NVML does not find, two CUDA
 * devices on one GPU: MIG): that says nothing about the hardware, the table's test is SKIP. */
static int map_failed(const kb_sys_node *n, kb_acc_result *r)
{
    if (n->map_failed)
        say(r, KB_ACC_SKIP, "not judged: NVML's GPUs could not be paired with CUDA's devices: %s", n->why);
    return n->map_failed;
}

static void judge_nvlink(const kb_acc_system *s, const kb_sys_node *n, kb_acc_result *r)
{
    char x[96];
    if (map_failed(n, r))
        return;
    if (!n->links_read || !n->n) {
        say(r, KB_ACC_SKIP, "not read: %s", n->n ? n->links_why : n->why);
        return;
    }
    if (s->nvlink_links < 0) {
        say(r, KB_ACC_SKIP, "no expected link count: unknown (%.300s)", s->nvlink_source);
        return;
    }
    snprintf(r->source, sizeof r->source, "%s", s->nvlink_source);
    r->have_value = 1;
    r->value = n->links[0];
    for (int i = 0; i < n->n; i++)
        if (n->links[i] != s->nvlink_links) {
            r->value = n->links[i];
            snprintf(r->detail, sizeof r->detail, "%s", entry(n, i, x, sizeof x));
            say(r, KB_ACC_FAIL, "%s: %d of %d NVLink links active, the system has %d%s%s%s", x, n->links[i],
                n->links_max[i], s->nvlink_links, *n->links_down[i] ? " (inactive: link " : "", n->links_down[i],
                *n->links_down[i] ? ")" : "");
            return;
        }
    say(r, KB_ACC_PASS, "%d GPUs, each with %d active NVLink links", n->n, s->nvlink_links);
}

static void judge_topology(const kb_acc_system *s, const kb_sys_node *n, kb_acc_result *r)
{
    char x[96], y[96];
    if (map_failed(n, r))
        return;
    if (!n->topo_read || !n->n) {
        say(r, KB_ACC_SKIP, "not read: %s", n->n ? n->topo_why : n->why);
        return;
    }
    if (s->topology == KB_SYS_TOPO_ANY) {
        say(r, KB_ACC_SKIP, "the system expects no particular topology (%.300s)", s->topology_source);
        return;
    }
    snprintf(r->source, sizeof r->source, "%s", s->topology_source);
    if (s->gpus && n->n != s->gpus) {
        say(r, KB_ACC_FAIL, "%d GPUs found, the system has %d", n->n, s->gpus);
        return;
    }
    int want_nv = s->topology == KB_SYS_TOPO_NVSWITCH;
    for (int i = 0; i < n->n; i++)
        for (int j = i + 1; j < n->n; j++)
            if ((n->topo[i][j] == KB_PAIR_NV) != want_nv) {
                char ti[32], tj[32];
                snprintf(r->detail, sizeof r->detail, "%s - %s", tag(n, i, ti, sizeof ti), tag(n, j, tj, sizeof tj));
                say(r, KB_ACC_FAIL, "%s: %s, the system connects every pair %s; %s - %s", r->detail,
                    kb_sys_pair_name(n->topo[i][j]), want_nv ? "by NVLink" : "by PCIe (no NVLink)",
                    entry(n, i, x, sizeof x), entry(n, j, y, sizeof y));
                return;
            }
    say(r, KB_ACC_PASS, "%d GPUs, every pair %s", n->n, want_nv ? "by NVLink" : "by PCIe");
}

void kb_acc_system_judge(const kb_acc_system *s, const kb_sys_coll *c, const kb_sys_node *node, kb_acc_verdict *out)
{
    memset(out, 0, sizeof *out);
    out->system = 1;
    for (int t = 0; t < KB_ACC_FIRST_SYSTEM; t++)
        say(&out->r[t], KB_ACC_SKIP, "%s", "a GPU's test: kbench accept without --system runs it");
    judge_coll(c, &out->r[KB_ACC_COLL]);
    judge_busbw(s, c, &out->r[KB_ACC_BUSBW], &out->r[KB_ACC_COLL_BUSY]);
    judge_p2p(s, node, &out->r[KB_ACC_P2P]);
    judge_nvlink(s, node, &out->r[KB_ACC_NVLINK]);
    judge_topology(s, node, &out->r[KB_ACC_TOPOLOGY]);
    kb_acc_verdict_finish(out);
}
