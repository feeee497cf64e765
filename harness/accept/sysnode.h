/* sysnode.h - what `kbench accept --system` reads of the node's GPUs: on the cuda backend the
 * NVLink state and the pair table from NVML (backend/cuda/nvml_topo.h), the copy-engine
 * bandwidth matrix from the driver (backend/cuda/cuda_p2p.h), NVML's tables put in CUDA's order
 * by PCI bus id (kb_cuda_devices_read, kb_nvml_node_read) so every table's row i is CUDA device i.
 * On the emulator there are no GPUs to pair: node->n = 0 with why. */
#ifndef KB_ACCEPT_SYSNODE_H
#define KB_ACCEPT_SYSNODE_H

#include "accept/sysverdict.h"

/* The node's GPUs on backend ("cuda", "emu") into *node; never fails (what was not read says
 * why). The copy matrix is measured by the node's local rank 0 alone (the ranks of a node would
 * otherwise copy over the same links at once), and only sees the GPUs that rank's
 * CUDA_VISIBLE_DEVICES shows: run that rank with every GPU (docs/acceptance.md). */
void kb_acc_node_read(const char *backend, int local_rank, kb_sys_node *node);

#endif /* KB_ACCEPT_SYSNODE_H */
