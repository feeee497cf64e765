/* fleet_check.h - a rank's verdict file checked before the fleet merges it (issue 28): a
 * rank file is input from many machines, and one absurd number (a median of 1e308, a
 * negative bandwidth, a rank beyond its world size, a world size of 2^40) must make that
 * file a "corrupt" problem, never an overflow, a null in the fleet's statistics or a list
 * of a million missing ranks. The rules:
 *   identity   rank an integer in [0, 2^31); world_size an integer in [0, 2^31) (0:
 *              unknown) and above rank when known; local_rank, node_id integers in
 *              [-1, 2^31); launcher, job_id, step_id, host strings of at most 256 bytes
 *   gpu, spec  name, uuid, pci_bus_id strings of at most 256 bytes
 *   tests      at most 64, each an object: name a string of at most 64 bytes, status a
 *              verdict word (PASS, WARN, FAIL, SKIP); value, threshold and reference null
 *              or numbers in [0, 1e12], fraction null or in [0, 100], clock at most 8 bytes
 *   exit_code  an integer in [0, 255] */
#ifndef KB_ACCEPT_FLEET_CHECK_H
#define KB_ACCEPT_FLEET_CHECK_H

#include <jansson.h>

#include "core/kb.h"

/* Check verdict v (already known to be a kbench-accept object of schema version 1).
 * KB_OK, or KB_ERR_INPUT with why = "FIELD: what is wrong". */
kb_status kb_fleet_check_verdict(json_t *v, kb_sb *why);

#endif /* KB_ACCEPT_FLEET_CHECK_H */
