/* sysnode.c - the node's GPUs for a system verdict (see sysnode.h). */
#include "accept/sysnode.h"

#include "backend/cuda/nvml_topo.h"

#include <stdio.h>
#include <string.h>

/* NVML's node (backend/cuda/nvml_topo.h) as the judge reads it. */
static void from_nvml(const kb_nvml_node *m, kb_sys_node *node)
{
    static const kb_sys_pair pairs[] = { KB_PAIR_UNKNOWN, KB_PAIR_X, KB_PAIR_NV, KB_PAIR_PIX, KB_PAIR_PXB,
                                         KB_PAIR_PHB, KB_PAIR_NODE, KB_PAIR_SYS };
    _Static_assert(sizeof pairs / sizeof pairs[0] == KB_NVML_PATH_COUNT, "one pair per NVML path");
    node->n = m->n < KB_SYS_MAX_GPUS ? m->n : KB_SYS_MAX_GPUS;
    snprintf(node->why, sizeof node->why, "%.255s", m->why);
    node->links_read = m->links_read;
    snprintf(node->links_why, sizeof node->links_why, "%s", m->links_why);
    node->topo_read = m->paths_read;
    snprintf(node->topo_why, sizeof node->topo_why, "%s", m->paths_why);
    for (int i = 0; i < node->n; i++) {
        node->links[i] = m->links[i];
        node->links_max[i] = m->links_max[i];
        snprintf(node->links_down[i], sizeof node->links_down[i], "%s", m->down[i]);
        for (int j = 0; j < node->n; j++) {
            node->topo[i][j] = pairs[m->path[i][j]];
            node->nv_links[i][j] = m->path[i][j] == KB_NVML_PATH_NVLINK ? m->links[i] : 0;
        }
    }
}

void kb_acc_node_read(const char *backend, kb_sys_node *node)
{
    memset(node, 0, sizeof *node);
    node->clock = "gpu";
    if (!strcmp(backend, "emu")) {
        snprintf(node->why, sizeof node->why, "emulator: no GPUs, so no GPU pairs, NVLink or topology to read");
        return;
    }
    kb_nvml_node m;
    kb_nvml_node_read(&m);
    from_nvml(&m, node);
    snprintf(node->p2p_why, sizeof node->p2p_why, "the copy-engine matrix (cuMemcpyPeerAsync per pair) is not "
             "measured yet: run nvbandwidth -t device_to_device_memcpy_read_ce");
}

