/* rdv_dir.h - the rendezvous through a directory every rank sees (KBENCH_RENDEZVOUS=
 * dir:PATH: a local directory for the ranks of one node, a shared file system across
 * nodes).
 *
 * PATH/kbench-rdv-<key>/ holds one file per rank, rank-<r>: a header line (rdv_common.h)
 * and the rank's record, written to a temporary name and renamed, so a reader never sees
 * half a record. Each rank writes its own, then polls (every 20 ms) until every rank's is
 * there and reads them; then it writes done-<r>. Rank 0 waits (at most 10 s more) for
 * every done file and removes the directory.
 *
 * Stale files: a rank-<r> already present when rank r arrives belongs to an earlier run
 * with the same key (a job step that failed part-way): the rank refuses it, naming the
 * file, instead of reading old records - remove the directory or use a fresh key.
 */
#ifndef KB_RDV_DIR_H
#define KB_RDV_DIR_H

#include "collective/rdv_common.h"

/* Exchange fixed-size records through r->path (r->kind == KB_RDV_DIR): mine (bytes) in,
 * every rank's in rank order into all (r->size x bytes). KB_OK; KB_ERR_TIMEOUT naming the
 * ranks that never arrived; KB_ERR_SETUP for a stale file, a record that disagrees, or a
 * directory that cannot be used; err says which (n bytes). */
kb_status kb_rdv_dir_exchange(const kb_rdv *r, const void *mine, size_t bytes, void *all, char *err, size_t n);

#endif /* KB_RDV_DIR_H */
