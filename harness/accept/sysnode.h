/* sysnode.h - what `kbench accept --system` reads of the node's GPUs: on the cuda backend the
 * NVLink state and the pair table from NVML (backend/cuda/nvml_topo.h); the copy-engine
 * bandwidth matrix is not measured yet (p2p_why says so). On the emulator there are no GPUs
 * to pair: node->n = 0 with why. */
#ifndef KB_ACCEPT_SYSNODE_H
#define KB_ACCEPT_SYSNODE_H

#include "accept/sysverdict.h"

/* The node's GPUs on backend ("cuda", "emu") into *node; never fails (what was not read says
 * why). */
void kb_acc_node_read(const char *backend, kb_sys_node *node);

#endif /* KB_ACCEPT_SYSNODE_H */
