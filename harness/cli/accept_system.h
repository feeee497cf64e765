/* accept_system.h - what `kbench accept --system NAME` measures on this rank (docs/acceptance.md,
 * "A node"):
 *   - the collectives across the ranks of the job step (all six ops, fp32 sum at every size
 *     of the system's sweep, all_reduce also in bf16 and int8), each result verified element
 *     by element on every rank (collective/coll_bench.h), through the emu transport on
 *     --backend emu, through NCCL on cuda (accept/sysnccl.h: the system's GPU sweep, this
 *     rank's CUDA device). Each result is one JSON line (schema "kbench-coll") in coll_records.
 * The node's GPU pairs (NVLink, topology) are read by accept/sysnode.h.
 */
#ifndef KB_CLI_ACCEPT_SYSTEM_H
#define KB_CLI_ACCEPT_SYSTEM_H

#include <jansson.h>

#include "accept/sysverdict.h"
#include "core/identity.h"

/* Measure the collectives of spec s on backend ("emu" or "cuda", CUDA device `device`) as rank id: results into *c
 * (c->ran = 0 with why when they could not run), one JSON line per result into the new
 * file coll_records, and the all_reduce sweep (size, time, algbw, busbw per size) appended
 * to the array sweep. Prints the all_reduce table on rank 0 unless quiet. 0, or an exit code
 * (KB_EXIT_SETUP: the records file could not be written). */
int kb_accept_coll_measure(const kb_acc_system *s, const kb_identity *id, const char *backend, int device,
                           const char *coll_records, int quiet, kb_sys_coll *c, json_t *sweep);

/* The verdict's "system" block (caller json_decref's): the spec, the records and sweep, the
 * node's tables where read. NULL when out of memory. */
json_t *kb_accept_system_block(const kb_acc_system *s, const char *coll_records, json_t *sweep, const kb_sys_node *node);

#endif /* KB_CLI_ACCEPT_SYSTEM_H */
