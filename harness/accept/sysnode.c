/* sysnode.c - the node's GPUs for a system verdict (see sysnode.h). */
#include "accept/sysnode.h"

#include "backend/cuda/cuda_p2p.h"
#include "backend/cuda/nvml_topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(KB_P2P_BUS_ID_LEN == KB_NVML_BUS_ID_LEN, "CUDA's bus ids are handed to NVML as they are");

/* NVML's node (backend/cuda/nvml_topo.h) as the judge reads it. */
static void from_nvml(const kb_nvml_node *m, kb_sys_node *node)
{
    static const kb_sys_pair pairs[] = { KB_PAIR_UNKNOWN, KB_PAIR_X, KB_PAIR_NV, KB_PAIR_PIX, KB_PAIR_PXB,
                                         KB_PAIR_PHB, KB_PAIR_NODE, KB_PAIR_SYS };
    _Static_assert(sizeof pairs / sizeof pairs[0] == KB_NVML_PATH_COUNT, "one pair per NVML path");
    node->n = m->n < KB_SYS_MAX_GPUS ? m->n : KB_SYS_MAX_GPUS;
    snprintf(node->why, sizeof node->why, "%s", m->why);
    node->by_cuda = m->by_cuda;
    node->cuda_n = m->cuda_n;
    node->map_failed = m->map_failed;
    snprintf(node->map_note, sizeof node->map_note, "%s", m->note);
    node->links_read = m->links_read;
    snprintf(node->links_why, sizeof node->links_why, "%s", m->links_why);
    node->nv_counts_read = m->counts_read;
    snprintf(node->nv_counts_why, sizeof node->nv_counts_why, "%s", m->counts_why);
    node->topo_read = m->paths_read;
    snprintf(node->topo_why, sizeof node->topo_why, "%s", m->paths_why);
    for (int i = 0; i < node->n; i++) {
        node->gpu_nvml[i] = m->nvml_index[i];
        snprintf(node->gpu_bus[i], sizeof node->gpu_bus[i], "%s", m->bus_id[i]);
        node->links[i] = m->links[i];
        node->links_max[i] = m->links_max[i];
        snprintf(node->links_down[i], sizeof node->links_down[i], "%s", m->down[i]);
        for (int j = 0; j < node->n; j++) {
            node->topo[i][j] = pairs[m->path[i][j]];
            node->nv_links[i][j] = m->counts_read ? m->nv_links[i][j] : 0;
        }
    }
}

/* The copy size: KBENCH_P2P_MIB (1..4096), else 256 MiB (nvbandwidth's default is 512 MiB). 0 when
 * the setting is malformed (why said). */
static size_t p2p_bytes(kb_sys_node *node)
{
    const char *s = getenv("KBENCH_P2P_MIB");
    char *end = NULL;
    long mib = s && *s ? strtol(s, &end, 10) : 256;
    if (s && *s && (*end || mib < 1 || mib > 4096)) {
        snprintf(node->p2p_why, sizeof node->p2p_why, "KBENCH_P2P_MIB=%.40s: not an integer in [1, 4096]", s);
        return 0;
    }
    return (size_t)mib << 20;
}

/* The copy-engine matrix (backend/cuda/cuda_p2p.h) into node; NVML's GPU count where it read none. */
static void read_p2p(kb_sys_node *node)
{
    static kb_p2p_matrix p;
    size_t bytes = p2p_bytes(node);
    if (!bytes)
        return;
    if (kb_cuda_p2p_measure(bytes, 5, &p) != KB_OK) {
        snprintf(node->p2p_why, sizeof node->p2p_why, "copy-engine matrix: %.220s", p.why);
        return;
    }
    node->p2p_n = p.n < KB_SYS_MAX_GPUS ? p.n : KB_SYS_MAX_GPUS;
    node->p2p_read = 1;
    node->p2p_wrong_a = p.wrong_a;
    node->p2p_wrong_b = p.wrong_b;
    node->p2p_n_failed = p.n_failed;
    node->p2p_bidir_gated = p.bidir_gated;
    snprintf(node->p2p_gate_why, sizeof node->p2p_gate_why, "%s", p.gate_why);
    snprintf(node->p2p_fail_why, sizeof node->p2p_fail_why, "%s", p.fail_why);
    for (int a = 0; a < node->p2p_n; a++)
        for (int b = 0; b < node->p2p_n; b++) {
            node->bw_uni[a][b] = p.uni[a][b];
            node->bw_bidir[a][b] = p.bidir[a][b];
            node->lat_us[a][b] = p.lat_us[a][b];
            node->no_peer[a][b] = p.no_peer[a][b];
            node->p2p_one_way[a][b] = p.one_way[a][b];
            snprintf(node->p2p_failed[a][b], sizeof node->p2p_failed[a][b], "%s", p.failed[a][b]);
        }
}

void kb_acc_node_read(const char *backend, int local_rank, kb_sys_node *node)
{
    memset(node, 0, sizeof *node);
    node->clock = "gpu";
    if (!strcmp(backend, "emu")) {
        snprintf(node->why, sizeof node->why, "emulator: no GPUs, so no GPU pairs, NVLink or topology to read");
        return;
    }
    static kb_nvml_node m;
    static kb_cuda_devices d;   /* CUDA's ordinals and bus ids: NVML's tables are put in this order */
    int have = kb_cuda_devices_read(&d) == KB_OK;
    kb_nvml_node_read(have ? (const char (*)[KB_NVML_BUS_ID_LEN])d.bus_id : NULL, have ? d.n : -1, d.why, &m);
    from_nvml(&m, node);
    if (local_rank > 0)
        snprintf(node->p2p_why, sizeof node->p2p_why, "measured by the node's local rank 0 (this is local rank %d)",
                 local_rank);
    else
        read_p2p(node);
}

